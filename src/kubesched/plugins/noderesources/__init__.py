"""Resource-based plugins, as upstream's ``pkg/scheduler/framework/plugins/noderesources``.

* ``fit`` — NodeResourcesFit: Filter on requests vs. allocatable, Score with a
  configurable strategy (LeastAllocated, MostAllocated, RequestedToCapacityRatio).
* ``balanced_allocation`` — NodeResourcesBalancedAllocation: Score favouring nodes whose
  resources are used in similar proportions.

Both score through ``resource_allocation.ResourceAllocationScorer``; the strategies live
in ``least_allocated``, ``most_allocated`` and ``requested_to_capacity_ratio``, each with
its vector twin over the node table; ``vectorized`` holds what those share.
"""
