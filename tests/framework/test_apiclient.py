"""The in-memory API store behind the simulator and plugin tests: it must answer as the
API server does (resourceVersions, conflicts, status apart from the object), since
PreBind plugins are tested against it; and the PreBind runner's pre-flight rules."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import loads_config
from kubesched.framework.apiclient import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    AlreadyExists,
    APIResource,
    Conflict,
    Invalid,
    MemoryAPIClient,
    NotFound,
    merge_patch,
    retry_on_conflict,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, Status
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.plugins.registry import IN_TREE
from kubesched.testing import make_pod


def claim(name: str = "c", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": dict(spec)}


def test_create_stamps_kind_and_resource_version_and_refuses_a_duplicate():
    store = MemoryAPIClient()
    created = store.create(PERSISTENT_VOLUME_CLAIMS, claim())
    assert created["kind"] == "PersistentVolumeClaim" and created["apiVersion"] == "v1"
    assert created["metadata"]["resourceVersion"]
    with pytest.raises(AlreadyExists) as err:
        store.create(PERSISTENT_VOLUME_CLAIMS, claim())
    assert isinstance(err.value, Conflict) and err.value.code == 409


def test_get_of_a_missing_object_is_not_found_worded_as_the_server_words_it():
    with pytest.raises(NotFound) as err:
        MemoryAPIClient().get(PERSISTENT_VOLUME_CLAIMS, "x", "ns")
    assert str(err.value) == 'persistentvolumeclaims "x" not found'
    assert err.value.code == 404


def test_a_namespaced_object_needs_a_namespace_and_every_object_a_name():
    store = MemoryAPIClient()
    with pytest.raises(Invalid):
        store.create(PERSISTENT_VOLUME_CLAIMS, {"metadata": {"name": "c"}})
    with pytest.raises(Invalid):
        store.create(PERSISTENT_VOLUMES, {"metadata": {}})


def test_an_update_from_a_stale_copy_conflicts_and_a_fresh_one_succeeds():
    store = MemoryAPIClient()
    first = store.create(PERSISTENT_VOLUMES, {"metadata": {"name": "pv"}, "spec": {}})
    store.update(PERSISTENT_VOLUMES, {**first, "spec": {"a": 1}})
    with pytest.raises(Conflict):
        store.update(PERSISTENT_VOLUMES, {**first, "spec": {"b": 2}})
    fresh = store.get(PERSISTENT_VOLUMES, "pv")
    assert store.update(PERSISTENT_VOLUMES, {**fresh, "spec": {"b": 2}})["spec"] == {"b": 2}


def test_update_keeps_the_stored_status_and_update_status_keeps_the_rest():
    store = MemoryAPIClient()
    store.add(
        PERSISTENT_VOLUMES,
        {"metadata": {"name": "pv"}, "spec": {"x": 1}, "status": {"phase": "Available"}},
    )
    obj = store.get(PERSISTENT_VOLUMES, "pv")
    after = store.update(PERSISTENT_VOLUMES, {**obj, "spec": {"x": 2}, "status": {"phase": "X"}})
    assert after["status"] == {"phase": "Available"} and after["spec"] == {"x": 2}
    after = store.update_status(
        PERSISTENT_VOLUMES, {**after, "spec": {"x": 3}, "status": {"phase": "Bound"}}
    )
    assert after["status"] == {"phase": "Bound"} and after["spec"] == {"x": 2}


def test_merge_patch_merges_deletes_with_null_and_keeps_status_apart():
    store = MemoryAPIClient()
    store.add(
        PERSISTENT_VOLUME_CLAIMS,
        {
            **claim(),
            "metadata": {"name": "c", "namespace": "ns", "annotations": {"a": "1", "b": "2"}},
            "status": {"phase": "Pending"},
        },
    )
    out = store.patch(
        PERSISTENT_VOLUME_CLAIMS,
        "c",
        {"metadata": {"annotations": {"a": None, "c": "3"}}, "status": {"phase": "Bound"}},
        "ns",
    )
    assert out["metadata"]["annotations"] == {"b": "2", "c": "3"}
    assert out["status"] == {"phase": "Pending"}
    out = store.patch(
        PERSISTENT_VOLUME_CLAIMS, "c", {"status": {"phase": "Bound"}}, "ns", subresource="status"
    )
    assert out["status"] == {"phase": "Bound"}


def test_a_patch_with_a_stale_resource_version_conflicts():
    store = MemoryAPIClient()
    old = store.create(PERSISTENT_VOLUMES, {"metadata": {"name": "pv"}})
    store.patch(PERSISTENT_VOLUMES, "pv", {"spec": {"a": 1}})
    with pytest.raises(Conflict):
        store.patch(
            PERSISTENT_VOLUMES,
            "pv",
            {"metadata": {"resourceVersion": old["metadata"]["resourceVersion"]}, "spec": {"a": 2}},
        )


def test_objects_are_copied_in_and_out():
    store = MemoryAPIClient()
    body = {"metadata": {"name": "pv"}, "spec": {"a": 1}}
    got = store.create(PERSISTENT_VOLUMES, body)
    body["spec"]["a"] = 2
    got["spec"]["a"] = 3
    assert store.get(PERSISTENT_VOLUMES, "pv")["spec"] == {"a": 1}


def test_change_handlers_see_each_write_and_may_write_themselves():
    store = MemoryAPIClient()
    seen: list[tuple[str, str | None, str | None]] = []

    def controller(resource: APIResource, old: Any, new: Any) -> None:
        seen.append(
            (resource.plural, old and old["metadata"]["name"], new and new["metadata"]["name"])
        )
        if resource == PERSISTENT_VOLUME_CLAIMS and new is not None and old is None:
            store.create(
                PERSISTENT_VOLUMES, {"metadata": {"name": f"pv-{new['metadata']['name']}"}}
            )

    store.on_change(controller)
    store.create(PERSISTENT_VOLUME_CLAIMS, claim("c1"))
    store.delete(PERSISTENT_VOLUME_CLAIMS, "c1", "ns")
    assert seen == [
        ("persistentvolumeclaims", None, "c1"),
        ("persistentvolumes", None, "pv-c1"),
        ("persistentvolumeclaims", "c1", None),
    ]
    assert store.wait_until(lambda: bool(store.list(PERSISTENT_VOLUMES)), 600)
    assert not store.wait_until(lambda: bool(store.list(PERSISTENT_VOLUME_CLAIMS)), 600)


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        ({"a": 1}, {"a": None}, {}),
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": None, "d": 3}}, {"a": {"c": 2, "d": 3}}),
        ({"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
        ({"a": 1}, ["x"], ["x"]),
        ("scalar", {"a": 1}, {"a": 1}),
    ],
    ids=["null-deletes", "objects-merge", "lists-replace", "non-object-replaces", "into-scalar"],
)
def test_merge_patch_follows_rfc_7386(target, patch, expected):
    assert merge_patch(target, patch) == expected


def test_retry_on_conflict_retries_then_gives_up_with_the_last_conflict():
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise Conflict("again")
        return "done"

    assert retry_on_conflict(flaky, sleep=False) == "done" and len(calls) == 3
    calls.clear()

    def never() -> str:
        calls.append(1)
        raise Conflict("always")

    with pytest.raises(Conflict):
        retry_on_conflict(never, steps=4, sleep=False)
    assert len(calls) == 4


# --- the PreBind runner --------------------------------------------------------------


class PreBinder:
    """Records its PreBind calls; its pre-flight answers what the pod's label says."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    def pre_bind_pre_flight(self, state: CycleState, pod: Any, node: str) -> Status | None:
        answer = pod.labels.get(self.name, "success")
        return {
            "success": None,
            "skip": Status.skip(),
            "error": Status.error("broken"),
            "unschedulable": Status.unschedulable("no"),
        }[answer]

    def pre_bind(self, state: CycleState, pod: Any, node: str) -> Status | None:
        self.log.append(self.name)
        if pod.labels.get(f"{self.name}-raise"):
            raise NotFound('persistentvolumeclaims "x" not found')
        return None


class NoFlight:
    def __init__(self, log: list[str]) -> None:
        self.name = "NoFlight"
        self.log = log

    def pre_bind(self, state: CycleState, pod: Any, node: str) -> Status | None:
        self.log.append(self.name)
        return None


def framework(log: list[str], *names: str) -> Framework:
    plugins = {
        "A": lambda args, handle: PreBinder("A", log),
        "B": lambda args, handle: PreBinder("B", log),
        "NoFlight": lambda args, handle: NoFlight(log),
    }
    enabled = ", ".join(f"{{name: {n}}}" for n in names)
    config = loads_config(f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - plugins:
      multiPoint:
        disabled: [{{name: "*"}}]
        enabled: [{{name: PrioritySort}}, {{name: DefaultBinder}}]
      preBind:
        enabled: [{enabled}]
""")
    return Framework(config.profiles[0], Registry({**IN_TREE, **plugins}))


@pytest.mark.parametrize(
    ("names", "labels", "flight", "ran"),
    [
        (("A", "B"), {}, None, ["A", "B"]),
        (("A", "B"), {"A": "skip"}, None, ["B"]),
        (("A", "B"), {"A": "skip", "B": "skip"}, Code.SKIP, []),
        (("A", "NoFlight"), {"A": "skip"}, None, ["NoFlight"]),
        ((), {}, Code.SKIP, []),
    ],
    ids=[
        "both-have-work-both-run",
        "a-skipping-plugin-is-left-out",
        "all-skip-is-skip",
        "a-plugin-without-pre-flight-always-runs",
        "no-prebind-plugins-is-skip",
    ],
)
def test_pre_flight_decides_who_runs_prebind(names, labels, flight, ran):
    log: list[str] = []
    fwk = framework(log, *names)
    state = CycleState()
    pod = make_pod("p").labels(labels).obj()
    status = fwk.run_pre_bind_pre_flights(state, pod, "n1")
    assert (status.code if status is not None else None) is flight
    assert fwk.run_pre_bind_plugins(state, pod, "n1") is None
    assert log == ran


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("error", 'running PreBindPreFlight "A": broken'),
        (
            "unschedulable",
            'PreBindPreFlight A returned "Unschedulable", which is unsupported. It is supposed '
            "to return Success, Skip, or Error status",
        ),
    ],
    ids=["an-error-fails-the-binding", "a-rejection-is-refused-as-an-error"],
)
def test_pre_flight_errors(answer, message):
    fwk = framework([], "A")
    pod = make_pod("p").label("A", answer).obj()
    status = fwk.run_pre_bind_pre_flights(CycleState(), pod, "n1")
    assert status == Status(Code.ERROR, (message,), "A")


def test_an_api_error_escaping_prebind_is_the_plugins_error():
    fwk = framework([], "A")
    pod = make_pod("p").label("A-raise", "yes").obj()
    status = fwk.run_pre_bind_plugins(CycleState(), pod, "n1")
    assert status == Status(
        Code.ERROR, ('running PreBind plugin "A": persistentvolumeclaims "x" not found',), "A"
    )
