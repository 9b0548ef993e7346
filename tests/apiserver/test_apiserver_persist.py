"""``--data FILE``: the store kept in SQLite. A restart keeps every object and its
resourceVersion, new writes continue the sequence, watchers resume from the persisted
window without loss (older versions get 410), and a file that is not ours is refused."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
from apiserver_builders import NodeBuilder, PodBuilder, call

from kubesched.apiserver import errors
from kubesched.apiserver.persist import SqliteStorage, StorageError
from kubesched.apiserver.resources import NODES, PODS
from kubesched.apiserver.runner import new_store, start_apiserver
from kubesched.apiserver.store import Store


def _watch(server, path):
    with urllib.request.urlopen(server.url + path, timeout=10) as response:
        assert response.status == 200
        return [json.loads(line) for line in response.read().splitlines() if line.strip()]


def _everything(server):
    state = {}
    for path in ("/api/v1/namespaces", "/api/v1/nodes", "/api/v1/pods",
                 "/apis/scheduling.k8s.io/v1/priorityclasses"):  # fmt: skip
        code, body = call(server, "GET", path)
        assert code == 200
        state[path] = body["items"]
    return state


def _stored(path, window=4096):
    return Store(window=window, storage=SqliteStorage(path, window))


def test_restart_keeps_every_object_and_version(tmp_path):
    data = tmp_path / "cluster.db"
    with start_apiserver(data=data) as server:
        for i in range(3):
            call(server, "POST", "/api/v1/nodes", NodeBuilder(f"n{i}").obj())
        call(server, "POST", "/api/v1/namespaces/default/pods", PodBuilder("a").obj())
        pod_b = PodBuilder("b").obj()
        pod_b["metadata"]["finalizers"] = ["example.com/hold"]
        call(server, "POST", "/api/v1/namespaces/default/pods", pod_b)
        code, _ = call(
            server,
            "PATCH",
            "/api/v1/namespaces/default/pods/a/status",
            {"status": {"phase": "Running"}},
            "application/merge-patch+json",
        )
        assert code == 200
        assert call(server, "DELETE", "/api/v1/namespaces/default/pods/b")[0] == 200
        assert call(server, "DELETE", "/api/v1/nodes/n1")[0] == 200
        before = _everything(server)
        version = server.store.resource_version
    with start_apiserver(data=data) as server:
        assert _everything(server) == before
        assert server.store.resource_version == version
        pod_b = next(p for p in before["/api/v1/pods"] if p["metadata"]["name"] == "b")
        assert pod_b["metadata"]["deletionTimestamp"]  # the graceful-deletion mark survived
        a = next(p for p in before["/api/v1/pods"] if p["metadata"]["name"] == "a")
        assert a["status"]["phase"] == "Running"
        code, node = call(server, "POST", "/api/v1/nodes", NodeBuilder("n9").obj())
        assert code == 201
        assert int(node["metadata"]["resourceVersion"]) == version + 1
        # an update with the resourceVersion read before the restart still applies
        a["metadata"]["labels"] = {"x": "y"}
        code, updated = call(server, "PUT", "/api/v1/namespaces/default/pods/a", a)
        assert code == 200
        assert int(updated["metadata"]["resourceVersion"]) == version + 2


def test_fresh_file_gets_system_objects_once(tmp_path):
    data = tmp_path / "c.db"
    first = new_store(data=data)
    version = first.resource_version
    first.close()
    second = new_store(data=data)
    assert second.resource_version == version  # nothing created again
    names = [n["metadata"]["name"] for n in second.list(second.resources[0]).items]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    second.close()


def test_watcher_resumes_after_restart_without_loss(tmp_path):
    data = tmp_path / "c.db"
    with start_apiserver(data=data) as server:
        for i in range(3):
            call(server, "POST", "/api/v1/namespaces/default/pods", PodBuilder(f"p{i}").obj())
        seen = _watch(server, "/api/v1/pods?watch=1&resourceVersion=0&timeoutSeconds=1")
        last = seen[-1]["object"]["metadata"]["resourceVersion"]
        # changes the watcher misses while it is away, before and after the restart
        call(server, "DELETE", "/api/v1/namespaces/default/pods/p0")
        call(server, "POST", "/api/v1/namespaces/default/pods", PodBuilder("p3").obj())
        _label(server, "p2", "v")
        _label(server, "p2", "w")
    with start_apiserver(data=data) as server:
        _label(server, "p1", "v")
        call(server, "POST", "/api/v1/namespaces/default/pods", PodBuilder("p4").obj())
        events = _watch(server, f"/api/v1/pods?watch=1&resourceVersion={last}&timeoutSeconds=1")
        got = [(e["type"], e["object"]["metadata"]["name"]) for e in events]
        assert got == [
            ("DELETED", "p0"),
            ("ADDED", "p3"),
            ("MODIFIED", "p2"),
            ("MODIFIED", "p2"),
            ("MODIFIED", "p1"),
            ("ADDED", "p4"),
        ]
        versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
        assert versions == sorted(set(versions))
        assert versions[0] > int(last)
        # a selector watch sees objects start and stop matching (old objects persisted too)
        selected = _watch(
            server,
            f"/api/v1/pods?watch=1&resourceVersion={last}&labelSelector=k%3Dv&timeoutSeconds=1",
        )
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in selected] == [
            ("ADDED", "p2"),
            ("DELETED", "p2"),
            ("ADDED", "p1"),
        ]


def _label(server, pod, value):
    code, _ = call(
        server,
        "PATCH",
        f"/api/v1/namespaces/default/pods/{pod}",
        {"metadata": {"labels": {"k": value}}},
        "application/merge-patch+json",
    )
    assert code == 200


def test_versions_older_than_the_persisted_window_are_expired(tmp_path):
    data = tmp_path / "c.db"
    store = _stored(data, window=4)
    for i in range(20):
        store.create(NODES, NodeBuilder(f"n{i}").obj())
    rows = store.storage._db.execute("SELECT count(*) FROM events").fetchone()[0]
    assert rows <= 4 + 1  # window plus slack: the file does not grow with history
    store.close()
    store = _stored(data, window=4)
    assert store.resource_version == 20
    with pytest.raises(errors.ApiError) as err:
        store.watch(NODES, resource_version="15")
    assert (err.value.code, err.value.reason) == (410, "Expired")
    watcher = store.watch(NODES, resource_version="16")
    assert [e.resource_version for e in watcher.take()] == [17, 18, 19, 20]
    store.close()


def test_graceful_deletion_finishes_after_restart(tmp_path):
    data = tmp_path / "c.db"
    store = _stored(data)
    store.create(PODS, PodBuilder("a").obj(), "default")
    store.delete_gracefully(PODS, "default", "a", grace_seconds=30)
    store.close()
    store = _stored(data)
    later = datetime.now(UTC) + timedelta(minutes=5)
    assert [p["metadata"]["name"] for p in store.reap(later)] == ["a"]
    store.close()
    store = _stored(data)
    assert store.list(PODS).items == []
    assert store.resource_version == 3
    store.close()


def test_concurrent_writers_with_storage(tmp_path):
    data = tmp_path / "c.db"
    store = _stored(data)
    for i in range(4):
        store.create(NODES, NodeBuilder(f"n{i}").obj())
    applied, conflicts = [], []
    lock = threading.Lock()

    def writer(w):
        for k in range(10):
            name = f"n{(w + k) % 4}"
            node = dict(store.get(NODES, None, name))
            node["metadata"] = dict(node["metadata"], labels={"w": str(w), "k": str(k)})
            try:
                out = store.update(NODES, node)
            except errors.ApiError as err:
                assert err.code == 409
                with lock:
                    conflicts.append(w)
            else:
                with lock:
                    applied.append(int(out["metadata"]["resourceVersion"]))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(applied) + len(conflicts) == 320
    assert len(set(applied)) == len(applied)
    assert store.resource_version == 4 + len(applied)
    before = store.list(NODES).items
    store.close()
    store = _stored(data)
    assert store.list(NODES).items == before
    watcher = store.watch(NODES, resource_version="4")
    assert [e.resource_version for e in watcher.take()] == sorted(applied)
    store.close()


def test_a_refused_write_changes_nothing(tmp_path):
    store = _stored(tmp_path / "c.db")
    store.create(NODES, NodeBuilder("n0").obj())
    store.storage._db.execute("PRAGMA query_only=ON")  # every write to the file now fails
    with pytest.raises(errors.ApiError) as err:
        store.create(NODES, NodeBuilder("n1").obj())
    assert (err.value.code, err.value.reason) == (500, "InternalError")
    assert "c.db" in err.value.status["message"]
    assert store.resource_version == 1
    assert [n["metadata"]["name"] for n in store.list(NODES).items] == ["n0"]
    store.storage._db.execute("PRAGMA query_only=OFF")
    assert store.create(NODES, NodeBuilder("n1").obj())["metadata"]["resourceVersion"] == "2"
    store.close()


def test_not_a_database_is_refused(tmp_path):
    data = tmp_path / "notes.txt"
    data.write_text("this is not a database, just some text that is long enough\n" * 50)
    with pytest.raises(StorageError, match=r"notes\.txt: not a kubesched data file"):
        new_store(data=data)


def test_foreign_sqlite_database_is_refused(tmp_path):
    data = tmp_path / "other.db"
    with sqlite3.connect(data) as db:
        db.execute("CREATE TABLE things (x)")
    db.close()
    with pytest.raises(StorageError, match=r"other\.db: an SQLite database but not a kubesched"):
        new_store(data=data)


def test_newer_format_is_refused(tmp_path):
    data = tmp_path / "c.db"
    new_store(data=data).close()
    with sqlite3.connect(data) as db:
        db.execute("PRAGMA user_version=99")
    db.close()
    with pytest.raises(StorageError, match=r"c\.db: kubesched data format 99"):
        new_store(data=data)


def test_a_file_in_use_is_refused(tmp_path):
    data = tmp_path / "c.db"
    store = new_store(data=data)
    with pytest.raises(StorageError, match=r"c\.db: the data file is in use"):
        new_store(data=data)
    store.close()


def test_in_memory_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with start_apiserver() as server:
        assert server.store.storage is None
        call(server, "POST", "/api/v1/nodes", NodeBuilder("n0").obj())
    assert [p.name for p in tmp_path.iterdir() if p.suffix != ".kubeconfig"] == []


def _cli(*args):
    code = "import sys; from kubesched.cli.apiserver import main; sys.exit(main(sys.argv[1:]))"
    return [sys.executable, "-c", code, *args]


def test_cli_data_flag_keeps_objects_across_restarts(tmp_path):
    data, kubeconfig = tmp_path / "c.db", tmp_path / "kc"
    names = []
    for round_ in range(2):
        proc = subprocess.Popen(
            _cli("--port", "0", "--write-kubeconfig", str(kubeconfig), "--data", str(data)),
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert "listening on" in proc.stdout.readline()
            url = json.loads(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
            body = json.dumps(NodeBuilder(f"n{round_}").obj()).encode()
            request = urllib.request.Request(
                url + "/api/v1/nodes", body, {"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=5) as response:
                assert response.status == 201
            with urllib.request.urlopen(url + "/api/v1/nodes", timeout=5) as response:
                names = [n["metadata"]["name"] for n in json.loads(response.read())["items"]]
        finally:
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=10)
        assert proc.returncode == 0, out
    assert names == ["n0", "n1"]


def test_cli_bad_data_file_is_a_clear_error(tmp_path):
    data = tmp_path / "bad.db"
    data.write_text("garbage " * 200)
    result = subprocess.run(
        _cli("--port", "0", "--write-kubeconfig", str(tmp_path / "kc"), "--data", str(data)),
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert result.returncode == 1
    assert f"{data}: not a kubesched data file" in result.stderr


def test_previous_object_older_than_the_window_is_kept_for_selectors(tmp_path):
    data = tmp_path / "c.db"
    store = _stored(data, window=2)
    store.create(NODES, NodeBuilder("n0").label("a", "1").obj())
    for i in range(1, 4):
        store.create(NODES, NodeBuilder(f"n{i}").obj())
    node = dict(store.get(NODES, None, "n0"))
    node["metadata"] = dict(node["metadata"], labels={"a": "2"})
    store.update(NODES, node)
    store.close()
    store = _stored(data, window=2)
    watcher = store.watch(NODES, resource_version="4", label_selector="a=1")
    assert [(e.type, e.object["metadata"]["name"]) for e in watcher.take()] == [("DELETED", "n0")]
    store.close()


def test_a_path_that_cannot_be_opened_is_named(tmp_path):
    with pytest.raises(StorageError, match=r"missing/c\.db: cannot open the data file"):
        new_store(data=tmp_path / "missing" / "c.db")


def test_a_killed_server_loses_no_committed_write(tmp_path):
    data, kubeconfig = tmp_path / "c.db", tmp_path / "kc"
    proc = subprocess.Popen(
        _cli("--port", "0", "--write-kubeconfig", str(kubeconfig), "--data", str(data)),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "listening on" in proc.stdout.readline()
        url = json.loads(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        body = json.dumps(NodeBuilder("n0").obj()).encode()
        request = urllib.request.Request(
            url + "/api/v1/nodes", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            node = json.loads(response.read())
    finally:
        proc.kill()
        proc.communicate(timeout=10)
    store = new_store(data=data)
    assert store.get(NODES, None, "n0") == node
    store.close()
