"""A Job's ``podFailurePolicy`` applied to one failed pod (``pod_failure_policy.go``).

The rules are tried in order; the first that matches decides. An ``onExitCodes`` rule
matches a terminated container (regular containers first, then init containers) with a
non-zero exit code that the operator accepts, restricted to ``containerName`` when set;
an ``onPodConditions`` rule matches a pod condition of the pattern's type and status (for
example ``DisruptionTarget``, which preemption, the Eviction API and the pod GC set).

* ``FailJob``: the Job fails at once, reason ``PodFailurePolicy``, with upstream's message.
* ``FailIndex``: the pod's index fails at once (``backoffLimitPerIndex`` only).
* ``Ignore``: the failure does not count towards ``backoffLimit`` (nor the index's limit).
* ``Count``: the failure counts, as without a policy. So does a pod no rule matches.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.controllers.job.pods import RawObject, meta, status

FAIL_JOB = "FailJob"
FAIL_INDEX = "FailIndex"
IGNORE = "Ignore"
COUNT = "Count"


@dataclass(frozen=True)
class PolicyMatch:
    """What the policy says of one failed pod (``matchPodFailurePolicy``'s three results).

    **fail_job_message**: set when a FailJob rule matched: the Job's failure message.
    **count_failed**: whether the failure counts towards the backoff limits.
    **action**: the action of the rule that matched, or None.
    """

    fail_job_message: str | None = None
    count_failed: bool = True
    action: str | None = None


NO_MATCH = PolicyMatch()


def policy_of(job: RawObject) -> RawObject | None:
    """``spec.podFailurePolicy``, or None when unset."""
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    return policy if isinstance(policy, dict) else None


def match_pod_failure_policy(policy: RawObject | None, pod: RawObject) -> PolicyMatch:
    """The decision of ``policy`` for ``pod``, which failed (``matchPodFailurePolicy``)."""
    if policy is None:
        return NO_MATCH
    for index, rule in enumerate(policy.get("rules") or []):
        if not isinstance(rule, dict):
            continue
        action = rule.get("action")
        exit_codes = rule.get("onExitCodes")
        patterns = rule.get("onPodConditions")
        if isinstance(exit_codes, dict):
            container = _match_on_exit_codes(status(pod), exit_codes)
            if container is None:
                continue
            terminated = (container.get("state") or {}).get("terminated") or {}
            message = (
                f"Container {container.get('name', '')} for pod {_pod_key(pod)} failed with "
                f"exit code {terminated.get('exitCode')} matching {action} rule at index {index}"
            )
        elif isinstance(patterns, list):
            condition = _match_on_pod_conditions(status(pod), patterns)
            if condition is None:
                continue
            message = (
                f"Pod {_pod_key(pod)} has condition {condition.get('type', '')} matching "
                f"{action} rule at index {index}"
            )
        else:
            continue
        # An unknown action (validation refuses it) falls through to the next rule, as
        # upstream's switch without a default does.
        if action == IGNORE:
            return PolicyMatch(None, False, IGNORE)
        if action == COUNT:
            return PolicyMatch(None, True, COUNT)
        if action == FAIL_INDEX:
            return PolicyMatch(None, True, FAIL_INDEX)
        if action == FAIL_JOB:
            return PolicyMatch(message, True, FAIL_JOB)
    return NO_MATCH


def _pod_key(pod: RawObject) -> str:
    m = meta(pod)
    return f"{m.get('namespace', '')}/{m.get('name', '')}"


def _match_on_exit_codes(pod_status: RawObject, requirement: RawObject) -> RawObject | None:
    """The first terminated container status the requirement accepts: regular
    containers first, then init containers (``matchOnExitCodes``)."""
    for field in ("containerStatuses", "initContainerStatuses"):
        for container in pod_status.get(field) or []:
            if isinstance(container, dict) and _exit_code_matches(container, requirement):
                return container
    return None


def _exit_code_matches(container: RawObject, requirement: RawObject) -> bool:
    terminated = (container.get("state") or {}).get("terminated")
    if not isinstance(terminated, dict):
        return False  # still running or terminating: no exit code to match yet
    name = requirement.get("containerName")
    if name is not None and name != container.get("name"):
        return False
    code = terminated.get("exitCode")
    if not isinstance(code, int) or code == 0:
        return False
    values = requirement.get("values") or []
    operator = requirement.get("operator")
    if operator == "In":
        return code in values
    if operator == "NotIn":
        return code not in values
    return False


def _match_on_pod_conditions(pod_status: RawObject, patterns: list[object]) -> RawObject | None:
    """The first pod condition (in the pod's order) some pattern matches by type and
    status (``matchOnPodConditions``)."""
    for condition in pod_status.get("conditions") or []:
        if not isinstance(condition, dict):
            continue
        for pattern in patterns:
            if (
                isinstance(pattern, dict)
                and condition.get("type") == pattern.get("type")
                and condition.get("status") == pattern.get("status", "True")
            ):
                return condition
    return None


def fail_job_message(policy: RawObject | None, failed_pods: list[RawObject]) -> str | None:
    """The message of the first failed pod that matches a FailJob rule, if any
    (``getFailJobMessage``)."""
    if policy is None:
        return None
    for pod in failed_pods:
        message = match_pod_failure_policy(policy, pod).fail_job_message
        if message is not None:
            return message
    return None
