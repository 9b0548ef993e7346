"""Small pieces the in-tree plugins share, after upstream's ``plugins/helper`` package.

Score normalization (``DefaultNormalizeScore``) with Go's integer arithmetic, over a list
of NodeScores and over a numpy array for the columnar path, the taint
effects that keep pods off a node, the type checks that queueing-hint functions make on
the objects they are given (upstream's ``util.As``), and the bridge from object-decoding
errors to the field errors that plugin args report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from kubesched.framework.args import ArgsError, FieldError
from kubesched.framework.interface import Status
from kubesched.framework.types import NodeScore
from kubesched.objects.errors import ObjectError
from kubesched.objects.pod import Pod
from kubesched.objects.taints import NO_EXECUTE, NO_SCHEDULE

__all__ = [
    "DO_NOT_SCHEDULE_TAINT_EFFECTS",
    "as_changed",
    "as_deleted",
    "check_no_args",
    "default_normalize_score",
    "default_normalize_scores",
    "field_error_from_object_error",
    "go_div",
    "join_path",
    "not_found",
    "same_pod",
]

T = TypeVar("T")

#: The taint effects that keep a pod off a node (upstream ``DoNotScheduleTaintsFilterFunc``).
DO_NOT_SCHEDULE_TAINT_EFFECTS: Final = frozenset({NO_SCHEDULE, NO_EXECUTE})

#: Fields any args mapping may carry: the versioned form names its kind.
_TYPE_META_FIELDS: Final = frozenset({"kind", "apiVersion"})


def go_div(a: int, b: int) -> int:
    """``a / b`` as Go divides int64s: the quotient truncated toward zero.

    Python's ``//`` floors instead, which differs when exactly one operand is negative.
    """
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def default_normalize_score(
    max_priority: int, reverse: bool, scores: list[NodeScore]
) -> Status | None:
    """Rescale ``scores`` in place from [0, max score] to [0, ``max_priority``].

    With ``reverse``, each result is subtracted from ``max_priority``, so the node with the
    highest raw score ends with the lowest. When every raw score is 0 (or less), scores are
    left alone, or all set to ``max_priority`` with ``reverse``. Scores are assumed
    non-negative, as upstream assumes; the arithmetic is Go's int64 (truncating) one.
    """
    max_count = 0
    for node_score in scores:
        if node_score.score > max_count:
            max_count = node_score.score
    if max_count == 0:
        if reverse:
            for node_score in scores:
                node_score.score = max_priority
        return None
    for node_score in scores:
        score = go_div(max_priority * node_score.score, max_count)
        node_score.score = max_priority - score if reverse else score
    return None


def default_normalize_scores(
    max_priority: int, reverse: bool, scores: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """``default_normalize_score`` over an int64 array: a new array, the same numbers.

    The division truncates toward zero as Go's does (only a negative score, which
    upstream does not expect, would tell it from floor division).
    """
    scores = np.asarray(scores, dtype=np.int64)
    if not len(scores):
        return scores.copy()
    max_count = int(scores.max())
    if max_count <= 0:
        if reverse:
            return np.full(len(scores), max_priority, dtype=np.int64)
        return scores.copy()
    if int(scores.min()) >= 0:
        if max_count <= len(scores):
            # Few distinct values (counts, weights): divide each once, then look up.
            table = np.arange(max_count + 1, dtype=np.int64) * max_priority // max_count
            normalized = table[scores]
        else:
            normalized = scores * max_priority // max_count
    else:
        scaled = scores * max_priority
        quotient = np.abs(scaled) // max_count
        normalized = np.where(scaled < 0, -quotient, quotient)
    return max_priority - normalized if reverse else normalized


def as_changed(cls: type[T], old: object, new: object) -> tuple[T | None, T]:
    """The (old, new) objects of an add or update event, checked to be ``cls``.

    Raises TypeError otherwise: a hint that raises makes the queue requeue the pod, as
    an error from upstream's ``util.As`` does.
    """
    if not isinstance(new, cls):
        raise TypeError(f"expected {cls.__name__}, but got {type(new).__name__}")
    if old is not None and not isinstance(old, cls):
        raise TypeError(f"expected {cls.__name__}, but got {type(old).__name__}")
    return old, new


def as_deleted(cls: type[T], old: object) -> T:
    """The object of a delete event, checked to be ``cls`` (TypeError otherwise)."""
    if not isinstance(old, cls):
        raise TypeError(f"expected {cls.__name__}, but got {type(old).__name__}")
    return old


def not_found(resource: str, name: str) -> str:
    """A lister's "not found" error, as client-go's listers word it:
    ``persistentvolumeclaim "data" not found``, ``storageclass.storage.k8s.io "fast" not
    found`` (the resource is singular, qualified by its group outside the core API)."""
    return f'{resource} "{name}" not found'


def same_pod(a: Pod, b: Pod) -> bool:
    """Whether two pods are one object: by UID as upstream, by key when a UID is missing
    (pods written in files often have none)."""
    if a.uid and b.uid:
        return a.uid == b.uid
    return a.key == b.key


def check_no_args(args: Mapping[str, Any] | None) -> None:
    """Raise ArgsError when a plugin that takes no arguments is given some."""
    if not args:
        return
    errors = [
        FieldError.invalid(key, key, "unknown field")
        for key in args
        if key not in _TYPE_META_FIELDS
    ]
    if errors:
        raise ArgsError(errors)


def field_error_from_object_error(err: ObjectError, prefix: str) -> FieldError:
    """The field error that ``err`` (raised decoding an object found at ``prefix`` in the
    args) stands for, with its path made relative to the args.

    ``ObjectError`` carries an already formatted message; the common kinds are parsed
    back so that the error keeps its type (Invalid, Required, Forbidden). Anything else is
    kept verbatim as a decode error, which prints the same way.
    """
    path = _join_path(prefix, err.path)
    message = err.message
    if message.startswith("Invalid value: "):
        parsed = _split_value(message[len("Invalid value: ") :])
        if parsed is not None:
            value, detail = parsed
            return FieldError.invalid(path, value, detail)
    elif message.startswith("Unsupported value: "):
        parsed = _split_value(message[len("Unsupported value: ") :])
        if parsed is not None and parsed[1].startswith("supported values: "):
            supported = _split_strings(parsed[1][len("supported values: ") :])
            if supported is not None:
                return FieldError.not_supported(path, parsed[0], supported)
    elif message.startswith("Required value"):
        return FieldError.required(path, message[len("Required value") :].removeprefix(": "))
    elif message.startswith("Forbidden: "):
        return FieldError.forbidden(path, message[len("Forbidden: ") :])
    return FieldError.decode(path, message)


def _split_value(text: str) -> tuple[object, str] | None:
    """``<json value>: <detail>`` → (value, detail), or None when it does not parse."""
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    if text[end : end + 2] == ": ":
        return value, text[end + 2 :]
    if end == len(text):
        return value, ""
    return None


def _split_strings(text: str) -> list[str] | None:
    """``"a", "b"`` → ["a", "b"], or None when it does not parse."""
    decoder = json.JSONDecoder()
    out: list[str] = []
    pos = 0
    while pos < len(text):
        try:
            value, pos = decoder.raw_decode(text, pos)
        except ValueError:
            return None
        if not isinstance(value, str):
            return None
        out.append(value)
        if text.startswith(", ", pos):
            pos += 2
        elif pos != len(text):
            return None
    return out


def _join_path(prefix: str, path: str) -> str:
    if not path:
        return prefix
    if not prefix:
        return path
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


def join_path(prefix: str, *parts: str | int) -> str:
    """``prefix`` extended by fields and indexes: ``join_path("a", "b", 0)`` is ``a.b[0]``."""
    out = prefix
    for part in parts:
        out = f"{out}[{part}]" if isinstance(part, int) else _join_path(out, part)
    return out
