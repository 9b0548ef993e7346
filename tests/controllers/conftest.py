"""Fixtures for the controller tests: a real embedded API server and controllers that
reach it through ``kube``, each in its own thread and event loop, as separate processes
would be (:func:`kubesched.cli.cluster.start_cluster` starts both).

Also puts this folder and ``tests/apiserver`` on ``sys.path`` so tests can import
``controller_helpers``, ``control_plane`` and ``apiserver_builders``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
for _folder in (str(_HERE), str(_HERE.parent / "apiserver")):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

from control_plane import ControlPlane, start_control_plane  # noqa: E402

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver  # noqa: E402


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHandle]:
    """A running API server with a kubeconfig, stopped after the module."""
    path = tmp_path_factory.mktemp("apiserver") / "kubeconfig"
    handle = start_apiserver(kubeconfig_path=path, bookmark_interval=0.2)
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """API server (three simulated nodes) + every controller + the live
    scheduler as ``default-scheduler``, shared by one test module."""
    plane = start_control_plane(tmp_path_factory.mktemp("cluster") / "kubeconfig")
    yield plane
    plane.stop()
