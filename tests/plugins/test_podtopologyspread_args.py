"""PodTopologySpreadArgs: decoding, defaulting and validation (with field paths).

The validation table follows upstream's ``ValidatePodTopologySpreadArgs`` cases in
``validation_pluginargs_test.go`` (release 1.34 wording).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.args import ArgsError
from kubesched.objects.node import LABEL_HOSTNAME, LABEL_ZONE
from kubesched.plugins.podtopologyspread import (
    LIST_DEFAULTING,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SYSTEM_DEFAULTING,
    DefaultConstraint,
    PodTopologySpread,
    PodTopologySpreadArgs,
    new,
)
from kubesched.testing import PluginHandle


def dc(
    skew: Any = 1, key: Any = "node", when: Any = "DoNotSchedule", **extra: Any
) -> dict[str, Any]:
    out = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when}
    out.update(extra)
    return out


KEY_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
    "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

# id, args as written, expected errors (str of each FieldError, in order)
VALIDATION_CASES = [
    pytest.param(
        {
            "defaultingType": "List",
            "defaultConstraints": [dc(1, "node"), dc(2, "zone", "ScheduleAnyway")],
        },
        [],
        id="valid-list-of-constraints",
    ),
    pytest.param({}, [], id="valid-empty-args-mean-system-defaulting"),
    pytest.param({"defaultingType": "List"}, [], id="valid-list-defaulting-without-constraints"),
    pytest.param(
        {"defaultingType": "List", "defaultConstraints": [dc(-1, "node")]},
        ["defaultConstraints[0].maxSkew: Invalid value: -1: must be greater than zero"],
        id="max-skew-less-than-zero",
    ),
    pytest.param(
        {"defaultingType": "List", "defaultConstraints": [dc(0, "node")]},
        ["defaultConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"],
        id="max-skew-zero",
    ),
    pytest.param(
        {"defaultingType": "List", "defaultConstraints": [dc(1, "")]},
        ["defaultConstraints[0].topologyKey: Required value: can not be empty"],
        id="empty-topology-key",
    ),
    pytest.param(
        {"defaultingType": "List", "defaultConstraints": [dc(1, "T L-a/b")]},
        [
            f'defaultConstraints[0].topologyKey: Invalid value: "T L-a/b": {msg}'
            for msg in (
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                "alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            )
        ],
        id="topology-key-with-an-invalid-prefix",
    ),
    pytest.param(
        {"defaultingType": "List", "defaultConstraints": [dc(1, "a b")]},
        [f'defaultConstraints[0].topologyKey: Invalid value: "a b": {KEY_MSG}'],
        id="topology-key-with-a-space",
    ),
    pytest.param(
        {"defaultingType": "List", "defaultConstraints": [dc(1, "node", "")]},
        ["defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"],
        id="when-unsatisfiable-is-empty",
    ),
    pytest.param(
        {"defaultingType": "List", "defaultConstraints": [dc(1, "node", "Unknown")]},
        [
            'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Unknown": '
            'supported values: "DoNotSchedule", "ScheduleAnyway"'
        ],
        id="when-unsatisfiable-contains-an-unsupported-action",
    ),
    pytest.param(
        {
            "defaultingType": "List",
            "defaultConstraints": [dc(1, "node"), dc(2, "node")],
        },
        ['defaultConstraints[1]: Duplicate value: "{node, DoNotSchedule}"'],
        id="duplicated-constraints",
    ),
    pytest.param(
        {
            "defaultingType": "List",
            "defaultConstraints": [dc(1, "node", labelSelector={"matchLabels": {"foo": "bar"}})],
        },
        [
            "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a "
            "selector, as they deduced for each pod"
        ],
        id="label-selector-present",
    ),
    pytest.param(
        {"defaultingType": "System", "defaultConstraints": [dc(1, "node")]},
        ['defaultingType: Invalid value: "System": when .defaultConstraints are not empty'],
        id="system-defaulting-with-constraints",
    ),
    pytest.param(
        {"defaultingType": "Unknown"},
        ['defaultingType: Unsupported value: "Unknown": supported values: "System", "List"'],
        id="unsupported-defaulting-type",
    ),
    pytest.param(
        {
            "defaultingType": "List",
            "defaultConstraints": [dc(0, ""), dc(1, "node", "Maybe"), dc(2, "node", "Maybe")],
        },
        [
            "defaultConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
            "defaultConstraints[0].topologyKey: Required value: can not be empty",
            'defaultConstraints[1].whenUnsatisfiable: Unsupported value: "Maybe": '
            'supported values: "DoNotSchedule", "ScheduleAnyway"',
            'defaultConstraints[2].whenUnsatisfiable: Unsupported value: "Maybe": '
            'supported values: "DoNotSchedule", "ScheduleAnyway"',
            'defaultConstraints[2]: Duplicate value: "{node, Maybe}"',
        ],
        id="every-problem-is-reported",
    ),
    pytest.param(
        {"defaultingType": "List", "defaultConstraints": [dc("1", "node", bogus=True)]},
        [
            'defaultConstraints[0].bogus: Invalid value: "bogus": unknown field',
            'defaultConstraints[0].maxSkew: Invalid value: "1": must be int',
        ],
        id="unknown-field-and-wrong-type",
    ),
    pytest.param(
        {"defaultingType": "List", "extra": 1},
        ['extra: Invalid value: "extra": unknown field'],
        id="unknown-top-level-field",
    ),
]


@pytest.mark.parametrize(("args", "want"), VALIDATION_CASES)
def test_validation(args, want):
    parsed, errors = PodTopologySpreadArgs.from_mapping(args)
    # Decoding errors come alone, as the factory reports them.
    errors = errors or parsed.validate()
    assert [str(e) for e in errors] == want


@pytest.mark.parametrize(("args", "want"), [c for c in VALIDATION_CASES if c.values[1]])
def test_factory_rejects_invalid_args(args, want):
    with pytest.raises(ArgsError) as info:
        new(args, PluginHandle())  # type: ignore[arg-type]
    assert [str(e) for e in info.value.errors] == want


def test_defaults_are_system_defaulting():
    parsed, errors = PodTopologySpreadArgs.from_mapping(None)
    assert errors == []
    assert parsed == PodTopologySpreadArgs((), SYSTEM_DEFAULTING)
    assert parsed.effective_constraints() == SYSTEM_DEFAULT_CONSTRAINTS


def test_system_default_constraints_are_upstreams():
    assert (
        DefaultConstraint(
            max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable="ScheduleAnyway"
        ),
        DefaultConstraint(max_skew=5, topology_key=LABEL_ZONE, when_unsatisfiable="ScheduleAnyway"),
    ) == SYSTEM_DEFAULT_CONSTRAINTS


def test_list_defaulting_decodes_every_field():
    parsed, errors = PodTopologySpreadArgs.from_mapping(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "PodTopologySpreadArgs",
            "defaultingType": "List",
            "defaultConstraints": [
                dc(
                    2,
                    "rack",
                    "ScheduleAnyway",
                    minDomains=3,
                    nodeAffinityPolicy="Ignore",
                    nodeTaintsPolicy="Honor",
                    matchLabelKeys=["app"],
                )
            ],
        }
    )
    assert errors == []
    assert parsed.defaulting_type == LIST_DEFAULTING
    assert parsed.effective_constraints() == (
        DefaultConstraint(
            max_skew=2,
            topology_key="rack",
            when_unsatisfiable="ScheduleAnyway",
            min_domains=3,
            node_affinity_policy="Ignore",
            node_taints_policy="Honor",
            match_label_keys=("app",),
        ),
    )


def test_factory_builds_the_plugin():
    pl = new({"defaultingType": "List"}, PluginHandle())  # type: ignore[arg-type]
    assert isinstance(pl, PodTopologySpread)
    assert pl.name == "PodTopologySpread"
