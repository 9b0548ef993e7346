"""OpenAPI v3 schemas: the generated data matches its generator, every group/version
document is self-contained and names each kind's schema as upstream does, and
``kubectl explain`` reads built-in kinds and custom resources from them."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from apiserver_builders import call
from crd_builders import crd
from kubectl_helpers import kubectl_runner

from kubesched.apiserver import schemas

KUBECTL = shutil.which("kubectl")
ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location(
        "gen_openapi_schemas", ROOT / "tools/gen_openapi_schemas.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_data_file_is_what_the_generator_makes_and_holds_no_prose():
    gen = _generator()
    data = (ROOT / "src/kubesched/objects/openapi_schemas.json").read_text()
    assert data == gen.render(gen.generate(gen.source_definitions()))
    assert _prose(json.loads(data)) == []
    pod = schemas.builtin()["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    containers = schemas.builtin()["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["items"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}
    assert schemas.builtin()["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {
        "type": "string",
        "format": "int-or-string",
    }


def _prose(node):
    """Every description text (a ``description`` keyword with a string value) in ``node``."""
    if isinstance(node, dict):
        found = [node["description"]] if isinstance(node.get("description"), str) else []
        found += [text for value in node.values() for text in _prose(value)]
        rules = node.get("x-kubernetes-validations")  # CEL rules and their messages
        if isinstance(rules, list) and all(isinstance(r, dict) and "rule" in r for r in rules):
            found += rules
        return found
    if isinstance(node, list):
        return [text for value in node for text in _prose(value)]
    return []


def _refs(node, found):
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            found.add(node["$ref"].removeprefix("#/components/schemas/"))
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def test_every_document_lists_its_kinds_schemas_and_what_they_reference(apiserver):
    code, root = call(apiserver, "GET", "/openapi/v3")
    assert code == 200
    expected = {
        "api/v1": ["Pod", "Node", "Namespace", "Binding", "Event", "ConfigMap", "Service"],
        "apis/apps/v1": ["ReplicaSet", "StatefulSet"],
        "apis/apiextensions.k8s.io/v1": ["CustomResourceDefinition"],
        "apis/events.k8s.io/v1": ["Event"],
    }
    for gv, kinds in expected.items():
        code, doc = call(apiserver, "GET", root["paths"][gv]["serverRelativeURL"])
        assert code == 200
        found = doc["components"]["schemas"]
        group, _, version = gv.removeprefix("api/").removeprefix("apis/").rpartition("/")
        listed = {
            (g["kind"])
            for s in found.values()
            for g in s.get("x-kubernetes-group-version-kind", [])
            if (g["group"], g["version"]) == (group, version)
        }
        assert set(kinds) <= listed, gv
        refs: set[str] = set()
        _refs(found, refs)
        assert refs <= found.keys(), f"{gv}: dangling {sorted(refs - found.keys())}"
        assert "io.k8s.apimachinery.pkg.apis.meta.v1.Status" in found
    code, doc = call(apiserver, "GET", "/openapi/v3/apis/apps/v1")
    assert "io.k8s.api.core.v1.PodTemplateSpec" in doc["components"]["schemas"]
    assert "io.k8s.api.core.v1.Node" not in doc["components"]["schemas"]


@pytest.fixture(scope="module")
def kubectl(apiserver, tmp_path_factory):
    run = kubectl_runner(apiserver.kubeconfig_path, tmp_path_factory.mktemp("kubectl-cache"))
    return lambda *args: run(*args).stdout


def test_kubectl_explain_reads_builtin_kinds(kubectl):
    out = kubectl("explain", "pods.spec.containers")
    assert "FIELD: containers <[]Container>" in out
    assert "name\t<string> -required-" in out
    assert "image\t<string>" in out
    assert "resources\t<ResourceRequirements>" in out
    out = kubectl("explain", "nodes")
    assert "KIND:       Node" in out
    assert "spec\t<NodeSpec>" in out and "metadata\t<ObjectMeta>" in out
    out = kubectl("explain", "replicasets.spec.template.spec.tolerations")
    assert "GROUP:      apps" in out
    assert "tolerationSeconds\t<integer>" in out


def test_kubectl_explain_reads_a_custom_resource_and_follows_its_crd(apiserver, kubectl):
    code, _ = call(
        apiserver,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd(group="explain.example.com"),
    )
    assert code == 201
    code, root = call(apiserver, "GET", "/openapi/v3")
    url = root["paths"]["apis/explain.example.com/v1"]["serverRelativeURL"]
    code, doc = call(apiserver, "GET", url)
    crontab = doc["components"]["schemas"]["com.example.explain.v1.CronTab"]
    assert crontab["x-kubernetes-group-version-kind"] == [
        {"group": "explain.example.com", "version": "v1", "kind": "CronTab"}
    ]
    out = kubectl("explain", "crontabs.spec")
    assert "cronSpec\t<string> -required-" in out
    assert "hosts\t<[]Object>" in out and "replicas\t<integer>" in out
    out = kubectl("explain", "crontabs")
    assert "metadata\t<ObjectMeta>" in out
    # A new schema is a new URL: kubectl's cache (by URL) cannot serve the old one.
    changed = crd(group="explain.example.com")
    changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "added"
    ] = {"type": "boolean"}
    code, current = call(
        apiserver,
        "GET",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.explain.example.com",
    )
    changed["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    code, _ = call(
        apiserver,
        "PUT",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.explain.example.com",
        changed,
    )
    assert code == 200
    code, root = call(apiserver, "GET", "/openapi/v3")
    assert root["paths"]["apis/explain.example.com/v1"]["serverRelativeURL"] != url
    assert "added\t<boolean>" in kubectl("explain", "crontabs.spec")
    assert _prose(doc["components"]) == []
