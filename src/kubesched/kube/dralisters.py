"""Listers of the resource.k8s.io objects over informers: what the DynamicResources
plugin reads through the framework's ``ClusterLister`` (ResourceClaims, ResourceSlices,
DeviceClasses), for the live scheduler and the extender server alike.

The informers are optional, as the storage ones are: a server that does not serve
resource.k8s.io (404) leaves the stores empty instead of holding up the scheduler's start.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.kube.client import Client
from kubesched.kube.informer import Informer
from kubesched.kube.resources import DEVICE_CLASSES, RESOURCE_CLAIMS, RESOURCE_SLICES
from kubesched.objects.dra.claims import ResourceClaim
from kubesched.objects.dra.slices import DeviceClass, ResourceSlice

__all__ = ["DRAListers"]


class DRAListers:
    """The DRA informers and the lookups over their stores (start the informers first;
    :attr:`dra_informers` lists them)."""

    def __init__(self, client: Client) -> None:
        self.claim_informer: Informer[ResourceClaim] = Informer(
            client, RESOURCE_CLAIMS, optional=True
        )
        self.slice_informer: Informer[ResourceSlice] = Informer(
            client, RESOURCE_SLICES, optional=True
        )
        self.device_class_informer: Informer[DeviceClass] = Informer(
            client, DEVICE_CLASSES, optional=True
        )
        self._dra_version = 0
        self._claims_version = 0
        self.claim_informer.add_handler(
            self._claim_changed, self._claim_updated, self._claim_changed
        )
        for informer in (self.slice_informer, self.device_class_informer):
            informer.add_handler(self._dra_changed, self._dra_updated, self._dra_changed)

    @property
    def dra_informers(self) -> list[Informer[Any]]:
        """Every DRA informer, to start, sync and stop with the others."""
        return [self.claim_informer, self.slice_informer, self.device_class_informer]

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The ResourceClaim ``namespace/name``, if known."""
        return self.claim_informer.get(f"{namespace}/{name}")

    def resource_claims(self) -> Sequence[ResourceClaim]:
        """Every ResourceClaim."""
        return self.claim_informer.list()

    def device_class(self, name: str) -> DeviceClass | None:
        """The DeviceClass ``name``, if known."""
        return self.device_class_informer.get(name)

    def resource_slices(self) -> Sequence[ResourceSlice]:
        """Every ResourceSlice."""
        return self.slice_informer.list()

    def dra_version(self) -> int:
        """Changes whenever a ResourceSlice or DeviceClass does."""
        return self._dra_version

    def resource_claims_version(self) -> int:
        """Changes whenever a ResourceClaim does."""
        return self._claims_version

    def _claim_changed(self, obj: object) -> None:
        self._claims_version += 1

    def _claim_updated(self, old: object, new: object) -> None:
        self._claims_version += 1

    def _dra_changed(self, obj: object) -> None:
        self._dra_version += 1

    def _dra_updated(self, old: object, new: object) -> None:
        self._dra_version += 1
