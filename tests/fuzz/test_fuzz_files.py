"""Fuzzed cluster and pod files through ``kubesched simulate``: the documents of the
examples (nodes, pods, PriorityClasses, PDBs, workloads, Services) changed at their kind's
schema paths (the API server's own OpenAPI schemas), written as YAML or JSON, now and then
damaged as text. The answer is a simulation (exit 0) or one line per problem naming the
file (exit 2), never a traceback or a hang."""

from __future__ import annotations

from pathlib import Path

import yaml
from fuzz_files import damaged_text, dump, simulate
from fuzz_profile import fuzz
from fuzz_values import json_values, mutated, resolve
from hypothesis import given
from hypothesis import strategies as st

from kubesched.apiserver import schemas

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _documents(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if isinstance(d, dict)]


CLUSTER = _documents("cluster.yaml")
PODS = [
    d for name in sorted(p.name for p in EXAMPLES.glob("pods-*.yaml")) for d in _documents(name)
]
WORKLOADS = [
    {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": kind.lower(), "namespace": "default"},
        "spec": spec,
    }
    for kind, spec in {
        "Deployment": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "w"}},
            "template": {
                "metadata": {"labels": {"app": "w"}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}
                    ]
                },
            },
        },
        "StatefulSet": {
            "replicas": 1,
            "serviceName": "s",
            "selector": {"matchLabels": {"app": "s"}},
            "template": {
                "metadata": {"labels": {"app": "s"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
        "DaemonSet": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }.items()
] + [
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "job"},
        "spec": {
            "completions": 2,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}
            },
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svc"},
        "spec": {"selector": {"app": "w"}, "ports": [{"port": 80}]},
    },
]


def kind_schema(doc: object) -> dict:
    if not isinstance(doc, dict):
        return {}
    group, _, version = str(doc.get("apiVersion", "")).rpartition("/")
    name = schemas.name_of(group, version, str(doc.get("kind", "")))
    return resolve({"$ref": f"{schemas.REF_PREFIX}{name}"}) if name else {}


@st.composite
def documents(draw, pool: list[dict], most: int) -> list:
    chosen = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=most))
    docs = [dict(d) for d in chosen]
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(docs) - 1))
        schema = kind_schema(docs[at])
        docs[at] = draw(
            st.one_of(mutated(docs[at], schema), mutated(docs[at], schema), json_values())
        )
    return docs


@st.composite
def file_bytes(draw, pool: list[dict], most: int) -> bytes:
    docs = draw(documents(pool, most))
    how = draw(st.sampled_from(["yaml", "yaml", "json-list", "json"]))
    try:
        text = dump(docs, how)
    except (ValueError, yaml.YAMLError):  # a float NaN in JSON, a surrogate in YAML
        text = dump(docs, "json-list")
    return draw(damaged_text(text))


@fuzz(examples=60)
@given(data=st.data())
def test_simulate_fuzzed_cluster_and_pod_files(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("files")
    cluster, pods = folder / "cluster.yaml", folder / "pods.yaml"
    cluster.write_bytes(data.draw(file_bytes(CLUSTER, 12), "cluster"))
    pods.write_bytes(data.draw(file_bytes(PODS + WORKLOADS, 4), "pods"))
    simulate(
        ["simulate", "--cluster", str(cluster), "--pods", str(pods), "--seed", "1"], [cluster, pods]
    )
