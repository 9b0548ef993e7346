"""CapacityScheduling: elastic quotas per namespace (scheduler-plugins' ElasticQuota).

``plugin`` holds the plugin, its args and its factory ``new``; ``elasticquota`` the
accounts and their comparisons; ``usage`` what each namespace uses; ``preemption`` the
victim rules the framework's evaluator runs with; ``state`` what PreFilter leaves for
PostFilter.
"""

from kubesched.plugins.capacityscheduling.plugin import (
    NAME,
    CapacityScheduling,
    CapacitySchedulingArgs,
    new,
)

__all__ = ["NAME", "CapacityScheduling", "CapacitySchedulingArgs", "new"]
