"""Fixtures for the kube tests: a real embedded API server per module, and a client.

Also puts this folder on ``sys.path`` so tests can import ``kube_helpers``
(with ``--import-mode=importlib`` pytest does not).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from kube_helpers import run  # noqa: E402

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver  # noqa: E402
from kubesched.kube import Client, load_kubeconfig  # noqa: E402

T = TypeVar("T")


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHandle]:
    """A running API server with a kubeconfig, stopped after the module."""
    path = tmp_path_factory.mktemp("apiserver") / "kubeconfig"
    handle = start_apiserver(kubeconfig_path=path, bookmark_interval=0.2)
    yield handle
    handle.stop()


@pytest.fixture
def with_client(apiserver: ApiServerHandle) -> Callable[..., Any]:
    """``with_client(fn)`` runs ``await fn(client)`` against the module's server."""

    def call(fn: Callable[[Client], Awaitable[T]], **options: Any) -> T:
        async def body() -> T:
            config = load_kubeconfig([apiserver.kubeconfig_path])
            async with Client(config, **options) as client:
                return await fn(client)

        return run(body())

    return call
