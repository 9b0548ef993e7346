"""The CronJob controller against a small cluster started for real (the embedded API server,
the simulated kubelet, the Job controller, the garbage collector and our scheduler), with
the CronJob controller in-process on a clock the test moves: a schedule time comes when
the test says, never after a minute's sleep. Driven with kubectl and the official client.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from controller_helpers import InThread, kubectl, wait_for
from kubernetes import client, config

from kubesched.cli.cluster import ClusterHandle, start_cluster
from kubesched.config import default_config
from kubesched.controllers.cronjob import CronJobController
from kubesched.controllers.cronjob.utils import SCHEDULED_TIMESTAMP_ANNOTATION
from kubesched.controllers.kubelet import RUN_SECONDS_ANNOTATION
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler

NS = "default"

#: The documentation's CronJob ("Running Automated Tasks with a CronJob"), unchanged.
HELLO = Path(__file__).parent.parent / "apiserver" / "manifests" / "cronjob.yaml"


class Clock:
    """The time the CronJob controller sees; the test moves it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._now = datetime.now(UTC)

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def set(self, moment: datetime) -> None:
        with self._lock:
            self._now = moment


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Iterator[ClusterHandle]:
    path = tmp_path_factory.mktemp("cronjobs") / "kubeconfig"
    handle = start_cluster(
        kubeconfig_path=path,
        nodes=1,
        controllers=["*", "-cronjob-controller"],
        bookmark_interval=0.2,
        run_delay=0.05,
        pod_run_seconds=0.2,
        node_lease_interval=0,
        job_sync_batch_period=0.1,
    )
    scheduler = InThread(
        handle.kubeconfig_path,
        lambda c: Scheduler(default_config(), in_tree_registry(), c).run(),
    ).start()
    cronjobs = InThread(
        handle.kubeconfig_path, lambda c: CronJobController(c, clock=clock).run()
    ).start()
    yield handle
    cronjobs.stop()
    scheduler.stop()
    handle.stop()


@pytest.fixture(scope="module")
def batch(cluster: ClusterHandle) -> client.BatchV1Api:
    return client.BatchV1Api(config.new_client_from_config(str(cluster.kubeconfig_path)))


def _next_minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0) + timedelta(minutes=1)


def _tick(batch: client.BatchV1Api, clock: Clock, name: str, moment: datetime) -> None:
    """Move the clock to ``moment`` and wake the controller with a change to the CronJob
    (an update enqueues it at once), as its timer would at that time."""
    clock.set(moment)
    batch.patch_namespaced_cron_job(
        name, NS, {"metadata": {"annotations": {"tick": moment.isoformat()}}}
    )


def _jobs_of(batch: client.BatchV1Api, name: str) -> list[client.V1Job]:
    jobs = batch.list_namespaced_job(NS).items
    return [
        j
        for j in jobs
        if any(r.kind == "CronJob" and r.name == name for r in j.metadata.owner_references or [])
    ]


def test_the_documentations_cronjob_runs_jobs_on_schedule_and_keeps_history(
    cluster: ClusterHandle, batch: client.BatchV1Api, clock: Clock, tmp_path: Path
):
    text = HELLO.read_text().replace(
        "      template:\n",
        "      template:\n        metadata:\n          annotations:\n"
        f'            {RUN_SECONDS_ANNOTATION}: "0.2"\n',
        1,
    )
    manifest = tmp_path / "cronjob.yaml"
    manifest.write_text(text)
    kubectl(cluster.kubeconfig_path, "apply", "-f", str(manifest))
    batch.patch_namespaced_cron_job("hello", NS, {"spec": {"successfulJobsHistoryLimit": 1}})
    cj = batch.read_namespaced_cron_job("hello", NS)
    first = _next_minute(cj.metadata.creation_timestamp)
    # Before the first schedule time nothing runs.
    _tick(batch, clock, "hello", first - timedelta(seconds=1))
    assert _jobs_of(batch, "hello") == []

    _tick(batch, clock, "hello", first + timedelta(seconds=1))
    name = f"hello-{int(first.timestamp()) // 60}"
    job = wait_for(
        "the first Job",
        lambda: (
            batch.read_namespaced_job(name, NS)
            if any(j.metadata.name == name for j in _jobs_of(batch, "hello"))
            else None
        ),
    )
    ref = job.metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.uid, ref.controller) == (
        "CronJob",
        "hello",
        cj.metadata.uid,
        True,
    )
    assert job.metadata.annotations[SCHEDULED_TIMESTAMP_ANNOTATION] == first.strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    # The Job completes; the CronJob drops it from active and notes the success.
    status = wait_for(
        "the CronJob to see its Job complete",
        lambda: (
            (s := batch.read_namespaced_cron_job("hello", NS).status).last_successful_time
            and not s.active
            and s
        ),
    )
    assert status.last_schedule_time == first

    second = first + timedelta(minutes=1)
    _tick(batch, clock, "hello", second + timedelta(seconds=2))
    second_name = f"hello-{int(second.timestamp()) // 60}"
    wait_for(
        "the second Job to complete and the first to go (history limit 1)",
        lambda: (
            [j.metadata.name for j in _jobs_of(batch, "hello")] == [second_name]
            and batch.read_namespaced_cron_job("hello", NS).status.last_schedule_time == second
        ),
        timeout=30,
    )
    out = kubectl(cluster.kubeconfig_path, "get", "cronjob", "hello")
    row = out.splitlines()[1].split()  # the schedule's five fields are five words
    assert (row[0], row[6], row[7], row[8]) == ("hello", "<none>", "False", "0")


def test_forbid_replace_suspend_and_the_starting_deadline(
    cluster: ClusterHandle, batch: client.BatchV1Api, clock: Clock
):
    def cron_job(name: str, policy: str, **spec: object) -> dict:
        return {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": name},
            "spec": {
                "schedule": "*/1 * * * *",
                "concurrencyPolicy": policy,
                **spec,
                "jobTemplate": {
                    "spec": {
                        "template": {
                            # Runs far longer than the test: the Job stays active.
                            "metadata": {"annotations": {RUN_SECONDS_ANNOTATION: "3600"}},
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [{"name": "c", "image": "busybox"}],
                            },
                        }
                    }
                },
            },
        }

    # The clock back at the server's time, so that nothing is due when they are created.
    clock.set(datetime.now(UTC))
    for name, policy in (("forbid", "Forbid"), ("replace", "Replace"), ("allow", "Allow")):
        batch.create_namespaced_cron_job(NS, cron_job(name, policy))
    created = batch.read_namespaced_cron_job("allow", NS).metadata.creation_timestamp
    first = _next_minute(max(created, clock()))
    for name in ("forbid", "replace", "allow"):
        _tick(batch, clock, name, first + timedelta(seconds=1))
    for name in ("forbid", "replace", "allow"):
        wait_for(f"{name}'s first Job", lambda n=name: len(_jobs_of(batch, n)) == 1)
        # The controller records the Job in status.active after creating it; the next
        # minute comes only once it has (a real minute is far longer than that write),
        # else Forbid would rightly see nothing active.
        wait_for(
            f"{name}'s first Job in status.active",
            lambda n=name: len(batch.read_namespaced_cron_job(n, NS).status.active or []) == 1,
        )
    second = first + timedelta(minutes=1)
    for name in ("forbid", "replace", "allow"):
        _tick(batch, clock, name, second + timedelta(seconds=1))
    minute = int(second.timestamp()) // 60
    wait_for(
        "Allow to run a second Job beside the first",
        lambda: len(_jobs_of(batch, "allow")) == 2,
    )
    wait_for(
        "Replace to delete the first Job for the second",
        lambda: [j.metadata.name for j in _jobs_of(batch, "replace")] == [f"replace-{minute}"],
    )
    wait_for(
        "the Replace CronJob's active list to name only the new Job",
        lambda: (
            [r.name for r in batch.read_namespaced_cron_job("replace", NS).status.active or []]
            == [f"replace-{minute}"]
        ),
    )
    # Forbid: the first Job still runs, so the second time is skipped.
    forbid = batch.read_namespaced_cron_job("forbid", NS)
    assert [j.metadata.name for j in _jobs_of(batch, "forbid")] == [f"forbid-{minute - 1}"]
    assert forbid.status.last_schedule_time == first

    # Suspended, nothing starts.
    batch.patch_namespaced_cron_job("allow", NS, {"spec": {"suspend": True}})
    third = second + timedelta(minutes=1)
    _tick(batch, clock, "allow", third + timedelta(seconds=1))
    # Resumed 30 s late with a 10 s starting deadline: the third time is skipped (a
    # resume without one would start it late); the fourth runs.
    clock.set(third + timedelta(seconds=30))
    batch.patch_namespaced_cron_job(
        "allow", NS, {"spec": {"suspend": False, "startingDeadlineSeconds": 10}}
    )
    fourth = third + timedelta(minutes=1)
    _tick(batch, clock, "allow", fourth + timedelta(seconds=1))
    wait_for("the fourth time's Job", lambda: len(_jobs_of(batch, "allow")) == 3)
    names = sorted(j.metadata.name for j in _jobs_of(batch, "allow"))
    assert f"allow-{minute + 1}" not in names
    assert f"allow-{minute + 2}" in names
    # The Job is created before the status that records it is written.
    wait_for(
        "the fourth time in lastScheduleTime",
        lambda: batch.read_namespaced_cron_job("allow", NS).status.last_schedule_time == fourth,
    )
