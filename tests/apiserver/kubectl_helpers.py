"""kubectl run against a test's API server, shared by the API server tests."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

#: Runs kubectl against the module's server: ``run(*args, stdin=None, check=True)``.
Kubectl = Callable[..., "subprocess.CompletedProcess[str]"]


def kubectl_runner(kubeconfig: Path, cache_dir: Path) -> Kubectl:
    """kubectl with the server's kubeconfig and its own discovery cache (a module's
    CRDs and kinds never leak into another module's kubectl through a shared cache)."""
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.fail("kubectl is not on PATH: install kubectl >= 1.27")

    def run(
        *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [binary, "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache_dir), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=30,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr}")
        return result

    return run
