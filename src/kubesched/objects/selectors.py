"""Label selectors and node selectors, decoded and evaluated as kube-scheduler does.

Pods choose nodes and other pods through selectors: ``spec.nodeSelector``, node
affinity, pod (anti-)affinity, topology spread constraints, Service and ReplicaSet
selectors. This module turns their JSON/YAML form into small immutable values and
evaluates them.

Two concerns shape it:

* Decoding is strict, like the API server's validation: a manifest that the API
  server would reject fails here with an :class:`ObjectError` naming the field,
  instead of quietly selecting nothing (or everything) during a simulation.
* Matching is cheap, because the scheduler evaluates selectors once per
  (pod, node) pair: everything that can be worked out ahead of time (value sets,
  the integer bound of ``Gt``/``Lt``) is worked out when the value is built.

The label key / value checks (``qualified_name_errors`` and friends) live here too,
because every decoder of labels and taints needs the same rules and messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, cast

from kubesched.objects.errors import ObjectError

__all__ = [
    "DOES_NOT_EXIST",
    "EXISTS",
    "GT",
    "IN",
    "LT",
    "NODE_NAME_FIELD",
    "NOT_IN",
    "OPERATORS",
    "LabelSelector",
    "NodeSelector",
    "NodeSelectorTerm",
    "PreferredSchedulingTerm",
    "Requirement",
    "dns1123_subdomain_errors",
    "label_value_errors",
    "qualified_name_errors",
    "selector_from_set",
]

IN: Final = "In"
NOT_IN: Final = "NotIn"
EXISTS: Final = "Exists"
DOES_NOT_EXIST: Final = "DoesNotExist"
GT: Final = "Gt"
LT: Final = "Lt"

#: Every operator a :class:`Requirement` may carry.
OPERATORS: Final = frozenset({IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT})

#: The only field a node selector's ``matchFields`` may name.
NODE_NAME_FIELD: Final = "metadata.name"

# The operators each kind of selector accepts, in the order the error messages list
# them (metav1.LabelSelector's list is sorted, the node selector lists follow the
# scheduler's own order).
_LABEL_SELECTOR_OPERATORS: Final = (DOES_NOT_EXIST, EXISTS, IN, NOT_IN)
_NODE_SELECTOR_OPERATORS: Final = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)
_NODE_FIELD_OPERATORS: Final = (IN, NOT_IN)

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def parse_int64(text: str) -> int | None:
    """``text`` as a base-10 int64, or None where Go's ``strconv.ParseInt`` fails.

    Python's ``int()`` is more lenient than Go (it takes spaces, underscores and
    non-ASCII digits), and a Gt/Lt label that Go can't parse must not match.
    """
    # Fast path for the usual plain digits; signs are rare in label values.
    if not (text.isdigit() and text.isascii()):
        digits = text[1:] if text[:1] in ("+", "-") else text
        if not (digits.isdigit() and digits.isascii()):
            return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One condition on a set of labels: ``key operator values``.

    ``exact`` only changes how the requirement prints: requirements built from
    ``matchLabels`` or a plain label set print as ``key=value`` (upstream's Equals
    operator), while an ``In`` expression prints as ``key in (value)``. They match
    alike, so ``exact`` is left out of equality.
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()
    exact: bool = field(default=False, compare=False)
    # Worked out once here so that matches() only does dictionary and set look-ups.
    _value_set: frozenset[str] = field(init=False, repr=False, compare=False)
    _bound: int | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.operator not in OPERATORS:
            # Upstream silently never matches an unknown operator; building one in
            # Python code is a typo worth failing on.
            raise ValueError(f"unknown label selector operator {self.operator!r}")
        object.__setattr__(self, "_value_set", frozenset(self.values))
        bound = None
        if self.operator in (GT, LT) and len(self.values) == 1:
            bound = parse_int64(self.values[0])
        object.__setattr__(self, "_bound", bound)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement.

        A missing key satisfies only ``NotIn`` and ``DoesNotExist``. ``Gt``/``Lt``
        compare the label and the single value as int64 and never match when
        either is not an integer.
        """
        operator = self.operator
        # Label values are never None, so a missing key (get() -> None) is simply
        # "not in the set": In fails and NotIn holds, as upstream.
        if operator == IN:
            return labels.get(self.key) in self._value_set
        if operator == NOT_IN:
            return labels.get(self.key) not in self._value_set
        if operator == EXISTS:
            return self.key in labels
        if operator == DOES_NOT_EXIST:
            return self.key not in labels
        bound = self._bound
        value = labels.get(self.key)
        if bound is None or value is None:
            return False
        number = parse_int64(value)
        if number is None:
            return False
        return number > bound if operator == GT else number < bound

    def __str__(self) -> str:
        """The requirement in label-selector syntax, e.g. ``tier in (a,b)``."""
        operator = self.operator
        if operator == EXISTS:
            return self.key
        if operator == DOES_NOT_EXIST:
            return "!" + self.key
        if operator == GT:
            return f"{self.key}>{','.join(self.values)}"
        if operator == LT:
            return f"{self.key}<{','.join(self.values)}"
        if self.exact and len(self.values) == 1:
            return f"{self.key}={self.values[0]}"
        # Sorted so that the text does not depend on the order values were given in.
        word = "in" if operator == IN else "notin"
        return f"{self.key} {word} ({','.join(sorted(self.values))})"


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A label selector: all its requirements must hold (logical AND).

    The selector with no requirements matches every label set. A *missing*
    selector (``None`` in the API) matches nothing; callers handle that case.
    """

    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def everything(cls) -> LabelSelector:
        """The selector that matches every label set."""
        return _EVERYTHING

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every requirement."""
        # A plain loop: all() over a generator measured ~1.7x slower for 3 requirements.
        for requirement in self.requirements:  # noqa: SIM110
            if not requirement.matches(labels):
                return False
        return True

    def is_empty(self) -> bool:
        """Whether the selector has no requirements (and so matches everything)."""
        return not self.requirements

    @classmethod
    def from_dict(cls, data: object) -> LabelSelector:
        """Decode a ``metav1.LabelSelector`` (``matchLabels`` + ``matchExpressions``).

        Only In, NotIn, Exists and DoesNotExist are allowed. Raises
        :class:`ObjectError` with a path relative to ``data``.
        """
        return _decode_label_selector(data, "")

    def __str__(self) -> str:
        """The selector in label-selector syntax, e.g. ``app=web,tier in (a,b)``."""
        return ",".join(str(requirement) for requirement in self.requirements)


_EVERYTHING: Final = LabelSelector()


def selector_from_set(labels: Mapping[str, str]) -> LabelSelector:
    """A selector that matches label sets containing all of ``labels``.

    Used for the plain ``key: value`` selectors of Services, ReplicationControllers
    and ``spec.nodeSelector``. An empty set gives the match-everything selector.
    The labels are not validated, as upstream.
    """
    if not labels:
        return _EVERYTHING
    return LabelSelector(
        tuple(Requirement(key, IN, (labels[key],), exact=True) for key in sorted(labels))
    )


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One term of a node selector: its label and field requirements all must hold.

    A term with neither requirements on labels nor on fields matches no node.
    """

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()

    def matches(self, node_name: str, node_labels: Mapping[str, str]) -> bool:
        """Whether the node named ``node_name`` with ``node_labels`` satisfies the term."""
        if not self.match_expressions and not self.match_fields:
            return False
        for requirement in self.match_expressions:
            if not requirement.matches(node_labels):
                return False
        # Upstream builds the node's field set only from a non-empty name and skips
        # the field requirements when that set is empty; mirror it.
        if self.match_fields and node_name:
            fields = {NODE_NAME_FIELD: node_name}
            for requirement in self.match_fields:
                if not requirement.matches(fields):
                    return False
        return True

    @classmethod
    def from_dict(cls, data: object) -> NodeSelectorTerm:
        """Decode a ``v1.NodeSelectorTerm`` (``matchExpressions`` + ``matchFields``).

        Raises :class:`ObjectError` with a path relative to ``data``.
        """
        return _decode_node_selector_term(data, "")


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """A node selector: a node matches when any of its terms does (logical OR)."""

    terms: tuple[NodeSelectorTerm, ...] = ()

    def matches(self, node_name: str, node_labels: Mapping[str, str]) -> bool:
        """Whether the node named ``node_name`` with ``node_labels`` satisfies any term."""
        # A plain loop rather than any(): generators cost more than the work here.
        for term in self.terms:  # noqa: SIM110
            if term.matches(node_name, node_labels):
                return True
        return False

    @classmethod
    def from_dict(cls, data: object) -> NodeSelector:
        """Decode a ``v1.NodeSelector`` (``{nodeSelectorTerms: [...]}``).

        As the API server does, at least one term is required. Raises
        :class:`ObjectError` with a path relative to ``data``.
        """
        return _decode_node_selector(data, "")


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    """A weighted node selector term of preferred node affinity."""

    weight: int
    term: NodeSelectorTerm

    @classmethod
    def from_dict(cls, data: object) -> PreferredSchedulingTerm:
        """Decode a ``v1.PreferredSchedulingTerm`` (``weight`` 1-100 + ``preference``).

        Raises :class:`ObjectError` with a path relative to ``data``.
        """
        return _decode_preferred_scheduling_term(data, "")


# --- Validation of label keys, label values and names -------------------------
# The messages are kube-apiserver's, so that users can search for them.

_LABEL_NAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_NAME_RE: Final = re.compile(_LABEL_NAME_FMT)
_LABEL_NAME_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT: Final = "(" + _LABEL_NAME_FMT + ")?"
_LABEL_VALUE_RE: Final = re.compile(_LABEL_VALUE_FMT)
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT: Final = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_RE: Final = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric character"
)


def _regex_message(message: str, pattern: str, *examples: str) -> str:
    """A failed-pattern message in the API server's wording."""
    shown = "".join(
        ("" if i == 0 else " or ") + f"'{example}', " for i, example in enumerate(examples)
    )
    if shown:
        return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"
    return f"{message} (regex used for validation is '{pattern}')"


def _too_long(limit: int) -> str:
    return f"must be no more than {limit} bytes"


def dns1123_subdomain_errors(value: str) -> list[str]:
    """Why ``value`` is not a DNS-1123 subdomain (such as a node name); empty if it is."""
    errors = []
    if len(value.encode()) > 253:
        errors.append(_too_long(253))
    if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:
        errors.append(_regex_message(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errors


def qualified_name_errors(value: str) -> list[str]:
    """Why ``value`` is not a valid label key (``[prefix/]name``); empty if it is."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a valid label key "
            + _regex_message(_LABEL_NAME_MSG, _LABEL_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + error for error in dns1123_subdomain_errors(prefix))
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errors.append("name part " + _too_long(63))
    if _LABEL_NAME_RE.fullmatch(name) is None:
        errors.append(
            "name part "
            + _regex_message(_LABEL_NAME_MSG, _LABEL_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errors


def label_value_errors(value: str) -> list[str]:
    """Why ``value`` is not a valid label value; empty if it is."""
    errors = []
    if len(value.encode()) > 63:
        errors.append(_too_long(63))
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        errors.append(
            _regex_message(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errors


# --- Decoding helpers, shared with taints.py ------------------------------------
# Paths are built as the API server prints them: ``a.b[0].c``, map keys as ``m[k]``.


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _index(path: str, index: int | str) -> str:
    return f"{path}[{index}]"


def _quote(value: object) -> str:
    """``value`` as the API server shows it in messages (strings double-quoted)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _invalid(value: object, detail: str) -> str:
    return f"Invalid value: {_quote(value)}: {detail}"


def _unsupported(value: object, supported: Iterable[str]) -> str:
    listed = ", ".join(_quote(item) for item in supported)
    return f"Unsupported value: {_quote(value)}: supported values: {listed}"


def _required(detail: str = "") -> str:
    return f"Required value: {detail}" if detail else "Required value"


def _forbidden(detail: str) -> str:
    return f"Forbidden: {detail}"


def _type_name(value: object) -> str:
    """The JSON type of a decoded value, for type errors."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def _wrong_type(path: str, value: object, expected: str) -> ObjectError:
    return ObjectError(path, f'Invalid type: got "{_type_name(value)}", expected "{expected}"')


def _object(data: object, path: str, known: Iterable[str]) -> Mapping[str, object]:
    """``data`` as a JSON object whose fields are all in ``known``.

    Unknown fields are rejected, as ``kubectl`` does by default, because a
    misspelt selector field would otherwise silently widen what is selected.
    """
    if not isinstance(data, Mapping):
        raise _wrong_type(path, data, "object")
    allowed = frozenset(known)
    for name in data:
        if name not in allowed:
            raise ObjectError(_child(path, str(name)), f"unknown field {_quote(str(name))}")
    return cast("Mapping[str, object]", data)


def _string(value: object, path: str) -> str:
    # JSON null leaves a Go string at its zero value, so it reads as "".
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _wrong_type(path, value, "string")
    return value


def _field_string(obj: Mapping[str, object], name: str, path: str) -> str:
    return _string(obj.get(name), _child(path, name))


def _field_list(obj: Mapping[str, object], name: str, path: str) -> list[object]:
    value = obj.get(name)
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise _wrong_type(_child(path, name), value, "array")
    return list(value)


def _field_strings(obj: Mapping[str, object], name: str, path: str) -> list[str]:
    list_path = _child(path, name)
    return [
        _string(item, _index(list_path, i)) for i, item in enumerate(_field_list(obj, name, path))
    ]


def _field_string_map(obj: Mapping[str, object], name: str, path: str) -> dict[str, str]:
    map_path = _child(path, name)
    value = obj.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _wrong_type(map_path, value, "object")
    result = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise _wrong_type(map_path, key, "string")
        result[key] = _string(item, _index(map_path, key))
    return result


# --- Decoders ---------------------------------------------------------------------


def _check_label_key(key: str, path: str) -> None:
    errors = qualified_name_errors(key)
    if errors:
        raise ObjectError(path, _invalid(key, "; ".join(errors)))


def _check_label_value(value: str, path: str) -> None:
    errors = label_value_errors(value)
    if errors:
        raise ObjectError(path, _invalid(value, "; ".join(errors)))


def _decode_expression(data: object, path: str, operators: tuple[str, ...]) -> Requirement:
    """A ``matchExpressions`` entry of a label or node selector."""
    obj = _object(data, path, ("key", "operator", "values"))
    key = _field_string(obj, "key", path)
    operator = _field_string(obj, "operator", path)
    values = _field_strings(obj, "values", path)
    values_path = _child(path, "values")
    if operator not in operators:
        raise ObjectError(_child(path, "operator"), _unsupported(operator, operators))
    if operator in (IN, NOT_IN) and not values:
        raise ObjectError(
            values_path, _required("must be specified when `operator` is 'In' or 'NotIn'")
        )
    if operator in (EXISTS, DOES_NOT_EXIST) and values:
        raise ObjectError(
            values_path,
            _forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
        )
    if operator in (GT, LT):
        if len(values) != 1:
            raise ObjectError(
                values_path,
                _required("must be specified single value when `operator` is 'Lt' or 'Gt'"),
            )
        if parse_int64(values[0]) is None:
            raise ObjectError(
                _index(values_path, 0),
                _invalid(values[0], "for 'Gt', 'Lt' operators, the value must be an integer"),
            )
    _check_label_key(key, _child(path, "key"))
    # The scheduler parses every value as a label value, Gt/Lt ones included (so a
    # negative bound such as "-1" is rejected, as upstream).
    for i, value in enumerate(values):
        _check_label_value(value, _index(values_path, i))
    return Requirement(key, operator, tuple(values))


def _decode_field_requirement(data: object, path: str) -> Requirement:
    """A ``matchFields`` entry of a node selector term (only ``metadata.name``)."""
    obj = _object(data, path, ("key", "operator", "values"))
    key = _field_string(obj, "key", path)
    operator = _field_string(obj, "operator", path)
    values = _field_strings(obj, "values", path)
    values_path = _child(path, "values")
    if operator not in _NODE_FIELD_OPERATORS:
        raise ObjectError(_child(path, "operator"), _unsupported(operator, _NODE_FIELD_OPERATORS))
    if len(values) != 1:
        raise ObjectError(
            values_path,
            _required(
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
            ),
        )
    if key != NODE_NAME_FIELD:
        raise ObjectError(_child(path, "key"), _invalid(key, "not a valid field selector key"))
    errors = dns1123_subdomain_errors(values[0])
    if errors:
        raise ObjectError(_index(values_path, 0), _invalid(values[0], "; ".join(errors)))
    return Requirement(key, operator, tuple(values))


def _sorted_by_key(requirements: list[Requirement]) -> tuple[Requirement, ...]:
    # Upstream keeps a selector's requirements sorted by key (its String() depends on
    # it); sorted() is stable, so requirements on one key keep their given order.
    return tuple(sorted(requirements, key=lambda requirement: requirement.key))


def _decode_label_selector(data: object, path: str) -> LabelSelector:
    obj = _object(data, path, ("matchLabels", "matchExpressions"))
    requirements = []
    labels_path = _child(path, "matchLabels")
    for key, value in _field_string_map(obj, "matchLabels", path).items():
        _check_label_key(key, labels_path)
        _check_label_value(value, _index(labels_path, key))
        requirements.append(Requirement(key, IN, (value,), exact=True))
    expressions_path = _child(path, "matchExpressions")
    for i, item in enumerate(_field_list(obj, "matchExpressions", path)):
        requirements.append(
            _decode_expression(item, _index(expressions_path, i), _LABEL_SELECTOR_OPERATORS)
        )
    if not requirements:
        return _EVERYTHING
    return LabelSelector(_sorted_by_key(requirements))


def _decode_node_selector_term(data: object, path: str) -> NodeSelectorTerm:
    obj = _object(data, path, ("matchExpressions", "matchFields"))
    expressions_path = _child(path, "matchExpressions")
    expressions = [
        _decode_expression(item, _index(expressions_path, i), _NODE_SELECTOR_OPERATORS)
        for i, item in enumerate(_field_list(obj, "matchExpressions", path))
    ]
    fields_path = _child(path, "matchFields")
    fields = [
        _decode_field_requirement(item, _index(fields_path, i))
        for i, item in enumerate(_field_list(obj, "matchFields", path))
    ]
    return NodeSelectorTerm(_sorted_by_key(expressions), tuple(fields))


def _decode_node_selector(data: object, path: str) -> NodeSelector:
    obj = _object(data, path, ("nodeSelectorTerms",))
    terms_path = _child(path, "nodeSelectorTerms")
    items = _field_list(obj, "nodeSelectorTerms", path)
    if not items:
        raise ObjectError(terms_path, _required("must have at least one node selector term"))
    return NodeSelector(
        tuple(
            _decode_node_selector_term(item, _index(terms_path, i)) for i, item in enumerate(items)
        )
    )


def _decode_preferred_scheduling_term(data: object, path: str) -> PreferredSchedulingTerm:
    obj = _object(data, path, ("weight", "preference"))
    weight_path = _child(path, "weight")
    weight = obj.get("weight", 0)
    if weight is None:
        weight = 0
    if isinstance(weight, bool) or not isinstance(weight, int):
        raise _wrong_type(weight_path, weight, "integer")
    if not 1 <= weight <= 100:
        raise ObjectError(weight_path, _invalid(weight, "must be in the range 1-100"))
    preference = obj.get("preference")
    # A missing preference decodes to the empty term, which matches no node.
    term = (
        NodeSelectorTerm()
        if preference is None
        else _decode_node_selector_term(preference, _child(path, "preference"))
    )
    return PreferredSchedulingTerm(weight, term)
