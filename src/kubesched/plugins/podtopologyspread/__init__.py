"""PodTopologySpread: spread pods evenly over topology domains (upstream
``pkg/scheduler/framework/plugins/podtopologyspread``).

``plugin`` holds the plugin, its args and the factory; ``filtering`` and ``scoring`` the
hard and soft constraint logic; ``common`` the constraints both share.
"""

from kubesched.plugins.podtopologyspread.plugin import (
    LIST_DEFAULTING,
    NAME,
    REASON_CONSTRAINTS_NOT_MATCH,
    REASON_NODE_LABEL_NOT_MATCH,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SYSTEM_DEFAULTING,
    DefaultConstraint,
    PodTopologySpread,
    PodTopologySpreadArgs,
    new,
)

__all__ = [
    "LIST_DEFAULTING",
    "NAME",
    "REASON_CONSTRAINTS_NOT_MATCH",
    "REASON_NODE_LABEL_NOT_MATCH",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "DefaultConstraint",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "new",
]
