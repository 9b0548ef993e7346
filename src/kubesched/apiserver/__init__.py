"""An embedded, Kubernetes-compatible API server (ARCHITECTURE.md, part ``apiserver``).

It serves the resources and semantics a scheduler needs over HTTP, so that our scheduler,
the official ``kubernetes`` client and ``kubectl`` run against it with no cluster. It
knows nothing of scheduling and imports only :mod:`kubesched.objects` of ours.

Modules: ``store`` (objects, versions, watches, graceful deletion), ``errors`` (Status
bodies), ``resources`` (what is served), ``rest`` (the verbs), ``admission`` (defaulting,
names), ``priority`` (the Priority admission plugin, system priority classes),
``eventsv1`` (events.k8s.io/v1 over core/v1 events), ``crd`` and ``crdschema``
(CustomResourceDefinitions, custom resources and their structural schemas), ``tables``
(``as=Table`` printing),
``server`` (HTTP), ``runner`` (start/stop in-process, kubeconfig), ``nodes`` (simulated
nodes into the store). The ``kubesched apiserver`` command, which runs the controllers
beside the server, is :mod:`kubesched.cli.apiserver`.
"""

from kubesched.apiserver.errors import ApiError
from kubesched.apiserver.runner import ApiServerHandle, start_apiserver, write_kubeconfig
from kubesched.apiserver.store import Store

__all__ = ["ApiError", "ApiServerHandle", "Store", "start_apiserver", "write_kubeconfig"]
