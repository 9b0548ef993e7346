"""Helpers for the controller tests (importable: conftest puts this folder on sys.path)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

from kubesched.cli.cluster import ClusterHandle, start_cluster
from kubesched.config import default_config
from kubesched.kube import Client, load_kubeconfig
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler

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


@contextlib.contextmanager
def job_cluster(kubeconfig: Path) -> Iterator[ClusterHandle]:
    """Two simulated nodes, the controllers tuned for Job tests (pods run 0.3 s, pod
    events batched 0.1 s, failure backoff from 0.1 s) and our scheduler as the
    default-scheduler, until the block ends."""
    handle = start_cluster(
        kubeconfig_path=kubeconfig,
        nodes=2,
        bookmark_interval=0.2,
        run_delay=0.05,
        pod_run_seconds=0.3,
        node_lease_interval=0,
        job_sync_batch_period=0.1,
        job_pod_failure_backoff=0.1,
    )
    scheduler = InThread(
        handle.kubeconfig_path,
        lambda c: Scheduler(default_config(), in_tree_registry(), c).run(),
    ).start()
    try:
        yield handle
    finally:
        scheduler.stop()
        handle.stop()
