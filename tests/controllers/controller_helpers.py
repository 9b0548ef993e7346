"""Helpers for the controller tests (importable: conftest puts this folder on sys.path)."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from kubesched.kube import Client, load_kubeconfig

T = TypeVar("T")


class InThread:
    """Runs ``make(client)``'s coroutine in a thread of its own until :meth:`stop`."""

    def __init__(
        self, kubeconfig: Path, make: Callable[[Client], Coroutine[Any, Any, None]]
    ) -> None:
        self.kubeconfig = kubeconfig
        self.make = make
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.failure: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> InThread:
        self.thread.start()
        self.ready.wait(10)
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def body() -> None:
            config = load_kubeconfig([self.kubeconfig])
            async with Client(config, qps=0) as client:
                self._task = asyncio.current_task()
                self.ready.set()
                await self.make(client)

        try:
            self.loop.run_until_complete(body())
        except asyncio.CancelledError:
            pass
        except BaseException as exc:  # reported by stop()
            self.failure = exc
        finally:
            self.ready.set()
            self.loop.close()

    def stop(self) -> None:
        if self._task is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._task.cancel)
        self.thread.join(10)
        if self.failure is not None:
            raise self.failure


def wait_for(what: str, check: Callable[[], T], timeout: float = 20.0) -> T:
    """Poll ``check`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def kubectl(kubeconfig: Path, *args: str, check: bool = True) -> str:
    """Run kubectl against the test server; returns stdout."""
    done = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed: {done.stderr}")
    return done.stdout
