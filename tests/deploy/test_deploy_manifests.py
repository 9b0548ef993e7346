"""Shared by the deploy tests: render the overlays, and check objects against the
Kubernetes OpenAPI schemas that the ``kubernetes`` client's models were generated from."""

from __future__ import annotations

import re
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


_LIST = re.compile(r"^[Ll]ist\[(.+)\]$")
_DICT = re.compile(r"^(?:dict\(str, |Dict\[str, )(.+)[)\]]$")
_PRIMITIVES: dict[str, type | tuple[type, ...]] = {
    "str": str,
    "int": int,
    "bool": bool,
    "float": (int, float),
}


def model_for(obj: dict[str, Any]) -> str:
    """The model name of a top-level object: ``apps/v1`` ``Deployment`` is V1Deployment."""
    version = str(obj["apiVersion"]).rsplit("/", 1)[-1]
    return f"{version[0].upper()}{version[1:]}{obj['kind']}"


def schema_errors(value: object, type_name: str, where: str = "") -> list[str]:
    """Every unknown field, wrong type and missing required field in ``value``."""
    import kubernetes.client.models as models

    if match := _LIST.match(type_name):
        if not isinstance(value, list):
            return [f"{where}: expected a list"]
        return [e for i, v in enumerate(value) for e in schema_errors(v, match[1], f"{where}[{i}]")]
    if match := _DICT.match(type_name):
        if not isinstance(value, dict):
            return [f"{where}: expected a map"]
        return [e for k, v in value.items() for e in schema_errors(v, match[1], f"{where}.{k}")]
    if type_name == "object":  # IntOrString, Quantity, RawExtension...
        return []
    if type_name == "datetime":
        return [] if isinstance(value, str) else [f"{where}: expected a timestamp"]
    if type_name in _PRIMITIVES:
        ok = isinstance(value, _PRIMITIVES[type_name]) and not (
            type_name != "bool" and isinstance(value, bool)
        )
        return [] if ok else [f"{where}: expected {type_name}, got {value!r}"]
    model = getattr(models, type_name, None)
    if model is None:
        return [f"{where}: no schema {type_name}"]
    if not isinstance(value, dict):
        return [f"{where}: expected an object ({type_name})"]
    by_json = {json: attr for attr, json in model.attribute_map.items()}
    errors = [f"{where}.{k}: unknown field of {type_name}" for k in value if k not in by_json]
    for key, item in value.items():
        if key in by_json:
            errors += schema_errors(item, model.openapi_types[by_json[key]], f"{where}.{key}")
    return errors


def validate(obj: dict[str, Any]) -> list[str]:
    """Unknown fields (walked here), then types and required fields (the pydantic model
    decodes strictly; it ignores unknown fields, hence the walk)."""
    import kubernetes.client.models as models

    name = model_for(obj)
    where = f"{obj['kind']}/{obj['metadata']['name']}"
    errors = schema_errors(obj, name, where)
    try:
        getattr(models, name).from_dict(obj)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        errors.append(f"{where}: {exc}")
    return errors


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
    assert "containers" in " ".join(validate(pod))
    pod["spec"] = {"containers": [{"name": "c", "imagePullPolicyy": "Always"}]}
    assert validate(pod) == [
        "Pod/p.spec.containers[0].imagePullPolicyy: unknown field of V1Container"
    ]
    pod["spec"] = {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}
    assert "containerPort" in " ".join(validate(pod))


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
