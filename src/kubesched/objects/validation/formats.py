"""String and number formats of ``k8s.io/apimachinery/pkg/util/validation`` that pod specs,
config maps and events use: environment variable names, config keys, port names and
numbers, user and group IDs, HTTP header names. Each returns the problems found, worded as
upstream words them (the callers turn them into field errors)."""

from __future__ import annotations

import functools
import re

from kubesched.objects.validation.core import max_len_error, regex_error

_MAX_INT32 = 2**31 - 1
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_RE = re.compile(_CONFIG_KEY_FMT)
_CONFIG_KEY_MESSAGE = regex_error(
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    _CONFIG_KEY_FMT,
    "key.name",
    "KEY_NAME",
    "key-name",
)
_RELAXED_ENV_MESSAGE = (
    "a valid environment variable name must consist only of printable ASCII characters "
    "other than '='"
)
_PORT_NAME_CHARSET = re.compile("[-a-z0-9]+")
_HEADER_FMT = "[-A-Za-z0-9]+"
_HEADER_RE = re.compile(_HEADER_FMT)
_HEADER_MESSAGE = regex_error(
    "a valid HTTP header must consist of alphanumeric characters or '-'",
    _HEADER_FMT,
    "X-Header-Name",
)


def inclusive_range_error(low: int, high: int) -> str:
    """``InclusiveRangeError``."""
    return f"must be between {low} and {high}, inclusive"


def _ch_dir_prefix(value: str) -> tuple[str, ...]:
    if value == ".":
        return ("must not be '.'",)
    if value == "..":
        return ("must not be '..'",)
    if value.startswith(".."):
        return ("must not start with '..'",)
    return ()


@functools.lru_cache(maxsize=4096)
def is_relaxed_env_var_name(value: str) -> tuple[str, ...]:
    """``IsRelaxedEnvVarName`` (RelaxedEnvironmentVariableValidation is GA in 1.34)."""
    if not value:
        return ("environment variable name must be non-empty",)
    if any(not " " <= ch <= "~" or ch == "=" for ch in value):
        return (_RELAXED_ENV_MESSAGE,)
    return ()


@functools.lru_cache(maxsize=4096)
def is_config_map_key(value: str) -> tuple[str, ...]:
    """``IsConfigMapKey``: config map and secret keys, and keys that select them."""
    problems: list[str] = []
    if len(value) > 253:
        problems.append(max_len_error(253))
    if _CONFIG_KEY_RE.fullmatch(value) is None:
        problems.append(_CONFIG_KEY_MESSAGE)
    problems.extend(_ch_dir_prefix(value))
    return tuple(problems)


@functools.lru_cache(maxsize=1024)
def is_valid_port_name(port: str) -> tuple[str, ...]:
    """``IsValidPortName`` (an IANA_SVC_NAME)."""
    problems: list[str] = []
    if len(port) > 15:
        problems.append(max_len_error(15))
    if _PORT_NAME_CHARSET.fullmatch(port) is None:
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not any("a" <= ch <= "z" for ch in port):
        problems.append("must contain at least one letter (a-z)")
    if "--" in port:
        problems.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        problems.append("must not begin or end with a hyphen")
    return tuple(problems)


def is_valid_port_num(port: int) -> tuple[str, ...]:
    """``IsValidPortNum``."""
    return () if 1 <= port <= 65535 else (inclusive_range_error(1, 65535),)


def is_valid_id(value: int) -> tuple[str, ...]:
    """``IsValidUserID`` / ``IsValidGroupID``: 0 to MaxInt32."""
    return () if 0 <= value <= _MAX_INT32 else (inclusive_range_error(0, _MAX_INT32),)


def is_http_header_name(value: str) -> tuple[str, ...]:
    """``IsHTTPHeaderName``."""
    return () if _HEADER_RE.fullmatch(value) else (_HEADER_MESSAGE,)
