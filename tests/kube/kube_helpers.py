"""Helpers for the kube tests (importable: conftest puts this folder on sys.path)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


def run(coro: Awaitable[T], timeout: float = 20.0) -> T:
    """Run one coroutine to completion in a fresh event loop, with a safety timeout."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def pod(name: str, namespace: str = "default", labels: dict[str, str] | None = None) -> dict:
    """A minimal pod manifest."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }


def node(name: str, labels: dict[str, str] | None = None) -> dict:
    """A minimal node manifest."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
