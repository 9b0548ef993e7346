"""Tests for taints and tolerations.

The tables follow upstream's tests: core/v1 toleration_test.go for ToleratesTaint and
the TaintToleration plugin's filter tests for finding the untolerated taint.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.objects.errors import ObjectError
from kubesched.objects.taints import (
    EQUAL,
    EXISTS,
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    Taint,
    Toleration,
    find_untolerated_taint,
    tolerations_tolerate_taint,
)

FILTERED_EFFECTS = frozenset({NO_SCHEDULE, NO_EXECUTE})


def taint(key, value, effect):
    return Taint(key, value, effect)


def tol(key="", operator=EQUAL, value="", effect="", seconds=None):
    return Toleration(key, operator, value, effect, seconds)


TOLERATES_CASES = [
    # core/v1 toleration_test.go TestTolerationToleratesTaint
    pytest.param(
        tol("foo", EXISTS, effect=NO_SCHEDULE),
        taint("foo", "", NO_SCHEDULE),
        True,
        id="same key and effect with Exists tolerates a taint without value",
    ),
    pytest.param(
        tol("foo", EXISTS, effect=NO_SCHEDULE),
        taint("foo", "bar", NO_SCHEDULE),
        True,
        id="same key and effect with Exists tolerates a taint with a value",
    ),
    pytest.param(
        tol("", EXISTS, effect=NO_SCHEDULE),
        taint("foo", "bar", NO_SCHEDULE),
        True,
        id="an empty key with Exists tolerates every key of that effect",
    ),
    pytest.param(
        tol("foo", EQUAL, "bar", NO_SCHEDULE),
        taint("foo", "bar", NO_SCHEDULE),
        True,
        id="same key effect and value with Equal is tolerated",
    ),
    pytest.param(
        tol("foo", EQUAL, "value1", NO_SCHEDULE),
        taint("foo", "value2", NO_SCHEDULE),
        False,
        id="a different value with Equal is not tolerated",
    ),
    pytest.param(
        tol("foo", EQUAL, "bar", NO_SCHEDULE),
        taint("foo", "bar", NO_EXECUTE),
        False,
        id="a different effect is not tolerated",
    ),
    # Cases of the TaintToleration filter tests, one toleration at a time.
    pytest.param(
        tol("dedicated", "", "user1", NO_SCHEDULE),
        taint("dedicated", "user1", NO_SCHEDULE),
        True,
        id="an empty operator means Equal",
    ),
    pytest.param(
        tol("dedicated", EQUAL, "user2", NO_SCHEDULE),
        taint("dedicated", "user1", NO_SCHEDULE),
        False,
        id="a dedicated node of another user is not tolerated",
    ),
    pytest.param(
        tol("foo", EQUAL, "bar", PREFER_NO_SCHEDULE),
        taint("foo", "bar", NO_SCHEDULE),
        False,
        id="key and value match but a non-empty effect differs",
    ),
    pytest.param(
        tol("foo", EQUAL, "bar"),
        taint("foo", "bar", NO_SCHEDULE),
        True,
        id="an empty effect tolerates NoSchedule",
    ),
    # Beyond upstream's tables.
    pytest.param(
        tol("foo", EQUAL, "bar"),
        taint("foo", "bar", NO_EXECUTE),
        True,
        id="an empty effect tolerates NoExecute",
    ),
    pytest.param(
        tol("", EXISTS),
        taint("anything", "at-all", PREFER_NO_SCHEDULE),
        True,
        id="an empty key and effect with Exists tolerates every taint",
    ),
    pytest.param(
        tol("foo", EXISTS),
        taint("bar", "", NO_SCHEDULE),
        False,
        id="Exists still needs the same key",
    ),
    pytest.param(
        tol("foo", EXISTS, "ignored", NO_SCHEDULE),
        taint("foo", "other", NO_SCHEDULE),
        True,
        id="Exists ignores a value set in code",
    ),
    pytest.param(
        tol("foo", EQUAL, "", NO_SCHEDULE),
        taint("foo", "", NO_SCHEDULE),
        True,
        id="Equal with no value tolerates a taint without value",
    ),
    pytest.param(
        tol("foo", EQUAL, "", NO_SCHEDULE),
        taint("foo", "bar", NO_SCHEDULE),
        False,
        id="Equal with no value does not tolerate a taint with a value",
    ),
    pytest.param(
        tol("foo", EQUAL, "Bar", NO_SCHEDULE),
        taint("foo", "bar", NO_SCHEDULE),
        False,
        id="values compare case-sensitively",
    ),
    pytest.param(
        tol("foo", "Gt", "1", NO_SCHEDULE),
        taint("foo", "2", NO_SCHEDULE),
        False,
        id="an operator unknown to release 1.34 tolerates nothing",
    ),
]


@pytest.mark.parametrize(("toleration", "taint_", "want"), TOLERATES_CASES)
def test_toleration_tolerates_taint(toleration, taint_, want):
    assert toleration.tolerates(taint_) is want
    assert tolerations_tolerate_taint([toleration], taint_) is want


UNTOLERATED_CASES = [
    # TaintToleration plugin TestTaintTolerationFilter
    pytest.param(
        [],
        [taint("dedicated", "user1", NO_SCHEDULE)],
        taint("dedicated", "user1", NO_SCHEDULE),
        id="a pod without tolerations does not tolerate a NoSchedule taint",
    ),
    pytest.param(
        [tol("dedicated", "", "user1", NO_SCHEDULE)],
        [taint("dedicated", "user1", NO_SCHEDULE)],
        None,
        id="a pod may use the node dedicated to its user",
    ),
    pytest.param(
        [tol("dedicated", EQUAL, "user2", NO_SCHEDULE)],
        [taint("dedicated", "user1", NO_SCHEDULE)],
        taint("dedicated", "user1", NO_SCHEDULE),
        id="a pod may not use the node dedicated to another user",
    ),
    pytest.param(
        [tol("foo", EXISTS, effect=NO_SCHEDULE)],
        [taint("foo", "bar", NO_SCHEDULE)],
        None,
        id="an Exists toleration tolerates the taint",
    ),
    pytest.param(
        [tol("dedicated", EQUAL, "user2", NO_SCHEDULE), tol("foo", EXISTS, effect=NO_SCHEDULE)],
        [taint("dedicated", "user2", NO_SCHEDULE), taint("foo", "bar", NO_SCHEDULE)],
        None,
        id="every taint is tolerated by one of several tolerations",
    ),
    pytest.param(
        [tol("foo", EQUAL, "bar", PREFER_NO_SCHEDULE)],
        [taint("foo", "bar", NO_SCHEDULE)],
        taint("foo", "bar", NO_SCHEDULE),
        id="a toleration for another effect does not help",
    ),
    pytest.param(
        [tol("foo", EQUAL, "bar")],
        [taint("foo", "bar", NO_SCHEDULE)],
        None,
        id="a toleration without effect tolerates NoSchedule",
    ),
    pytest.param(
        [tol("dedicated", EQUAL, "user2", NO_SCHEDULE)],
        [taint("dedicated", "user1", PREFER_NO_SCHEDULE)],
        None,
        id="a PreferNoSchedule taint is not filtered on",
    ),
    pytest.param(
        [],
        [taint("dedicated", "user1", PREFER_NO_SCHEDULE)],
        None,
        id="a pod without tolerations passes a node with only PreferNoSchedule taints",
    ),
    # Beyond upstream's tables.
    pytest.param(
        [tol("a", EXISTS)],
        [taint("a", "", NO_SCHEDULE), taint("b", "1", NO_EXECUTE), taint("c", "2", NO_SCHEDULE)],
        taint("b", "1", NO_EXECUTE),
        id="the first untolerated taint is reported",
    ),
    pytest.param(
        [tol("node.kubernetes.io/not-ready", EXISTS, effect=NO_EXECUTE, seconds=300)],
        [taint("node.kubernetes.io/not-ready", "", NO_EXECUTE)],
        None,
        id="the default not-ready toleration tolerates the not-ready taint",
    ),
    pytest.param([], [], None, id="a node without taints has nothing untolerated"),
]


@pytest.mark.parametrize(("tolerations", "taints", "want"), UNTOLERATED_CASES)
def test_find_untolerated_taint(tolerations, taints, want):
    assert find_untolerated_taint(taints, tolerations, FILTERED_EFFECTS) == want


def test_find_untolerated_taint_only_looks_at_the_given_effects():
    taints = [taint("a", "", NO_SCHEDULE), taint("b", "", PREFER_NO_SCHEDULE)]
    assert find_untolerated_taint(taints, [], {PREFER_NO_SCHEDULE}) == taints[1]
    assert find_untolerated_taint(taints, [], ()) is None


@pytest.mark.parametrize(
    ("taint_", "text"),
    [
        pytest.param(taint("k", "v", NO_SCHEDULE), "k=v:NoSchedule", id="key value and effect"),
        pytest.param(taint("k", "", NO_EXECUTE), "k:NoExecute", id="key and effect"),
        pytest.param(taint("k", "v", ""), "k=v:", id="key and value without effect"),
        pytest.param(taint("k", "", ""), "k", id="a bare key"),
    ],
)
def test_taint_str(taint_, text):
    assert str(taint_) == text


def test_taint_from_dict():
    decoded = Taint.from_dict(
        {
            "key": "node.kubernetes.io/unreachable",
            "effect": NO_EXECUTE,
            "timeAdded": "2024-01-01T00:00:00Z",
        }
    )
    assert decoded == Taint("node.kubernetes.io/unreachable", "", NO_EXECUTE)


def test_toleration_from_dict():
    assert Toleration.from_dict({"key": "k", "value": "v"}) == Toleration("k", EQUAL, "v", "", None)
    assert Toleration.from_dict({"operator": EXISTS}) == Toleration("", EXISTS, "", "", None)
    assert Toleration.from_dict(
        {"key": "k", "operator": EXISTS, "effect": NO_EXECUTE, "tolerationSeconds": 30}
    ) == Toleration("k", EXISTS, "", NO_EXECUTE, 30)


def test_an_empty_operator_is_stored_as_equal():
    assert Toleration("k", "", "v").operator == EQUAL
    assert Toleration.from_dict({"key": "k", "operator": None}).operator == EQUAL


def test_taints_and_tolerations_are_hashable_and_picklable():
    toleration = Toleration("k", EXISTS, "", NO_EXECUTE, 5)
    assert pickle.loads(pickle.dumps(toleration)) == toleration
    assert len({taint("k", "v", NO_SCHEDULE), taint("k", "v", NO_SCHEDULE)}) == 1


INVALID_CASES = [
    # Taint
    pytest.param(
        Taint.from_dict,
        {"key": "k", "value": "v"},
        "effect",
        "Required value",
        id="a taint needs an effect",
    ),
    pytest.param(
        Taint.from_dict,
        {"key": "k", "effect": "NoScheduleNoAdmit"},
        "effect",
        'Unsupported value: "NoScheduleNoAdmit": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        id="a taint effect must be known",
    ),
    pytest.param(
        Taint.from_dict,
        {"effect": NO_SCHEDULE},
        "key",
        'Invalid value: "": name part must be non-empty',
        id="a taint needs a key",
    ),
    pytest.param(
        Taint.from_dict,
        {"key": "a b", "effect": NO_SCHEDULE},
        "key",
        'Invalid value: "a b": name part must consist of',
        id="a taint key must be a qualified name",
    ),
    pytest.param(
        Taint.from_dict,
        {"key": "k", "value": "a b", "effect": NO_SCHEDULE},
        "value",
        'Invalid value: "a b": a valid label must be',
        id="a taint value must be a label value",
    ),
    pytest.param(
        Taint.from_dict,
        {"key": "k", "effect": NO_SCHEDULE, "timeAdded": 5},
        "timeAdded",
        'Invalid type: got "integer", expected "string"',
        id="timeAdded must be a timestamp string",
    ),
    pytest.param(
        Taint.from_dict,
        {"key": "k", "effects": NO_SCHEDULE},
        "effects",
        'unknown field "effects"',
        id="a taint refuses a misspelt field",
    ),
    pytest.param(
        Taint.from_dict,
        ["k"],
        "",
        'Invalid type: got "array", expected "object"',
        id="a taint must be an object",
    ),
    # Toleration
    pytest.param(
        Toleration.from_dict,
        {"operator": EQUAL, "value": "v"},
        "operator",
        'Invalid value: "Equal": operator must be Exists when `key` is empty, '
        'which means "match all values and all keys"',
        id="an empty key needs Exists",
    ),
    pytest.param(
        Toleration.from_dict,
        {},
        "operator",
        'Invalid value: "": operator must be Exists when `key` is empty',
        id="an empty toleration is refused as its operator defaults to Equal",
    ),
    pytest.param(
        Toleration.from_dict,
        {"key": "k", "effect": NO_SCHEDULE, "tolerationSeconds": 10},
        "effect",
        "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
        id="tolerationSeconds need NoExecute",
    ),
    pytest.param(
        Toleration.from_dict,
        {"key": "k", "operator": EXISTS, "value": "v"},
        "operator",
        "Invalid value: \"Exists\": value must be empty when `operator` is 'Exists'",
        id="Exists must have no value",
    ),
    pytest.param(
        Toleration.from_dict,
        {"key": "k", "operator": "Gt", "value": "1"},
        "operator",
        'Unsupported value: "Gt": supported values: "Equal", "Exists"',
        id="release 1.34 knows only Equal and Exists",
    ),
    pytest.param(
        Toleration.from_dict,
        {"key": "k", "operator": "exists"},
        "operator",
        'Unsupported value: "exists": supported values: "Equal", "Exists"',
        id="operators are case-sensitive",
    ),
    pytest.param(
        Toleration.from_dict,
        {"key": "k", "value": "a b"},
        "value",
        'Invalid value: "a b": a valid label must be',
        id="an Equal value must be a label value",
    ),
    pytest.param(
        Toleration.from_dict,
        {"key": "-k", "operator": EXISTS},
        "key",
        'Invalid value: "-k": name part must consist of',
        id="a toleration key must be a qualified name",
    ),
    pytest.param(
        Toleration.from_dict,
        {"key": "k", "operator": EXISTS, "effect": "NoExec"},
        "effect",
        'Unsupported value: "NoExec": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        id="a toleration effect must be known",
    ),
    pytest.param(
        Toleration.from_dict,
        {"key": "k", "operator": EXISTS, "effect": NO_EXECUTE, "tolerationSeconds": "60"},
        "tolerationSeconds",
        'Invalid type: got "string", expected "integer"',
        id="tolerationSeconds must be an integer",
    ),
    pytest.param(
        Toleration.from_dict,
        {"key": "k", "operator": EXISTS, "effect": NO_EXECUTE, "tolerationSeconds": True},
        "tolerationSeconds",
        'Invalid type: got "boolean", expected "integer"',
        id="tolerationSeconds is not a boolean",
    ),
    pytest.param(
        Toleration.from_dict,
        {"key": 3, "operator": EXISTS},
        "key",
        'Invalid type: got "integer", expected "string"',
        id="a toleration key must be a string",
    ),
    pytest.param(
        Toleration.from_dict,
        {"key": "k", "tolerationseconds": 5},
        "tolerationseconds",
        'unknown field "tolerationseconds"',
        id="a toleration refuses a misspelt field",
    ),
]


@pytest.mark.parametrize(("decode", "data", "path", "message"), INVALID_CASES)
def test_invalid_input(decode, data, path, message):
    with pytest.raises(ObjectError) as caught:
        decode(data)
    assert caught.value.path == path
    assert caught.value.message.startswith(message), caught.value.message


# --- Properties ------------------------------------------------------------------------

keys = st.sampled_from(["a", "b", "example.com/c"])
values = st.sampled_from(["", "1", "x"])
effects = st.sampled_from([NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE])
taints = st.builds(Taint, keys, values, effects)
tolerations = st.builds(
    Toleration,
    st.sampled_from(["", "a", "b", "example.com/c"]),
    st.sampled_from([EQUAL, EXISTS]),
    values,
    st.sampled_from(["", NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE]),
)


@given(taint_=taints)
def test_an_empty_exists_toleration_tolerates_every_taint(taint_):
    assert Toleration("", EXISTS).tolerates(taint_)


@given(toleration=tolerations, taint_=taints)
def test_exists_tolerates_whatever_equal_tolerates(toleration, taint_):
    if toleration.operator == EQUAL and toleration.tolerates(taint_):
        relaxed = Toleration(toleration.key, EXISTS, "", toleration.effect)
        assert relaxed.tolerates(taint_)


@given(toleration=tolerations, taint_=taints)
def test_a_toleration_with_an_effect_only_tolerates_that_effect(toleration, taint_):
    if toleration.effect and toleration.tolerates(taint_):
        assert taint_.effect == toleration.effect


@given(
    node_taints=st.lists(taints, max_size=4),
    pod_tolerations=st.lists(tolerations, max_size=3),
)
def test_no_untolerated_taint_means_every_filtered_taint_is_tolerated(node_taints, pod_tolerations):
    found = find_untolerated_taint(node_taints, pod_tolerations, FILTERED_EFFECTS)
    filtered = [t for t in node_taints if t.effect in FILTERED_EFFECTS]
    if found is None:
        assert all(tolerations_tolerate_taint(pod_tolerations, t) for t in filtered)
    else:
        assert found in filtered
        assert not tolerations_tolerate_taint(pod_tolerations, found)
