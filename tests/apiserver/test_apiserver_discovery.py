"""Aggregated discovery (apidiscovery.k8s.io/v2) over raw HTTP and with kubectl: the
Accept negotiation, the document, ETag and 304, custom resources coming and going, and
kubectl learning the whole API in two requests."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest
from crd_builders import GROUP, crd

KUBECTL = shutil.which("kubectl")
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
#: What kubectl 1.32 sends for /api and /apis.
KUBECTL_ACCEPT = (
    f"{AGGREGATED},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)


def _get(url, accept="", etag="", method="GET", body=None):
    headers = {"Accept": accept} if accept else {}
    if etag:
        headers["If-None-Match"] = etag
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _resources(doc, group):
    """{version: {resource: entry}} of one group of an APIGroupDiscoveryList."""
    for item in doc["items"]:
        if item["metadata"].get("name", "") == group:
            return {
                v["version"]: {r["resource"]: r for r in v["resources"]} for v in item["versions"]
            }
    return None


def test_kubectls_accept_header_gets_the_aggregated_apis_document(apiserver):
    status, headers, raw = _get(f"{apiserver.url}/apis", KUBECTL_ACCEPT)
    assert status == 200
    assert headers["Content-Type"] == AGGREGATED
    assert headers["Vary"] == "Accept"
    doc = json.loads(raw)
    assert (doc["kind"], doc["apiVersion"]) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2")
    names = [item["metadata"]["name"] for item in doc["items"]]
    assert "apps" in names and "" not in names
    apps = _resources(doc, "apps")
    rs = apps["v1"]["replicasets"]
    assert rs["responseKind"] == {"group": "apps", "version": "v1", "kind": "ReplicaSet"}
    assert (rs["scope"], rs["singularResource"], rs["shortNames"]) == (
        "Namespaced",
        "replicaset",
        ["rs"],
    )
    assert rs["categories"] == ["all"]
    assert "watch" in rs["verbs"] and "deletecollection" in rs["verbs"]
    subresources = {s["subresource"]: s for s in rs["subresources"]}
    assert subresources["status"]["responseKind"]["kind"] == "ReplicaSet"
    assert subresources["scale"] == {
        "subresource": "scale",
        "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
        "verbs": ["get", "patch", "update"],
    }
    versions = next(item for item in doc["items"] if item["metadata"]["name"] == "apps")
    assert versions["versions"][0]["freshness"] == "Current"
    policy = _resources(doc, "policy")["v1"]["poddisruptionbudgets"]
    assert policy["scope"] == "Namespaced"
    crds = _resources(doc, "apiextensions.k8s.io")["v1"]["customresourcedefinitions"]
    assert crds["scope"] == "Cluster" and crds["categories"] == ["api-extensions"]


def test_groups_are_in_the_aggregators_priority_order(apiserver):
    definition = crd(plural="sprockets", kind="Sprocket", group="aaa.example.io", short_names=())
    created = urllib.request.Request(
        f"{apiserver.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        data=json.dumps(definition).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(created, timeout=10) as response:
        assert response.status == 201
    aggregated = json.loads(_get(f"{apiserver.url}/apis", AGGREGATED)[2])
    legacy = json.loads(_get(f"{apiserver.url}/apis")[2])
    want = [
        "apps",
        "events.k8s.io",
        "policy",
        "apiextensions.k8s.io",
        "scheduling.k8s.io",
        "coordination.k8s.io",
        "aaa.example.io",  # a CRD's group: priority 1000, after every built-in
    ]
    aggregated_names = [item["metadata"]["name"] for item in aggregated["items"]]
    legacy_names = [group["name"] for group in legacy["groups"]]
    assert aggregated_names == legacy_names
    assert [name for name in legacy_names if name in want] == want
    assert legacy_names[-1] == "aaa.example.io"
    gone = urllib.request.Request(
        f"{apiserver.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
        "sprockets.aaa.example.io",
        method="DELETE",
    )
    with urllib.request.urlopen(gone, timeout=10) as response:
        assert response.status == 200


def test_the_core_group_is_served_at_api(apiserver):
    status, headers, raw = _get(f"{apiserver.url}/api", AGGREGATED)
    assert status == 200 and headers["Content-Type"] == AGGREGATED
    doc = json.loads(raw)
    assert len(doc["items"]) == 1
    assert doc["items"][0]["metadata"] == {"creationTimestamp": None}
    core = _resources(doc, "")["v1"]
    pods = core["pods"]
    assert pods["responseKind"] == {"group": "", "version": "v1", "kind": "Pod"}
    subs = {s["subresource"]: s for s in pods["subresources"]}
    assert subs["eviction"]["responseKind"] == {
        "group": "policy",
        "version": "v1",
        "kind": "Eviction",
    }
    assert subs["binding"]["verbs"] == ["create"]
    assert core["nodes"]["scope"] == "Cluster"
    assert core["bindings"]["verbs"] == ["create"]
    rc_subs = [s["subresource"] for s in core["replicationcontrollers"]["subresources"]]
    assert rc_subs == ["status", "scale"]


@pytest.mark.parametrize(
    "accept",
    [
        "",
        "application/json",
        # kube-apiserver 1.34 no longer serves v2beta1.
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
        # Plain JSON first: the legacy document.
        f"application/json,{AGGREGATED}",
        # A conversion discovery does not make, then JSON.
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        # Only a media type this server does not answer in.
        "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    ],
)
def test_anything_else_gets_the_legacy_documents(apiserver, accept):
    status, headers, raw = _get(f"{apiserver.url}/apis", accept)
    assert status == 200
    assert headers["Content-Type"].startswith("application/json")
    assert json.loads(raw)["kind"] == "APIGroupList"
    assert json.loads(_get(f"{apiserver.url}/api", accept)[2])["kind"] == "APIVersions"


@pytest.mark.parametrize(
    "accept",
    [
        # q orders the clauses before their order in the header does.
        f"application/json;q=0.9,{AGGREGATED}",
        "application/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;q=0.5",
        "*/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        # Media types this server does not produce are passed over.
        f"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
        f"{AGGREGATED},application/json",
    ],
)
def test_the_negotiation_follows_q_and_wildcards(apiserver, accept):
    status, headers, _ = _get(f"{apiserver.url}/apis", accept)
    assert status == 200 and headers["Content-Type"] == AGGREGATED


def test_an_unchanged_document_is_not_modified_and_a_crd_changes_it(apiserver):
    url = f"{apiserver.url}/apis"
    status, headers, raw = _get(url, AGGREGATED)
    etag = headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) == 130
    assert headers["Cache-Control"] == "public"
    again = _get(url, AGGREGATED, etag)
    assert (again[0], again[2]) == (304, b"")
    assert again[1]["ETag"] == etag
    assert _get(url, AGGREGATED, '"stale"')[0] == 200
    # The legacy document has no ETag: If-None-Match is not for it.
    legacy = _get(url, "application/json", etag)
    assert legacy[0] == 200 and "ETag" not in legacy[1]

    definition = crd(plural="widgets", kind="Widget", short_names=("wd",))
    definition["spec"]["versions"][0]["subresources"]["scale"] = {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.count",
    }
    body = json.dumps(definition).encode()
    created = urllib.request.Request(
        f"{apiserver.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(created, timeout=10) as response:
        assert response.status == 201
    status, headers, raw = _get(url, AGGREGATED, etag)
    assert status == 200 and headers["ETag"] != etag
    widgets = _resources(json.loads(raw), GROUP)["v1"]["widgets"]
    assert widgets["responseKind"] == {"group": GROUP, "version": "v1", "kind": "Widget"}
    assert widgets["shortNames"] == ["wd"]
    assert [s["subresource"] for s in widgets["subresources"]] == ["status", "scale"]
    assert widgets["subresources"][1]["responseKind"]["kind"] == "Scale"

    gone = urllib.request.Request(
        f"{apiserver.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{GROUP}",
        method="DELETE",
    )
    with urllib.request.urlopen(gone, timeout=10) as response:
        assert response.status == 200
    status, headers, raw = _get(url, AGGREGATED)
    assert _resources(json.loads(raw), GROUP) is None
    assert headers["ETag"] == etag  # back to the document before the CRD


def test_other_verbs_on_discovery_are_refused_with_a_status(apiserver):
    status, _, raw = _get(f"{apiserver.url}/apis", AGGREGATED, method="POST", body=b"{}")
    body = json.loads(raw)
    assert status == 405 and body["kind"] == "Status" and body["reason"] == "MethodNotAllowed"


WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.disco.example.io
spec:
  group: disco.example.io
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget, shortNames: [gd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"""

GADGET = """\
apiVersion: disco.example.io/v1
kind: Gadget
metadata: {name: g1}
spec: {size: 3}
"""


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH: install kubectl >= 1.27")
def test_kubectl_discovers_in_two_requests_and_finds_a_new_crd(apiserver, tmp_path):
    def kubectl(*args, stdin=None):
        result = subprocess.run(
            [
                KUBECTL,
                "--kubeconfig",
                str(apiserver.kubeconfig_path),
                "--cache-dir",
                str(tmp_path / "cache"),
                *args,
            ],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 0, result.stderr
        return result

    listed = kubectl("api-resources", "-v=6")
    discovery_gets = [
        line
        for line in listed.stderr.splitlines()
        if "GET" in line and ("/api?" in line or "/apis?" in line or "/apis/" in line)
    ]
    assert len(discovery_gets) == 2, discovery_gets
    assert "replicasets" in listed.stdout and "poddisruptionbudgets" in listed.stdout

    # The cached discovery does not know gadgets: kubectl finds them once the CRD is in.
    kubectl("apply", "-f", "-", stdin=WIDGET_CRD)
    kubectl("apply", "-f", "-", stdin=GADGET)
    got = kubectl("get", "gd", "g1", "-o", "json")
    assert json.loads(got.stdout)["spec"] == {"size": 3}
    assert "gadgets" in kubectl("api-resources", "--api-group=disco.example.io").stdout
    kubectl("delete", "crd", "gadgets.disco.example.io")


def test_discovery_lists_eviction_as_kube_apiserver_does(apiserver):
    import json
    import urllib.request

    with urllib.request.urlopen(f"{apiserver.url}/api/v1") as response:
        resources = json.load(response)["resources"]
    (eviction,) = [r for r in resources if r["name"] == "pods/eviction"]
    assert (eviction["kind"], eviction["group"], eviction["version"], eviction["verbs"]) == (
        "Eviction",
        "policy",
        "v1",
        ["create"],
    )
