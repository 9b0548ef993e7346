"""Field errors and the validators every resource shares, worded as kube-apiserver words them.

A :class:`FieldError` is apimachinery's ``field.Error``: a type (``FieldValueInvalid``...),
the field path, the bad value and a detail; :meth:`FieldError.body` renders it as
``ErrorBody`` does (``Invalid value: "X": detail``). The checks mirror
``staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go`` (names, qualified
names, label values), ``.../api/validation/objectmeta.go`` (metadata) and
``.../apis/meta/v1/validation`` (labels, label selectors), and return lists of errors so a
resource's validator can report every problem at once, as upstream does.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeGuard

from kubesched.objects.quantity import Quantity, QuantityError, parse_quantity_value

INVALID = "FieldValueInvalid"
REQUIRED = "FieldValueRequired"
DUPLICATE = "FieldValueDuplicate"
FORBIDDEN = "FieldValueForbidden"
NOT_SUPPORTED = "FieldValueNotSupported"
TOO_LONG = "FieldValueTooLong"
NOT_FOUND = "FieldValueNotFound"
TOO_MANY = "FieldValueTooMany"

_TYPE_TEXT = {
    INVALID: "Invalid value",
    REQUIRED: "Required value",
    DUPLICATE: "Duplicate value",
    FORBIDDEN: "Forbidden",
    NOT_SUPPORTED: "Unsupported value",
    TOO_LONG: "Too long",
    NOT_FOUND: "Not found",
    TOO_MANY: "Too many",
}
# Types whose body never shows the value (ErrorBody's first cases).
_VALUELESS = frozenset({REQUIRED, FORBIDDEN, TOO_LONG})


#: ``field.OmitValueType{}``: an error whose body names no value (``Invalid value: <detail>``).
OMIT: Any = object()


class GoValue:
    """A bad value that Go prints with ``%v``/``%#v`` as given here (a map, a struct)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


@dataclass(frozen=True, slots=True)
class FieldError:
    """One field error: ``field.Error`` (type, field path, bad value, detail)."""

    type: str
    field: str
    value: Any = ""
    detail: str = ""

    def body(self) -> str:
        """``ErrorBody()``: the message without the field path."""
        text = _TYPE_TEXT[self.type]
        if self.type not in _VALUELESS and self.value is not OMIT:
            text += ": " + go_format(self.value)
        if self.detail:
            text += ": " + self.detail
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


Errors = list[FieldError]
#: An API object as decoded JSON.
Object = dict[str, Any]


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a wrong type is the decoder's
    business, not validation's)."""
    return value if isinstance(value, dict) else {}


def go_quote(text: str) -> str:
    """Go's ``%q`` for a string (JSON escaping matches it for printable text)."""
    return json.dumps(text, ensure_ascii=False)


def go_format(value: Any) -> str:
    """How ``ErrorBody`` prints a bad value: ``%q`` for strings, ``%v`` for numbers."""
    if value is None:
        return "null"
    if isinstance(value, GoValue):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, int | float | Quantity):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def go_string_map(value: Any) -> GoValue:
    """``%#v`` of a ``map[string]string`` (Go sorts the keys)."""
    items = value.items() if isinstance(value, dict) else ()
    body = ", ".join(f"{go_quote(str(k))}:{go_quote(str(v))}" for k, v in sorted(items))
    return GoValue("map[string]string{" + body + "}")


def invalid(field: str, value: Any, detail: str) -> FieldError:
    """``field.Invalid``."""
    return FieldError(INVALID, field, value, detail)


def required(field: str, detail: str = "") -> FieldError:
    """``field.Required``."""
    return FieldError(REQUIRED, field, "", detail)


def forbidden(field: str, detail: str) -> FieldError:
    """``field.Forbidden``."""
    return FieldError(FORBIDDEN, field, "", detail)


def duplicate(field: str, value: Any) -> FieldError:
    """``field.Duplicate``."""
    return FieldError(DUPLICATE, field, value)


def not_supported(field: str, value: Any, supported: tuple[str, ...]) -> FieldError:
    """``field.NotSupported`` listing the supported values."""
    detail = "supported values: " + ", ".join(go_quote(s) for s in supported)
    return FieldError(NOT_SUPPORTED, field, value, detail)


def not_found(field: str, value: Any) -> FieldError:
    """``field.NotFound``."""
    return FieldError(NOT_FOUND, field, value)


def too_long(field: str, max_bytes: int) -> FieldError:
    """``field.TooLong`` (the value is never shown)."""
    unit = "byte" if max_bytes == 1 else "bytes"
    return FieldError(TOO_LONG, field, "", f"may not be more than {max_bytes} {unit}")


# -- names (k8s.io/apimachinery/pkg/util/validation) ----------------------------------------

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_LABEL_RE = re.compile(_LABEL_FMT)
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN_FMT)
_QNAME_RE = re.compile(_QNAME_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """``RegexError``: the message, examples and the regex (with upstream's odd spacing)."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    listed = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {listed}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    """``MaxLenError``."""
    return f"must be no more than {length} characters"


EMPTY_ERROR = "must be non-empty"
LABEL_MESSAGE = regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character",
    _LABEL_FMT,
    "my-name",
    "123-abc",
)
SUBDOMAIN_MESSAGE = regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character",
    _SUBDOMAIN_FMT,
    "example.com",
)
_QNAME_MESSAGE = regex_error(
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character",
    _QNAME_FMT,
    "MyName",
    "my.name",
    "123-abc",
)
_LABEL_VALUE_MESSAGE = regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character",
    _LABEL_VALUE_FMT,
    "MyValue",
    "my_value",
    "12345",
)


@functools.lru_cache(maxsize=8192)  # names and labels repeat: pure and cheap to keep
def is_dns1123_label(value: str) -> tuple[str, ...]:
    """``IsDNS1123Label``: the problems with ``value`` as an RFC 1123 label."""
    problems: list[str] = []
    if len(value) > 63:
        problems.append(max_len_error(63))
    if _LABEL_RE.fullmatch(value) is None:
        problems.append(LABEL_MESSAGE)
    return tuple(problems)


@functools.lru_cache(maxsize=8192)  # names and labels repeat: pure and cheap to keep
def is_dns1123_subdomain(value: str) -> tuple[str, ...]:
    """``IsDNS1123Subdomain``."""
    problems: list[str] = []
    if len(value) > 253:
        problems.append(max_len_error(253))
    if _SUBDOMAIN_RE.fullmatch(value) is None:
        problems.append(SUBDOMAIN_MESSAGE)
    return tuple(problems)


@functools.lru_cache(maxsize=8192)  # names and labels repeat: pure and cheap to keep
def is_qualified_name(value: str) -> tuple[str, ...]:
    """``IsQualifiedName``: ``[prefix/]name`` with a DNS subdomain prefix."""
    parts = value.split("/")
    problems: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            problems.append("prefix part " + EMPTY_ERROR)
        else:
            problems.extend("prefix part " + p for p in is_dns1123_subdomain(prefix))
    else:
        return (
            "a qualified name "
            + _QNAME_MESSAGE
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        problems.append("name part " + EMPTY_ERROR)
    elif len(name) > 63:
        problems.append("name part " + max_len_error(63))
    if _QNAME_RE.fullmatch(name) is None:
        problems.append("name part " + _QNAME_MESSAGE)
    return tuple(problems)


@functools.lru_cache(maxsize=8192)  # names and labels repeat: pure and cheap to keep
def is_label_value(value: str) -> tuple[str, ...]:
    """``IsValidLabelValue``."""
    problems: list[str] = []
    if len(value) > 63:
        problems.append(max_len_error(63))
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        problems.append(_LABEL_VALUE_MESSAGE)
    return tuple(problems)


NameCheck = Callable[[str, bool], tuple[str, ...]]


def _mask_trailing_dash(name: str) -> str:
    # A generateName prefix may end in '-': the random suffix follows it.
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool) -> tuple[str, ...]:
    """``NameIsDNSSubdomain`` (most resources)."""
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> tuple[str, ...]:
    """``NameIsDNSLabel`` (namespaces, services)."""
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def dns1123_label(value: str, path: str) -> Errors:
    """``ValidateDNS1123Label``: one Invalid error per problem."""
    return [invalid(path, value, p) for p in is_dns1123_label(value)]


def qualified_name(value: str, path: str) -> Errors:
    """``ValidateQualifiedName``."""
    return [invalid(path, value, p) for p in is_qualified_name(value)]


# -- metadata (apimachinery/pkg/api/validation/objectmeta.go) -------------------------------

#: ``TotalAnnotationSizeLimitB``.
TOTAL_ANNOTATION_SIZE = 256 * 1024


def labels(value: Any, path: str) -> Errors:
    """``ValidateLabels``: qualified-name keys, label values (errors name the map)."""
    errs: Errors = []
    if not isinstance(value, dict):
        return errs
    for key in sorted(value):
        errs.extend(invalid(path, key, p) for p in is_qualified_name(str(key)))
        text = value[key]
        if not isinstance(text, str):
            errs.append(invalid(path, text, "label values must be strings"))
            continue
        errs.extend(invalid(path, text, p) for p in is_label_value(text))
    return errs


def annotation_map(value: Any, path: str) -> Errors:
    """``ValidateAnnotations``: keys are qualified names (any case), total ≤ 256 KiB."""
    errs: Errors = []
    if not isinstance(value, dict):
        return errs
    size = 0
    for key in sorted(value):
        errs.extend(invalid(path, key, p) for p in is_qualified_name(str(key).lower()))
        size += len(str(key).encode()) + len(str(value[key]).encode())
    if size > TOTAL_ANNOTATION_SIZE:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE))
    return errs


def object_meta(meta: dict[str, Any], namespaced: bool, name_check: NameCheck) -> Errors:
    """``ValidateObjectMeta``: generateName, name, namespace, labels, annotations, finalizers,
    ownerReferences. An empty name with a generateName is what the store fills in."""
    errs: Errors = []
    generate = meta.get("generateName") or ""
    if generate:
        errs.extend(
            invalid("metadata.generateName", generate, p) for p in name_check(generate, True)
        )
    name = meta.get("name") or ""
    if not name:
        if not generate:
            errs.append(required("metadata.name", "name or generateName is required"))
    else:
        errs.extend(invalid("metadata.name", name, p) for p in name_check(name, False))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            errs.append(required("metadata.namespace"))
        else:
            errs.extend(
                invalid("metadata.namespace", namespace, p) for p in is_dns1123_label(namespace)
            )
    elif namespace:
        errs.append(forbidden("metadata.namespace", "not allowed on this type"))
    errs.extend(labels(meta.get("labels"), "metadata.labels"))
    errs.extend(annotation_map(meta.get("annotations"), "metadata.annotations"))
    errs.extend(_owner_references(meta.get("ownerReferences")))
    errs.extend(_finalizers(meta.get("finalizers")))
    return errs


def _owner_references(refs: Any) -> Errors:
    errs: Errors = []
    if not isinstance(refs, list):
        return errs
    controllers = []
    for ref in refs:
        if not isinstance(ref, dict):
            continue
        if not ref.get("apiVersion"):
            errs.append(
                invalid(
                    "metadata.ownerReferences",
                    ref.get("apiVersion", ""),
                    "version must not be empty",
                )
            )
        if not ref.get("kind"):
            errs.append(
                invalid("metadata.ownerReferences", ref.get("kind", ""), "kind must not be empty")
            )
        if not ref.get("name"):
            errs.append(
                invalid("metadata.ownerReferences", ref.get("name", ""), "name must not be empty")
            )
        if not ref.get("uid"):
            errs.append(
                invalid("metadata.ownerReferences", ref.get("uid", ""), "uid must not be empty")
            )
        if ref.get("controller"):
            controllers.append(f"{ref.get('kind', '')}/{ref.get('name', '')}")
    if len(controllers) > 1:
        errs.append(
            invalid(
                "metadata.ownerReferences",
                GoValue("[]v1.OwnerReference{...}"),
                'Only one reference can have Controller set to true. Found "true" in '
                "references for " + " and ".join(controllers),
            )
        )
    return errs


def _finalizers(finalizers: Any) -> Errors:
    errs: Errors = []
    if not isinstance(finalizers, list):
        return errs
    seen: set[str] = set()
    for index, value in enumerate(finalizers):
        text = str(value)
        errs.extend(qualified_name(text, "metadata.finalizers"))
        if text in seen:
            errs.append(duplicate(f"metadata.finalizers[{index}]", text))
        seen.add(text)
    return errs


# -- label selectors (apimachinery/pkg/apis/meta/v1/validation) ----------------------------

_OPERATORS_WITH_VALUES = ("In", "NotIn")
_OPERATORS_WITHOUT = ("Exists", "DoesNotExist")


def label_selector(selector: Any, path: str) -> Errors:
    """``ValidateLabelSelector``: matchLabels and each matchExpressions requirement."""
    errs: Errors = []
    if not isinstance(selector, dict):
        return errs
    errs.extend(labels(selector.get("matchLabels"), f"{path}.matchLabels"))
    for i, req in enumerate(selector.get("matchExpressions") or ()):
        at = f"{path}.matchExpressions[{i}]"
        if not isinstance(req, dict):
            errs.append(invalid(at, GoValue(str(req)), "must be an object"))
            continue
        operator, values = req.get("operator"), req.get("values") or []
        if operator in _OPERATORS_WITH_VALUES:
            if not values:
                errs.append(
                    required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif operator in _OPERATORS_WITHOUT:
            if values:
                errs.append(
                    forbidden(
                        f"{at}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(invalid(f"{at}.operator", operator or "", "not a valid selector operator"))
        errs.extend(qualified_name(str(req.get("key") or ""), f"{at}.key"))
        for j, value in enumerate(values):
            errs.extend(invalid(f"{at}.values[{j}]", value, p) for p in is_label_value(str(value)))
    return errs


def selector_matches(selector: dict[str, Any], labels_: dict[str, Any]) -> bool:
    """Whether a (valid) LabelSelector selects an object with ``labels_``."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels_.get(key) != value:
            return False
    for req in selector.get("matchExpressions") or ():
        key, op, values = req.get("key"), req.get("operator"), req.get("values") or []
        present = key in labels_
        if (
            (op == "In" and (not present or labels_[key] not in values))
            or (op == "NotIn" and present and labels_[key] in values)
            or (op == "Exists" and not present)
            or (op == "DoesNotExist" and present)
        ):
            return False
    return True


# -- quantities (pkg/apis/core/validation: ValidateResourceQuantityValue) ------------------


class Undecodable(Exception):
    """A value the decoder refuses before validation runs (400, not 422)."""


def quantity(value: Any) -> Quantity:
    """Decode a quantity as the JSON decoder does; :class:`Undecodable` if it cannot."""
    try:
        return parse_quantity_value(value)
    except QuantityError as err:
        raise Undecodable(err.message) from None


def nonnegative_int(value: Any, path: str) -> Errors:
    """``ValidateNonnegativeField``."""
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [invalid(path, value, "must be greater than or equal to 0")]
    return []


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def is_int(value: Any) -> TypeGuard[int]:
    """A JSON integer (``true`` is not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


# -- metadata on update (apimachinery/pkg/api/validation: ValidateObjectMetaAccessorUpdate) -

FIELD_IMMUTABLE = "field is immutable"
_IMMUTABLE_META = ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp")


def immutable(path: str, new: Any, old: Any) -> Errors:
    """``ValidateImmutableField``: Invalid "field is immutable" when ``new`` differs."""
    return [] if new == old else [invalid(path, new, FIELD_IMMUTABLE)]


def object_meta_update(new: dict[str, Any], old: dict[str, Any]) -> Errors:
    """The update rules of ``ValidateObjectMetaAccessorUpdate``: no new finalizers once the
    object is being deleted, generation never decremented, identity and deletion fields
    immutable. The store has already applied ``rest.BeforeUpdate`` (an empty uid takes the
    old one, creationTimestamp and generation are kept, a deletionTimestamp stays)."""
    errs: Errors = []
    if old.get("deletionTimestamp"):
        before = {str(f) for f in as_list(old.get("finalizers"))}
        extra = sorted({str(f) for f in as_list(new.get("finalizers"))} - before)
        if extra:
            listed = ", ".join(go_quote(f) for f in extra)
            errs.append(
                forbidden(
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted, found new "
                    f"finalizers []string{{{listed}}}",
                )
            )
    generation, old_generation = new.get("generation"), old.get("generation")
    if is_int(generation) and is_int(old_generation) and generation < old_generation:
        errs.append(invalid("metadata.generation", generation, "must not be decremented"))
    for key in _IMMUTABLE_META:
        new_value, old_value = new.get(key) or None, old.get(key) or None
        if new_value != old_value:
            # A timestamp prints as Go's time.Time String(); the rest are strings.
            shown = _go_time(new_value) if key.endswith("Timestamp") else new_value or ""
            errs.append(invalid(f"metadata.{key}", shown, FIELD_IMMUTABLE))
    grace, old_grace = new.get("deletionGracePeriodSeconds"), old.get("deletionGracePeriodSeconds")
    if grace != old_grace:
        errs.append(invalid("metadata.deletionGracePeriodSeconds", grace, FIELD_IMMUTABLE))
    return errs


def _go_time(value: Any) -> Any:
    # metav1.Time is a fmt.Stringer: ErrorBody prints time.Time's String(), unquoted.
    if not isinstance(value, str):
        return value
    match = re.fullmatch(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?Z", value)
    return GoValue(f"{match.group(1)} {match.group(2)} +0000 UTC") if match else value
