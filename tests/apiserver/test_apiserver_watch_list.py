"""Streaming lists (KEP-3157, the WatchList feature, on in 1.34): a watch with
``sendInitialEvents=true&resourceVersionMatch=NotOlderThan`` streams the current state as
ADDED events, then one BOOKMARK annotated ``k8s.io/initial-events-end``, then the changes
after it; a legacy watch from "" or "0" is defaulted to that; ``sendInitialEvents=false``
streams only changes. client-go's reflector relies on the bookmark to know its store is
in sync."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest
from apiserver_builders import PodBuilder

from kubesched.apiserver.runner import start_apiserver

END = "k8s.io/initial-events-end"
STREAM = "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"


@pytest.fixture()
def server(tmp_path):
    with start_apiserver(kubeconfig_path=tmp_path / "kubeconfig") as handle:
        yield handle


def post(server, path, body):
    request = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def get(server, path):
    with urllib.request.urlopen(server.url + path, timeout=10) as response:
        return json.loads(response.read())


def watch(server, query, during=None):
    """The events of a one-second watch on the default namespace's pods; ``during`` runs
    once the stream is open."""
    path = f"/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1&{query}"
    with urllib.request.urlopen(server.url + path, timeout=10) as response:
        if during is not None:
            threading.Thread(target=during).start()
        return [json.loads(line) for line in response.read().splitlines() if line.strip()]


def summary(events):
    out = []
    for e in events:
        meta = e["object"]["metadata"]
        if e["type"] == "BOOKMARK":
            end = meta.get("annotations", {}).get(END)
            out.append(("BOOKMARK", "end" if end == "true" else "progress"))
        else:
            out.append((e["type"], meta["name"]))
    return out


def test_initial_events_then_the_end_bookmark_then_changes(server):
    for name in ("a", "b"):
        post(server, "/api/v1/namespaces/default/pods", PodBuilder(name).obj())
    version = int(get(server, "/api/v1/pods")["metadata"]["resourceVersion"])

    def change():
        time.sleep(0.2)
        post(server, "/api/v1/namespaces/default/pods", PodBuilder("c").obj())

    events = watch(server, STREAM, during=change)
    assert summary(events)[:4] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
        ("BOOKMARK", "end"),
        ("ADDED", "c"),
    ]
    end = events[2]["object"]
    assert end["kind"] == "Pod" and end["apiVersion"] == "v1"
    assert int(end["metadata"]["resourceVersion"]) == version


def test_the_end_bookmark_comes_at_once_when_there_is_no_state(server):
    assert summary(watch(server, STREAM))[:1] == [("BOOKMARK", "end")]


def test_a_legacy_watch_from_zero_is_defaulted_to_a_streaming_list(server):
    post(server, "/api/v1/namespaces/default/pods", PodBuilder("a").obj())
    with_bookmarks = summary(watch(server, "resourceVersion=0&allowWatchBookmarks=true"))
    assert with_bookmarks[:2] == [("ADDED", "a"), ("BOOKMARK", "end")]
    # Without bookmarks allowed, the state is streamed with no bookmark after it.
    assert summary(watch(server, "resourceVersion=")) == [("ADDED", "a")]


def test_a_watch_from_a_version_is_not_defaulted(server):
    post(server, "/api/v1/namespaces/default/pods", PodBuilder("a").obj())
    version = get(server, "/api/v1/pods")["metadata"]["resourceVersion"]
    post(server, "/api/v1/namespaces/default/pods", PodBuilder("b").obj())
    events = summary(watch(server, f"resourceVersion={version}&allowWatchBookmarks=true"))
    assert events[0] == ("ADDED", "b")
    assert ("BOOKMARK", "end") not in events


def test_send_initial_events_false_streams_only_changes(server):
    post(server, "/api/v1/namespaces/default/pods", PodBuilder("a").obj())

    def change():
        time.sleep(0.2)
        post(server, "/api/v1/namespaces/default/pods", PodBuilder("b").obj())

    query = "sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    events = summary(watch(server, query, during=change))
    assert events[0] == ("ADDED", "b")
    assert ("BOOKMARK", "end") not in events


def test_the_state_streamed_is_at_least_as_new_as_the_version_asked(server):
    post(server, "/api/v1/namespaces/default/pods", PodBuilder("a").obj())
    version = int(get(server, "/api/v1/pods")["metadata"]["resourceVersion"])
    post(server, "/api/v1/namespaces/default/pods", PodBuilder("b").obj())
    events = watch(server, f"{STREAM}&resourceVersion={version}")
    assert summary(events)[:3] == [("ADDED", "a"), ("ADDED", "b"), ("BOOKMARK", "end")]
    assert int(events[2]["object"]["metadata"]["resourceVersion"]) > version
