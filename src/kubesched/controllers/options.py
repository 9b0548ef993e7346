"""The controllers' settings, in one place (kube-controller-manager's component config).

One frozen dataclass with every default set here; a controller reads the fields it
needs from ``ctx.options``. Add a controller's settings as fields with defaults, so
that ``ControllerOptions()`` is always a working configuration.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["ControllerOptions", "MayStartHook"]

#: A "may start" hook of the kubelet: None lets the pod start, else the reason it waits.
MayStartHook = Callable[[dict[str, Any]], "str | None"]


@dataclass(frozen=True)
class ControllerOptions:
    """Settings of every controller (seconds unless said otherwise)."""

    #: kubelet: a pod bound to a simulated node becomes Running this long after.
    run_delay: float = 0.5
    #: kubelet: a pod being deleted on a simulated node goes this long after.
    stop_delay: float = 0.1
    #: pod-garbage-collector: how long a node pods are bound to must stay missing before
    #: its pods are collected (upstream's quarantine: 40 s).
    gc_delay: float = 0.1
    #: pod-garbage-collector: seconds between passes (upstream's gcCheckPeriod).
    pod_gc_interval: float = 20.0
    #: pod-garbage-collector: terminated pods kept before the oldest are deleted
    #: (``--terminated-pod-gc-threshold``; 0 keeps them all).
    terminated_pod_gc_threshold: int = 12500
    #: kubelet: node lease renewal period (kubelet: 10 s); 0 keeps no leases at all.
    node_lease_interval: float = 10.0
    #: kubelet: how long a container of a Never / OnFailure pod runs unless the pod's
    #: ``kubesched.io/run-seconds`` annotation says otherwise.
    pod_run_seconds: float = 5.0
    #: kubelet: status writes in flight at once.
    kubelet_workers: int = 32
    #: kubelet: factories of "may start" hooks (:data:`kubesched.controllers.kubelet.MayStart`),
    #: each called once with the controller context; a pod starts once every hook agrees.
    may_start: tuple[
        Callable[[ControllerContext], Callable[[dict[str, Any]], str | None]], ...
    ] = ()
    #: disruption-controller: seconds between passes over every PodDisruptionBudget (so
    #: that stale ``disruptedPods`` entries expire).
    disruption_resync: float = 5.0
    #: job-controller: pod events are batched this long into one sync
    #: (``syncJobBatchPeriod``).
    job_sync_batch_period: float = 1.0
    #: job-controller: delay before failed pods are replaced, doubling per failure up to
    #: ``job_max_pod_failure_backoff`` (``DefaultJobPodFailureBackOff``: 10 s, 10 min).
    job_pod_failure_backoff: float = 10.0
    job_max_pod_failure_backoff: float = 600.0
    #: garbage-collector-controller: seconds between discoveries of new collections.
    gc_resync_period: float = 30.0
    #: persistentvolume-binder-controller: every claim and volume is synced again this
    #: often (``--pvclaimbinder-sync-period``); 0: never.
    volume_resync_period: float = 15.0
    #: csi-node-registrar: install the StorageClasses ``standard`` (default) and
    #: ``zonal`` of the simulated CSI drivers when it starts.
    install_storage_classes: bool = True
    #: podgroup-controller, elasticquota-controller: install scheduler-plugins' PodGroup
    #: and ElasticQuota CRDs when the server lacks them, at start (kept if present).
    install_crds: bool = True
