"""The scheduler's view of a Node."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubesched.objects._decode import (
    as_map,
    get_bool,
    get_int,
    get_list,
    get_map,
    get_str,
    get_str_list,
    get_str_map,
    join,
    nested,
)
from kubesched.objects.errors import ObjectError
from kubesched.objects.resources import Resource
from kubesched.objects.taints import Taint

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"


@dataclass(frozen=True, slots=True)
class ContainerImage:
    """An image present on the node: its names (tags, digests) and size in bytes."""

    names: tuple[str, ...]
    size_bytes: int


@dataclass(frozen=True, slots=True)
class Node:
    """A node, as the scheduler sees it. Treat it as immutable."""

    name: str
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: Resource = field(default_factory=Resource)
    images: tuple[ContainerImage, ...] = ()

    @classmethod
    def from_dict(cls, raw: object) -> Node:
        """Decode a v1.Node. Raises ObjectError naming the node and the field."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        try:
            if not name:
                raise ObjectError("metadata.name", "Required value: name is required")
            spec = get_map(obj, "spec", "")
            status = get_map(obj, "status", "")
            # API defaulting: a node that reports no allocatable has its capacity.
            allocatable_raw = status.get("allocatable")
            if allocatable_raw is None:
                allocatable_raw, alloc_path = status.get("capacity"), "status.capacity"
            else:
                alloc_path = "status.allocatable"
            images = []
            for i, img in enumerate(get_list(status, "images", "status")):
                path = join("status.images", i)
                img_map = as_map(img, path)
                images.append(
                    ContainerImage(
                        names=get_str_list(img_map, "names", path),
                        size_bytes=get_int(img_map, "sizeBytes", path, 0) or 0,
                    )
                )
            return cls(
                name=name,
                uid=get_str(meta, "uid", "metadata"),
                labels=get_str_map(meta, "labels", "metadata"),
                taints=tuple(
                    nested(join("spec.taints", i), Taint.from_dict, t)
                    for i, t in enumerate(get_list(spec, "taints", "spec"))
                ),
                unschedulable=get_bool(spec, "unschedulable", "spec"),
                allocatable=Resource.from_list(as_map(allocatable_raw, alloc_path), alloc_path),
                images=tuple(images),
            )
        except ObjectError as err:
            raise err.located(f"Node {name}") from None
