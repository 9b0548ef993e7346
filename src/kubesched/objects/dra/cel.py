"""CEL device selectors: the environment of ``k8s.io/dynamic-resource-allocation/cel``.

An expression sees one variable, ``device``: ``device.driver``,
``device.attributes[domain][id]`` (an attribute published without a domain is in the
driver's; a version attribute is a semver value; a domain the device has no attributes
in reads as an empty map, so a missing attribute is "no such key: <id>") and
``device.capacity[domain][id]`` (quantities). Besides the CEL standard library there are
the Kubernetes functions of :mod:`.cel_library` and ``cel.bind``.

**Evaluation** uses cel-python (pinned), which parses CEL and transpiles it to Python.
Its own runner runs the code in one module-wide namespace (no two threads may evaluate at
once, and custom functions are looked up by their module's name in celpy's globals); so
the transpiled statements are run here in a namespace per expression, and each
evaluation calls the expression's top-level function with a fresh activation.

**Compilation** (:func:`compile_selector`) happens once per distinct expression. cel-go
type-checks; cel-python does not, so this module checks what a user notices: every
identifier is ``device`` or bound by a macro or ``cel.bind``; every function is one this
environment has (``undeclared reference to 'x' (in container '')`` otherwise, as cel-go
says); a function 1.34 has but this environment lacks is refused by name
(:data:`UNSUPPORTED`) rather than evaluated wrongly; an expression that cannot be a bool
is refused (``must evaluate to bool or the unknown type, not int``). Type errors cel-go
would find at compile time (``quantity(1)``) surface here at evaluation as "no such
overload".

**Caching**: each compiled selector keeps its result per device (weakly: a device
republished in a new slice is a new object), so thousands of devices per pod cost one
evaluation each per expression; :func:`stats` counts evaluations and cache hits.
"""

from __future__ import annotations

import functools
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import celpy
import celpy.evaluation
import lark
from celpy import celtypes
from celpy.celparser import CELParseError, CELParser
from lark import Tree

import kubesched
from kubesched.objects.dra import cel_library
from kubesched.objects.dra.slices import Device, split_qualified_name

__all__ = [
    "CelCompileError",
    "CelRuntimeError",
    "CelStats",
    "CompiledSelector",
    "claim_selector_error",
    "class_selector_error",
    "compile_error",
    "compile_selector",
    "device_matches",
    "reset_stats",
    "stats",
]

#: Functions of cel-python's standard library this environment keeps.
_STANDARD = frozenset(
    {
        "size",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "int",
        "uint",
        "double",
        "string",
        "bool",
        "bytes",
        "dyn",
        "has",
        "duration",
        "timestamp",
    }
)
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_FUNCTIONS = _STANDARD | frozenset(cel_library.FUNCTIONS)
#: Functions and namespaces of 1.34's CEL environment for device selectors that this one
#: does not implement: refused by name at compilation, never evaluated.
UNSUPPORTED = frozenset(
    {
        "url",
        "isURL",
        "getScheme",
        "getHost",
        "getHostname",
        "getPort",
        "getEscapedPath",
        "getQuery",
        "ip",
        "isIP",
        "cidr",
        "isCIDR",
        "family",
        "isUnspecified",
        "isLoopback",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "isGlobalUnicast",
        "containsIP",
        "containsCIDR",
        "prefixLength",
        "masked",
        "find",
        "findAll",
        "isSorted",
        "sum",
        "min",
        "max",
        "format",
        "quote",
        "reverse",
        "mul",
        "div",
        "divInt",
        "transformList",
        "transformMap",
        "transformMapEntry",
        "optMap",
        "optFlatMap",
        "orValue",
        "hasValue",
        "value",
        "or",
        "getDays",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
        "getFullYear",
        "getMonth",
        "getDayOfMonth",
        "getDayOfWeek",
        "getDayOfYear",
        "getDate",
    }
)
_UNSUPPORTED_NAMESPACES = frozenset(
    {"sets", "math", "strings", "optional", "base64", "lists", "regex", "authz"}
)
_VARIABLE = "device"
_CONTAINER = " (in container '')"


class CelCompileError(ValueError):
    """An expression that does not compile; ``detail`` is the validation error's detail
    (``compilation failed: ERROR: <input>:1:1: ...``)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class CelRuntimeError(RuntimeError):
    """An evaluation that failed (``no such key: model``), as cel-go words it."""


@dataclass
class CelStats:
    """What selectors cost: compilations, evaluations (cache misses), cache hits and the
    time spent evaluating."""

    compilations: int = 0
    evaluations: int = 0
    cache_hits: int = 0
    eval_seconds: float = 0.0

    @property
    def hit_rate(self) -> float:
        """Cache hits over all lookups (0 when none)."""
        lookups = self.evaluations + self.cache_hits
        return self.cache_hits / lookups if lookups else 0.0

    @property
    def seconds_per_evaluation(self) -> float:
        """Mean evaluation time (0 when none)."""
        return self.eval_seconds / self.evaluations if self.evaluations else 0.0


_STATS = CelStats()


def stats() -> CelStats:
    """A copy of the process-wide counters."""
    return CelStats(**vars(_STATS))


def reset_stats() -> None:
    """Zero the counters (benchmarks measure one run at a time)."""
    global _STATS
    _STATS = CelStats()


# -- parsing ------------------------------------------------------------------------------

_PARSE_LOCK = threading.Lock()
_ENV: celpy.Environment | None = None


def _environment() -> celpy.Environment:
    global _ENV
    if _ENV is None:
        # cel-python keeps one parser per process, built with the tree class of the first
        # runner asked for; the transpiler needs its own.
        parser = CELParser.CEL_PARSER
        if parser is not None and parser.options.tree_class is not celpy.evaluation.TranspilerTree:
            CELParser.CEL_PARSER = None
        _ENV = celpy.Environment(runner_class=celpy.CompiledRunner)
    return _ENV


def _snippet(expression: str, line: int, column: int) -> str:
    # cel-go's error snippet: the source line, and a caret under the column (dots before).
    lines = expression.split("\n")
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    return f"\n | {source}\n | {'.' * max(column - 1, 0)}^"


def _error(expression: str, message: str, line: int, column: int) -> CelCompileError:
    text = f"ERROR: <input>:{line}:{column}: {message}{_snippet(expression, line, column)}"
    return CelCompileError("compilation failed: " + text)


def _syntax(cause: BaseException | None) -> str:
    # cel-go (ANTLR) words these "mismatched input 'x' expecting {...}" and "token
    # recognition error at: 'x'"; the expected set is ANTLR's and is left out.
    if isinstance(cause, lark.exceptions.UnexpectedToken):
        token = cause.token
        text = "<EOF>" if token.type == "$END" else str(token)
        return f"mismatched input '{text}'"
    if isinstance(cause, lark.exceptions.UnexpectedCharacters):
        return f"token recognition error at: '{cause.char}'"
    return "syntax error"


def _parse(expression: str) -> Tree[Any]:
    env = _environment()
    try:
        with _PARSE_LOCK:
            return env.compile(expression)
    except CELParseError as err:
        cause = err.__context__
        detail = f"Syntax error: {_syntax(cause)}"
        line, column = err.line or 1, err.column or 1
        if isinstance(cause, lark.exceptions.UnexpectedToken) and cause.token.type == "$END":
            # The end of input, where ANTLR places its EOF token.
            lines = expression.split("\n")
            line, column = len(lines), len(lines[-1]) + 1
        raise _error(expression, detail, line, column) from None
    except lark.exceptions.LarkError as err:
        raise _error(expression, f"Syntax error: {err}", 1, 1) from None


# -- static checks ------------------------------------------------------------------------


def _position(tree: Tree[Any]) -> tuple[int, int]:
    meta = tree.meta
    return (getattr(meta, "line", 1) or 1, getattr(meta, "column", 1) or 1)


def _ident_name(tree: Any) -> str | None:
    """The identifier of an expression that is only an identifier (a macro's variable)."""
    node = tree
    while isinstance(node, Tree):
        if node.data == "ident":
            token = node.children[0]
            return str(token)
        if len(node.children) != 1:
            return None
        node = node.children[0]
    return None


def _bound_names(tree: Tree[Any]) -> set[str]:
    names: set[str] = set()
    for node in tree.iter_subtrees():
        if node.data != "member_dot_arg" or len(node.children) != 3:
            continue
        method, args = str(node.children[1]), node.children[2]
        if method in _MACROS or method == "bind":
            first = args.children[0] if isinstance(args, Tree) and args.children else None
            name = _ident_name(first)
            if name:
                names.add(name)
    return names


def _check(expression: str, tree: Tree[Any]) -> None:
    bound = _bound_names(tree)
    for node in tree.iter_subtrees_topdown():  # type: ignore[no-untyped-call]
        line, column = _position(node)
        if node.data == "ident":
            name = str(node.children[0])
            if name != _VARIABLE and name not in bound:
                raise _error(
                    expression, f"undeclared reference to '{name}'{_CONTAINER}", line, column
                )
        elif node.data == "ident_arg":
            name = str(node.children[0])
            line, column = _open_paren(node.children[0], line, column)
            _check_function(expression, name, line, column)
            if name == "has" and not _is_field_selection(node):
                raise _error(expression, "invalid argument to has() macro", line, column)
        elif node.data == "member_dot_arg":
            name = str(node.children[1])
            line, column = _open_paren(node.children[1], line, column)
            target = _ident_name(node.children[0])
            if target in _UNSUPPORTED_NAMESPACES:
                raise _error(expression, _unsupported(f"{target}.{name}"), line, column)
            if target == "cel" and _VARIABLE != "cel" and "cel" not in bound:
                if name != "bind":
                    raise _error(
                        expression,
                        f"undeclared reference to 'cel.{name}'{_CONTAINER}",
                        line,
                        column,
                    )
                continue
            if name not in _MACROS:
                _check_function(expression, name, line, column)
        elif node.data in ("dot_ident", "dot_ident_arg", "member_object"):
            raise _error(expression, _unsupported("this syntax"), line, column)


def _is_field_selection(call: Tree[Any]) -> bool:
    # has() takes one argument, a field selection (a.b), as cel-go's macro insists.
    args = call.children[1] if len(call.children) > 1 else None
    if not isinstance(args, Tree) or len(args.children) != 1:
        return False
    node: Any = args.children[0]
    while isinstance(node, Tree) and len(node.children) == 1 and node.data != "member_dot":
        node = node.children[0]
    return isinstance(node, Tree) and node.data == "member_dot"


def _open_paren(token: Any, line: int, column: int) -> tuple[int, int]:
    # cel-go places a call at its "(", just after the function's name.
    if isinstance(token, lark.Token) and token.line is not None and token.column is not None:
        return token.line, token.column + len(str(token))
    return line, column


def _unsupported(what: str) -> str:
    return (
        f"{what} is accepted by Kubernetes 1.34 but not supported by kubesched's CEL "
        "environment for device selectors"
    )


def _check_function(expression: str, name: str, line: int, column: int) -> None:
    if name in _FUNCTIONS:
        return
    if name in UNSUPPORTED:
        raise _error(expression, _unsupported(f"the function '{name}'"), line, column)
    raise _error(expression, f"undeclared reference to '{name}'{_CONTAINER}", line, column)


_COMPARISONS = frozenset(
    {
        "relation_lt",
        "relation_le",
        "relation_gt",
        "relation_ge",
        "relation_eq",
        "relation_ne",
        "relation_in",
    }
)
_BOOL_FUNCTIONS = frozenset(
    {
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "has",
        "isQuantity",
        "isSemver",
        "isInteger",
        "isGreaterThan",
        "isLessThan",
        "all",
        "exists",
        "exists_one",
        "bool",
    }
)
_INT_FUNCTIONS = frozenset(
    {
        "size",
        "int",
        "compareTo",
        "sign",
        "asInteger",
        "major",
        "minor",
        "patch",
        "indexOf",
        "lastIndexOf",
    }
)
_STRING_FUNCTIONS = frozenset(
    {"string", "charAt", "lowerAscii", "upperAscii", "replace", "substring", "trim", "join"}
)


def _kind(tree: Any) -> str:
    """A coarse static type of an expression: bool, int, uint, double, string, bytes,
    null, list, map, quantity, semver, or dyn (not known)."""
    if not isinstance(tree, Tree):
        return "dyn"
    data, children = tree.data, tree.children
    if data == "expr":
        if len(children) == 3:
            a, b = _kind(children[1]), _kind(children[2])
            return a if a == b else "dyn"
        return _kind(children[0])
    if data in ("conditionalor", "conditionaland") and len(children) == 2:
        return "bool"
    if data == "relation" and len(children) == 2:
        return (
            "bool" if isinstance(children[0], Tree) and children[0].data in _COMPARISONS else "dyn"
        )
    if data in ("addition", "multiplication") and len(children) == 2:
        left = _kind(children[0].children[0]) if isinstance(children[0], Tree) else "dyn"
        right = _kind(children[1])
        return (
            left if left == right and left in ("int", "uint", "double", "string", "list") else "dyn"
        )
    if data == "unary" and len(children) == 2:
        op = children[0]
        return "bool" if isinstance(op, Tree) and op.data == "unary_not" else _kind(children[1])
    if data == "literal":
        token = children[0]
        kind = getattr(token, "type", "")
        return {
            "INT_LIT": "int",
            "UINT_LIT": "uint",
            "FLOAT_LIT": "double",
            "STRING_LIT": "string",
            "MLSTRING_LIT": "string",
            "BYTES_LIT": "bytes",
            "BOOL_LIT": "bool",
            "NULL_LIT": "null",
        }.get(kind, "dyn")
    if data == "list_lit":
        return "list"
    if data == "map_lit":
        return "map"
    if data in ("member_dot_arg", "ident_arg"):
        name = str(children[1] if data == "member_dot_arg" else children[0])
        if name in _BOOL_FUNCTIONS:
            return "bool"
        if name in _INT_FUNCTIONS:
            return "int"
        if name in _STRING_FUNCTIONS:
            return "string"
        if name in ("quantity", "add", "sub"):
            return "quantity"
        if name == "semver":
            return "semver"
        if name in ("map", "filter", "split"):
            return "list"
        return "dyn"
    if len(children) == 1 and data in (
        "expr",
        "conditionalor",
        "conditionaland",
        "relation",
        "addition",
        "multiplication",
        "unary",
        "member",
        "primary",
        "paren_expr",
    ):
        return _kind(children[0])
    return "dyn"


# -- cel.bind -----------------------------------------------------------------------------


def _rewrite_binds(tree: Tree[Any]) -> None:
    """``cel.bind(x, init, body)`` → ``[init].map(x, body)[0]``: ``init`` evaluated once,
    ``body`` with ``x`` bound to it, errors of either propagated; cel-python has no
    ``cel.bind``, but has the ``map`` macro."""
    for node in list(tree.iter_subtrees()):
        if node.data != "member_dot_arg" or len(node.children) != 3:
            continue
        if str(node.children[1]) != "bind" or _ident_name(node.children[0]) != "cel":
            continue
        args = node.children[2]
        if not isinstance(args, Tree) or len(args.children) != 3:
            continue
        variable, init, body = args.children
        template = _parse("[__bind_init__].map(__bind_var__, __bind_body__)[0]")
        replacement = next(t for t in template.iter_subtrees() if t.data == "member_index")
        for sub in replacement.iter_subtrees():
            for i, child in enumerate(sub.children):
                name = _ident_name(child)
                if name == "__bind_init__":
                    sub.children[i] = init
                elif name == "__bind_var__":
                    sub.children[i] = variable
                elif name == "__bind_body__":
                    sub.children[i] = body
        node.data = replacement.data
        node.children = replacement.children


# -- device values --------------------------------------------------------------------------


class _DomainMap(celtypes.MapType):
    """``device.attributes`` / ``device.capacity``: a domain without entries is empty."""

    _EMPTY = celtypes.MapType({})

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return self._EMPTY

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key]


def _attribute_value(value: Any) -> Any:
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    return cel_library.CelSemver(value)


def _device_value(device: Device) -> celtypes.MapType:
    attributes: dict[str, dict[Any, Any]] = {}
    for name, value in device.attributes.items():
        domain, ident = split_qualified_name(name, device.driver)
        attributes.setdefault(domain, {})[celtypes.StringType(ident)] = _attribute_value(value)
    capacity: dict[str, dict[Any, Any]] = {}
    for name, quantity in device.capacity.items():
        domain, ident = split_qualified_name(name, device.driver)
        capacity.setdefault(domain, {})[celtypes.StringType(ident)] = cel_library.CelQuantity(
            quantity
        )
    return celtypes.MapType(
        {
            celtypes.StringType("driver"): celtypes.StringType(device.driver),
            celtypes.StringType("attributes"): _DomainMap(
                {celtypes.StringType(d): celtypes.MapType(m) for d, m in attributes.items()}
            ),
            celtypes.StringType("capacity"): _DomainMap(
                {celtypes.StringType(d): celtypes.MapType(m) for d, m in capacity.items()}
            ),
        }
    )


_DEVICE_VALUES: weakref.WeakKeyDictionary[Device, celtypes.MapType] = weakref.WeakKeyDictionary()


def _device_cel(device: Device) -> celtypes.MapType:
    value = _DEVICE_VALUES.get(device)
    if value is None:
        value = _DEVICE_VALUES[device] = _device_value(device)
    return value


# -- compiled selectors -----------------------------------------------------------------------

_TOP = "CEL = celpy.evaluation.result(base_activation, "


def _runtime_message(error: celpy.evaluation.CELEvalError) -> str:
    args = error.args
    message = str(args[0]) if args else "evaluation error"
    cls = args[1] if len(args) > 1 else None
    details = args[2] if len(args) > 2 and isinstance(args[2], tuple) else ()
    if isinstance(cls, type) and issubclass(cls, KeyError) and details:
        return f"no such key: {details[0]}"
    if cls is ValueError and details and isinstance(details[0], str):
        return details[0]  # a library function's failure (cel_library.CelFunctionError)
    if isinstance(cls, type) and issubclass(cls, ZeroDivisionError):
        return "division by zero"
    if isinstance(cls, type) and issubclass(cls, TypeError):
        return "no such overload"
    return message


class CompiledSelector:
    """One compiled expression; :meth:`matches` evaluates it for a device."""

    def __init__(self, expression: str) -> None:
        self.expression = expression
        tree = _parse(expression)
        kind = _kind(tree)
        _rewrite_binds(tree)
        _check(expression, tree)
        if kind not in ("bool", "dyn"):
            raise CelCompileError(f"must evaluate to bool or the unknown type, not {kind}")
        runner: Any = _environment().program(tree, functions=dict(cel_library.FUNCTIONS))
        source: str = runner.tp.source_text
        at = source.rindex(_TOP)
        body = source[:at] + "TOP = (" + source[at + len(_TOP) :].rstrip()[:-1] + ")\n"
        namespace = dict(celpy.evaluation.__dict__)
        namespace["kubesched"] = kubesched
        exec(compile(body, "<cel>", "exec"), namespace)  # transpiled by cel-python
        self._top: Callable[[Any], Any] = namespace["TOP"]
        self._activation = runner.tp.base_activation
        self._results: weakref.WeakKeyDictionary[Device, bool | CelRuntimeError] = (
            weakref.WeakKeyDictionary()
        )

    def evaluate(self, device: Device) -> bool:
        """Evaluate for ``device`` without the cache. Raises :class:`CelRuntimeError`."""
        activation = self._activation.clone()
        activation.identifiers.load_values({_VARIABLE: _device_cel(device)})
        value = celpy.evaluation.result(activation, self._top)
        if isinstance(value, celpy.evaluation.CELEvalError):
            raise CelRuntimeError(_runtime_message(value))
        if isinstance(value, celtypes.BoolType | bool):
            return bool(value)
        kind = type(value).__name__.removesuffix("Type").lower()
        raise CelRuntimeError(
            f"CEL result of type {kind} could not be converted to bool: type conversion "
            f"error from '{kind}' to 'bool'"
        )

    def matches(self, device: Device) -> bool:
        """Whether ``device`` passes, from the cache when this device was seen before.
        Raises :class:`CelRuntimeError` (cached as well: the same device fails the same
        way)."""
        cached = self._results.get(device)
        if cached is None:
            started = time.perf_counter()
            try:
                cached = self.evaluate(device)
            except CelRuntimeError as err:
                cached = err
            _STATS.eval_seconds += time.perf_counter() - started
            _STATS.evaluations += 1
            self._results[device] = cached
        else:
            _STATS.cache_hits += 1
        if isinstance(cached, CelRuntimeError):
            raise cached
        return cached


@functools.lru_cache(maxsize=4096)
def _compile(expression: str) -> CompiledSelector | CelCompileError:
    _STATS.compilations += 1
    try:
        return CompiledSelector(expression)
    except CelCompileError as err:
        return err


def compile_selector(expression: str) -> CompiledSelector:
    """The compiled selector of ``expression``, compiled once per process. Raises
    :class:`CelCompileError`."""
    result = _compile(expression)
    if isinstance(result, CelCompileError):
        raise result
    return result


def compile_error(expression: str) -> str | None:
    """The validation error detail of ``expression`` (``compilation failed: ...``), or
    None when it compiles."""
    result = _compile(expression)
    return result.detail if isinstance(result, CelCompileError) else None


def claim_selector_error(claim_key: str, index: int, error: CelRuntimeError) -> str:
    """The DynamicResources plugin's wording of a claim selector that failed:
    ``claim <ns/name>: selector #<i>: CEL runtime error: <error>``."""
    return f"claim {claim_key}: selector #{index}: CEL runtime error: {error}"


def class_selector_error(class_name: str, index: int, error: CelRuntimeError) -> str:
    """As :func:`claim_selector_error`, for a DeviceClass's selector."""
    return f"class {class_name}: selector #{index}: CEL runtime error: {error}"


def device_matches(selectors: Iterable[str], device: Device) -> bool:
    """Whether ``device`` passes every selector (compiled once, results cached); raises
    :class:`CelCompileError` or :class:`CelRuntimeError` from the first that fails."""
    return all(compile_selector(s).matches(device) for s in selectors)
