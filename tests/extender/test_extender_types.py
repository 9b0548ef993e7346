"""Wire types: the bytes Go's encoding/json writes, and Go's rules when reading.

The golden strings are those of upstream's ``extender/v1/types_test.go``
(TestCompatibility): each value encodes to exactly that JSON, and the JSON lowercased
decodes back to the same value, since Go matches field names case-insensitively.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.extender import types as t
from kubesched.extender.errors import WireError

GO_POD = '{"metadata":{"name":"podname","creationTimestamp":null},"spec":{"containers":null},"status":{}}'
GO_NODE = (
    '{"metadata":{"name":"nodename","creationTimestamp":null},"spec":{},"status":'
    '{"daemonEndpoints":{"kubeletEndpoint":{"Port":0}},"nodeInfo":{"machineID":"","systemUUID":"",'
    '"bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"","kubeletVersion":"",'
    '"kubeProxyVersion":"","operatingSystem":"","architecture":""}}}'
)
POD = json.loads(GO_POD)
NODE = json.loads(GO_NODE)
META_VICTIMS = {"foo": {"Pods": [{"UID": "myuid"}], "NumPDBViolations": 1}}

# (id, value, encoder, decoder, Go's json.Marshal output) — upstream's TestCompatibility.
GOLDEN: list[tuple[str, Any, Callable[[Any], bytes], Callable[[object], Any], str]] = [
    (
        "ExtenderPreemptionResult",
        t.ExtenderPreemptionResult(NodeNameToMetaVictims=META_VICTIMS),  # type: ignore[typeddict-item]
        t.encode_preemption_result,
        t.decode_preemption_result,
        '{"NodeNameToMetaVictims":{"foo":{"Pods":[{"UID":"myuid"}],"NumPDBViolations":1}}}',
    ),
    (
        "ExtenderPreemptionArgs",
        t.ExtenderPreemptionArgs(
            Pod=POD,
            NodeNameToVictims={"foo": {"Pods": [POD], "NumPDBViolations": 1}},
            NodeNameToMetaVictims=META_VICTIMS,  # type: ignore[typeddict-item]
        ),
        t.encode_preemption_args,
        t.decode_preemption_args,
        f'{{"Pod":{GO_POD},"NodeNameToVictims":{{"foo":{{"Pods":[{GO_POD}],"NumPDBViolations":1}}}},'
        '"NodeNameToMetaVictims":{"foo":{"Pods":[{"UID":"myuid"}],"NumPDBViolations":1}}}',
    ),
    (
        "ExtenderArgs",
        t.ExtenderArgs(Pod=POD, Nodes={"metadata": {}, "items": [NODE]}, NodeNames=["node1"]),
        t.encode_extender_args,
        t.decode_extender_args,
        f'{{"Pod":{GO_POD},"Nodes":{{"metadata":{{}},"items":[{GO_NODE}]}},"NodeNames":["node1"]}}',
    ),
    (
        # Upstream's case predates FailedAndUnresolvableNodes; Go writes nil maps as null.
        "ExtenderFilterResult",
        t.filter_result(
            nodes={"metadata": {}, "items": [NODE]},
            node_names=["node1"],
            failed={"foo": "bar"},
            error="myerror",
        ),
        t.encode_filter_result,
        t.decode_filter_result,
        f'{{"Nodes":{{"metadata":{{}},"items":[{GO_NODE}]}},"NodeNames":["node1"],'
        '"FailedNodes":{"foo":"bar"},"FailedAndUnresolvableNodes":null,"Error":"myerror"}',
    ),
    (
        "ExtenderBindingArgs",
        t.ExtenderBindingArgs(
            PodName="mypodname", PodNamespace="mypodnamespace", PodUID="mypoduid", Node="mynode"
        ),
        t.encode_binding_args,
        t.decode_binding_args,
        '{"PodName":"mypodname","PodNamespace":"mypodnamespace","PodUID":"mypoduid","Node":"mynode"}',
    ),
    (
        "ExtenderBindingResult",
        t.ExtenderBindingResult(Error="myerror"),
        t.encode_binding_result,
        t.decode_binding_result,
        '{"Error":"myerror"}',
    ),
    (
        "HostPriorityList",
        [t.HostPriority(Host="myhost", Score=1)],
        t.encode_host_priority_list,
        t.decode_host_priority_list,
        '[{"Host":"myhost","Score":1}]',
    ),
]


@pytest.mark.parametrize(
    ("value", "encode", "decode", "wire"), [g[1:] for g in GOLDEN], ids=[g[0] for g in GOLDEN]
)
def test_encodes_as_go_and_decodes_back(value: Any, encode: Any, decode: Any, wire: str) -> None:
    assert encode(value) == wire.encode()
    assert decode(json.loads(wire)) == value


@pytest.mark.parametrize(
    ("value", "encode", "decode", "wire"), [g[1:] for g in GOLDEN], ids=[g[0] for g in GOLDEN]
)
def test_lowercased_json_decodes_to_the_same_fields(
    value: Any, encode: Any, decode: Any, wire: str
) -> None:
    lowered = decode(json.loads(wire.lower()))
    # Every extender field is found under its lowercase name and written back under
    # Go's; embedded Kubernetes objects pass through as they came (here, lowercased).
    assert encode(lowered).lower() == wire.lower().encode()
    top = json.loads(encode(lowered))
    assert list(top if isinstance(top, dict) else top[0]) == list(
        json.loads(wire) if wire.startswith("{") else json.loads(wire)[0]
    )
    if "podname" not in wire and "nodename" not in wire:
        assert lowered == value


ZERO = [
    pytest.param(
        t.decode_extender_args,
        t.encode_extender_args,
        '{"Pod":null,"Nodes":null,"NodeNames":null}',
        id="args",
    ),
    pytest.param(
        t.decode_filter_result,
        t.encode_filter_result,
        '{"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":""}',
        id="filter-result",
    ),
    pytest.param(
        t.decode_binding_result, t.encode_binding_result, '{"Error":""}', id="binding-result"
    ),
    pytest.param(
        t.decode_preemption_result,
        t.encode_preemption_result,
        '{"NodeNameToMetaVictims":null}',
        id="preemption-result",
    ),
    pytest.param(
        t.decode_binding_args,
        t.encode_binding_args,
        '{"PodName":"","PodNamespace":"","PodUID":"","Node":""}',
        id="binding-args",
    ),
]


@pytest.mark.parametrize(("decode", "encode", "wire"), ZERO)
def test_empty_object_is_the_zero_value_and_every_field_is_written(
    decode: Any, encode: Any, wire: str
) -> None:
    assert encode(decode({})) == wire.encode()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param({"nodes": {"items": []}, "nodenames": ["a"]}, ([], ["a"]), id="lowercase"),
        pytest.param({"NODES": {"ITEMS": []}, "NodeNames": ["a"]}, ([], ["a"]), id="uppercase"),
        pytest.param({"Nodes": {"items": None}, "NodeNames": None}, (None, None), id="null-items"),
        pytest.param(
            {"NodeNames": ["a"], "nodenames": ["b"]}, (None, ["b"]), id="last-of-two-spellings-wins"
        ),
        pytest.param(
            {"NodeNames": ["a"], "Unknown": 1, "pod_name": "x"},
            (None, ["a"]),
            id="unknown-fields-ignored",
        ),
        pytest.param({"NodeName\u017fs": ["a"]}, (None, None), id="long-s-is-not-a-plain-s-here"),
    ],
)
def test_extender_args_field_matching(raw: dict[str, Any], expected: tuple[Any, Any]) -> None:
    args = t.decode_extender_args(raw)
    items = None if args["Nodes"] is None else args["Nodes"]["items"]
    assert (items, args["NodeNames"]) == expected


def test_long_s_folds_to_s_as_in_go() -> None:
    # Go's EqualFold folds U+017F (long s) to "s", so this key fills NodeNames.
    args = t.decode_extender_args({"NodeName\u017f": ["a"]})
    assert args["NodeNames"] == ["a"]


@pytest.mark.parametrize(
    ("decode", "raw", "message"),
    [
        pytest.param(
            t.decode_extender_args,
            [],
            "ExtenderArgs: expected a JSON object, got array",
            id="args-not-object",
        ),
        pytest.param(
            t.decode_extender_args,
            {"Pod": "x"},
            "ExtenderArgs.Pod: expected a JSON object, got string",
            id="pod-string",
        ),
        pytest.param(
            t.decode_extender_args,
            {"Nodes": []},
            "ExtenderArgs.Nodes: expected a JSON object, got array",
            id="nodes-array",
        ),
        pytest.param(
            t.decode_extender_args,
            {"Nodes": {"items": {}}},
            "ExtenderArgs.Nodes.items: expected an array, got object",
            id="items-object",
        ),
        pytest.param(
            t.decode_extender_args,
            {"Nodes": {"items": [1]}},
            "ExtenderArgs.Nodes.items[0]: expected a Node object, got number",
            id="item-number",
        ),
        pytest.param(
            t.decode_extender_args,
            {"NodeNames": ["a", 2]},
            "ExtenderArgs.NodeNames[1]: expected a string, got number",
            id="name-number",
        ),
        pytest.param(
            t.decode_filter_result,
            {"FailedNodes": {"n": 1}},
            "ExtenderFilterResult.FailedNodes[n]: expected a string, got number",
            id="failed-reason-number",
        ),
        pytest.param(
            t.decode_filter_result,
            {"error": 5},
            "ExtenderFilterResult.Error: expected a string, got number",
            id="error-number",
        ),
        pytest.param(
            t.decode_host_priority_list,
            {},
            "HostPriorityList: expected an array, got object",
            id="priorities-object",
        ),
        pytest.param(
            t.decode_host_priority_list,
            [{"Host": "a", "Score": 1.5}],
            "HostPriorityList[0].Score: expected an integer, got 1.5",
            id="score-fraction",
        ),
        pytest.param(
            t.decode_host_priority_list,
            [{"Host": "a", "Score": 1.0}],
            "HostPriorityList[0].Score: expected an integer, got 1.0",
            id="score-float-as-go",
        ),
        pytest.param(
            t.decode_host_priority_list,
            [{"Host": "a", "Score": True}],
            "HostPriorityList[0].Score: expected an integer, got bool",
            id="score-bool",
        ),
        pytest.param(
            t.decode_host_priority_list,
            [{"Score": 2**63}],
            "HostPriorityList[0].Score: 9223372036854775808 overflows int64",
            id="score-overflow",
        ),
        pytest.param(
            t.decode_preemption_result,
            {"NodeNameToMetaVictims": {"n": {"Pods": [3]}}},
            "ExtenderPreemptionResult.NodeNameToMetaVictims[n].Pods[0]: expected a JSON object, got number",
            id="meta-pod-number",
        ),
    ],
)
def test_malformed_input_names_the_field(decode: Any, raw: object, message: str) -> None:
    with pytest.raises(WireError) as info:
        decode(raw)
    assert str(info.value) == message


def test_null_fields_keep_go_zero_values() -> None:
    assert t.decode_binding_args({"PodName": None, "node": "n"}) == t.ExtenderBindingArgs(
        PodName="", PodNamespace="", PodUID="", Node="n"
    )
    assert t.decode_host_priority_list([None, {"host": "h", "score": None}]) == [
        {"Host": "", "Score": 0},
        {"Host": "h", "Score": 0},
    ]
    assert t.decode_host_priority_list(None) is None
    assert t.decode_filter_result({"FailedNodes": {"n": None}})["FailedNodes"] == {"n": ""}


@pytest.mark.parametrize(
    ("text", "wire"),
    [
        pytest.param("a<b>&c", '"a\\u003cb\\u003e\\u0026c"', id="html-characters-escaped"),
        pytest.param("line\u2028sep\u2029", '"line\\u2028sep\\u2029"', id="js-separators-escaped"),
        pytest.param("Zürich 東京", '"Zürich 東京"', id="other-unicode-raw-utf8"),
        pytest.param('q"\\\n\t\x01', '"q\\"\\\\\\n\\t\\u0001"', id="control-characters"),
    ],
)
def test_strings_escape_as_go(text: str, wire: str) -> None:
    assert (
        t.encode_binding_result(t.ExtenderBindingResult(Error=text))
        == f'{{"Error":{wire}}}'.encode()
    )


def test_maps_are_written_with_sorted_keys() -> None:
    result = t.filter_result(failed={"b": "x", "a": "y", "B": "z"}, unresolvable={})
    assert t.encode_filter_result(result) == (
        b'{"Nodes":null,"NodeNames":null,"FailedNodes":{"B":"z","a":"y","b":"x"},'
        b'"FailedAndUnresolvableNodes":{},"Error":""}'
    )


def test_nil_list_and_empty_list_differ_as_in_go() -> None:
    assert t.encode_host_priority_list(None) == b"null"
    assert t.encode_host_priority_list([]) == b"[]"


def test_body_that_is_not_json_is_a_wire_error() -> None:
    with pytest.raises(WireError, match=r"^filter request: body is not valid JSON: "):
        t.loads(b"{nope", "filter request")
