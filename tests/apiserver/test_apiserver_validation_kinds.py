"""ConfigMaps, Events and Namespaces validated as kube-apiserver does, and the metadata
rules of every update (``rest.BeforeUpdate`` and ``ValidateObjectMetaUpdate``): 422s with
upstream's paths and messages, nothing stored on a refusal."""

from __future__ import annotations

from apiserver_builders import CONFIG_KEY, call

CMS = "/api/v1/namespaces/default/configmaps"
EVENTS = "/api/v1/namespaces/default/events"
EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
MERGE = "application/merge-patch+json"
FROZEN = "field is immutable when `immutable` is set"
NOW = "2026-11-23T01:00:00.000000Z"


def refused(server, method, path, body, content_type="application/json"):
    """The 422's message and causes, as (reason, field, message) triples."""
    code, status = call(server, method, path, body, content_type)
    assert (code, status.get("reason")) == (422, "Invalid"), status
    causes = [(c["reason"], c.get("field"), c["message"]) for c in status["details"]["causes"]]
    return status["message"], causes


# -- ConfigMap ------------------------------------------------------------------------------


def test_config_map_keys_and_duplicates(apiserver):
    body = {
        "metadata": {"name": "keys"},
        "data": {"k": "1", "a b": "2"},
        "binaryData": {"k": "eA=="},
    }
    message, causes = refused(apiserver, "POST", CMS, body)
    assert causes == [
        ("FieldValueInvalid", "data[a b]", f'Invalid value: "a b": {CONFIG_KEY}'),
        (
            "FieldValueInvalid",
            "data[k]",
            'Invalid value: "k": duplicate of key present in binaryData',
        ),
    ]
    assert message.startswith('ConfigMap "keys" is invalid: [data[a b]: Invalid value: "a b": ')
    assert call(apiserver, "GET", f"{CMS}/keys")[0] == 404


def test_config_map_over_one_mib_names_the_whole_object(apiserver):
    body = {
        "metadata": {"name": "big"},
        "data": {"a": "x" * (512 * 1024), "b": "y" * (512 * 1024 + 1)},
    }
    code, status = call(apiserver, "POST", CMS, body)
    assert code == 422
    assert (
        status["message"]
        == 'ConfigMap "big" is invalid: : Too long: may not be more than 1048576 bytes'
    )
    # An error about no field carries no field in its cause, as upstream's omitempty.
    assert status["details"]["causes"] == [
        {"reason": "FieldValueTooLong", "message": "Too long: may not be more than 1048576 bytes"}
    ]
    body["data"]["b"] = "y" * (512 * 1024)
    assert call(apiserver, "POST", CMS, body)[0] == 201


def test_binary_data_that_is_not_base64_is_a_decode_error(apiserver):
    code, status = call(
        apiserver, "POST", CMS, {"metadata": {"name": "bin"}, "binaryData": {"k": "no$"}}
    )
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 2'
    )


def test_an_immutable_config_map_keeps_its_data(apiserver):
    body = {"metadata": {"name": "frozen"}, "data": {"a": "1"}, "immutable": True}
    assert call(apiserver, "POST", CMS, body)[0] == 201
    path = f"{CMS}/frozen"
    message, _ = refused(apiserver, "PATCH", path, {"data": {"a": "2"}}, MERGE)
    assert message == f'ConfigMap "frozen" is invalid: data: Forbidden: {FROZEN}'
    message, _ = refused(
        apiserver, "PATCH", path, {"immutable": False, "binaryData": {"b": "eA=="}}, MERGE
    )
    assert message == (
        f'ConfigMap "frozen" is invalid: [immutable: Forbidden: {FROZEN}, binaryData: Forbidden: {FROZEN}]'
    )
    code, patched = call(apiserver, "PATCH", path, {"metadata": {"labels": {"a": "b"}}}, MERGE)
    assert (code, patched["data"]) == (200, {"a": "1"})
    mutable = {"metadata": {"name": "thawed"}, "data": {"a": "1"}}
    assert call(apiserver, "POST", CMS, mutable)[0] == 201
    assert call(apiserver, "PATCH", f"{CMS}/thawed", {"data": {"a": "2"}}, MERGE)[0] == 200


# -- Event ----------------------------------------------------------------------------------


def core_event(name, **fields):
    body = {
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
        "reason": "Started",
        "message": "started",
        "type": "Normal",
    }
    body.update(fields)
    return body


def v1_event(name, **fields):
    body = {
        "metadata": {"name": name},
        "eventTime": NOW,
        "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
        "note": "bound",
        "type": "Normal",
    }
    body.update(fields)
    return body


def test_core_event_namespace_must_match(apiserver):
    body = core_event("e1", involvedObject={"kind": "Pod", "namespace": "other", "name": "p"})
    message, causes = refused(apiserver, "POST", EVENTS, body)
    assert (
        message
        == 'Event "e1" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace'
    )
    assert causes == [
        (
            "FieldValueInvalid",
            "involvedObject.namespace",
            'Invalid value: "other": does not match event.namespace',
        )
    ]


def test_core_event_with_an_event_time_names_its_reporter(apiserver):
    body = core_event(
        "e2", eventTime=NOW, reason="", reportingInstance="i" * 129, message="m" * 1025
    )
    _, causes = refused(apiserver, "POST", EVENTS, body)
    assert causes == [
        ("FieldValueRequired", "reportingController", "Required value"),
        (
            "FieldValueInvalid",
            "reportingController",
            'Invalid value: "": name part must be non-empty',
        ),
        (
            "FieldValueInvalid",
            "reportingController",
            "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
            "'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            "FieldValueInvalid",
            "reportingInstance",
            'Invalid value: "": can have at most 128 characters',
        ),
        ("FieldValueRequired", "action", "Required value"),
        ("FieldValueRequired", "reason", "Required value"),
        ("FieldValueInvalid", "message", 'Invalid value: "": can have at most 1024 characters'),
    ]


def test_events_v1_create_is_strict(apiserver):
    body = v1_event("e3", type="Info", deprecatedCount=3, series={"count": 1})
    del body["eventTime"]
    _, causes = refused(apiserver, "POST", EVENTS_V1, body)
    assert causes == [
        ("FieldValueInvalid", "series.count", 'Invalid value: "": should be at least 2'),
        ("FieldValueRequired", "series.lastObservedTime", "Required value"),
        ("FieldValueRequired", "eventTime", "Required value"),
        ("FieldValueInvalid", "type", 'Invalid value: "": has invalid value: Info'),
        ("FieldValueInvalid", "count", 'Invalid value: "": needs to be unset'),
    ]
    # The same body through core/v1 only has to pass the legacy rules.
    core = dict(body, apiVersion="v1", kind="Event", count=3, involvedObject=body["regarding"])
    assert (
        call(
            apiserver,
            "POST",
            EVENTS,
            {k: v for k, v in core.items() if k not in ("regarding", "deprecatedCount")},
        )[0]
        == 201
    )


def test_events_v1_updates_may_only_move_the_series(apiserver):
    assert call(apiserver, "POST", EVENTS_V1, v1_event("e4"))[0] == 201
    path = f"{EVENTS_V1}/e4"
    series = {"series": {"count": 2, "lastObservedTime": NOW}}
    assert call(apiserver, "PATCH", path, series, MERGE)[0] == 200
    message, causes = refused(
        apiserver, "PATCH", path, {"note": "changed", "action": "Other"}, MERGE
    )
    assert causes == [
        ("FieldValueInvalid", "message", 'Invalid value: "changed": field is immutable'),
        ("FieldValueInvalid", "action", 'Invalid value: "Other": field is immutable'),
    ]
    message, _ = refused(
        apiserver, "PATCH", path, {"series": {"count": 1, "lastObservedTime": NOW}}, MERGE
    )
    assert message == 'Event "e4" is invalid: series.count: Invalid value: "": should be at least 2'
    # core/v1 writes are held to the legacy rules only.
    assert call(apiserver, "PATCH", f"{EVENTS}/e4", {"message": "changed"}, MERGE)[0] == 200


# -- Namespace ------------------------------------------------------------------------------


def test_namespace_finalizers_are_standard_or_qualified(apiserver):
    body = {"metadata": {"name": "fin"}, "spec": {"finalizers": ["kubernetes", "custom"]}}
    message, _ = refused(apiserver, "POST", "/api/v1/namespaces", body)
    assert message == (
        'Namespace "fin" is invalid: spec.finalizers: Invalid value: "custom": name is neither a '
        "standard finalizer name nor is it fully qualified"
    )


# -- metadata on update ---------------------------------------------------------------------


def test_uid_is_immutable(apiserver):
    code, created = call(apiserver, "POST", CMS, {"metadata": {"name": "ident"}})
    uid = created["metadata"]["uid"]
    path = f"{CMS}/ident"
    message, _ = refused(apiserver, "PATCH", path, {"metadata": {"uid": "other"}}, MERGE)
    assert (
        message
        == 'ConfigMap "ident" is invalid: metadata.uid: Invalid value: "other": field is immutable'
    )
    # In a PUT body the uid is a precondition: 409, as the generic registry answers.
    body = dict(created, data={"a": "1"})
    body["metadata"] = dict(created["metadata"], uid="other")
    code, status = call(apiserver, "PUT", path, body)
    assert (code, status["reason"]) == (409, "Conflict")
    assert status["message"] == (
        f'Operation cannot be fulfilled on configmaps "ident": Precondition failed: UID in '
        f"precondition: other, UID in object meta: {uid}"
    )
    # An update that leaves the uid out keeps it.
    del body["metadata"]["uid"]
    code, updated = call(apiserver, "PUT", path, body)
    assert (code, updated["metadata"]["uid"], updated["data"]) == (200, uid, {"a": "1"})


def test_server_owned_metadata_is_kept_or_refused(apiserver):
    code, created = call(apiserver, "POST", CMS, {"metadata": {"name": "owned"}})
    path = f"{CMS}/owned"
    meta = created["metadata"]
    quiet = {
        "metadata": {"generation": 7, "creationTimestamp": "2001-01-01T00:00:00Z"},
        "data": {"a": "1"},
    }
    code, patched = call(apiserver, "PATCH", path, quiet, MERGE)
    assert code == 200
    assert (patched["metadata"]["generation"], patched["metadata"]["creationTimestamp"]) == (
        meta["generation"],
        meta["creationTimestamp"],
    )
    message, _ = refused(
        apiserver, "PATCH", path, {"metadata": {"deletionTimestamp": "2030-01-02T03:04:05Z"}}, MERGE
    )
    assert message == (
        'ConfigMap "owned" is invalid: metadata.deletionTimestamp: Invalid value: 2030-01-02 '
        "03:04:05 +0000 UTC: field is immutable"
    )
    message, _ = refused(
        apiserver, "PATCH", path, {"metadata": {"deletionGracePeriodSeconds": 5}}, MERGE
    )
    assert (
        message
        == 'ConfigMap "owned" is invalid: metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable'
    )
    assert (
        call(apiserver, "GET", path)[1]["metadata"]["resourceVersion"]
        == patched["metadata"]["resourceVersion"]
    )


def test_no_new_finalizers_once_deleting(apiserver):
    body = {"metadata": {"name": "going", "finalizers": ["example.com/a"]}}
    assert call(apiserver, "POST", CMS, body)[0] == 201
    path = f"{CMS}/going"
    assert call(apiserver, "DELETE", path)[0] == 200
    more = {"metadata": {"finalizers": ["example.com/a", "example.com/c", "example.com/b"]}}
    message, _ = refused(apiserver, "PATCH", path, more, MERGE)
    assert message == (
        'ConfigMap "going" is invalid: metadata.finalizers: Forbidden: no new finalizers can be '
        'added if the object is being deleted, found new finalizers []string{"example.com/b", '
        '"example.com/c"}'
    )
    assert call(apiserver, "PATCH", path, {"metadata": {"finalizers": None}}, MERGE)[0] == 200
    assert call(apiserver, "GET", path)[0] == 404


# -- Service --------------------------------------------------------------------------------

SERVICES = "/api/v1/namespaces/default/services"


def test_service_ports(apiserver):
    ports = [
        {"port": 80, "name": "web"},
        {"port": 80, "name": "web", "protocol": "HTTP", "targetPort": "Web_port"},
        {"port": 80, "name": "b", "nodePort": 30080},
    ]
    body = {"metadata": {"name": "svc"}, "spec": {"ports": ports}}
    _, causes = refused(apiserver, "POST", SERVICES, body)
    assert causes == [
        ("FieldValueDuplicate", "spec.ports[1].name", 'Duplicate value: "web"'),
        (
            "FieldValueNotSupported",
            "spec.ports[1].protocol",
            'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        ),
        (
            "FieldValueInvalid",
            "spec.ports[1].targetPort",
            'Invalid value: "Web_port": must contain only alpha-numeric characters (a-z, 0-9), '
            "and hyphens (-)",
        ),
        (
            "FieldValueForbidden",
            "spec.ports[2].nodePort",
            "Forbidden: may not be used when `type` is 'ClusterIP'",
        ),
        (
            "FieldValueDuplicate",
            "spec.ports[2]",
            'Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), '
            'Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
        ),
    ]


def test_service_type_affinity_and_external_name(apiserver):
    body = {
        "metadata": {"name": "svc2"},
        "spec": {"type": "Bogus", "sessionAffinity": "Sticky", "ports": [{"port": 443}]},
    }
    _, causes = refused(apiserver, "POST", SERVICES, body)
    assert causes == [
        (
            "FieldValueNotSupported",
            "spec.sessionAffinity",
            'Unsupported value: "Sticky": supported values: "ClientIP", "None"',
        ),
        (
            "FieldValueNotSupported",
            "spec.type",
            'Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", '
            '"LoadBalancer", "NodePort"',
        ),
    ]
    message, _ = refused(
        apiserver, "POST", SERVICES, {"metadata": {"name": "ext"}, "spec": {"type": "ExternalName"}}
    )
    assert message == 'Service "ext" is invalid: spec.externalName: Required value'
    body = {"metadata": {"name": "ok"}, "spec": {"ports": [{"port": 80, "targetPort": "http"}]}}
    assert call(apiserver, "POST", SERVICES, body)[0] == 201


def test_core_objects_take_standard_or_qualified_finalizers(apiserver):
    body = {"metadata": {"name": "fins", "finalizers": ["example.com/ok", "orphan", "mine"]}}
    _, causes = refused(apiserver, "POST", CMS, body)
    assert causes == [
        (
            "FieldValueInvalid",
            "metadata.finalizers[2]",
            'Invalid value: "mine": name is neither a standard finalizer name nor is it fully '
            "qualified",
        )
    ]
    # Other API groups only need qualified names.
    pdb = {"metadata": {"name": "fins", "finalizers": ["mine"]}, "spec": {"minAvailable": 1}}
    path = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
    assert call(apiserver, "POST", path, pdb)[0] == 201


def test_node_taints_as_validate_node_reports_them(apiserver):
    taints = [
        {"key": "k", "value": "-", "effect": "NoSchedule"},
        {"key": "k", "effect": "NoSchedule"},
        {"key": "j", "effect": "Sometimes"},
    ]
    body = {"metadata": {"name": "tainted"}, "spec": {"taints": taints}}
    _, causes = refused(apiserver, "POST", "/api/v1/nodes", body)
    assert causes == [
        (
            "FieldValueInvalid",
            "metadata.taints[0].value",
            'Invalid value: "-": a valid label must be an empty string or consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        (
            "FieldValueDuplicate",
            "metadata.taints[1]",
            'Duplicate value: core.Taint{Key:"k", Value:"", Effect:"NoSchedule", '
            "TimeAdded:<nil>}: taints must be unique by key and effect pair",
        ),
        (
            "FieldValueNotSupported",
            "metadata.taints[2].effect",
            'Unsupported value: "Sometimes": supported values: "NoSchedule", '
            '"PreferNoSchedule", "NoExecute"',
        ),
    ]


def test_pod_status_condition_types(apiserver):
    pods = "/api/v1/namespaces/default/pods"
    body = {"metadata": {"name": "cond"}, "spec": {"containers": [{"name": "c", "image": "pause"}]}}
    assert call(apiserver, "POST", pods, body)[0] == 201
    status = {
        "status": {
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "bad type", "status": "True"},
            ]
        }
    }
    message, _ = refused(apiserver, "PATCH", f"{pods}/cond/status", status, MERGE)
    assert message.startswith(
        'Pod "cond" is invalid: metadata.conditions[1].Type: Invalid value: "bad type": name part '
        "must consist of alphanumeric characters"
    )
    status = {"status": {"conditions": [{"type": "DisruptionTarget", "status": "True"}]}}
    assert call(apiserver, "PATCH", f"{pods}/cond/status", status, MERGE)[0] == 200


def test_workload_templates_restart_always_without_deadline(apiserver):
    template = {
        "metadata": {"labels": {"app": "a", "tier": "-"}},
        "spec": {
            "containers": [{"name": "c", "image": "pause"}],
            "restartPolicy": "Never",
            "activeDeadlineSeconds": 5,
        },
    }
    body = {
        "metadata": {"name": "rs"},
        "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template},
    }
    _, causes = refused(apiserver, "POST", "/apis/apps/v1/namespaces/default/replicasets", body)
    assert [(reason, field) for reason, field, _ in causes] == [
        ("FieldValueInvalid", "spec.template.labels"),
        ("FieldValueNotSupported", "spec.template.spec.restartPolicy"),
        ("FieldValueForbidden", "spec.template.spec.activeDeadlineSeconds"),
    ]
    assert causes[1][2] == 'Unsupported value: "Never": supported values: "Always"'
    assert causes[2][2] == "Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported"
    del template["spec"]["activeDeadlineSeconds"]
    body = {"metadata": {"name": "rc"}, "spec": {"selector": {"app": "a"}, "template": template}}
    message, _ = refused(
        apiserver, "POST", "/api/v1/namespaces/default/replicationcontrollers", body
    )
    # The controller's own labels default to the template's (SetDefaults_ReplicationController).
    assert message.startswith(
        'ReplicationController "rc" is invalid: [metadata.labels: Invalid value: "-": '
    )
    assert ', spec.template.labels: Invalid value: "-": ' in message
    assert message.endswith(
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"]'
    )
