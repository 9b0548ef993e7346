"""Cluster and pod files carry scheduler-plugins' PodGroups and ElasticQuotas: they load
into typed views, reach plugins through the simulator's lister, and bad ones are named
with their file, document and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.sim.files import InputError, load_objects
from kubesched.sim.lab import cluster_lister, load_cluster
from kubesched.testing import make_node, make_pod
from kubesched.testing.scheduling_wrappers import make_elastic_quota, make_pod_group


def write(path: Path, *objects: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return path


def node() -> dict[str, Any]:
    return make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").dict()


def test_pod_groups_and_quotas_load_and_reach_the_lister(tmp_path: Path) -> None:
    # As scheduler-plugins' examples write them: no namespace, integer quantities.
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "nginx"},
        "spec": {"scheduleTimeoutSeconds": 10, "minMember": 3},
    }
    quota = make_elastic_quota("team-a").min(cpu="1").dict()
    quota["spec"]["max"] = {"cpu": 20, "nvidia.com/gpu": 2}
    cluster = write(tmp_path / "cluster.yaml", node(), group)
    member = make_pod("m").pod_group("nginx").req(cpu="1").dict()
    pods = write(tmp_path / "pods.yaml", quota, member)
    objects, pending = load_cluster(cluster, pods)
    assert not objects.warnings and not objects.ignored_kinds
    assert [p.name for p in pending] == ["m"]
    lister = cluster_lister(objects)
    found = lister.pod_group("default", "nginx")
    assert found is not None and (found.min_member, found.schedule_timeout_seconds) == (3, 10)
    assert [g.key for g in lister.pod_groups()] == ["default/nginx"]
    (eq,) = lister.elastic_quotas()
    assert (eq.key, eq.max_of("cpu"), eq.max_of("nvidia.com/gpu")) == ("team-a/quota", 20_000, 2)


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            make_pod_group("g").min_member(0).dict(),
            "PodGroup default/g: spec.minMember: Invalid value: 0",
            id="podgroup-minmember-zero",
        ),
        pytest.param(
            make_pod_group("g").min_resources(cpu="lots").dict(),
            "PodGroup default/g: spec.minResources.cpu:",
            id="podgroup-bad-quantity",
        ),
        pytest.param(
            make_elastic_quota("a").max(memory="1Q").dict(),
            "ElasticQuota a/quota: spec.max.memory:",
            id="quota-bad-quantity",
        ),
    ],
)
def test_a_bad_object_is_named_with_file_document_and_field(
    tmp_path: Path, obj: dict[str, Any], expected: str
) -> None:
    path = write(tmp_path / "cluster.yaml", node(), obj)
    with pytest.raises(InputError) as caught:
        load_objects(path)
    (problem,) = caught.value.problems
    assert problem.startswith(f"{path}: documents[1]: {expected}")


def test_duplicates_are_refused(tmp_path: Path) -> None:
    group = make_pod_group("g").dict()
    path = write(tmp_path / "cluster.yaml", group, group)
    with pytest.raises(InputError) as caught:
        load_objects(path)
    assert caught.value.problems == (
        f'{path}: PodGroup "default/g": Duplicate value: a PodGroup of that name',
    )
