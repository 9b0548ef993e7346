"""A chaos run of the live scheduler: the embedded API server with faults on, replicas of
``kubesched run`` with leader election, pods created through the official ``kubernetes``
client, and the guarantees checked at the end from the server's own records.

The guarantees (docs/faults.md states the budget they hold within):

- every pod of our schedulerName is bound, by exactly one successful binding call;
- no pod is on a node it does not fit (cpu, memory, pod count per node);
- no pod of another schedulerName is touched by a scheduler (no binding, no write);
- the Lease never changes hands while its holder's record is still valid: a new holder
  appears only after the old one released it or has not written it for leaseDuration.

:func:`run_chaos` runs one plan and returns a :class:`ChaosResult` (figures and the
violations found); the chaos tests run small plans, and ``main`` is the soak::

    .venv/bin/python bench/chaos.py --pods 3000 --minutes 3

Replicas are processes of their own; one that exits is started again (a Deployment's pod
would be), and its exit code is kept: a leader that lost its Lease exits 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kubesched.apiserver.faults import parse_faults
from kubesched.apiserver.records import RECORDS_PATH
from kubesched.apiserver.runner import ApiServerHandle
from kubesched.cli.cluster import start_cluster
from kubesched.objects.quantity import parse_quantity

#: Within the budget of docs/faults.md: a fifth of requests fail, answers are delayed up
#: to 50 ms, watches are cut every 3 s and resumes older than 300 versions meet 410.
BUDGET_FAULTS = "errors=0.2,codes=500,503,429,resets=0.02,delay=0-0.05,drop-watches=3,window=300"
#: What the replicas are called (their pods' schedulerName).
SCHEDULER_NAME = "chaos-scheduler"
OTHER_SCHEDULER = "someone-else"
NAMESPACE = "default"
_RUN = "import sys; from kubesched.cli import main; sys.exit(main(sys.argv[1:]))"


@dataclass(frozen=True)
class ChaosPlan:
    """One chaos run. **outage**: seconds during which every Lease request fails (beyond
    the budget: the leader must exit 1 and another replica take over), started once
    half the pods are created; 0: none."""

    pods: int = 200
    other_pods: int = 10
    #: 0: enough nodes for the pods' cpu and half as much again (nodes fill up to about
    #: two thirds, so that the fit check has something to check)
    nodes: int = 0
    node_cpu: str = "4"
    node_pods: int = 110
    replicas: int = 2
    faults: str = BUDGET_FAULTS
    lease_duration: float = 3.0
    renew_deadline: float = 2.0
    retry_period: float = 0.5
    outage: float = 0.0
    creators: int = 4
    #: Seconds the pods may take to be bound, from the first create.
    timeout: float = 300.0
    seed: int = 1
    #: A sleep between creates, per creator (seconds): spreads a soak over minutes.
    pace: float = 0.0
    #: Run the controllers beside the server (the simulated kubelet makes bound pods
    #: Running, renews node leases; all of them meet the faults too), as
    #: ``kubesched apiserver --nodes N`` does.
    controllers: bool = False


@dataclass
class ChaosResult:
    """What a run measured and what it found wrong (``violations`` empty: all held)."""

    pods: int
    bound: int
    seconds: float
    failovers: int
    exits: list[int]
    binding_calls: Counter[int]
    injected: dict[str, int]
    create_retries: int
    lease_holders: list[str]
    violations: list[str] = field(default_factory=list)
    #: Seconds from a pod's create answered to its successful binding: median, 99th.
    latency_p50: float = 0.0
    latency_p99: float = 0.0

    @property
    def pods_per_second(self) -> float:
        """Bound pods per second, from the first create to the last binding seen."""
        return self.bound / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        """One paragraph for a terminal."""
        calls = ", ".join(f"{n} × {code}" for code, n in sorted(self.binding_calls.items()))
        injected = ", ".join(f"{n} {kind}" for kind, n in sorted(self.injected.items()))
        verdict = "all guarantees held" if not self.violations else "VIOLATIONS:\n  - "
        return (
            f"{self.bound}/{self.pods} pods bound in {self.seconds:.1f} s "
            f"({self.pods_per_second:.1f} pods/s under faults; create to bound "
            f"p50 {self.latency_p50:.2f} s, p99 {self.latency_p99:.2f} s); binding calls: {calls}; "
            f"failovers: {self.failovers}; replica exits: {self.exits or 'none'}; "
            f"pod creates retried: {self.create_retries}; injected: {injected}\n"
            + verdict
            + "\n  - ".join(self.violations)
        )


#: The cpu a pod of ours asks for, one of these.
CPU_REQUESTS = ("100m", "150m", "200m")


def _nodes_for(plan: ChaosPlan) -> int:
    demand = plan.pods * 0.15 + plan.other_pods * 0.1
    return max(2, math.ceil(demand * 1.5 / float(plan.node_cpu)))


def _node_template(directory: Path, plan: ChaosPlan) -> Path:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "chaos-node"},
        "status": {
            "capacity": {"cpu": plan.node_cpu, "memory": "16Gi", "pods": str(plan.node_pods)}
        },
    }
    path = directory / "node.json"
    path.write_text(json.dumps(node))
    return path


def _scheduler_config(directory: Path, plan: ChaosPlan, kubeconfig: Path) -> Path:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 500, "burst": 1000},
        "leaderElection": {
            "leaderElect": True,
            "leaseDuration": f"{plan.lease_duration}s",
            "renewDeadline": f"{plan.renew_deadline}s",
            "retryPeriod": f"{plan.retry_period}s",
            "resourceName": "chaos",
            "resourceNamespace": "kube-system",
        },
        "profiles": [{"schedulerName": SCHEDULER_NAME}],
    }
    path = directory / "scheduler.json"
    path.write_text(json.dumps(doc))
    return path


class Replicas:
    """``count`` processes of ``kubesched run``; each is started again when it exits."""

    def __init__(self, count: int, config_path: Path, log_dir: Path) -> None:
        self.exits: list[int] = []
        self._config = config_path
        self._logs = log_dir
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self._threads = [
            threading.Thread(target=self._keep, args=(i,), daemon=True) for i in range(count)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def _keep(self, index: int) -> None:
        generation = 0
        while not self._stopping.is_set():
            log = (self._logs / f"replica-{index}-{generation}.log").open("wb")
            cmd = [sys.executable, "-c", _RUN, "run", "--config", str(self._config)]
            cmd += ["--secure-port", "0", "-v"]
            with self._lock:
                if self._stopping.is_set():
                    return
                proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
                self._procs[index] = proc
            code = proc.wait()
            log.close()
            if self._stopping.is_set():
                return
            with self._lock:
                self.exits.append(code)
            generation += 1
            time.sleep(0.2)

    def stop(self) -> None:
        with self._lock:
            self._stopping.set()
            procs = list(self._procs.values())
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for thread in self._threads:
            thread.join(timeout=5)


def _retrying(call: Any, *args: Any, **kwargs: Any) -> tuple[Any, int]:
    """Call the official client until the server does not refuse with a fault: 429 and
    5xx, and broken connections; a create answered AlreadyExists after a retry was ours.
    Returns the answer (None for such a create) and the retries it took."""
    retries = 0
    while True:
        try:
            return call(*args, **kwargs), retries
        except ApiException as err:
            if err.status == 409 and retries and "already exists" in (err.body or ""):
                return None, retries
            if err.status != 429 and err.status < 500:
                raise
        except (urllib3.exceptions.HTTPError, ConnectionError):
            pass
        retries += 1
        time.sleep(0.05)


def _pod(name: str, scheduler: str, cpu: str) -> client.V1Pod:
    resources = client.V1ResourceRequirements(requests={"cpu": cpu, "memory": "64Mi"})
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"chaos": "true"}),
        spec=client.V1PodSpec(
            scheduler_name=scheduler,
            containers=[client.V1Container(name="c", image="pause", resources=resources)],
        ),
    )


class _Outage:
    """Every Lease request fails for ``seconds`` (the faults swapped, then restored),
    once a replica leads and has bound ``after`` pods."""

    def __init__(self, server: ApiServerHandle, seconds: float, after: int) -> None:
        self.server, self.seconds, self.after = server, seconds, after
        self.done = threading.Event()
        self.ended = 0.0

    def run(self) -> None:
        faults, records = self.server.faults, self.server.records
        assert faults is not None and records is not None
        while not (
            any(lease.holder for lease in records.leases)
            and sum(b.code == 201 for b in records.bindings) >= self.after
        ):
            time.sleep(0.1)
        before = faults.spec
        faults.spec = parse_faults("errors=1,codes=503,resources=leases,retry-after=0")
        time.sleep(self.seconds)
        faults.spec = before
        self.ended = time.monotonic()
        self.done.set()

    def wait_for_leader(self, timeout: float) -> bool:
        """Wait until a replica has written the Lease as its holder after the outage."""
        records = self.server.records
        assert records is not None
        self.done.wait()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(le.holder and le.at > self.ended for le in records.leases):
                return True
            time.sleep(0.1)
        return False


def run_chaos(plan: ChaosPlan, work_dir: Path | None = None) -> ChaosResult:
    """Run ``plan`` (see the module docstring); files (kubeconfig, logs) go to
    ``work_dir`` (a temporary directory by default, removed afterwards)."""
    if work_dir is None:
        with tempfile.TemporaryDirectory(prefix="kubesched-chaos-") as tmp:
            return run_chaos(plan, Path(tmp))
    kubeconfig = work_dir / "kubeconfig"
    cluster = start_cluster(
        kubeconfig_path=kubeconfig,
        nodes=plan.nodes or _nodes_for(plan),
        node_template=_node_template(work_dir, plan),
        faults=plan.faults,
        bookmark_interval=1.0,
        controllers=("*",) if plan.controllers else (),
    )
    server = cluster.server
    replicas = Replicas(plan.replicas, _scheduler_config(work_dir, plan, kubeconfig), work_dir)
    api = config.new_client_from_config(config_file=str(kubeconfig))
    try:
        core = client.CoreV1Api(api)
        replicas.start()
        rng = random.Random(plan.seed)
        names = [f"chaos-{i}" for i in range(plan.pods)]
        wanted = {name: rng.choice(CPU_REQUESTS) for name in names}
        others = [f"other-{i}" for i in range(plan.other_pods)]
        started = time.monotonic()
        outage = _Outage(server, plan.outage, plan.pods // 4) if plan.outage else None
        if outage is not None:
            threading.Thread(target=outage.run, daemon=True).start()
        created: dict[str, float] = {}
        retries = _create_pods(core, plan, names, wanted, others, created)
        bound_at = _wait_bound(core, set(names), started + plan.timeout)
        seconds = (bound_at or time.monotonic()) - started
        took_over = True
        if outage is not None:
            took_over = outage.wait_for_leader(4 * plan.lease_duration + 30)
        # Let the standby catch up with the leader's last writes before the checks.
        time.sleep(plan.lease_duration)
        pods = _retrying(core.list_namespaced_pod, NAMESPACE, label_selector="chaos=true")[0]
        nodes = _retrying(core.list_node)[0]
        with urllib.request.urlopen(server.url + RECORDS_PATH) as answer:
            records = json.load(answer)
        (work_dir / "records.json").write_text(json.dumps(records))
    finally:
        replicas.stop()
        api.close()
        cluster.stop()
    result = _judge(plan, pods.items, nodes.items, records, seconds, replicas.exits, retries)
    waits = sorted(
        max(0.0, b["at"] - created[b["name"]])
        for b in records["bindings"]
        if b["code"] == 201 and b["name"] in created
    )
    if waits:
        result.latency_p50 = waits[len(waits) // 2]
        result.latency_p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))]
    if not took_over:
        result.violations.append("no replica took the Lease over after the outage")
    return result


def _create_pods(
    core: client.CoreV1Api,
    plan: ChaosPlan,
    names: list[str],
    wanted: dict[str, str],
    others: list[str],
    created: dict[str, float],
) -> int:
    """Create every pod from ``plan.creators`` threads; ``created``: when each create
    was answered (monotonic seconds, the in-process server's clock)."""
    todo = [(n, SCHEDULER_NAME, wanted[n]) for n in names]
    todo += [(n, OTHER_SCHEDULER, "100m") for n in others]
    random.Random(plan.seed).shuffle(todo)

    def create(item: tuple[str, str, str]) -> int:
        if plan.pace:
            time.sleep(plan.pace)
        pod = _pod(*item)
        retries = _retrying(core.create_namespaced_pod, NAMESPACE, pod, _request_timeout=10)[1]
        created[item[0]] = time.monotonic()
        return retries

    with ThreadPoolExecutor(plan.creators) as pool:
        return sum(pool.map(create, todo))


def _wait_bound(core: client.CoreV1Api, names: set[str], deadline: float) -> float | None:
    """Poll until no named pod is left without a node; the time it was first seen so, or
    None. Only unassigned pods are listed, and read as plain JSON: the poller must not
    take the CPU the server and the replicas need."""
    while time.monotonic() < deadline:
        answer = _retrying(
            core.list_namespaced_pod,
            NAMESPACE,
            label_selector="chaos=true",
            field_selector="spec.nodeName=",
            _preload_content=False,
        )[0]
        waiting = {item["metadata"]["name"] for item in json.loads(answer.data)["items"]}
        if not waiting & names:
            return time.monotonic()
        time.sleep(0.5)
    return None


def _judge(
    plan: ChaosPlan,
    pods: list[client.V1Pod],
    nodes: list[client.V1Node],
    records: dict[str, Any],
    seconds: float,
    exits: list[int],
    retries: int,
) -> ChaosResult:
    violations: list[str] = []
    ours = {p.metadata.name: p for p in pods if p.spec.scheduler_name == SCHEDULER_NAME}
    theirs = {p.metadata.name: p for p in pods if p.spec.scheduler_name != SCHEDULER_NAME}
    bindings = records["bindings"]
    calls = Counter(b["code"] for b in bindings)
    successes: dict[str, list[str]] = defaultdict(list)
    for b in bindings:
        if b["code"] == 201:
            successes[b["name"]].append(b["node"])
    bound = 0
    for name, pod in sorted(ours.items()):
        nodes_bound = successes.get(name, [])
        if not pod.spec.node_name:
            violations.append(f"pod {name} was never bound")
        elif nodes_bound != [pod.spec.node_name]:
            violations.append(
                f"pod {name} is on {pod.spec.node_name} but its successful bindings were "
                f"{nodes_bound}"
            )
        else:
            bound += 1
    if len(ours) != plan.pods:
        violations.append(f"{plan.pods} pods were created, {len(ours)} are there")
    violations += _fit_violations(list(ours.values()), nodes)
    touched = [
        w for w in records["podWrites"] if w["name"] in theirs and "kubesched" in w["userAgent"]
    ]
    touched += [b for b in bindings if b["name"] in theirs]
    violations += [f"a scheduler touched another scheduler's pod: {w}" for w in touched]
    violations += [
        f"pod {name} of {OTHER_SCHEDULER} was bound to {p.spec.node_name}"
        for name, p in theirs.items()
        if p.spec.node_name
    ]
    holders, lease_violations = _lease_history(records["leases"])
    violations += lease_violations
    named = [h for h in holders if h]
    failovers = sum(1 for a, b in itertools.pairwise(named) if a != b)
    return ChaosResult(
        pods=plan.pods,
        bound=bound,
        seconds=seconds,
        failovers=failovers,
        exits=list(exits),
        binding_calls=calls,
        injected=dict(records.get("faults", {}).get("injected", {})),
        create_retries=retries,
        lease_holders=holders,
        violations=violations,
    )


def _amount(text: str) -> int:
    return parse_quantity(text).milli_value()


def _fit_violations(pods: list[client.V1Pod], nodes: list[client.V1Node]) -> list[str]:
    used: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for pod in pods:
        if not pod.spec.node_name:
            continue
        requests = pod.spec.containers[0].resources.requests or {}
        totals = used[pod.spec.node_name]
        totals[0] += _amount(requests.get("cpu", "0"))
        totals[1] += _amount(requests.get("memory", "0"))
        totals[2] += 1000
    found = []
    allocatable = {n.metadata.name: n.status.allocatable for n in nodes}
    for node, (cpu, memory, count) in sorted(used.items()):
        room = allocatable.get(node)
        if room is None:
            found.append(f"pods were bound to {node}, which is not a node")
            continue
        limits = (
            _amount(room["cpu"]),
            _amount(room["memory"]),
            _amount(room["pods"]),
        )
        for what, amount, limit in zip(
            ("cpu", "memory", "pods"), (cpu, memory, count), limits, strict=False
        ):
            if amount > limit:
                found.append(
                    f"node {node} holds {amount / 1000:g} {what}, more than its {limit / 1000:g}"
                )
    return found


def _lease_history(writes: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The successive holders of the chaos Lease, and every change of hands that came
    before the old holder's record had expired (by the server's clock)."""
    holders: list[str] = []
    violations: list[str] = []
    last: dict[str, Any] | None = None
    for write in writes:
        if write["name"] != "chaos":
            continue
        holder = write["holder"]
        if not holders or holders[-1] != holder:
            holders.append(holder)
            if last is not None and last["holder"] and holder:
                held_for = write["at"] - last["at"]
                if held_for < last["leaseDurationSeconds"]:
                    violations.append(
                        f"lease taken by {holder} {held_for:.3f} s after {last['holder']} "
                        f"last wrote it (leaseDuration {last['leaseDurationSeconds']} s)"
                    )
        last = write
    return holders, violations


def main(argv: list[str] | None = None) -> int:
    """The soak: one long plan; prints the figures, exit 1 if a guarantee broke."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--other-pods", type=int, default=100)
    parser.add_argument(
        "--nodes", type=int, default=0, help="default: room for the pods and half again"
    )
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--faults", default=BUDGET_FAULTS)
    parser.add_argument(
        "--minutes", type=float, default=3.0, help="spread the creates over about this long"
    )
    parser.add_argument(
        "--outage", type=float, default=25.0, help="seconds of Lease outage (0: none)"
    )
    parser.add_argument(
        "--lease",
        default="15/10/2",
        metavar="D/R/P",
        help="leaseDuration/renewDeadline/retryPeriod in seconds (default 15/10/2, "
        "kube-scheduler's)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", metavar="DIR", help="keep kubeconfig and replica logs here")
    parser.add_argument(
        "--controllers",
        action="store_true",
        help="run the controllers (the simulated kubelet, ...) beside the server, under the "
        "faults too",
    )
    args = parser.parse_args(argv)
    try:
        duration, deadline, period = (float(x) for x in args.lease.split("/"))
    except ValueError:
        parser.error(f"--lease {args.lease!r}: expected three numbers, D/R/P")
    creators = 4
    pace = args.minutes * 60 * creators / max(1, args.pods + args.other_pods)
    plan = ChaosPlan(
        pods=args.pods,
        other_pods=args.other_pods,
        nodes=args.nodes,
        replicas=args.replicas,
        faults=args.faults,
        outage=args.outage,
        lease_duration=duration,
        renew_deadline=deadline,
        retry_period=period,
        seed=args.seed,
        creators=creators,
        pace=pace,
        timeout=args.minutes * 60 + 600,
        controllers=args.controllers,
    )
    print(f"soak: {dataclasses.asdict(plan)}", flush=True)
    work_dir = Path(args.keep) if args.keep else None
    if work_dir is not None:
        os.makedirs(work_dir, exist_ok=True)
    result = run_chaos(plan, work_dir)
    print(result.summary())
    return 0 if not result.violations else 1


if __name__ == "__main__":
    sys.exit(main())
