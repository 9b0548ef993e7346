"""Micro-benchmark: what fieldValidation adds to decoding one create body.

Prints µs per body for: plain ``json.loads`` (what the server did before), the parse with
duplicate detection (``fieldvalidation.loads``), and the unknown-field walk that drops
(and reports) unknown fields (``check_body``), for the pod body of ``apiserver_bench.py``
and for a larger pod (three containers with env, ports, probes, volumes, affinity).
The minimum of five repeats of CPU time, so that load from other processes counts the least.

    .venv/bin/python bench/micro_fieldvalidation.py [--number 5000]
"""

from __future__ import annotations

import argparse
import copy
import json
import time
import timeit
from collections.abc import Callable
from typing import Any

from kubesched.apiserver import fieldvalidation
from kubesched.apiserver.resources import PODS

SMALL: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "pod-1", "labels": {"app": "a1"}},
    "spec": {
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}]
    },
}


def _container(i: int) -> dict[str, Any]:
    return {
        "name": f"c{i}",
        "image": "registry.example/app:1.2.3",
        "args": ["--port=8080", "--verbose"],
        "env": [{"name": f"E{j}", "value": str(j)} for j in range(8)],
        "ports": [{"containerPort": 8080 + i, "protocol": "TCP"}],
        "resources": {
            "requests": {"cpu": "250m", "memory": "256Mi"},
            "limits": {"memory": "512Mi"},
        },
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 5},
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    }


LARGE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "big",
        "labels": {f"l{j}": "v" for j in range(6)},
        "annotations": {"a": "b"},
    },
    "spec": {
        "containers": [_container(i) for i in range(3)],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "zone", "operator": "In", "values": ["a", "b"]}
                            ]
                        }
                    ]
                }
            }
        },
    },
}


def _time(call: Callable[[], Any], number: int) -> float:
    # CPU time of this process: the machine's other work counts less than in wall time.
    timer = timeit.Timer(call, timer=time.process_time)
    return min(timer.repeat(number=number, repeat=5)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=5000)
    number = parser.parse_args().number
    for label, body in (("small pod", SMALL), ("large pod", LARGE)):
        raw = json.dumps(body).encode()
        plain = _time(lambda raw=raw: json.loads(raw), number)
        parse = _time(lambda raw=raw: fieldvalidation.loads(raw), number)
        decoded = [copy.deepcopy(body) for _ in range(number * 5)]
        check = fieldvalidation.FieldCheck()
        it = iter(decoded)
        walk = _time(lambda it=it, c=check: fieldvalidation.check_body(c, PODS, next(it)), number)
        print(
            f"{label} ({len(raw)} bytes): json.loads {plain:.1f} µs, loads with duplicates "
            f"{parse:.1f} µs, unknown-field walk {walk:.1f} µs, added {parse - plain + walk:.1f} µs"
        )


if __name__ == "__main__":
    main()
