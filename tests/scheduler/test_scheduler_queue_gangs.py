"""The scheduling queue's side of gangs: members held until their quorum exists, a group
taken out of activeQ, backoffQ and the unschedulable pods together, a member not needed
going back to activeQ, and a failed group's backoff waited out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.config import default_config, loads_config
from kubesched.framework.handle import StaticClusterLister
from kubesched.framework.runtime import Framework
from kubesched.objects.pod import Pod
from kubesched.objects.podgroup import POD_GROUP_LABEL
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.backend.queue import (
    ACTIVE,
    BACKOFF,
    IN_FLIGHT,
    UNSCHEDULABLE,
    SchedulingQueue,
)
from kubesched.testing import make_pod
from kubesched.testing.scheduling_wrappers import make_pod_group

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      podGroupBackoffSeconds: 30
"""


def queue(clock: Any, **groups: int) -> SchedulingQueue:
    lister = StaticClusterLister(
        pod_groups=[make_pod_group(name).min_member(n).obj() for name, n in groups.items()]
    )
    config = loads_config(CONFIG, "config.yaml")
    fwk = Framework(config.profiles[0], in_tree_registry(), cluster=lister)
    frameworks: Mapping[str, Any] = {"default-scheduler": fwk}
    return SchedulingQueue.from_config(
        default_config(), frameworks, clock=clock, pop_from_backoff_q=False
    )


def member(name: str, group: str) -> Pod:
    return make_pod(name).label(POD_GROUP_LABEL, group).req(cpu="1").obj()


def test_members_are_held_until_the_quorum_exists_then_all_go(clock: Any) -> None:
    q = queue(clock, g=3)
    q.add(member("g-0", "g"))
    q.add(member("g-1", "g"))
    assert [q.where("default/g-0"), q.where("default/g-1")] == [UNSCHEDULABLE, UNSCHEDULABLE]
    held = q.get("default/g-0")
    assert held is not None and held.gated
    assert held.unschedulable_plugins == frozenset({"Coscheduling"})
    q.add(member("g-2", "g"))
    assert {q.where(f"default/g-{i}") for i in range(3)} == {ACTIVE}


def test_a_group_leaves_every_queue_together_and_an_unneeded_member_comes_back(
    clock: Any,
) -> None:
    q = queue(clock, g=2)
    for i in range(3):
        q.add(member(f"g-{i}", "g"))
    first = q.pop_nowait()
    assert first is not None
    # One sibling is in backoffQ after a failed attempt, one still in activeQ.
    second = q.pop_nowait()
    assert second is not None
    second.unschedulable_plugins = frozenset()
    assert q.add_unschedulable_if_not_present(second) == BACKOFF
    taken = q.pop_group("default/g", first.pod)
    assert sorted(i.pod.name for i in taken) == sorted({"g-0", "g-1", "g-2"} - {first.pod.name})
    assert {q.where(f"default/g-{i}") for i in range(3)} == {IN_FLIGHT}
    q.return_to_active(taken[0])
    assert q.where(taken[0].pod.key) == ACTIVE


def test_a_failed_group_waits_out_its_backoff_together(clock: Any) -> None:
    q = queue(clock, g=2)
    for i in range(2):
        q.add(member(f"g-{i}", "g"))
    first = q.pop_nowait()
    assert first is not None
    members = [first, *q.pop_group("default/g", first.pod)]
    for info in members:
        info.unschedulable_plugins = frozenset()
        info.backoff_until = clock() + 30
        assert q.add_unschedulable_if_not_present(info) == BACKOFF
    clock.advance(20)  # past the pods' own backoff, not the group's
    q.flush_backoff_completed()
    assert {q.where(f"default/g-{i}") for i in range(2)} == {BACKOFF}
    clock.advance(11)
    q.flush_backoff_completed()
    assert {q.where(f"default/g-{i}") for i in range(2)} == {ACTIVE}
