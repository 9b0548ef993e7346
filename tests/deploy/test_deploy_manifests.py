"""Shared by the deploy tests: render the overlays, and check objects against the
Kubernetes OpenAPI schemas of the release we follow (1.34)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
OVERLAYS = sorted(p.name for p in (DEPLOY / "overlays").iterdir() if p.is_dir())
BASES = sorted(p.name for p in (DEPLOY / "base").iterdir() if p.is_dir())


def render(path: Path) -> list[dict[str, Any]]:
    """``kubectl kustomize path`` as a list of objects; skip when kubectl is missing."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: cannot render the kustomize overlays")
    out = subprocess.run(
        [kubectl, "kustomize", str(path)], capture_output=True, text=True, check=True
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


#: The Kubernetes release whose OpenAPI schemas the manifests must satisfy.
KUBERNETES_VERSION = "1.34.0"


def validate(obj: dict[str, Any]) -> list[str]:
    """Schema errors of one object against the Kubernetes 1.34 OpenAPI schemas, strict:
    unknown fields are errors too (``kubernetes-validate``, JSON Schema underneath)."""
    import kubernetes_validate

    where = f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"
    try:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as err:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        return [f"{where}{path}: {err.message}"]
    except kubernetes_validate.SchemaNotFoundError as err:
        return [f"{where}: no schema for {obj.get('apiVersion')} {obj.get('kind')}: {err}"]
    return []


# --- every base and overlay renders and validates ------------------------------------


@pytest.mark.parametrize("path", [f"base/{b}" for b in BASES] + [f"overlays/{o}" for o in OVERLAYS])
def test_renders_and_validates_against_openapi_schemas(path: str) -> None:
    objects = render(DEPLOY / path)
    assert objects
    for obj in objects:
        assert validate(obj) == []


def test_the_validator_catches_unknown_and_missing_fields() -> None:
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    pod["spec"] = {}
    assert validate(pod) == ["Pod/p.spec: 'containers' is a required property"]
    pod["spec"] = {"containers": [{"name": "c", "imagePullPolicyy": "Always"}]}
    assert validate(pod) == [
        "Pod/p.spec.containers[0]: Additional properties are not allowed "
        "('imagePullPolicyy' was unexpected)"
    ]
    pod["spec"] = {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}
    assert validate(pod) == [
        "Pod/p.spec.containers[0].ports[0].containerPort: '80' is not of type 'integer'"
    ]
    assert "no schema" in validate({"apiVersion": "v1", "kind": "Bogus", "metadata": {}})[0]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_deployments_are_hardened(overlay: str) -> None:
    for obj in render(DEPLOY / "overlays" / overlay):
        if obj["kind"] != "Deployment":
            continue
        spec = obj["spec"]["template"]["spec"]
        assert obj["spec"]["replicas"] == 2
        assert spec["securityContext"]["runAsNonRoot"] is True
        for container in spec["containers"]:
            security = container["securityContext"]
            assert security["capabilities"]["drop"] == ["ALL"]
            assert security["readOnlyRootFilesystem"] is True
            assert security["allowPrivilegeEscalation"] is False
            if container["name"] == "kube-scheduler":  # the managed cluster's second one
                assert container["image"].startswith("registry.k8s.io/kube-scheduler:v1.34.")
            else:
                assert container["image"] == "ghcr.io/example/kubesched:0.1.0"
            assert {"cpu", "memory"} <= set(container["resources"]["requests"])
            assert {"cpu", "memory"} <= set(container["resources"]["limits"])
            assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
            assert container["readinessProbe"]["httpGet"]["path"] in ("/readyz", "/healthz")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_configmaps_hold_valid_scheduler_configurations(overlay: str) -> None:
    from kubesched.config.load import loads_config

    objects = render(DEPLOY / "overlays" / overlay)
    maps = [o for o in objects if o["kind"] == "ConfigMap"]
    assert maps
    for config_map in maps:
        loads_config(config_map["data"]["config.yaml"])  # raises on any problem
    # The Deployment mounts the generated (hashed) ConfigMap.
    names = {m["metadata"]["name"] for m in maps}
    for obj in objects:
        if obj["kind"] == "Deployment":
            volumes = obj["spec"]["template"]["spec"]["volumes"]
            assert {v["configMap"]["name"] for v in volumes if "configMap" in v} <= names


@pytest.mark.parametrize("overlay", ["beside-kube-scheduler", "only-scheduler"])
def test_the_lease_role_matches_the_configured_lock(overlay: str) -> None:
    from kubesched.config.load import loads_config

    objects = render(DEPLOY / "overlays" / overlay)
    (config_map,) = [o for o in objects if o["kind"] == "ConfigMap"]
    election = loads_config(config_map["data"]["config.yaml"]).leader_election
    assert election.leader_elect
    (role,) = [o for o in objects if o["kind"] == "Role"]
    assert role["metadata"]["namespace"] == election.resource_namespace
    named = [r for r in role["rules"] if r.get("resourceNames")]
    assert [r["resourceNames"] for r in named] == [[election.resource_name]]
