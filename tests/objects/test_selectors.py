"""Tests for label selectors and node selectors.

The matching tables follow upstream's tests (apimachinery labels/selector_test.go and
component-helpers nodeaffinity_test.go), restated as the dicts a manifest holds.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.objects.errors import ObjectError
from kubesched.objects.selectors import (
    DOES_NOT_EXIST,
    EXISTS,
    GT,
    IN,
    LT,
    NOT_IN,
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    Requirement,
    selector_from_set,
)


def expr(key, operator, *values):
    """A matchExpressions entry as it appears in a manifest."""
    entry = {"key": key, "operator": operator}
    if values:
        entry["values"] = list(values)
    return entry


def selector(*requirements):
    """A label selector built in code, for operators metav1.LabelSelector does not allow."""
    return LabelSelector(tuple(requirements))


# --- LabelSelector.matches ---------------------------------------------------------

LABEL_SELECTOR_CASES = [
    # labels/selector_test.go TestSelectorMatches
    pytest.param({}, {"x": "y"}, True, id="an empty selector matches any labels"),
    pytest.param({}, {}, True, id="an empty selector matches an empty label set"),
    pytest.param({"matchLabels": {"x": "y"}}, {"x": "y"}, True, id="x=y matches x=y"),
    pytest.param(
        {"matchLabels": {"x": "y", "z": "w"}},
        {"x": "y", "z": "w"},
        True,
        id="two matchLabels match when both labels are present",
    ),
    pytest.param(
        {"matchExpressions": [expr("x", NOT_IN, "y"), expr("z", NOT_IN, "w")]},
        {"x": "z", "z": "a"},
        True,
        id="two NotIn expressions match other values",
    ),
    pytest.param(
        {"matchLabels": {"notin": "in"}},
        {"notin": "in"},
        True,
        id="keys and values spelt like operators are plain strings",
    ),
    pytest.param(
        {"matchExpressions": [expr("x", EXISTS)]}, {"x": "z"}, True, id="Exists matches a key"
    ),
    pytest.param(
        {"matchExpressions": [expr("x", DOES_NOT_EXIST)]},
        {"y": "z"},
        True,
        id="DoesNotExist matches when the key is absent",
    ),
    pytest.param(selector(Requirement("x", GT, ("1",))), {"x": "2"}, True, id="x>1 matches x=2"),
    pytest.param(selector(Requirement("x", LT, ("1",))), {"x": "0"}, True, id="x<1 matches x=0"),
    pytest.param(
        {"matchLabels": {"x": "z"}}, {}, False, id="matchLabels do not match an empty label set"
    ),
    pytest.param(
        {"matchLabels": {"x": "y"}}, {"x": "z"}, False, id="matchLabels do not match another value"
    ),
    pytest.param(
        {"matchLabels": {"x": "y", "z": "w"}},
        {"x": "w", "z": "w"},
        False,
        id="two matchLabels fail when one value differs",
    ),
    pytest.param(
        {"matchExpressions": [expr("x", NOT_IN, "y"), expr("z", NOT_IN, "w")]},
        {"x": "z", "z": "w"},
        False,
        id="two NotIn expressions fail when one value is excluded",
    ),
    pytest.param(
        {"matchExpressions": [expr("x", EXISTS)]},
        {"y": "z"},
        False,
        id="Exists fails when the key is absent",
    ),
    pytest.param(
        {"matchExpressions": [expr("x", DOES_NOT_EXIST)]},
        {"x": "z"},
        False,
        id="DoesNotExist fails when the key is present",
    ),
    pytest.param(
        selector(Requirement("x", GT, ("1",))), {"x": "0"}, False, id="x>1 does not match x=0"
    ),
    pytest.param(
        selector(Requirement("x", LT, ("1",))), {"x": "2"}, False, id="x<1 does not match x=2"
    ),
    pytest.param(
        {"matchLabels": {"foo": "bar", "baz": "blah"}},
        {"foo": "bar", "baz": "blah"},
        True,
        id="matchLabels match a label set equal to them",
    ),
    pytest.param(
        {"matchLabels": {"foo": "blah"}},
        {"foo": "bar", "baz": "blah"},
        False,
        id="a value of another key does not count",
    ),
    pytest.param(
        {"matchLabels": {"foo": "bar", "foobar": "bar", "baz": "blah"}},
        {"foo": "bar", "baz": "blah"},
        False,
        id="matchLabels fail when the labels are a subset of them",
    ),
    # labels/selector_test.go TestRequirementSelectorMatching
    pytest.param(
        {"matchExpressions": [expr("x", IN, "foo"), expr("y", NOT_IN, "alpha")]},
        {"x": "foo", "y": "baz"},
        True,
        id="In and NotIn both hold",
    ),
    pytest.param(
        {"matchExpressions": [expr("x", IN, "foo"), expr("y", IN, "alpha")]},
        {"x": "foo", "y": "baz"},
        False,
        id="expressions are ANDed so one failing In fails the selector",
    ),
    pytest.param(
        {"matchExpressions": [expr("x", NOT_IN, ""), expr("y", EXISTS)]},
        {"y": ""},
        True,
        id="NotIn holds for an absent key and Exists for an empty value",
    ),
    pytest.param(
        {"matchExpressions": [expr("x", DOES_NOT_EXIST), expr("y", EXISTS)]},
        {"y": ""},
        True,
        id="DoesNotExist and Exists on different keys both hold",
    ),
    pytest.param(
        {"matchExpressions": [expr("x", NOT_IN, ""), expr("y", DOES_NOT_EXIST)]},
        {"y": ""},
        False,
        id="DoesNotExist fails for a key with an empty value",
    ),
    pytest.param(
        {"matchExpressions": [expr("x", IN, "")]},
        {"y": "baz"},
        False,
        id="In with the empty value fails for an absent key",
    ),
    pytest.param(
        {"matchExpressions": [expr("x", IN, "")]},
        {"x": ""},
        True,
        id="In with the empty value matches an empty label value",
    ),
    pytest.param(
        selector(Requirement("z", GT, ("1",))), {"z": "v2"}, False, id="Gt never matches a word"
    ),
    # Beyond upstream's tables: the edges of the integer comparison and of In/NotIn.
    pytest.param(
        {"matchExpressions": [expr("tier", IN, "a", "b")]},
        {"tier": "b"},
        True,
        id="In matches any of its values",
    ),
    pytest.param(
        {"matchExpressions": [expr("tier", NOT_IN, "a")]},
        {},
        True,
        id="NotIn matches when the key is absent",
    ),
    pytest.param(
        selector(Requirement("n", GT, ("1",))), {}, False, id="Gt fails when the key is absent"
    ),
    pytest.param(selector(Requirement("n", GT, ("1",))), {"n": "1"}, False, id="Gt is strict"),
    pytest.param(
        selector(Requirement("n", GT, ("9",))),
        {"n": "10"},
        True,
        id="Gt compares numbers, not strings",
    ),
    pytest.param(
        selector(Requirement("n", LT, ("0",))),
        {"n": "-5"},
        True,
        id="Lt accepts a negative label value",
    ),
    pytest.param(
        selector(Requirement("n", GT, ("0",))),
        {"n": "+3"},
        True,
        id="Gt accepts a plus sign as Go's ParseInt does",
    ),
    pytest.param(
        selector(Requirement("n", GT, ("0",))),
        {"n": " 3"},
        False,
        id="Gt never matches a number with spaces",
    ),
    pytest.param(
        selector(Requirement("n", GT, ("0",))),
        {"n": "1_000"},
        False,
        id="Gt never matches a number with underscores",
    ),
    pytest.param(
        selector(Requirement("n", GT, ("0",))),
        {"n": "9223372036854775808"},
        False,
        id="Gt never matches a label beyond int64",
    ),
    pytest.param(
        selector(Requirement("n", LT, ("9223372036854775807",))),
        {"n": "-9223372036854775808"},
        True,
        id="Lt works across the whole int64 range",
    ),
    pytest.param(
        selector(Requirement("n", GT, ("x",))),
        {"n": "5"},
        False,
        id="Gt with a non-integer bound never matches",
    ),
]


@pytest.mark.parametrize(("spec", "labels", "want"), LABEL_SELECTOR_CASES)
def test_label_selector_matches(spec, labels, want):
    built = spec if isinstance(spec, LabelSelector) else LabelSelector.from_dict(spec)
    assert built.matches(labels) is want


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        pytest.param(
            selector(
                Requirement("x", IN, ("abc", "def")),
                Requirement("y", NOT_IN, ("jkl",)),
                Requirement("z", EXISTS),
            ),
            "x in (abc,def),y notin (jkl),z",
            id="In NotIn and Exists print in set syntax",
        ),
        pytest.param(
            selector(Requirement("x", NOT_IN, ("def", "abc")), Requirement("z", DOES_NOT_EXIST)),
            "x notin (abc,def),!z",
            id="values print sorted and DoesNotExist prints with a bang",
        ),
        pytest.param(
            selector(Requirement("z", NOT_IN, ("",))),
            "z notin ()",
            id="the empty value prints as nothing",
        ),
        pytest.param(
            selector(Requirement("x", GT, ("2",)), Requirement("y", LT, ("8",))),
            "x>2,y<8",
            id="Gt and Lt print as comparisons",
        ),
        pytest.param(
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [expr("tier", IN, "b", "a")],
            },
            "app=web,tier in (a,b)",
            id="matchLabels print as equalities",
        ),
        pytest.param(
            {"matchLabels": {"z": "1", "a": "2"}, "matchExpressions": [expr("m", EXISTS)]},
            "a=2,m,z=1",
            id="requirements are sorted by key",
        ),
        pytest.param({}, "", id="the empty selector prints as nothing"),
    ],
)
def test_label_selector_str(spec, text):
    built = spec if isinstance(spec, LabelSelector) else LabelSelector.from_dict(spec)
    assert str(built) == text


def test_everything_matches_all_and_is_empty():
    everything = LabelSelector.everything()
    assert everything.is_empty()
    assert everything.matches({"x": "y"})
    assert LabelSelector.from_dict({}) == everything
    assert LabelSelector.from_dict({"matchLabels": None, "matchExpressions": []}) == everything


def test_a_selector_with_requirements_is_not_empty():
    assert not LabelSelector.from_dict({"matchLabels": {"a": "b"}}).is_empty()


@pytest.mark.parametrize(
    ("selector_set", "labels", "want"),
    [
        # labels/selector_test.go TestSetMatches
        pytest.param({}, {"foo": "bar", "baz": "blah"}, True, id="an empty set matches anything"),
        pytest.param({"foo": "bar"}, {"foo": "bar", "baz": "blah"}, True, id="one label of two"),
        pytest.param({"baz": "blah"}, {"foo": "bar", "baz": "blah"}, True, id="the other label"),
        pytest.param(
            {"foo": "bar", "baz": "blah"},
            {"foo": "bar", "baz": "blah"},
            True,
            id="both labels",
        ),
        pytest.param({"foo": "baz"}, {"foo": "bar"}, False, id="a different value"),
        pytest.param({"foo": "bar"}, {}, False, id="no labels"),
    ],
)
def test_selector_from_set(selector_set, labels, want):
    assert selector_from_set(selector_set).matches(labels) is want


def test_selector_from_set_prints_sorted_equalities():
    assert str(selector_from_set({"b": "2", "a": "1"})) == "a=1,b=2"
    assert selector_from_set({}).is_empty()


def test_match_labels_equal_a_single_value_in_expression():
    # They select alike; only the printed form differs.
    from_labels = LabelSelector.from_dict({"matchLabels": {"a": "b"}})
    from_expression = LabelSelector.from_dict({"matchExpressions": [expr("a", IN, "b")]})
    assert from_labels == from_expression
    assert str(from_labels) != str(from_expression)


def test_selectors_are_hashable_and_picklable():
    built = LabelSelector.from_dict(
        {"matchLabels": {"a": "b"}, "matchExpressions": [expr("n", NOT_IN, "1", "2")]}
    )
    assert pickle.loads(pickle.dumps(built)) == built
    assert len({built, LabelSelector.from_dict({"matchLabels": {"a": "b"}})}) == 2
    term = NodeSelectorTerm((Requirement("n", GT, ("3",)),))
    restored = pickle.loads(pickle.dumps(term))
    assert restored.matches("node-1", {"n": "4"})


def test_an_unknown_operator_is_refused_in_code():
    with pytest.raises(ValueError, match="unknown label selector operator 'in'"):
        Requirement("a", "in", ("b",))


# --- Node selectors ------------------------------------------------------------------


def terms(*items):
    return {"nodeSelectorTerms": list(items)}


def name_in(*names):
    return {"key": "metadata.name", "operator": IN, "values": list(names)}


NODE_SELECTOR_CASES = [
    # nodeaffinity_test.go TestPodMatchesNodeSelectorAndAffinityTerms
    pytest.param(
        terms({"matchExpressions": [expr("foo", IN, "bar", "value2")]}),
        "",
        {"foo": "bar"},
        True,
        id="In matches a node with one of the values",
    ),
    pytest.param(
        terms({"matchExpressions": [expr("kernel-version", GT, "0204")]}),
        "",
        {"kernel-version": "0206"},
        True,
        id="Gt compares zero-padded versions as integers",
    ),
    pytest.param(
        terms({"matchExpressions": [expr("mem-type", NOT_IN, "DDR", "DDR2")]}),
        "",
        {"mem-type": "DDR3"},
        True,
        id="NotIn matches a node whose value is not listed",
    ),
    pytest.param(
        terms({"matchExpressions": [expr("GPU", EXISTS)]}),
        "",
        {"GPU": "NVIDIA-GRID-K1"},
        True,
        id="Exists matches a node with the label",
    ),
    pytest.param(
        terms({"matchExpressions": [expr("foo", IN, "value1", "value2")]}),
        "",
        {"foo": "bar"},
        False,
        id="In does not match a node with another value",
    ),
    pytest.param(
        terms({"matchExpressions": []}),
        "",
        {"foo": "bar"},
        False,
        id="a term with an empty matchExpressions list matches nothing",
    ),
    pytest.param(
        terms({}),
        "node-1",
        {"foo": "bar"},
        False,
        id="a term with neither expressions nor fields matches nothing",
    ),
    pytest.param(
        terms({"matchExpressions": [expr("GPU", EXISTS), expr("GPU", NOT_IN, "AMD", "INTER")]}),
        "",
        {"GPU": "NVIDIA-GRID-K1"},
        True,
        id="expressions of a term are ANDed and all hold",
    ),
    pytest.param(
        terms({"matchExpressions": [expr("GPU", EXISTS), expr("GPU", IN, "AMD", "INTER")]}),
        "",
        {"GPU": "NVIDIA-GRID-K1"},
        False,
        id="expressions of a term are ANDed and one fails",
    ),
    pytest.param(
        terms(
            {"matchExpressions": [expr("foo", IN, "bar", "value2")]},
            {"matchExpressions": [expr("diffkey", IN, "wrong", "value2")]},
        ),
        "",
        {"foo": "bar"},
        True,
        id="terms are ORed and the first matches",
    ),
    pytest.param(
        terms({"matchFields": [name_in("node-1")]}),
        "node-1",
        {},
        True,
        id="matchFields In matches the named node",
    ),
    pytest.param(
        terms({"matchFields": [name_in("node-1")]}),
        "node-2",
        {},
        False,
        id="matchFields In does not match another node",
    ),
    pytest.param(
        terms({"matchFields": [name_in("node-1")]}, {"matchExpressions": [expr("foo", IN, "bar")]}),
        "node-2",
        {"foo": "bar"},
        True,
        id="two terms where matchFields fails but the matchExpressions term matches",
    ),
    pytest.param(
        terms(
            {
                "matchFields": [name_in("node-1")],
                "matchExpressions": [expr("foo", IN, "bar")],
            }
        ),
        "node-2",
        {"foo": "bar"},
        False,
        id="one term where labels match but matchFields fails",
    ),
    pytest.param(
        terms(
            {
                "matchFields": [name_in("node-1")],
                "matchExpressions": [expr("foo", IN, "bar")],
            }
        ),
        "node-1",
        {"foo": "bar"},
        True,
        id="one term where both matchFields and matchExpressions match",
    ),
    pytest.param(
        terms(
            {"matchFields": [name_in("node-1")]},
            {"matchExpressions": [expr("foo", IN, "not-match-to-bar")]},
        ),
        "node-2",
        {"foo": "bar"},
        False,
        id="two terms where neither matches",
    ),
    # nodeaffinity_test.go TestNodeSelectorMatch
    pytest.param(
        terms(
            {
                "matchExpressions": [expr("label_1", IN, "label_1_val")],
                "matchFields": [name_in("host-1")],
            }
        ),
        "host-1",
        {},
        False,
        id="the node matches the field selector but not the labels",
    ),
    pytest.param(
        terms(
            {"matchExpressions": [expr("label_1", IN, "label_1_val")]},
            {"matchFields": [name_in("host-1")]},
        ),
        "host-1",
        {},
        True,
        id="the second term matches",
    ),
    # Beyond upstream's tables.
    pytest.param(
        terms({"matchFields": [{"key": "metadata.name", "operator": NOT_IN, "values": ["n-1"]}]}),
        "n-1",
        {},
        False,
        id="matchFields NotIn excludes the named node",
    ),
    pytest.param(
        terms({"matchFields": [{"key": "metadata.name", "operator": NOT_IN, "values": ["n-1"]}]}),
        "n-2",
        {},
        True,
        id="matchFields NotIn admits every other node",
    ),
    pytest.param(
        terms(
            {
                "matchExpressions": [expr("foo", IN, "bar")],
                "matchFields": [name_in("node-1")],
            }
        ),
        "",
        {"foo": "bar"},
        True,
        id="a node without a name skips matchFields as upstream does",
    ),
    pytest.param(
        terms({"matchExpressions": [expr("cpus", LT, "8")]}),
        "",
        {"cpus": "4"},
        True,
        id="Lt matches a smaller number",
    ),
    pytest.param(
        terms({"matchExpressions": [expr("cpus", GT, "8")]}),
        "",
        {"cpus": "many"},
        False,
        id="Gt never matches a node whose label is not an integer",
    ),
    pytest.param(
        terms({"matchExpressions": [expr("spot", DOES_NOT_EXIST)]}),
        "",
        {"zone": "a"},
        True,
        id="DoesNotExist matches a node without the label",
    ),
]


@pytest.mark.parametrize(("spec", "node_name", "node_labels", "want"), NODE_SELECTOR_CASES)
def test_node_selector_matches(spec, node_name, node_labels, want):
    assert NodeSelector.from_dict(spec).matches(node_name, node_labels) is want


def test_a_node_selector_without_terms_matches_nothing():
    assert not NodeSelector(()).matches("node-1", {"foo": "bar"})


def test_node_selector_term_from_dict():
    term = NodeSelectorTerm.from_dict(
        {"matchExpressions": [expr("b", EXISTS), expr("a", IN, "1")], "matchFields": None}
    )
    assert term == NodeSelectorTerm((Requirement("a", IN, ("1",)), Requirement("b", EXISTS)), ())
    assert term.matches("n", {"a": "1", "b": ""})


def test_preferred_scheduling_terms_add_the_weights_of_matching_terms():
    # nodeaffinity_test.go TestPreferredSchedulingTermsScore "first and third term match"
    preferred = [
        PreferredSchedulingTerm.from_dict(item)
        for item in [
            {"weight": 5, "preference": {"matchFields": [name_in("host-1")]}},
            {
                "weight": 7,
                "preference": {"matchExpressions": [expr("unknown_label", IN, "unknown_val")]},
            },
            {"weight": 11, "preference": {"matchExpressions": [expr("label_1", IN, "val_1")]}},
        ]
    ]
    labels = {"label_1": "val_1"}
    score = sum(p.weight for p in preferred if p.term.matches("host-1", labels))
    assert score == 16


def test_a_preferred_term_without_preference_matches_nothing():
    preferred = PreferredSchedulingTerm.from_dict({"weight": 3})
    assert preferred == PreferredSchedulingTerm(3, NodeSelectorTerm())
    assert not preferred.term.matches("node-1", {})


# --- Invalid input ---------------------------------------------------------------------

KEY_NAME_MESSAGE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

INVALID_CASES = [
    # LabelSelector
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [expr("a", EXISTS), expr("a", "Foo")]},
        "matchExpressions[1].operator",
        'Unsupported value: "Foo": supported values: "DoesNotExist", "Exists", "In", "NotIn"',
        id="a label selector refuses an unknown operator",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [expr("a", GT, "1")]},
        "matchExpressions[0].operator",
        'Unsupported value: "Gt": supported values:',
        id="a label selector refuses Gt",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [{"key": "a"}]},
        "matchExpressions[0].operator",
        'Unsupported value: "": supported values:',
        id="a label selector expression needs an operator",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [expr("a", IN)]},
        "matchExpressions[0].values",
        "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        id="In needs values",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [expr("a", EXISTS, "x")]},
        "matchExpressions[0].values",
        "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        id="Exists must have no values",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [expr("invalid key", IN, "v")]},
        "matchExpressions[0].key",
        f'Invalid value: "invalid key": {KEY_NAME_MESSAGE}',
        id="an expression key must be a qualified name",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [expr("", EXISTS)]},
        "matchExpressions[0].key",
        'Invalid value: "": name part must be non-empty; name part must consist of',
        id="an expression key must not be empty",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [expr("Example.com/app", EXISTS)]},
        "matchExpressions[0].key",
        'Invalid value: "Example.com/app": prefix part a lowercase RFC 1123 subdomain',
        id="a key prefix must be a lowercase DNS subdomain",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [expr("a", NOT_IN, "ok", "not ok")]},
        "matchExpressions[0].values[1]",
        'Invalid value: "not ok": a valid label must be an empty string or consist of',
        id="expression values must be label values",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [expr("a", IN, "x" * 64)]},
        "matchExpressions[0].values[0]",
        f'Invalid value: "{"x" * 64}": must be no more than 63 bytes',
        id="label values are at most 63 bytes",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchLabels": {"a/b/c": "x"}},
        "matchLabels",
        'Invalid value: "a/b/c": a valid label key must consist of',
        id="a matchLabels key has at most one slash",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchLabels": {"app": "-web"}},
        "matchLabels[app]",
        'Invalid value: "-web": a valid label must be',
        id="a matchLabels value must be a label value",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchLabels": {"app": 1}},
        "matchLabels[app]",
        'Invalid type: got "integer", expected "string"',
        id="a matchLabels value must be a string",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [{"key": "a", "operator": IN, "values": "x"}]},
        "matchExpressions[0].values",
        'Invalid type: got "string", expected "array"',
        id="values must be a list",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": [expr("a", IN, 3)]},
        "matchExpressions[0].values[0]",
        'Invalid type: got "integer", expected "string"',
        id="values must be strings as YAML numbers are not",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchExpressions": ["a"]},
        "matchExpressions[0]",
        'Invalid type: got "string", expected "object"',
        id="an expression must be an object",
    ),
    pytest.param(
        LabelSelector.from_dict,
        {"matchLabel": {"a": "b"}},
        "matchLabel",
        'unknown field "matchLabel"',
        id="a misspelt field is refused rather than selecting everything",
    ),
    pytest.param(
        LabelSelector.from_dict,
        None,
        "",
        'Invalid type: got "null", expected "object"',
        id="a label selector must be an object",
    ),
    # NodeSelector
    pytest.param(
        NodeSelector.from_dict,
        {"nodeSelectorTerms": []},
        "nodeSelectorTerms",
        "Required value: must have at least one node selector term",
        id="a node selector needs a term",
    ),
    pytest.param(
        NodeSelector.from_dict,
        terms({}, {"matchExpressions": [expr("a", "Foo")]}),
        "nodeSelectorTerms[1].matchExpressions[0].operator",
        'Unsupported value: "Foo": supported values: '
        '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        id="a node selector refuses an unknown operator",
    ),
    pytest.param(
        NodeSelector.from_dict,
        terms({"matchExpressions": [expr("a", GT, "1", "2")]}),
        "nodeSelectorTerms[0].matchExpressions[0].values",
        "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
        id="Gt takes exactly one value",
    ),
    pytest.param(
        NodeSelector.from_dict,
        terms({"matchExpressions": [expr("a", LT, "ten")]}),
        "nodeSelectorTerms[0].matchExpressions[0].values[0]",
        "Invalid value: \"ten\": for 'Gt', 'Lt' operators, the value must be an integer",
        id="Lt takes an integer",
    ),
    pytest.param(
        NodeSelector.from_dict,
        terms({"matchExpressions": [expr("a", GT, "-1")]}),
        "nodeSelectorTerms[0].matchExpressions[0].values[0]",
        'Invalid value: "-1": a valid label must be',
        id="a negative Gt bound is refused as it is no label value",
    ),
    pytest.param(
        NodeSelector.from_dict,
        terms({"matchExpressions": [expr("a", DOES_NOT_EXIST, "x")]}),
        "nodeSelectorTerms[0].matchExpressions[0].values",
        "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        id="DoesNotExist must have no values",
    ),
    pytest.param(
        NodeSelector.from_dict,
        terms(
            {"matchExpressions": [expr("label_1", IN, "label_1_val")]},
            {"matchFields": [name_in("host-1")]},
            {"matchExpressions": [expr("invalid key", IN, "label_value")]},
        ),
        "nodeSelectorTerms[2].matchExpressions[0].key",
        f'Invalid value: "invalid key": {KEY_NAME_MESSAGE}',
        id="an invalid key in a later term names that term",
    ),
    pytest.param(
        NodeSelector.from_dict,
        terms({"matchFields": [name_in("host-1", "host-2")]}),
        "nodeSelectorTerms[0].matchFields[0].values",
        "Required value: must be only one value when `operator` is 'In' or 'NotIn' "
        "for node field selector",
        id="matchFields take exactly one node name",
    ),
    pytest.param(
        NodeSelector.from_dict,
        terms({"matchFields": [{"key": "metadata.name", "operator": EXISTS}]}),
        "nodeSelectorTerms[0].matchFields[0].operator",
        'Unsupported value: "Exists": supported values: "In", "NotIn"',
        id="matchFields take only In and NotIn",
    ),
    pytest.param(
        NodeSelector.from_dict,
        terms({"matchFields": [{"key": "metadata.uid", "operator": IN, "values": ["u"]}]}),
        "nodeSelectorTerms[0].matchFields[0].key",
        'Invalid value: "metadata.uid": not a valid field selector key',
        id="matchFields name only metadata.name",
    ),
    pytest.param(
        NodeSelector.from_dict,
        terms({"matchFields": [name_in("host_1")]}),
        "nodeSelectorTerms[0].matchFields[0].values[0]",
        'Invalid value: "host_1": a lowercase RFC 1123 subdomain must consist of',
        id="matchFields values must be node names",
    ),
    pytest.param(
        NodeSelector.from_dict,
        {"nodeSelectorTerms": {"matchExpressions": []}},
        "nodeSelectorTerms",
        'Invalid type: got "object", expected "array"',
        id="nodeSelectorTerms must be a list",
    ),
    pytest.param(
        NodeSelectorTerm.from_dict,
        {"matchExpression": [expr("a", EXISTS)]},
        "matchExpression",
        'unknown field "matchExpression"',
        id="a term refuses a misspelt field",
    ),
    # PreferredSchedulingTerm
    pytest.param(
        PreferredSchedulingTerm.from_dict,
        {"weight": 0, "preference": {}},
        "weight",
        "Invalid value: 0: must be in the range 1-100",
        id="a preferred term needs a positive weight",
    ),
    pytest.param(
        PreferredSchedulingTerm.from_dict,
        {"preference": {}},
        "weight",
        "Invalid value: 0: must be in the range 1-100",
        id="a preferred term needs a weight",
    ),
    pytest.param(
        PreferredSchedulingTerm.from_dict,
        {"weight": 101, "preference": {}},
        "weight",
        "Invalid value: 101: must be in the range 1-100",
        id="a preferred term weighs at most 100",
    ),
    pytest.param(
        PreferredSchedulingTerm.from_dict,
        {"weight": True, "preference": {}},
        "weight",
        'Invalid type: got "boolean", expected "integer"',
        id="a weight is an integer not a boolean",
    ),
    pytest.param(
        PreferredSchedulingTerm.from_dict,
        {"weight": 1, "preference": {"matchFields": [name_in("a", "b")]}},
        "preference.matchFields[0].values",
        "Required value: must be only one value",
        id="errors in the preference are under preference",
    ),
]


@pytest.mark.parametrize(("decode", "data", "path", "message"), INVALID_CASES)
def test_invalid_input(decode, data, path, message):
    with pytest.raises(ObjectError) as caught:
        decode(data)
    assert caught.value.path == path
    assert caught.value.message.startswith(message), caught.value.message


def test_error_messages_read_as_path_then_message():
    with pytest.raises(ObjectError) as caught:
        LabelSelector.from_dict({"matchExpressions": [expr("a", IN)]})
    assert str(caught.value) == (
        "matchExpressions[0].values: "
        "Required value: must be specified when `operator` is 'In' or 'NotIn'"
    )


def test_null_fields_read_as_absent():
    # JSON null leaves Go fields at their zero values.
    built = LabelSelector.from_dict(
        {"matchExpressions": [{"key": "a", "operator": EXISTS, "values": None}]}
    )
    assert built == selector(Requirement("a", EXISTS))


# --- Properties ------------------------------------------------------------------------

keys = st.sampled_from(["a", "b", "c"])
label_values = st.sampled_from(["", "1", "10", "x", "y"])
label_sets = st.dictionaries(keys, label_values, max_size=3)
value_sets = st.lists(label_values, min_size=1, max_size=3).map(tuple)
int64s = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@given(key=keys, value=label_values, values=value_sets, labels=label_sets)
def test_not_in_is_the_complement_of_in_for_a_present_key(key, value, values, labels):
    labels = {**labels, key: value}
    in_matches = Requirement(key, IN, values).matches(labels)
    assert Requirement(key, NOT_IN, values).matches(labels) is not in_matches


@given(key=keys, labels=label_sets)
def test_does_not_exist_is_the_complement_of_exists(key, labels):
    exists = Requirement(key, EXISTS).matches(labels)
    assert Requirement(key, DOES_NOT_EXIST).matches(labels) is not exists


@given(label=int64s, bound=int64s)
def test_gt_and_lt_compare_as_integers(label, bound):
    labels = {"n": str(label)}
    assert Requirement("n", GT, (str(bound),)).matches(labels) is (label > bound)
    assert Requirement("n", LT, (str(bound),)).matches(labels) is (label < bound)


@given(wanted=label_sets, extra=label_sets)
def test_a_set_selector_matches_every_superset(wanted, extra):
    assert selector_from_set(wanted).matches({**extra, **wanted})


@given(wanted=label_sets, labels=label_sets)
def test_match_labels_select_like_a_set_selector(wanted, labels):
    from_dict = LabelSelector.from_dict({"matchLabels": wanted})
    assert from_dict == selector_from_set(wanted)
    assert from_dict.matches(labels) is all(labels.get(k) == v for k, v in wanted.items())
