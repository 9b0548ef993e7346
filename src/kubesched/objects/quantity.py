"""Kubernetes resource quantities (``500m``, ``1.5Gi``, ``1e3``), parsed as apimachinery does.

The scheduler's fit decisions compare sums of container requests with a node's allocatable
amounts, so a quantity that parses or rounds even slightly differently from
``k8s.io/apimachinery/pkg/api/resource`` changes which pods fit where. This module
reproduces that package's parser (including its quirks: values finer than 1n round up,
BinarySI values are capped at 2^63-1, ``"."`` and ``"Gi"`` are zero) with exact
:class:`fractions.Fraction` arithmetic instead of fixed-point integers.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal, TypeAlias

from kubesched.objects.errors import ObjectError

QuantityFormat: TypeAlias = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

# The pattern apimachinery quotes in its error message; it is looser than what it accepts.
_QUOTED_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_ERROR = f"quantities must match the regular expression '{_QUOTED_PATTERN}'"
NUMERIC_ERROR = "unable to parse numeric part of quantity"
SUFFIX_ERROR = "unable to parse quantity's suffix"
TYPE_ERROR = "quantity must be a string or a number"
RANGE_ERROR = "quantity has too many digits to represent"

# Mirrors apimachinery's hand-written scanner (sign, leading zeros, integer digits, optional
# fraction, suffix); with greedy groups the first full match splits the text as it does.
_SCAN = re.compile(r"([+-]?)(0*)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_EXPONENT = re.compile(r"[+-]?[0-9]+")

_SUFFIXES: dict[str, tuple[int, int, QuantityFormat]] = {
    "": (10, 0, "DecimalSI"),
    "n": (10, -9, "DecimalSI"),
    "u": (10, -6, "DecimalSI"),
    "m": (10, -3, "DecimalSI"),
    "k": (10, 3, "DecimalSI"),
    "M": (10, 6, "DecimalSI"),
    "G": (10, 9, "DecimalSI"),
    "T": (10, 12, "DecimalSI"),
    "P": (10, 15, "DecimalSI"),
    "E": (10, 18, "DecimalSI"),
    "Ki": (2, 10, "BinarySI"),
    "Mi": (2, 20, "BinarySI"),
    "Gi": (2, 30, "BinarySI"),
    "Ti": (2, 40, "BinarySI"),
    "Pi": (2, 50, "BinarySI"),
    "Ei": (2, 60, "BinarySI"),
}
_DECIMAL_SUFFIX = {exp: s for s, (base, exp, _) in _SUFFIXES.items() if base == 10}
_BINARY_SUFFIX = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")

_NANO = 10**9
_MAX_INT64 = 2**63 - 1
# Python refuses int/str conversions past 4300 digits, and Go's int32 scale arithmetic breaks
# long before that; nothing real comes near this bound, so beyond it we reject instead.
_MAX_DIGITS = 1000
# unicode.IsSpace, which Go's strings.TrimSpace uses (str.strip also trims \x1c-\x1f).
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
_GO_SPACE += "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


class QuantityError(ObjectError):
    """A value that is not a valid Kubernetes quantity; the message is apimachinery's."""

    def __init__(self, message: str, path: str = "", where: str = "") -> None:
        super().__init__(path, message, where)


def _away_from_zero(numerator: int, denominator: int) -> int:
    """Round a ratio to an integer away from zero, as apimachinery's ScaledValue documents."""
    return -(-numerator // denominator) if numerator >= 0 else numerator // denominator


@dataclass(frozen=True, slots=True, eq=False)
class Quantity:
    """An exact quantity and the suffix style it was written in.

    Equality, hashing and ordering look at ``value`` only (``1Gi == 1073741824``), as
    apimachinery's ``Cmp`` does; ``format`` only affects :meth:`__str__`.
    """

    value: Fraction
    format: QuantityFormat = "DecimalSI"

    def milli_value(self) -> int:
        """``value * 1000`` rounded away from zero (``MilliValue``), without int64 overflow."""
        return _away_from_zero(self.value.numerator * 1000, self.value.denominator)

    def int_value(self) -> int:
        """``value`` rounded away from zero (``Value``), without int64 overflow."""
        return _away_from_zero(self.value.numerator, self.value.denominator)

    def __str__(self) -> str:
        """The canonical form apimachinery serializes, e.g. ``1500m`` or ``1536Mi``."""
        return _canonical(self.value, self.format)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.value == other.value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.value)

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __le__(self, other: Quantity) -> bool:
        return self.value <= other.value

    def __gt__(self, other: Quantity) -> bool:
        return self.value > other.value

    def __ge__(self, other: Quantity) -> bool:
        return self.value >= other.value


def _decimal_parts(magnitude: Fraction) -> tuple[int, int]:
    """``(mantissa, exponent)`` with ``magnitude == mantissa * 10**exponent``."""
    num, den = magnitude.numerator, magnitude.denominator
    if den == 1:
        return num, 0
    twos = (den & -den).bit_length() - 1
    rest, fives = den >> twos, 0
    while rest % 5 == 0:
        rest, fives = rest // 5, fives + 1
    if rest != 1:
        # Not a finite decimal, which a Go Quantity cannot hold: round up at 1n as parsing does.
        return -(-num * _NANO // den), -9
    places = max(twos, fives)
    return num * 10**places // den, -places


@functools.lru_cache(maxsize=4096)
def _canonical(value: Fraction, fmt: QuantityFormat) -> str:
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    # BinarySI is kept only for whole values of at least 1Ki; anything else would lose
    # precision or read oddly, so apimachinery falls back to DecimalSI.
    if fmt == "BinarySI" and magnitude >= 1024 and magnitude.denominator == 1:
        amount, power = magnitude.numerator, 0
        while power < len(_BINARY_SUFFIX) - 1 and amount % 1024 == 0:
            amount, power = amount // 1024, power + 1
        return f"{sign}{amount}{_BINARY_SUFFIX[power]}"
    mantissa, exponent = _decimal_parts(magnitude)
    digits = str(mantissa)
    significant = digits.rstrip("0")
    exponent += len(digits) - len(significant)
    # Suffixes step by thousands, so lower the exponent to a multiple of 3 (padding zeros).
    shift = exponent % 3
    digits, exponent = significant + "0" * shift, exponent - shift
    if fmt != "DecimalExponent" and exponent in _DECIMAL_SUFFIX:
        return f"{sign}{digits}{_DECIMAL_SUFFIX[exponent]}"
    # apimachinery drops the exponent of a DecimalSI value beyond E ("1000E" prints "1");
    # writing it in exponent notation keeps the value instead.
    return f"{sign}{digits}e{exponent}" if exponent else f"{sign}{digits}"


def _interpret_suffix(suffix: str) -> tuple[int, int, QuantityFormat]:
    known = _SUFFIXES.get(suffix)
    if known is not None:
        return known
    if len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT.fullmatch(suffix, 1):
        exponent = int(suffix[1:])
        if -(2**63) <= exponent <= _MAX_INT64:
            # Go parses an int64 and then truncates it to int32 without a check.
            return 10, (exponent + 2**31) % 2**32 - 2**31, "DecimalExponent"
    raise QuantityError(SUFFIX_ERROR)


def parse_quantity(text: str) -> Quantity:
    """Parse ``text`` as ``resource.ParseQuantity`` does; raises :class:`QuantityError`."""
    return _parse_cached(text)


# Pods repeat the same few quantity strings, and a Quantity is immutable, so share results.
@functools.lru_cache(maxsize=8192)
def _parse_cached(text: str) -> Quantity:
    match = _SCAN.fullmatch(text)
    if not text or match is None:
        raise QuantityError(FORMAT_ERROR)
    sign, zeros, whole, fraction, suffix = match.groups()
    fraction = fraction or ""
    base, exponent, fmt = _interpret_suffix(suffix)
    if not (zeros or whole or fraction):
        # No digits at all (".", "-", "Gi"): apimachinery's fast path reads these as zero, but
        # the cases its slow path handles fail to parse the number.
        if (base == 10 and exponent < -9) or (base == 2 and exponent >= 50):
            raise QuantityError(NUMERIC_ERROR)
        return Quantity(Fraction(0), fmt)
    significant = (whole + fraction).lstrip("0")
    scale = exponent - len(fraction) if base == 10 else -len(fraction)
    if len(significant) > _MAX_DIGITS or (base == 10 and len(significant) + scale > _MAX_DIGITS):
        raise QuantityError(RANGE_ERROR)
    mantissa = int(significant or "0")
    width = len(significant)  # mantissa < 10**width
    if base == 2:
        mantissa <<= exponent
        width += exponent * 3 // 10 + 1
    # Express the magnitude in nanos, rounding any finer remainder up so that a tiny
    # request never becomes zero.
    if scale >= -9:
        nanos = mantissa * 10 ** (scale + 9)
    elif width + scale + 9 <= 0:
        nanos = 1 if mantissa else 0  # certainly below 1n; avoids computing 10**-scale
    else:
        nanos = -(-mantissa // 10 ** (-scale - 9))
    if base == 2:
        if nanos > _MAX_INT64 * _NANO:
            nanos = _MAX_INT64 * _NANO
        elif 0 < nanos < _NANO:
            fmt = "DecimalSI"
    return Quantity(Fraction(-nanos if sign == "-" else nanos, _NANO), fmt)


def _go_json_number(number: float) -> str:
    """``number`` spelled as Go's encoding/json would, since that text is what gets parsed."""
    if not math.isfinite(number):
        raise QuantityError(TYPE_ERROR)
    magnitude = abs(number)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        return repr(number)  # Go also uses exponent notation here, so the format matches
    return format(Decimal(repr(number)), "f")


def parse_quantity_value(obj: object) -> Quantity:
    """Decode a quantity field from a JSON/YAML object (a string or a bare number).

    Like ``Quantity.UnmarshalJSON``, surrounding whitespace in a string is ignored.
    """
    if isinstance(obj, str):
        return parse_quantity(obj.strip(_GO_SPACE))
    if isinstance(obj, bool):
        raise QuantityError(TYPE_ERROR)
    if isinstance(obj, int):
        if obj.bit_length() > 4 * _MAX_DIGITS:
            raise QuantityError(RANGE_ERROR)
        return parse_quantity(str(obj))
    if isinstance(obj, float):
        return parse_quantity(_go_json_number(obj))
    raise QuantityError(TYPE_ERROR)
