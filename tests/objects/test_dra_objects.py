"""resource.k8s.io/v1 typed views (objects.dra): slices and their pools, claims with
v1's defaults, and the resource-claim controller's naming of claims made from templates."""

from __future__ import annotations

import pytest
import semver

from kubesched.objects.dra.claims import (
    ResourceClaim,
    ResourceClaimTemplate,
    allocated_devices,
)
from kubesched.objects.dra.podclaims import (
    ERR_API_UNSUPPORTED,
    POD_CLAIM_NAME_ANNOTATION,
    ClaimNameError,
    PodResourceClaim,
    claim_from_template,
    claim_generate_name,
    claim_names,
    find_pod_claim,
    resolve_claim_name,
)
from kubesched.objects.dra.slices import DeviceClass, ResourceSlice, SliceIndex, gather_pools
from kubesched.objects.errors import ObjectError
from kubesched.objects.quantity import parse_quantity
from kubesched.testing import make_pod
from kubesched.testing.dra import make_claim, make_device_class, make_slice

DRIVER = "gpu.example.com"


def gpu_slice(node: str, *devices: str, generation: int = 0, count: int = 1, pool: str = ""):
    builder = make_slice(f"{node}-{generation}-{len(devices)}", DRIVER).node(node)
    builder.pool(pool or node, generation, count)
    for i, name in enumerate(devices):
        builder.device(
            name,
            capacity={"memory": "80Gi"},
            index=i,
            model="LATEST-GPU-MODEL",
            attrs={"gpu.example.com/driverVersion": ("version", "1.0.0")},
        )
    return ResourceSlice.from_dict(builder.obj())


# -- slices -------------------------------------------------------------------------------


def test_slice_decodes_devices_with_typed_attributes_and_capacity():
    s = gpu_slice("node-a", "gpu-0", "gpu-1")
    assert (s.driver, s.pool.name, s.node_name) == (DRIVER, "node-a", "node-a")
    dev = s.devices[1]
    assert dev.id == (DRIVER, "node-a", "gpu-1")
    assert dev.attributes["index"] == 1
    assert dev.attributes["model"] == "LATEST-GPU-MODEL"
    assert dev.attributes["gpu.example.com/driverVersion"] == semver.Version.parse("1.0.0")
    assert dev.capacity["memory"] == parse_quantity("80Gi")


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("model", "LATEST-GPU-MODEL"),
        ("gpu.example.com/model", "LATEST-GPU-MODEL"),
        ("driverVersion", semver.Version.parse("1.0.0")),
        ("gpu.example.com/driverVersion", semver.Version.parse("1.0.0")),
        ("other.example.com/model", None),
        ("missing", None),
    ],
    ids=[
        "unqualified-name-is-in-the-driver-domain",
        "qualified-name-finds-an-unqualified-attribute",
        "unqualified-name-finds-a-qualified-attribute",
        "qualified-name-as-written",
        "another-domain-is-another-attribute",
        "absent-attribute",
    ],
)
def test_device_attribute_lookup_as_cel_and_match_attribute_see_it(name, found):
    dev = gpu_slice("node-a", "gpu-0").devices[0]
    assert dev.attribute(name) == found


def test_a_bad_version_attribute_names_the_field():
    raw = make_slice("s", DRIVER).node("n").device("d", v=("version", "1.0")).obj()
    with pytest.raises(ObjectError) as err:
        ResourceSlice.from_dict(raw)
    assert err.value.path == "spec.devices[0].attributes.v.version"
    assert "ResourceSlice s" in str(err.value)


def test_pools_keep_only_the_newest_generation_reaching_the_node():
    old = gpu_slice("node-a", "gpu-0", generation=1)
    new = gpu_slice("node-a", "gpu-0", "gpu-1", generation=2)
    other_node = gpu_slice("node-b", "gpu-9")
    (pool,) = gather_pools([old, new, other_node], "node-a", {})
    assert pool.generation == 2
    assert [d.name for d in pool.devices] == ["gpu-0", "gpu-1"]
    assert not pool.incomplete and not pool.invalid


def test_a_pool_missing_slices_of_its_generation_is_incomplete():
    first = gpu_slice("node-a", "gpu-0", count=2)
    (pool,) = gather_pools([first], "node-a", {})
    assert pool.incomplete


def test_a_device_name_published_twice_makes_the_pool_invalid():
    a = gpu_slice("node-a", "gpu-0", count=2)
    b = gpu_slice("node-a", "gpu-0", "gpu-1", count=2)
    (pool,) = gather_pools([a, b], "node-a", {})
    assert pool.invalid == "duplicate device name gpu-0"


def test_slices_for_all_nodes_by_selector_and_per_device():
    everywhere = ResourceSlice.from_dict(
        make_slice("net", "net.example.com").all_nodes().device("nic-0").obj()
    )
    zone = ResourceSlice.from_dict(
        make_slice("zonal", "z.example.com").node_selector("zone", "a").device("z-0").obj()
    )
    per_device = make_slice("per", "p.example.com").obj()
    per_device["spec"]["perDeviceNodeSelection"] = True
    per_device["spec"]["devices"] = [
        {"name": "p-0", "nodeName": "node-a"},
        {"name": "p-1", "nodeName": "node-b"},
        {"name": "p-2", "allNodes": True},
    ]
    per = ResourceSlice.from_dict(per_device)
    pools = {p.driver: p for p in gather_pools([everywhere, zone, per], "node-a", {"zone": "a"})}
    assert sorted(pools) == ["net.example.com", "p.example.com", "z.example.com"]
    assert [d.name for d in pools["p.example.com"].devices] == ["p-0", "p-2"]
    pools_b = {p.driver for p in gather_pools([everywhere, zone, per], "node-b", {"zone": "b"})}
    assert pools_b == {"net.example.com", "p.example.com"}


def test_device_class_selectors():
    cls = DeviceClass.from_dict(
        make_device_class("gpu.example.com").selector("device.driver == 'gpu.example.com'").obj()
    )
    assert cls.selectors == ("device.driver == 'gpu.example.com'",)


# -- claims -------------------------------------------------------------------------------


def test_claim_requests_get_v1_defaults_when_read():
    raw = (
        make_claim("c", "ns")
        .request("gpu", "gpu.example.com", "device.attributes['gpu.example.com'].index == 0")
        .request("all", "gpu.example.com", mode="All")
        .first_available("either", ("big", "big-gpu"), ("small", "small-gpu"))
        .match_attribute("gpu.example.com/model")
        .obj()
    )
    claim = ResourceClaim.from_dict(raw)
    gpu, all_, either = claim.requests
    assert (gpu.exactly.allocation_mode, gpu.exactly.count) == ("ExactCount", 1)
    assert gpu.exactly.selectors == ("device.attributes['gpu.example.com'].index == 0",)
    assert (all_.exactly.allocation_mode, all_.exactly.count) == ("All", 0)
    assert [s.name for s in either.alternatives] == ["big", "small"]
    assert [s.device_class_name for s in either.alternatives] == ["big-gpu", "small-gpu"]
    assert claim.constraints[0].match_attribute == "gpu.example.com/model"
    assert not claim.allocated


def test_claim_status_allocation_and_consumers():
    raw = (
        make_claim("c", "ns")
        .request("gpu", "gpu.example.com")
        .allocated(("gpu", DRIVER, "node-a", "gpu-0"))
        .reserved_for("pod0", "uid-0")
        .obj()
    )
    claim = ResourceClaim.from_dict(raw)
    assert claim.allocated
    assert [r.id for r in claim.results] == [(DRIVER, "node-a", "gpu-0")]
    assert claim.is_reserved_for("uid-0") and not claim.is_reserved_for("uid-1")
    assert claim.can_be_reserved
    assert claim.key == "ns/c"


# -- claims from templates ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "claim", "expected"),
    [
        ("pod0", "gpu", "pod0-gpu-"),
        ("p" * 50, "gpu-claim-long-name", "p" * 40 + "-" + "gpu-claim-long-"),
        ("p" * 63, "c" * 63, "p" * 28 + "-" + "c" * 28),
    ],
    ids=["short-names-kept-whole", "long-names-cut-in-proportion", "both-at-the-limit"],
)
def test_claim_generate_name(pod, claim, expected):
    assert claim_generate_name(pod, claim) == expected


def test_claim_from_template_as_the_controller_makes_it():
    template = make_claim("one-gpu", "demo").request("gpu", "gpu.example.com").template()
    template["spec"]["metadata"] = {"labels": {"team": "a"}, "annotations": {"note": "x"}}
    pod = make_pod("pod0").namespace("demo").uid("uid-0").resource_claim("gpu", template="one-gpu")
    claim = claim_from_template(pod.raw, "gpu", template)
    meta = claim["metadata"]
    assert meta["generateName"] == "pod0-gpu-"
    assert meta["namespace"] == "demo"
    assert meta["labels"] == {"team": "a"}
    assert meta["annotations"] == {"note": "x", POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "pod0",
            "uid": "uid-0",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert claim["spec"] == template["spec"]["spec"]
    claim["spec"]["devices"]["requests"].clear()
    assert template["spec"]["spec"]["devices"]["requests"], "the template is not shared"


def _claim(name, owner_uid="uid-0", annotation=None):
    builder = make_claim(name, "demo").request("gpu", "gpu.example.com")
    if owner_uid:
        builder.owned_by("pod0", owner_uid)
    if annotation is not None:
        builder.annotate(POD_CLAIM_NAME_ANNOTATION, annotation)
    return ResourceClaim.from_dict(builder.obj())


@pytest.mark.parametrize(
    ("claims", "found"),
    [
        ([_claim("pod0-gpu-x1", annotation="gpu")], "pod0-gpu-x1"),
        ([_claim("pod0-gpu-x1", annotation="other")], None),
        ([_claim("pod0-gpu-x1", owner_uid="uid-9", annotation="gpu")], None),
        ([_claim("pod0-gpu-x1", owner_uid="")], None),
        ([_claim("pod0-gpu")], "pod0-gpu"),
        ([_claim("pod0-gpu-x1")], None),
    ],
    ids=[
        "owned-and-annotated",
        "annotated-for-another-entry",
        "owned-by-another-pod",
        "not-owned",
        "legacy-deterministic-name-without-annotation",
        "no-annotation-and-not-the-legacy-name",
    ],
)
def test_find_pod_claim(claims, found):
    claim = find_pod_claim("pod0", "uid-0", "gpu", claims)
    assert (claim.name if claim else None) == found


def test_resolve_claim_names_from_pod_status():
    pod = (
        make_pod("pod0")
        .namespace("demo")
        .resource_claim("gpu", template="one-gpu")
        .resource_claim("shared", claim="shared-claim")
        .resource_claim("unneeded", template="t")
        .claim_status("gpu", "pod0-gpu-abcde")
        .claim_status("unneeded", None)
        .obj()
    )
    assert pod.containers[0].claims[0].name == "gpu"
    names = claim_names(pod.namespace, pod.name, pod.resource_claims, pod.resource_claim_statuses)
    assert names == ["pod0-gpu-abcde", "shared-claim"]
    resolved = resolve_claim_name(pod.namespace, pod.name, pod.resource_claims[0], {"gpu": "x"})
    assert (resolved.name, resolved.must_check_owner) == ("x", True)


def test_a_template_claim_not_created_yet_is_upstreams_error():
    entry = PodResourceClaim("gpu", resource_claim_template_name="one-gpu")
    with pytest.raises(ClaimNameError) as err:
        resolve_claim_name("demo", "pod0", entry, {})
    assert str(err.value) == 'pod "demo/pod0": ResourceClaim not created yet'
    assert err.value.not_created
    with pytest.raises(ClaimNameError) as err:
        resolve_claim_name("demo", "pod0", PodResourceClaim("gpu"), {})
    assert str(err.value).endswith(ERR_API_UNSUPPORTED)
    assert not err.value.not_created


def test_template_view():
    raw = make_claim("one-gpu", "demo").request("gpu", "gpu.example.com", count=2).template()
    template = ResourceClaimTemplate.from_dict(raw)
    assert template.requests[0].exactly.count == 2
    assert template.claim_spec == raw["spec"]["spec"]


def test_claim_from_a_typed_template_and_a_typed_pod():
    raw = make_claim("one-gpu", "demo").request("gpu", "gpu.example.com").template()
    raw["spec"]["metadata"] = {"labels": {"team": "a"}}
    pod = make_pod("pod0").namespace("demo").uid("uid-0").resource_claim("gpu", template="t")
    typed = claim_from_template(pod.obj(), "gpu", ResourceClaimTemplate.from_dict(raw))
    assert typed == claim_from_template(pod.raw, "gpu", raw)
    claim = dict(typed, metadata={**typed["metadata"], "name": "pod0-gpu-abcde"})
    decoded = ResourceClaim.from_dict(claim)
    assert decoded.is_controlled_by("uid-0")
    assert find_pod_claim("pod0", "uid-0", "gpu", [decoded]) is decoded


def test_allocated_devices_leave_out_admin_access():
    normal = make_claim("a", "ns").request("gpu", "gpu.example.com")
    normal.allocated(("gpu", DRIVER, "p", "gpu-0"))
    admin = make_claim("b", "ns").request("gpu", "gpu.example.com", admin=True)
    admin_raw = admin.allocated(("gpu", DRIVER, "p", "gpu-1")).obj()
    admin_raw["status"]["allocation"]["devices"]["results"][0]["adminAccess"] = True
    pending = make_claim("c", "ns").request("gpu", "gpu.example.com")
    claims = [ResourceClaim.from_dict(o) for o in (normal.obj(), admin_raw, pending.obj())]
    assert allocated_devices(claims) == {(DRIVER, "p", "gpu-0")}


def test_slice_index_gives_each_node_its_pools():
    a = gpu_slice("node-a", "gpu-0")
    b = gpu_slice("node-b", "gpu-0", "gpu-1")
    everywhere = ResourceSlice.from_dict(
        make_slice("net", "net.example.com").all_nodes().device("nic-0").obj()
    )
    index = SliceIndex([a, b, everywhere])
    for node in ("node-a", "node-b", "node-c"):
        expected = gather_pools([a, b, everywhere], node, {})
        assert index.pools(node, {}) == expected
    assert [p.driver for p in index.pools("node-c", {})] == ["net.example.com"]


def test_allocation_node_selector_is_typed():
    raw = make_claim("c", "ns").request("gpu", "gpu.example.com").obj()
    raw["status"] = {
        "allocation": {
            "devices": {"results": []},
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
        }
    }
    claim = ResourceClaim.from_dict(raw)
    assert claim.allocation_node_selector.matches("n1", {})
    assert not claim.allocation_node_selector.matches("n2", {})
