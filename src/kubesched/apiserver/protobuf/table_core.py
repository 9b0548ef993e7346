"""The protobuf table of k8s.io/api core/v1: the kinds the server stores and what they use.

Field numbers and types are wire facts of release-1.34's ``core/v1/generated.proto``;
presence follows the Go struct tags of ``core/v1/types.go``. Volume sources live in
:mod:`.table_volumes`.

Each entry is one message in the tables' notation (see :mod:`.schema`).
"""

#: k8s.io.api.core.v1 (volume sources: table_volumes.VOLUMES)
CORE: dict[str, str] = {
    "Namespace": "metadata=1:meta.ObjectMeta spec=2:NamespaceSpec status=3:NamespaceStatus",
    "ConfigMap": (
        "metadata=1:meta.ObjectMeta ?immutable=4:bool data=2:{}string binaryData=3:{}bytes"
    ),
    "Secret": (
        "metadata=1:meta.ObjectMeta ?immutable=5:bool data=2:{}bytes stringData=4:{}string "
        "type=3:string"
    ),
    "ServiceAccount": (
        "metadata=1:meta.ObjectMeta secrets=2:[]ObjectReference "
        "imagePullSecrets=3:[]LocalObjectReference ?automountServiceAccountToken=4:bool"
    ),
    "Service": "metadata=1:meta.ObjectMeta spec=2:ServiceSpec status=3:ServiceStatus",
    "Binding": "metadata=1:meta.ObjectMeta target=2:ObjectReference",
    "Event": (
        "metadata=1:meta.ObjectMeta involvedObject=2:ObjectReference reason=3:string "
        "message=4:string source=5:EventSource firstTimestamp=6:Time lastTimestamp=7:Time "
        "count=8:int32 type=9:string eventTime=10:MicroTime series=11:EventSeries "
        "action=12:string related=13:ObjectReference !reportingComponent=14:string "
        "!reportingInstance=15:string"
    ),
    "Pod": "metadata=1:meta.ObjectMeta spec=2:PodSpec status=3:PodStatus",
    "Node": "metadata=1:meta.ObjectMeta spec=2:NodeSpec status=3:NodeStatus",
    "ReplicationController": (
        "metadata=1:meta.ObjectMeta spec=2:ReplicationControllerSpec "
        "status=3:ReplicationControllerStatus"
    ),
    "NamespaceSpec": "finalizers=1:[]string",
    "NamespaceStatus": "phase=1:string conditions=2:[]NamespaceCondition",
    "ServiceSpec": (
        "ports=1:[]ServicePort selector=2:{}string clusterIP=3:string clusterIPs=18:[]string "
        "type=4:string externalIPs=5:[]string sessionAffinity=7:string loadBalancerIP=8:string "
        "loadBalancerSourceRanges=9:[]string externalName=10:string "
        "externalTrafficPolicy=11:string healthCheckNodePort=12:int32 "
        "publishNotReadyAddresses=13:bool sessionAffinityConfig=14:SessionAffinityConfig "
        "ipFamilies=19:[]string ?ipFamilyPolicy=17:string "
        "?allocateLoadBalancerNodePorts=20:bool ?loadBalancerClass=21:string "
        "?internalTrafficPolicy=22:string ?trafficDistribution=23:string"
    ),
    "ServiceStatus": "loadBalancer=1:LoadBalancerStatus conditions=2:[]meta.Condition",
    "ObjectReference": (
        "kind=1:string namespace=2:string name=3:string uid=4:string apiVersion=5:string "
        "resourceVersion=6:string fieldPath=7:string"
    ),
    "EventSource": "component=1:string host=2:string",
    "EventSeries": "count=1:int32 lastObservedTime=2:MicroTime",
    "PodSpec": (
        "volumes=1:[]Volume initContainers=20:[]Container containers=2:[]Container "
        "ephemeralContainers=34:[]EphemeralContainer restartPolicy=3:string "
        "?terminationGracePeriodSeconds=4:int64 ?activeDeadlineSeconds=5:int64 "
        "dnsPolicy=6:string nodeSelector=7:{}string serviceAccountName=8:string "
        "serviceAccount=9:string ?automountServiceAccountToken=21:bool nodeName=10:string "
        "hostNetwork=11:bool hostPID=12:bool hostIPC=13:bool ?shareProcessNamespace=27:bool "
        "securityContext=14:PodSecurityContext imagePullSecrets=15:[]LocalObjectReference "
        "hostname=16:string subdomain=17:string affinity=18:Affinity schedulerName=19:string "
        "tolerations=22:[]Toleration hostAliases=23:[]HostAlias priorityClassName=24:string "
        "?priority=25:int32 dnsConfig=26:PodDNSConfig readinessGates=28:[]PodReadinessGate "
        "?runtimeClassName=29:string ?enableServiceLinks=30:bool ?preemptionPolicy=31:string "
        "overhead=32:{}Quantity topologySpreadConstraints=33:[]TopologySpreadConstraint "
        "?setHostnameAsFQDN=35:bool os=36:PodOS ?hostUsers=37:bool "
        "schedulingGates=38:[]PodSchedulingGate resourceClaims=39:[]PodResourceClaim "
        "resources=40:ResourceRequirements ?hostnameOverride=41:string"
    ),
    "PodStatus": (
        "observedGeneration=17:int64 phase=1:string conditions=2:[]PodCondition "
        "message=3:string reason=4:string nominatedNodeName=11:string hostIP=5:string "
        "hostIPs=16:[]HostIP podIP=6:string podIPs=12:[]PodIP startTime=7:Time "
        "initContainerStatuses=10:[]ContainerStatus containerStatuses=8:[]ContainerStatus "
        "qosClass=9:string ephemeralContainerStatuses=13:[]ContainerStatus resize=14:string "
        "resourceClaimStatuses=15:[]PodResourceClaimStatus "
        "extendedResourceClaimStatus=18:PodExtendedResourceClaimStatus"
    ),
    "NodeSpec": (
        "podCIDR=1:string podCIDRs=7:[]string providerID=3:string unschedulable=4:bool "
        "taints=5:[]Taint configSource=6:NodeConfigSource externalID=2:string"
    ),
    "NodeStatus": (
        "capacity=1:{}Quantity allocatable=2:{}Quantity phase=3:string "
        "conditions=4:[]NodeCondition addresses=5:[]NodeAddress "
        "daemonEndpoints=6:NodeDaemonEndpoints nodeInfo=7:NodeSystemInfo "
        "images=8:[]ContainerImage volumesInUse=9:[]string volumesAttached=10:[]AttachedVolume "
        "config=11:NodeConfigStatus runtimeHandlers=12:[]NodeRuntimeHandler "
        "features=13:NodeFeatures"
    ),
    "ReplicationControllerSpec": (
        "?replicas=1:int32 minReadySeconds=4:int32 selector=2:{}string template=3:PodTemplateSpec"
    ),
    "ReplicationControllerStatus": (
        "!replicas=1:int32 fullyLabeledReplicas=2:int32 readyReplicas=4:int32 "
        "availableReplicas=5:int32 observedGeneration=3:int64 "
        "conditions=6:[]ReplicationControllerCondition"
    ),
    "NamespaceCondition": (
        "!type=1:string !status=2:string lastTransitionTime=4:Time reason=5:string message=6:string"
    ),
    "ServicePort": (
        "name=1:string protocol=2:string ?appProtocol=6:string !port=3:int32 "
        "targetPort=4:IntOrString nodePort=5:int32"
    ),
    "SessionAffinityConfig": "clientIP=1:ClientIPConfig",
    "LoadBalancerStatus": "ingress=1:[]LoadBalancerIngress",
    "Container": (
        "!name=1:string image=2:string command=3:[]string args=4:[]string workingDir=5:string "
        "ports=6:[]ContainerPort envFrom=19:[]EnvFromSource env=7:[]EnvVar "
        "resources=8:ResourceRequirements resizePolicy=23:[]ContainerResizePolicy "
        "?restartPolicy=24:string restartPolicyRules=25:[]ContainerRestartRule "
        "volumeMounts=9:[]VolumeMount volumeDevices=21:[]VolumeDevice livenessProbe=10:Probe "
        "readinessProbe=11:Probe startupProbe=22:Probe lifecycle=12:Lifecycle "
        "terminationMessagePath=13:string terminationMessagePolicy=20:string "
        "imagePullPolicy=14:string securityContext=15:SecurityContext stdin=16:bool "
        "stdinOnce=17:bool tty=18:bool"
    ),
    "EphemeralContainer": (
        "@ephemeralContainerCommon=1:EphemeralContainerCommon targetContainerName=2:string"
    ),
    "PodSecurityContext": (
        "seLinuxOptions=1:SELinuxOptions windowsOptions=8:WindowsSecurityContextOptions "
        "?runAsUser=2:int64 ?runAsGroup=6:int64 ?runAsNonRoot=3:bool "
        "supplementalGroups=4:[]int64 ?supplementalGroupsPolicy=12:string ?fsGroup=5:int64 "
        "sysctls=7:[]Sysctl ?fsGroupChangePolicy=9:string seccompProfile=10:SeccompProfile "
        "appArmorProfile=11:AppArmorProfile ?seLinuxChangePolicy=13:string"
    ),
    "LocalObjectReference": "name=1:string",
    "Affinity": (
        "nodeAffinity=1:NodeAffinity podAffinity=2:PodAffinity podAntiAffinity=3:PodAntiAffinity"
    ),
    "Toleration": (
        "key=1:string operator=2:string value=3:string effect=4:string ?tolerationSeconds=5:int64"
    ),
    "HostAlias": "!ip=1:string hostnames=2:[]string",
    "PodDNSConfig": "nameservers=1:[]string searches=2:[]string options=3:[]PodDNSConfigOption",
    "PodReadinessGate": "!conditionType=1:string",
    "TopologySpreadConstraint": (
        "!maxSkew=1:int32 !topologyKey=2:string !whenUnsatisfiable=3:string "
        "labelSelector=4:meta.LabelSelector ?minDomains=5:int32 ?nodeAffinityPolicy=6:string "
        "?nodeTaintsPolicy=7:string matchLabelKeys=8:[]string"
    ),
    "PodOS": "!name=1:string",
    "PodSchedulingGate": "!name=1:string",
    "PodResourceClaim": (
        "!name=1:string ?resourceClaimName=3:string ?resourceClaimTemplateName=4:string"
    ),
    "ResourceRequirements": "limits=1:{}Quantity requests=2:{}Quantity claims=3:[]ResourceClaim",
    "PodCondition": (
        "!type=1:string observedGeneration=7:int64 !status=2:string lastProbeTime=3:Time "
        "lastTransitionTime=4:Time reason=5:string message=6:string"
    ),
    "HostIP": "!ip=1:string",
    "PodIP": "!ip=1:string",
    "ContainerStatus": (
        "!name=1:string state=2:ContainerState lastState=3:ContainerState !ready=4:bool "
        "!restartCount=5:int32 !image=6:string !imageID=7:string containerID=8:string "
        "?started=9:bool allocatedResources=10:{}Quantity resources=11:ResourceRequirements "
        "volumeMounts=12:[]VolumeMountStatus user=13:ContainerUser "
        "allocatedResourcesStatus=14:[]ResourceStatus ?stopSignal=15:string"
    ),
    "PodResourceClaimStatus": "!name=1:string ?resourceClaimName=2:string",
    "PodExtendedResourceClaimStatus": (
        "requestMappings=1:[]ContainerExtendedResourceRequest !resourceClaimName=2:string"
    ),
    "Taint": "!key=1:string value=2:string !effect=3:string timeAdded=4:Time",
    "NodeConfigSource": "configMap=2:ConfigMapNodeConfigSource",
    "NodeCondition": (
        "!type=1:string !status=2:string lastHeartbeatTime=3:Time lastTransitionTime=4:Time "
        "reason=5:string message=6:string"
    ),
    "NodeAddress": "!type=1:string !address=2:string",
    "NodeDaemonEndpoints": "kubeletEndpoint=1:DaemonEndpoint",
    "NodeSystemInfo": (
        "!machineID=1:string !systemUUID=2:string !bootID=3:string !kernelVersion=4:string "
        "!osImage=5:string !containerRuntimeVersion=6:string !kubeletVersion=7:string "
        "!kubeProxyVersion=8:string !operatingSystem=9:string !architecture=10:string "
        "swap=11:NodeSwapStatus"
    ),
    "ContainerImage": "names=1:[]string sizeBytes=2:int64",
    "AttachedVolume": "!name=1:string !devicePath=2:string",
    "NodeConfigStatus": (
        "assigned=1:NodeConfigSource active=2:NodeConfigSource lastKnownGood=3:NodeConfigSource "
        "error=4:string"
    ),
    "NodeRuntimeHandler": "!name=1:string features=2:NodeRuntimeHandlerFeatures",
    "NodeFeatures": "?supplementalGroupsPolicy=1:bool",
    "PodTemplateSpec": "metadata=1:meta.ObjectMeta spec=2:PodSpec",
    "ReplicationControllerCondition": (
        "!type=1:string !status=2:string lastTransitionTime=3:Time reason=4:string message=5:string"
    ),
    "ClientIPConfig": "?timeoutSeconds=1:int32",
    "LoadBalancerIngress": "ip=1:string hostname=2:string ?ipMode=3:string ports=4:[]PortStatus",
    "ContainerPort": (
        "name=1:string hostPort=2:int32 !containerPort=3:int32 protocol=4:string hostIP=5:string"
    ),
    "EnvFromSource": (
        "prefix=1:string configMapRef=2:ConfigMapEnvSource secretRef=3:SecretEnvSource"
    ),
    "EnvVar": "!name=1:string value=2:string valueFrom=3:EnvVarSource",
    "ContainerResizePolicy": "!resourceName=1:string !restartPolicy=2:string",
    "ContainerRestartRule": "action=1:string exitCodes=2:ContainerRestartRuleOnExitCodes",
    "VolumeMount": (
        "!name=1:string readOnly=2:bool ?recursiveReadOnly=7:string !mountPath=3:string "
        "subPath=4:string ?mountPropagation=5:string subPathExpr=6:string"
    ),
    "VolumeDevice": "!name=1:string !devicePath=2:string",
    "Probe": (
        "@handler=1:ProbeHandler initialDelaySeconds=2:int32 timeoutSeconds=3:int32 "
        "periodSeconds=4:int32 successThreshold=5:int32 failureThreshold=6:int32 "
        "?terminationGracePeriodSeconds=7:int64"
    ),
    "Lifecycle": "postStart=1:LifecycleHandler preStop=2:LifecycleHandler ?stopSignal=3:string",
    "SecurityContext": (
        "capabilities=1:Capabilities ?privileged=2:bool seLinuxOptions=3:SELinuxOptions "
        "windowsOptions=10:WindowsSecurityContextOptions ?runAsUser=4:int64 ?runAsGroup=8:int64 "
        "?runAsNonRoot=5:bool ?readOnlyRootFilesystem=6:bool ?allowPrivilegeEscalation=7:bool "
        "?procMount=9:string seccompProfile=11:SeccompProfile "
        "appArmorProfile=12:AppArmorProfile"
    ),
    "EphemeralContainerCommon": (
        "!name=1:string image=2:string command=3:[]string args=4:[]string workingDir=5:string "
        "ports=6:[]ContainerPort envFrom=19:[]EnvFromSource env=7:[]EnvVar "
        "resources=8:ResourceRequirements resizePolicy=23:[]ContainerResizePolicy "
        "?restartPolicy=24:string restartPolicyRules=25:[]ContainerRestartRule "
        "volumeMounts=9:[]VolumeMount volumeDevices=21:[]VolumeDevice livenessProbe=10:Probe "
        "readinessProbe=11:Probe startupProbe=22:Probe lifecycle=12:Lifecycle "
        "terminationMessagePath=13:string terminationMessagePolicy=20:string "
        "imagePullPolicy=14:string securityContext=15:SecurityContext stdin=16:bool "
        "stdinOnce=17:bool tty=18:bool"
    ),
    "SELinuxOptions": "user=1:string role=2:string type=3:string level=4:string",
    "WindowsSecurityContextOptions": (
        "?gmsaCredentialSpecName=1:string ?gmsaCredentialSpec=2:string ?runAsUserName=3:string "
        "?hostProcess=4:bool"
    ),
    "Sysctl": "!name=1:string !value=2:string",
    "SeccompProfile": "!type=1:string ?localhostProfile=2:string",
    "AppArmorProfile": "!type=1:string ?localhostProfile=2:string",
    "NodeAffinity": (
        "requiredDuringSchedulingIgnoredDuringExecution=1:NodeSelector "
        "preferredDuringSchedulingIgnoredDuringExecution=2:[]PreferredSchedulingTerm"
    ),
    "PodAffinity": (
        "requiredDuringSchedulingIgnoredDuringExecution=1:[]PodAffinityTerm "
        "preferredDuringSchedulingIgnoredDuringExecution=2:[]WeightedPodAffinityTerm"
    ),
    "PodAntiAffinity": (
        "requiredDuringSchedulingIgnoredDuringExecution=1:[]PodAffinityTerm "
        "preferredDuringSchedulingIgnoredDuringExecution=2:[]WeightedPodAffinityTerm"
    ),
    "PodDNSConfigOption": "name=1:string ?value=2:string",
    "ResourceClaim": "!name=1:string request=2:string",
    "ContainerState": (
        "waiting=1:ContainerStateWaiting running=2:ContainerStateRunning "
        "terminated=3:ContainerStateTerminated"
    ),
    "VolumeMountStatus": (
        "!name=1:string !mountPath=2:string readOnly=3:bool ?recursiveReadOnly=4:string"
    ),
    "ContainerUser": "linux=1:LinuxContainerUser",
    "ResourceStatus": "!name=1:string resources=2:[]ResourceHealth",
    "ContainerExtendedResourceRequest": (
        "!containerName=1:string !resourceName=2:string !requestName=3:string"
    ),
    "ConfigMapNodeConfigSource": (
        "!namespace=1:string !name=2:string uid=3:string resourceVersion=4:string "
        "!kubeletConfigKey=5:string"
    ),
    "DaemonEndpoint": "!Port=1:int32",
    "NodeSwapStatus": "?capacity=1:int64",
    "NodeRuntimeHandlerFeatures": "?recursiveReadOnlyMounts=1:bool ?userNamespaces=2:bool",
    "PortStatus": "!port=1:int32 !protocol=2:string ?error=3:string",
    "ConfigMapEnvSource": "@localObjectReference=1:LocalObjectReference ?optional=2:bool",
    "SecretEnvSource": "@localObjectReference=1:LocalObjectReference ?optional=2:bool",
    "EnvVarSource": (
        "fieldRef=1:ObjectFieldSelector resourceFieldRef=2:ResourceFieldSelector "
        "configMapKeyRef=3:ConfigMapKeySelector secretKeyRef=4:SecretKeySelector "
        "fileKeyRef=5:FileKeySelector"
    ),
    "ContainerRestartRuleOnExitCodes": "operator=1:string values=2:[]int32",
    "ProbeHandler": (
        "exec=1:ExecAction httpGet=2:HTTPGetAction tcpSocket=3:TCPSocketAction grpc=4:GRPCAction"
    ),
    "LifecycleHandler": (
        "exec=1:ExecAction httpGet=2:HTTPGetAction tcpSocket=3:TCPSocketAction sleep=4:SleepAction"
    ),
    "Capabilities": "add=1:[]string drop=2:[]string",
    "NodeSelector": "nodeSelectorTerms=1:[]NodeSelectorTerm",
    "PreferredSchedulingTerm": "!weight=1:int32 preference=2:NodeSelectorTerm",
    "PodAffinityTerm": (
        "labelSelector=1:meta.LabelSelector namespaces=2:[]string !topologyKey=3:string "
        "namespaceSelector=4:meta.LabelSelector matchLabelKeys=5:[]string "
        "mismatchLabelKeys=6:[]string"
    ),
    "WeightedPodAffinityTerm": "!weight=1:int32 podAffinityTerm=2:PodAffinityTerm",
    "ContainerStateWaiting": "reason=1:string message=2:string",
    "ContainerStateRunning": "startedAt=1:Time",
    "ContainerStateTerminated": (
        "!exitCode=1:int32 signal=2:int32 reason=3:string message=4:string startedAt=5:Time "
        "finishedAt=6:Time containerID=7:string"
    ),
    "LinuxContainerUser": "!uid=1:int64 !gid=2:int64 supplementalGroups=3:[]int64",
    "ResourceHealth": "!resourceID=1:string health=2:string",
    "ObjectFieldSelector": "apiVersion=1:string !fieldPath=2:string",
    "ResourceFieldSelector": "containerName=1:string !resource=2:string divisor=3:Quantity",
    "ConfigMapKeySelector": (
        "@localObjectReference=1:LocalObjectReference !key=2:string ?optional=3:bool"
    ),
    "SecretKeySelector": (
        "@localObjectReference=1:LocalObjectReference !key=2:string ?optional=3:bool"
    ),
    "FileKeySelector": "!volumeName=1:string !path=2:string !key=3:string ?optional=4:bool",
    "ExecAction": "command=1:[]string",
    "HTTPGetAction": (
        "path=1:string port=2:IntOrString host=3:string scheme=4:string httpHeaders=5:[]HTTPHeader"
    ),
    "TCPSocketAction": "port=1:IntOrString host=2:string",
    "GRPCAction": "!port=1:int32 ?service=2:string",
    "SleepAction": "!seconds=1:int64",
    "NodeSelectorTerm": (
        "matchExpressions=1:[]NodeSelectorRequirement matchFields=2:[]NodeSelectorRequirement"
    ),
    "HTTPHeader": "!name=1:string !value=2:string",
    "NodeSelectorRequirement": "!key=1:string !operator=2:string values=3:[]string",
}
