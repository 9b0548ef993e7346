"""The volume controllers of kube-controller-manager (``pkg/controller/volume``): the
PersistentVolume binder (:mod:`.persistentvolume`), the PVC and PV protection controllers
(:mod:`.protection`) and the attach/detach controller (:mod:`.attachdetach`), plus the
kubelet's wait for a pod's volumes (:mod:`.podvolumes`). The simulated CSI driver they
work with is :mod:`kubesched.controllers.csi`.
"""
