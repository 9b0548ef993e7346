"""The protobuf table of the storage kinds: core/v1 PersistentVolume (the claim is in
:mod:`.table_volumes`) and storage.k8s.io/v1 StorageClass, CSINode, CSIDriver,
CSIStorageCapacity, VolumeAttachment and VolumeAttributesClass.

Field numbers and types are wire facts of release-1.34's ``core/v1/generated.proto`` and
``storage/v1/generated.proto``; presence follows the Go struct tags of each ``types.go``.

Each entry is one message in the tables' notation (see :mod:`.schema`).
"""

#: k8s.io.api.core.v1, continued: PersistentVolume and its sources.
PERSISTENT_VOLUMES: dict[str, str] = {
    "PersistentVolume": (
        "metadata=1:meta.ObjectMeta spec=2:PersistentVolumeSpec status=3:PersistentVolumeStatus"
    ),
    "PersistentVolumeSpec": (
        "capacity=1:{}Quantity @persistentVolumeSource=2:PersistentVolumeSource "
        "accessModes=3:[]string claimRef=4:ObjectReference persistentVolumeReclaimPolicy=5:string "
        "storageClassName=6:string mountOptions=7:[]string ?volumeMode=8:string "
        "nodeAffinity=9:VolumeNodeAffinity ?volumeAttributesClassName=10:string"
    ),
    "PersistentVolumeSource": (
        "gcePersistentDisk=1:GCEPersistentDiskVolumeSource "
        "awsElasticBlockStore=2:AWSElasticBlockStoreVolumeSource hostPath=3:HostPathVolumeSource "
        "glusterfs=4:GlusterfsPersistentVolumeSource nfs=5:NFSVolumeSource "
        "rbd=6:RBDPersistentVolumeSource iscsi=7:ISCSIPersistentVolumeSource "
        "cinder=8:CinderPersistentVolumeSource cephfs=9:CephFSPersistentVolumeSource "
        "fc=10:FCVolumeSource flocker=11:FlockerVolumeSource "
        "flexVolume=12:FlexPersistentVolumeSource azureFile=13:AzureFilePersistentVolumeSource "
        "vsphereVolume=14:VsphereVirtualDiskVolumeSource quobyte=15:QuobyteVolumeSource "
        "azureDisk=16:AzureDiskVolumeSource "
        "photonPersistentDisk=17:PhotonPersistentDiskVolumeSource "
        "portworxVolume=18:PortworxVolumeSource scaleIO=19:ScaleIOPersistentVolumeSource "
        "local=20:LocalVolumeSource storageos=21:StorageOSPersistentVolumeSource "
        "csi=22:CSIPersistentVolumeSource"
    ),
    "PersistentVolumeStatus": (
        "phase=1:string message=2:string reason=3:string lastPhaseTransitionTime=4:Time"
    ),
    "GlusterfsPersistentVolumeSource": (
        "!endpoints=1:string !path=2:string readOnly=3:bool ?endpointsNamespace=4:string"
    ),
    "RBDPersistentVolumeSource": (
        "monitors=1:[]string !image=2:string fsType=3:string pool=4:string user=5:string "
        "keyring=6:string secretRef=7:SecretReference readOnly=8:bool"
    ),
    "ISCSIPersistentVolumeSource": (
        "!targetPortal=1:string !iqn=2:string !lun=3:int32 iscsiInterface=4:string fsType=5:string "
        "readOnly=6:bool portals=7:[]string chapAuthDiscovery=8:bool chapAuthSession=11:bool "
        "secretRef=10:SecretReference ?initiatorName=12:string"
    ),
    "CinderPersistentVolumeSource": (
        "!volumeID=1:string fsType=2:string readOnly=3:bool secretRef=4:SecretReference"
    ),
    "CephFSPersistentVolumeSource": (
        "monitors=1:[]string path=2:string user=3:string secretFile=4:string "
        "secretRef=5:SecretReference readOnly=6:bool"
    ),
    "FlexPersistentVolumeSource": (
        "!driver=1:string fsType=2:string secretRef=3:SecretReference readOnly=4:bool "
        "options=5:{}string"
    ),
    "AzureFilePersistentVolumeSource": (
        "!secretName=1:string !shareName=2:string readOnly=3:bool ?secretNamespace=4:string"
    ),
    "ScaleIOPersistentVolumeSource": (
        "!gateway=1:string !system=2:string secretRef=3:SecretReference sslEnabled=4:bool "
        "protectionDomain=5:string storagePool=6:string storageMode=7:string volumeName=8:string "
        "fsType=9:string readOnly=10:bool"
    ),
    "LocalVolumeSource": "!path=1:string ?fsType=2:string",
    "StorageOSPersistentVolumeSource": (
        "volumeName=1:string volumeNamespace=2:string fsType=3:string readOnly=4:bool "
        "secretRef=5:ObjectReference"
    ),
    "CSIPersistentVolumeSource": (
        "!driver=1:string !volumeHandle=2:string readOnly=3:bool fsType=4:string "
        "volumeAttributes=5:{}string controllerPublishSecretRef=6:SecretReference "
        "nodeStageSecretRef=7:SecretReference nodePublishSecretRef=8:SecretReference "
        "controllerExpandSecretRef=9:SecretReference nodeExpandSecretRef=10:SecretReference"
    ),
    "SecretReference": "name=1:string namespace=2:string",
    "VolumeNodeAffinity": "required=1:NodeSelector",
    "TopologySelectorTerm": "matchLabelExpressions=1:[]TopologySelectorLabelRequirement",
    "TopologySelectorLabelRequirement": "!key=1:string values=2:[]string",
}

#: k8s.io.api.storage.v1
STORAGE: dict[str, str] = {
    "StorageClass": (
        "metadata=1:meta.ObjectMeta !provisioner=2:string parameters=3:{}string "
        "?reclaimPolicy=4:string mountOptions=5:[]string ?allowVolumeExpansion=6:bool "
        "?volumeBindingMode=7:string allowedTopologies=8:[]core.TopologySelectorTerm"
    ),
    "CSINode": "metadata=1:meta.ObjectMeta spec=2:CSINodeSpec",
    "CSINodeSpec": "drivers=1:[]CSINodeDriver",
    "CSINodeDriver": (
        "!name=1:string !nodeID=2:string topologyKeys=3:[]string allocatable=4:VolumeNodeResources"
    ),
    "VolumeNodeResources": "?count=1:int32",
    "CSIDriver": "metadata=1:meta.ObjectMeta spec=2:CSIDriverSpec",
    "CSIDriverSpec": (
        "?attachRequired=1:bool ?podInfoOnMount=2:bool volumeLifecycleModes=3:[]string "
        "?storageCapacity=4:bool ?fsGroupPolicy=5:string tokenRequests=6:[]TokenRequest "
        "?requiresRepublish=7:bool ?seLinuxMount=8:bool "
        "?nodeAllocatableUpdatePeriodSeconds=9:int64"
    ),
    "TokenRequest": "!audience=1:string ?expirationSeconds=2:int64",
    "CSIStorageCapacity": (
        "metadata=1:meta.ObjectMeta nodeTopology=2:meta.LabelSelector !storageClassName=3:string "
        "capacity=4:Quantity maximumVolumeSize=5:Quantity"
    ),
    "VolumeAttachment": (
        "metadata=1:meta.ObjectMeta spec=2:VolumeAttachmentSpec status=3:VolumeAttachmentStatus"
    ),
    "VolumeAttachmentSpec": "!attacher=1:string source=2:VolumeAttachmentSource !nodeName=3:string",
    "VolumeAttachmentSource": (
        "?persistentVolumeName=1:string inlineVolumeSpec=2:core.PersistentVolumeSpec"
    ),
    "VolumeAttachmentStatus": (
        "!attached=1:bool attachmentMetadata=2:{}string attachError=3:VolumeError "
        "detachError=4:VolumeError"
    ),
    "VolumeError": "time=1:Time message=2:string ?errorCode=3:int32",
    "VolumeAttributesClass": (
        "metadata=1:meta.ObjectMeta !driverName=2:string parameters=3:{}string"
    ),
}
