"""An embedded, Kubernetes-compatible API server (ARCHITECTURE.md, part ``apiserver``).

It serves the resources and semantics a scheduler needs over HTTP, so that our scheduler,
the official ``kubernetes`` client and ``kubectl`` run against it with no cluster. It
knows nothing of scheduling and imports only :mod:`kubesched.objects` of ours.
"""
