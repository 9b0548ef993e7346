"""Structural schemas on their own: what pruning keeps, what defaulting fills in, and the
field errors validation reports (kube-openapi's messages and paths)."""

from __future__ import annotations

import pytest

from kubesched.apiserver.crdschema import apply_defaults, check_structural, prune, validate

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "open": {"type": "object", "additionalProperties": True},
                "sizes": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 2,
                    "items": {"type": "integer", "minimum": 0, "exclusiveMinimum": True},
                },
                "ratio": {"type": "number", "maximum": 1, "exclusiveMaximum": True},
                "name": {"type": "string"},
                "maybe": {"type": "string", "nullable": True},
                "nested": {
                    "type": "object",
                    "default": {},
                    "properties": {"mode": {"type": "string", "default": "auto"}},
                },
            },
        }
    },
}


def test_pruning_keeps_declared_preserved_and_open_fields_only():
    obj = {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "a"},
        "junk": 1,
        "spec": {"free": {"a": {"b": 1}}, "open": {"k": [1]}, "name": "n", "gone": True},
    }
    prune(obj, SCHEMA)
    assert obj == {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "a"},
        "spec": {"free": {"a": {"b": 1}}, "open": {"k": [1]}, "name": "n"},
    }


def test_defaults_fill_missing_objects_then_their_fields():
    obj = {"spec": {}}
    apply_defaults(obj, SCHEMA)
    assert obj == {"spec": {"nested": {"mode": "auto"}}}
    kept = {"spec": {"nested": {"mode": "manual"}}}
    apply_defaults(kept, SCHEMA)
    assert kept == {"spec": {"nested": {"mode": "manual"}}}
    assert apply_defaults({}, SCHEMA) is None  # no spec: nothing below it is defaulted


@pytest.mark.parametrize(
    ("spec", "causes"),
    [
        (
            {"sizes": []},
            [("spec.sizes", "Invalid value: 0: spec.sizes in body should have at least 1 items")],
        ),
        ({"sizes": [1, 2, 3]}, [("spec.sizes", "Too many: 3: must have at most 2 items")]),
        (
            {"sizes": [1, 0]},
            [("spec.sizes[1]", "Invalid value: 0: spec.sizes[1] in body should be greater than 0")],
        ),
        (
            {"sizes": [1.5]},
            [
                (
                    "spec.sizes[0]",
                    'Invalid value: "number": spec.sizes[0] in body must be of type integer: "number"',
                )
            ],
        ),
        ({"sizes": [2.0]}, []),
        (
            {"ratio": 1},
            [("spec.ratio", "Invalid value: 1: spec.ratio in body should be less than 1")],
        ),
        ({"ratio": 0.5}, []),
        (
            {"name": None},
            [
                (
                    "spec.name",
                    'Invalid value: "null": spec.name in body must be of type string: "null"',
                )
            ],
        ),
        ({"maybe": None}, []),
        (
            {"name": True},
            [
                (
                    "spec.name",
                    'Invalid value: "boolean": spec.name in body must be of type string: "boolean"',
                )
            ],
        ),
        ({"free": {"anything": [None, 1]}}, []),
    ],
)
def test_validation_reports_each_field(spec, causes):
    found = validate({"apiVersion": "x/v1", "kind": "X", "metadata": {}, "spec": spec}, SCHEMA)
    assert [(c["field"], c["message"]) for c in found] == causes


def test_structural_checks_name_the_offending_node():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "array"},
            "b": {"type": "thing"},
            "c": {
                "type": "object",
                "properties": {"d": {}},
                "additionalProperties": {"type": "string"},
            },
            "e": {"x-kubernetes-int-or-string": True},
        },
    }
    found = [(c["field"], c["message"]) for c in check_structural(schema, "s")]
    assert found == [
        ("s.properties[a].items", "Required value: must be specified"),
        (
            "s.properties[b].type",
            'Unsupported value: "thing": supported values: "array", "boolean", "integer", "number", "object", "string"',
        ),
        (
            "s.properties[c].additionalProperties",
            "Forbidden: additionalProperties and properties are mutual exclusive",
        ),
        (
            "s.properties[c].properties[d].type",
            "Required value: must not be empty for specified object fields",
        ),
    ]
    assert check_structural({"properties": {}}, "r") == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: must not be empty at the root",
            "field": "r.type",
        }
    ]
