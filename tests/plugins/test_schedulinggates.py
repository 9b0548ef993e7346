"""SchedulingGates, after upstream's scheduling_gates_test.go."""

from __future__ import annotations

import pytest

from kubesched.framework.interface import (
    ActionType,
    Code,
    EnqueueExtensions,
    EventResource,
    PreEnqueuePlugin,
    QueueingHint,
    Status,
)
from kubesched.objects.pod import Pod
from kubesched.plugins import schedulinggates
from kubesched.plugins.schedulinggates import is_schedulable_after_pod_change
from kubesched.testing.wrappers import make_pod


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod("p").obj(), None, id="pod does not carry scheduling gates"),
        pytest.param(
            make_pod("p").scheduling_gates("foo", "bar").obj(),
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting for scheduling gates: [foo bar]",)
            ),
            id="pod carries scheduling gates",
        ),
        pytest.param(
            make_pod("p").scheduling_gates("only").obj(),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting for scheduling gates: [only]",)),
            id="pod carries one scheduling gate",
        ),
    ],
)
def test_pre_enqueue(pod: Pod, want: Status | None) -> None:
    assert schedulinggates.SchedulingGates().pre_enqueue(pod) == want


GATED = make_pod("p").uid("uid").scheduling_gates("foo").obj()


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            GATED,
            make_pod("p").uid("uid").obj(),
            QueueingHint.QUEUE,
            id="queue-on-gates-eliminated",
        ),
        pytest.param(
            make_pod("other").uid("other").scheduling_gates("foo").obj(),
            make_pod("other").uid("other").obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-other-pod-updated",
        ),
        pytest.param(
            make_pod("p").uid("uid").scheduling_gates("foo", "bar").obj(),
            GATED,
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-gate-removed-but-others-left",
        ),
    ],
)
def test_is_schedulable_after_pod_change(old: Pod, new: Pod, expected: QueueingHint) -> None:
    assert is_schedulable_after_pod_change(GATED, old, new) is expected


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, "not-a-pod", id="backoff-wrong-new-object"),
        pytest.param("not-a-pod", GATED, id="backoff-wrong-old-object"),
    ],
)
def test_hint_raises_on_wrong_objects(old: object, new: object) -> None:
    with pytest.raises(TypeError):
        is_schedulable_after_pod_change(GATED, old, new)


def test_events_register_the_gates_eliminated_update() -> None:
    (event,) = schedulinggates.SchedulingGates().events_to_register()
    assert event.event.resource is EventResource.POD
    assert event.event.action == ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    assert event.hint is is_schedulable_after_pod_change


def test_factory_builds_a_pre_enqueue_plugin() -> None:
    plugin = schedulinggates.new({}, None)  # type: ignore[arg-type]
    assert plugin.name == "SchedulingGates"
    assert isinstance(plugin, PreEnqueuePlugin)
    assert isinstance(plugin, EnqueueExtensions)
