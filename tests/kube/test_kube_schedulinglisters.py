"""PodGroup and ElasticQuota listers over informers, against the embedded API server:
empty and synced while the CRDs are not installed, and filled once they are."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import pytest
from kube_helpers import run

from kubesched.apiserver.runner import ApiServerHandle
from kubesched.controllers.crds import install_crds, scheduling_crds
from kubesched.kube import Client, NotFound, load_kubeconfig
from kubesched.kube.resources import CUSTOM_RESOURCE_DEFINITIONS, ELASTIC_QUOTAS, POD_GROUPS
from kubesched.kube.schedulinglisters import SchedulingListers
from kubesched.scheduler.listers import InformerClusterLister
from kubesched.testing.scheduling_wrappers import make_elastic_quota, make_pod_group


async def until(check: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := check()):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)
    return value


def test_listers_are_empty_without_the_crds_and_fill_once_installed(
    apiserver: ApiServerHandle, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="kubesched.kube.informer")

    def unserved(level: int) -> list[str]:
        return [
            r.getMessage()
            for r in caplog.records
            if r.levelno == level and "not served" in r.getMessage()
        ]

    async def body() -> None:
        async with Client(load_kubeconfig([apiserver.kubeconfig_path])) as client:
            listers = SchedulingListers(client)
            for informer in listers.scheduling_informers:
                informer.backoff_max = 0.2  # list again soon after a 404
                informer.start()
            try:
                for informer in listers.scheduling_informers:
                    await informer.wait_for_sync(5)
                assert listers.pod_groups() == []
                assert listers.elastic_quotas() == []
                assert listers.pod_group("default", "train") is None
                # Listed again and again while not served, said once at INFO each.
                await until(lambda: len(unserved(logging.DEBUG)) >= 4, "lists again")
                said = unserved(logging.INFO)
                assert len(said) == 2, said
                assert any("podgroups" in m for m in said)
                assert any("elasticquotas" in m for m in said)

                created = await install_crds(client, scheduling_crds())
                assert sorted(created) == [
                    "elasticquotas.scheduling.x-k8s.io",
                    "podgroups.scheduling.x-k8s.io",
                ]
                # Installing again keeps what is there.
                assert await install_crds(client, scheduling_crds()) == []
                group = make_pod_group("train").min_member(3).min_resources(cpu="3")
                await client.create(POD_GROUPS.raw, group.raw)
                quota = make_elastic_quota("default").min(cpu="1").max(cpu="2")
                await client.create(ELASTIC_QUOTAS.raw, quota.raw)

                found = await until(lambda: listers.pod_group("default", "train"), "the group")
                assert (found.min_member, found.min_resources.get("cpu")) == (3, 3000)
                quotas = await until(listers.elastic_quotas, "the quota")
                assert [(q.key, q.max_of("cpu")) for q in quotas] == [("default/quota", 2000)]
                assert [g.key for g in listers.pod_groups()] == ["default/train"]
            finally:
                for informer in listers.scheduling_informers:
                    await informer.stop()
                for crd in scheduling_crds():
                    with contextlib.suppress(NotFound):
                        name = crd["metadata"]["name"]
                        await client.delete(CUSTOM_RESOURCE_DEFINITIONS, name)

    run(body())


def test_the_scheduler_lister_reads_them_too(apiserver: ApiServerHandle) -> None:
    async def body() -> None:
        async with Client(load_kubeconfig([apiserver.kubeconfig_path])) as client:
            lister = InformerClusterLister(client)
            assert {lister.pod_group_informer, lister.elastic_quota_informer} <= set(
                lister.informers
            )

    run(body())
