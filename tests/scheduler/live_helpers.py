"""Helpers for the tests that run the live scheduler against the embedded API server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from kubesched.kube import Client, NotFound
from kubesched.kube.resources import PODS


async def until(check: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
    """Poll ``check`` (a function or coroutine function) until it returns a true value."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def node_of(client: Client, name: str) -> str:
    """The node of pod ``default/name`` ("" while pending or once gone)."""
    try:
        raw = await client.get(PODS.raw, name, "default")
    except NotFound:
        return ""
    return str(raw.get("spec", {}).get("nodeName", ""))
