"""Name rules an extender's managed resources must follow, with apimachinery's messages.

Mirrors ``IsQualifiedName`` (util/validation, release-1.34 wording) and
``IsExtendedResourceName`` (pkg/apis/core/v1/helper). Kept inside ``config`` because the
layering allows ``config`` no other dependency than ``objects``.
"""

from __future__ import annotations

import re

__all__ = ["is_extended_resource_name", "qualified_name_errors"]

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_QNAME_MAX = 63
_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_SUBDOMAIN_MAX = 253


def _regex_error(msg: str, pattern: str, *examples: str) -> str:
    # Reproduces upstream's spacing exactly, including its "',  or '" double space.
    if not examples:
        return f"{msg} (regex used for validation is '{pattern}')"
    text = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{pattern}')"


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def _subdomain_errors(value: str) -> list[str]:
    errors = []
    if len(value.encode()) > _SUBDOMAIN_MAX:
        errors.append(_max_len_error(_SUBDOMAIN_MAX))
    if not re.fullmatch(_SUBDOMAIN_FMT, value):
        errors.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errors


def qualified_name_errors(value: str) -> list[str]:
    """Why ``value`` is not a qualified name (``[prefix/]name``); empty when it is one."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + msg for msg in _subdomain_errors(prefix))
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > _QNAME_MAX:
        errors.append("name part " + _max_len_error(_QNAME_MAX))
    if not re.fullmatch(_QNAME_FMT, name):
        errors.append(
            "name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errors


def is_extended_resource_name(name: str) -> bool:
    """Whether ``name`` is an extended resource: prefixed, outside kubernetes.io, quota-safe."""
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    # Quota names the resource "requests.<name>", which must itself be a qualified name.
    return not qualified_name_errors("requests." + name)
