"""validate_config: upstream's validation_test.go cases with their paths and messages."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.config import (
    ClientConnection,
    Extender,
    ExtenderManagedResource,
    KubeSchedulerConfiguration,
    LeaderElection,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
    validate_config,
)

REMOVED = (
    'was invalid in version "kubescheduler.config.k8s.io/v1" '
    '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
)
QNAME_DETAIL = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def sort_plugins(name: str = "CustomSort", **points: PluginSet) -> Plugins:
    return Plugins(queue_sort=PluginSet((PluginRef(name),)), **points)


VALID = KubeSchedulerConfiguration(
    parallelism=8,
    client_connection=ClientConnection(
        accept_content_types="application/json", content_type="application/json", qps=10, burst=10
    ),
    leader_election=LeaderElection(
        leader_elect=True,
        lease_duration_seconds=30,
        renew_deadline_seconds=15,
        retry_period_seconds=5,
        resource_lock="leases",
        resource_namespace="name",
        resource_name="name",
    ),
    pod_initial_backoff_seconds=1,
    pod_max_backoff_seconds=1,
    percentage_of_nodes_to_score=35,
    profiles=(
        Profile(
            "me",
            plugins=sort_plugins(score=PluginSet(disabled=(PluginRef("*"),))),
            plugin_config=(PluginConfig("DefaultPreemption", {"minCandidateNodesPercentage": 10}),),
        ),
        Profile("other", plugins=sort_plugins(bind=PluginSet((PluginRef("CustomBind"),)))),
    ),
    extenders=(Extender(prioritize_verb="prioritize", weight=1),),
)

Change = Callable[[KubeSchedulerConfiguration], KubeSchedulerConfiguration]


def top(**changes: Any) -> Change:
    return lambda c: dataclasses.replace(c, **changes)


def leader(**changes: Any) -> Change:
    return lambda c: dataclasses.replace(
        c, leader_election=dataclasses.replace(c.leader_election, **changes)
    )


def profile(i: int, **changes: Any) -> Change:
    def change(c: KubeSchedulerConfiguration) -> KubeSchedulerConfiguration:
        profiles = list(c.profiles)
        profiles[i] = dataclasses.replace(profiles[i], **changes)
        return dataclasses.replace(c, profiles=tuple(profiles))

    return change


def extender(**changes: Any) -> Change:
    return lambda c: dataclasses.replace(
        c, extenders=(dataclasses.replace(c.extenders[0], **changes),)
    )


def resources(*names: str) -> tuple[ExtenderManagedResource, ...]:
    return tuple(ExtenderManagedResource(n) for n in names)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(top(), [], id="a valid configuration has no errors"),
        pytest.param(
            top(parallelism=0),
            ["parallelism: Invalid value: 0: should be an integer value greater than zero"],
            id="parallelism must be positive",
        ),
        pytest.param(
            leader(resource_name=""),
            ["leaderElection.resourceName: Required value"],
            id="leader election needs a resource name",
        ),
        pytest.param(
            leader(resource_namespace=""),
            ["leaderElection.resourceNamespace: Required value"],
            id="leader election needs a resource namespace",
        ),
        pytest.param(
            leader(resource_lock=""),
            [
                "leaderElection.resourceLock: Required value",
                'leaderElection.resourceLock: Invalid value: "": '
                'resourceLock value must be "leases"',
            ],
            id="leader election needs a resource lock",
        ),
        pytest.param(
            leader(resource_lock="configmaps"),
            [
                'leaderElection.resourceLock: Invalid value: "configmaps": '
                'resourceLock value must be "leases"'
            ],
            id="only leases can be the resource lock",
        ),
        pytest.param(
            leader(renew_deadline_seconds=45),
            [
                'leaderElection.leaseDuration: Invalid value: "30s": '
                "must be greater than `RenewDeadline`"
            ],
            id="the renew deadline must be shorter than the lease",
        ),
        pytest.param(
            leader(renew_deadline_seconds=0),
            ['leaderElection.renewDeadline: Invalid value: "0s": must be greater than zero'],
            id="a zero renew deadline",
        ),
        pytest.param(
            leader(retry_period_seconds=-45),
            ['leaderElection.retryPeriod: Invalid value: "-45s": must be greater than zero'],
            id="a negative retry period",
        ),
        pytest.param(
            leader(lease_duration_seconds=-45),
            [
                'leaderElection.leaseDuration: Invalid value: "-45s": must be greater than zero',
                'leaderElection.leaseDuration: Invalid value: "-45s": '
                "must be greater than `RenewDeadline`",
            ],
            id="a negative lease duration",
        ),
        pytest.param(
            leader(retry_period_seconds=13),
            [
                'leaderElection.renewDeadline: Invalid value: "15s": '
                "must be greater than retryPeriod*JitterFactor (15.6s)"
            ],
            id="the renew deadline must outlast the jittered retry period",
        ),
        pytest.param(
            leader(leader_elect=False, lease_duration_seconds=-45, resource_lock=""),
            [],
            id="leader election settings do not matter when it is off",
        ),
        pytest.param(
            top(client_connection=ClientConnection(burst=-1)),
            ["clientConnection.burst: Invalid value: -1: must be non-negative"],
            id="a negative burst",
        ),
        pytest.param(
            top(client_connection=ClientConnection(qps=-1)),
            [],
            id="a negative qps is allowed",
        ),
        pytest.param(
            top(percentage_of_nodes_to_score=101),
            ["percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"],
            id="a global percentage above 100",
        ),
        pytest.param(
            profile(1, percentage_of_nodes_to_score=-1),
            ["profiles[1].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"],
            id="a profile percentage below 0",
        ),
        pytest.param(
            top(pod_initial_backoff_seconds=0, pod_max_backoff_seconds=10),
            ["podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"],
            id="the initial backoff must be positive",
        ),
        pytest.param(
            top(pod_initial_backoff_seconds=2),
            [
                "podMaxBackoffSeconds: Invalid value: 1: "
                "must be greater than or equal to PodInitialBackoffSeconds"
            ],
            id="the max backoff must not be below the initial one",
        ),
        pytest.param(top(profiles=()), ["profiles: Required value"], id="no profiles at all"),
        pytest.param(
            profile(1, scheduler_name=""),
            ["profiles[1].schedulerName: Required value"],
            id="a profile without a scheduler name",
        ),
        pytest.param(
            profile(0, scheduler_name="other"),
            ['profiles[1].schedulerName: Duplicate value: "other"'],
            id="a repeated scheduler name",
        ),
        pytest.param(
            profile(1, plugins=sort_plugins("AnotherSort")),
            [
                "profiles[1].plugins.queueSort: Invalid value: "
                '{"enabled":[{"name":"AnotherSort"}]}: '
                "queueSort must be the same for all profiles"
            ],
            id="different queue sort plugins",
        ),
        pytest.param(
            profile(0, plugins=Plugins()),
            [
                "profiles[1].plugins.queueSort: Invalid value: "
                '{"enabled":[{"name":"CustomSort"}]}: '
                "queueSort must be the same for all profiles"
            ],
            id="one profile without a queue sort plugin",
        ),
        pytest.param(
            profile(0, plugins=Plugins(queue_sort=PluginSet((PluginRef("A"), PluginRef("B"))))),
            [
                "profiles[0].plugins.queueSort.enabled: Invalid value: 2: "
                "only one queue sort plugin can be enabled",
                "profiles[1].plugins.queueSort: Invalid value: "
                '{"enabled":[{"name":"CustomSort"}]}: '
                "queueSort must be the same for all profiles",
            ],
            id="two queue sort plugins in the first profile",
        ),
        pytest.param(
            lambda c: profile(1, plugin_config=(PluginConfig("CustomSort", {"a": 2}),))(
                profile(0, plugin_config=(PluginConfig("CustomSort", {"a": 1}),))(c)
            ),
            [
                'profiles[1].pluginConfig[0].args: Invalid value: {"a":2}: '
                "queueSort must be the same for all profiles"
            ],
            id="different queue sort arguments",
        ),
        pytest.param(
            profile(0, plugin_config=(PluginConfig("config"), PluginConfig("config"))),
            ['profiles[0].pluginConfig[1]: Duplicate value: "config"'],
            id="a plugin configured twice",
        ),
        pytest.param(
            profile(0, plugin_config=(PluginConfig(""),)),
            ["profiles[0].pluginConfig[0].name: Required value"],
            id="a plugin config without a name",
        ),
        pytest.param(
            profile(0, plugins=sort_plugins(score=PluginSet((PluginRef("EBSLimits", 2),)))),
            [f'profiles[0].plugins.score.enabled[0]: Invalid value: "EBSLimits": {REMOVED}'],
            id="a removed plugin enabled",
        ),
        pytest.param(
            profile(0, plugin_config=(PluginConfig("GCEPDLimits"),)),
            [f'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": {REMOVED}'],
            id="a removed plugin configured",
        ),
        pytest.param(
            profile(0, plugins=sort_plugins(score=PluginSet((PluginRef("PodTopologySpread", 2),)))),
            [],
            id="a current plugin enabled with a weight",
        ),
        pytest.param(
            profile(0, plugins=sort_plugins(score=PluginSet((PluginRef("ImageLocality", -3),)))),
            [
                "profiles[0].plugins.score.enabled[0].weight: Invalid value: -3: "
                "must be greater than or equal to 0"
            ],
            id="a negative score weight",
        ),
        pytest.param(
            profile(0, plugins=sort_plugins(bind=PluginSet((PluginRef(""),), (PluginRef(""),)))),
            [
                "profiles[0].plugins.bind.enabled[0].name: Required value",
                "profiles[0].plugins.bind.disabled[0].name: Required value",
            ],
            id="plugins without names",
        ),
        pytest.param(
            profile(0, plugins=sort_plugins(score=PluginSet((PluginRef("Heavy", 2**62),)))),
            [
                "profiles[0].plugins.score: Invalid value: 4611686018427387904: "
                "total score of Score plugins could overflow"
            ],
            id="weights whose total score could overflow",
        ),
        pytest.param(
            extender(weight=-1),
            ["extenders[0].weight: Invalid value: -1: must have a positive weight applied to it"],
            id="a prioritizing extender with a negative weight",
        ),
        pytest.param(
            extender(prioritize_verb="", weight=0),
            [],
            id="an extender that does not prioritize needs no weight",
        ),
        pytest.param(
            extender(managed_resources=resources("example.com/foo", "example.com/foo")),
            [
                'extenders[0].managedResources[1].name: Invalid value: "example.com/foo": '
                "duplicate extender managed resource name"
            ],
            id="a managed resource named twice",
        ),
        pytest.param(
            extender(managed_resources=resources("kubernetes.io/foo", "foo", "requests.x/y")),
            [
                f'extenders[0].managedResources[{i}].name: Invalid value: "{name}": '
                "is an invalid extended resource name"
                for i, name in enumerate(("kubernetes.io/foo", "foo", "requests.x/y"))
            ],
            id="managed resources that are not extended resources",
        ),
        pytest.param(
            extender(managed_resources=resources("example.com/-foo")),
            [
                'extenders[0].managedResources[0].name: Invalid value: "example.com/-foo": '
                f"name part {QNAME_DETAIL}"
            ],
            id="a managed resource that is not a qualified name",
        ),
        pytest.param(
            top(
                extenders=(
                    Extender(url_prefix="http://127.0.0.1:8081", bind_verb="bind"),
                    Extender(url_prefix="http://127.0.0.1:8082", bind_verb="bind"),
                )
            ),
            [
                'extenders: Invalid value: "found 2 extenders implementing bind": '
                "only one extender can implement bind"
            ],
            id="two extenders implementing bind",
        ),
        pytest.param(
            extender(http_timeout_seconds=-1.5),
            [
                'extenders[0].httpTimeout: Invalid value: "-1.5s": '
                "must be greater than or equal to 0"
            ],
            id="a negative extender timeout",
        ),
    ],
)
def test_validation(change: Change, expected: list[str]) -> None:
    assert [str(e) for e in validate_config(change(VALID))] == expected


def test_every_problem_is_reported_at_once() -> None:
    config = top(parallelism=-1, percentage_of_nodes_to_score=200)(
        profile(1, scheduler_name="")(extender(weight=0)(VALID))
    )
    assert [str(e) for e in validate_config(config)] == [
        "parallelism: Invalid value: -1: should be an integer value greater than zero",
        "profiles[1].schedulerName: Required value",
        "percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100]",
        "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
    ]
