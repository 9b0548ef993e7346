"""``kubesched export`` copies scheduler-plugins' PodGroups and ElasticQuotas from the
embedded API server once their CRDs are installed (and nothing, without error, before),
and the policy lab loads them back with their spec and status."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.cli import main
from kubesched.controllers.crds import install_crds, scheduling_crds
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import ELASTIC_QUOTAS, NAMESPACES, POD_GROUPS
from kubesched.sim.files import load_objects
from kubesched.testing.scheduling_wrappers import make_elastic_quota, make_pod_group


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig")
    yield handle
    handle.stop()


def test_export_copies_pod_groups_and_quotas(
    apiserver: ApiServerHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = Path(apiserver.kubeconfig_path)
    before = tmp_path / "before.yaml"
    assert main(["export", "--kubeconfig", str(kubeconfig), "-o", str(before)]) == 0
    assert "PodGroup" not in capsys.readouterr().err

    async def setup() -> None:
        async with Client(load_kubeconfig([kubeconfig])) as client:
            await install_crds(client, scheduling_crds())
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
            await client.create(NAMESPACES.raw, namespace)
            group = make_pod_group("train").namespace("ml").min_member(4).dict()
            created = await client.create(POD_GROUPS.raw, group)
            created["status"] = {"phase": "Scheduling", "running": 1}
            await client.update(POD_GROUPS.raw, created, "status")
            quota = make_elastic_quota("ml").min(cpu="2").max(cpu="4").dict()
            await client.create(ELASTIC_QUOTAS.raw, quota)

    asyncio.run(setup())
    out = tmp_path / "cluster.yaml"
    assert main(["export", "--kubeconfig", str(kubeconfig), "-o", str(out)]) == 0
    summary = capsys.readouterr().err
    assert "1 PodGroup" in summary and "1 ElasticQuota" in summary
    objects = load_objects(out)
    assert objects.ignored_kinds == {} and objects.warnings == []
    (group,) = objects.pod_groups
    assert (group.key, group.min_member, group.phase, group.running) == (
        "ml/train",
        4,
        "Scheduling",
        1,
    )
    (quota,) = objects.elastic_quotas
    assert (quota.key, quota.min_of("cpu"), quota.max_of("cpu")) == ("ml/quota", 2000, 4000)
