"""Fixtures for the API server tests: a server started for real, once per module.

Also puts this folder on ``sys.path`` so tests can import ``apiserver_builders``
(with ``--import-mode=importlib`` pytest does not).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from kubectl_helpers import Kubectl, kubectl_runner  # noqa: E402

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver  # noqa: E402


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHandle]:
    """A running API server with a kubeconfig, stopped after the module."""
    path = tmp_path_factory.mktemp("apiserver") / "kubeconfig"
    handle = start_apiserver(kubeconfig_path=path, bookmark_interval=0.2)
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def kubectl(apiserver: ApiServerHandle, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """kubectl against the module's ``apiserver``; a failing command fails the test
    unless called with ``check=False``."""
    return kubectl_runner(apiserver.kubeconfig_path, tmp_path_factory.mktemp("kubectl-cache"))
