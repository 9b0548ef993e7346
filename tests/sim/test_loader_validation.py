"""The policy lab's file loaders accept exactly the objects the API server accepts: every
object read is defaulted and validated as kube-apiserver does on create, and every problem
of every file is reported, each naming the file, the item, the object and the field with
kube-apiserver's words. The same bad pods are refused by the embedded API server (through
the official client) and by the loader, with the same messages."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.cli import main
from kubesched.sim.files import InputError, load_objects
from kubesched.sim.lab import load_cluster
from kubesched.testing import make_node

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def ctr(name: str | None = "c", **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"image": "registry.k8s.io/pause:3.10", **fields}
    if name is not None:
        out["name"] = name
    return out


def pod(name: str = "web-1", *containers: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **meta},
        "spec": {"containers": list(containers)},
    }


def cpu(requests: str | None = None, limits: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if requests is not None:
        out["requests"] = {"cpu": requests}
    if limits is not None:
        out["limits"] = {"cpu": limits}
    return out


def node(name: str = "n1", **status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status}


def template(labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"labels": labels}, "spec": {"containers": [ctr()]}}


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(list(objs)))
    return path


#: Pods kube-apiserver refuses, each with the one error it reports (field: detail).
BAD_PODS = [
    pytest.param(
        pod("web-1", ctr(resources=cpu("-1"))),
        'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        id="negative-cpu",
    ),
    pytest.param(
        pod("web-1", ctr(resources=cpu("2", "1"))),
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
        id="request-above-limit",
    ),
    pytest.param(
        pod("web-1", ctr(), ctr()),
        'spec.containers[1].name: Duplicate value: "c"',
        id="duplicate-container-names",
    ),
    pytest.param(
        pod("web-1", ctr(None)),
        "spec.containers[0].name: Required value",
        id="container-without-name",
    ),
    pytest.param(pod("web-1"), "spec.containers: Required value", id="no-containers"),
    pytest.param(
        pod("web-1", ctr(), labels={"app": "not ok!"}),
        f'metadata.labels: Invalid value: "not ok!": {LABEL_VALUE}',
        id="bad-label-value",
    ),
    pytest.param(
        pod("Web_1", ctr()),
        f'metadata.name: Invalid value: "Web_1": {SUBDOMAIN}',
        id="bad-pod-name",
    ),
    pytest.param(
        pod("web-1", {"name": "c"}),
        "spec.containers[0].image: Required value",
        id="container-without-image",
    ),
]


@pytest.mark.parametrize(("raw", "expected"), BAD_PODS)
def test_loader_refuses_a_bad_pod_naming_file_object_and_field(
    tmp_path: Path, raw: dict[str, Any], expected: str
) -> None:
    path = write(tmp_path / "pods.yaml", raw)
    with pytest.raises(InputError) as caught:
        load_objects(path)
    name = raw["metadata"]["name"]
    assert caught.value.problems == (f'{path}: Pod "default/{name}": {expected}',)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(
            node("Bad_Name"),
            f'Node "Bad_Name": metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN}',
            id="node-name",
        ),
        pytest.param(
            node(allocatable={"cpu": "-1", "memory": "1Gi"}),
            'Node "n1": status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0',
            id="negative-allocatable",
        ),
        pytest.param(
            node(allocatable={"cpu": "4", "pods": "1.5"}),
            'Node "n1": status.allocatable.pods: Invalid value: 1500m: must be an integer',
            id="fractional-pods",
        ),
        pytest.param(
            make_node("n1").label("zone", "a b").dict(),
            f'Node "n1": metadata.labels: Invalid value: "a b": {LABEL_VALUE}',
            id="node-label-value",
        ),
        pytest.param(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "web", "namespace": "prod"},
                "spec": {"minAvailable": -1, "selector": {"matchLabels": {"app": "web"}}},
            },
            'PodDisruptionBudget "prod/web": spec.minAvailable: Invalid value: -1: must be greater than or equal to 0',
            id="pdb",
        ),
        pytest.param(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "huge"},
                "value": 2_000_000_000,
            },
            'PriorityClass "huge": value: Forbidden: maximum allowed value of a user defined priority is 1000000000',
            id="priority-class",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team_a"}},
            "Namespace \"team_a\": metadata.name: Invalid value: \"team_a\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            id="namespace",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web"},
                "spec": {"selector": {"app": "web"}},
            },
            'Service "default/web": spec.ports: Required value',
            id="service",
        ),
        pytest.param(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": "web"},
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": template({"app": "db"}),
                },
            },
            'ReplicaSet "default/web": spec.template.metadata.labels: Invalid value: {"app":"db"}: `selector` does not match template `labels`',
            id="replicaset",
        ),
        pytest.param(
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": "db"},
                "spec": {"selector": {"matchLabels": {"app": "db"}}},
            },
            'StatefulSet "default/db": spec.template: Required value',
            id="statefulset",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "ReplicationController",
                "metadata": {"name": "web"},
                "spec": {"replicas": -1, "template": template({"app": "web"})},
            },
            'ReplicationController "default/web": spec.replicas: Invalid value: -1: must be greater than or equal to 0',
            id="replicationcontroller",
        ),
    ],
)
def test_loader_refuses_every_kind_it_reads_as_the_api_server_would(
    tmp_path: Path, raw: dict[str, Any], expected: str
) -> None:
    path = write(tmp_path / "cluster.yaml", raw)
    with pytest.raises(InputError) as caught:
        load_objects(path)
    assert caught.value.problems == (f"{path}: {expected}",)


def test_objects_written_without_defaults_load(tmp_path: Path) -> None:
    # What users write by hand: no namespace, no pull or termination message policy, no
    # port protocol, a node with capacity only, an RC whose selector is its template's
    # labels (defaulted), a limit without a request (the request defaults to it).
    path = write(
        tmp_path / "cluster.yaml",
        node("n1", capacity={"cpu": "4", "memory": "8Gi", "pods": "110"}),
        pod("web-1", ctr(ports=[{"containerPort": 80}], resources=cpu(limits="1"))),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
        {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": "web"},
            "spec": {"replicas": 2, "template": template({"app": "web"})},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "headless"},
            "spec": {"clusterIP": "None", "selector": {"app": "web"}},
        },
    )
    objects = load_objects(path)
    assert [n.name for n in objects.nodes] == ["n1"]
    assert [p.key for p in objects.pods] == ["default/web-1"]
    assert objects.pods[0].requests.milli_cpu == 1000
    assert [w.kind for w in objects.workloads] == ["ReplicationController", "Service"]


def test_objects_as_kubectl_get_prints_them_from_a_cluster_load() -> None:
    # Everything a live cluster fills in (managedFields, owner references, probes,
    # projected volumes, status) is what the API server accepted; the loader does too.
    objects = load_objects(Path(__file__).parent / "data" / "kubectl-get-dump.yaml")
    assert [p.key for p in objects.pods] == ["kube-system/coredns-7db6d8ff4d-8xk2p"]
    assert [n.name for n in objects.nodes] == ["kind-control-plane"]


def test_every_problem_of_every_file_is_reported_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = write(
        tmp_path / "cluster.yaml",
        node("n1", allocatable={"cpu": "4"}),
        node("Bad_Name"),
        node("n2", allocatable={"cpu": "-2"}),
    )
    pods = write(
        tmp_path / "pods.yaml",
        pod("ok", ctr()),
        pod("web-1", ctr(resources=cpu("-1")), ctr()),
    )
    with pytest.raises(InputError) as caught:
        load_cluster(cluster, pods)
    assert caught.value.problems == (
        f'{cluster}: documents[1]: Node "Bad_Name": metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN}',
        f'{cluster}: documents[2]: Node "n2": status.allocatable.cpu: Invalid value: "-2": must be greater than or equal to 0',
        f'{pods}: documents[1]: Pod "default/web-1": spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
        f'{pods}: documents[1]: Pod "default/web-1": spec.containers[1].name: Duplicate value: "c"',
    )
    code = main(["simulate", "--cluster", str(cluster), "--pods", str(pods)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"kubesched: error: {p}" for p in caught.value.problems]


def run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubesched.cli", *argv], capture_output=True, text=True, check=False
    )


def test_simulate_refuses_a_negative_cpu_request_as_kube_apiserver_does(tmp_path: Path) -> None:
    cluster = write(tmp_path / "cluster.yaml", make_node("n1").capacity(cpu="4").dict())
    pods = write(tmp_path / "pods.yaml", pod("web-1", ctr(resources=cpu("-1"))))
    proc = run_cli("simulate", "--cluster", str(cluster), "--pods", str(pods))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        f'kubesched: error: {pods}: Pod "default/web-1": spec.containers[0].resources'
        '.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0\n'
    )


def test_explain_refuses_a_bad_node_in_the_cluster_file(tmp_path: Path) -> None:
    cluster = write(
        tmp_path / "cluster.yaml",
        make_node("n1").capacity(cpu="4").dict(),
        node("Bad_Name", allocatable={"cpu": "-1"}),
    )
    pods = write(tmp_path / "pod.yaml", pod("web-1", ctr()))
    proc = run_cli("explain", "--cluster", str(cluster), "--pod", str(pods))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        f'kubesched: error: {cluster}: documents[1]: Node "Bad_Name": metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN}',
        f'kubesched: error: {cluster}: documents[1]: Node "Bad_Name": status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0',
    ]


def test_simulate_still_runs_when_every_object_is_valid(tmp_path: Path) -> None:
    cluster = write(
        tmp_path / "cluster.yaml", make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").dict()
    )
    pods = write(tmp_path / "pods.yaml", pod("web-1", ctr(resources=cpu("500m"))))
    proc = run_cli("simulate", "--cluster", str(cluster), "--pods", str(pods), "-o", "json")
    assert proc.returncode == 0, proc.stderr
    assert [p["node"] for p in json.loads(proc.stdout)["placements"]] == ["n1"]


# -- the same refusals from the API server ---------------------------------------------------


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path_factory.mktemp("api") / "kubeconfig")
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def api(apiserver: ApiServerHandle) -> Iterator[kubernetes.client.ApiClient]:
    client = kubernetes.config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    with client:
        yield client


def create(
    api: kubernetes.client.ApiClient, body: dict[str, Any], plural: str = "pods"
) -> tuple[int, Any]:
    # The official client's own request path; its typed create_namespaced_pod would refuse
    # a container without a name before sending it (pydantic), so the body goes as it is.
    method, url, headers, data, _ = api.param_serialize(
        "POST",
        f"/api/v1/namespaces/default/{plural}",
        header_params={"Content-Type": "application/json", "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
    )
    response = api.call_api(method, url, headers, data)
    response.read()
    return response.status, json.loads(response.data)


@pytest.mark.parametrize(("raw", "expected"), BAD_PODS)
def test_api_server_and_loader_refuse_the_same_pods_with_the_same_messages(
    api: kubernetes.client.ApiClient, tmp_path: Path, raw: dict[str, Any], expected: str
) -> None:
    status, body = create(api, raw)
    assert status == 422
    server = [f"{c['field']}: {c['message']}" for c in body["details"]["causes"]]

    path = write(tmp_path / "pods.yaml", raw)
    with pytest.raises(InputError) as caught:
        load_objects(path)
    prefix = f'{path}: Pod "default/{raw["metadata"]["name"]}": '
    assert [p.removeprefix(prefix) for p in caught.value.problems] == server == [expected]


def test_a_pod_both_accept_is_stored_and_loads(
    api: kubernetes.client.ApiClient, tmp_path: Path
) -> None:
    raw = pod("fine", ctr(resources=cpu("500m", "1")))
    status, body = create(api, raw)
    assert status == 201, body
    assert [p.key for p in load_objects(write(tmp_path / "pods.yaml", raw)).pods] == [
        "default/fine"
    ]


def test_a_nul_byte_in_a_cluster_or_config_file_is_one_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path / "cluster.yaml", make_node("n1").capacity(cpu="1").dict())
    bad = tmp_path / "nul.yaml"
    bad.write_text('kind: Node\nmetadata:\n  name: "a\0b"\n')
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\0\n"
    )
    assert main(["simulate", "--cluster", str(bad)]) == 2
    assert capsys.readouterr().err == (
        f"kubesched: error: {bad}: position 31: invalid YAML: unacceptable character #x0000: "
        "special characters are not allowed\n"
    )
    assert main(["simulate", "--cluster", str(good), "--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        f"{config}: invalid YAML: position 75: unacceptable character #x0000: special "
        "characters are not allowed\n"
    )


def test_a_service_whose_ports_are_not_a_list_is_a_decode_error_for_both(
    api: kubernetes.client.ApiClient, tmp_path: Path
) -> None:
    raw = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": 5}}
    detail = (
        "json: cannot unmarshal number into Go struct field ServiceSpec.spec.ports of type "
        "[]v1.ServicePort"
    )
    status, body = create(api, raw, "services")
    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == f'Service in version "v1" cannot be handled as a Service: {detail}'
    path = write(tmp_path / "cluster.yaml", raw)
    with pytest.raises(InputError) as caught:
        load_objects(path)
    assert caught.value.problems == (
        f'{path}: Service "default/s": cannot be handled as a Service: {detail}',
    )


@pytest.mark.parametrize("kind", ["Deployment", "Job", "Namespace", "DeviceClass", "CSIDriver"])
def test_a_name_of_the_wrong_type_is_refused_for_every_kind(tmp_path: Path, kind: str) -> None:
    # Found by tests/fuzz: kinds without a row in the decoder's type table crashed on
    # metadata.name: 5 (TypeError: object of type 'int' has no len()).
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": kind, "metadata": {"name": 5}}))
    with pytest.raises(InputError) as failure:
        load_objects(path)
    (problem,) = failure.value.problems
    assert problem.startswith(f'{path}: {kind} "')
    # The decoder's words, or the compact decoder's where the kind has one.
    assert (
        "Go struct field ObjectMeta.metadata.name of type string" in problem
    ) or problem.endswith("metadata.name: expected a string, got int")


def test_a_name_with_a_newline_stays_on_one_line(tmp_path: Path) -> None:
    # Found by tests/fuzz: the object's name was printed raw, so one problem took two lines.
    path = tmp_path / "objects.yaml"
    path.write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a\nb"}})
    )
    with pytest.raises(InputError) as failure:
        load_objects(path)
    problems = failure.value.problems
    assert all("\n" not in problem for problem in problems)
    assert problems[0].startswith(
        f'{path}: Namespace "a\\nb": metadata.name: Invalid value: "a\\nb"'
    )


@pytest.mark.parametrize(
    ("obj", "words"),
    [
        (
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "d"},
                "spec": {"selector": {"matchLabels": "x"}},
            },
            'Deployment "default/d": cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field LabelSelector.spec.selector.matchLabels of type map[string]string',
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n"},
                "status": {"capacity": "x"},
            },
            'Node "n": cannot be handled as a Node: json: cannot unmarshal string into Go struct field NodeStatus.status.capacity of type map[string]resource.Quantity',
        ),
        (
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j"},
                "spec": {"template": {"spec": {"tolerations": [{"key": True}]}}},
            },
            'Job "default/j": cannot be handled as a Job: json: cannot unmarshal bool into Go struct field Toleration.spec.template.spec.tolerations.key of type string',
        ),
    ],
    ids=["deployment-matchlabels", "node-capacity", "job-toleration-key"],
)
def test_a_value_of_the_wrong_type_anywhere_is_the_decoders_error(
    tmp_path: Path, obj: dict[str, Any], words: str
) -> None:
    # Found by tests/fuzz: 84 kinds of crash (TypeError, AttributeError) where a field the
    # hand-kept type table does not list held the wrong JSON type. The loaders now check
    # every field against the kind's schema first, as the API server's decoder does.
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump(obj))
    with pytest.raises(InputError) as failure:
        load_objects(path)
    assert failure.value.problems == (f"{path}: {words}",)
