"""Upstream's SetDefaults_* for pod templates and workloads, as pure functions."""

from __future__ import annotations

import pytest

from kubesched.objects.defaults_workloads import (
    default_container,
    default_job,
    default_pod_spec,
    default_secret,
)


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        pytest.param("nginx", "Always", id="no-tag-means-latest"),
        pytest.param("nginx:latest", "Always", id="latest-tag"),
        pytest.param("nginx:1.27", "IfNotPresent", id="a-tag"),
        pytest.param("registry:5000/team/nginx", "Always", id="a-registry-port-is-no-tag"),
        pytest.param("registry:5000/nginx:1.2", "IfNotPresent", id="registry-port-and-tag"),
        pytest.param("nginx@sha256:" + "a" * 64, "IfNotPresent", id="a-digest"),
    ],
)
def test_image_pull_policy_follows_the_tag(image, policy):
    container = {"name": "c", "image": image}
    default_container(container)
    assert container["imagePullPolicy"] == policy


def test_container_ports_probes_and_field_refs_are_defaulted():
    container = {
        "name": "c",
        "image": "nginx:1",
        "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
        "readinessProbe": {"httpGet": {"port": 80}},
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
    }
    default_container(container)
    assert [p["protocol"] for p in container["ports"]] == ["TCP", "UDP"]
    assert container["readinessProbe"] == {
        "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"


def test_pod_spec_defaults_keep_what_is_set():
    spec = {
        "restartPolicy": "Never",
        "containers": [],
        "volumes": [
            {"name": "scratch"},
            {"name": "cfg", "configMap": {"name": "x"}},
            {"name": "h", "hostPath": {"path": "/x"}},
        ],
    }
    default_pod_spec(spec)
    assert spec["restartPolicy"] == "Never"
    assert (spec["dnsPolicy"], spec["schedulerName"]) == ("ClusterFirst", "default-scheduler")
    assert spec["volumes"] == [
        {"name": "scratch", "emptyDir": {}},
        {"name": "cfg", "configMap": {"name": "x", "defaultMode": 0o644}},
        {"name": "h", "hostPath": {"path": "/x", "type": ""}},
    ]


def test_job_labels_come_from_its_template_only_when_it_has_none():
    labelled = {
        "metadata": {"labels": {"own": "1"}},
        "spec": {"template": {"metadata": {"labels": {"t": "1"}}}},
    }
    default_job(labelled)
    assert labelled["metadata"]["labels"] == {"own": "1"}
    bare = {"metadata": {}, "spec": {"template": {"metadata": {"labels": {"t": "1"}}}}}
    default_job(bare)
    assert bare["metadata"]["labels"] == {"t": "1"}


def test_secret_type_and_string_data():
    secret = {"stringData": {"k": "v"}}
    default_secret(secret)
    assert secret == {"type": "Opaque", "data": {"k": "dg=="}}
