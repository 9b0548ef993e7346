"""The scheduling queue (upstream ``pkg/scheduler/backend/queue``): activeQ, backoffQ,
the unschedulable pods, the pods in flight and the nominator."""

from kubesched.framework.nominator import Nominator
from kubesched.scheduler.backend.queue.backoff import backoff_duration
from kubesched.scheduler.backend.queue.events import (
    Strategy,
    node_update_events,
    pod_update_events,
)
from kubesched.scheduler.backend.queue.scheduling_queue import (
    ACTIVE,
    BACKOFF,
    IN_FLIGHT,
    UNSCHEDULABLE,
    SchedulingQueue,
)

__all__ = [
    "ACTIVE",
    "BACKOFF",
    "IN_FLIGHT",
    "UNSCHEDULABLE",
    "Nominator",
    "SchedulingQueue",
    "Strategy",
    "backoff_duration",
    "node_update_events",
    "pod_update_events",
]
