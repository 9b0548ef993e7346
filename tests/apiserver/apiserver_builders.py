"""Fluent builders for the JSON objects the API server tests send (as upstream's
``pkg/scheduler/testing/wrappers.go`` builds typed ones)."""

from __future__ import annotations

from typing import Any


class PodBuilder:
    """``PodBuilder("web").label("app", "web").node("n1").obj()``."""

    def __init__(self, name: str = "", namespace: str = "default") -> None:
        meta: dict[str, Any] = {"namespace": namespace}
        if name:
            meta["name"] = name
        self._obj: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "pause"}]},
        }

    def generate_name(self, prefix: str) -> PodBuilder:
        self._obj["metadata"]["generateName"] = prefix
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        self._obj["metadata"].setdefault("labels", {})[key] = value
        return self

    def node(self, name: str) -> PodBuilder:
        self._obj["spec"]["nodeName"] = name
        return self

    def scheduler(self, name: str) -> PodBuilder:
        self._obj["spec"]["schedulerName"] = name
        return self

    def phase(self, phase: str) -> PodBuilder:
        self._obj.setdefault("status", {})["phase"] = phase
        return self

    def obj(self) -> dict[str, Any]:
        return self._obj


class NodeBuilder:
    """``NodeBuilder("n1").capacity(cpu="4").label("zone", "a").obj()``."""

    def __init__(self, name: str) -> None:
        self._obj: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name},
            "spec": {},
        }

    def label(self, key: str, value: str) -> NodeBuilder:
        self._obj["metadata"].setdefault("labels", {})[key] = value
        return self

    def capacity(self, **resources: str) -> NodeBuilder:
        self._obj.setdefault("status", {})["capacity"] = dict(resources)
        return self

    def unschedulable(self) -> NodeBuilder:
        self._obj["spec"]["unschedulable"] = True
        return self

    def obj(self) -> dict[str, Any]:
        return self._obj


class WorkloadBuilder:
    """``WorkloadBuilder("apps/v1", "Deployment", "web").replicas(3).obj()``: a workload
    whose selector matches its template's ``app: <name>`` label."""

    def __init__(self, api_version: str, kind: str, name: str, namespace: str = "default"):
        self._obj: dict[str, Any] = {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
                },
            },
        }

    def spec(self, **fields: Any) -> WorkloadBuilder:
        self._obj["spec"].update(fields)
        return self

    def no_selector(self) -> WorkloadBuilder:
        del self._obj["spec"]["selector"]
        return self

    def restart_policy(self, policy: str) -> WorkloadBuilder:
        self._obj["spec"]["template"]["spec"]["restartPolicy"] = policy
        return self

    def annotate(self, key: str, value: str) -> WorkloadBuilder:
        self._obj["metadata"].setdefault("annotations", {})[key] = value
        return self

    def obj(self) -> dict[str, Any]:
        return self._obj


def deployment(name: str) -> WorkloadBuilder:
    """An apps/v1 Deployment builder."""
    return WorkloadBuilder("apps/v1", "Deployment", name)


def job(name: str) -> WorkloadBuilder:
    """A batch/v1 Job builder (generated selector, restartPolicy Never)."""
    return WorkloadBuilder("batch/v1", "Job", name).no_selector().restart_policy("Never")


def event(name: str, involved: dict[str, str], reason: str = "Scheduled") -> dict[str, Any]:
    """A core/v1 Event about ``involved`` (kind, name, namespace, uid)."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": involved.get("namespace", "default")},
        "involvedObject": involved,
        "reason": reason,
        "type": "Normal",
        "message": "m",
    }


def call(server, method, path, body=None, content_type="application/json", headers=None):
    """One raw HTTP request: (status code, decoded JSON body)."""
    import json
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.url + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", content_type)
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


# Upstream's validation messages (k8s.io/apimachinery/pkg/util/validation) the tests expect.

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)

LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)

QNAME = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

CONFIG_KEY = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')"
)
