"""The removed scheduler Policy: loading it (or a configuration naming it) fails saying
how to migrate, and ``kubesched config migrate`` writes the v1 equivalent, following
the legacy registry of kube-scheduler v1.22 (legacy_registry.go)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main as kubesched_main
from kubesched.config import ConfigError, load_config
from kubesched.config.migrate import migrate
from kubesched.config.policy import parse_policy
from kubesched.framework.runtime import Framework
from kubesched.plugins.registry import in_tree_registry

HOW = (
    "run 'kubesched config migrate --policy POLICY_FILE [--config OLD_CONFIG]' to write "
    "the equivalent kubescheduler.config.k8s.io/v1 configuration (extenders, and plugins "
    "for the predicates and priorities)"
)

# The classic tutorial Policy: a few predicates, priorities and one extender.
TUTORIAL = {
    "kind": "Policy",
    "apiVersion": "v1",
    "predicates": [
        {"name": "PodFitsResources"},
        {"name": "MatchNodeSelector"},
        {"name": "PodFitsPorts"},
        {"name": "HostName"},
    ],
    "priorities": [
        {"name": "LeastRequestedPriority", "weight": 1},
        {"name": "BalancedResourceAllocation", "weight": 1},
        {"name": "InterPodAffinityPriority", "weight": 2},
    ],
    "hardPodAffinitySymmetricWeight": 10,
    "extenders": [
        {
            "urlPrefix": "https://gpu-extender.kube-system.svc:8888/scheduler",
            "filterVerb": "filter",
            "prioritizeVerb": "prioritize",
            "preemptVerb": "preempt",
            "bindVerb": "bind",
            "weight": 5,
            "enableHttps": True,
            "tlsConfig": {"insecure": False, "caFile": "/etc/ca.crt", "serverName": "gpu"},
            "httpTimeout": 30000000000,
            "nodeCacheCapable": True,
            "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}],
            "ignorable": True,
        }
    ],
}


def policy_of(data: dict[str, Any]) -> Any:
    policy, errors = parse_policy(data, "policy.json")
    assert errors == []
    return policy


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data) if path.suffix == ".json" else yaml.safe_dump(data))
    return path


# --- loading a removed form fails, saying how to migrate ----------------------------


def test_a_policy_file_given_as_configuration_fails_naming_the_release(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path / "policy.json", TUTORIAL))
    assert str(info.value) == (
        f'{tmp_path / "policy.json"}: kind: Invalid value: "Policy": the scheduler Policy API '
        "was removed in Kubernetes v1.23; a Policy file cannot be loaded as a configuration: " + HOW
    )


def test_a_configuration_with_algorithm_source_fails_with_one_clear_error(tmp_path: Path) -> None:
    old = {
        "apiVersion": "kubescheduler.config.k8s.io/v1beta1",
        "kind": "KubeSchedulerConfiguration",
        "algorithmSource": {"policy": {"file": {"path": "/etc/kubernetes/policy.json"}}},
    }
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path / "old.yaml", old))
    assert [str(e) for e in info.value.errors] == [
        "algorithmSource: Forbidden: algorithmSource (a Policy file or ConfigMap, or an "
        "algorithm provider) was removed in Kubernetes v1.23 with the scheduler Policy API; "
        "kubescheduler.config.k8s.io/v1beta1 was the last version that had it: " + HOW
    ]


# --- the mapping -----------------------------------------------------------------------


def test_tutorial_policy_migrates_to_plugins_and_a_v1_extender() -> None:
    migration = migrate(policy_of(TUTORIAL))
    assert migration.notes == []
    assert migration.document == {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {
                        "enabled": [
                            {"name": "SchedulingGates"},
                            {"name": "PrioritySort"},
                            # Predicates in the legacy order, the mandatory ones included.
                            {"name": "NodeUnschedulable"},
                            {"name": "NodeName"},
                            {"name": "NodePorts"},
                            {"name": "NodeAffinity"},
                            {"name": "NodeResourcesFit", "weight": 1},
                            {"name": "TaintToleration"},
                            {"name": "NodeResourcesBalancedAllocation", "weight": 1},
                            {"name": "InterPodAffinity", "weight": 2},
                            {"name": "DefaultPreemption"},
                            {"name": "DefaultBinder"},
                        ],
                        "disabled": [{"name": "*"}],
                    },
                    "preFilter": {
                        "disabled": [
                            {"name": "NodeResourcesBalancedAllocation"},
                            {"name": "InterPodAffinity"},
                        ]
                    },
                    "filter": {
                        "disabled": [
                            {"name": "NodeResourcesBalancedAllocation"},
                            {"name": "InterPodAffinity"},
                        ]
                    },
                    "preScore": {
                        "disabled": [
                            {"name": "NodeUnschedulable"},
                            {"name": "NodeName"},
                            {"name": "NodePorts"},
                            {"name": "NodeAffinity"},
                            {"name": "TaintToleration"},
                        ]
                    },
                    "score": {
                        "disabled": [
                            {"name": "NodeUnschedulable"},
                            {"name": "NodeName"},
                            {"name": "NodePorts"},
                            {"name": "NodeAffinity"},
                            {"name": "TaintToleration"},
                        ]
                    },
                },
                "pluginConfig": [
                    {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 10}},
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "LeastAllocated",
                                "resources": [
                                    {"name": "cpu", "weight": 1},
                                    {"name": "memory", "weight": 1},
                                ],
                            }
                        },
                    },
                ],
            }
        ],
        "extenders": [
            {
                "urlPrefix": "https://gpu-extender.kube-system.svc:8888/scheduler",
                "filterVerb": "filter",
                "preemptVerb": "preempt",
                "prioritizeVerb": "prioritize",
                "bindVerb": "bind",
                "weight": 5,
                "enableHTTPS": True,
                "nodeCacheCapable": True,
                "ignorable": True,
                "tlsConfig": {"serverName": "gpu", "caFile": "/etc/ca.crt"},
                "httpTimeout": "30s",
                "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}],
            }
        ],
    }


def test_migrated_configuration_loads_and_runs_each_plugin_where_the_policy_asked(
    tmp_path: Path,
) -> None:
    path = tmp_path / "new.yaml"
    path.write_text(migrate(policy_of(TUTORIAL)).render())
    config = load_config(path)
    assert config.extenders[0].http_timeout_seconds == 30.0
    assert (
        config.extenders[0].enable_https
        and config.extenders[0].managed_resources[0].ignored_by_scheduler
    )
    fwk = Framework(config.profiles[0], in_tree_registry())
    # NodeUnschedulable, NodeName, NodePorts, NodeAffinity, NodeResourcesFit, TaintToleration
    assert len(fwk.plugins_at("filter")) == 6
    assert fwk.score_weights == {
        "NodeResourcesFit": 1,
        "NodeResourcesBalancedAllocation": 1,
        "InterPodAffinity": 2,
    }


def test_policy_without_predicates_or_priorities_gets_the_legacy_defaults() -> None:
    migration = migrate(policy_of({"kind": "Policy", "apiVersion": "v1"}))
    profile = migration.document["profiles"][0]
    enabled = [p["name"] for p in profile["plugins"]["multiPoint"]["enabled"]]
    assert enabled == [
        "SchedulingGates",
        "PrioritySort",
        "NodeUnschedulable",
        "NodeResourcesFit",
        "NodeName",
        "NodePorts",
        "NodeAffinity",
        "VolumeRestrictions",
        "TaintToleration",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "DefaultPreemption",
        "DefaultBinder",
    ]
    weights = {p["name"]: p.get("weight") for p in profile["plugins"]["multiPoint"]["enabled"]}
    # EvenPodsSpreadPriority (2) and SelectorSpreadPriority (1) share a plugin: the
    # higher weight wins, and the system default constraints stay on.
    assert weights["PodTopologySpread"] == 2
    assert {"name": "PodTopologySpread", "args": {"defaultingType": "System"}} in profile[
        "pluginConfig"
    ]
    assert [n.split(":")[0] for n in migration.notes] == [
        "predicate 'MaxEBSVolumeCount'",
        "predicate 'MaxGCEPDVolumeCount'",
        "predicate 'MaxAzureDiskVolumeCount'",
        "priority 'NodePreferAvoidPodsPriority'",
    ]


def test_what_cannot_be_mapped_is_named() -> None:
    policy = policy_of(
        {
            "kind": "Policy",
            "apiVersion": "v1",
            "predicates": [
                {"name": "NoSuchPredicate"},
                {"name": "zone", "argument": {"serviceAffinity": {"labels": ["zone"]}}},
            ],
            "priorities": [
                {"name": "EvenPodsSpreadPriority", "weight": 3},
                {"name": "MostRequestedPriority", "weight": 2},
                {"name": "EqualPriority", "weight": 1},
                {
                    "name": "ratio",
                    "weight": 4,
                    "argument": {
                        "requestedToCapacityRatioArguments": {
                            "shape": [
                                {"utilization": 0, "score": 10},
                                {"utilization": 100, "score": 0},
                            ],
                            "resources": [{"name": "example.com/gpu", "weight": 3}],
                        }
                    },
                },
            ],
            "alwaysCheckAllPredicates": True,
        }
    )
    migration = migrate(policy)
    assert migration.notes == [
        "predicate 'NoSuchPredicate': unknown to the legacy registry",
        "predicate 'zone' (serviceAffinity): the ServiceAffinity plugin was removed in "
        "Kubernetes v1.23; use pod affinity or anti-affinity (or topologySpreadConstraints) "
        "in the pod spec, or write a plugin",
        "priority 'EqualPriority': gives every node the same score, which changes no choice: left out",
        "priority 'ratio': NodeResourcesFit scores with one strategy, and "
        "'MostRequestedPriority' (MostAllocated) already set it",
        "alwaysCheckAllPredicates: v1 has no such setting (every filter plugin runs until "
        "one rejects the node)",
    ]
    config = migration.document["profiles"][0]["pluginConfig"]
    assert config == [
        {
            "name": "NodeResourcesFit",
            "args": {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                }
            },
        },
        # Only EvenPodsSpreadPriority: the pod's own constraints, no system defaults.
        {"name": "PodTopologySpread", "args": {"defaultingType": "List"}},
    ]


def test_requested_to_capacity_ratio_argument_becomes_the_scoring_strategy() -> None:
    policy = policy_of(
        {
            "priorities": [
                {
                    "name": "RequestedToCapacityRatioPriority",
                    "weight": 2,
                    "argument": {
                        "requestedToCapacityRatioArguments": {
                            "shape": [
                                {"utilization": 0, "score": 0},
                                {"utilization": 100, "score": 10},
                            ]
                        }
                    },
                }
            ]
        }
    )
    (fit,) = migrate(policy).document["profiles"][0]["pluginConfig"]
    assert fit == {
        "name": "NodeResourcesFit",
        "args": {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            }
        },
    }


# --- the command -----------------------------------------------------------------------


def test_migrate_command_keeps_the_old_configuration_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = write(
        tmp_path / "policy.json",
        {**TUTORIAL, "priorities": [{"name": "NodePreferAvoidPodsPriority", "weight": 10000}]},
    )
    old = write(
        tmp_path / "old.yaml",
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1beta1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": "/etc/kubernetes/scheduler.conf"},
            "leaderElection": {"leaderElect": True, "resourceName": "gpu-scheduler"},
            "algorithmSource": {"policy": {"file": {"path": "/etc/kubernetes/policy.json"}}},
            "healthzBindAddress": "0.0.0.0:10251",
            "profiles": [{"schedulerName": "gpu-scheduler"}],
        },
    )
    out = tmp_path / "new.yaml"
    code = kubesched_main(
        ["config", "migrate", "--policy", str(policy), "--config", str(old), "-o", str(out)]
    )
    assert code == 0
    assert capsys.readouterr().err.splitlines() == [
        "kubesched config migrate: not carried over: priority 'NodePreferAvoidPodsPriority': "
        "the NodePreferAvoidPods plugin was removed in Kubernetes v1.24 (its node annotation "
        "is no longer read); taint the nodes instead",
        "kubesched config migrate: not carried over: healthzBindAddress of the old "
        "configuration: not in kubescheduler.config.k8s.io/v1",
    ]
    config = load_config(out)
    assert [p.scheduler_name for p in config.profiles] == ["gpu-scheduler"]
    assert config.client_connection.kubeconfig == "/etc/kubernetes/scheduler.conf"
    assert config.leader_election.resource_name == "gpu-scheduler"
    assert config.extenders[0].url_prefix == TUTORIAL["extenders"][0]["urlPrefix"]
    assert out.read_text().startswith("# Migrated from a scheduler Policy")


def test_migrate_command_names_a_bad_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = {"kind": "Policy", "extenders": [{"urlPrefix": "http://x", "httpTimeout": "5s"}]}
    policy = write(tmp_path / "policy.json", bad)
    assert kubesched_main(["config", "migrate", "--policy", str(policy)]) == 2
    assert capsys.readouterr().err == (
        f'{policy}: extenders[0].httpTimeout: Invalid value: "5s": the Policy\'s httpTimeout is '
        "a number of nanoseconds (Go's time.Duration), e.g. 5000000000 for 5s\n"
    )
