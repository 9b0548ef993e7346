"""Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``), decoded to JSON.

Go clients (kubectl's ``create`` generators, client-go typed clients such as a stock
kube-scheduler's) send protobuf. :func:`decode_body` turns such a body into the same
JSON-shaped dict the JSON path reads, for the kinds in :data:`schema.KINDS`; responses stay
JSON, which those clients accept as well.
"""

from kubesched.apiserver.protobuf.decode import MEDIA_TYPE, decode_body

__all__ = ["MEDIA_TYPE", "decode_body"]
