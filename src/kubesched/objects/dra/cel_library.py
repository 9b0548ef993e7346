"""The Kubernetes CEL functions device selectors use, over cel-python's value types.

``k8s.io/apiserver/pkg/cel/library``: the quantity library (``quantity``, ``isQuantity``,
``sign``, ``isGreaterThan``, ``isLessThan``, ``compareTo``, ``asApproximateFloat``,
``asInteger``, ``isInteger``, ``add``, ``sub``), the semver library DRA adds (``semver``
with the optional normalize flag, ``isSemver``, ``major``, ``minor``, ``patch``,
comparisons), and cel-go's strings extension (``charAt``, ``indexOf``, ``lastIndexOf``,
``lowerAscii``, ``upperAscii``, ``replace``, ``split``, ``substring``, ``trim``,
``join``). Member functions are plain functions of their receiver, as cel-python calls
them (``a.compareTo(b)`` is ``compareTo(a, b)``); the comparisons serve quantities and
versions alike.

A function given arguments it has no overload for raises ``TypeError`` (cel-python's "no
such overload"); one that fails raises ``ValueError`` with upstream's text. Both
become CEL error values, which ``&&`` and ``||`` absorb as CEL says.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import semver
from celpy import celtypes
from celpy.evaluation import CELEvalError, bool_eq

from kubesched.objects.quantity import Quantity, QuantityError, parse_quantity

_MIN_INT64, _MAX_INT64 = -(2**63), 2**63 - 1
_FALSE = celtypes.BoolType(False)


def CelFunctionError(message: str) -> ValueError:
    """A library function's failure, with upstream's error text. A plain ``ValueError``:
    cel-python turns only its own exception classes (not subclasses) into CEL errors."""
    return ValueError(message)


class CelQuantity:
    """``kubernetes.Quantity``: a resource quantity; equal when their values are."""

    __slots__ = ("quantity",)

    def __init__(self, quantity: Quantity) -> None:
        self.quantity = quantity

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CelQuantity):
            return self.quantity.value == other.quantity.value
        raise TypeError("no such overload")

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.quantity.value)

    def __repr__(self) -> str:
        return f"quantity({str(self.quantity)!r})"


class CelSemver:
    """``kubernetes.Semver``: a semantic version (blang/semver ordering: the build
    metadata does not count)."""

    __slots__ = ("version",)

    def __init__(self, version: semver.Version) -> None:
        self.version = version

    def compare(self, other: CelSemver) -> int:
        return int(self.version.compare(other.version))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CelSemver):
            return self.compare(other) == 0
        raise TypeError("no such overload")

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        v = self.version
        return hash((v.major, v.minor, v.patch, v.prerelease))

    def __repr__(self) -> str:
        return f"semver({str(self.version)!r})"


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("no such overload")
    return str(value)


def _int(value: Any) -> int:
    if isinstance(value, bool | celtypes.BoolType) or not isinstance(value, int):
        raise TypeError("no such overload")
    return int(value)


# -- quantity -----------------------------------------------------------------------------


def _parse_quantity(text: str) -> Quantity:
    try:
        return parse_quantity(text)
    except QuantityError as err:
        raise CelFunctionError(err.message) from None


def quantity(text: Any) -> CelQuantity:
    """``quantity(<string>)``."""
    return CelQuantity(_parse_quantity(_string(text)))


def isQuantity(text: Any) -> celtypes.BoolType:
    """``isQuantity(<string>)``."""
    try:
        parse_quantity(_string(text))
    except QuantityError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _q(value: Any) -> Fraction:
    if not isinstance(value, CelQuantity):
        raise TypeError("no such overload")
    return value.quantity.value


def sign(value: Any) -> celtypes.IntType:
    """``<Quantity>.sign()``."""
    v = _q(value)
    return celtypes.IntType((v > 0) - (v < 0))


def asApproximateFloat(value: Any) -> celtypes.DoubleType:
    """``<Quantity>.asApproximateFloat()``."""
    return celtypes.DoubleType(float(_q(value)))


def _as_int64(value: Fraction) -> int | None:
    if value.denominator != 1 or not _MIN_INT64 <= value.numerator <= _MAX_INT64:
        return None
    return value.numerator


def isInteger(value: Any) -> celtypes.BoolType:
    """``<Quantity>.isInteger()``: whether ``asInteger`` would succeed."""
    return celtypes.BoolType(_as_int64(_q(value)) is not None)


def asInteger(value: Any) -> celtypes.IntType:
    """``<Quantity>.asInteger()``."""
    number = _as_int64(_q(value))
    if number is None:
        raise CelFunctionError("cannot convert value to integer")
    return celtypes.IntType(number)


def _with(value: Any, delta: Fraction) -> CelQuantity:
    q = value.quantity
    return CelQuantity(Quantity(q.value + delta, q.format))


def add(value: Any, other: Any) -> CelQuantity:
    """``<Quantity>.add(<Quantity or int>)``."""
    _q(value)
    delta = _q(other) if isinstance(other, CelQuantity) else Fraction(_int(other))
    return _with(value, delta)


def sub(value: Any, other: Any) -> CelQuantity:
    """``<Quantity>.sub(<Quantity or int>)``."""
    _q(value)
    delta = _q(other) if isinstance(other, CelQuantity) else Fraction(_int(other))
    return _with(value, -delta)


# -- semver -------------------------------------------------------------------------------


def _normalize(text: str) -> str:
    # normalizeAndParse: no "v" prefix, leading zeros dropped, missing minor/patch as 0.
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            stripped = part.lstrip("0")
            if not stripped or not stripped[0].isdigit():
                stripped = "0" + stripped
            parts[i] = stripped
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _parse_semver(text: Any, normalize: Any) -> semver.Version:
    source = _string(text)
    if not isinstance(normalize, bool | celtypes.BoolType):
        raise TypeError("no such overload")
    if normalize:
        source = _normalize(source)
    return semver.Version.parse(source)


def semver_(text: Any, normalize: Any = _FALSE) -> CelSemver:
    """``semver(<string>)``, ``semver(<string>, <bool normalize>)``."""
    try:
        return CelSemver(_parse_semver(text, normalize))
    except ValueError as err:
        raise CelFunctionError(str(err)) from None


def isSemver(text: Any, normalize: Any = _FALSE) -> celtypes.BoolType:
    """``isSemver(<string>)``, ``isSemver(<string>, <bool normalize>)``."""
    try:
        _parse_semver(text, normalize)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _v(value: Any) -> semver.Version:
    if not isinstance(value, CelSemver):
        raise TypeError("no such overload")
    return value.version


def major(value: Any) -> celtypes.IntType:
    """``<Semver>.major()``."""
    return celtypes.IntType(_v(value).major)


def minor(value: Any) -> celtypes.IntType:
    """``<Semver>.minor()``."""
    return celtypes.IntType(_v(value).minor)


def patch(value: Any) -> celtypes.IntType:
    """``<Semver>.patch()``."""
    return celtypes.IntType(_v(value).patch)


# -- comparisons of quantities and versions --------------------------------------------------


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, CelQuantity) and isinstance(b, CelQuantity):
        x, y = a.quantity.value, b.quantity.value
        return (x > y) - (x < y)
    if isinstance(a, CelSemver) and isinstance(b, CelSemver):
        return a.compare(b)
    raise TypeError("no such overload")


def compareTo(a: Any, b: Any) -> celtypes.IntType:
    """``<Quantity|Semver>.compareTo(<same>)``: -1, 0 or 1."""
    return celtypes.IntType(_compare(a, b))


def isGreaterThan(a: Any, b: Any) -> celtypes.BoolType:
    """``<Quantity|Semver>.isGreaterThan(<same>)``."""
    return celtypes.BoolType(_compare(a, b) == 1)


def isLessThan(a: Any, b: Any) -> celtypes.BoolType:
    """``<Quantity|Semver>.isLessThan(<same>)``."""
    return celtypes.BoolType(_compare(a, b) == -1)


# -- strings (cel-go ext.Strings) ------------------------------------------------------------


def charAt(text: Any, index: Any) -> celtypes.StringType:
    """``<string>.charAt(<int>)``: the code point there, "" at the end."""
    s, i = _string(text), _int(index)
    if i < 0 or i > len(s):
        raise CelFunctionError(f"index out of range: {i}")
    return celtypes.StringType(s[i : i + 1])


def indexOf(text: Any, needle: Any, start: Any = None) -> celtypes.IntType:
    """``<string>.indexOf(<string>[, <int>])``."""
    s, n = _string(text), _string(needle)
    offset = 0 if start is None else _int(start)
    if offset < 0 or offset > len(s):
        raise CelFunctionError(f"index out of range: {offset}")
    return celtypes.IntType(s.find(n, offset))


def lastIndexOf(text: Any, needle: Any, start: Any = None) -> celtypes.IntType:
    """``<string>.lastIndexOf(<string>[, <int>])``."""
    s, n = _string(text), _string(needle)
    if start is None:
        return celtypes.IntType(s.rfind(n))
    offset = _int(start)
    if offset < 0 or offset >= len(s):
        raise CelFunctionError(f"index out of range: {offset}")
    return celtypes.IntType(s.rfind(n, 0, offset + len(n)))


def lowerAscii(text: Any) -> celtypes.StringType:
    """``<string>.lowerAscii()``: ASCII letters only."""
    s = _string(text)
    return celtypes.StringType("".join(c.lower() if c.isascii() else c for c in s))


def upperAscii(text: Any) -> celtypes.StringType:
    """``<string>.upperAscii()``: ASCII letters only."""
    s = _string(text)
    return celtypes.StringType("".join(c.upper() if c.isascii() else c for c in s))


def replace(text: Any, old: Any, new: Any, count: Any = None) -> celtypes.StringType:
    """``<string>.replace(<string>, <string>[, <int>])`` (a negative count: all)."""
    n = -1 if count is None else _int(count)
    return celtypes.StringType(_string(text).replace(_string(old), _string(new), n))


def split(text: Any, sep: Any, count: Any = None) -> celtypes.ListType:
    """``<string>.split(<string>[, <int>])`` (Go's ``strings.SplitN``)."""
    s, separator = _string(text), _string(sep)
    n = -1 if count is None else _int(count)
    if n == 0:
        return celtypes.ListType([])
    if separator == "":
        parts = list(s) if n < 0 else [*list(s[: n - 1]), s[n - 1 :]] if len(s) > n else list(s)
    else:
        parts = s.split(separator, n - 1 if n > 0 else -1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def substring(text: Any, start: Any, end: Any = None) -> celtypes.StringType:
    """``<string>.substring(<int>[, <int>])``."""
    s, i = _string(text), _int(start)
    j = len(s) if end is None else _int(end)
    if i < 0 or i > len(s):
        raise CelFunctionError(f"index out of range: {i}")
    if j < 0 or j > len(s):
        raise CelFunctionError(f"index out of range: {j}")
    if i > j:
        raise CelFunctionError(f"invalid substring range. start: {i}, end: {j}")
    return celtypes.StringType(s[i:j])


def trim(text: Any) -> celtypes.StringType:
    """``<string>.trim()``: Unicode white space on both ends."""
    return celtypes.StringType(_string(text).strip())


def join(items: Any, sep: Any = None) -> celtypes.StringType:
    """``<list(string)>.join([<string>])``."""
    if not isinstance(items, list):
        raise TypeError("no such overload")
    separator = "" if sep is None else _string(sep)
    return celtypes.StringType(separator.join(_string(i) for i in items))


# -- equality and ordering ------------------------------------------------------------------
#
# CEL's heterogeneous equality (a value of another type is unequal, not an error; numbers
# compare by value across int, uint and double) and Kubernetes' cross-type numeric
# comparisons (``cel.CrossTypeNumericComparisons``): cel-python's operators raise "no such
# overload" for both, where cel-go answers.


def _is_number(value: Any) -> bool:
    numbers = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)
    return isinstance(value, numbers) and not isinstance(value, celtypes.BoolType)


def _number(value: Any) -> int | float:
    return float(value) if isinstance(value, celtypes.DoubleType) else int(value)


def _cel_type(value: Any) -> type:
    # Python bools and ints are CEL bools and ints; celpy's subclasses say which.
    return type(value)


def equals(a: Any, b: Any) -> Any:
    """``_==_``."""
    if isinstance(a, CELEvalError):
        return a
    if isinstance(b, CELEvalError):
        return b
    if _is_number(a) and _is_number(b):
        return celtypes.BoolType(_number(a) == _number(b))
    if _cel_type(a) is not _cel_type(b):
        kinds = {_cel_type(a), _cel_type(b)}
        # Lists and maps of any element types compare element by element.
        if not kinds <= {celtypes.ListType, list} and not kinds <= {celtypes.MapType, dict}:
            return celtypes.BoolType(False)
    try:
        return bool_eq(a, b)
    except TypeError:
        return celtypes.BoolType(False)


def not_equals(a: Any, b: Any) -> Any:
    """``_!=_``."""
    result = equals(a, b)
    return result if isinstance(result, CELEvalError) else celtypes.BoolType(not result)


def _order(op: Callable[[Any, Any], bool], a: Any, b: Any) -> Any:
    if isinstance(a, CELEvalError):
        return a
    if isinstance(b, CELEvalError):
        return b
    if _is_number(a) and _is_number(b):
        return celtypes.BoolType(op(_number(a), _number(b)))
    if _cel_type(a) is not _cel_type(b) or isinstance(a, CelQuantity | CelSemver):
        raise TypeError("no such overload")
    return celtypes.BoolType(op(a, b))


# Plain module-level functions: cel-python's transpiled code calls them by qualified name.
def less(a: Any, b: Any) -> Any:
    """``_<_``."""
    return _order(operator.lt, a, b)


def less_equal(a: Any, b: Any) -> Any:
    """``_<=_``."""
    return _order(operator.le, a, b)


def greater(a: Any, b: Any) -> Any:
    """``_>_``."""
    return _order(operator.gt, a, b)


def greater_equal(a: Any, b: Any) -> Any:
    """``_>=_``."""
    return _order(operator.ge, a, b)


#: CEL name → implementation, for the environment.
FUNCTIONS: dict[str, Any] = {
    "_==_": equals,
    "_!=_": not_equals,
    "_<_": less,
    "_<=_": less_equal,
    "_>_": greater,
    "_>=_": greater_equal,
    "quantity": quantity,
    "isQuantity": isQuantity,
    "sign": sign,
    "asApproximateFloat": asApproximateFloat,
    "isInteger": isInteger,
    "asInteger": asInteger,
    "add": add,
    "sub": sub,
    "semver": semver_,
    "isSemver": isSemver,
    "major": major,
    "minor": minor,
    "patch": patch,
    "compareTo": compareTo,
    "isGreaterThan": isGreaterThan,
    "isLessThan": isLessThan,
    "charAt": charAt,
    "indexOf": indexOf,
    "lastIndexOf": lastIndexOf,
    "lowerAscii": lowerAscii,
    "upperAscii": upperAscii,
    "replace": replace,
    "split": split,
    "substring": substring,
    "trim": trim,
    "join": join,
}
