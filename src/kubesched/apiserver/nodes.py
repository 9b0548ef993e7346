"""Create simulated nodes (:mod:`kubesched.objects.nodes`) in a store, with a POST's
admission; ``kubesched apiserver --nodes`` and :func:`~kubesched.apiserver.runner.add_nodes`
use it."""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.apiserver import errors, rest
from kubesched.apiserver.resources import NODES
from kubesched.apiserver.store import Store, copy_object
from kubesched.apiserver.watch import Object
from kubesched.objects.nodes import NodeTemplateError


def create_nodes(store: Store, nodes: Sequence[Object]) -> list[Object]:
    """Store ``nodes`` with a POST's admission; a name that exists is left alone.

    Returns the nodes created. Raises :class:`NodeTemplateError` for a node the server
    refuses (e.g. an invalid name from the template).
    """
    created = []
    for node in nodes:
        try:
            _, obj = rest.create(store, NODES, None, copy_object(node))
        except errors.ApiError as exc:
            if exc.status.get("reason") == "AlreadyExists":
                continue
            raise NodeTemplateError(
                f"node {node['metadata']['name']}: {exc.status.get('message')}"
            ) from None
        created.append(obj)
    return created
