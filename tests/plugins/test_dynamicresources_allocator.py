"""The allocator on one node, after upstream's allocator_test.go: counts, All,
matchAttribute constraints with backtracking, firstAvailable, admin access, devices in
use, pool generations, incomplete pools, CEL selectors, and the node selector written
to the allocation."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.objects.dra.claims import ResourceClaim
from kubesched.objects.dra.slices import DeviceClass, ResourceSlice, SliceIndex
from kubesched.plugins.dynamicresources.allocator import AllocationError, Allocator
from kubesched.testing.dra import make_claim, make_device_class, make_slice

DRIVER = "driver-a"
NODE = "node-1"
CLASS = "class-a"


def allocate(
    claims: list[dict[str, Any]],
    slices: list[dict[str, Any]],
    classes: list[dict[str, Any]] | None = None,
    allocated: set[tuple[str, str, str]] | None = None,
    node: str = NODE,
    labels: dict[str, str] | None = None,
) -> list[list[tuple[str, str]]] | None:
    """(request, device) per claim, or None."""
    typed_classes = {
        c.name: c
        for c in (DeviceClass.from_dict(x) for x in (classes or [make_device_class(CLASS).obj()]))
    }
    index = SliceIndex(ResourceSlice.from_dict(s) for s in slices)
    allocator = Allocator(
        [ResourceClaim.from_dict(c) for c in claims],
        allocated or set(),
        typed_classes.get,
        index.pools,
    )
    result, _ = allocator.allocate(node, labels or {})
    if result is None:
        return None
    return [[(r.request, r.device) for r in a.results] for a in result]


def gpus(*devices: tuple[str, dict[str, Any]], node: str = NODE, pool: str = "pool-1") -> Any:
    wrapper = make_slice(f"{pool}-slice", DRIVER).node(node).pool(pool)
    for name, attrs in devices:
        wrapper.device(name, **attrs)
    return wrapper


def claim(name: str = "claim-0") -> Any:
    return make_claim(name, "default").uid(f"uid-{name}")


def test_exact_count_takes_the_first_free_devices() -> None:
    s = gpus(("d0", {}), ("d1", {}), ("d2", {})).obj()
    c = claim().request("req-0", CLASS, count=2).obj()
    assert allocate([c], [s]) == [[("req-0", "d0"), ("req-0", "d1")]]


def test_devices_in_use_are_skipped() -> None:
    s = gpus(("d0", {}), ("d1", {})).obj()
    c = claim().request("req-0", CLASS).obj()
    assert allocate([c], [s], allocated={(DRIVER, "pool-1", "d0")}) == [[("req-0", "d1")]]
    assert (
        allocate([c], [s], allocated={(DRIVER, "pool-1", "d0"), (DRIVER, "pool-1", "d1")}) is None
    )


def test_two_claims_of_one_pod_never_share_a_device() -> None:
    s = gpus(("d0", {}), ("d1", {})).obj()
    a = claim("a").request("r", CLASS).obj()
    b = claim("b").request("r", CLASS).obj()
    c = claim("c").request("r", CLASS).obj()
    assert allocate([a, b], [s]) == [[("r", "d0")], [("r", "d1")]]
    assert allocate([a, b, c], [s]) is None


def test_all_mode_takes_every_matching_device_and_needs_at_least_one() -> None:
    s = gpus(("d0", {"model": "a"}), ("d1", {"model": "b"}), ("d2", {"model": "a"})).obj()
    c = claim().request("r", CLASS, "device.attributes['driver-a'].model == 'a'", mode="All").obj()
    assert allocate([c], [s]) == [[("r", "d0"), ("r", "d2")]]
    none = claim().request("r", CLASS, "device.attributes['driver-a'].model == 'z'", mode="All")
    assert allocate([none.obj()], [s]) is None
    # All with one of them in use: no solution.
    assert allocate([c], [s], allocated={(DRIVER, "pool-1", "d2")}) is None


def test_match_attribute_backtracks_to_find_devices_that_agree() -> None:
    s = gpus(
        ("d0", {"numa": 0}),
        ("d1", {"numa": 1}),
        ("d2", {"numa": 1}),
    ).obj()
    c = claim().request("a", CLASS).request("b", CLASS).match_attribute(f"{DRIVER}/numa").obj()
    # d0 is tried first for "a", no partner for "b"; backtracking picks d1 and d2.
    assert allocate([c], [s]) == [[("a", "d1"), ("b", "d2")]]


def test_match_attribute_limited_to_named_requests() -> None:
    s = gpus(("d0", {"numa": 0}), ("d1", {"numa": 1}), ("d2", {})).obj()
    c = (
        claim()
        .request("a", CLASS)
        .request("b", CLASS)
        .request("c", CLASS)
        .match_attribute(f"{DRIVER}/numa", "a", "b")
        .obj()
    )
    assert allocate([c], [s]) is None  # a and b cannot agree: 0 and 1
    s2 = gpus(("d0", {"numa": 0}), ("d1", {"numa": 0}), ("d2", {})).obj()
    assert allocate([c], [s2]) == [[("a", "d0"), ("b", "d1"), ("c", "d2")]]


def test_match_attribute_with_all_mode_that_cannot_agree_is_an_error() -> None:
    s = gpus(("d0", {"numa": 0}), ("d1", {"numa": 1})).obj()
    c = claim().request("r", CLASS, mode="All").match_attribute(f"{DRIVER}/numa").obj()
    with pytest.raises(AllocationError) as info:
        allocate([c], [s])
    assert str(info.value) == (
        "claim default/claim-0, request r: cannot add device driver-a/pool-1/d1 because a "
        "claim constraint would not be satisfied"
    )


def test_first_available_falls_back_in_order() -> None:
    s = gpus(("d0", {"mem": 16}), ("d1", {"mem": 16})).obj()
    big = make_device_class("big").selector("device.attributes['driver-a'].mem >= 80").obj()
    small = make_device_class(CLASS).obj()
    c = claim().first_available("gpu", ("large", "big"), ("small", CLASS)).obj()
    assert allocate([c], [s], classes=[big, small]) == [[("gpu/small", "d0")]]


def test_admin_access_may_use_a_device_in_use_but_not_twice_in_one_claim() -> None:
    s = gpus(("d0", {})).obj()
    c = claim().request("r", CLASS, admin=True).obj()
    assert allocate([c], [s], allocated={(DRIVER, "pool-1", "d0")}) == [[("r", "d0")]]
    two = claim().request("r", CLASS, admin=True, count=2).obj()
    assert allocate([two], [s]) is None


def test_only_the_newest_pool_generation_counts() -> None:
    old = make_slice("old", DRIVER).node(NODE).pool("pool-1", generation=1).device("old-0").obj()
    new = make_slice("new", DRIVER).node(NODE).pool("pool-1", generation=2).device("new-0").obj()
    c = claim().request("r", CLASS).obj()
    assert allocate([c], [old, new]) == [[("r", "new-0")]]


def test_incomplete_pool_is_not_used_and_all_refuses_it() -> None:
    part = make_slice("part", DRIVER).node(NODE).pool("pool-1", slices=2).device("d0").obj()
    c = claim().request("r", CLASS).obj()
    assert allocate([c], [part]) is None
    every = claim().request("r", CLASS, mode="All").obj()
    with pytest.raises(AllocationError) as info:
        allocate([every], [part])
    assert str(info.value) == (
        "claim default/claim-0, request r: asks for all devices, but resource pool "
        "driver-a/pool-1 is currently being updated"
    )


def test_slices_of_other_nodes_and_node_selectors() -> None:
    other = gpus(("d0", {}), node="node-2").obj()
    c = claim().request("r", CLASS).obj()
    assert allocate([c], [other]) is None
    labelled = make_slice("net", DRIVER).node_selector("rack", "r1").pool("net").device("n0").obj()
    assert allocate([c], [labelled], labels={"rack": "r1"}) == [[("r", "n0")]]
    assert allocate([c], [labelled], labels={"rack": "r2"}) is None


def test_more_than_32_devices_is_refused() -> None:
    s = gpus(*((f"d{i}", {}) for i in range(40))).obj()
    c = claim().request("r", CLASS, count=33).obj()
    with pytest.raises(AllocationError) as info:
        allocate([c], [s])
    assert str(info.value) == (
        "claim default/claim-0: number of requested devices 33 exceeds the claim limit of 32"
    )


def test_node_selector_of_the_allocation() -> None:
    net = make_slice("net", DRIVER).node_selector("rack", "r1").pool("net").device("n0").obj()
    c = ResourceClaim.from_dict(claim().request("r", CLASS).obj())
    classes = {CLASS: DeviceClass.from_dict(make_device_class(CLASS).obj())}
    index = SliceIndex([ResourceSlice.from_dict(net)])
    result, _ = Allocator([c], set(), classes.get, index.pools).allocate(NODE, {"rack": "r1"})
    assert result is not None
    assert result[0].node_selector == {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}
        ]
    }
    everywhere = make_slice("all", DRIVER).all_nodes().pool("all").device("a0").obj()
    index = SliceIndex([ResourceSlice.from_dict(everywhere)])
    result, _ = Allocator([c], set(), classes.get, index.pools).allocate(NODE, {})
    assert result is not None and result[0].node_selector is None


def test_unsatisfied_names_the_request_and_counts() -> None:
    s = gpus(("d0", {}), ("d1", {})).obj()
    c = ResourceClaim.from_dict(claim().request("gpus", CLASS, count=3).obj())
    classes = {CLASS: DeviceClass.from_dict(make_device_class(CLASS).obj())}
    index = SliceIndex([ResourceSlice.from_dict(s)])
    allocator = Allocator([c], {(DRIVER, "pool-1", "d1")}, classes.get, index.pools)
    result, why = allocator.allocate(NODE, {})
    assert result is None
    assert str(why) == (
        "claim default/claim-0, request gpus: wants 3 device(s), 2 on the node match its "
        "selectors, 1 of them in use"
    )


def test_class_config_and_claim_config_go_into_the_allocation() -> None:
    s = gpus(("d0", {})).obj()
    klass = make_device_class(CLASS).obj()
    klass["spec"]["config"] = [{"opaque": {"driver": DRIVER, "parameters": {"a": 1}}}]
    raw = claim().request("r", CLASS).obj()
    raw["spec"]["devices"]["config"] = [
        {"requests": ["r"], "opaque": {"driver": DRIVER, "parameters": {"b": 2}}}
    ]
    c = ResourceClaim.from_dict(raw)
    classes = {CLASS: DeviceClass.from_dict(klass)}
    index = SliceIndex([ResourceSlice.from_dict(s)])
    result, _ = Allocator([c], set(), classes.get, index.pools).allocate(NODE, {})
    assert result is not None
    assert result[0].to_dict()["devices"]["config"] == [
        {"source": "FromClass", "opaque": {"driver": DRIVER, "parameters": {"a": 1}}},
        {"source": "FromClaim", "opaque": {"driver": DRIVER, "parameters": {"b": 2}}},
    ]
