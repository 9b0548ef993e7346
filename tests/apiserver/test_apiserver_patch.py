"""Merge patch (RFC 7386, its appendix A examples) and JSON patch (RFC 6902)."""

from __future__ import annotations

import pytest

from kubesched.apiserver import errors
from kubesched.apiserver.patch import apply_patch, json_patch, merge_patch

MERGE = [
    pytest.param({"a": "b"}, {"a": "c"}, {"a": "c"}, id="replace-value"),
    pytest.param({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}, id="add-key"),
    pytest.param({"a": "b"}, {"a": None}, {}, id="null-removes"),
    pytest.param({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}, id="null-removes-one"),
    pytest.param({"a": ["b"]}, {"a": "c"}, {"a": "c"}, id="list-to-scalar"),
    pytest.param({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}, id="scalar-to-list"),
    pytest.param({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}, id="nested"),
    pytest.param({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}, id="lists-replaced-whole"),
    pytest.param({"e": None}, {"a": 1}, {"e": None, "a": 1}, id="existing-null-kept"),
    pytest.param({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}, id="null-in-new-nested"),
]


@pytest.mark.parametrize(("target", "patch", "expected"), MERGE)
def test_merge_patch(target, patch, expected):
    assert merge_patch(target, patch) == expected


JSON = [
    pytest.param(
        {"a": 1}, [{"op": "add", "path": "/b", "value": 2}], {"a": 1, "b": 2}, id="add-member"
    ),
    pytest.param(
        {"a": [1, 3]},
        [{"op": "add", "path": "/a/1", "value": 2}],
        {"a": [1, 2, 3]},
        id="insert-into-list",
    ),
    pytest.param(
        {"a": [1]}, [{"op": "add", "path": "/a/-", "value": 2}], {"a": [1, 2]}, id="append-to-list"
    ),
    pytest.param({"a": 1, "b": 2}, [{"op": "remove", "path": "/a"}], {"b": 2}, id="remove"),
    pytest.param({"a": 1}, [{"op": "replace", "path": "/a", "value": 5}], {"a": 5}, id="replace"),
    pytest.param(
        {"a": {"x": 1}},
        [{"op": "move", "from": "/a/x", "path": "/y"}],
        {"a": {}, "y": 1},
        id="move",
    ),
    pytest.param(
        {"a": [1]}, [{"op": "copy", "from": "/a/0", "path": "/b"}], {"a": [1], "b": 1}, id="copy"
    ),
    pytest.param(
        {"a/b": 1}, [{"op": "replace", "path": "/a~1b", "value": 2}], {"a/b": 2}, id="escaped-slash"
    ),
    pytest.param({"a": 1}, [{"op": "test", "path": "/a", "value": 1}], {"a": 1}, id="test-passes"),
]


@pytest.mark.parametrize(("target", "ops", "expected"), JSON)
def test_json_patch(target, ops, expected):
    before = repr(target)
    assert json_patch(target, ops) == expected
    assert repr(target) == before, "the target is not changed in place"


@pytest.mark.parametrize(
    ("target", "ops", "message"),
    [
        pytest.param(
            {"a": 1}, [{"op": "test", "path": "/a", "value": 2}], "test failed", id="test-fails"
        ),
        pytest.param(
            {}, [{"op": "remove", "path": "/x"}], "doc is missing path", id="remove-missing"
        ),
        pytest.param(
            {"a": []},
            [{"op": "replace", "path": "/a/3", "value": 1}],
            "out of range",
            id="index-out-of-range",
        ),
        pytest.param({}, [{"op": "frobnicate", "path": "/a"}], "Unexpected kind", id="unknown-op"),
    ],
)
def test_json_patch_failures_are_invalid(target, ops, message):
    with pytest.raises(errors.ApiError) as caught:
        json_patch(target, ops)
    assert caught.value.code == 422
    assert message in str(caught.value)


def test_unknown_media_type_is_415():
    with pytest.raises(errors.ApiError) as caught:
        apply_patch({}, {}, "application/apply-patch+yaml")
    assert caught.value.code == 415
