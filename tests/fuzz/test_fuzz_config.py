"""Fuzzed KubeSchedulerConfiguration files through ``kubesched simulate --config``: a
configuration using every part (two profiles, plugins at several extension points with
weights, every in-tree plugin's args, an extender, the top-level settings) changed at the
paths of its own structure, written as YAML or JSON, now and then damaged as text. The
answer is a simulation (exit 0) or one line per problem naming the file (exit 2)."""

from __future__ import annotations

from pathlib import Path

import yaml
from fuzz_files import damaged_text, dump, simulate
from fuzz_profile import fuzz
from fuzz_values import json_values, mutated, schema_of
from hypothesis import given
from hypothesis import strategies as st

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "parallelism": 16,
    "percentageOfNodesToScore": 50,
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 10,
    "leaderElection": {
        "leaderElect": False,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
        "resourceLock": "leases",
        "resourceName": "kube-scheduler",
        "resourceNamespace": "kube-system",
    },
    "clientConnection": {
        "kubeconfig": "",
        "qps": 50,
        "burst": 100,
        "contentType": "application/vnd.kubernetes.protobuf",
    },
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "percentageOfNodesToScore": 100,
            "plugins": {
                "multiPoint": {
                    "enabled": [{"name": "NodeResourcesFit", "weight": 2}],
                    "disabled": [{"name": "ImageLocality"}],
                },
                "score": {
                    "enabled": [{"name": "NodeAffinity", "weight": 3}],
                    "disabled": [{"name": "TaintToleration"}],
                },
                "preFilter": {"disabled": [{"name": "*"}]},
                "filter": {"enabled": [{"name": "NodeName"}]},
                "postFilter": {"enabled": [{"name": "DefaultPreemption"}]},
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "ignoredResources": ["example.com/x"],
                        "ignoredResourceGroups": ["example.com"],
                        "scoringStrategy": {
                            "type": "RequestedToCapacityRatio",
                            "resources": [
                                {"name": "cpu", "weight": 1},
                                {"name": "memory", "weight": 1},
                            ],
                            "requestedToCapacityRatio": {
                                "shape": [
                                    {"utilization": 0, "score": 0},
                                    {"utilization": 100, "score": 10},
                                ]
                            },
                        },
                    },
                },
                {
                    "name": "PodTopologySpread",
                    "args": {
                        "defaultingType": "List",
                        "defaultConstraints": [
                            {
                                "maxSkew": 1,
                                "topologyKey": "topology.kubernetes.io/zone",
                                "whenUnsatisfiable": "ScheduleAnyway",
                            }
                        ],
                    },
                },
                {
                    "name": "InterPodAffinity",
                    "args": {
                        "hardPodAffinityWeight": 1,
                        "ignorePreferredTermsOfExistingPods": False,
                    },
                },
                {
                    "name": "DefaultPreemption",
                    "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
                },
                {
                    "name": "NodeAffinity",
                    "args": {
                        "addedAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {
                                                "key": "kubernetes.io/os",
                                                "operator": "In",
                                                "values": ["linux"],
                                            }
                                        ]
                                    }
                                ]
                            }
                        }
                    },
                },
                {
                    "name": "NodeResourcesBalancedAllocation",
                    "args": {"resources": [{"name": "cpu", "weight": 1}]},
                },
                {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 600}},
                {"name": "DynamicResources", "args": {"filterTimeout": "10s"}},
            ],
        },
        {"schedulerName": "second", "plugins": {"score": {"disabled": [{"name": "*"}]}}},
    ],
}
#: With an extender: parsed and validated, then refused by the simulator (which calls none).
WITH_EXTENDER = dict(
    CONFIG,
    extenders=[
        {
            "urlPrefix": "http://127.0.0.1:1/ext",
            "filterVerb": "filter",
            "weight": 1,
            "ignorable": True,
            "httpTimeout": "1s",
            "managedResources": [{"name": "example.com/x", "ignoredByScheduler": True}],
        }
    ],
)
SCHEMA = schema_of(CONFIG)
SCHEMA_WITH_EXTENDER = schema_of(WITH_EXTENDER)


@st.composite
def config_bytes(draw) -> bytes:
    value = draw(
        st.one_of(
            mutated(CONFIG, SCHEMA),
            mutated(CONFIG, SCHEMA),
            mutated(WITH_EXTENDER, SCHEMA_WITH_EXTENDER),
            st.just(CONFIG),
            json_values(),
        )
    )
    how = draw(st.sampled_from(["yaml", "json"]))
    try:
        text = dump([value], how)
    except (ValueError, yaml.YAMLError):
        text = dump([value], "json")
    return draw(damaged_text(text))


@fuzz(examples=60)
@given(data=st.data())
def test_simulate_with_a_fuzzed_configuration(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("config")
    suffix = data.draw(st.sampled_from([".yaml", ".json"]), "suffix")
    config = folder / f"config{suffix}"
    config.write_bytes(data.draw(config_bytes(), "config"))
    cluster = EXAMPLES / "cluster.yaml"
    pods = EXAMPLES / "pods-qos-sort.yaml"
    simulate(
        [
            "simulate",
            "--cluster",
            str(cluster),
            "--pods",
            str(pods),
            "--config",
            str(config),
            "--seed",
            "1",
        ],
        [config],
    )
