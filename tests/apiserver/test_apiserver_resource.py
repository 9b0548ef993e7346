"""resource.k8s.io/v1 served by the embedded API server (issue 16): a GPU driver's
DeviceClass and ResourceSlices and a claim template applied with kubectl and read back with
the official client; ResourceSlice field selectors; claims' status subresource with
reservedFor merged by uid; the validation a user sees; admin access only in labelled
namespaces; Tables as kubectl prints them; pods' resourceClaims validated."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from apiserver_builders import call
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kubesched.testing import make_pod
from kubesched.testing.dra import make_claim, make_device_class, make_slice

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not on PATH: install kubectl >= 1.27"
)
MANIFESTS = Path(__file__).parent / "manifests"
GROUP = "/apis/resource.k8s.io/v1"


@pytest.fixture(scope="module")
def api(apiserver):
    api_client = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    yield api_client
    api_client.close()


@pytest.fixture(scope="module")
def resource_api(api):
    return client.ResourceV1Api(api)


def _namespace(apiserver, name, labels=None):
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    if labels:
        body["metadata"]["labels"] = labels
    status, reply = call(apiserver, "POST", "/api/v1/namespaces", body)
    assert status == 201, reply


def _create(apiserver, plural, body, namespace=None):
    prefix = f"{GROUP}/namespaces/{namespace}" if namespace else GROUP
    return call(apiserver, "POST", f"{prefix}/{plural}", body)


@needs_kubectl
def test_driver_objects_apply_with_kubectl_and_read_back(kubectl, resource_api):
    out = kubectl("apply", "-f", str(MANIFESTS / "dra-gpus.yaml")).stdout
    assert "deviceclass.resource.k8s.io/gpu.example.com created" in out
    assert "resourceslice.resource.k8s.io/worker-1-gpu.example.com created" in out
    assert "resourceclaimtemplate.resource.k8s.io/one-gpu created" in out
    assert "pod/trainer-1 created" in out

    cls = resource_api.read_device_class("gpu.example.com")
    assert cls.spec.selectors[0].cel.expression == "device.driver == 'gpu.example.com'"
    slice_ = resource_api.read_resource_slice("worker-1-gpu.example.com")
    assert [d.name for d in slice_.spec.devices] == ["gpu-0", "gpu-1"]
    assert slice_.spec.devices[0].attributes["driverVersion"].version == "1.0.0"
    assert slice_.spec.devices[1].capacity["memory"].value == "80Gi"
    template = resource_api.read_namespaced_resource_claim_template("one-gpu", "gpu-demo")
    exactly = template.spec.spec.devices.requests[0].exactly
    # v1 defaults: ExactCount, one device.
    assert (exactly.allocation_mode, exactly.count) == ("ExactCount", 1)

    # Applying again changes nothing. kubectl re-sends the template's requests (an atomic
    # list that the server defaulted), as against a real cluster; the immutable spec
    # stays as it was.
    again = kubectl("apply", "-f", str(MANIFESTS / "dra-gpus.yaml")).stdout
    assert "deviceclass.resource.k8s.io/gpu.example.com unchanged" in again
    assert "resourceslice.resource.k8s.io/worker-1-gpu.example.com unchanged" in again
    after = resource_api.read_namespaced_resource_claim_template("one-gpu", "gpu-demo")
    assert after.metadata.resource_version == template.metadata.resource_version


@needs_kubectl
def test_kubectl_get_prints_upstreams_columns(kubectl, apiserver):
    for name, node in (("cols-a", "node-a"), ("cols-b", "node-b")):
        raw = make_slice(name, "cols.example.com").node(node).pool(node).device("d0").obj()
        assert _create(apiserver, "resourceslices", raw)[0] == 201
    _namespace(apiserver, "cols")
    claim = make_claim("pending-claim", "cols").request("gpu", "gpu.example.com").obj()
    assert _create(apiserver, "resourceclaims", claim, "cols")[0] == 201
    slices = kubectl("get", "resourceslices", "--field-selector", "spec.driver=cols.example.com")
    lines = slices.stdout.split("\n")
    assert lines[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert lines[1].split()[:4] == ["cols-a", "node-a", "cols.example.com", "node-a"]
    claims = kubectl("get", "resourceclaims", "-n", "cols").stdout.split("\n")
    assert claims[0].split() == ["NAME", "STATE", "AGE"]
    assert claims[1].split()[:2] == ["pending-claim", "pending"]
    classes = kubectl("get", "deviceclasses", "-o", "wide").stdout.split("\n")
    assert classes[0].split() == ["NAME", "AGE"]


def test_resource_slice_field_selectors(apiserver, resource_api):
    for name, node, driver in (
        ("sel-1", "sel-node-1", "a.example.com"),
        ("sel-2", "sel-node-2", "a.example.com"),
        ("sel-3", "sel-node-1", "b.example.com"),
    ):
        raw = make_slice(name, driver).node(node).pool(name).device("d0").obj()
        assert _create(apiserver, "resourceslices", raw)[0] == 201
    by_node = resource_api.list_resource_slice(field_selector="spec.nodeName=sel-node-1")
    assert sorted(s.metadata.name for s in by_node.items) == ["sel-1", "sel-3"]
    both = resource_api.list_resource_slice(
        field_selector="spec.nodeName=sel-node-1,spec.driver=a.example.com"
    )
    assert [s.metadata.name for s in both.items] == ["sel-1"]
    with pytest.raises(ApiException) as err:
        resource_api.list_resource_slice(field_selector="spec.pool.name=sel-1")
    assert err.value.status == 400
    assert "field label not supported: spec.pool.name" in err.value.body


def _allocation(device="gpu-0"):
    return {
        "devices": {
            "results": [
                {"request": "gpu", "driver": "gpu.example.com", "pool": "p", "device": device}
            ]
        }
    }


def test_claim_status_is_a_subresource_and_reserved_for_merges_by_uid(apiserver, resource_api):
    _namespace(apiserver, "status-ns")
    claim = make_claim("shared", "status-ns").request("gpu", "gpu.example.com").obj()
    claim["status"] = {"allocation": _allocation()}
    status, created = _create(apiserver, "resourceclaims", claim, "status-ns")
    assert status == 201
    assert created["status"] == {}, "a new claim is not allocated (PrepareForCreate)"

    body = {"status": {"allocation": _allocation(), "reservedFor": [_consumer("a", "u1")]}}
    patched = resource_api.patch_namespaced_resource_claim_status("shared", "status-ns", body)
    assert patched.status.allocation.devices.results[0].device == "gpu-0"
    # A strategic merge patch adds a consumer (merge key uid), as the scheduler does.
    second = {"status": {"reservedFor": [_consumer("b", "u2")]}}
    status, merged = call(
        apiserver,
        "PATCH",
        f"{GROUP}/namespaces/status-ns/resourceclaims/shared/status",
        second,
        "application/strategic-merge-patch+json",
    )
    assert status == 200, merged
    assert [r["uid"] for r in merged["status"]["reservedFor"]] == ["u1", "u2"]
    # ... and removes one with $patch: delete, as kube-controller-manager does.
    remove = {"status": {"reservedFor": [{"uid": "u1", "$patch": "delete"}]}}
    status, merged = call(
        apiserver,
        "PATCH",
        f"{GROUP}/namespaces/status-ns/resourceclaims/shared/status",
        remove,
        "application/strategic-merge-patch+json",
    )
    assert [r["uid"] for r in merged["status"]["reservedFor"]] == ["u2"]

    # The main resource does not write status; status does not write the spec.
    current = resource_api.read_namespaced_resource_claim("shared", "status-ns")
    current.status.reserved_for = []
    kept = resource_api.replace_namespaced_resource_claim("shared", "status-ns", current)
    assert [r.uid for r in kept.status.reserved_for] == ["u2"]

    # The allocation is immutable once set.
    with pytest.raises(ApiException) as err:
        body = {"status": {"allocation": _allocation("gpu-1")}}
        resource_api.patch_namespaced_resource_claim_status("shared", "status-ns", body)
    assert err.value.status == 422
    assert "status.allocation: Invalid value" in err.value.body
    assert "field is immutable" in err.value.body


def _consumer(name, uid):
    return {"resource": "pods", "name": name, "uid": uid}


def test_reserved_for_rules(apiserver, resource_api):
    _namespace(apiserver, "reserve-ns")
    claim = make_claim("c", "reserve-ns").request("gpu", "gpu.example.com").obj()
    assert _create(apiserver, "resourceclaims", claim, "reserve-ns")[0] == 201
    with pytest.raises(ApiException) as err:
        body = {"status": {"reservedFor": [_consumer("a", "u1")]}}
        resource_api.patch_namespaced_resource_claim_status("c", "reserve-ns", body)
    message = json.loads(err.value.body)["message"]
    assert message == (
        'ResourceClaim.resource.k8s.io "c" is invalid: status.reservedFor: Forbidden: '
        "may not be specified when `allocated` is not set"
    )
    too_many = [_consumer(f"p{i}", f"u{i}") for i in range(257)]
    with pytest.raises(ApiException) as err:
        body = {"status": {"allocation": _allocation(), "reservedFor": too_many}}
        resource_api.patch_namespaced_resource_claim_status("c", "reserve-ns", body)
    assert "status.reservedFor: Too many: 257: must have at most 256 items" in err.value.body
    full = {"status": {"allocation": _allocation(), "reservedFor": too_many[:256]}}
    patched = resource_api.patch_namespaced_resource_claim_status("c", "reserve-ns", full)
    assert len(patched.status.reserved_for) == 256


def test_claim_spec_is_immutable(apiserver, resource_api):
    _namespace(apiserver, "immutable-ns")
    claim = make_claim("c", "immutable-ns").request("gpu", "gpu.example.com").obj()
    assert _create(apiserver, "resourceclaims", claim, "immutable-ns")[0] == 201
    with pytest.raises(ApiException) as err:
        body = {
            "spec": {
                "devices": {"requests": [{"name": "other", "exactly": {"deviceClassName": "x"}}]}
            }
        }
        resource_api.patch_namespaced_resource_claim("c", "immutable-ns", body)
    assert err.value.status == 422
    assert "spec: Invalid value" in err.value.body and "field is immutable" in err.value.body
    # Metadata still changes.
    labelled = resource_api.patch_namespaced_resource_claim(
        "c", "immutable-ns", {"metadata": {"labels": {"a": "b"}}}
    )
    assert labelled.metadata.labels == {"a": "b"}


def _causes(reply):
    return [f"{c['field']}: {c['message']}" for c in reply["details"]["causes"]]


CLAIM_CASES = [
    pytest.param(
        {"name": "Gpu", "exactly": {"deviceClassName": "gpu.example.com"}},
        'spec.devices.requests[0].name: Invalid value: "Gpu": a lowercase RFC 1123 label',
        id="request-name-is-a-dns-label",
    ),
    pytest.param(
        {"name": "gpu"},
        "spec.devices.requests[0]: Required value: exactly one of `exactly` or "
        "`firstAvailable` is required",
        id="neither-exactly-nor-first-available",
    ),
    pytest.param(
        {
            "name": "gpu",
            "exactly": {"deviceClassName": "gpu.example.com"},
            "firstAvailable": [{"name": "a", "deviceClassName": "gpu.example.com"}],
        },
        "spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or "
        "`firstAvailable` is required, but multiple fields are set",
        id="both-exactly-and-first-available",
    ),
    pytest.param(
        {
            "name": "gpu",
            "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "Some"},
        },
        'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": '
        'supported values: "All", "ExactCount"',
        id="unknown-allocation-mode",
    ),
    pytest.param(
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": -1}},
        "spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero",
        id="negative-count",
    ),
    pytest.param(
        {
            "name": "gpu",
            "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "All", "count": 2},
        },
        "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when "
        "allocationMode is 'All'",
        id="count-with-mode-all",
    ),
    pytest.param(
        {"name": "gpu", "exactly": {}},
        "spec.devices.requests[0].exactly.deviceClassName: Required value",
        id="device-class-required",
    ),
]


@pytest.mark.parametrize(("request_", "expected"), CLAIM_CASES)
def test_claim_validation(apiserver, request_, expected):
    raw = make_claim("invalid", "default").obj()
    raw["spec"]["devices"]["requests"] = [request_]
    status, reply = _create(apiserver, "resourceclaims", raw, "default")
    assert status == 422, reply
    assert any(c.startswith(expected) for c in _causes(reply)), _causes(reply)


def test_claim_constraints_and_config_name_requests(apiserver):
    raw = make_claim("refs", "default").request("gpu", "gpu.example.com").obj()
    devices = raw["spec"]["devices"]
    devices["constraints"] = [{"requests": ["gpu", "nic"], "matchAttribute": "model"}]
    devices["config"] = [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com"}}]
    status, reply = _create(apiserver, "resourceclaims", raw, "default")
    assert status == 422
    causes = _causes(reply)
    assert (
        'spec.devices.constraints[0].requests[1]: Invalid value: "nic": must be the name of a '
        "request in the claim or the name of a request and a subrequest separated by '/'"
    ) in causes
    assert (
        'spec.devices.constraints[0].matchAttribute: Invalid value: "model": a fully qualified '
        "name must be a domain and a name separated by a slash"
    ) in causes
    assert "spec.devices.config[0].opaque.parameters: Required value" in causes


def test_duplicate_request_names(apiserver):
    raw = (
        make_claim("dup", "default")
        .request("gpu", "gpu.example.com")
        .request("gpu", "gpu.example.com")
        .obj()
    )
    status, reply = _create(apiserver, "resourceclaims", raw, "default")
    assert status == 422
    assert _causes(reply) == ['spec.devices.requests[1]: Duplicate value: "gpu"']


SLICE_CASES = [
    pytest.param(
        lambda s: s,
        "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
        "`perDeviceNodeSelection` is required",
        id="no-node-selection",
    ),
    pytest.param(
        lambda s: {**s, "nodeName": "n", "allNodes": True},
        'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, '
        "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple "
        "fields are set",
        id="two-node-selections",
    ),
    pytest.param(
        lambda s: {**s, "nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 0}},
        "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
        id="slice-count-positive",
    ),
    pytest.param(
        lambda s: {
            **s,
            "nodeName": "n",
            "devices": [{"name": "d", "attributes": {"v": {"version": "1.0"}}}],
        },
        'spec.devices[0].attributes[v].version: Invalid value: "1.0": must be a string '
        "compatible with semver.org spec 2.0.0",
        id="version-attribute-is-semver",
    ),
    pytest.param(
        lambda s: {
            **s,
            "nodeName": "n",
            "devices": [{"name": "d", "attributes": {"v": {"int": 1, "string": "x"}}}],
        },
        "spec.devices[0].attributes[v]: Invalid value",
        id="one-attribute-value",
    ),
    pytest.param(
        lambda s: {**s, "nodeName": "n", "devices": [{"name": "d"}, {"name": "d"}]},
        'spec.devices[1]: Duplicate value: "d"',
        id="device-names-unique",
    ),
    pytest.param(
        lambda s: {**s, "nodeName": "n", "devices": [{"name": "d", "nodeName": "n"}]},
        "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can "
        "only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        id="device-node-only-per-device",
    ),
]


@pytest.mark.parametrize(("change", "expected"), SLICE_CASES)
def test_slice_validation(apiserver, change, expected):
    raw = make_slice("invalid-slice", "gpu.example.com").obj()
    raw["spec"] = change(raw["spec"])
    status, reply = _create(apiserver, "resourceslices", raw)
    assert status == 422, reply
    assert any(c.startswith(expected) for c in _causes(reply)), _causes(reply)


def test_slice_driver_pool_and_node_are_immutable(apiserver, resource_api):
    raw = make_slice("fixed", "gpu.example.com").node("n1").device("d0").obj()
    assert _create(apiserver, "resourceslices", raw)[0] == 201
    with pytest.raises(ApiException) as err:
        resource_api.patch_resource_slice("fixed", {"spec": {"nodeName": "n2"}})
    assert "spec.nodeName: Invalid value" in err.value.body
    # The devices may change (the driver republishes).
    body = {"spec": {"devices": [{"name": "d0"}, {"name": "d1"}], "pool": {"generation": 1}}}
    patched = resource_api.patch_resource_slice("fixed", body)
    assert [d.name for d in patched.spec.devices] == ["d0", "d1"]


@pytest.mark.parametrize(
    ("labels", "allowed"),
    [({"resource.kubernetes.io/admin-access": "true"}, True), ({"other": "true"}, False)],
    ids=["labelled-namespace-allows-admin-access", "unlabelled-namespace-refuses-it"],
)
def test_admin_access_only_in_labelled_namespaces(apiserver, labels, allowed):
    namespace = "admin-yes" if allowed else "admin-no"
    _namespace(apiserver, namespace, labels)
    builder = make_claim("admin", namespace).request(
        "gpu", "gpu.example.com", mode="All", admin=True
    )
    status, reply = _create(apiserver, "resourceclaims", builder.obj(), namespace)
    template_status, template_reply = _create(
        apiserver, "resourceclaimtemplates", builder.template(), namespace
    )
    message = (
        "spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires "
        "the `resource.kubernetes.io/admin-access: true` label on the containing namespace"
    )
    if allowed:
        assert (status, template_status) == (201, 201), (reply, template_reply)
    else:
        assert (status, template_status) == (422, 422)
        assert _causes(reply) == [message]
        assert _causes(template_reply) == [message]


def test_admin_access_granted_in_status_needs_the_label(apiserver, resource_api):
    _namespace(apiserver, "admin-status")
    claim = make_claim("c", "admin-status").request("gpu", "gpu.example.com").obj()
    assert _create(apiserver, "resourceclaims", claim, "admin-status")[0] == 201
    allocation = _allocation()
    allocation["devices"]["results"][0]["adminAccess"] = True
    with pytest.raises(ApiException) as err:
        resource_api.patch_namespaced_resource_claim_status(
            "c", "admin-status", {"status": {"allocation": allocation}}
        )
    assert "status.allocation.devices.results[0].adminAccess: Forbidden" in err.value.body


POD_CASES = [
    pytest.param(
        lambda p: p.resource_claim("gpu", template="t").resource_claim("gpu", claim="c"),
        'spec.resourceClaims[1].name: Duplicate value: "gpu"',
        id="pod-claim-names-unique",
    ),
    pytest.param(
        lambda p: p.resource_claim("gpu"),
        "spec.resourceClaims[0]: Invalid value",
        id="a-claim-or-a-template",
    ),
    pytest.param(
        lambda p: p.resource_claim("gpu", template="t", claim="c"),
        "spec.resourceClaims[0]: Invalid value",
        id="not-both",
    ),
    pytest.param(
        lambda p: (
            p.container()
            .resource_claim("gpu", template="t")
            .raw["spec"]["containers"][0]["resources"]["claims"]
            .append({"name": "nic"})
            or p
        ),
        'spec.containers[0].resources.claims[1]: Not found: "nic": must be one of the names in '
        "pod.spec.resourceClaims: gpu",
        id="container-claims-name-pod-claims",
    ),
]


@pytest.mark.parametrize(("build", "expected"), POD_CASES)
def test_pod_resource_claims_validation(apiserver, build, expected):
    pod = build(make_pod("claims-pod"))
    status, reply = call(apiserver, "POST", "/api/v1/namespaces/default/pods", pod.raw)
    assert status == 422, reply
    assert any(c.startswith(expected) for c in _causes(reply)), _causes(reply)


def test_pod_with_claims_is_stored_and_its_claim_status_written(apiserver, api):
    pod = make_pod("with-claims").resource_claim("gpu", template="one-gpu")
    status, created = call(apiserver, "POST", "/api/v1/namespaces/default/pods", pod.raw)
    assert status == 201, created
    core = client.CoreV1Api(api)
    body = {"status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "x-gpu-1"}]}}
    patched = core.patch_namespaced_pod_status("with-claims", "default", body)
    assert patched.status.resource_claim_statuses[0].resource_claim_name == "x-gpu-1"
    assert patched.spec.resource_claims[0].resource_claim_template_name == "one-gpu"


def test_device_class_with_too_many_selectors_is_refused(apiserver):
    builder = make_device_class("many")
    for i in range(33):
        builder.selector(f"device.driver == 'd{i}.example.com'")
    status, reply = _create(apiserver, "deviceclasses", builder.obj())
    assert status == 422
    assert _causes(reply) == ["spec.selectors: Too many: 33: must have at most 32 items"]


def test_extended_resource_name_is_dropped_as_with_the_gate_off_in_1_34(apiserver):
    # DRAExtendedResource is alpha and off in 1.34: deviceClassStrategy drops the field on
    # create, and on update of a class that does not have it (even an invalid value).
    body = make_device_class("extended").selector("device.driver == 'gpu.example.com'").obj()
    body["spec"]["extendedResourceName"] = "example.com/gpu"
    status, created = _create(apiserver, "deviceclasses", body)
    assert status == 201, created
    assert "extendedResourceName" not in created["spec"]
    created["spec"]["extendedResourceName"] = "not a resource name"
    status, updated = call(apiserver, "PUT", f"{GROUP}/deviceclasses/extended", created)
    assert status == 200, updated
    assert "extendedResourceName" not in updated["spec"]
    status, read = call(apiserver, "GET", f"{GROUP}/deviceclasses/extended")
    assert status == 200 and "extendedResourceName" not in read["spec"]


@needs_kubectl
def test_kubectl_apply_refuses_an_unknown_field(kubectl, tmp_path):
    manifest = tmp_path / "typo.yaml"
    manifest.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: typo\n"
        "spec:\n  selector:\n  - cel:\n      expression: 'true'\n"
    )
    result = kubectl("apply", "-f", str(manifest), check=False)
    assert result.returncode != 0
    assert 'unknown field "spec.selector"' in result.stderr


@pytest.mark.parametrize(
    ("plural", "body", "path"),
    [
        (
            "deviceclasses",
            make_device_class("bad-cel").selector("foo == 1").obj(),
            "spec.selectors[0].cel.expression",
        ),
        (
            "resourceclaimtemplates",
            make_claim("bad-cel", "default")
            .request("gpu", "gpu.example.com", "foo == 1")
            .template(),
            "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression",
        ),
    ],
    ids=["device-class", "claim-template"],
)
def test_selectors_are_compiled_on_create(apiserver, plural, body, path):
    namespace = "default" if plural != "deviceclasses" else None
    status, reply = _create(apiserver, plural, body, namespace)
    assert status == 422
    assert _causes(reply) == [
        f'{path}: Invalid value: "foo == 1": compilation failed: ERROR: <input>:1:1: '
        "undeclared reference to 'foo' (in container '')\n | foo == 1\n | ^"
    ]


def test_a_selector_of_the_driver_demo_compiles(apiserver):
    expression = "device.capacity['gpu.example.com'].memory.compareTo(quantity('4Gi')) >= 0"
    body = make_device_class("big-gpus").selector(expression).obj()
    status, reply = _create(apiserver, "deviceclasses", body)
    assert status == 201, reply


def test_pod_claim_statuses_name_pod_claims(apiserver, api):
    pod = make_pod("statuses").resource_claim("gpu", template="one-gpu")
    assert call(apiserver, "POST", "/api/v1/namespaces/default/pods", pod.raw)[0] == 201
    core = client.CoreV1Api(api)
    body = {"status": {"resourceClaimStatuses": [{"name": "nic", "resourceClaimName": "x"}]}}
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_pod_status("statuses", "default", body)
    assert err.value.status == 422
    assert json.loads(err.value.body)["message"] == (
        'Pod "statuses" is invalid: status.resourceClaimStatuses[0].name: Invalid value: '
        '"nic": must match the name of an entry in `spec.resourceClaims`'
    )


def test_device_status_names_allocated_devices(apiserver, resource_api):
    _namespace(apiserver, "device-status")
    claim = make_claim("c", "device-status").request("gpu", "gpu.example.com").obj()
    assert _create(apiserver, "resourceclaims", claim, "device-status")[0] == 201
    reported = {"driver": "gpu.example.com", "pool": "p", "device": "gpu-0", "data": {"a": 1}}
    body = {"status": {"allocation": _allocation(), "devices": [reported]}}
    patched = resource_api.patch_namespaced_resource_claim_status("c", "device-status", body)
    assert patched.status.devices[0].data == {"a": 1}
    other = dict(reported, device="gpu-7")
    with pytest.raises(ApiException) as err:
        resource_api.patch_namespaced_resource_claim_status(
            "c", "device-status", {"status": {"devices": [reported, other]}}
        )
    assert json.loads(err.value.body)["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "gpu.example.com/p/gpu-7": must be an allocated device '
            "in the claim",
            "field": "status.devices[1]",
        }
    ]


def test_template_claim_labels_are_validated(apiserver):
    body = make_claim("labelled", "default").request("gpu", "gpu.example.com").template()
    body["spec"]["metadata"] = {"labels": {"bad key!": "x"}}
    status, reply = _create(apiserver, "resourceclaimtemplates", body, "default")
    assert status == 422
    assert _causes(reply)[0].startswith('spec.metadata.labels: Invalid value: "bad key!"')
