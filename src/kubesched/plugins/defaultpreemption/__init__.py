"""DefaultPreemption: the PostFilter plugin that evicts lower-priority pods to make room.

``plugin`` holds the plugin, its args and its factory ``new``; ``evaluator`` holds the
candidate search, the dry run and the choice of victims (upstream's ``preemption``
package).
"""

from kubesched.plugins.defaultpreemption.plugin import (
    NAME,
    DefaultPreemption,
    DefaultPreemptionArgs,
    new,
)

__all__ = ["NAME", "DefaultPreemption", "DefaultPreemptionArgs", "new"]
