"""CustomResourceDefinitions and custom resources, through the official ``kubernetes``
client (ApiextensionsV1Api, CustomObjectsApi) and raw HTTP: the CRD's defaults, status and
validation; custom resources with the built-ins' REST semantics; discovery as CRDs come
and go; and the cascade when a CRD is deleted."""

from __future__ import annotations

import json
import threading
import time

import pytest
from apiserver_builders import call
from crd_builders import CRONTAB_SCHEMA, crd, crontab
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from kubesched.apiserver import errors, rest
from kubesched.apiserver.resources import CUSTOMRESOURCEDEFINITIONS
from kubesched.apiserver.runner import new_store


@pytest.fixture(scope="module")
def api(apiserver):
    api_client = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    yield api_client
    api_client.close()


@pytest.fixture(scope="module")
def ext(api):
    return client.ApiextensionsV1Api(api)


@pytest.fixture(scope="module")
def objects(api):
    return client.CustomObjectsApi(api)


def _error(exc_info):
    return exc_info.value.status, json.loads(exc_info.value.body)


def _causes(body):
    return sorted((c["field"], c["message"]) for c in body["details"]["causes"])


def test_a_created_crd_is_defaulted_named_established_and_served(apiserver, ext, objects):
    created = ext.create_custom_resource_definition(crd(group="a.example.com"))
    # As upstream: the create answers before the controllers ran; storedVersions is set.
    assert created.status.stored_versions == ["v1"]
    assert created.spec.names.singular == "crontab"
    assert created.spec.names.list_kind == "CronTabList"
    assert created.spec.conversion.strategy == "None"
    got = ext.read_custom_resource_definition("crontabs.a.example.com")
    conditions = {c.type: (c.status, c.reason) for c in got.status.conditions}
    assert conditions == {
        "NamesAccepted": ("True", "NoConflicts"),
        "Established": ("True", "InitialNamesAccepted"),
    }
    accepted = got.status.accepted_names
    assert (accepted.plural, accepted.kind, accepted.list_kind, accepted.short_names) == (
        "crontabs",
        "CronTab",
        "CronTabList",
        ["ct"],
    )
    made = objects.create_namespaced_custom_object(
        "a.example.com", "v1", "default", "crontabs", crontab("one", api_version="a.example.com/v1")
    )
    assert made["metadata"]["generation"] == 1
    assert made["apiVersion"] == "a.example.com/v1"
    listed = objects.list_cluster_custom_object("a.example.com", "v1", "crontabs")
    assert listed["kind"] == "CronTabList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["one"]


BAD_CRDS = [
    (
        lambda c: c["metadata"].update(name="wrong.a.example.com"),
        [
            (
                "metadata.name",
                'Invalid value: "wrong.a.example.com": must be spec.names.plural+"."+spec.group',
            )
        ],
    ),
    (
        lambda c: c["spec"].update(scope="Global"),
        [("spec.scope", 'Unsupported value: "Global": supported values: "Cluster", "Namespaced"')],
    ),
    (
        lambda c: c["spec"]["versions"][0].update(storage=False),
        [
            (
                "spec.versions",
                'Invalid value: ["v1"]: must have exactly one version marked as storage version',
            )
        ],
    ),
    (
        lambda c: c["spec"]["versions"][0].pop("schema"),
        [("spec.versions[0].schema.openAPIV3Schema", "Required value: schemas are required")],
    ),
    (
        lambda c: c["spec"]["names"].update(plural="Cron_Tabs"),
        [
            (
                "metadata.name",
                'Invalid value: "crontabs.b.example.com": must be spec.names.plural+"."+spec.group',
            ),
            (
                "spec.names.plural",
                "Invalid value: \"Cron_Tabs\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            ),
        ],
    ),
    (
        lambda c: c["spec"]["names"].update(listKind="CronTab"),
        [
            (
                "spec.names.listKind",
                'Invalid value: "CronTab": kind and listKind may not be the same',
            )
        ],
    ),
    (
        lambda c: c["spec"]["names"].pop("kind"),
        # Nothing to default singular and listKind from: they are missing too.
        [
            ("spec.names.kind", "Required value"),
            ("spec.names.listKind", "Required value"),
            ("spec.names.singular", "Required value"),
        ],
    ),
    (
        lambda c: c["spec"].update(versions=[]),
        [
            (
                "spec.versions",
                "Invalid value: []: must have exactly one version marked as storage version",
            ),
            ("spec.versions", "Required value: must have at least one version"),
        ],
    ),
    (
        lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "properties"
        ]["image"].pop("type"),
        [
            (
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[image].type",
                "Required value: must not be empty for specified object fields",
            )
        ],
    ),
    (
        lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"].update(type="string"),
        [
            (
                "spec.versions[0].schema.openAPIV3Schema.type",
                'Invalid value: "string": must be object at the root',
            )
        ],
    ),
    (
        lambda c: c["spec"]["versions"][0]["additionalPrinterColumns"][0].update(type="text"),
        [
            (
                "spec.versions[0].additionalPrinterColumns[0].type",
                'Invalid value: "text": must be one of boolean,date,integer,number,string',
            )
        ],
    ),
]


@pytest.mark.parametrize(("mutate", "causes"), BAD_CRDS)
def test_an_invalid_crd_is_refused_with_its_causes_and_not_stored(apiserver, ext, mutate, causes):
    body = crd(group="b.example.com")
    mutate(body)
    name = body["metadata"]["name"]
    # Raw HTTP: the client would refuse some of these bodies itself.
    code, status = call(
        apiserver, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body
    )
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"].startswith(
        f'CustomResourceDefinition.apiextensions.k8s.io "{name}" is invalid: '
    )
    assert _causes(status) == sorted(causes)
    assert ext.list_custom_resource_definition(field_selector=f"metadata.name={name}").items == []


def test_a_name_taken_in_the_group_is_not_accepted_and_not_served(apiserver, ext):
    ext.create_custom_resource_definition(
        crd("widgets", "Widget", "c.example.com", short_names=("w",))
    )
    clash = crd("gadgets", "Widget", "c.example.com", short_names=())
    ext.create_custom_resource_definition(clash)
    got = ext.read_custom_resource_definition("gadgets.c.example.com")
    conditions = {c.type: (c.status, c.reason, c.message) for c in got.status.conditions}
    # As upstream's naming controller: each name is checked in turn and the last clash
    # (the list kind, WidgetList) is the one the condition tells.
    assert conditions["NamesAccepted"] == (
        "False",
        "ListKindConflict",
        '"WidgetList" is already in use',
    )
    assert conditions["Established"] == ("False", "NotAccepted", "not all names are accepted")
    assert got.status.accepted_names.plural == "gadgets" and got.status.accepted_names.kind == ""
    code, _ = call(apiserver, "GET", "/apis/c.example.com/v1/gadgets")
    assert code == 404
    code, body = call(apiserver, "GET", "/apis/c.example.com/v1")
    assert [r["name"] for r in body["resources"]] == ["widgets", "widgets/status"]
    # When the CRD holding the names goes, the refused one gets them and is served.
    ext.delete_custom_resource_definition("widgets.c.example.com")
    got = ext.read_custom_resource_definition("gadgets.c.example.com")
    conditions = {c.type: (c.status, c.reason) for c in got.status.conditions}
    assert conditions == {
        "NamesAccepted": ("True", "NoConflicts"),
        "Established": ("True", "InitialNamesAccepted"),
    }
    code, body = call(apiserver, "GET", "/apis/c.example.com/v1")
    assert [r["name"] for r in body["resources"]] == ["gadgets", "gadgets/status"]
    assert call(apiserver, "GET", "/apis/c.example.com/v1/gadgets")[0] == 200


def test_custom_resources_have_the_builtins_rest_semantics(apiserver, ext, objects):
    ext.create_custom_resource_definition(crd(group="d.example.com"))
    args = ("d.example.com", "v1", "default", "crontabs")
    for name, tier in (("a", "web"), ("b", "db"), ("c", "web")):
        body = crontab(name, api_version="d.example.com/v1")
        body["metadata"]["labels"] = {"tier": tier}
        objects.create_namespaced_custom_object(*args, body)
    by_label = objects.list_namespaced_custom_object(*args, label_selector="tier=web")
    assert [i["metadata"]["name"] for i in by_label["items"]] == ["a", "c"]
    by_field = objects.list_namespaced_custom_object(*args, field_selector="metadata.name=b")
    assert [i["metadata"]["name"] for i in by_field["items"]] == ["b"]
    page = objects.list_namespaced_custom_object(*args, limit=2)
    rest = objects.list_namespaced_custom_object(
        *args, limit=2, _continue=page["metadata"]["continue"]
    )
    assert [i["metadata"]["name"] for i in page["items"] + rest["items"]] == ["a", "b", "c"]
    # generateName, and AlreadyExists.
    gen = crontab("", api_version="d.example.com/v1")
    gen["metadata"] = {"generateName": "job-"}
    made = objects.create_namespaced_custom_object(*args, gen)
    assert made["metadata"]["name"].startswith("job-") and len(made["metadata"]["name"]) == 9
    with pytest.raises(ApiException) as raised:
        objects.create_namespaced_custom_object(*args, crontab("a", api_version="d.example.com/v1"))
    assert _error(raised)[1]["message"] == 'crontabs.d.example.com "a" already exists'
    # Optimistic concurrency on update.
    current = objects.get_namespaced_custom_object(*args, "a")
    stale = json.loads(json.dumps(current))
    current["spec"]["image"] = "nginx"
    updated = objects.replace_namespaced_custom_object(*args, "a", current)
    assert updated["metadata"]["generation"] == 2
    stale["spec"]["image"] = "redis"
    with pytest.raises(ApiException) as raised:
        objects.replace_namespaced_custom_object(*args, "a", stale)
    assert raised.value.status == 409
    # Merge patch and JSON patch; a strategic merge patch is refused as upstream does.
    code, body = call(apiserver, "PATCH", "/apis/d.example.com/v1/namespaces/default/crontabs/a",
                      {"spec": {"replicas": 3}}, "application/merge-patch+json")  # fmt: skip
    assert (code, body["spec"]["replicas"], body["spec"]["image"]) == (200, 3, "nginx")
    code, body = call(apiserver, "PATCH", "/apis/d.example.com/v1/namespaces/default/crontabs/a",
                      [{"op": "replace", "path": "/spec/replicas", "value": 4}],
                      "application/json-patch+json")  # fmt: skip
    assert (code, body["spec"]["replicas"]) == (200, 4)
    code, body = call(apiserver, "PATCH", "/apis/d.example.com/v1/namespaces/default/crontabs/a",
                      {"spec": {"replicas": 5}}, "application/strategic-merge-patch+json")  # fmt: skip
    assert (code, body["reason"]) == (415, "UnsupportedMediaType")
    assert body["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json"
    )
    # A namespace that does not exist, a wrong kind, a wrong apiVersion.
    with pytest.raises(ApiException) as raised:
        objects.create_namespaced_custom_object(
            "d.example.com",
            "v1",
            "nowhere",
            "crontabs",
            crontab("x", api_version="d.example.com/v1"),
        )
    assert (
        _error(raised)[0] == 404
        and _error(raised)[1]["message"] == 'namespaces "nowhere" not found'
    )
    wrong = crontab("x", api_version="d.example.com/v2")
    code, body = call(
        apiserver, "POST", "/apis/d.example.com/v1/namespaces/default/crontabs", wrong
    )
    assert (
        code == 400
        and "does not match the expected API version (d.example.com/v1)" in body["message"]
    )
    # Delete one, then the collection by label.
    gone = objects.delete_namespaced_custom_object(*args, "b")
    assert gone["status"] == "Success" and gone["details"]["name"] == "b"
    objects.delete_collection_namespaced_custom_object(*args, label_selector="tier=web")
    left = objects.list_namespaced_custom_object(*args)
    assert [i["metadata"]["name"] for i in left["items"]] == [made["metadata"]["name"]]


def test_status_is_a_subresource_only_when_declared(apiserver, ext, objects):
    ext.create_custom_resource_definition(crd(group="e.example.com"))
    ext.create_custom_resource_definition(
        crd("plaintabs", "PlainTab", "e.example.com", status=False, short_names=())
    )
    args = ("e.example.com", "v1", "default", "crontabs")
    body = crontab("s", api_version="e.example.com/v1")
    body["status"] = {"phase": "Ignored"}
    made = objects.create_namespaced_custom_object(*args, body)
    assert "status" not in made  # the main resource does not write status
    with_status = objects.patch_namespaced_custom_object_status(
        *args, "s", {"status": {"phase": "Running"}}
    )
    assert with_status["status"] == {"phase": "Running"}
    assert with_status["metadata"]["generation"] == 1
    spec_change = objects.patch_namespaced_custom_object(
        *args, "s", {"spec": {"replicas": 2}, "status": {"phase": "X"}}
    )
    assert spec_change["metadata"]["generation"] == 2 and spec_change["status"] == {
        "phase": "Running"
    }
    label_only = objects.patch_namespaced_custom_object(
        *args, "s", {"metadata": {"labels": {"a": "b"}}}
    )
    assert label_only["metadata"]["generation"] == 2
    # Without a status subresource, status is written with the rest and bumps generation.
    plain = ("e.example.com", "v1", "default", "plaintabs")
    body = crontab("p", api_version="e.example.com/v1")
    body["kind"], body["status"] = "PlainTab", {"phase": "Kept"}
    made = objects.create_namespaced_custom_object(*plain, body)
    assert made["status"] == {"phase": "Kept"}
    changed = objects.patch_namespaced_custom_object(*plain, "p", {"status": {"phase": "New"}})
    assert changed["metadata"]["generation"] == 2
    code, _ = call(apiserver, "GET", "/apis/e.example.com/v1/namespaces/default/plaintabs/p/status")
    assert code == 404


def test_custom_resources_are_pruned_defaulted_and_validated(ext, objects):
    ext.create_custom_resource_definition(crd(group="f.example.com"))
    args = ("f.example.com", "v1", "default", "crontabs")
    body = crontab("ok", api_version="f.example.com/v1", port="http", note=None,
                   extra={"free": {"form": 1}}, labels={"a": "b"},
                   hosts=[{"name": "h", "weight": 0.5, "junk": True}], unknown="dropped")  # fmt: skip
    body["topLevel"] = "dropped"
    made = objects.create_namespaced_custom_object(*args, body)
    assert "topLevel" not in made
    assert made["spec"] == {
        "cronSpec": "* *",
        "port": "http",
        "note": None,
        "extra": {"free": {"form": 1}},
        "labels": {"a": "b"},
        "hosts": [{"name": "h", "weight": 0.5}],
        "replicas": 1,
        "policy": "Allow",
    }
    bad = crontab("bad", cron="nope", api_version="f.example.com/v1", image="x", replicas=0,
                  policy="Maybe", port=True, labels={"a": 1}, hosts=[{"name": 3}])  # fmt: skip
    bad["spec"].pop("cronSpec")
    with pytest.raises(ApiException) as raised:
        objects.create_namespaced_custom_object(*args, bad)
    code, status = _error(raised)
    assert code == 422
    assert _causes(status) == sorted([
        ("spec.cronSpec", "Required value"),
        ("spec.image", 'Invalid value: "x": spec.image in body should be at least 2 chars long'),
        ("spec.replicas", "Invalid value: 0: spec.replicas in body should be greater than or equal to 1"),
        ("spec.policy", 'Unsupported value: "Maybe": supported values: "Allow", "Forbid"'),
        ("spec.port", 'Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'),
        ("spec.labels.a", 'Invalid value: "integer": spec.labels.a in body must be of type string: "integer"'),
        ("spec.hosts[0].name", 'Invalid value: "integer": spec.hosts[0].name in body must be of type string: "integer"'),
    ])  # fmt: skip
    assert status["message"].startswith('CronTab.f.example.com "bad" is invalid: [')
    with pytest.raises(ApiException) as raised:
        objects.create_namespaced_custom_object(
            *args, crontab("long", api_version="f.example.com/v1", image="x" * 21, cronSpec2=1)
        )
    assert _causes(_error(raised)[1]) == [("spec.image", "Too long: may not be more than 20 bytes")]
    with pytest.raises(ApiException) as raised:
        objects.patch_namespaced_custom_object(*args, "ok", {"spec": {"replicas": 11}})
    assert _causes(_error(raised)[1]) == [
        (
            "spec.replicas",
            "Invalid value: 11: spec.replicas in body should be less than or equal to 10",
        )
    ]
    with pytest.raises(ApiException):
        objects.get_namespaced_custom_object(*args, "bad")
    assert objects.get_namespaced_custom_object(*args, "ok")["spec"]["replicas"] == 1


def test_a_watch_from_a_resource_version_sees_every_later_change(ext, objects):
    ext.create_custom_resource_definition(crd(group="g.example.com"))
    args = ("g.example.com", "v1", "default", "crontabs")
    first = objects.create_namespaced_custom_object(
        *args, crontab("w1", api_version="g.example.com/v1")
    )
    objects.patch_namespaced_custom_object(*args, "w1", {"spec": {"replicas": 2}})
    objects.create_namespaced_custom_object(*args, crontab("w2", api_version="g.example.com/v1"))
    objects.delete_namespaced_custom_object(*args, "w1")
    seen = []
    w = watch.Watch()
    for event in w.stream(
        objects.list_namespaced_custom_object,
        *args,
        resource_version=first["metadata"]["resourceVersion"],
        timeout_seconds=5,
    ):
        seen.append(
            (event["type"], event["object"]["metadata"]["name"], event["object"]["apiVersion"])
        )
        if len(seen) == 3:
            w.stop()
    assert seen == [
        ("MODIFIED", "w1", "g.example.com/v1"),
        ("ADDED", "w2", "g.example.com/v1"),
        ("DELETED", "w1", "g.example.com/v1"),
    ]


def test_discovery_follows_crds_and_deletion_cascades(apiserver, ext, objects):
    code, body = call(apiserver, "GET", "/apis")
    assert "h.example.com" not in [g["name"] for g in body["groups"]]
    ext.create_custom_resource_definition(crd(group="h.example.com"))
    cluster = crd("clustertabs", "ClusterTab", "h.example.com", scope="Cluster", short_names=())
    ext.create_custom_resource_definition(cluster)
    code, body = call(apiserver, "GET", "/apis")
    group = next(g for g in body["groups"] if g["name"] == "h.example.com")
    assert group["preferredVersion"] == {"groupVersion": "h.example.com/v1", "version": "v1"}
    code, body = call(apiserver, "GET", "/apis/h.example.com")
    assert (code, body["kind"]) == (200, "APIGroup")
    code, body = call(apiserver, "GET", "/apis/h.example.com/v1")
    entries = {r["name"]: r for r in body["resources"]}
    assert sorted(entries) == ["clustertabs", "clustertabs/status", "crontabs", "crontabs/status"]
    assert (
        entries["crontabs"]["namespaced"] is True and entries["clustertabs"]["namespaced"] is False
    )
    assert (
        entries["crontabs"]["shortNames"] == ["ct"]
        and entries["crontabs"]["singularName"] == "crontab"
    )
    assert entries["crontabs/status"]["verbs"] == ["get", "patch", "update"]
    objects.create_cluster_custom_object("h.example.com", "v1", "clustertabs",
                                         dict(crontab("c1", api_version="h.example.com/v1"), kind="ClusterTab"))  # fmt: skip
    args = ("h.example.com", "v1", "default", "crontabs")
    for name in ("x1", "x2"):
        objects.create_namespaced_custom_object(
            *args, crontab(name, api_version="h.example.com/v1")
        )
    events = []
    listed = objects.list_namespaced_custom_object(*args)
    w = watch.Watch()

    def follow():
        for event in w.stream(objects.list_namespaced_custom_object, *args,
                              resource_version=listed["metadata"]["resourceVersion"], timeout_seconds=10):  # fmt: skip
            events.append((event["type"], event["object"]["metadata"]["name"]))

    watcher = threading.Thread(target=follow)
    watcher.start()
    # Delete only once the watch is open: a watch that arrives after its resource is
    # gone gets a 404, not the DELETED events this test is about.
    served = apiserver.store.resource("h.example.com", "v1", "crontabs")
    assert served is not None
    deadline = time.monotonic() + 10
    while apiserver.store.watcher_count(served.storage) == 0:
        assert time.monotonic() < deadline, "the watch did not open"
        time.sleep(0.01)
    ext.delete_custom_resource_definition("crontabs.h.example.com")
    watcher.join(10)
    assert not watcher.is_alive()  # the watch ended with its resource
    assert sorted(events) == [("DELETED", "x1"), ("DELETED", "x2")]
    code, _ = call(apiserver, "GET", "/apis/h.example.com/v1/namespaces/default/crontabs")
    assert code == 404
    code, body = call(apiserver, "GET", "/apis/h.example.com/v1")
    assert sorted(r["name"] for r in body["resources"]) == ["clustertabs", "clustertabs/status"]
    # Created again, the CRD starts empty.
    ext.create_custom_resource_definition(crd(group="h.example.com"))
    assert objects.list_namespaced_custom_object(*args)["items"] == []
    ext.delete_custom_resource_definition("clustertabs.h.example.com")
    ext.delete_custom_resource_definition("crontabs.h.example.com")
    code, body = call(apiserver, "GET", "/apis")
    assert "h.example.com" not in [g["name"] for g in body["groups"]]


def test_every_served_version_reads_the_same_objects(apiserver, ext, objects):
    schema = {"openAPIV3Schema": json.loads(json.dumps(CRONTAB_SCHEMA))}
    versions = [
        {"name": "v1beta1", "served": True, "storage": False, "schema": schema},
        {"name": "v1", "served": True, "storage": True, "schema": schema},
        {"name": "v1alpha1", "served": False, "storage": False, "schema": schema},
    ]
    ext.create_custom_resource_definition(crd(group="i.example.com", versions=versions))
    made = objects.create_namespaced_custom_object(
        "i.example.com",
        "v1beta1",
        "default",
        "crontabs",
        crontab("old", api_version="i.example.com/v1beta1"),
    )
    assert made["apiVersion"] == "i.example.com/v1beta1"
    got = objects.get_namespaced_custom_object("i.example.com", "v1", "default", "crontabs", "old")
    assert got["apiVersion"] == "i.example.com/v1" and got["spec"]["replicas"] == 1
    assert got["metadata"]["uid"] == made["metadata"]["uid"]
    patched = objects.patch_namespaced_custom_object(
        "i.example.com", "v1beta1", "default", "crontabs", "old", {"spec": {"replicas": 4}}
    )
    assert patched["apiVersion"] == "i.example.com/v1beta1"
    listed = objects.list_cluster_custom_object("i.example.com", "v1", "crontabs")
    assert [(i["apiVersion"], i["spec"]["replicas"]) for i in listed["items"]] == [
        ("i.example.com/v1", 4)
    ]
    code, _ = call(apiserver, "GET", "/apis/i.example.com/v1alpha1/crontabs")
    assert code == 404
    code, body = call(apiserver, "GET", "/apis/i.example.com")
    assert [v["version"] for v in body["versions"]] == ["v1", "v1beta1"]
    # A new storage version is recorded; dropping a served version removes its route.
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.i.example.com"
    code, crd_body = call(apiserver, "GET", path)
    crd_body["spec"]["versions"][0].update(storage=True)
    crd_body["spec"]["versions"][1].update(storage=False, served=False)
    code, _ = call(apiserver, "PUT", path, crd_body)
    assert code == 200
    got = ext.read_custom_resource_definition("crontabs.i.example.com")
    assert got.status.stored_versions == ["v1", "v1beta1"]
    code, _ = call(apiserver, "GET", "/apis/i.example.com/v1/crontabs")
    assert code == 404
    still = objects.get_namespaced_custom_object(
        "i.example.com", "v1beta1", "default", "crontabs", "old"
    )
    assert still["spec"]["replicas"] == 4
    # A stored version cannot leave spec.versions while status.storedVersions lists it.
    code, crd_body = call(apiserver, "GET", path)
    crd_body["spec"]["versions"] = crd_body["spec"]["versions"][:1]
    code, status = call(apiserver, "PUT", path, crd_body)
    assert code == 422
    assert _causes(status) == [
        ("status.storedVersions[0]", 'Invalid value: "v1": must appear in spec.versions')
    ]
    code, crd_status = call(apiserver, "GET", path)
    crd_status["status"]["storedVersions"] = ["v1beta1"]
    assert call(apiserver, "PUT", path + "/status", crd_status)[0] == 200
    code, crd_body = call(apiserver, "GET", path)
    crd_body["spec"]["versions"] = crd_body["spec"]["versions"][:1]
    assert call(apiserver, "PUT", path, crd_body)[0] == 200


def test_deleting_a_namespace_deletes_its_custom_resources(apiserver, ext, objects):
    ext.create_custom_resource_definition(crd(group="j.example.com"))
    call(apiserver, "POST", "/api/v1/namespaces", {"metadata": {"name": "team-j"}})
    args = ("j.example.com", "v1", "team-j", "crontabs")
    objects.create_namespaced_custom_object(*args, crontab("in", api_version="j.example.com/v1"))
    objects.create_namespaced_custom_object(
        "j.example.com", "v1", "default", "crontabs", crontab("out", api_version="j.example.com/v1")
    )
    assert call(apiserver, "DELETE", "/api/v1/namespaces/team-j")[0] == 200
    listed = objects.list_cluster_custom_object("j.example.com", "v1", "crontabs")
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]] == [
        ("default", "out")
    ]


def test_a_request_for_a_resource_no_longer_served_is_not_found():
    # What a request routed just before its CRD went meets in the store.
    store = new_store()
    rest.create(store, CUSTOMRESOURCEDEFINITIONS, None, crd(group="k.example.com"))
    view = store.resource("k.example.com", "v1", "crontabs")
    assert view is not None
    storage = view.storage
    body = crontab("x", api_version=storage.group_version)
    rest.create(store, storage, "default", body)
    rest.delete(store, CUSTOMRESOURCEDEFINITIONS, None, "crontabs.k.example.com", {})
    assert store.resource("k.example.com", "v1", "crontabs") is None
    for attempt in (
        lambda: store.get(storage, "default", "x"),
        lambda: store.list(storage),
        lambda: store.watch(storage),
        lambda: store.create(storage, crontab("y", api_version=storage.group_version), "default"),
        lambda: store.delete(storage, "default", "x"),
    ):
        with pytest.raises(errors.ApiError) as raised:
            attempt()
        assert raised.value.code == 404
