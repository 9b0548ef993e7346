"""parse_config: strict decoding and defaulting (cases after upstream's defaults_test.go)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubesched.config import (
    API_VERSION,
    KIND,
    ClientConnection,
    Extender,
    KubeSchedulerConfiguration,
    LeaderElection,
    PluginConfig,
    PluginRef,
    PluginSet,
    Profile,
    default_config,
    default_plugins,
    parse_config,
)

DEFAULT = default_config()
DEFAULT_PROFILE = DEFAULT.profiles[0]


def doc(**fields: Any) -> dict[str, Any]:
    """A v1 document with ``fields`` (apiVersion and kind filled in)."""
    return {"apiVersion": API_VERSION, "kind": KIND, **fields}


def expect(**changes: Any) -> KubeSchedulerConfiguration:
    return dataclasses.replace(DEFAULT, **changes)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(doc(), DEFAULT, id="an empty configuration gets every default"),
        pytest.param(
            doc(profiles=[{}]), DEFAULT, id="a lone profile without a name is default-scheduler"
        ),
        pytest.param(doc(parallelism=8), expect(parallelism=8), id="a parallelism is kept"),
        pytest.param(
            doc(delayCacheUntilActive=True),
            expect(delay_cache_until_active=True),
            id="delayCacheUntilActive is kept",
        ),
        pytest.param(
            doc(percentageOfNodesToScore=50),
            expect(percentage_of_nodes_to_score=50),
            id="a global percentageOfNodesToScore is kept",
        ),
        pytest.param(
            doc(percentageOfNodesToScore=0),
            expect(percentage_of_nodes_to_score=0),
            id="an explicit zero percentage stays zero (adaptive)",
        ),
        pytest.param(
            doc(profiles=[{"percentageOfNodesToScore": 50}]),
            expect(
                profiles=(dataclasses.replace(DEFAULT_PROFILE, percentage_of_nodes_to_score=50),)
            ),
            id="a profile percentageOfNodesToScore is kept",
        ),
        pytest.param(
            doc(podInitialBackoffSeconds=2, podMaxBackoffSeconds=20),
            expect(pod_initial_backoff_seconds=2, pod_max_backoff_seconds=20),
            id="backoffs are kept",
        ),
        pytest.param(
            doc(leaderElection={"leaderElect": False, "resourceName": "mine"}),
            expect(leader_election=LeaderElection(leader_elect=False, resource_name="mine")),
            id="leader election overrides keep the other defaults",
        ),
        pytest.param(
            doc(
                leaderElection={
                    "leaseDuration": "1m30s",
                    "renewDeadline": "1m",
                    "retryPeriod": "500ms",
                }
            ),
            expect(
                leader_election=LeaderElection(
                    lease_duration_seconds=90, renew_deadline_seconds=60, retry_period_seconds=0.5
                )
            ),
            id="leader election durations are Go durations",
        ),
        pytest.param(
            doc(
                leaderElection={"leaseDuration": "0s", "resourceLock": "", "resourceNamespace": ""}
            ),
            DEFAULT,
            id="zero durations and empty names mean the defaults",
        ),
        pytest.param(
            doc(clientConnection={"kubeconfig": "k", "qps": 0, "burst": 0}),
            expect(client_connection=ClientConnection(kubeconfig="k")),
            id="client connection zero values mean the defaults",
        ),
        pytest.param(
            doc(clientConnection={"qps": 12.5, "burst": 20, "contentType": "application/json"}),
            expect(
                client_connection=ClientConnection(
                    qps=12.5, burst=20, content_type="application/json"
                )
            ),
            id="client connection values are kept",
        ),
        pytest.param(
            doc(extenders=[{"urlPrefix": "http://e", "filterVerb": "filter"}]),
            expect(extenders=(Extender(url_prefix="http://e", filter_verb="filter"),)),
            id="an extender gets the 5s http timeout",
        ),
        pytest.param(
            doc(extenders=[{"urlPrefix": "http://e", "httpTimeout": "1m30s"}]),
            expect(extenders=(Extender(url_prefix="http://e", http_timeout_seconds=90),)),
            id="an extender http timeout is a Go duration",
        ),
        pytest.param(
            doc(enableProfiling=False, enableContentionProfiling=False),
            DEFAULT,
            id="profiling switches are accepted and ignored",
        ),
        pytest.param(
            doc(profiles=[{"schedulerName": "2024-01-01"}]),
            expect(profiles=(dataclasses.replace(DEFAULT_PROFILE, scheduler_name="2024-01-01"),)),
            id="a date-like name stays a string",
        ),
    ],
)
def test_defaulting(data: dict[str, Any], expected: KubeSchedulerConfiguration) -> None:
    config, errors = parse_config(data)
    assert errors == []
    assert config == expected


def test_two_profiles_are_defaulted_but_only_a_lone_one_is_named() -> None:
    config, errors = parse_config(
        doc(
            profiles=[
                {"pluginConfig": [{"name": "FooPlugin"}]},
                {
                    "schedulerName": "custom-scheduler",
                    "plugins": {
                        "bind": {
                            "enabled": [{"name": "BarPlugin"}],
                            "disabled": [{"name": "DefaultBinder"}],
                        }
                    },
                },
            ]
        )
    )
    assert config.profiles == (
        Profile(
            scheduler_name="",
            plugins=default_plugins(),
            plugin_config=(PluginConfig("FooPlugin", {}, "profiles[0].pluginConfig[0].args"),),
            path="profiles[0]",
        ),
        Profile(
            scheduler_name="custom-scheduler",
            plugins=dataclasses.replace(
                default_plugins(),
                bind=PluginSet((PluginRef("BarPlugin"),), (PluginRef("DefaultBinder"),)),
            ),
            path="profiles[1]",
        ),
    )
    assert [str(e) for e in errors] == ["profiles[0].schedulerName: Required value"]


def test_custom_multipoint_plugins_merge_with_the_defaults() -> None:
    config, errors = parse_config(
        doc(
            profiles=[
                {
                    "plugins": {
                        "multiPoint": {
                            "enabled": [
                                {"name": "NodeResourcesFit", "weight": 5},
                                {"name": "Extra"},
                            ],
                            "disabled": [{"name": "ImageLocality"}],
                        }
                    }
                }
            ]
        )
    )
    assert errors == []
    enabled = config.profiles[0].plugins.multi_point.enabled
    names = [p.name for p in enabled]
    assert "ImageLocality" not in names
    assert names[-1] == "Extra"
    assert enabled[names.index("NodeResourcesFit")] == PluginRef("NodeResourcesFit", 5)
    assert names.index("NodeResourcesFit") == 7


def test_plugin_args_keep_their_path_and_lose_their_type_meta() -> None:
    args = {
        "apiVersion": API_VERSION,
        "kind": "PodTopologySpreadArgs",
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 0}],
    }
    config, errors = parse_config(
        doc(
            profiles=[
                {},
                {
                    "schedulerName": "b",
                    "pluginConfig": [{"name": "PodTopologySpread", "args": args}],
                },
            ]
        )
    )
    assert [str(e) for e in errors] == ["profiles[0].schedulerName: Required value"]
    plugin_config = config.profiles[1].plugin_args("PodTopologySpread")
    assert plugin_config is not None
    assert plugin_config.path == "profiles[1].pluginConfig[0].args"
    assert dict(plugin_config.args) == {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 0}],
    }


def test_tls_data_is_base64_decoded() -> None:
    config, errors = parse_config(
        doc(
            extenders=[
                {"urlPrefix": "https://e", "tlsConfig": {"caData": "cGVt", "insecure": True}}
            ]
        )
    )
    assert errors == []
    tls = config.extenders[0].tls_config
    assert tls is not None
    assert (tls.ca_data, tls.insecure) == (b"pem", True)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            {},
            ["apiVersion: Required value", "kind: Required value"],
            id="a document without type meta",
        ),
        pytest.param(
            {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "Pod"},
            [
                'apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": '
                'supported values: "kubescheduler.config.k8s.io/v1"',
                'kind: Unsupported value: "Pod": supported values: "KubeSchedulerConfiguration"',
            ],
            id="another version and kind",
        ),
        pytest.param(
            [1, 2],
            [
                'Invalid value: "array": must be of type object',
                "apiVersion: Required value",
                "kind: Required value",
            ],
            id="a document that is not an object",
        ),
        pytest.param(doc(foo=1), ['unknown field "foo"'], id="an unknown top-level field"),
        pytest.param(
            doc(profiles=[{"plugins": {"score": {"enabled": [{"name": "A", "wieght": 2}]}}}]),
            ['profiles[0].plugins.score.enabled[0]: unknown field "wieght"'],
            id="an unknown field deep inside",
        ),
        pytest.param(
            doc(profiles=[{"plugins": {"placementScore": {}}}]),
            ['profiles[0].plugins: unknown field "placementScore"'],
            id="an extension point v1 does not have",
        ),
        pytest.param(
            doc(parallelism="8"),
            ['parallelism: Invalid value: "8": must be of type integer'],
            id="a string where an integer belongs",
        ),
        pytest.param(
            doc(parallelism=1.5),
            ["parallelism: Invalid value: 1.5: must be of type integer"],
            id="a fraction where an integer belongs",
        ),
        pytest.param(
            doc(parallelism=True),
            ["parallelism: Invalid value: true: must be of type integer"],
            id="a boolean where an integer belongs",
        ),
        pytest.param(
            doc(leaderElection={"leaderElect": "yes"}),
            ['leaderElection.leaderElect: Invalid value: "yes": must be of type boolean'],
            id="a string where a boolean belongs",
        ),
        pytest.param(
            doc(profiles={"schedulerName": "a"}),
            ['profiles: Invalid value: "object": must be of type array'],
            id="an object where a list belongs",
        ),
        pytest.param(
            doc(
                profiles=[
                    {"plugins": {"score": {"enabled": [{"name": "A", "weight": 3000000000}]}}}
                ]
            ),
            [
                "profiles[0].plugins.score.enabled[0].weight: Invalid value: 3000000000: "
                "must be between -2147483648 and 2147483647"
            ],
            id="a weight beyond int32",
        ),
        pytest.param(
            doc(leaderElection={"leaseDuration": 15}),
            [
                "leaderElection.leaseDuration: Invalid value: 15: "
                'must be a duration string like "5s", "500ms" or "1m30s"'
            ],
            id="a number where a duration belongs",
        ),
        pytest.param(
            doc(profiles=[{"pluginConfig": [{"name": "A", "args": [1]}]}]),
            ['profiles[0].pluginConfig[0].args: Invalid value: "array": must be of type object'],
            id="plugin args that are not an object",
        ),
        pytest.param(
            doc(
                profiles=[
                    {
                        "pluginConfig": [
                            {"name": "PodTopologySpread", "args": {"kind": "NodeAffinityArgs"}}
                        ]
                    }
                ]
            ),
            [
                'profiles[0].pluginConfig[0].args.kind: Invalid value: "NodeAffinityArgs": '
                'must be "PodTopologySpreadArgs", the kind of the arguments of PodTopologySpread'
            ],
            id="plugin args of another plugin's kind",
        ),
        pytest.param(
            doc(extenders=[{"tlsConfig": {"keyData": "not base64!"}}]),
            ["extenders[0].tlsConfig.keyData: invalid base64 data"],
            id="TLS data that is not base64 is reported without the secret",
        ),
    ],
)
def test_decoding_errors(data: object, expected: list[str]) -> None:
    _, errors = parse_config(data)
    assert [str(e) for e in errors] == expected


def test_integral_floats_pass_as_integers() -> None:
    config, errors = parse_config(doc(parallelism=4.0))
    assert errors == []
    assert config.parallelism == 4


def test_decoding_goes_on_after_errors_and_returns_a_best_effort_config() -> None:
    config, errors = parse_config(doc(parallelism="x", podMaxBackoffSeconds=30, bogus=True))
    assert len(errors) == 2
    assert config.parallelism == 16
    assert config.pod_max_backoff_seconds == 30
