"""Fluent builders for scheduler-plugins' PodGroups and ElasticQuotas, as
:mod:`kubesched.testing.wrappers` builds pods: the wire JSON first, decoded by the same
code as real objects.

    group = make_pod_group("train").min_member(3).min_resources(cpu="3").obj()
    quota = make_elastic_quota("team-a").min(cpu="4").max(cpu="8").obj()
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.objects.elasticquota import ElasticQuota
from kubesched.objects.podgroup import API_VERSION, PodGroup


def _resources(**amounts: str) -> dict[str, str]:
    # Python names cannot hold "-" or "/": ephemeral_storage, or pass a dict via **{}.
    return {name.replace("_", "-"): value for name, value in amounts.items()}


class PodGroupWrapper:
    """Builds a PodGroup dict step by step; ``obj()`` decodes it."""

    def __init__(self, name: str) -> None:
        self.raw: dict[str, Any] = {
            "apiVersion": API_VERSION,
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default", "uid": f"pg-{name}"},
            "spec": {"minMember": 1},
        }

    def namespace(self, ns: str) -> PodGroupWrapper:
        self.raw["metadata"]["namespace"] = ns
        return self

    def creation_timestamp(self, ts: str) -> PodGroupWrapper:
        self.raw["metadata"]["creationTimestamp"] = ts
        return self

    def min_member(self, n: int) -> PodGroupWrapper:
        self.raw["spec"]["minMember"] = n
        return self

    def min_resources(self, **amounts: str) -> PodGroupWrapper:
        self.raw["spec"]["minResources"] = _resources(**amounts)
        return self

    def schedule_timeout_seconds(self, seconds: int) -> PodGroupWrapper:
        self.raw["spec"]["scheduleTimeoutSeconds"] = seconds
        return self

    def status(self, **fields: Any) -> PodGroupWrapper:
        """Status fields by their wire names: ``status(phase="Running", running=3)``."""
        self.raw.setdefault("status", {}).update(fields)
        return self

    def dict(self) -> dict[str, Any]:
        """A copy of the wire object (for files and API calls)."""
        return copy.deepcopy(self.raw)

    def obj(self) -> PodGroup:
        return PodGroup.from_dict(self.raw)


class ElasticQuotaWrapper:
    """Builds an ElasticQuota dict step by step; ``obj()`` decodes it."""

    def __init__(self, namespace: str, name: str = "quota") -> None:
        self.raw: dict[str, Any] = {
            "apiVersion": API_VERSION,
            "kind": "ElasticQuota",
            "metadata": {"name": name, "namespace": namespace, "uid": f"eq-{namespace}"},
            "spec": {},
        }

    def min(self, **amounts: str) -> ElasticQuotaWrapper:
        self.raw["spec"]["min"] = _resources(**amounts)
        return self

    def max(self, **amounts: str) -> ElasticQuotaWrapper:
        self.raw["spec"]["max"] = _resources(**amounts)
        return self

    def used(self, **amounts: str) -> ElasticQuotaWrapper:
        self.raw.setdefault("status", {})["used"] = _resources(**amounts)
        return self

    def dict(self) -> dict[str, Any]:
        """A copy of the wire object (for files and API calls)."""
        return copy.deepcopy(self.raw)

    def obj(self) -> ElasticQuota:
        return ElasticQuota.from_dict(self.raw)


def make_pod_group(name: str = "pg") -> PodGroupWrapper:
    """A PodGroup ``default/name`` with minMember 1."""
    return PodGroupWrapper(name)


def make_elastic_quota(namespace: str = "default", name: str = "quota") -> ElasticQuotaWrapper:
    """An ElasticQuota in ``namespace`` with neither min nor max."""
    return ElasticQuotaWrapper(namespace, name)
