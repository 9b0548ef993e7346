"""The scheduler-extender protocol: kubesched plugins behind a stock kube-scheduler.

``types`` holds the wire types (kube-scheduler's extender v1 JSON), ``server`` the
aiohttp server, ``profile`` the backend that runs a scheduling profile's plugins,
``sdk`` decorators for hand-written extenders and ``cli`` ``kubesched extender serve``;
``client`` is the other way: kube-scheduler's HTTPExtender, for our own scheduler.
"""

from kubesched.extender.client import ExtenderCallError, HTTPExtender, RawObjects, RawStore
from kubesched.extender.errors import BadRequest, ExtenderError, WireError
from kubesched.extender.profile import ProfileExtender
from kubesched.extender.sdk import Extender, Unresolvable
from kubesched.extender.server import ExtenderServer

__all__ = [
    "BadRequest",
    "Extender",
    "ExtenderCallError",
    "ExtenderError",
    "ExtenderServer",
    "HTTPExtender",
    "ProfileExtender",
    "RawObjects",
    "RawStore",
    "Unresolvable",
    "WireError",
]
