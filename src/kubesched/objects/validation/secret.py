"""Secrets as ``pkg/apis/core/validation`` checks them (``ValidateSecret``,
``ValidateSecretUpdate``): keys as for ConfigMaps, at most 1 MiB of data, the keys each
well-known type requires, and on update an unchanged type and, once ``immutable`` is set,
unchanged data.

``data`` values are base64 in JSON; one that is not is the decoder's 400, as for a
ConfigMap's ``binaryData``. ``stringData`` is merged into ``data`` before this runs
(defaulting), as upstream's conversion does.
"""

from __future__ import annotations

from kubesched.objects.validation.core import (
    Errors,
    Object,
    as_dict,
    forbidden,
    immutable,
    invalid,
    required,
    too_long,
)
from kubesched.objects.validation.formats import is_config_map_key
from kubesched.objects.validation.kinds import MAX_CONFIG_SIZE, decoded_length

_IMMUTABLE_SET = "field is immutable when `immutable` is set"
#: The keys each secret type must have in ``data`` (all of them; basic-auth: either).
_REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}
_SERVICE_ACCOUNT_NAME = "kubernetes.io/service-account.name"


def secret(obj: Object) -> Errors:
    """``ValidateSecret`` (metadata is checked by the caller)."""
    data = as_dict(obj.get("data"))
    errs: Errors = []
    total = 0
    for key in sorted(data):  # Go's map order is random; sorted keeps answers stable
        errs.extend(invalid(f"data[{key}]", key, p) for p in is_config_map_key(key))
        total += decoded_length(data[key] or "")
    if total > MAX_CONFIG_SIZE:
        errs.append(too_long("data", MAX_CONFIG_SIZE))
    kind = obj.get("type") or "Opaque"
    if kind == "kubernetes.io/service-account-token":
        annotations = as_dict(as_dict(obj.get("metadata")).get("annotations"))
        if not annotations.get(_SERVICE_ACCOUNT_NAME):
            errs.append(required(f"metadata.annotations[{_SERVICE_ACCOUNT_NAME}]"))
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            errs.extend([required("data[username]"), required("data[password]")])
    elif kind == "kubernetes.io/ssh-auth":
        if not data.get("ssh-privatekey"):
            errs.append(required("data[ssh-privatekey]"))
    else:
        errs.extend(required(f"data[{k}]") for k in _REQUIRED_KEYS.get(kind, ()) if k not in data)
    return errs


def secret_update(new: Object, old: Object) -> Errors:
    """``ValidateSecretUpdate``."""
    errs = immutable("type", new.get("type"), old.get("type"))
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(forbidden("immutable", _IMMUTABLE_SET))
        if new.get("data") != old.get("data"):
            errs.append(forbidden("data", _IMMUTABLE_SET))
    return errs + secret(new)
