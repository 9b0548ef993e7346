"""A simulated CSI driver for the simulated nodes: what a storage vendor's deployment
installs beside kube-controller-manager. :mod:`.drivers` defines the two drivers and the
StorageClasses that use them; :mod:`.nodes` registers the drivers on every simulated node
(CSINode, as the kubelet's plugin registration does) and installs the CSIDriver objects
and classes; :mod:`.provisioner` creates and deletes volumes as external-provisioner
does; :mod:`.attacher` marks VolumeAttachments attached as external-attacher does.
"""
