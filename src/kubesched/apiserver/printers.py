"""Table printers of the kinds besides pods, nodes and events (:mod:`.tables`): the
columns and cells of kube-apiserver's ``printNamespace``, ``printConfigMap``,
``printSecret``, ``printServiceAccount``, ``printService``, ``printReplicationController``,
``printDeployment``, ``printReplicaSet``, ``printStatefulSet``, ``printDaemonSet``,
``printControllerRevision``, ``printJob``, ``printCronJob``, ``printPodDisruptionBudget``,
``printPriorityClass`` and ``printLease``, so that
``kubectl get svc,cm,secret,sa,pdb,pc,rc,deploy,rs,sts,ds,controllerrevisions,job,cj,ns``
prints what it prints against a real cluster. Wide columns (priority 1) are always
filled, as upstream's server does; kubectl shows them with ``-o wide``.

Column descriptions are ours (kubectl does not print them). Where this server stores an
object without the defaults upstream's API would have given it (an RC or a StatefulSet
without ``spec.replicas``), the cell shows the default (1).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from kubesched.apiserver.errors import ApiError
from kubesched.apiserver.scale import label_selector_string
from kubesched.apiserver.table_cells import (
    AGE_DOC,
    NAME_DOC,
    Cells,
    Column,
    age,
    col,
    human_duration,
)
from kubesched.apiserver.watch import Object

__all__ = ["PRINTERS"]

Printer = tuple[list[Column], Callable[[Object, datetime], Cells]]


def _name(obj: Object) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _created(obj: Object, now: datetime) -> str:
    return age((obj.get("metadata") or {}).get("creationTimestamp"), now)


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def format_labels(labels: Any) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, ``<none>`` when there are none."""
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def format_label_selector(selector: Any) -> str:
    """``metav1.FormatLabelSelector``: ``<none>`` for none, ``<error>`` for an invalid
    one, else the requirements as ``kubectl get -l`` takes them (sorted by key)."""
    if not isinstance(selector, dict):
        return "<none>"
    parts: list[tuple[str, str]] = []
    for key, value in sorted((selector.get("matchLabels") or {}).items()):
        parts.append((str(key), f"{key}={value}"))
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, dict):
            return "<error>"
        key, op = str(expr.get("key", "")), expr.get("operator")
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        if op == "In":
            text = f"{key} in ({values})"
        elif op == "NotIn":
            text = f"{key} notin ({values})"
        elif op == "Exists":
            text = key
        elif op == "DoesNotExist":
            text = f"!{key}"
        else:
            return "<error>"
        parts.append((key, text))
    if not parts:
        return "<none>"
    return ",".join(text for _, text in sorted(parts, key=lambda p: p[0]))


def _template_containers(obj: Object) -> tuple[str, str]:
    # layoutContainerCells: the template's container names and images, comma-joined.
    spec = (((obj.get("spec") or {}).get("template") or {}).get("spec")) or {}
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    names = ",".join(str(c.get("name", "")) for c in containers)
    images = ",".join(str(c.get("image", "")) for c in containers)
    return names, images


def _name_col() -> Column:
    return col("Name", NAME_DOC, fmt="name")


def _age_col() -> Column:
    return col("Age", AGE_DOC)


NAMESPACE_COLUMNS = [_name_col(), col("Status", "The namespace's phase."), _age_col()]


def namespace_cells(obj: Object, now: datetime) -> Cells:
    """``printNamespace``."""
    return [_name(obj), (obj.get("status") or {}).get("phase", ""), _created(obj, now)]


CONFIGMAP_COLUMNS = [
    _name_col(),
    col("Data", "How many keys data and binaryData hold.", kind="integer"),
    _age_col(),
]


def configmap_cells(obj: Object, now: datetime) -> Cells:
    """``printConfigMap``: the count of data and binaryData keys."""
    count = len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
    return [_name(obj), count, _created(obj, now)]


SECRET_COLUMNS = [
    _name_col(),
    col("Type", "Used to facilitate programmatic handling of secret data."),
    col("Data", "How many keys data holds."),
    _age_col(),
]


def secret_cells(obj: Object, now: datetime) -> Cells:
    """``printSecret``: the type and the count of data keys."""
    return [_name(obj), str(obj.get("type") or ""), len(obj.get("data") or {}), _created(obj, now)]


SERVICE_ACCOUNT_COLUMNS = [
    _name_col(),
    col("Secrets", "How many secrets the service account lists."),
    _age_col(),
]


def service_account_cells(obj: Object, now: datetime) -> Cells:
    """``printServiceAccount``: the count of listed secrets."""
    return [_name(obj), len(obj.get("secrets") or []), _created(obj, now)]


SERVICE_COLUMNS = [
    _name_col(),
    col("Type", "How the service is exposed."),
    col("Cluster-IP", "The service's first cluster IP."),
    col("External-IP", "Addresses outside the cluster the service answers on."),
    col("Port(s)", "The service's ports."),
    _age_col(),
    col("Selector", "The labels of the pods behind the service.", 1),
]


def _external_ip(spec: dict[str, Any], status: dict[str, Any]) -> str:
    # getServiceExternalIP.
    kind = spec.get("type")
    external = [str(ip) for ip in spec.get("externalIPs") or []]
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        ingress = (status.get("loadBalancer") or {}).get("ingress") or []
        balancer = [str(i.get("ip") or i.get("hostname")) for i in ingress if isinstance(i, dict)]
        found = [b for b in balancer if b and b != "None"] + external
        return ",".join(found) if found else "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def _ports(spec: dict[str, Any]) -> str:
    # makePortString: port[:nodePort]/protocol, comma-joined.
    pieces = []
    for port in spec.get("ports") or []:
        if not isinstance(port, dict):
            continue
        protocol = port.get("protocol", "TCP")
        node_port = _int(port.get("nodePort"))
        if node_port > 0:
            pieces.append(f"{port.get('port')}:{node_port}/{protocol}")
        else:
            pieces.append(f"{port.get('port')}/{protocol}")
    return ",".join(pieces) or "<none>"


def service_cells(obj: Object, now: datetime) -> Cells:
    """``printService``."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    return [
        _name(obj),
        str(spec.get("type", "")),
        str(cluster_ips[0]) if cluster_ips else "<none>",
        _external_ip(spec, status),
        _ports(spec),
        _created(obj, now),
        format_labels(spec.get("selector")),
    ]


REPLICAS_COLUMNS = [
    _name_col(),
    col("Desired", "The replicas the spec asks for.", kind="integer"),
    col("Current", "The replicas there are.", kind="integer"),
    col("Ready", "The replicas that are ready.", kind="integer"),
    _age_col(),
    col("Containers", "The template's container names.", 1),
    col("Images", "The template's container images.", 1),
    col("Selector", "The labels of the replicas.", 1),
]


def _replicas_cells(obj: Object, now: datetime, selector: str) -> Cells:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _template_containers(obj)
    return [
        _name(obj),
        _int(spec.get("replicas"), 1),
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        _created(obj, now),
        names,
        images,
        selector,
    ]


def replication_controller_cells(obj: Object, now: datetime) -> Cells:
    """``printReplicationController`` (its selector is a plain label map)."""
    return _replicas_cells(obj, now, format_labels((obj.get("spec") or {}).get("selector")))


def replica_set_cells(obj: Object, now: datetime) -> Cells:
    """``printReplicaSet`` (its selector is a LabelSelector)."""
    selector = format_label_selector((obj.get("spec") or {}).get("selector"))
    return _replicas_cells(obj, now, selector)


DEPLOYMENT_COLUMNS = [
    _name_col(),
    col("Ready", "Number of the pod with ready state"),
    col("Up-to-date", "The replicas that have the desired template."),
    col("Available", "The replicas available (ready for at least minReadySeconds)."),
    _age_col(),
    col("Containers", "Names of each container in the template.", 1),
    col("Images", "Images referenced by each container in the template.", 1),
    col("Selector", "The label query over the deployment's pods.", 1),
]


def deployment_cells(obj: Object, now: datetime) -> Cells:
    """``printDeployment``: ``ready/desired``, up-to-date and available replicas; the
    selector as ``LabelSelectorAsSelector(...).String()`` (``<invalid>`` if it is not)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _template_containers(obj)
    try:
        selector = label_selector_string(spec.get("selector"))
    except ApiError:
        selector = "<invalid>"
    return [
        _name(obj),
        f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'), 1)}",
        _int(status.get("updatedReplicas")),
        _int(status.get("availableReplicas")),
        _created(obj, now),
        names,
        images,
        selector,
    ]


STATEFULSET_COLUMNS = [
    _name_col(),
    col("Ready", "Ready replicas out of those the spec asks for."),
    _age_col(),
    col("Containers", "The template's container names.", 1),
    col("Images", "The template's container images.", 1),
]


def stateful_set_cells(obj: Object, now: datetime) -> Cells:
    """``printStatefulSet``: ``ready/desired``."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _template_containers(obj)
    ready = f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'), 1)}"
    return [_name(obj), ready, _created(obj, now), names, images]


DAEMONSET_COLUMNS = [
    _name_col(),
    col("Desired", "The number of nodes that should run the daemon pod.", kind="integer"),
    col("Current", "The number of nodes running at least one daemon pod.", kind="integer"),
    col("Ready", "The number of nodes whose daemon pod is ready.", kind="integer"),
    col("Up-to-date", "The number of nodes running the updated daemon pod.", kind="integer"),
    col("Available", "The number of nodes whose daemon pod is available.", kind="integer"),
    col("Node Selector", "The node labels the daemon pods ask for."),
    _age_col(),
    col("Containers", "Names of each container in the template.", 1),
    col("Images", "Images referenced by each container in the template.", 1),
    col("Selector", "The label query over the daemon set's pods.", 1),
]


def daemon_set_cells(obj: Object, now: datetime) -> Cells:
    """``printDaemonSet``: the status counts and the template's node selector."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _template_containers(obj)
    node_selector = ((spec.get("template") or {}).get("spec") or {}).get("nodeSelector")
    return [
        _name(obj),
        _int(status.get("desiredNumberScheduled")),
        _int(status.get("currentNumberScheduled")),
        _int(status.get("numberReady")),
        _int(status.get("updatedNumberScheduled")),
        _int(status.get("numberAvailable")),
        format_labels(node_selector),
        _created(obj, now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


CONTROLLER_REVISION_COLUMNS = [
    _name_col(),
    col("Controller", "The controller that owns the revision (kind.group/name)."),
    col("Revision", "The revision number.", kind="integer"),
    _age_col(),
]


def controller_revision_cells(obj: Object, now: datetime) -> Cells:
    """``printControllerRevision``: the controlling owner as ``kind.group/name``
    (``<none>`` without one) and the revision number."""
    controller = "<none>"
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            kind = str(ref.get("kind") or "")
            full = f"{kind}.{group}" if group else kind
            controller = f"{full.lower()}/{ref.get('name', '')}" if kind else str(ref.get("name"))
            break
    return [_name(obj), controller, _int(obj.get("revision")), _created(obj, now)]


CRONJOB_COLUMNS = [
    _name_col(),
    col("Schedule", "The schedule in Cron format."),
    col("Timezone", "The time zone of the schedule."),
    col("Suspend", "Whether later runs are suspended.", kind="boolean"),
    col("Active", "The number of Jobs running.", kind="integer"),
    col("Last Schedule", "When a Job was last scheduled."),
    _age_col(),
    col("Containers", "Names of each container in the template.", 1),
    col("Images", "Images referenced by each container in the template.", 1),
    col("Selector", "The label query over the Jobs' pods.", 1),
]


def cron_job_cells(obj: Object, now: datetime) -> Cells:
    """``printCronJob``: schedule, zone (``<none>``), suspend (``<unset>`` when nil),
    active Jobs and when the last was scheduled (``<none>`` before the first)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    names, images = _template_containers({"spec": job_spec})
    suspend = spec.get("suspend")
    last = status.get("lastScheduleTime")
    zone = spec.get("timeZone")
    return [
        _name(obj),
        str(spec.get("schedule") or ""),
        "<none>" if zone is None else str(zone),
        "<unset>" if not isinstance(suspend, bool) else ("True" if suspend else "False"),
        len(status.get("active") or []),
        age(last, now) if last else "<none>",
        _created(obj, now),
        names,
        images,
        format_label_selector(job_spec.get("selector")),
    ]


JOB_COLUMNS = [
    _name_col(),
    col("Status", "Status of the job."),
    col("Completions", "The pods that succeeded, of those wanted."),
    col("Duration", "Time required to complete the job."),
    _age_col(),
    col("Containers", "Names of each container in the template.", 1),
    col("Images", "Images referenced by each container in the template.", 1),
    col("Selector", "The label query over the job's pods.", 1),
]
#: printJob's status: the first condition type (True) in this order names it.
_JOB_STATUS_ORDER = ("Complete", "Failed", "Suspended", "FailureTarget", "SuccessCriteriaMet")


def _job_condition(status: dict[str, Any], kind: str) -> bool:
    return any(
        isinstance(c, dict) and c.get("type") == kind and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def _job_status(obj: Object, status: dict[str, Any]) -> str:
    for kind in _JOB_STATUS_ORDER:
        if kind == "Suspended" and (obj.get("metadata") or {}).get("deletionTimestamp"):
            return "Terminating"  # after Complete and Failed, before the rest
        if _job_condition(status, kind):
            return kind
    return "Running"


def _job_duration(status: dict[str, Any], now: datetime) -> str:
    start, end = status.get("startTime"), status.get("completionTime")
    if not start:
        return ""
    try:
        began = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        ended = datetime.fromisoformat(str(end).replace("Z", "+00:00")) if end else now
    except ValueError:
        return ""
    return human_duration((ended - began).total_seconds())


def job_cells(obj: Object, now: datetime) -> Cells:
    """``printJob``: its status from the conditions, ``succeeded/completions`` (``N/1
    of P`` for a work queue with parallelism P), and how long it ran."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    succeeded = _int(status.get("succeeded"))
    completions = spec.get("completions")
    if isinstance(completions, int) and not isinstance(completions, bool):
        done = f"{succeeded}/{completions}"
    else:
        parallelism = _int(spec.get("parallelism"))
        done = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    names, images = _template_containers(obj)
    return [
        _name(obj),
        _job_status(obj, status),
        done,
        _job_duration(status, now),
        _created(obj, now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


PDB_COLUMNS = [
    _name_col(),
    col("Min Available", "The pods that must stay available."),
    col("Max Unavailable", "The pods that may be unavailable."),
    col("Allowed Disruptions", "How many pods may be evicted now.", kind="integer"),
    _age_col(),
]


def pdb_cells(obj: Object, now: datetime) -> Cells:
    """``printPodDisruptionBudget``: ``N/A`` for the bound not set."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    return [
        _name(obj),
        "N/A" if low is None else str(low),
        "N/A" if high is None else str(high),
        _int(status.get("disruptionsAllowed")),
        _created(obj, now),
    ]


PRIORITY_CLASS_COLUMNS = [
    _name_col(),
    col("Value", "The priority of the pods of this class.", kind="integer"),
    col("Global-Default", "Whether pods with no class get this one.", kind="boolean"),
    _age_col(),
    col("PreemptionPolicy", "Whether the pods of this class may preempt others."),
]


def priority_class_cells(obj: Object, now: datetime) -> Cells:
    """``printPriorityClass``."""
    return [
        _name(obj),
        _int(obj.get("value")),
        obj.get("globalDefault") is True,
        _created(obj, now),
        str(obj.get("preemptionPolicy") or ""),
    ]


LEASE_COLUMNS = [_name_col(), col("Holder", "Who holds the lease."), _age_col()]


def lease_cells(obj: Object, now: datetime) -> Cells:
    """``printLease``."""
    holder = (obj.get("spec") or {}).get("holderIdentity")
    return [_name(obj), str(holder or ""), _created(obj, now)]


#: Plural → (columns, cells) of the kinds printed here.
PRINTERS: dict[str, Printer] = {
    "namespaces": (NAMESPACE_COLUMNS, namespace_cells),
    "configmaps": (CONFIGMAP_COLUMNS, configmap_cells),
    "secrets": (SECRET_COLUMNS, secret_cells),
    "serviceaccounts": (SERVICE_ACCOUNT_COLUMNS, service_account_cells),
    "services": (SERVICE_COLUMNS, service_cells),
    "replicationcontrollers": (REPLICAS_COLUMNS, replication_controller_cells),
    "deployments": (DEPLOYMENT_COLUMNS, deployment_cells),
    "replicasets": (REPLICAS_COLUMNS, replica_set_cells),
    "statefulsets": (STATEFULSET_COLUMNS, stateful_set_cells),
    "daemonsets": (DAEMONSET_COLUMNS, daemon_set_cells),
    "controllerrevisions": (CONTROLLER_REVISION_COLUMNS, controller_revision_cells),
    "jobs": (JOB_COLUMNS, job_cells),
    "cronjobs": (CRONJOB_COLUMNS, cron_job_cells),
    "poddisruptionbudgets": (PDB_COLUMNS, pdb_cells),
    "priorityclasses": (PRIORITY_CLASS_COLUMNS, priority_class_cells),
    "leases": (LEASE_COLUMNS, lease_cells),
}
