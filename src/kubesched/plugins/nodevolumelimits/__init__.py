"""NodeVolumeLimits, as upstream's ``pkg/scheduler/framework/plugins/nodevolumelimits``
(its CSI part, ``CSILimits``).

* ``volumes`` — which attachable volumes a pod brings to a node: CSI volumes of its
  claims, and in-tree disks through their CSI translation where the node migrated them.
* ``csi`` — the plugin: PreFilter, the per-node Filter, queueing hints.
* ``vectorized`` — the columnar Filter: per-node attach counts kept between pods.
"""
