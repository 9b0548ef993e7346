"""kubectl with CRDs: apply a CRD and then a custom resource from YAML, get it as a Table
with the CRD's printer columns and as YAML, apply again, delete. Skipped, with the reason,
where kubectl is not installed."""

from __future__ import annotations

import shutil

import pytest
import yaml

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(
    KUBECTL is None,
    reason="kubectl is not on PATH: install kubectl >= 1.27 to run the kubectl integration tests",
)

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: podgroups.scheduling.example.io
spec:
  group: scheduling.example.io
  scope: Namespaced
  names: {plural: podgroups, kind: PodGroup, shortNames: [pg]}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Min, type: integer, jsonPath: .spec.minMember}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Queue, type: string, jsonPath: .spec.queue, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              minMember: {type: integer, minimum: 1, default: 1}
              queue: {type: string}
          status:
            type: object
            properties:
              phase: {type: string}
"""

GROUP_A = """\
apiVersion: scheduling.example.io/v1alpha1
kind: PodGroup
metadata:
  name: team-a
spec:
  minMember: 3
  queue: gold
"""


def test_apply_get_and_delete_a_crd_and_its_custom_resources(kubectl):
    out = kubectl("apply", "-f", "-", stdin=CRD).stdout.strip()
    assert (
        out
        == "customresourcedefinition.apiextensions.k8s.io/podgroups.scheduling.example.io created"
    )
    kubectl(
        "wait",
        "--for=condition=Established",
        "crd/podgroups.scheduling.example.io",
        "--timeout=10s",
    )
    assert (
        kubectl("apply", "-f", "-", stdin=GROUP_A).stdout.strip()
        == "podgroup.scheduling.example.io/team-a created"
    )
    assert (
        kubectl("apply", "-f", "-", stdin=GROUP_A).stdout.strip()
        == "podgroup.scheduling.example.io/team-a unchanged"
    )
    changed = GROUP_A.replace("minMember: 3", "minMember: 4")
    assert (
        kubectl("apply", "-f", "-", stdin=changed).stdout.strip()
        == "podgroup.scheduling.example.io/team-a configured"
    )
    kubectl(
        "patch",
        "pg",
        "team-a",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"phase":"Running"}}',
    )

    table = kubectl("get", "podgroups").stdout.splitlines()
    assert table[0].split() == ["NAME", "MIN", "PHASE", "AGE"]
    assert table[1].split()[:3] == ["team-a", "4", "Running"]
    wide = kubectl("get", "pg", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "MIN", "PHASE", "QUEUE", "AGE"]
    assert wide[1].split()[:4] == ["team-a", "4", "Running", "gold"]

    got = yaml.safe_load(kubectl("get", "podgroup", "team-a", "-o", "yaml").stdout)
    assert got["apiVersion"] == "scheduling.example.io/v1alpha1"
    assert got["spec"] == {"minMember": 4, "queue": "gold"}
    assert got["status"] == {"phase": "Running"}
    assert got["metadata"]["generation"] == 2
    assert "kubectl.kubernetes.io/last-applied-configuration" in got["metadata"]["annotations"]

    bad = GROUP_A.replace("minMember: 3", "minMember: 0").replace("team-a", "team-b")
    refused = kubectl("apply", "-f", "-", stdin=bad, check=False)
    assert refused.returncode != 0
    assert (
        'The PodGroup "team-b" is invalid: spec.minMember: Invalid value: 0: spec.minMember in body should be greater than or equal to 1'
        in refused.stderr
    )

    crds = kubectl("get", "crds").stdout
    assert "podgroups.scheduling.example.io" in crds
    assert (
        kubectl("delete", "pg", "team-a").stdout.strip()
        == 'podgroup.scheduling.example.io "team-a" deleted'
    )
    kubectl("apply", "-f", "-", stdin=GROUP_A)
    kubectl("delete", "crd", "podgroups.scheduling.example.io")
    gone = kubectl("get", "podgroups", check=False)
    assert gone.returncode != 0
    resources = kubectl("api-resources", "--api-group=scheduling.example.io").stdout
    assert "podgroups" not in resources
