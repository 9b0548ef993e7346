"""Pod spec validation beyond names and resources, over HTTP: env and envFrom, ports,
volumes and mounts, probes and lifecycle handlers, security contexts, policies, affinity
and topology spread — each refusal a 422 with upstream's field paths and messages, and
nothing stored; and a pod that uses all of it is accepted, through the official client
too."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from apiserver_builders import CONFIG_KEY, LABEL, QNAME, SUBDOMAIN, call

PODS = "/api/v1/namespaces/default/pods"
ENV_NAME = (
    "a valid environment variable name must consist only of printable ASCII characters other "
    "than '='"
)
PORT_RANGE = "must be between 1 and 65535, inclusive"
FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"
C0 = "spec.containers[0]"


def ctr(name="c", image="pause", **fields):
    return {"name": name, "image": image, **fields}


def pod(name="p", containers=None, **spec):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": containers or [ctr()], **spec},
    }


def one(**fields):
    """A pod whose only container has ``fields``."""
    return pod(containers=[ctr(**fields)])


def inv(field, value, detail):
    return ("FieldValueInvalid", field, f"Invalid value: {value}: {detail}")


def req(field, detail=""):
    return ("FieldValueRequired", field, "Required value" + (f": {detail}" if detail else ""))


def forb(field, detail):
    return ("FieldValueForbidden", field, f"Forbidden: {detail}")


def dup(field, value):
    return ("FieldValueDuplicate", field, f"Duplicate value: {value}")


def unsup(field, value, *supported):
    listed = ", ".join(f'"{s}"' for s in supported)
    return (
        "FieldValueNotSupported",
        field,
        f'Unsupported value: "{value}": supported values: {listed}',
    )


def missing(field, value):
    return ("FieldValueNotFound", field, f'Not found: "{value}"')


ENV = f"{C0}.env[0]"
VF = f"{ENV}.valueFrom"
V0 = "spec.volumes[0]"
LP = f"{C0}.livenessProbe"
AA = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
NA = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
TSC = "spec.topologySpreadConstraints"

CASES = [
    # -- env ----------------------------------------------------------------------------
    pytest.param(
        one(env=[{"name": "A=B"}]), [inv(f"{ENV}.name", '"A=B"', ENV_NAME)], id="env-name"
    ),
    pytest.param(one(env=[{"value": "x"}]), [req(f"{ENV}.name")], id="env-name-required"),
    pytest.param(
        one(env=[{"name": "A", "valueFrom": {}}]),
        [
            inv(
                VF,
                '""',
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
                "`secretKeyRef`",
            )
        ],
        id="env-value-from-no-source",
    ),
    pytest.param(
        one(
            env=[
                {
                    "name": "A",
                    "value": "x",
                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                }
            ]
        ),
        [inv(VF, '""', "may not be specified when `value` is not empty")],
        id="env-value-and-value-from",
    ),
    pytest.param(
        one(
            env=[
                {
                    "name": "A",
                    "valueFrom": {
                        "fieldRef": {"fieldPath": "metadata.name"},
                        "secretKeyRef": {"name": "s", "key": "k"},
                    },
                }
            ]
        ),
        [inv(VF, '""', "may not have more than one field specified at a time")],
        id="env-two-sources",
    ),
    pytest.param(
        one(env=[{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "status.phase"}}}]),
        [
            unsup(
                f"{VF}.fieldRef.fieldPath",
                "status.phase",
                "metadata.name",
                "metadata.namespace",
                "metadata.uid",
                "spec.nodeName",
                "spec.serviceAccountName",
                "status.hostIP",
                "status.hostIPs",
                "status.podIP",
                "status.podIPs",
            )
        ],
        id="env-field-ref-not-for-env",
    ),
    pytest.param(
        one(env=[{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.foo"}}}]),
        [
            inv(
                f"{VF}.fieldRef.fieldPath",
                '"spec.foo"',
                "error converting fieldPath: field label not supported: spec.foo",
            )
        ],
        id="env-field-ref-unknown",
    ),
    pytest.param(
        one(env=[{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['-x']"}}}]),
        [inv(f"{VF}.fieldRef", '"-x"', QNAME)],
        id="env-field-ref-label-key",
    ),
    pytest.param(
        one(
            env=[
                {"name": "A", "valueFrom": {"resourceFieldRef": {"resource": "limits.gpu"}}},
                {
                    "name": "B",
                    "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1Ki"}},
                },
            ]
        ),
        [
            unsup(
                f"{VF}.resourceFieldRef.resource",
                "limits.gpu",
                "limits.cpu",
                "limits.ephemeral-storage",
                "limits.memory",
                "requests.cpu",
                "requests.ephemeral-storage",
                "requests.memory",
            ),
            inv(
                f"{C0}.env[1].valueFrom.resourceFieldRef.divisor",
                '"limits.cpu"',
                "only divisor's values 1m and 1 are supported with the cpu resource",
            ),
        ],
        id="env-resource-field-ref",
    ),
    pytest.param(
        one(env=[{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "", "key": "a/b"}}}]),
        [
            inv(f"{VF}.configMapKeyRef.name", '""', SUBDOMAIN),
            inv(f"{VF}.configMapKeyRef.key", '"a/b"', CONFIG_KEY),
        ],
        id="env-config-map-key-ref",
    ),
    pytest.param(
        one(envFrom=[{}]),
        [inv(f"{C0}.envFrom", '""', "must specify one of: `configMapRef` or `secretRef`")],
        id="env-from-no-source",
    ),
    pytest.param(
        one(envFrom=[{"prefix": "A=", "configMapRef": {"name": "Cfg"}}]),
        [
            inv(f"{C0}.envFrom[0].prefix", '"A="', ENV_NAME),
            inv(f"{C0}.envFrom[0].configMapRef.name", '"Cfg"', SUBDOMAIN),
        ],
        id="env-from-prefix-and-name",
    ),
    # -- ports --------------------------------------------------------------------------
    pytest.param(
        one(ports=[{"containerPort": 70000, "protocol": "HTTP", "name": "Web"}]),
        [
            inv(
                f"{C0}.ports[0].name",
                '"Web"',
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
            ),
            inv(f"{C0}.ports[0].containerPort", 70000, PORT_RANGE),
            unsup(f"{C0}.ports[0].protocol", "HTTP", "SCTP", "TCP", "UDP"),
        ],
        id="port-name-number-protocol",
    ),
    pytest.param(
        pod(
            containers=[
                ctr(
                    ports=[
                        {"containerPort": 80, "hostPort": 8080, "name": "web"},
                        {"containerPort": 81, "name": "web"},
                    ]
                ),
                ctr("d", ports=[{"containerPort": 82, "hostPort": 8080}]),
            ]
        ),
        [
            dup(f"{C0}.ports[1].name", '"web"'),
            dup("spec.containers[1].ports[0].hostPort", '"TCP//8080"'),
        ],
        id="port-duplicates",
    ),
    pytest.param(
        pod(hostNetwork=True, containers=[ctr(ports=[{"containerPort": 80, "hostPort": 81}])]),
        [
            inv(
                f"{C0}.ports[0].hostPort",
                81,
                "must match `containerPort` when `hostNetwork` is true",
            )
        ],
        id="port-host-network",
    ),
    # -- volume mounts and volumes -------------------------------------------------------
    pytest.param(
        one(
            volumeMounts=[{"name": "data", "mountPath": "/d"}, {"name": "data", "mountPath": "/d"}]
        ),
        [
            missing(f"{C0}.volumeMounts[0].name", "data"),
            missing(f"{C0}.volumeMounts[1].name", "data"),
            inv(f"{C0}.volumeMounts[1].mountPath", '"/d"', "must be unique"),
        ],
        id="mount-undeclared-volume",
    ),
    pytest.param(
        pod(
            volumes=[{"name": "v", "emptyDir": {}}],
            containers=[ctr(volumeMounts=[{"name": "v", "subPath": "../x"}])],
        ),
        [
            req(f"{C0}.volumeMounts[0].mountPath"),
            inv(f"{C0}.volumeMounts.subPath", '"../x"', "must not contain '..'"),
        ],
        id="mount-path-and-sub-path",
    ),
    pytest.param(
        pod(volumes=[{"name": "v"}]), [req(V0, "must specify a volume type")], id="volume-no-source"
    ),
    pytest.param(
        pod(volumes=[{"name": "v", "emptyDir": {}, "hostPath": {"path": "/x"}}]),
        [forb(f"{V0}.hostPath", "may not specify more than 1 volume type")],
        id="volume-two-sources",
    ),
    pytest.param(
        pod(
            volumes=[
                {"name": "V_1", "emptyDir": {}},
                {"name": "ok", "emptyDir": {}},
                {"name": "ok", "emptyDir": {}},
            ]
        ),
        [inv(f"{V0}.name", '"V_1"', LABEL), dup("spec.volumes[2].name", '"ok"')],
        id="volume-names",
    ),
    pytest.param(
        pod(
            volumes=[
                {"name": "v", "configMap": {"items": [{"key": "k", "path": "/abs", "mode": 512}]}}
            ]
        ),
        [
            req(f"{V0}.configMap.name"),
            inv(f"{V0}.configMap.items[0].path", '"/abs"', "must be a relative path"),
            inv(f"{V0}.configMap.items[0].mode", 512, FILE_MODE),
        ],
        id="volume-config-map",
    ),
    pytest.param(
        pod(
            volumes=[
                {"name": "s", "secret": {}},
                {"name": "h", "hostPath": {"path": "/x", "type": "Dir"}},
                {"name": "c", "persistentVolumeClaim": {}},
                {"name": "e", "emptyDir": {"sizeLimit": "-1Gi"}},
            ]
        ),
        [
            req(f"{V0}.secret.secretName"),
            unsup(
                "spec.volumes[1].hostPath.type",
                "Dir",
                "",
                "BlockDevice",
                "CharDevice",
                "Directory",
                "DirectoryOrCreate",
                "File",
                "FileOrCreate",
                "Socket",
            ),
            req("spec.volumes[2].persistentVolumeClaim.claimName"),
            forb(
                "spec.volumes[3].emptyDir.sizeLimit",
                "SizeLimit field must be a valid resource quantity",
            ),
        ],
        id="volume-secret-host-path-claim-empty-dir",
    ),
    pytest.param(
        pod(
            volumes=[
                {
                    "name": "v",
                    "downwardAPI": {
                        "items": [
                            {"path": "x"},
                            {"path": "y", "fieldRef": {"fieldPath": "status.podIP"}},
                        ]
                    },
                }
            ]
        ),
        [
            req(f"{V0}.downwardAPI", "one of fieldRef and resourceFieldRef is required"),
            unsup(
                f"{V0}.downwardAPI.fieldRef.fieldPath",
                "status.podIP",
                "metadata.annotations",
                "metadata.labels",
                "metadata.name",
                "metadata.namespace",
                "metadata.uid",
            ),
        ],
        id="volume-downward-api",
    ),
    pytest.param(
        pod(
            volumes=[
                {
                    "name": "v",
                    "projected": {
                        "sources": [{"secret": {"name": "s"}, "configMap": {"name": "c"}}]
                    },
                }
            ]
        ),
        [forb(f"{V0}.projected.sources[0]", "may not specify more than 1 volume type per source")],
        id="volume-projected",
    ),
    # -- probes and lifecycle ------------------------------------------------------------
    pytest.param(
        one(livenessProbe={}), [req(LP, "must specify a handler type")], id="probe-no-handler"
    ),
    pytest.param(
        one(
            livenessProbe={
                "exec": {"command": ["true"]},
                "tcpSocket": {"port": 80},
                "successThreshold": 2,
                "periodSeconds": -1,
            }
        ),
        [
            forb(f"{LP}.tcpSocket", "may not specify more than 1 handler type"),
            inv(f"{LP}.periodSeconds", -1, "must be greater than or equal to 0"),
            inv(f"{LP}.successThreshold", 2, "must be 1"),
        ],
        id="probe-liveness-numbers",
    ),
    pytest.param(
        one(
            readinessProbe={
                "httpGet": {"port": "HTTP_PORT", "scheme": "FTP"},
                "terminationGracePeriodSeconds": 5,
            }
        ),
        [
            inv(
                f"{C0}.readinessProbe.httpGet.port",
                '"HTTP_PORT"',
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
            ),
            inv(
                f"{C0}.readinessProbe.httpGet.port",
                '"HTTP_PORT"',
                "must contain at least one letter (a-z)",
            ),
            unsup(f"{C0}.readinessProbe.httpGet.scheme", "FTP", "HTTP", "HTTPS"),
            inv(
                f"{C0}.readinessProbe.terminationGracePeriodSeconds",
                5,
                "must not be set for readinessProbes",
            ),
        ],
        id="probe-readiness-http",
    ),
    pytest.param(
        pod(
            containers=[ctr(restartPolicy="Always")],
            initContainers=[
                ctr("i", readinessProbe={"exec": {"command": ["true"]}}),
                ctr("j", restartPolicy="OnFailure"),
            ],
        ),
        [
            forb(f"{C0}.restartPolicy", "may not be set for non-init containers"),
            forb(
                "spec.initContainers[0].readinessProbe",
                "may not be set for init containers without restartPolicy=Always",
            ),
            unsup("spec.initContainers[1].restartPolicy", "OnFailure", "Always"),
        ],
        id="container-restart-policies",
    ),
    pytest.param(
        one(lifecycle={"preStop": {"sleep": {"seconds": 40}}}),
        [
            inv(
                f"{C0}.lifecycle.preStop.sleep",
                40,
                "must be non-negative and less than terminationGracePeriodSeconds (30)",
            )
        ],
        id="lifecycle-sleep",
    ),
    # -- security contexts ---------------------------------------------------------------
    pytest.param(
        one(securityContext={"runAsUser": -1, "procMount": "Unmasked"}),
        [
            inv(
                f"{C0}.securityContext.runAsUser", -1, "must be between 0 and 2147483647, inclusive"
            ),
            inv(
                f"{C0}.securityContext.procMount",
                '"Unmasked"',
                "`hostUsers` must be false to use `Unmasked`",
            ),
        ],
        id="container-security-context",
    ),
    pytest.param(
        pod(securityContext={"fsGroup": -5, "seccompProfile": {"type": "Localhost"}}),
        [
            inv("spec.securityContext.fsGroup", -5, "must be between 0 and 2147483647, inclusive"),
            req(
                "spec.securityContext.seccompProfile.localhostProfile",
                "must be set when seccomp type is Localhost",
            ),
        ],
        id="pod-security-context",
    ),
    pytest.param(
        pod(
            hostNetwork=True,
            securityContext={"sysctls": [{"name": "net.core.somaxconn", "value": "1"}]},
        ),
        [
            inv(
                "spec.securityContext.sysctls[0].name",
                '"net.core.somaxconn"',
                "may not be specified when 'hostNetwork' is true",
            )
        ],
        id="pod-sysctl-host-network",
    ),
    # -- policies ------------------------------------------------------------------------
    pytest.param(
        pod(
            restartPolicy="Sometimes",
            dnsPolicy="Google",
            containers=[ctr(terminationMessagePolicy="Log", imagePullPolicy="Maybe")],
        ),
        [
            unsup(f"{C0}.terminationMessagePolicy", "Log", "File", "FallbackToLogsOnError"),
            unsup(f"{C0}.imagePullPolicy", "Maybe", "Always", "IfNotPresent", "Never"),
            unsup("spec.restartPolicy", "Sometimes", "Always", "OnFailure", "Never"),
            unsup(
                "spec.dnsPolicy",
                "Google",
                "ClusterFirstWithHostNet",
                "ClusterFirst",
                "Default",
                "None",
            ),
        ],
        id="policies",
    ),
    pytest.param(
        pod(dnsPolicy="None"),
        [req("spec.dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None")],
        id="dns-none-without-config",
    ),
    pytest.param(
        pod(dnsConfig={"searches": ["ok.example.", "_sip._tcp.example", ".", "Bad.example"]}),
        [
            inv(
                "spec.dnsConfig.searches[3]",
                '"Bad.example"',
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '_', '-' or '.', and must start and end with an alphanumeric "
                "character (e.g. 'example.com', regex used for validation is "
                "'_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')",
            )
        ],
        id="dns-searches",
    ),
    pytest.param(
        one(resources={"requests": {"cpus": "1"}}),
        [
            inv(
                f"{C0}.resources.requests[cpus]",
                '"cpus"',
                "must be a standard resource for containers",
            )
        ],
        id="resource-name",
    ),
    pytest.param(
        one(image="pause "),
        [inv(f"{C0}.image", '"pause "', "must not have leading or trailing whitespace")],
        id="image-whitespace",
    ),
    pytest.param(
        pod(nodeName="n1", schedulingGates=[{"name": "example.com/gate"}]),
        [forb("spec.nodeName", "cannot be set until all schedulingGates have been cleared")],
        id="node-name-with-gates",
    ),
    # -- affinity and topology spread ----------------------------------------------------
    pytest.param(
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                }
            }
        ),
        [req(f"{NA}.nodeSelectorTerms", "must have at least one node selector term")],
        id="node-affinity-no-terms",
    ),
    pytest.param(
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "k", "operator": "Gt", "values": ["1", "2"]},
                                    {"key": "k", "operator": "In"},
                                ],
                                "matchFields": [
                                    {"key": "metadata.uid", "operator": "In", "values": ["a"]}
                                ],
                            }
                        ]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 101,
                            "preference": {
                                "matchExpressions": [{"key": "k", "operator": "Exists"}]
                            },
                        }
                    ],
                }
            }
        ),
        [
            req(
                f"{NA}.nodeSelectorTerms[0].matchExpressions[0].values",
                "must be specified single value when `operator` is 'Lt' or 'Gt'",
            ),
            req(
                f"{NA}.nodeSelectorTerms[0].matchExpressions[1].values",
                "must be specified when `operator` is 'In' or 'NotIn'",
            ),
            inv(
                f"{NA}.nodeSelectorTerms[0].matchFields[0].key",
                '"metadata.uid"',
                "not a valid field selector key",
            ),
            inv(
                "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
                101,
                "must be in the range 1-100",
            ),
        ],
        id="node-affinity-terms",
    ),
    pytest.param(
        pod(
            affinity={
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {
                                "matchExpressions": [{"key": "app", "operator": "Is"}]
                            },
                            "namespaces": ["Bad_NS"],
                        }
                    ]
                }
            }
        ),
        [
            inv(
                f"{AA}.labelSelector.matchExpressions[0].operator",
                '"Is"',
                "not a valid selector operator",
            ),
            inv(f"{AA}.namespace", '"Bad_NS"', LABEL),
            req(f"{AA}.topologyKey", "can not be empty"),
            inv(f"{AA}.topologyKey", '""', "name part must be non-empty"),
            inv(f"{AA}.topologyKey", '""', QNAME),
        ],
        id="pod-anti-affinity-term",
    ),
    pytest.param(
        pod(
            affinity={
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 0,
                            "podAffinityTerm": {
                                "topologyKey": "zone",
                                "matchLabelKeys": ["app"],
                                "mismatchLabelKeys": ["app"],
                            },
                        }
                    ]
                }
            }
        ),
        [
            inv(
                "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
                0,
                "must be in the range 1-100",
            ),
            forb(
                "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
                ".podAffinityTerm.matchLabelKeys",
                "must not be specified when labelSelector is not set",
            ),
            forb(
                "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
                ".podAffinityTerm.mismatchLabelKeys",
                "must not be specified when labelSelector is not set",
            ),
            inv(
                "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
                ".podAffinityTerm.matchLabelKeys[0]",
                '"app"',
                "exists in both matchLabelKeys and mismatchLabelKeys",
            ),
        ],
        id="pod-affinity-label-keys",
    ),
    pytest.param(
        pod(
            topologySpreadConstraints=[
                {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Never"}
            ]
        ),
        [
            inv(f"{TSC}[0].maxSkew", 0, "must be greater than zero"),
            req(f"{TSC}[0].topologyKey", "can not be empty"),
            unsup(f"{TSC}[0].whenUnsatisfiable", "Never", "DoNotSchedule", "ScheduleAnyway"),
        ],
        id="spread-fields",
    ),
    pytest.param(
        pod(
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "minDomains": 2,
                },
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "matchLabelKeys": ["app"],
                    "labelSelector": {"matchLabels": {"app": "web"}},
                },
            ]
        ),
        [
            dup(f"{TSC}[0].{{topologyKey, whenUnsatisfiable}}", '"{zone, ScheduleAnyway}"'),
            inv(
                f"{TSC}[0].minDomains",
                2,
                "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
            ),
            inv(
                f"{TSC}[1].matchLabelKeys[0]",
                '"app"',
                "exists in both matchLabelKeys and labelSelector",
            ),
        ],
        id="spread-duplicate-min-domains-label-keys",
    ),
]


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_invalid_pod_spec_is_422_with_upstream_causes(apiserver, body, expected):
    code, status = call(apiserver, "POST", PODS, body)
    assert (code, status.get("reason")) == (422, "Invalid"), status
    causes = [(c["reason"], c["field"], c["message"]) for c in status["details"]["causes"]]
    assert causes == expected
    summary = [f"{field}: {message}" for _, field, message in expected]
    text = summary[0] if len(summary) == 1 else "[" + ", ".join(summary) + "]"
    assert status["message"] == f'Pod "p" is invalid: {text}'
    assert call(apiserver, "GET", f"{PODS}/p")[0] == 404


def rich_spec():
    """A pod spec that uses every part validated above, correctly."""
    return {
        "initContainers": [
            {
                "name": "sidecar",
                "image": "proxy",
                "restartPolicy": "Always",
                "startupProbe": {"tcpSocket": {"port": 15000}, "failureThreshold": 30},
            }
        ],
        "containers": [
            {
                "name": "web",
                "image": "nginx:1.27",
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePolicy": "FallbackToLogsOnError",
                "ports": [
                    {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                    {"name": "metrics", "containerPort": 9090, "hostPort": 9090},
                ],
                "env": [
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {
                        "name": "APP",
                        "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}},
                    },
                    {
                        "name": "MEM_MI",
                        "valueFrom": {
                            "resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}
                        },
                    },
                    {
                        "name": "MODE",
                        "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "mode"}},
                    },
                    {"name": "my.env-name 1", "value": "relaxed names are fine"},
                ],
                "envFrom": [
                    {"prefix": "CFG_", "configMapRef": {"name": "cfg"}},
                    {"secretRef": {"name": "sec"}},
                ],
                "resources": {
                    "requests": {"cpu": "100m", "memory": "64Mi"},
                    "limits": {"memory": "128Mi"},
                },
                "volumeMounts": [
                    {"name": "scratch", "mountPath": "/tmp"},
                    {"name": "config", "mountPath": "/etc/app", "readOnly": True},
                    {"name": "all", "mountPath": "/var/run/all", "subPath": "nested/dir"},
                ],
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": "http"},
                    "periodSeconds": 5,
                },
                "readinessProbe": {
                    "exec": {"command": ["cat", "/tmp/ready"]},
                    "successThreshold": 2,
                },
                "lifecycle": {"preStop": {"sleep": {"seconds": 5}}},
                "securityContext": {
                    "runAsUser": 1000,
                    "runAsGroup": 1000,
                    "allowPrivilegeEscalation": False,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
            }
        ],
        "volumes": [
            {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
            {
                "name": "config",
                "configMap": {"name": "cfg", "items": [{"key": "a", "path": "a.conf"}]},
            },
            {
                "name": "all",
                "projected": {
                    "sources": [
                        {"secret": {"name": "sec", "items": [{"key": "k", "path": "secret/k"}]}},
                        {
                            "downwardAPI": {
                                "items": [
                                    {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}
                                ]
                            }
                        },
                        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                    ]
                },
            },
            {"name": "claim", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "host", "hostPath": {"path": "/var/log", "type": "Directory"}},
        ],
        "securityContext": {
            "fsGroup": 2000,
            "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}],
        },
        "dnsPolicy": "None",
        "dnsConfig": {"nameservers": ["10.0.0.10"], "options": [{"name": "ndots", "value": "2"}]},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "cores", "operator": "Gt", "values": ["4"]}
                            ],
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["n1"]}
                            ],
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]},
                    }
                ],
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "podAffinityTerm": {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app": "web"}},
                            "matchLabelKeys": ["pod-template-hash"],
                            "namespaces": ["default"],
                        },
                    }
                ]
            },
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "minDomains": 2,
                "nodeTaintsPolicy": "Honor",
                "labelSelector": {"matchLabels": {"app": "web"}},
                "matchLabelKeys": ["pod-template-hash"],
            }
        ],
        "restartPolicy": "Always",
        "serviceAccountName": "default",
        "readinessGates": [{"conditionType": "example.com/ready"}],
    }


def test_a_pod_using_every_validated_field_is_accepted(apiserver):
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "rich", "labels": {"app": "web"}},
        "spec": rich_spec(),
    }
    code, created = call(apiserver, "POST", PODS, body)
    assert code == 201, created
    assert created["spec"]["containers"][0]["env"][4]["name"] == "my.env-name 1"
    assert call(apiserver, "DELETE", f"{PODS}/rich?gracePeriodSeconds=0")[0] == 200


def test_official_client_pods_pass_and_fail_as_upstream(apiserver):
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    api = client.CoreV1Api(config.new_client_from_config(str(apiserver.kubeconfig_path)))
    # The client's typed models, serialized as it sends them, are valid bodies.
    model = api.api_client._ApiClient__deserialize(
        {"metadata": {"name": "typed", "labels": {"app": "web"}}, "spec": rich_spec()}, "V1Pod"
    )
    created = api.create_namespaced_pod("default", model)
    assert created.spec.containers[0].liveness_probe.http_get.port == "http"
    api.delete_namespaced_pod("typed", "default", grace_period_seconds=0)
    bad = client.V1Pod(
        metadata=client.V1ObjectMeta(name="typed-bad"),
        spec=client.V1PodSpec(
            containers=[
                client.V1Container(
                    name="c",
                    image="pause",
                    volume_mounts=[client.V1VolumeMount(name="nowhere", mount_path="/x")],
                )
            ]
        ),
    )
    with pytest.raises(ApiException) as caught:
        api.create_namespaced_pod("default", bad)
    assert caught.value.status == 422
    status = json.loads(caught.value.body)
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueNotFound",
            "message": 'Not found: "nowhere"',
            "field": "spec.containers[0].volumeMounts[0].name",
        }
    ]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_lists_every_spec_error(apiserver):
    body = one(env=[{"name": "A=B"}], ports=[{"containerPort": 0}])
    result = subprocess.run(
        ["kubectl", "--kubeconfig", str(apiserver.kubeconfig_path), "create", "-f", "-"],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode != 0
    assert result.stderr.strip() == (
        'The Pod "p" is invalid: \n'
        f"* {C0}.ports[0].containerPort: Required value\n"
        f'* {C0}.env[0].name: Invalid value: "A=B": {ENV_NAME}'
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            one(ports=[{"containerPort": "80"}]),
            "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers."
            "ports.containerPort of type int32",
            id="container-port-string",
        ),
        pytest.param(
            one(livenessProbe={"exec": {"command": ["x"]}, "periodSeconds": "5"}),
            "json: cannot unmarshal string into Go struct field Probe.spec.containers."
            "livenessProbe.periodSeconds of type int32",
            id="probe-period-string",
        ),
        pytest.param(
            {"metadata": {"name": "p"}, "spec": {"restartPolicy": 5, "nodeName": 1}},
            "json: cannot unmarshal number into Go struct field PodSpec.spec.restartPolicy of "
            "type string",
            id="first-wrong-type-in-body-order",
        ),
        pytest.param(
            pod(securityContext={"runAsUser": "root"}),
            "json: cannot unmarshal string into Go struct field PodSecurityContext.spec."
            "securityContext.runAsUser of type int64",
            id="run-as-user-string",
        ),
    ],
)
def test_wrong_json_types_in_spec_fields_are_decode_errors(apiserver, body, message):
    code, status = call(apiserver, "POST", PODS, body)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == f'Pod in version "v1" cannot be handled as a Pod: {message}'
