"""JSON text read as Go's ``encoding/json`` reads it, within limits Python can walk.

Two differences between Python's :func:`json.loads` and Go's decoder matter to a server:

* a lone UTF-16 surrogate escape (``"\\ud800"``) becomes, in Python, a string that cannot
  be encoded back to UTF-8 (every later write of it fails); Go's decoder replaces it with
  U+FFFD. :func:`loads` does the same.
* nesting: Go's scanner refuses JSON nested deeper than 10,000 levels (``exceeded max
  depth``). Python's parser and every recursive walk of the value (validation, patches,
  copies) run out of stack far earlier, so :func:`loads` refuses more than
  :data:`MAX_DEPTH` levels — a deliberate deviation: no Kubernetes object nests anywhere
  near that deep.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: The deepest nesting of arrays and objects accepted (upstream: 10,000; see above).
MAX_DEPTH = 200

# A surrogate escaped (``\ud800``), or its three UTF-8 bytes written raw (ED A0..BF xx):
# json.loads decodes bytes with "surrogatepass", so both end up as lone surrogates.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
_SURROGATE_ESCAPE_TEXT = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class JSONTextError(ValueError):
    """JSON text that cannot be read (a :class:`ValueError`, as :func:`json.loads` raises)."""


def _no_constant(text: str) -> Any:
    # NaN, Infinity and -Infinity are Python's extensions, not JSON: Go's decoder refuses
    # them (and a stored NaN would make every later answer invalid JSON).
    if text.startswith("-"):
        raise JSONTextError("invalid character 'I' in numeric literal")
    raise JSONTextError(f"invalid character {text[0]!r} looking for beginning of value")


def decoder(**options: Any) -> json.JSONDecoder:
    """A :class:`json.JSONDecoder` with ``options`` (an ``object_pairs_hook``) that, as Go's
    decoder, refuses NaN and Infinity: give it to :func:`loads`."""
    return json.JSONDecoder(parse_constant=_no_constant, **options)


_DEFAULT = decoder()


def loads(raw: bytes | str, decoder: json.JSONDecoder | None = None) -> Any:
    """Parse JSON text; lone surrogates become U+FFFD. Raises :class:`ValueError` (or
    :class:`UnicodeDecodeError`) for text that is not JSON, nests too deeply or holds NaN
    or Infinity (make a ``decoder`` with :func:`decoder` to keep that)."""
    try:
        value = (decoder or _DEFAULT).decode(_text(raw))
    except RecursionError:
        raise JSONTextError(f"exceeded max depth of {MAX_DEPTH}") from None
    check_depth(value)
    if isinstance(raw, str):
        lone = bool(_SURROGATE_ESCAPE_TEXT.search(raw) or _SURROGATE.search(raw))
    else:
        lone = _SURROGATE_ESCAPE.search(raw) is not None
    if lone:
        value = replace_surrogates(value)
    return value


def _text(raw: bytes | str) -> str:
    if isinstance(raw, str):
        return raw
    # "surrogatepass" as json.loads decodes bytes: a raw surrogate is then replaced (see
    # loads) on either path rather than refused on this one.
    return raw.decode("utf-8-sig" if raw[:1] != b"{" else "utf-8", "surrogatepass")


def check_depth(value: Any) -> None:
    """Raise :class:`JSONTextError` when ``value`` nests deeper than :data:`MAX_DEPTH`
    (iteratively: a deep value must not exhaust the stack while being measured)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if type(item) is dict:
            children: Any = item.values()
        elif type(item) is list:
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise JSONTextError(f"exceeded max depth of {MAX_DEPTH}")
        for child in children:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))


#: YAML aliases may repeat a value: a document whose aliases make it more than this many
#: times larger than what was written, past :data:`ALIASED_VALUES` values, is refused
#: (a "billion laughs" takes minutes to walk). go-yaml refuses "excessive aliasing" by a
#: sliding ratio; this simpler rule never refuses a document without aliases.
ALIAS_EXPANSION = 10
ALIASED_VALUES = 100_000


def check_yaml(value: Any) -> None:
    """Check a value read from YAML: its aliases (:data:`ALIAS_EXPANSION`; a cycle of
    them) and its depth (:func:`check_depth`). Raises :class:`JSONTextError`."""
    sizes: dict[int, int] = {}
    measuring: set[int] = set()
    written = 0
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, done = stack.pop()
        if type(item) is dict:
            children: Any = item.values()
        elif type(item) is list:
            children = item
        else:
            continue
        key = id(item)
        if done:
            sizes[key] = 1 + sum(sizes.get(id(child), 1) for child in children)
            measuring.discard(key)
            continue
        if key in sizes:
            continue  # an alias of a value already measured
        if key in measuring:  # met again inside itself
            raise JSONTextError("document contains a cycle of aliases")
        measuring.add(key)
        written += 1 + len(children)
        stack.append((item, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    expanded = sizes.get(id(value), 1)
    if expanded > ALIASED_VALUES and expanded > ALIAS_EXPANSION * written:
        raise JSONTextError(
            f"document contains excessive aliasing: {expanded} values from {written} written"
        )
    check_depth(value)


def replace_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings and keys replaced by U+FFFD;
    objects and arrays are changed in place (callers may hold them by identity)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        items = [(replace_surrogates(k), replace_surrogates(v)) for k, v in value.items()]
        value.clear()
        value.update(items)
    elif isinstance(value, list):
        value[:] = [replace_surrogates(v) for v in value]
    return value
