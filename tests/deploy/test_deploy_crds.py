"""deploy/crds: scheduler-plugins' PodGroup and ElasticQuota CRDs.

They are the files the controllers install (``kubesched.controllers.crds``), valid
CustomResourceDefinitions for Kubernetes 1.34, and with them applied by kubectl the
embedded API server takes scheduler-plugins' own example manifests and refuses what the
schema refuses.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.controllers import crds as packaged
from kubesched.objects.elasticquota import ElasticQuota
from kubesched.objects.podgroup import PodGroup

CRDS = Path(__file__).resolve().parents[2] / "deploy" / "crds"

# The shapes of scheduler-plugins' documentation examples (Coscheduling's README, the
# CapacityScheduling example manifest): integers for quantities, no namespace.
POD_GROUP = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: nginx
spec:
  scheduleTimeoutSeconds: 10
  minMember: 3
"""
ELASTIC_QUOTA = """
apiVersion: v1
kind: Namespace
metadata:
  name: test
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: test
  namespace: test
spec:
  max:
    cpu: 20
    memory: 40Gi
    nvidia.com/gpu: 2
  min:
    cpu: 10
    memory: 20Gi
    nvidia.com/gpu: 1
"""


def test_deploy_crds_are_the_files_the_controllers_install() -> None:
    assert sorted(p.name for p in CRDS.glob("*.yaml")) == sorted(packaged.CRD_FILES)
    for obj, name in zip(packaged.scheduling_crds(), packaged.CRD_FILES, strict=True):
        assert yaml.safe_load((CRDS / name).read_text()) == obj


def test_deploy_crds_validate_against_the_openapi_schemas() -> None:
    import kubernetes_validate

    for path in sorted(CRDS.glob("*.yaml")):
        kubernetes_validate.validate(yaml.safe_load(path.read_text()), "1.34.0", strict=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHandle]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    handle = start_apiserver(kubeconfig_path=tmp_path_factory.mktemp("crds") / "kubeconfig")
    yield handle
    handle.stop()


def kubectl(
    server: ApiServerHandle, *args: str, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(server.kubeconfig_path), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=check,
        timeout=60,
    )


def test_kubectl_applies_the_crds_and_upstreams_examples(server: ApiServerHandle) -> None:
    kubectl(server, "apply", "-f", str(CRDS))
    kubectl(server, "wait", "--for=condition=Established", "crd", "--all", "--timeout=20s")
    kubectl(server, "apply", "-f", "-", stdin=POD_GROUP)
    kubectl(server, "apply", "-f", "-", stdin=ELASTIC_QUOTA)

    group = PodGroup.from_dict(
        json.loads(kubectl(server, "get", "pg", "nginx", "-o", "json").stdout)
    )
    assert (group.key, group.min_member, group.schedule_timeout_seconds) == ("default/nginx", 3, 10)
    quota = ElasticQuota.from_dict(
        json.loads(kubectl(server, "get", "eq", "test", "-n", "test", "-o", "json").stdout)
    )
    assert quota.max_of("cpu") == 20_000 and quota.min_of("nvidia.com/gpu") == 1

    table = kubectl(server, "get", "podgroups").stdout.split()
    assert table[:7] == ["NAME", "PHASE", "MINMEMBER", "RUNNING", "SUCCEEDED", "FAILED", "AGE"]

    # The status subresource: a status write through the main resource is dropped.
    kubectl(server, "patch", "pg", "nginx", "--type=merge", "-p", '{"status":{"running":2}}')
    status = json.loads(kubectl(server, "get", "pg", "nginx", "-o", "json").stdout).get("status")
    assert not (status or {}).get("running")
    kubectl(
        server,
        "patch",
        "pg",
        "nginx",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"running":2,"phase":"Scheduling"}}',
    )
    group = PodGroup.from_dict(
        json.loads(kubectl(server, "get", "pg", "nginx", "-o", "json").stdout)
    )
    assert (group.phase, group.running) == ("Scheduling", 2)


@pytest.mark.parametrize(
    ("manifest", "field"),
    [
        pytest.param(
            POD_GROUP.replace("minMember: 3", "minMember: 0"), "spec.minMember", id="minmember-0"
        ),
        pytest.param(
            POD_GROUP.replace("minMember: 3", "minMember: many"),
            "spec.minMember",
            id="minmember-string",
        ),
        pytest.param(
            ELASTIC_QUOTA.split("---")[1].replace("cpu: 20", "cpu: lots"),
            "spec.max.cpu",
            id="quota-bad-quantity",
        ),
    ],
)
def test_the_schema_refuses_invalid_objects(
    server: ApiServerHandle, manifest: str, field: str
) -> None:
    kubectl(server, "apply", "-f", str(CRDS))
    kubectl(server, "wait", "--for=condition=Established", "crd", "--all", "--timeout=20s")
    kubectl(server, "create", "namespace", "test", check=False)
    done = kubectl(
        server, "create", "-f", "-", stdin=manifest.replace("name: nginx", "name: x"), check=False
    )
    assert done.returncode != 0
    assert field in done.stderr


def test_an_omitted_min_member_is_accepted_and_reads_as_zero(server: ApiServerHandle) -> None:
    kubectl(server, "apply", "-f", str(CRDS))
    kubectl(server, "wait", "--for=condition=Established", "crd", "--all", "--timeout=20s")
    manifest = POD_GROUP.replace("name: nginx", "name: no-quorum").replace("  minMember: 3\n", "")
    kubectl(server, "create", "-f", "-", stdin=manifest)
    raw = json.loads(kubectl(server, "get", "pg", "no-quorum", "-o", "json").stdout)
    assert "minMember" not in raw["spec"]
    assert PodGroup.from_dict(raw).min_member == 0
