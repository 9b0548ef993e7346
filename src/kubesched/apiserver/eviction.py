"""POST pods/<name>/eviction (policy/v1 Eviction), as upstream's ``EvictionREST.Create``.

* A pod that is Pending, Succeeded or Failed, or already being deleted, is deleted
  without looking at budgets.
* More than one PodDisruptionBudget covering the pod: 500, as upstream.
* A Running pod that is not Ready: with ``unhealthyPodEvictionPolicy: AlwaysAllow``, or
  (default ``IfHealthyBudget``) when the budget has ``currentHealthy >= desiredHealthy``,
  it is deleted without spending the budget.
* Otherwise the budget must have processed its current generation and have
  ``disruptionsAllowed > 0``: it is decremented, the pod recorded in ``disruptedPods``
  (a status update with the resourceVersion read — optimistic concurrency, retried on a
  conflict, 409 after five), and the pod deleted with the Eviction's ``deleteOptions``. With none
  allowed: 429 ``Cannot evict pod as it would violate the pod's disruption budget.`` with
  a ``DisruptionBudget`` cause.

Before the delete, the pod gets the condition ``DisruptionTarget`` (reason
``EvictionByEvictionAPI``, message ``Eviction API: evicting``), as upstream's
``addConditionAndDeletePod`` adds it, so that a Job's pod failure policy can tell an
eviction from a failure of its own.

Success is 201 with a Success Status.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kubesched.apiserver import errors, rest
from kubesched.apiserver.resources import PODDISRUPTIONBUDGETS, PODS
from kubesched.apiserver.store import Store, copy_object, format_time
from kubesched.apiserver.watch import Object
from kubesched.objects.disruption import is_ready, matches

#: Upstream's ``MaxDisruptedPodSize``.
MAX_DISRUPTED_PODS = 2000
_RETRIES = 5
_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
DISRUPTION_TARGET = "DisruptionTarget"
EVICTION_REASON = "EvictionByEvictionAPI"
EVICTION_MESSAGE = "Eviction API: evicting"


def _too_many(cause: str) -> errors.ApiError:
    return errors.failure(
        429,
        "TooManyRequests",
        _VIOLATION,
        {"causes": [{"reason": "DisruptionBudget", "message": cause}]},
    )


def evict(store: Store, namespace: str, name: str, body: Any) -> rest.Reply:
    """Evict pod ``namespace/name`` as ``body`` (an Eviction) asks."""
    if not isinstance(body, dict) or body.get("kind") not in (None, "Eviction"):
        raise errors.bad_request("the body of the request must be an Eviction")
    meta = body.get("metadata") or {}
    if meta.get("name") not in (None, "", name):
        raise errors.bad_request("name in URL does not match name in Eviction object")
    if meta.get("namespace") not in (None, "", namespace):
        raise errors.bad_request("namespace in URL does not match namespace in Eviction object")
    options = body.get("deleteOptions")
    options = dict(options) if isinstance(options, dict) else {}
    pod = store.get(PODS, namespace, name)
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Pending", "Succeeded", "Failed") or pod["metadata"].get("deletionTimestamp"):
        return _delete(store, namespace, name, options)
    pdb_name = ""
    for _ in range(_RETRIES):
        pdbs = _pdbs_for_pod(store, pod)
        if not pdbs:
            break
        if len(pdbs) > 1:
            raise errors.internal_error(
                "This pod has more than one PodDisruptionBudget, which the eviction "
                "subresource does not support."
            )
        pdb = pdbs[0]
        pdb_name = pdb["metadata"]["name"]
        status = pdb.get("status") or {}
        if not is_ready(pod):
            policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy")
            if policy == "AlwaysAllow" or (
                int(status.get("currentHealthy", 0)) >= int(status.get("desiredHealthy", 0))
                and "observedGeneration" in status
            ):
                break
        if _try_decrement(store, pdb, name):
            break
        pod = store.get(PODS, namespace, name)  # a conflict: look again, as upstream
    else:
        raise errors.stale_conflict("poddisruptionbudgets", pdb_name, "policy")
    return _delete(store, namespace, name, options)


def _try_decrement(store: Store, pdb: Any, pod_name: str) -> bool:
    """Spend one disruption of ``pdb`` on ``pod_name``; False on a write conflict."""
    meta, status = pdb["metadata"], dict(pdb.get("status") or {})
    pdb_name = meta["name"]
    if int(status.get("observedGeneration", 0)) < int(meta.get("generation", 1)):
        raise _too_many(f"The disruption budget {pdb_name} is still being processed by the server.")
    allowed = int(status.get("disruptionsAllowed", 0))
    if allowed < 0:
        raise errors.forbidden(
            "poddisruptionbudget", pdb_name, "pdb disruptions allowed is negative", "policy"
        )
    disrupted = dict(status.get("disruptedPods") or {})
    if len(disrupted) > MAX_DISRUPTED_PODS:
        raise errors.forbidden(
            "poddisruptionbudget",
            pdb_name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            "policy",
        )
    if allowed == 0:
        raise _too_many(
            f"The disruption budget {pdb_name} needs {status.get('desiredHealthy', 0)} healthy "
            f"pods and has {status.get('currentHealthy', 0)} currently"
        )
    status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        status["conditions"] = [
            {
                "type": "DisruptionAllowed",
                "status": "False",
                "reason": "InsufficientPods",
                "message": "",
                "observedGeneration": int(meta.get("generation", 1)),
                "lastTransitionTime": format_time(datetime.now(UTC)),
            }
        ]
    disrupted[pod_name] = format_time(datetime.now(UTC))
    status["disruptedPods"] = disrupted
    new = copy_object(pdb)
    new["status"] = status
    try:
        store.update(PODDISRUPTIONBUDGETS, new, meta.get("namespace"), "status")
    except errors.ApiError as err:
        if err.code == 409:
            return False
        raise
    return True


def _delete(store: Store, namespace: str, name: str, options: dict[str, Any]) -> rest.Reply:
    updated = _add_disruption_target(store, namespace, name, options)
    preconditions = options.get("preconditions")
    if isinstance(preconditions, dict) and preconditions.get("resourceVersion"):
        # The condition is our own write: the caller's precondition meant the version
        # before it (upstream bumps it the same way).
        version = updated["metadata"]["resourceVersion"]
        options = {**options, "preconditions": {**preconditions, "resourceVersion": version}}
    rest.delete(store, PODS, namespace, name, options)
    return 201, errors.success(201)


def _add_disruption_target(
    store: Store, namespace: str, name: str, options: dict[str, Any]
) -> Object:
    """Write the DisruptionTarget condition into the latest pod's status, retrying on a
    conflict; the delete options' preconditions are checked against that pod."""
    preconditions = options.get("preconditions")
    preconditions = preconditions if isinstance(preconditions, dict) else {}
    for _ in range(_RETRIES):
        pod = store.get(PODS, namespace, name)
        meta = pod["metadata"]
        uid, version = preconditions.get("uid"), preconditions.get("resourceVersion")
        if uid and uid != meta.get("uid"):
            raise errors.conflict(
                "pods",
                name,
                f"Precondition failed: UID in precondition: {uid}, "
                f"UID in object meta: {meta.get('uid', '')}",
            )
        if version and version != meta["resourceVersion"]:
            raise errors.conflict(
                "pods",
                name,
                f"Precondition failed: ResourceVersion in precondition: {version}, "
                f"ResourceVersion in object meta: {meta['resourceVersion']}",
            )
        new = copy_object(pod)
        status = new.setdefault("status", {})
        status["conditions"] = _with_condition(status.get("conditions") or [])
        try:
            return store.update(PODS, new, namespace, "status")
        except errors.ApiError as err:
            if err.code != 409:
                raise
    raise errors.stale_conflict("pods", name)


def _with_condition(conditions: list[Any]) -> list[Any]:
    """``conditions`` with DisruptionTarget True (``UpdatePodCondition``: the transition
    time kept when the status was True already)."""
    stamp = format_time(datetime.now(UTC))
    wanted = {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": stamp,
        "reason": EVICTION_REASON,
        "message": EVICTION_MESSAGE,
    }
    out = list(conditions)
    for i, cond in enumerate(out):
        if isinstance(cond, dict) and cond.get("type") == DISRUPTION_TARGET:
            if cond.get("status") == "True":
                wanted["lastTransitionTime"] = cond.get("lastTransitionTime", stamp)
            out[i] = wanted
            return out
    out.append(wanted)
    return out


def _pdbs_for_pod(store: Store, pod: Object) -> list[Object]:
    """The PDBs that cover ``pod``."""
    ns = pod["metadata"].get("namespace") or ""
    return [p for p in store.list(PODDISRUPTIONBUDGETS, ns).items if matches(p, pod)]
