"""InterPodAffinity: required and preferred inter-pod affinity and anti-affinity.

The Go package ``pkg/scheduler/framework/plugins/interpodaffinity`` in three modules as
upstream splits it: ``filtering`` (required terms), ``scoring`` (preferred terms) and
``plugin`` (arguments, requeue events, factory).
"""

from kubesched.plugins.interpodaffinity.plugin import (
    NAME,
    InterPodAffinity,
    InterPodAffinityArgs,
    new,
)

__all__ = ["NAME", "InterPodAffinity", "InterPodAffinityArgs", "new"]
