"""The gangs' member counts (framework/podgroups.py): pending and placed members each
counted once, gated members not counted, relabelled pods moved between groups."""

from __future__ import annotations

from kubesched.framework.interface import PodGroupInfo
from kubesched.framework.podgroups import PodGroupTracker
from kubesched.objects.pod import Pod
from kubesched.testing import make_pod


def group_of(pod: Pod) -> PodGroupInfo | None:
    name = pod.labels.get("group")
    return PodGroupInfo(f"{pod.namespace}/{name}", 3) if name else None


def member(name: str, group: str = "g") -> Pod:
    return make_pod(name).label("group", group).obj()


def test_a_member_pending_then_placed_counts_once() -> None:
    tracker = PodGroupTracker(group_of)
    pod = member("a")
    tracker.pending_added(pod)
    assert tracker.existing("default/g") == 1
    tracker.placed_added(pod.evolve(node_name="n"))
    assert (tracker.existing("default/g"), tracker.placed("default/g")) == (1, 1)
    tracker.pending_removed(pod)
    assert tracker.existing("default/g") == 1
    tracker.placed_removed(pod)
    assert (tracker.existing("default/g"), tracker.placed("default/g")) == (0, 0)


def test_members_held_by_scheduling_gates_do_not_count_until_released() -> None:
    tracker = PodGroupTracker(group_of)
    gated = make_pod("b").label("group", "g").scheduling_gates("wait").obj()
    tracker.pending_added(member("a"))
    tracker.pending_added(gated)
    assert tracker.existing("default/g") == 1
    assert [p.name for p in tracker.pending("default/g")] == ["a", "b"]
    tracker.pending_added(gated.evolve(scheduling_gates=()))
    assert tracker.existing("default/g") == 2
    assert tracker.has_quorum(PodGroupInfo("default/g", 2))


def test_a_relabelled_pod_moves_to_its_new_group() -> None:
    tracker = PodGroupTracker(group_of)
    tracker.pending_added(member("a", "g"))
    tracker.pending_added(member("a", "h"))
    assert (tracker.existing("default/g"), tracker.existing("default/h")) == (0, 1)
    tracker.pending_added(make_pod("a").obj())
    assert tracker.existing("default/h") == 0 and tracker.pending("default/h") == []
