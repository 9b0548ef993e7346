"""The scheduler-extender protocol: kubesched plugins behind a stock kube-scheduler.

``types`` holds the wire types (kube-scheduler's extender v1 JSON), ``server`` the
aiohttp server, ``profile`` the backend that runs a scheduling profile's plugins,
``sdk`` decorators for hand-written extenders and ``cli`` ``kubesched extender serve``.
"""

from kubesched.extender.errors import BadRequest, ExtenderError, WireError
from kubesched.extender.profile import ProfileExtender
from kubesched.extender.sdk import Extender, Unresolvable
from kubesched.extender.server import ExtenderServer

__all__ = [
    "BadRequest",
    "Extender",
    "ExtenderError",
    "ExtenderServer",
    "ProfileExtender",
    "Unresolvable",
    "WireError",
]
