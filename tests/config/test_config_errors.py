"""FieldError and ConfigError print like apimachinery; Go value formats are reproduced."""

from __future__ import annotations

import pytest

from kubesched.config import ConfigError, ErrorType, FieldError
from kubesched.config.gofmt import format_duration, format_float, go_quote, parse_duration


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(
            FieldError.invalid(
                "profiles[1].percentageOfNodesToScore", 101, "not in valid range [0-100]"
            ),
            "profiles[1].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
            id="an invalid integer prints plainly",
        ),
        pytest.param(
            FieldError.invalid("leaderElection.leaseDuration", "5s", "must be greater than zero"),
            'leaderElection.leaseDuration: Invalid value: "5s": must be greater than zero',
            id="an invalid string is Go-quoted",
        ),
        pytest.param(
            FieldError.invalid("x", 'a"b\n\x01', "bad"),
            'x: Invalid value: "a\\"b\\n\\x01": bad',
            id="quotes escape like strconv.Quote",
        ),
        pytest.param(
            FieldError.invalid("x", 0.5, "bad"),
            "x: Invalid value: 0.5: bad",
            id="a float prints like Go's %v",
        ),
        pytest.param(
            FieldError.invalid("x", True, "bad"),
            "x: Invalid value: true: bad",
            id="a boolean prints as true or false",
        ),
        pytest.param(
            FieldError.invalid("x", None, "bad"),
            "x: Invalid value: null: bad",
            id="None prints as null",
        ),
        pytest.param(
            FieldError.invalid("x", {"enabled": [{"name": "A"}]}, "bad"),
            'x: Invalid value: {"enabled":[{"name":"A"}]}: bad',
            id="a mapping prints as compact JSON",
        ),
        pytest.param(
            FieldError.required("profiles[0].schedulerName"),
            "profiles[0].schedulerName: Required value",
            id="a required value shows no value",
        ),
        pytest.param(
            FieldError.required("spec", "needs one"),
            "spec: Required value: needs one",
            id="a required value keeps its detail",
        ),
        pytest.param(
            FieldError.duplicate("profiles[1].schedulerName", "x"),
            'profiles[1].schedulerName: Duplicate value: "x"',
            id="a duplicate shows the repeated value",
        ),
        pytest.param(
            FieldError.not_supported("kind", "Foo", ["A", "B"]),
            'kind: Unsupported value: "Foo": supported values: "A", "B"',
            id="an unsupported value lists the supported ones",
        ),
        pytest.param(
            FieldError.forbidden("spec.nodeName", "may not be set"),
            "spec.nodeName: Forbidden: may not be set",
            id="a forbidden value shows only the detail",
        ),
        pytest.param(
            FieldError("parallelism", ErrorType.TYPE_INVALID, "8", "must be of type integer"),
            'parallelism: Invalid value: "8": must be of type integer',
            id="a type error reads as an invalid value",
        ),
        pytest.param(
            FieldError.decode("profiles[0]", 'unknown field "foo"'),
            'profiles[0]: unknown field "foo"',
            id="a decode error is path and detail",
        ),
        pytest.param(
            FieldError.decode("", 'unknown field "foo"'),
            'unknown field "foo"',
            id="an error without a path prints its body alone",
        ),
    ],
)
def test_field_error_prints_like_apimachinery(error: FieldError, expected: str) -> None:
    assert str(error) == expected


def test_config_error_prefixes_every_line_with_the_source() -> None:
    errors = [
        FieldError.required("profiles[0].schedulerName"),
        FieldError.invalid("parallelism", 0, "should be an integer value greater than zero"),
    ]
    assert str(ConfigError("config.yaml", errors)).splitlines() == [
        "config.yaml: profiles[0].schedulerName: Required value",
        "config.yaml: parallelism: Invalid value: 0: should be an integer value greater than zero",
    ]


def test_config_error_joins_lists_from_several_layers() -> None:
    args_error = FieldError.invalid(
        "profiles[1].pluginConfig[0].args.defaultConstraints[0].maxSkew",
        0,
        "must be greater than zero",
    )
    error = ConfigError("config.yaml", [], [args_error])
    assert error.source == "config.yaml"
    assert error.errors == [args_error]
    assert str(error) == (
        "config.yaml: profiles[1].pluginConfig[0].args.defaultConstraints[0].maxSkew: "
        "Invalid value: 0: must be greater than zero"
    )
    extended = error.extended([FieldError.required("x")])
    assert [str(e) for e in extended.errors][-1] == "x: Required value"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("5s", 5.0, id="seconds"),
        pytest.param("500ms", 0.5, id="milliseconds"),
        pytest.param("1m30s", 90.0, id="minutes and seconds"),
        pytest.param("1.5h", 5400.0, id="a fraction of an hour"),
        pytest.param("0", 0.0, id="a bare zero"),
        pytest.param("-2s", -2.0, id="a negative duration"),
        pytest.param("10us", 1e-5, id="microseconds"),
    ],
)
def test_go_durations_parse_to_seconds(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5", "s", "5x", "1m30", "-", "1..5s"])
def test_malformed_go_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (15, "15s"),
        (90, "1m30s"),
        (3600, "1h0m0s"),
        (1.5, "1.5s"),
        (0.0015, "1.5ms"),
        (-45, "-45s"),
        (15.6, "15.6s"),
    ],
)
def test_durations_print_like_go(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(100.0, "100"), (0.5, "0.5"), (1e6, "1e+06"), (123456.0, "123456"), (1e-5, "1e-05")],
)
def test_floats_print_like_go(value: float, text: str) -> None:
    assert format_float(value) == text


def test_go_quote_keeps_printable_unicode() -> None:
    assert go_quote("é\t") == '"é\\t"'


def test_a_key_with_a_newline_stays_on_one_line() -> None:
    # Found by tests/fuzz: the unknown field's name was printed raw, splitting the error.
    from kubesched.config import ConfigError
    from kubesched.config.load import loads_config

    text = (
        'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"a\\nb": 1\n'
    )
    try:
        loads_config(text, "c.yaml")
    except ConfigError as err:
        assert str(err) == 'c.yaml: unknown field "a\\nb"'
    else:
        raise AssertionError("a configuration with an unknown field loaded")
