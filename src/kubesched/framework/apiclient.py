"""The API calls a plugin may make in the binding cycle, and the errors they raise.

Upstream's PreBind plugins write to the API server and wait: VolumeBinding writes a
PersistentVolume's ``claimRef`` or a claim's ``selected-node`` annotation and then waits up
to ``bindTimeoutSeconds`` for the PV controller; DynamicResources updates a ResourceClaim's
status, retrying on conflicts. Plugins here never import ``kube`` (ARCHITECTURE.md), so the
handle's client carries these calls, and each environment implements them:

- the live scheduler over ``kube``, its calls run on the scheduler's event loop while the
  plugin blocks in a worker thread (PreBind runs off the loop, see ``schedule_one``);
- the simulator and plugin tests over :class:`MemoryAPIClient`, an in-memory object store
  with resourceVersions, so a stale update conflicts exactly as it would on a server;
- read-only handles (``explain``, the extender server) refuse them.

The calls are **synchronous and blocking**: a plugin writes, sees the server's answer (the
object as stored, or an exception) and decides, as in upstream's Go. Only PreBind plugins
(and the Bind and PostBind plugins after them) may call them; the scheduling cycle must
not block. Objects travel as plain JSON dicts (``RawObject``), the wire form: an update
must carry every field, which the compact typed views of ``kubesched.objects`` do not hold.
Decode a returned dict with the view's ``from_dict`` to read it.

Errors form one hierarchy, after the HTTP status the server answered::

    APIError                  any failed call (``code``: the HTTP status, 0 if none)
    ├── NotFound              404
    ├── Conflict              409: a stale resourceVersion; retry from a fresh read
    │   └── AlreadyExists     409 on create
    ├── Invalid               422: the object failed validation
    ├── Forbidden             403
    └── Unavailable           no answer: the server is unreachable, overloaded (429, 5xx),
                              timed out, or the scheduler is stopping
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, cast

__all__ = [
    "PERSISTENT_VOLUMES",
    "PERSISTENT_VOLUME_CLAIMS",
    "RESOURCE_CLAIMS",
    "APIClient",
    "APIError",
    "APIResource",
    "AlreadyExists",
    "Conflict",
    "Forbidden",
    "Invalid",
    "MemoryAPIClient",
    "NotFound",
    "PatchType",
    "RawObject",
    "Unavailable",
    "merge_patch",
    "retry_on_conflict",
]

RawObject = dict[str, Any]
PatchType = Literal["merge", "json"]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class APIResource:
    """A REST collection: ``APIResource("", "v1", "persistentvolumes", "PersistentVolume",
    namespaced=False)``. The group is "" for the core group."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        """``v1`` for the core group, ``<group>/<version>`` otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


PERSISTENT_VOLUMES = APIResource("", "v1", "persistentvolumes", "PersistentVolume", False)
PERSISTENT_VOLUME_CLAIMS = APIResource(
    "", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True
)
RESOURCE_CLAIMS = APIResource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True)


# --- errors --------------------------------------------------------------------------


class APIError(Exception):
    """A failed API call. **code**: the HTTP status (0 when no answer came); **reason**:
    the Kubernetes Status reason (``NotFound``, ``Conflict``...); the message is the
    server's."""

    default_code = 0
    default_reason = ""

    def __init__(self, message: str, *, code: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.code = self.default_code if code is None else code
        self.reason = reason or self.default_reason


class NotFound(APIError):
    """404: the object (or its namespace) does not exist."""

    default_code = 404
    default_reason = "NotFound"


class Conflict(APIError):
    """409: the object changed since it was read; read it again and retry."""

    default_code = 409
    default_reason = "Conflict"


class AlreadyExists(Conflict):
    """409 on create: an object of that name exists."""

    default_reason = "AlreadyExists"


class Invalid(APIError):
    """422: the object failed validation."""

    default_code = 422
    default_reason = "Invalid"


class Forbidden(APIError):
    """403: the scheduler may not do this."""

    default_code = 403
    default_reason = "Forbidden"


class Unavailable(APIError):
    """No usable answer: unreachable, throttled, a server error, a timeout, or stopping."""

    default_reason = "ServiceUnavailable"


# --- the calls -----------------------------------------------------------------------


class APIClient(Protocol):
    """Blocking, typed API calls for the binding cycle (see the module docstring).

    Every call raises an :class:`APIError` on failure; none returns a partial result.
    """

    def get(self, resource: APIResource, name: str, namespace: str = "") -> RawObject:
        """The object as stored now (not from a cache)."""
        ...

    def create(self, resource: APIResource, body: RawObject) -> RawObject:
        """Create ``body`` (its ``metadata.namespace`` for namespaced kinds)."""
        ...

    def update(self, resource: APIResource, body: RawObject) -> RawObject:
        """Replace the object; ``body``'s ``metadata.resourceVersion``, when set, must be
        the stored one (else Conflict). The status is left as stored."""
        ...

    def update_status(self, resource: APIResource, body: RawObject) -> RawObject:
        """Replace the object's ``status`` (the status subresource), same precondition."""
        ...

    def patch(
        self,
        resource: APIResource,
        name: str,
        patch: object,
        namespace: str = "",
        *,
        patch_type: PatchType = "merge",
        subresource: str = "",
    ) -> RawObject:
        """Patch the object: a JSON merge patch (RFC 7386) or a JSON patch (RFC 6902);
        ``subresource="status"`` patches the status."""
        ...

    def wait_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Block until ``condition()`` is true (True) or ``timeout`` seconds passed
        (False). ``condition`` reads the handle's informer-fed state (``handle.cluster``)
        and is evaluated whenever that state changes (and at least every second); an
        exception it raises ends the wait and propagates."""
        ...


def retry_on_conflict(
    attempt: Callable[[], T], steps: int = 5, delay: float = 0.01, sleep: bool = True
) -> T:
    """Run ``attempt`` again while it raises Conflict, at most ``steps`` times in all,
    ``delay`` seconds apart (client-go's ``retry.RetryOnConflict`` with ``DefaultRetry``).
    ``attempt`` must read the object afresh each time. The last Conflict propagates."""
    for step in range(steps):
        try:
            return attempt()
        except Conflict:
            if step == steps - 1:
                raise
            if sleep and delay > 0:
                time.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def merge_patch(target: object, patch: object) -> object:
    """RFC 7386 JSON merge patch: ``patch``'s members replace ``target``'s, ``None``
    deletes, objects merge recursively; anything else replaces the whole."""
    if not isinstance(patch, Mapping):
        return _copy(patch)
    out: dict[str, Any] = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


# --- in memory -----------------------------------------------------------------------

#: ``on_change(resource, old, new)``: old None on create, new None on delete.
ChangeHandler = Callable[[APIResource, RawObject | None, RawObject | None], None]


class MemoryAPIClient:
    """An in-memory object store with an API server's write semantics, for the simulator
    and for plugin tests: resourceVersions (one counter for the store), Conflict on a stale
    update, AlreadyExists, NotFound, status kept apart from the main resource.

    Stored objects are copied in and out, so a caller can never change them in place.
    ``on_change`` handlers run synchronously after each write (the simulator's volume
    controllers react there); with no clock and no other actor, :meth:`wait_until`
    answers at once from the state those handlers left.
    """

    def __init__(self) -> None:
        self._objects: dict[tuple[APIResource, str, str], RawObject] = {}
        self._version = 0
        self._handlers: list[ChangeHandler] = []

    # --- store access (not part of APIClient) ----------------------------------------

    def on_change(self, handler: ChangeHandler) -> None:
        """Call ``handler(resource, old, new)`` after every write."""
        self._handlers.append(handler)

    def add(self, resource: APIResource, body: RawObject) -> RawObject:
        """Store ``body`` as is (an object of the cluster files), replacing any."""
        stored = self._stamped(resource, body)
        key = self._key(resource, stored)
        old = self._objects.get(key)
        self._objects[key] = stored
        self._notify(resource, old, stored)
        return _copy(stored)

    def list(self, resource: APIResource, namespace: str | None = None) -> list[RawObject]:
        """Every stored object of ``resource`` (of ``namespace`` when given), copies."""
        return [
            _copy(obj)
            for (res, ns, _), obj in self._objects.items()
            if res == resource and (namespace is None or ns == namespace)
        ]

    def delete(self, resource: APIResource, name: str, namespace: str = "") -> None:
        """Remove the object; NotFound if absent."""
        key = (resource, namespace if resource.namespaced else "", name)
        old = self._objects.pop(key, None)
        if old is None:
            raise _not_found(resource, name)
        self._notify(resource, old, None)

    # --- APIClient --------------------------------------------------------------------

    def get(self, resource: APIResource, name: str, namespace: str = "") -> RawObject:
        return _copy(self._stored(resource, name, namespace))

    def create(self, resource: APIResource, body: RawObject) -> RawObject:
        meta = body.get("metadata") or {}
        name = meta.get("name", "")
        if not name:
            raise Invalid(f"{resource.kind} is invalid: metadata.name: Required value")
        if resource.namespaced and not meta.get("namespace"):
            raise Invalid(f"{resource.kind} {name!r} is invalid: metadata.namespace: Required")
        key = (resource, meta.get("namespace", "") if resource.namespaced else "", name)
        if key in self._objects:
            raise AlreadyExists(f'{resource} "{name}" already exists')
        # add() copies: shallow copies are enough to drop the resourceVersion here.
        meta = {k: v for k, v in meta.items() if k != "resourceVersion"}
        return self.add(resource, {**body, "metadata": meta})

    def update(self, resource: APIResource, body: RawObject) -> RawObject:
        return self._replace(resource, body, status=False)

    def update_status(self, resource: APIResource, body: RawObject) -> RawObject:
        return self._replace(resource, body, status=True)

    def patch(
        self,
        resource: APIResource,
        name: str,
        patch: object,
        namespace: str = "",
        *,
        patch_type: PatchType = "merge",
        subresource: str = "",
    ) -> RawObject:
        if patch_type != "merge":
            raise Invalid(f"the in-memory store applies merge patches only, not {patch_type!r}")
        if subresource not in ("", "status"):
            raise NotFound(f'{resource} "{name}": no subresource {subresource!r}')
        current = self._stored(resource, name, namespace)
        merged = merge_patch(current, patch)
        if not isinstance(merged, dict):
            raise Invalid(f'{resource} "{name}": a patch must be a JSON object')
        if subresource == "status":
            merged = {**current, "status": merged.get("status")}
        else:
            merged = {**merged, "status": current.get("status")}
            if current.get("status") is None:
                merged.pop("status")
        wanted = (
            (patch.get("metadata") or {}).get("resourceVersion")
            if isinstance(patch, Mapping)
            else None
        )
        meta = merged.setdefault("metadata", {})
        meta["resourceVersion"] = wanted or current["metadata"]["resourceVersion"]
        return self._replace(resource, merged, status=None)

    def wait_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Nothing else runs while a plugin waits in memory: the answer is now's."""
        return bool(condition())

    # --- helpers ------------------------------------------------------------------------

    def _replace(self, resource: APIResource, body: RawObject, status: bool | None) -> RawObject:
        """Update as the server does: ``status`` True keeps all but the status, False keeps
        the stored status, None (a patch, already merged) takes ``body`` whole."""
        meta = body.get("metadata") or {}
        current = self._stored(resource, meta.get("name", ""), meta.get("namespace", ""))
        wanted = meta.get("resourceVersion")
        stored_version = current["metadata"]["resourceVersion"]
        if wanted and wanted != stored_version:
            raise Conflict(
                f'Operation cannot be fulfilled on {resource} "{meta.get("name", "")}": the '
                "object has been modified; please apply your changes to the latest version "
                "and try again"
            )
        # Shallow copies: add() copies the result deeply.
        if status is True:
            new = dict(current)
            if "status" in body:
                new["status"] = body["status"]
        elif status is False:
            new = {k: v for k, v in body.items() if k != "status"}
            if "status" in current:
                new["status"] = current["status"]
        else:
            new = dict(body)
        new["metadata"] = dict(new.get("metadata") or {})
        for field in ("uid", "creationTimestamp"):
            if field in current["metadata"]:
                new["metadata"][field] = current["metadata"][field]
        return self.add(resource, new)

    def _stored(self, resource: APIResource, name: str, namespace: str) -> RawObject:
        obj = self._objects.get((resource, namespace if resource.namespaced else "", name))
        if obj is None:
            raise _not_found(resource, name)
        return obj

    def _stamped(self, resource: APIResource, body: RawObject) -> RawObject:
        self._version += 1
        stored = _copy(body)
        stored.setdefault("apiVersion", resource.api_version)
        stored.setdefault("kind", resource.kind)
        meta = stored.setdefault("metadata", {})
        meta["resourceVersion"] = str(self._version)
        return stored

    @staticmethod
    def _key(resource: APIResource, obj: RawObject) -> tuple[APIResource, str, str]:
        meta = obj["metadata"]
        return (resource, meta.get("namespace", "") if resource.namespaced else "", meta["name"])

    def _notify(self, resource: APIResource, old: RawObject | None, new: RawObject | None) -> None:
        for handler in self._handlers:
            handler(resource, old, new)


def _copy(obj: T) -> T:
    """A deep copy of JSON data (dicts, lists, scalars): copy.deepcopy's memo and
    dispatch cost several times more, and the store copies on every call."""
    if isinstance(obj, dict):
        return cast(T, {key: _copy(value) for key, value in obj.items()})
    if isinstance(obj, list):
        return cast(T, [_copy(value) for value in obj])
    return obj


def _not_found(resource: APIResource, name: str) -> NotFound:
    # As the server words it: persistentvolumeclaims "x" not found.
    return NotFound(f'{resource} "{name}" not found')
