"""The protobuf table of core/v1 volume sources and PersistentVolumeClaim (the part of
core/v1 only Volume and StatefulSet's volumeClaimTemplates reach).

Field numbers and types are wire facts of release-1.34's ``core/v1/generated.proto``;
presence follows the Go struct tags of ``core/v1/types.go``.

Each entry is one message in the tables' notation (see :mod:`.schema`).
"""

#: k8s.io.api.core.v1, continued
VOLUMES: dict[str, str] = {
    "Volume": "!name=1:string @volumeSource=2:VolumeSource",
    "PersistentVolumeClaim": (
        "metadata=1:meta.ObjectMeta spec=2:PersistentVolumeClaimSpec "
        "status=3:PersistentVolumeClaimStatus"
    ),
    "VolumeSource": (
        "hostPath=1:HostPathVolumeSource emptyDir=2:EmptyDirVolumeSource "
        "gcePersistentDisk=3:GCEPersistentDiskVolumeSource "
        "awsElasticBlockStore=4:AWSElasticBlockStoreVolumeSource gitRepo=5:GitRepoVolumeSource "
        "secret=6:SecretVolumeSource nfs=7:NFSVolumeSource iscsi=8:ISCSIVolumeSource "
        "glusterfs=9:GlusterfsVolumeSource "
        "persistentVolumeClaim=10:PersistentVolumeClaimVolumeSource rbd=11:RBDVolumeSource "
        "flexVolume=12:FlexVolumeSource cinder=13:CinderVolumeSource "
        "cephfs=14:CephFSVolumeSource flocker=15:FlockerVolumeSource "
        "downwardAPI=16:DownwardAPIVolumeSource fc=17:FCVolumeSource "
        "azureFile=18:AzureFileVolumeSource configMap=19:ConfigMapVolumeSource "
        "vsphereVolume=20:VsphereVirtualDiskVolumeSource quobyte=21:QuobyteVolumeSource "
        "azureDisk=22:AzureDiskVolumeSource "
        "photonPersistentDisk=23:PhotonPersistentDiskVolumeSource "
        "projected=26:ProjectedVolumeSource portworxVolume=24:PortworxVolumeSource "
        "scaleIO=25:ScaleIOVolumeSource storageos=27:StorageOSVolumeSource "
        "csi=28:CSIVolumeSource ephemeral=29:EphemeralVolumeSource image=30:ImageVolumeSource"
    ),
    "PersistentVolumeClaimSpec": (
        "accessModes=1:[]string selector=4:meta.LabelSelector "
        "resources=2:VolumeResourceRequirements volumeName=3:string ?storageClassName=5:string "
        "?volumeMode=6:string dataSource=7:TypedLocalObjectReference "
        "dataSourceRef=8:TypedObjectReference ?volumeAttributesClassName=9:string"
    ),
    "PersistentVolumeClaimStatus": (
        "phase=1:string accessModes=2:[]string capacity=3:{}Quantity "
        "conditions=4:[]PersistentVolumeClaimCondition allocatedResources=5:{}Quantity "
        "allocatedResourceStatuses=7:{}string ?currentVolumeAttributesClassName=8:string "
        "modifyVolumeStatus=9:ModifyVolumeStatus"
    ),
    "HostPathVolumeSource": "!path=1:string ?type=2:string",
    "EmptyDirVolumeSource": "medium=1:string sizeLimit=2:Quantity",
    "GCEPersistentDiskVolumeSource": (
        "!pdName=1:string fsType=2:string partition=3:int32 readOnly=4:bool"
    ),
    "AWSElasticBlockStoreVolumeSource": (
        "!volumeID=1:string fsType=2:string partition=3:int32 readOnly=4:bool"
    ),
    "GitRepoVolumeSource": "!repository=1:string revision=2:string directory=3:string",
    "SecretVolumeSource": (
        "secretName=1:string items=2:[]KeyToPath ?defaultMode=3:int32 ?optional=4:bool"
    ),
    "NFSVolumeSource": "!server=1:string !path=2:string readOnly=3:bool",
    "ISCSIVolumeSource": (
        "!targetPortal=1:string !iqn=2:string !lun=3:int32 iscsiInterface=4:string "
        "fsType=5:string readOnly=6:bool portals=7:[]string chapAuthDiscovery=8:bool "
        "chapAuthSession=11:bool secretRef=10:LocalObjectReference ?initiatorName=12:string"
    ),
    "GlusterfsVolumeSource": "!endpoints=1:string !path=2:string readOnly=3:bool",
    "PersistentVolumeClaimVolumeSource": "!claimName=1:string readOnly=2:bool",
    "RBDVolumeSource": (
        "monitors=1:[]string !image=2:string fsType=3:string pool=4:string user=5:string "
        "keyring=6:string secretRef=7:LocalObjectReference readOnly=8:bool"
    ),
    "FlexVolumeSource": (
        "!driver=1:string fsType=2:string secretRef=3:LocalObjectReference readOnly=4:bool "
        "options=5:{}string"
    ),
    "CinderVolumeSource": (
        "!volumeID=1:string fsType=2:string readOnly=3:bool secretRef=4:LocalObjectReference"
    ),
    "CephFSVolumeSource": (
        "monitors=1:[]string path=2:string user=3:string secretFile=4:string "
        "secretRef=5:LocalObjectReference readOnly=6:bool"
    ),
    "FlockerVolumeSource": "datasetName=1:string datasetUUID=2:string",
    "DownwardAPIVolumeSource": "items=1:[]DownwardAPIVolumeFile ?defaultMode=2:int32",
    "FCVolumeSource": (
        "targetWWNs=1:[]string ?lun=2:int32 fsType=3:string readOnly=4:bool wwids=5:[]string"
    ),
    "AzureFileVolumeSource": "!secretName=1:string !shareName=2:string readOnly=3:bool",
    "ConfigMapVolumeSource": (
        "@localObjectReference=1:LocalObjectReference items=2:[]KeyToPath ?defaultMode=3:int32 "
        "?optional=4:bool"
    ),
    "VsphereVirtualDiskVolumeSource": (
        "!volumePath=1:string fsType=2:string storagePolicyName=3:string storagePolicyID=4:string"
    ),
    "QuobyteVolumeSource": (
        "!registry=1:string !volume=2:string readOnly=3:bool user=4:string group=5:string "
        "tenant=6:string"
    ),
    "AzureDiskVolumeSource": (
        "!diskName=1:string !diskURI=2:string ?cachingMode=3:string ?fsType=4:string "
        "?readOnly=5:bool ?kind=6:string"
    ),
    "PhotonPersistentDiskVolumeSource": "!pdID=1:string fsType=2:string",
    "ProjectedVolumeSource": "sources=1:[]VolumeProjection ?defaultMode=2:int32",
    "PortworxVolumeSource": "!volumeID=1:string fsType=2:string readOnly=3:bool",
    "ScaleIOVolumeSource": (
        "!gateway=1:string !system=2:string secretRef=3:LocalObjectReference sslEnabled=4:bool "
        "protectionDomain=5:string storagePool=6:string storageMode=7:string "
        "volumeName=8:string fsType=9:string readOnly=10:bool"
    ),
    "StorageOSVolumeSource": (
        "volumeName=1:string volumeNamespace=2:string fsType=3:string readOnly=4:bool "
        "secretRef=5:LocalObjectReference"
    ),
    "CSIVolumeSource": (
        "!driver=1:string ?readOnly=2:bool ?fsType=3:string volumeAttributes=4:{}string "
        "nodePublishSecretRef=5:LocalObjectReference"
    ),
    "EphemeralVolumeSource": "volumeClaimTemplate=1:PersistentVolumeClaimTemplate",
    "ImageVolumeSource": "reference=1:string pullPolicy=2:string",
    "VolumeResourceRequirements": "limits=1:{}Quantity requests=2:{}Quantity",
    "TypedLocalObjectReference": "?apiGroup=1:string !kind=2:string !name=3:string",
    "TypedObjectReference": "?apiGroup=1:string !kind=2:string !name=3:string ?namespace=4:string",
    "PersistentVolumeClaimCondition": (
        "!type=1:string !status=2:string lastProbeTime=3:Time lastTransitionTime=4:Time "
        "reason=5:string message=6:string"
    ),
    "ModifyVolumeStatus": "targetVolumeAttributesClassName=1:string !status=2:string",
    "KeyToPath": "!key=1:string !path=2:string ?mode=3:int32",
    "DownwardAPIVolumeFile": (
        "!path=1:string fieldRef=2:ObjectFieldSelector resourceFieldRef=3:ResourceFieldSelector "
        "?mode=4:int32"
    ),
    "VolumeProjection": (
        "secret=1:SecretProjection downwardAPI=2:DownwardAPIProjection "
        "configMap=3:ConfigMapProjection serviceAccountToken=4:ServiceAccountTokenProjection "
        "clusterTrustBundle=5:ClusterTrustBundleProjection "
        "podCertificate=6:PodCertificateProjection"
    ),
    "PersistentVolumeClaimTemplate": "metadata=1:meta.ObjectMeta spec=2:PersistentVolumeClaimSpec",
    "SecretProjection": (
        "@localObjectReference=1:LocalObjectReference items=2:[]KeyToPath ?optional=4:bool"
    ),
    "DownwardAPIProjection": "items=1:[]DownwardAPIVolumeFile",
    "ConfigMapProjection": (
        "@localObjectReference=1:LocalObjectReference items=2:[]KeyToPath ?optional=4:bool"
    ),
    "ServiceAccountTokenProjection": "audience=1:string ?expirationSeconds=2:int64 !path=3:string",
    "ClusterTrustBundleProjection": (
        "?name=1:string ?signerName=2:string labelSelector=3:meta.LabelSelector "
        "?optional=5:bool !path=4:string"
    ),
    "PodCertificateProjection": (
        "signerName=1:string keyType=2:string ?maxExpirationSeconds=3:int32 "
        "credentialBundlePath=4:string keyPath=5:string certificateChainPath=6:string"
    ),
}
