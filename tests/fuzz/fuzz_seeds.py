"""One valid object per kind, for the fuzzer to create, then change, patch and delete.

Kinds not listed here are seeded with metadata alone (enough for ConfigMaps, Secrets,
Namespaces and the like, and for the fuzzer's own custom resource); a kind whose
metadata-only object the server refuses needs an entry (a test says which).
"""

from __future__ import annotations

import copy
from typing import Any

_POD_SPEC: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
_TEMPLATE: dict[str, Any] = {"metadata": {"labels": {"app": "fuzz"}}, "spec": _POD_SPEC}
_SELECTOR: dict[str, Any] = {"matchLabels": {"app": "fuzz"}}
_DEVICE_REQUEST: dict[str, Any] = {
    "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "fuzz-gpu"}}]}
}

#: Everything but metadata.name (and namespace), by kind (``group/kind`` where one kind
#: name is served in two groups).
SEEDS: dict[str, dict[str, Any]] = {
    "Pod": {"spec": _POD_SPEC},
    "Binding": {"target": {"kind": "Node", "name": "fuzz-node"}},
    "Event": {
        "involvedObject": {"kind": "Pod", "namespace": "fuzz", "name": "p"},
        "reason": "Fuzzed",
        "message": "m",
        "type": "Normal",
        "source": {"component": "fuzz"},
    },
    "events.k8s.io/Event": {
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "fuzz.example.com/c",
        "reportingInstance": "i",
        "action": "Fuzz",
        "reason": "Fuzzed",
        "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": "fuzz", "name": "p"},
    },
    "Service": {"spec": {"ports": [{"port": 80}], "selector": {"app": "fuzz"}}},
    "ReplicationController": {"spec": {"selector": {"app": "fuzz"}, "template": _TEMPLATE}},
    "PriorityClass": {"value": 10},
    "PodDisruptionBudget": {"spec": {"minAvailable": 1, "selector": _SELECTOR}},
    "Deployment": {"spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
    "ReplicaSet": {"spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
    "StatefulSet": {"spec": {"selector": _SELECTOR, "template": _TEMPLATE, "serviceName": "fuzz"}},
    "DaemonSet": {"spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
    "ControllerRevision": {"revision": 1, "data": {"spec": {}}},
    "Job": {
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "fuzz"}},
                "spec": dict(_POD_SPEC, restartPolicy="Never"),
            }
        }
    },
    "CronJob": {
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {
                "spec": {"template": {"spec": dict(_POD_SPEC, restartPolicy="OnFailure")}}
            },
        }
    },
    "PersistentVolume": {
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp/fuzz"},
        }
    },
    "PersistentVolumeClaim": {
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    },
    "StorageClass": {"provisioner": "fuzz.csi.example.com"},
    "CSINode": {"spec": {"drivers": [{"name": "fuzz.csi.example.com", "nodeID": "n1"}]}},
    "CSIDriver": {"spec": {"attachRequired": False}},
    "CSIStorageCapacity": {"storageClassName": "fuzz", "capacity": "1Gi"},
    "VolumeAttachment": {
        "spec": {
            "attacher": "fuzz.csi.example.com",
            "nodeName": "fuzz-node",
            "source": {"persistentVolumeName": "pv"},
        }
    },
    "VolumeAttributesClass": {"driverName": "fuzz.csi.example.com", "parameters": {"a": "b"}},
    "DeviceClass": {"spec": {"selectors": [{"cel": {"expression": "true"}}]}},
    "ResourceClaim": {"spec": _DEVICE_REQUEST},
    "ResourceClaimTemplate": {"spec": {"spec": _DEVICE_REQUEST}},
    "ResourceSlice": {
        "spec": {
            "driver": "fuzz.example.com",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "fuzz-node",
            "devices": [{"name": "d0"}],
        }
    },
    "SelfSubjectAccessReview": {
        "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}
    },
    "SelfSubjectRulesReview": {"spec": {"namespace": "fuzz"}},
    "SelfSubjectReview": {},
    # The fuzzer's own custom resource (fuzz_world.CRD): its scale subresource needs
    # spec.replicas (without it, GET .../scale is upstream's 500).
    "fuzz.example.com/Widget": {"spec": {"replicas": 1}},
}


def object_name(res: Any, stem: str) -> str:
    """A name for an object of ``res`` from ``stem``: a CRD's must be ``<plural>.<group>``."""
    if res.kind == "CustomResourceDefinition":
        return f"{stem.replace('-', '')}s.seed.example.com"
    return stem


def _crd(name: str) -> dict[str, Any]:
    plural = name.split(".")[0]
    return {
        "spec": {
            "group": "seed.example.com",
            "scope": "Cluster",
            "names": {"plural": plural, "kind": plural.capitalize()},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        }
    }


def seed(res: Any, name: str, namespace: str) -> dict[str, Any]:
    """A valid object of ``res`` (a served Resource) named ``name``."""
    body = copy.deepcopy(SEEDS.get(f"{res.group}/{res.kind}", SEEDS.get(res.kind, {})))
    if res.kind == "CustomResourceDefinition":
        body = _crd(name)
    meta: dict[str, Any] = {"name": name, "labels": {"fuzz": "seed"}}
    if res.namespaced:
        meta["namespace"] = namespace
    return {"apiVersion": res.group_version, "kind": res.kind, "metadata": meta, **body}
