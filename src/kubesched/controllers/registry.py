"""Every controller the manager knows, by upstream's name (``cmd/kube-controller-manager/
names``), in start order. Add a controller here with its init function and the resources
the server must serve for it."""

from __future__ import annotations

from kubesched.controllers import (
    cronjob,
    daemonset,
    disruption,
    dradriver,
    elasticquota,
    garbagecollector,
    job,
    kubelet,
    podgc,
    podgroup,
    replicaset,
    resourceclaim,
    serviceaccount,
    statefulset,
)
from kubesched.controllers.crds import scheduling_crds
from kubesched.controllers.csi import attacher as csi_attacher
from kubesched.controllers.csi import nodes as csi_nodes
from kubesched.controllers.csi import provisioner as csi_provisioner
from kubesched.controllers.deployment import controller as deployment
from kubesched.controllers.manager import ControllerDescriptor
from kubesched.controllers.volume import attachdetach, ephemeral, persistentvolume, protection
from kubesched.controllers.volume.resources import (
    CSI_DRIVERS,
    CSI_NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
    VOLUME_ATTACHMENTS,
)
from kubesched.kube.resources import (
    DEVICE_CLASSES,
    ELASTIC_QUOTAS,
    NAMESPACES,
    NODES,
    POD_DISRUPTION_BUDGETS,
    POD_GROUPS,
    PODS,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
    SERVICE_ACCOUNTS,
    STATEFUL_SETS,
)

__all__ = ["CONTROLLERS", "controller_names"]

_CLAIMS_AND_VOLUMES = (PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES)

CONTROLLERS: tuple[ControllerDescriptor, ...] = (
    ControllerDescriptor(
        kubelet.NAME,
        kubelet.start_kubelet,
        (NODES, PODS),
        optional=(*_CLAIMS_AND_VOLUMES, VOLUME_ATTACHMENTS, CSI_DRIVERS),
    ),
    ControllerDescriptor(
        disruption.NAME, disruption.start_disruption_controller, (PODS, POD_DISRUPTION_BUDGETS)
    ),
    ControllerDescriptor(podgc.NAME, podgc.start, (PODS, NODES)),
    ControllerDescriptor(serviceaccount.NAME, serviceaccount.start, (NAMESPACES, SERVICE_ACCOUNTS)),
    ControllerDescriptor(job.NAME, job.start_job_controller, (job.JOBS, PODS)),
    ControllerDescriptor(garbagecollector.NAME, garbagecollector.start_garbage_collector),
    ControllerDescriptor(
        cronjob.NAME, cronjob.start_cronjob_controller, (cronjob.CRONJOBS, job.JOBS)
    ),
    ControllerDescriptor(
        replicaset.NAME, replicaset.start_replicaset_controller, (REPLICA_SETS, PODS)
    ),
    ControllerDescriptor(
        replicaset.RC_NAME,
        replicaset.start_replication_controller,
        (REPLICATION_CONTROLLERS, PODS),
    ),
    ControllerDescriptor(
        deployment.COMPONENT,
        deployment.start_deployment_controller,
        (deployment.DEPLOYMENTS, REPLICA_SETS, PODS),
    ),
    ControllerDescriptor(statefulset.NAME, statefulset.start, (STATEFUL_SETS, PODS)),
    ControllerDescriptor(daemonset.NAME, daemonset.start, (daemonset.DAEMON_SETS, PODS, NODES)),
    ControllerDescriptor(
        persistentvolume.NAME,
        persistentvolume.start,
        (*_CLAIMS_AND_VOLUMES, STORAGE_CLASSES, PODS),
    ),
    ControllerDescriptor(
        protection.PVC_NAME, protection.start_pvc_protection, (PERSISTENT_VOLUME_CLAIMS, PODS)
    ),
    ControllerDescriptor(protection.PV_NAME, protection.start_pv_protection, (PERSISTENT_VOLUMES,)),
    ControllerDescriptor(ephemeral.NAME, ephemeral.start, (PODS, PERSISTENT_VOLUME_CLAIMS)),
    ControllerDescriptor(
        attachdetach.NAME,
        attachdetach.start,
        (PODS, *_CLAIMS_AND_VOLUMES, VOLUME_ATTACHMENTS, CSI_DRIVERS),
    ),
    ControllerDescriptor(
        csi_nodes.NAME, csi_nodes.start, (NODES, CSI_NODES, CSI_DRIVERS, STORAGE_CLASSES)
    ),
    ControllerDescriptor(
        csi_provisioner.NAME,
        csi_provisioner.start,
        (*_CLAIMS_AND_VOLUMES, STORAGE_CLASSES, NODES, CSI_NODES),
    ),
    ControllerDescriptor(
        csi_attacher.NAME, csi_attacher.start, (VOLUME_ATTACHMENTS, PERSISTENT_VOLUMES, NODES)
    ),
    ControllerDescriptor(
        resourceclaim.NAME,
        resourceclaim.start,
        (PODS, RESOURCE_CLAIMS, RESOURCE_CLAIM_TEMPLATES),
    ),
    ControllerDescriptor(dradriver.NAME, dradriver.start, (NODES, RESOURCE_SLICES, DEVICE_CLASSES)),
    ControllerDescriptor(podgroup.NAME, podgroup.start, (POD_GROUPS, PODS), crds=scheduling_crds),
    ControllerDescriptor(
        elasticquota.NAME, elasticquota.start, (ELASTIC_QUOTAS, PODS), crds=scheduling_crds
    ),
)


def controller_names() -> list[str]:
    """The names of every known controller, sorted (for ``--controllers`` help)."""
    return sorted(d.name for d in CONTROLLERS)
