"""The classic filter extender of the tutorials, in a few lines of kubesched's SDK.

The tutorials' Go program (an ``httprouter`` with ``POST /filter`` on port 8888, decoding
``ExtenderArgs`` and answering an ``ExtenderFilterResult``) lets a pod onto a node only
when the node carries a label. Here the same extender: nodes labelled
``scheduler-extender=allowed`` pass, every other node is reported in ``FailedNodes``
with the reason, and among the nodes that pass those also labelled ``disk=ssd`` are
preferred.

Run it::

    python examples/extender_filter.py --port 8888

and point a stock kube-scheduler at it (``kubescheduler.config.k8s.io/v1``; the removed
``kind: Policy`` file of the tutorials is no longer read by kube-scheduler)::

    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    extenders:
    - urlPrefix: http://127.0.0.1:8888
      filterVerb: filter
      prioritizeVerb: prioritize
      weight: 1
      nodeCacheCapable: false   # send full Nodes: this extender keeps no node cache
      ignorable: true           # if the extender is down, schedule without it

Start the extender first and check ``GET /healthz``: a kube-scheduler pointed at an
extender that is not up (and not ignorable) stops scheduling new pods.
"""

from __future__ import annotations

import argparse

from kubesched.extender.sdk import Extender
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod

LABEL_KEY = "scheduler-extender"
LABEL_VALUE = "allowed"
REASON = f"node(s) didn't have label {LABEL_KEY}={LABEL_VALUE}"

extender = Extender()


@extender.filter
def has_label(pod: Pod, node: Node) -> bool | str:
    """Only labelled nodes pass; the others get the reason kube-scheduler will show."""
    return node.labels.get(LABEL_KEY) == LABEL_VALUE or REASON


@extender.prioritize
def prefer_ssd(pod: Pod, node: Node) -> int:
    """10 for nodes with ``disk=ssd``, 0 for the others (extender scores are 0..10)."""
    return 10 if node.labels.get("disk") == "ssd" else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8888)
    args = parser.parse_args()
    extender.run(host=args.host, port=args.port)


if __name__ == "__main__":
    main()
