"""CRDs with ``--data FILE``: after a restart the CRDs and their custom resources are
there with their resourceVersions, their routes are served again, a watch resumes from
before the restart, and a CRD deleted before the restart leaves nothing behind."""

from __future__ import annotations

import json
import urllib.request

from apiserver_builders import call
from crd_builders import crd, crontab

from kubesched.apiserver.runner import start_apiserver

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
TABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"


def _watch(server, path):
    with urllib.request.urlopen(server.url + path, timeout=10) as response:
        return [json.loads(line) for line in response.read().splitlines() if line.strip()]


def test_crds_and_custom_resources_survive_a_restart(tmp_path):
    data = tmp_path / "cluster.db"
    with start_apiserver(data=data) as server:
        assert call(server, "POST", CRDS, crd())[0] == 201
        assert call(server, "POST", CRDS, crd("gonetabs", "GoneTab", short_names=()))[0] == 201
        gone_tab = dict(crontab("g"), kind="GoneTab")
        assert call(server, "POST", TABS.replace("crontabs", "gonetabs"), gone_tab)[0] == 201
        code, first = call(server, "POST", TABS, crontab("a"))
        assert code == 201
        code, patched = call(server, "PATCH", f"{TABS}/a/status", {"status": {"phase": "Up"}},
                             "application/merge-patch+json")  # fmt: skip
        assert code == 200
        assert call(server, "POST", TABS, crontab("b"))[0] == 201
        assert call(server, "DELETE", f"{CRDS}/gonetabs.stable.example.com")[0] == 200
        _, before = call(server, "GET", TABS)
        _, crd_before = call(server, "GET", f"{CRDS}/crontabs.stable.example.com")
    with start_apiserver(data=data) as server:
        code, after = call(server, "GET", TABS)
        assert code == 200
        assert after["items"] == before["items"]
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        _, crd_after = call(server, "GET", f"{CRDS}/crontabs.stable.example.com")
        assert crd_after == crd_before
        code, listing = call(server, "GET", "/apis/stable.example.com/v1")
        assert sorted(r["name"] for r in listing["resources"]) == ["crontabs", "crontabs/status"]
        assert call(server, "GET", TABS.replace("crontabs", "gonetabs"))[0] == 404
        rv = first["metadata"]["resourceVersion"]
        events = _watch(server, f"{TABS}?watch=1&resourceVersion={rv}&timeoutSeconds=1")
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
            ("MODIFIED", "a"),
            ("ADDED", "b"),
        ]
        assert (
            events[0]["object"]["metadata"]["resourceVersion"]
            == patched["metadata"]["resourceVersion"]
        )
        code, made = call(server, "POST", TABS, crontab("c"))
        assert code == 201
        assert int(made["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
        # The gone CRD can be created again, empty, under the same name.
        assert call(server, "POST", CRDS, crd("gonetabs", "GoneTab", short_names=()))[0] == 201
        _, empty = call(server, "GET", TABS.replace("crontabs", "gonetabs"))
        assert empty["items"] == []
