"""The CustomResourceDefinitions kubesched's controllers bring: scheduler-plugins' PodGroup
and ElasticQuota (``scheduling.x-k8s.io/v1alpha1``).

The YAML files here are the ones in ``deploy/crds/`` (a test keeps them equal). The API
server serves any CRD generically; installing these is a cluster's set-up, which the
controllers do at start against the embedded cluster (or any cluster that lets them),
as the CSI registrar installs its StorageClasses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from importlib import resources
from typing import Any

import yaml

from kubesched.kube import AlreadyExists, Client, KubeError, NotFound
from kubesched.kube.resources import CUSTOM_RESOURCE_DEFINITIONS, RawObject

__all__ = ["CRD_FILES", "install_crds", "scheduling_crds"]

log = logging.getLogger(__name__)

#: The files of this package, in install order.
CRD_FILES = ("scheduling.x-k8s.io_podgroups.yaml", "scheduling.x-k8s.io_elasticquotas.yaml")


def scheduling_crds() -> list[RawObject]:
    """The PodGroup and ElasticQuota CRDs, as new objects (callers may change them)."""
    folder = resources.files(__name__)
    out: list[RawObject] = []
    for name in CRD_FILES:
        loaded: Any = yaml.safe_load(folder.joinpath(name).read_text(encoding="utf-8"))
        out.append(loaded)
    return out


async def install_crds(
    client: Client, crds: list[RawObject], timeout: float = 10.0, who: str = "controllers"
) -> list[str]:
    """Create each of ``crds`` the server does not have (existing ones are kept as they
    are), then wait until the server serves every one's resource. Returns the names of
    the CRDs created. A server that refuses (no permission, no apiextensions) is logged
    and left alone: the controllers that need the resources are then not started."""
    created: list[str] = []
    present: list[RawObject] = []
    for crd in crds:
        name = str(crd["metadata"]["name"])
        try:
            await client.create(CUSTOM_RESOURCE_DEFINITIONS, crd)
        except AlreadyExists:
            present.append(crd)
            continue
        except KubeError as exc:
            log.warning("%s: cannot install CRD %s: %s", who, name, exc)
            continue
        present.append(crd)
        created.append(name)
        log.info("%s: installed CRD %s", who, name)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    for crd in present:
        spec = crd["spec"]
        version = next(v["name"] for v in spec["versions"] if v.get("served", True))
        path = f"/apis/{spec['group']}/{version}/{spec['names']['plural']}"
        while True:
            with contextlib.suppress(NotFound):
                await client.request("GET", path, {"limit": "1"})
                break
            if loop.time() > deadline:
                log.warning("%s: %s not served after %.0fs", who, path, timeout)
                break
            await asyncio.sleep(0.05)
    return created
