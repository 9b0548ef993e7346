"""Quantity parsing, rounding and printing, checked against apimachinery's behaviour.

The tables follow the cases of apimachinery's quantity_test.go (TestQuantityParse,
TestQuantityString, TestQuantityParseEmit, TestQuantityCmp, TestJSONWhitespace); the
"quirks" tables add corner cases whose expected results were taken from running
apimachinery v0.34.1's ParseQuantity.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.objects.errors import ObjectError
from kubesched.objects.quantity import (
    FORMAT_ERROR,
    NUMERIC_ERROR,
    RANGE_ERROR,
    SUFFIX_ERROR,
    TYPE_ERROR,
    Quantity,
    QuantityError,
    QuantityFormat,
    parse_quantity,
    parse_quantity_value,
)

DSI, BSI, DEX = "DecimalSI", "BinarySI", "DecimalExponent"
KI, MI, GI, TI, PI, EI = (1024**n for n in range(1, 7))
MAX_INT64 = 2**63 - 1

# (text, exact value, format) — TestQuantityParse's valid table.
VALID = [
    ("0", 0, DSI),
    ("0n", 0, DSI),
    ("0u", 0, DSI),
    ("0m", 0, DSI),
    ("0Ki", 0, BSI),
    ("0k", 0, DSI),
    ("0Mi", 0, BSI),
    ("0M", 0, DSI),
    ("0Gi", 0, BSI),
    ("0G", 0, DSI),
    ("0Ti", 0, BSI),
    ("0T", 0, DSI),
    ("1", 1, DSI),
    ("1Ki", KI, BSI),
    ("8Ki", 8 * KI, BSI),
    ("7Mi", 7 * MI, BSI),
    ("6Gi", 6 * GI, BSI),
    ("5Ti", 5 * TI, BSI),
    ("4Pi", 4 * PI, BSI),
    ("3Ei", 3 * EI, BSI),
    ("10Ti", 10 * TI, BSI),
    ("100Ti", 100 * TI, BSI),
    ("5n", "5e-9", DSI),
    ("4u", "4e-6", DSI),
    ("3m", "3e-3", DSI),
    ("9", 9, DSI),
    ("8k", 8000, DSI),
    ("50k", 50000, DSI),
    ("7M", 7 * 10**6, DSI),
    ("6G", 6 * 10**9, DSI),
    ("5T", 5 * 10**12, DSI),
    ("40T", 40 * 10**12, DSI),
    ("300T", 300 * 10**12, DSI),
    ("2P", 2 * 10**15, DSI),
    ("1E", 10**18, DSI),
    ("1E-3", "0.001", DEX),
    ("1e3", 1000, DEX),
    ("1E6", 10**6, DEX),
    ("1e9", 10**9, DEX),
    ("1E12", 10**12, DEX),
    ("1e15", 10**15, DEX),
    ("1E18", 10**18, DEX),
    ("1e14", 10**14, DEX),
    ("1e13", 10**13, DEX),
    ("100.035k", 100035, DSI),
    ("0.001", "0.001", DSI),
    ("0.0005k", "0.5", DSI),
    ("0.005", "0.005", DSI),
    ("0.05", "0.05", DSI),
    ("0.5", "0.5", DSI),
    ("0.00050k", "0.5", DSI),
    ("0.00500", "0.005", DSI),
    ("0.05000", "0.05", DSI),
    ("0.50000", "0.5", DSI),
    ("0.5e0", "0.5", DEX),
    ("0.5e-1", "0.05", DEX),
    ("0.5e-2", "0.005", DEX),
    ("10.035M", 10035000, DSI),
    ("1.2e3", 1200, DEX),
    ("1.3E+6", 1300000, DEX),
    ("1.40e9", 14 * 10**8, DEX),
    ("1.53E12", 153 * 10**10, DEX),
    ("1.6e15", 16 * 10**14, DEX),
    ("1.7E18", 17 * 10**17, DEX),
    ("9.01", "9.01", DSI),
    ("8.1k", 8100, DSI),
    ("7.123456M", 7123456, DSI),
    ("6.987654321G", 6987654321, DSI),
    ("5.444T", 5444 * 10**9, DSI),
    ("40.1T", 401 * 10**11, DSI),
    ("300.2T", 3002 * 10**11, DSI),
    ("2.5P", 25 * 10**14, DSI),
    ("1.01E", 101 * 10**16, DSI),
    # Finer than 1n rounds up (away from zero) to the next nano.
    ("3.001n", "4e-9", DSI),
    ("1.1E-9", "2e-9", DEX),
    ("0.0000000001", "1e-9", DSI),
    ("0.0000000005", "1e-9", DSI),
    ("0.00000000050", "1e-9", DSI),
    ("0.5e-9", "1e-9", DEX),
    ("0.9n", "1e-9", DSI),
    ("0.00000012345", "124e-9", DSI),
    ("0.00000012354", "124e-9", DSI),
    # BinarySI saturates at 2^63-1; decimal formats do not.
    ("9Ei", MAX_INT64, BSI),
    ("9223372036854775807Ki", MAX_INT64, BSI),
    ("12E", 12 * 10**18, DSI),
    ("100.035Ki", "102435.84", BSI),
    ("0.5Mi", 512 * KI, BSI),
    ("0.05Gi", "53687091.2", BSI),
    ("0.025Ti", "27487790694.4", BSI),
    # Below 1 a BinarySI value switches to DecimalSI.
    ("0.000000000001Ki", "2e-9", DSI),
    (".001", "0.001", DSI),
    (".0001k", "0.1", DSI),
    ("1.", 1, DSI),
    ("1.G", 10**9, DSI),
]

# Odd inputs whose results come from running apimachinery (so are not signed again below).
QUIRKS = [
    ("", None, FORMAT_ERROR),
    (".", 0, DSI),
    ("-.", 0, DSI),
    ("+", 0, DSI),
    ("-", 0, DSI),
    ("-0", 0, DSI),
    ("00.00", 0, DSI),
    ("Gi", 0, BSI),
    (".Ki", 0, BSI),
    ("e3", 0, DEX),
    ("0e-10", 0, DEX),
    ("e-10", None, NUMERIC_ERROR),
    ("Pi", None, NUMERIC_ERROR),
    ("Ei", None, NUMERIC_ERROR),
    (".Ei", None, NUMERIC_ERROR),
    ("+1.5Ki", 1536, BSI),
    ("-.5Ki", -512, BSI),
    ("0.75Ki", 768, BSI),
    ("0.0005Ki", "0.512", DSI),
    ("-0.0000000000001Ki", "-1e-9", DSI),
    ("-10Ei", -MAX_INT64, BSI),
    ("1.5Ei", 1536 * PI, BSI),
    ("+123456789012345678901", 123456789012345678901, DSI),
    ("0.1234567891", "0.12345679", DSI),
    ("1e-100", "1e-9", DEX),
    ("1e100", 10**100, DEX),
    ("1e00003", 1000, DEX),
    ("1e+3", 1000, DEX),
    ("1.e3", 1000, DEX),
    ("5.", 5, DSI),
    ("1e4294967296", 1, DEX),  # Go truncates the exponent to int32
    ("1e9223372036854775808", None, SUFFIX_ERROR),
    ("1Ee3", None, SUFFIX_ERROR),
    ("1e", None, SUFFIX_ERROR),
    ("1e-", None, SUFFIX_ERROR),
    ("1e+", None, SUFFIX_ERROR),
    ("1Kib", None, FORMAT_ERROR),
    ("1.1.1", None, FORMAT_ERROR),
    # Not apimachinery: values past ~10^1000 are refused rather than held.
    ("1e1001", None, RANGE_ERROR),
    ("1" * 1001, None, RANGE_ERROR),
    ("0." + "0" * 5000 + "1", "1e-9", DSI),
]

# TestQuantityParse's invalid table, and what apimachinery says about each.
INVALID = [
    ("1.1.M", FORMAT_ERROR),
    ("1+1.0M", FORMAT_ERROR),
    ("0.1mi", SUFFIX_ERROR),
    ("0.1am", FORMAT_ERROR),
    ("aoeu", FORMAT_ERROR),
    (".5i", SUFFIX_ERROR),
    ("1i", SUFFIX_ERROR),
    ("-3.01i", SUFFIX_ERROR),
    ("-3.01e-", SUFFIX_ERROR),
    (" 1", FORMAT_ERROR),
    ("1 ", FORMAT_ERROR),
    ("1\n", FORMAT_ERROR),
    ("1,5", FORMAT_ERROR),
    ("0x10", FORMAT_ERROR),
    ("1_000", FORMAT_ERROR),
    ("١", FORMAT_ERROR),
    ("1KI", FORMAT_ERROR),
    ("1ki", SUFFIX_ERROR),
    ("1mm", SUFFIX_ERROR),
]

# (value, format, canonical string) — TestQuantityString.
STRINGS = [
    (GI, BSI, "1Gi"),
    (300 * MI, BSI, "300Mi"),
    (6 * KI, BSI, "6Ki"),
    (1001 * GI, BSI, "1001Gi"),
    (TI, BSI, "1Ti"),
    (5, BSI, "5"),
    ("0.5", BSI, "500m"),
    (10**9, DSI, "1G"),
    ("0.001", DSI, "1m"),
    ("0.08", DSI, "80m"),
    ("1.08", DSI, "1080m"),
    (300 * 10**6, DSI, "300M"),
    (10**12, DSI, "1T"),
    (1234567 * 10**6, DSI, "1234567M"),
    ("1234.567", BSI, "1234567m"),
    (3000, DSI, "3k"),
    (1025, BSI, "1025"),
    (0, DSI, "0"),
    (0, BSI, "0"),
    (0, DEX, "0"),
    (10**9, DEX, "1e9"),
    ("0.001", DEX, "1e-3"),
    ("1e-9", DEX, "1e-9"),
    ("0.08", DEX, "80e-3"),
    (300 * 10**6, DEX, "300e6"),
    (10**12, DEX, "1e12"),
    (1000, DEX, "1e3"),
    (3000, DEX, "3e3"),
    ("1e-9", DSI, "1n"),
    ("80e-9", DSI, "80n"),
    ("1080e-9", DSI, "1080n"),
    ("1e-6", DSI, "1u"),
    ("80e-6", DSI, "80u"),
    ("1080e-6", DSI, "1080u"),
    (10**100, DEX, "10e99"),
    # Not apimachinery (which prints "1"): DecimalSI past E falls back to exponent notation.
    (10**21, DSI, "1e21"),
    # Values a Go Quantity cannot hold: BinarySI past Ei, and non-decimal fractions.
    (1024 * EI, BSI, "1024Ei"),
    (Fraction(1, 3), DSI, "333333334n"),
]

# (input, String() after parsing) — TestQuantityParseEmit plus common spellings.
EMIT = [
    ("1Ki", "1Ki"),
    ("1Mi", "1Mi"),
    ("1Gi", "1Gi"),
    ("1024Mi", "1Gi"),
    ("1000M", "1G"),
    (".001Ki", "1024m"),
    (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
    ("1.5", "1500m"),
    ("1.5Gi", "1536Mi"),
    ("0.5Ki", "512"),
    ("1.1Ki", "1126400m"),
    ("1.0001Mi", "1048680857600u"),
    ("2048", "2048"),
    ("1e21", "1e21"),
    ("-1.5e0", "-1500e-3"),
    ("9Ei", "9223372036854775807"),
    ("100m", "100m"),
    ("0.1", "100m"),
]

# (input, milli_value(), int_value()): both round away from zero.
ROUNDING = [
    ("1n", 1, 1),
    ("1u", 1, 1),
    ("1m", 1, 1),
    ("1", 1000, 1),
    ("1k", 1000000, 1000),
    ("1.5", 1500, 2),
    ("0.1234567891", 124, 1),
    ("100.035Ki", 102435840, 102436),
    ("1Gi", 1073741824000, 1073741824),
    ("9Ei", MAX_INT64 * 1000, MAX_INT64),  # exact, where Go's MilliValue overflows
    ("0", 0, 0),
    ("-1.5", -1500, -2),
    ("-1.5m", -2, -1),
]


def _fraction(value: int | str | Fraction) -> Fraction:
    return Fraction(value)


@pytest.mark.parametrize(("text", "value", "fmt"), VALID, ids=[c[0] for c in VALID])
def test_parse_valid(text: str, value: int | str, fmt: str) -> None:
    q = parse_quantity(text)
    assert q.value == _fraction(value)
    assert q.format == fmt


@pytest.mark.parametrize(("text", "value", "fmt"), VALID, ids=[c[0] for c in VALID])
def test_parse_valid_with_sign(text: str, value: int | str, fmt: str) -> None:
    negative, positive = parse_quantity("-" + text), parse_quantity("+" + text)
    assert (negative.value, negative.format) == (-_fraction(value), fmt)
    assert (positive.value, positive.format) == (_fraction(value), fmt)


@pytest.mark.parametrize(("text", "value", "expect"), QUIRKS, ids=[repr(c[0])[:24] for c in QUIRKS])
def test_parse_quirks(text: str, value: int | str | None, expect: str) -> None:
    if value is None:
        with pytest.raises(QuantityError) as err:
            parse_quantity(text)
        assert err.value.message == expect
    else:
        q = parse_quantity(text)
        assert (q.value, q.format) == (_fraction(value), expect)


@pytest.mark.parametrize(("text", "message"), INVALID, ids=[c[0] for c in INVALID])
def test_parse_invalid(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as err:
        parse_quantity(text)
    assert err.value.message == message
    assert str(err.value) == message


@pytest.mark.parametrize(("value", "fmt", "text"), STRINGS, ids=[c[2] for c in STRINGS])
def test_str(value: int | str | Fraction, fmt: QuantityFormat, text: str) -> None:
    assert str(Quantity(_fraction(value), fmt)) == text
    if value != 0:
        assert str(Quantity(-_fraction(value), fmt)) == "-" + text


@pytest.mark.parametrize(("text", "canonical"), EMIT, ids=[c[0] for c in EMIT])
def test_parse_emit(text: str, canonical: str) -> None:
    assert str(parse_quantity(text)) == canonical
    if not text.startswith("-"):
        assert str(parse_quantity("-" + text)) == "-" + canonical


@pytest.mark.parametrize(("text", "milli", "whole"), ROUNDING, ids=[c[0] for c in ROUNDING])
def test_milli_value_and_int_value_round_away_from_zero(text: str, milli: int, whole: int) -> None:
    q = parse_quantity(text)
    assert q.milli_value() == milli
    assert q.int_value() == whole


@pytest.mark.parametrize(
    ("left", "right", "cmp"),
    [
        ("0", "0", 0),
        ("100m", "50m", 1),
        ("50m", "100m", -1),
        ("10000T", "100Gi", 1),
        ("1Ki", "1024", 0),
        ("1Gi", "1073741824", 0),
        ("1e3", "1k", 0),
        ("-1", "1n", -1),
    ],
)
def test_compare_by_value_only(left: str, right: str, cmp: int) -> None:
    a, b = parse_quantity(left), parse_quantity(right)
    assert ((a > b) - (a < b)) == cmp
    assert (a == b) == (cmp == 0)
    assert (a <= b) == (cmp <= 0)
    assert (a >= b) == (cmp >= 0)
    if cmp == 0:
        assert hash(a) == hash(b)


def test_equality_with_other_types_is_not_implemented() -> None:
    assert parse_quantity("1") != 1
    assert parse_quantity("1") != "1"


@pytest.mark.parametrize(
    ("obj", "text"),
    [
        (" 1", "1"),
        ("1 ", "1"),
        ("\t-1\n", "-1"),
        ("\u00a02Gi\u3000", "2Gi"),
        (1, "1"),
        (10, "10"),
        (-1, "-1"),
        (0.5, "500m"),
        (1.5, "1500m"),
        (0.1, "100m"),
        (123.0, "123"),
        (-0.0, "0"),
        (1e-7, "100e-9"),
        (1e20, "100E"),
        (1e21, "1e21"),
        (2**70, "1180591620717411303424"),
    ],
    ids=repr,
)
def test_parse_quantity_value(obj: object, text: str) -> None:
    assert str(parse_quantity_value(obj)) == text


def test_parse_quantity_value_keeps_format_of_go_json_numbers() -> None:
    # encoding/json spells 1e-7 and 1e21 in exponent notation and 1e20 in full.
    assert parse_quantity_value(1e-7).format == DEX
    assert parse_quantity_value(1e21).format == DEX
    assert parse_quantity_value(1e20).format == DSI


@pytest.mark.parametrize(
    "obj", [True, False, None, [1], {"a": 1}, b"1", math.nan, math.inf, -math.inf], ids=repr
)
def test_parse_quantity_value_rejects_other_types(obj: object) -> None:
    with pytest.raises(QuantityError) as err:
        parse_quantity_value(obj)
    assert err.value.message == TYPE_ERROR


def test_parse_quantity_value_rejects_bad_strings_and_huge_ints() -> None:
    with pytest.raises(QuantityError, match="regular expression"):
        parse_quantity_value("1 Gi")
    with pytest.raises(QuantityError) as err:
        parse_quantity_value(10**5000)
    assert err.value.message == RANGE_ERROR


def test_quantity_error_is_an_object_error() -> None:
    err = QuantityError(SUFFIX_ERROR)
    assert isinstance(err, ObjectError)
    assert (err.path, err.where) == ("", "")
    located = QuantityError(SUFFIX_ERROR, path="spec.containers[0].resources.limits.cpu")
    assert str(located.located("Pod default/web")) == (
        "Pod default/web: spec.containers[0].resources.limits.cpu: " + SUFFIX_ERROR
    )


def test_quantity_is_immutable_and_parse_is_shared() -> None:
    q = parse_quantity("250m")
    with pytest.raises(AttributeError):
        q.value = Fraction(1)  # type: ignore[misc]
    assert parse_quantity("250m") is q


# --- properties -------------------------------------------------------------------------

_SUFFIX = st.sampled_from(["", "n", "u", "m", "k", "M", "G", "T", "P", "E"])
_SUFFIX |= st.sampled_from(["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"])
_SUFFIX |= st.builds(
    "{}{}{}".format, st.sampled_from("eE"), st.sampled_from(["", "+", "-"]), st.integers(0, 40)
)
_DIGITS = st.text("0123456789", max_size=22)


@st.composite
def quantity_texts(draw: st.DrawFn) -> str:
    whole = draw(st.text("0123456789", min_size=1, max_size=22))
    fraction = draw(st.none() | _DIGITS)
    sign = draw(st.sampled_from(["", "+", "-"]))
    return sign + whole + ("" if fraction is None else "." + fraction) + draw(_SUFFIX)


@given(quantity_texts())
def test_canonical_string_round_trips(text: str) -> None:
    q = parse_quantity(text)
    again = parse_quantity(str(q))
    assert again.value == q.value
    assert str(again) == str(q)


@given(quantity_texts())
def test_values_are_whole_nanos_and_rounding_goes_away_from_zero(text: str) -> None:
    q = parse_quantity(text)
    assert (q.value * 10**9).denominator == 1
    milli, whole = q.milli_value(), q.int_value()
    if q.value >= 0:
        assert 0 <= milli - q.value * 1000 < 1
        assert 0 <= whole - q.value < 1
    else:
        assert 0 <= q.value * 1000 - milli < 1
        assert 0 <= q.value - whole < 1


@given(quantity_texts())
def test_nonzero_digits_never_parse_to_zero(text: str) -> None:
    number = re.match(r"[+-]?[0-9.]*", text)
    assert number is not None
    if any(c in "123456789" for c in number.group()):
        assert parse_quantity(text).value != 0


@given(quantity_texts(), quantity_texts())
def test_order_follows_value(a: str, b: str) -> None:
    qa, qb = parse_quantity(a), parse_quantity(b)
    assert (qa < qb) == (qa.value < qb.value)
    assert (qa == qb) == (qa.value == qb.value)


@given(st.text("0123456789.+-eEinumkKMGTP xa", max_size=12))
def test_arbitrary_text_parses_or_raises_quantity_error(text: str) -> None:
    try:
        q = parse_quantity(text)
    except QuantityError:
        return
    assert q.format in (DSI, BSI, DEX)


@given(st.floats(min_value=0, max_value=1e15, allow_nan=False))
def test_floats_parse_as_their_shortest_decimal_rounded_up_to_nanos(number: float) -> None:
    exact = Fraction(Decimal(repr(number)))
    nanos = math.ceil(exact * 10**9)
    assert parse_quantity_value(number).value == Fraction(nanos, 10**9)
