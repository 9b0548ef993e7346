"""The in-memory store: create/get/update/delete, optimistic concurrency, status apart
from spec, list with selectors and pages, watches with a bounded window."""

from __future__ import annotations

import threading

import pytest
from apiserver_builders import NodeBuilder, PodBuilder, event
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.apiserver import errors
from kubesched.apiserver.resources import EVENTS, NODES, PODS
from kubesched.apiserver.store import Store


def test_create_sets_system_metadata():
    store = Store()
    pod = store.create(PODS, PodBuilder("web").obj(), "default")
    meta = pod["metadata"]
    assert meta["namespace"] == "default"
    assert meta["resourceVersion"] == "1"
    assert meta["generation"] == 1
    assert len(meta["uid"]) == 36
    assert meta["creationTimestamp"].endswith("Z")


def test_generate_name_makes_unique_names():
    store = Store()
    names = {
        store.create(PODS, PodBuilder().generate_name("web-").obj(), "default")["metadata"]["name"]
        for _ in range(50)
    }
    assert len(names) == 50
    assert all(n.startswith("web-") and len(n) == 9 for n in names)


def test_every_write_takes_the_next_global_version():
    store = Store()
    versions = [
        store.create(NODES, NodeBuilder("n1").obj())["metadata"]["resourceVersion"],
        store.create(PODS, PodBuilder("a").obj(), "default")["metadata"]["resourceVersion"],
        store.delete(NODES, None, "n1")["metadata"]["resourceVersion"],
    ]
    assert versions == ["1", "2", "3"]
    assert store.resource_version == 3


@pytest.mark.parametrize(
    ("op", "code", "reason", "message"),
    [
        pytest.param(
            "create-twice",
            409,
            "AlreadyExists",
            'pods "web" already exists',
            id="create-existing-name-is-already-exists",
        ),
        pytest.param(
            "get-missing", 404, "NotFound", 'pods "nope" not found', id="get-missing-is-not-found"
        ),
        pytest.param(
            "update-missing",
            404,
            "NotFound",
            'pods "nope" not found',
            id="update-missing-is-not-found",
        ),
        pytest.param(
            "delete-missing",
            404,
            "NotFound",
            'pods "nope" not found',
            id="delete-missing-is-not-found",
        ),
        pytest.param(
            "update-stale",
            409,
            "Conflict",
            'Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again',
            id="stale-resource-version-is-conflict",
        ),
        pytest.param(
            "no-name",
            422,
            "Invalid",
            'Pod "" is invalid: metadata.name: Required value: name or generateName is required',
            id="no-name-is-invalid",
        ),
        pytest.param(
            "delete-wrong-uid",
            409,
            "Conflict",
            'Operation cannot be fulfilled on pods "web": Precondition failed: UID in precondition: x, UID in object meta: ',
            id="delete-precondition-uid-is-conflict",
        ),
    ],
)
def test_refusals(op, code, reason, message):
    store = Store()
    store.create(PODS, PodBuilder("web").obj(), "default")
    before = store.resource_version
    with pytest.raises(errors.ApiError) as caught:
        if op == "create-twice":
            store.create(PODS, PodBuilder("web").obj(), "default")
        elif op == "get-missing":
            store.get(PODS, "default", "nope")
        elif op == "update-missing":
            store.update(PODS, PodBuilder("nope").obj(), "default")
        elif op == "delete-missing":
            store.delete(PODS, "default", "nope")
        elif op == "update-stale":
            stale = PodBuilder("web").label("a", "b").obj()
            stale["metadata"]["resourceVersion"] = "0"
            store.update(PODS, stale, "default")
        elif op == "no-name":
            store.create(PODS, PodBuilder().obj(), "default")
        elif op == "delete-wrong-uid":
            store.delete(PODS, "default", "web", uid="x")
    status = caught.value.status
    assert (status["code"], status["reason"]) == (code, reason)
    assert status["message"].startswith(message)
    assert store.resource_version == before, "a refused write changes nothing"


def test_update_with_current_version_succeeds_and_bumps_generation_on_spec_change():
    store = Store()
    pod = store.create(PODS, PodBuilder("web").obj(), "default")
    changed = PodBuilder("web").node("n1").obj()
    changed["metadata"]["resourceVersion"] = pod["metadata"]["resourceVersion"]
    updated = store.update(PODS, changed, "default")
    assert updated["metadata"]["resourceVersion"] == "2"
    assert updated["metadata"]["generation"] == 2
    assert updated["metadata"]["uid"] == pod["metadata"]["uid"]


def test_update_that_changes_nothing_keeps_the_version():
    store = Store()
    store.create(PODS, PodBuilder("web").obj(), "default")
    again = store.update(PODS, PodBuilder("web").obj(), "default")
    assert again["metadata"]["resourceVersion"] == "1"


def test_main_update_ignores_status_and_status_update_ignores_spec():
    store = Store()
    store.create(PODS, PodBuilder("web").phase("Pending").obj(), "default")
    main = store.update(PODS, PodBuilder("web").node("n1").phase("Running").obj(), "default")
    assert main["status"] == {"phase": "Pending"}
    assert main["spec"]["nodeName"] == "n1"
    status = store.update(
        PODS, PodBuilder("web").node("n2").phase("Running").obj(), "default", "status"
    )
    assert status["status"] == {"phase": "Running"}
    assert status["spec"]["nodeName"] == "n1"
    assert status["metadata"]["generation"] == 2, "a status write does not bump generation"


def test_guaranteed_update_works_on_a_private_copy():
    store = Store()
    store.create(PODS, PodBuilder("web").obj(), "default")
    before = store.get(PODS, "default", "web")

    def refuse(pod):
        pod["spec"]["nodeName"] = "n1"
        raise errors.conflict("pods", "web", "no")

    with pytest.raises(errors.ApiError):
        store.guaranteed_update(PODS, "default", "web", refuse)
    assert "nodeName" not in store.get(PODS, "default", "web")["spec"]
    assert store.get(PODS, "default", "web") is before


@pytest.fixture
def populated():
    store = Store()
    for name, node, sched, phase, app in [
        ("a", "", "default-scheduler", "Pending", "web"),
        ("b", "n1", "default-scheduler", "Running", "web"),
        ("c", "n2", "other", "Running", "db"),
        ("d", "", "other", "Pending", "db"),
    ]:
        builder = PodBuilder(name).label("app", app).scheduler(sched).phase(phase)
        if node:
            builder.node(node)
        store.create(PODS, builder.obj(), "default")
    store.create(PODS, PodBuilder("e", "kube-system").label("tier", "1").obj(), "kube-system")
    return store


@pytest.mark.parametrize(
    ("namespace", "labels", "fields", "expected"),
    [
        pytest.param(None, "", "", ["a", "b", "c", "d", "e"], id="all-namespaces-in-key-order"),
        pytest.param("default", "", "", ["a", "b", "c", "d"], id="one-namespace"),
        pytest.param(None, "app=web", "", ["a", "b"], id="label-equals"),
        pytest.param(None, "app!=web", "", ["c", "d", "e"], id="label-not-equals-includes-missing"),
        pytest.param(
            None, "app in (db, web),app notin (web)", "", ["c", "d"], id="label-set-operators"
        ),
        pytest.param(None, "tier", "", ["e"], id="label-exists"),
        pytest.param(None, "!app", "", ["e"], id="label-does-not-exist"),
        pytest.param(None, "tier>0", "", ["e"], id="label-greater-than"),
        pytest.param(None, "", "spec.nodeName=", ["a", "d", "e"], id="unassigned-pods"),
        pytest.param(None, "", "spec.nodeName!=", ["b", "c"], id="assigned-pods"),
        pytest.param(None, "", "spec.nodeName=n1", ["b"], id="pods-on-a-node"),
        pytest.param(
            None,
            "",
            "spec.schedulerName=other,status.phase=Pending",
            ["d"],
            id="scheduler-and-phase",
        ),
        pytest.param(None, "", "metadata.namespace=kube-system", ["e"], id="namespace-field"),
        pytest.param(None, "", "metadata.name==c", ["c"], id="name-field-double-equals"),
        pytest.param(
            None, "app=db", "status.phase!=Running", ["d"], id="labels-and-fields-together"
        ),
    ],
)
def test_list_selectors(populated, namespace, labels, fields, expected):
    page = populated.list(PODS, namespace, labels, fields)
    assert [p["metadata"]["name"] for p in page.items] == expected
    assert page.resource_version == populated.resource_version


@pytest.mark.parametrize(
    ("labels", "fields", "message"),
    [
        pytest.param("app in web", "", "unable to parse requirement", id="bad-label-selector"),
        pytest.param("", "spec.foo=bar", "field label not supported: spec.foo", id="unknown-field"),
        pytest.param("", "nonsense", "invalid selector", id="field-without-operator"),
    ],
)
def test_bad_selectors_are_bad_requests(populated, labels, fields, message):
    with pytest.raises(errors.ApiError) as caught:
        populated.list(PODS, None, labels, fields)
    assert caught.value.code == 400
    assert message in caught.value.status["message"]


def test_event_field_selectors():
    store = Store()
    store.create(
        EVENTS,
        event("e1", {"kind": "Pod", "name": "web", "namespace": "default", "uid": "u1"}),
        "default",
    )
    store.create(
        EVENTS, event("e2", {"kind": "Node", "name": "n1", "namespace": "", "uid": "u2"}), "default"
    )
    selector = "involvedObject.name=web,involvedObject.namespace=default,involvedObject.kind=Pod,involvedObject.uid=u1"
    assert [e["metadata"]["name"] for e in store.list(EVENTS, "default", "", selector).items] == [
        "e1"
    ]


def test_limit_and_continue_walk_every_item_once(populated):
    seen, token, pages = [], "", 0
    while True:
        page = populated.list(PODS, None, limit=2, continue_token=token)
        seen += [p["metadata"]["name"] for p in page.items]
        pages += 1
        token = page.continue_token
        if not token:
            break
        assert page.remaining is not None
    assert seen == ["a", "b", "c", "d", "e"]
    assert pages == 3


def test_continue_token_older_than_the_window_is_expired():
    store = Store(window=2)
    for i in range(3):
        store.create(PODS, PodBuilder(f"p{i}").obj(), "default")
    token = store.list(PODS, None, limit=1).continue_token
    for i in range(3):
        store.delete(PODS, "default", f"p{i}")
    with pytest.raises(errors.ApiError) as caught:
        store.list(PODS, None, limit=1, continue_token=token)
    assert (caught.value.code, caught.value.reason) == (410, "Expired")
    assert "use the continue token in this response" in caught.value.status["message"]


def test_an_expired_continue_token_comes_with_one_for_the_rest_at_the_latest_version():
    # As etcd3 storage answers a compacted paged list: the rest can still be read, at the
    # latest version, with the token in the 410's metadata.continue.
    store = Store(window=2)
    for name in ("a", "b", "c", "d"):
        store.create(PODS, PodBuilder(name).obj(), "default")
    first = store.list(PODS, None, limit=2)
    assert [o["metadata"]["name"] for o in first.items] == ["a", "b"]
    store.delete(PODS, "default", "c")
    store.create(PODS, PodBuilder("e").obj(), "default")
    store.create(PODS, PodBuilder("f").obj(), "default")
    with pytest.raises(errors.ApiError) as caught:
        store.list(PODS, None, limit=2, continue_token=first.continue_token)
    fresh = caught.value.status["metadata"]["continue"]
    rest = store.list(PODS, None, limit=2, continue_token=fresh)
    assert [o["metadata"]["name"] for o in rest.items] == ["d", "e"]
    assert rest.resource_version == int(store.list(PODS, None).resource_version)
    last = store.list(PODS, None, limit=2, continue_token=rest.continue_token)
    assert [o["metadata"]["name"] for o in last.items] == ["f"]
    assert not last.continue_token


def test_bad_continue_token_is_a_bad_request():
    with pytest.raises(errors.ApiError) as caught:
        Store().list(PODS, None, continue_token="!!!")
    assert caught.value.code == 400


def _types(watcher):
    return [(e.type, e.object["metadata"]["name"]) for e in watcher.take()]


def test_watch_from_zero_sends_synthetic_added_then_changes():
    store = Store()
    store.create(PODS, PodBuilder("a").obj(), "default")
    watcher = store.watch(PODS, None, "0")
    assert _types(watcher) == [("ADDED", "a")]
    store.create(PODS, PodBuilder("b").obj(), "default")
    store.delete(PODS, "default", "a")
    assert _types(watcher) == [("ADDED", "b"), ("DELETED", "a")]


def test_watch_with_selector_sees_objects_enter_and_leave():
    store = Store()
    store.create(PODS, PodBuilder("a").obj(), "default")
    watcher = store.watch(PODS, None, str(store.resource_version), field_selector="spec.nodeName=")
    store.guaranteed_update(
        PODS, "default", "a", lambda p: {**p, "spec": {**p["spec"], "nodeName": "n1"}}
    )
    store.create(PODS, PodBuilder("b").node("n1").obj(), "default")
    store.create(PODS, PodBuilder("c").obj(), "default")
    assert _types(watcher) == [("DELETED", "a"), ("ADDED", "c")]


def test_watch_namespace_filter():
    store = Store()
    watcher = store.watch(PODS, "kube-system", "0")
    store.create(PODS, PodBuilder("a").obj(), "default")
    store.create(PODS, PodBuilder("b", "kube-system").obj(), "kube-system")
    assert _types(watcher) == [("ADDED", "b")]


def test_watch_older_than_the_window_is_expired():
    store = Store(window=3)
    for i in range(5):
        store.create(PODS, PodBuilder(f"p{i}").obj(), "default")
    with pytest.raises(errors.ApiError) as caught:
        store.watch(PODS, None, "1")
    assert caught.value.status["reason"] == "Expired"
    assert caught.value.status["message"] == "too old resource version: 1 (2)"
    assert [e.resource_version for e in store.watch(PODS, None, "2").take()] == [3, 4, 5]


def test_window_is_per_resource_and_bounded():
    store = Store(window=2)
    store.create(NODES, NodeBuilder("n1").obj())
    for i in range(10):
        store.create(PODS, PodBuilder(f"p{i}").obj(), "default")
    assert len(store._logs[PODS.key]) == 2
    assert [e.object["metadata"]["name"] for e in store.watch(NODES, None, "0").take()] == ["n1"]
    store.watch(NODES, None, "1")  # nodes' own window still holds everything after 1


def test_closed_watcher_is_forgotten():
    store = Store()
    watcher = store.watch(PODS)
    assert store.watcher_count(PODS) == 1
    watcher.close()
    assert store.watcher_count(PODS) == 0


def test_bookmark_only_when_the_watcher_has_everything():
    store = Store()
    watcher = store.watch(PODS, None, "0")
    store.create(PODS, PodBuilder("a").obj(), "default")
    assert store.bookmark(watcher) is None
    watcher.take()
    assert store.bookmark(watcher) == store.resource_version


# A random history of writes to a few pods; each op is (kind, pod index).
_ops = st.lists(
    st.tuples(st.sampled_from(["create", "update", "status", "delete"]), st.integers(0, 3)),
    min_size=1,
    max_size=40,
)


def _apply(store, kind, i):
    name = f"p{i}"
    try:
        if kind == "create":
            store.create(PODS, PodBuilder(name).obj(), "default")
        elif kind == "update":
            store.guaranteed_update(
                PODS,
                "default",
                name,
                lambda p: {**p, "spec": {**p["spec"], "n": store.resource_version}},
            )
        elif kind == "status":
            store.update(
                PODS,
                PodBuilder(name).phase(f"P{store.resource_version}").obj(),
                "default",
                "status",
            )
        else:
            store.delete(PODS, "default", name)
    except errors.ApiError:
        pass


@settings(max_examples=60, deadline=None)
@given(ops=_ops, window=st.integers(1, 50))
def test_resuming_from_any_seen_version_sees_every_later_event_once_in_order(ops, window):
    store = Store(window=window)
    full = store.watch(PODS, None, "0")
    for kind, i in ops:
        _apply(store, kind, i)
    history = full.take()
    versions = [e.resource_version for e in history]
    assert versions == sorted(set(versions)), "versions strictly increase"
    floor = store._logs[PODS.key].floor
    for seen in versions:
        if seen < floor:
            with pytest.raises(errors.ApiError):
                store.watch(PODS, None, str(seen))
            continue
        resumed = store.watch(PODS, None, str(seen)).take()
        expected = [(e.type, e.resource_version) for e in history if e.resource_version > seen]
        assert [(e.type, e.resource_version) for e in resumed] == expected


def test_concurrent_writers_lose_nothing():
    store = Store()
    store.create(NODES, NodeBuilder("n").obj())
    applied, conflicts = [], []
    lock = threading.Lock()
    watcher = store.watch(NODES, None, "1")

    def writer(w):
        for k in range(25):
            current = store.get(NODES, None, "n")
            update = {**current, "metadata": {**current["metadata"], "labels": {f"w{w}": str(k)}}}
            try:
                result = store.update(NODES, update)
            except errors.ApiError as err:
                assert err.code == 409
                with lock:
                    conflicts.append(w)
            else:
                with lock:
                    applied.append(int(result["metadata"]["resourceVersion"]))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(applied) + len(conflicts) == 32 * 25
    events = watcher.take()
    assert sorted(applied) == [e.resource_version for e in events]
    assert len(set(applied)) == len(applied)


def test_a_watcher_too_far_behind_is_cut_off_and_can_resume():
    store = Store(window=1024)
    watcher = store.watch(PODS, None, "0")
    for i in range(1100):
        store.create(PODS, PodBuilder(f"p{i}").obj(), "default")
    assert watcher.overflowed
    delivered = watcher.take()
    assert len(delivered) == 1024
    resumed = store.watch(PODS, None, str(delivered[-1].resource_version)).take()
    assert [e.resource_version for e in resumed] == list(range(1025, 1101))
