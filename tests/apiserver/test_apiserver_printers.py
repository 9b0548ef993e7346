"""Table printers of services, configmaps, secrets, service accounts, namespaces, RCs,
Deployments, ReplicaSets, StatefulSets, Jobs, PDBs, PriorityClasses and Leases (upstream's
print* functions), as cells and as kubectl prints them."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime, timedelta

import pytest

from kubesched.apiserver import printers

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
AN_HOUR_AGO = (NOW - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
META = {"name": "x", "creationTimestamp": AN_HOUR_AGO}
TEMPLATE = {
    "spec": {"containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "busybox"}]}
}
TEN_MINUTES_AGO = (NOW - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
TWO_MINUTES_AGO = (NOW - timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
JOB_SELECTOR = {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}}


def _job(spec=None, status=None, **meta):
    spec = {"selector": JOB_SELECTOR, "template": TEMPLATE, **(spec or {})}
    return {"metadata": {**META, **meta}, "spec": spec, "status": status or {}}


def _condition(kind, status="True"):
    return {"type": kind, "status": status}


@pytest.mark.parametrize(
    ("cells", "obj", "want"),
    [
        (
            printers.namespace_cells,
            {"metadata": META, "status": {"phase": "Active"}},
            ["x", "Active", "60m"],
        ),
        (
            printers.configmap_cells,
            {"metadata": META, "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}},
            ["x", 3, "60m"],
        ),
        (
            printers.service_cells,
            {
                "metadata": META,
                "spec": {
                    "type": "NodePort",
                    "clusterIP": "10.96.0.10",
                    "ports": [
                        {"port": 80, "protocol": "TCP", "nodePort": 30080},
                        {"port": 53, "protocol": "UDP"},
                    ],
                    "selector": {"tier": "web", "app": "shop"},
                },
            },
            [
                "x",
                "NodePort",
                "10.96.0.10",
                "<none>",
                "80:30080/TCP,53/UDP",
                "60m",
                "app=shop,tier=web",
            ],
        ),
        (
            printers.service_cells,
            {"metadata": META, "spec": {"type": "LoadBalancer", "ports": []}},
            ["x", "LoadBalancer", "<none>", "<pending>", "<none>", "60m", "<none>"],
        ),
        (
            printers.service_cells,
            {"metadata": META, "spec": {"type": "ExternalName", "externalName": "db.example.com"}},
            ["x", "ExternalName", "<none>", "db.example.com", "<none>", "60m", "<none>"],
        ),
        (
            printers.replication_controller_cells,
            {
                "metadata": META,
                "spec": {"replicas": 3, "selector": {"app": "web"}, "template": TEMPLATE},
                "status": {"replicas": 2, "readyReplicas": 1},
            },
            ["x", 3, 2, 1, "60m", "a,b", "nginx,busybox", "app=web"],
        ),
        (
            printers.replica_set_cells,
            {
                "metadata": META,
                "spec": {
                    "selector": {
                        "matchLabels": {"app": "web"},
                        "matchExpressions": [
                            {"key": "tier", "operator": "In", "values": ["b", "a"]},
                            {"key": "canary", "operator": "DoesNotExist"},
                        ],
                    },
                    "template": TEMPLATE,
                },
            },
            ["x", 1, 0, 0, "60m", "a,b", "nginx,busybox", "app=web,!canary,tier in (a,b)"],
        ),
        (
            printers.stateful_set_cells,
            {
                "metadata": META,
                "spec": {"replicas": 3, "template": TEMPLATE},
                "status": {"readyReplicas": 2},
            },
            ["x", "2/3", "60m", "a,b", "nginx,busybox"],
        ),
        (
            printers.pdb_cells,
            {
                "metadata": META,
                "spec": {"minAvailable": "50%"},
                "status": {"disruptionsAllowed": 2},
            },
            ["x", "50%", "N/A", 2, "60m"],
        ),
        (
            printers.priority_class_cells,
            {"metadata": META, "value": 1000, "globalDefault": True, "preemptionPolicy": "Never"},
            ["x", 1000, True, "60m", "Never"],
        ),
        pytest.param(
            printers.deployment_cells,
            {
                "metadata": META,
                "spec": {
                    "replicas": 3,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": TEMPLATE,
                },
                "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 1},
            },
            ["x", "2/3", 3, 1, "60m", "a,b", "nginx,busybox", "app=web"],
            id="deployment",
        ),
        pytest.param(
            printers.job_cells,
            _job({"completions": 3}, {"succeeded": 1, "startTime": TEN_MINUTES_AGO}),
            [
                "x",
                "Running",
                "1/3",
                "10m",
                "60m",
                "a,b",
                "nginx,busybox",
                "batch.kubernetes.io/controller-uid=u1",
            ],
            id="job-running-counts-from-its-start",
        ),
        pytest.param(
            printers.job_cells,
            _job(
                {"completions": 1},
                {
                    "succeeded": 1,
                    "startTime": TEN_MINUTES_AGO,
                    "completionTime": TWO_MINUTES_AGO,
                    "conditions": [_condition("SuccessCriteriaMet"), _condition("Complete")],
                },
            ),
            [
                "x",
                "Complete",
                "1/1",
                "8m",
                "60m",
                "a,b",
                "nginx,busybox",
                "batch.kubernetes.io/controller-uid=u1",
            ],
            id="job-complete-lasted-till-completion",
        ),
        pytest.param(
            printers.job_cells,
            _job({"parallelism": 4}, {"conditions": [_condition("Suspended")]}),
            [
                "x",
                "Suspended",
                "0/1 of 4",
                "",
                "60m",
                "a,b",
                "nginx,busybox",
                "batch.kubernetes.io/controller-uid=u1",
            ],
            id="job-suspended-work-queue",
        ),
        pytest.param(
            printers.job_cells,
            _job(
                {"completions": 2},
                {"conditions": [_condition("Suspended"), _condition("Failed", "False")]},
                deletionTimestamp=AN_HOUR_AGO,
            ),
            [
                "x",
                "Terminating",
                "0/2",
                "",
                "60m",
                "a,b",
                "nginx,busybox",
                "batch.kubernetes.io/controller-uid=u1",
            ],
            id="job-terminating-before-suspended",
        ),
        pytest.param(
            printers.secret_cells,
            {"metadata": META, "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}},
            ["x", "kubernetes.io/tls", 2, "60m"],
            id="secret",
        ),
        pytest.param(
            printers.service_account_cells,
            {"metadata": META, "secrets": [{"name": "t"}]},
            ["x", 1, "60m"],
            id="service-account",
        ),
        (
            printers.lease_cells,
            {"metadata": META, "spec": {"holderIdentity": "node-0"}},
            ["x", "node-0", "60m"],
        ),
    ],
)
def test_cells_follow_upstreams_printers(cells, obj, want):
    assert cells(obj, NOW) == want


def test_every_printer_has_a_cell_per_column():
    for plural, (columns, cells) in printers.PRINTERS.items():
        assert len(cells({"metadata": META}, NOW)) == len(columns), plural


KUBECTL = shutil.which("kubectl")


@pytest.mark.skipif(
    KUBECTL is None,
    reason="kubectl is not on PATH: install kubectl >= 1.27 to run the kubectl integration tests",
)
def test_kubectl_get_prints_the_columns(apiserver):
    def kubectl(*args, stdin=None):
        result = subprocess.run(
            [KUBECTL, "--kubeconfig", str(apiserver.kubeconfig_path), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    kubectl("create", "configmap", "printed", "--from-literal=a=1", "--from-literal=b=2")
    kubectl("create", "priorityclass", "printed", "--value=7", "--preemption-policy=Never")
    kubectl("create", "pdb", "printed", "--selector=app=x", "--min-available=1")
    configmap = kubectl("get", "configmap", "printed").splitlines()
    assert configmap[0].split() == ["NAME", "DATA", "AGE"]
    assert configmap[1].split()[:2] == ["printed", "2"]
    pc = kubectl("get", "priorityclass", "printed").splitlines()
    assert pc[0].split() == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert pc[1].split()[:3] == ["printed", "7", "false"] and pc[1].split()[-1] == "Never"
    pdb = kubectl("get", "pdb", "printed").splitlines()
    assert pdb[0].split() == [
        "NAME",
        "MIN",
        "AVAILABLE",
        "MAX",
        "UNAVAILABLE",
        "ALLOWED",
        "DISRUPTIONS",
        "AGE",
    ]
    assert pdb[1].split()[:3] == ["printed", "1", "N/A"]
    namespaces = kubectl("get", "namespaces", "default").splitlines()
    assert namespaces[0].split() == ["NAME", "STATUS", "AGE"]
