"""Dynamic Resource Allocation (resource.k8s.io/v1) as pure functions of API objects.

- :mod:`.slices`: DeviceClass, ResourceSlice and its devices; the pools a node can use
  (newest generation only).
- :mod:`.claims`: ResourceClaim (requests, constraints, allocation, reservedFor) and
  ResourceClaimTemplate.
- :mod:`.podclaims`: a pod's ``spec.resourceClaims``, the claims the resource-claim
  controller makes from templates, and how a pod's claim names are resolved.
- :mod:`.gates`: fields of gates off in 1.34 that a write drops, as kube-apiserver does.
- :mod:`.cel`: the CEL environment of device selectors (compiled once, results cached
  per device).

The package root imports nothing, so that importing the pod view does not load CEL.
"""
