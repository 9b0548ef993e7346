"""scheduler-plugins' PodGroup (``scheduling.x-k8s.io/v1alpha1``), as gang scheduling reads it.

A PodGroup names a gang: the pods that carry the label ``scheduling.x-k8s.io/pod-group``
with its name, in its namespace, of which at least ``minMember`` must be placed together.
The Coscheduling plugin reads the spec; the PodGroup controller writes the status. The
fields and phases are those of scheduler-plugins v0.34.7 (``apis/scheduling/v1alpha1``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.objects._decode import Raw, as_map, get_int, get_map, get_str, join
from kubesched.objects.errors import ObjectError
from kubesched.objects.pod import Pod
from kubesched.objects.resources import Resource

GROUP = "scheduling.x-k8s.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "PodGroup"

#: The pod label whose value names the pod's PodGroup (in the pod's namespace).
POD_GROUP_LABEL = f"{GROUP}/pod-group"

# The phases of v0.34.7 (PodGroupPhase). The controller moves a group from Pending to
# Scheduling once minMember pods exist, to Running once minMember run or succeeded, and
# ends it Finished or Failed.
PHASE_PENDING = "Pending"
PHASE_SCHEDULING = "Scheduling"
PHASE_RUNNING = "Running"
PHASE_UNKNOWN = "Unknown"
PHASE_FINISHED = "Finished"
PHASE_FAILED = "Failed"
PHASES = (
    PHASE_PENDING,
    PHASE_SCHEDULING,
    PHASE_RUNNING,
    PHASE_UNKNOWN,
    PHASE_FINISHED,
    PHASE_FAILED,
)

#: How long members wait for their gang when neither the group's
#: ``scheduleTimeoutSeconds`` nor the plugin's args say (upstream ``DefaultWaitTime``).
DEFAULT_WAIT_SECONDS = 60

_INT32_MAX = 2**31 - 1


def pod_group_name(pod: Pod) -> str | None:
    """The name of ``pod``'s PodGroup (its label's value); None when it has none."""
    return pod.labels.get(POD_GROUP_LABEL) or None


def pod_group_key(pod: Pod) -> str | None:
    """``namespace/name`` of ``pod``'s PodGroup (upstream ``GetPodGroupFullName``); None
    when it has none."""
    name = pod_group_name(pod)
    return f"{pod.namespace}/{name}" if name else None


@dataclass(frozen=True, slots=True)
class PodGroup:
    """A PodGroup: its spec and the status its controller last wrote.

    ``min_resources`` is in the scheduler's integer units (cpu in millicores); treat it
    as read-only (``copy()`` it to change it). Timestamps are the RFC 3339 strings of the
    object ("" when unset).
    """

    namespace: str
    name: str
    uid: str = ""
    creation_timestamp: str = ""
    #: ``spec.minMember``: how many members must be placed together (at least 1 when
    #: set; 0 when the spec omits it, as upstream reads it: no quorum).
    min_member: int = 1
    #: ``spec.minResources``: what the group as a whole needs; empty when unset.
    min_resources: Resource = field(default_factory=Resource)
    #: ``spec.scheduleTimeoutSeconds``; None when unset (the plugin's default applies).
    schedule_timeout_seconds: int | None = None
    #: ``status.phase`` (one of :data:`PHASES`); "" until the controller sets it.
    phase: str = ""
    #: ``status.scheduled``: not in v0.34.7's schema (older releases wrote it); read when
    #: present so objects from them decode, 0 otherwise.
    scheduled: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    #: ``status.occupiedBy``: the owners of the group's pods, ``namespace/name`` joined by
    #: commas, as the controller fills it.
    occupied_by: str = ""
    schedule_start_time: str = ""

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    def wait_seconds(self, default: int = DEFAULT_WAIT_SECONDS) -> int:
        """How long members wait for the group: ``scheduleTimeoutSeconds`` when set, else
        ``default`` (upstream ``GetWaitTimeDuration``; a zero default means 60)."""
        if self.schedule_timeout_seconds is not None:
            return self.schedule_timeout_seconds
        return default or DEFAULT_WAIT_SECONDS

    @classmethod
    def from_dict(cls, raw: object) -> PodGroup:
        """Decode a PodGroup. Raises ObjectError naming the group and the field."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        namespace = get_str(meta, "namespace", "metadata") or "default"
        try:
            if not name:
                raise ObjectError("metadata.name", "Required value: name is required")
            spec = get_map(obj, "spec", "")
            status = get_map(obj, "status", "")
            # The CRD's schema refuses a minMember below 1, but lets an omitted one
            # through, which upstream's Go struct reads as 0: a group with no quorum (its
            # members are scheduled one by one). Files are held to what the server takes.
            if spec.get("minMember") is None:
                min_member = 0
            else:
                min_member = _int32(spec, "minMember", "spec", 0)
                if min_member < 1:
                    raise ObjectError(
                        "spec.minMember",
                        f"Invalid value: {min_member}: should be greater than or equal to 1",
                    )
            timeout = (
                None
                if spec.get("scheduleTimeoutSeconds") is None
                else _int32(spec, "scheduleTimeoutSeconds", "spec", 0)
            )
            phase = get_str(status, "phase", "status")
            return cls(
                namespace=namespace,
                name=name,
                uid=get_str(meta, "uid", "metadata"),
                creation_timestamp=get_str(meta, "creationTimestamp", "metadata"),
                min_member=min_member,
                min_resources=Resource.from_list(
                    get_map(spec, "minResources", "spec"), "spec.minResources"
                ),
                schedule_timeout_seconds=timeout,
                phase=phase,
                scheduled=_int32(status, "scheduled", "status", 0),
                running=_int32(status, "running", "status", 0),
                succeeded=_int32(status, "succeeded", "status", 0),
                failed=_int32(status, "failed", "status", 0),
                occupied_by=get_str(status, "occupiedBy", "status"),
                schedule_start_time=get_str(status, "scheduleStartTime", "status"),
            )
        except ObjectError as err:
            raise err.located(f"PodGroup {namespace}/{name}") from None


def _int32(raw: Raw, key: str, path: str, default: int) -> int:
    value = get_int(raw, key, path, default)
    assert value is not None
    if not -_INT32_MAX - 1 <= value <= _INT32_MAX:
        raise ObjectError(join(path, key), f"Invalid value: {value}: out of range for int32")
    return value
