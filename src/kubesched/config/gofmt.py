"""Go-compatible text: ``%q`` quoting, ``%v`` floats and ``time.Duration`` strings.

Configuration errors must read exactly like kube-scheduler's, and its messages are made
by Go's ``fmt`` and ``time`` packages, so the few formats they use are rebuilt here.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

__all__ = ["format_duration", "format_float", "go_quote", "parse_duration"]

_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(text: str) -> str:
    """``text`` as Go's ``%q`` (``strconv.Quote``) prints it."""
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def format_float(value: float) -> str:
    """``value`` as Go's ``%v`` prints a float64: shortest digits, ``1e+06`` style."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    # repr() already gives the shortest round-tripping digits, as Go does.
    sign, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + exponent  # position of the decimal point in ``digits``
    exp = point - 1
    prefix = "-" if sign else ""
    # Go switches to exponent form below 1e-4 and from 1e+06 on (precision 6 rule).
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{prefix}{digits}{'0' * (point - len(digits))}"
    return f"{prefix}{digits[:point]}.{digits[point:]}"


_UNIT_NANOS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_PART = re.compile(r"(\d*)(?:\.(\d*))?([^\d.]*)")
_MAX_NANOS = 2**63 - 1


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string (``"5s"``, ``"500ms"``, ``"1m30s"``, ``"0"``).

    Raises ``ValueError`` for anything ``time.ParseDuration`` rejects.
    """
    rest = text
    negative = rest[:1] == "-"
    if rest[:1] in "+-" and rest:
        rest = rest[1:]
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError(f"invalid duration {go_quote(text)}")
    total = Decimal(0)
    while rest:
        match = _PART.match(rest)
        assert match is not None  # the pattern can match the empty string
        whole, frac, unit = match.group(1), match.group(2), match.group(3)
        if not whole and not frac:
            raise ValueError(f"invalid duration {go_quote(text)}")
        if unit not in _UNIT_NANOS:
            kind = "missing unit" if not unit else f"unknown unit {go_quote(unit)}"
            raise ValueError(f"{kind} in duration {go_quote(text)}")
        try:
            number = Decimal(f"{whole or '0'}.{frac or '0'}")
        except InvalidOperation as exc:  # pragma: no cover - the pattern only admits digits
            raise ValueError(f"invalid duration {go_quote(text)}") from exc
        total += number * _UNIT_NANOS[unit]
        rest = rest[match.end() :]
    nanos = int(total)  # Go drops fractions of a nanosecond
    if nanos > _MAX_NANOS:
        raise ValueError(f"invalid duration {go_quote(text)}")
    return -nanos / 1e9 if negative else nanos / 1e9


def _frac(value: int, precision: int) -> tuple[str, int]:
    """The fraction of ``value / 10**precision`` without trailing zeros, and the whole part."""
    digits = f"{value % 10**precision:0{precision}d}".rstrip("0")
    return ("." + digits if digits else ""), value // 10**precision


def format_duration(seconds: float) -> str:
    """``seconds`` as Go's ``time.Duration.String`` prints it (``"1m30s"``, ``"1.5ms"``)."""
    nanos = round(seconds * 1e9)
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos == 0:
        return "0s"
    if nanos < 1_000:
        return f"{sign}{nanos}ns"
    if nanos < 1_000_000:
        frac, whole = _frac(nanos, 3)
        return f"{sign}{whole}{frac}µs"
    if nanos < 1_000_000_000:
        frac, whole = _frac(nanos, 6)
        return f"{sign}{whole}{frac}ms"
    frac, whole = _frac(nanos, 9)
    text = f"{whole % 60}{frac}s"
    minutes = whole // 60
    if minutes:
        text = f"{minutes % 60}m{text}"
        if minutes // 60:
            text = f"{minutes // 60}h{text}"
    return sign + text
