"""The protobuf table of the API groups besides core the server stores: policy/v1,
scheduling.k8s.io/v1, coordination.k8s.io/v1, events.k8s.io/v1, apps/v1 (Deployment,
ReplicaSet, StatefulSet, DaemonSet, ControllerRevision), batch/v1 (Job, CronJob) and
autoscaling/v1 (Scale, the scale subresource's body).

Field numbers and types are wire facts of release-1.34's ``generated.proto`` files;
presence follows the Go struct tags of each ``types.go``.

Each entry is one message in the tables' notation (see :mod:`.schema`).
"""

#: k8s.io.api.policy.v1
POLICY: dict[str, str] = {
    "PodDisruptionBudget": (
        "metadata=1:meta.ObjectMeta spec=2:PodDisruptionBudgetSpec "
        "status=3:PodDisruptionBudgetStatus"
    ),
    "Eviction": "metadata=1:meta.ObjectMeta deleteOptions=2:meta.DeleteOptions",
    "PodDisruptionBudgetSpec": (
        "minAvailable=1:IntOrString selector=2:meta.LabelSelector maxUnavailable=3:IntOrString "
        "?unhealthyPodEvictionPolicy=4:string"
    ),
    "PodDisruptionBudgetStatus": (
        "observedGeneration=1:int64 disruptedPods=2:{}Time !disruptionsAllowed=3:int32 "
        "!currentHealthy=4:int32 !desiredHealthy=5:int32 !expectedPods=6:int32 "
        "conditions=7:[]meta.Condition"
    ),
}

#: k8s.io.api.scheduling.v1
SCHEDULING: dict[str, str] = {
    "PriorityClass": (
        "metadata=1:meta.ObjectMeta !value=2:int32 globalDefault=3:bool description=4:string "
        "?preemptionPolicy=5:string"
    ),
}

#: k8s.io.api.coordination.v1
COORDINATION: dict[str, str] = {
    "Lease": "metadata=1:meta.ObjectMeta spec=2:LeaseSpec",
    "LeaseSpec": (
        "?holderIdentity=1:string ?leaseDurationSeconds=2:int32 acquireTime=3:MicroTime "
        "renewTime=4:MicroTime ?leaseTransitions=5:int32 ?strategy=6:string "
        "?preferredHolder=7:string"
    ),
}

#: k8s.io.api.events.v1
EVENTS: dict[str, str] = {
    "Event": (
        "metadata=1:meta.ObjectMeta eventTime=2:MicroTime series=3:EventSeries "
        "reportingController=4:string reportingInstance=5:string action=6:string "
        "reason=7:string regarding=8:core.ObjectReference related=9:core.ObjectReference "
        "note=10:string type=11:string deprecatedSource=12:core.EventSource "
        "deprecatedFirstTimestamp=13:Time deprecatedLastTimestamp=14:Time "
        "deprecatedCount=15:int32"
    ),
    "EventSeries": "!count=1:int32 lastObservedTime=2:MicroTime",
}

#: k8s.io.api.apps.v1
APPS: dict[str, str] = {
    "Deployment": "metadata=1:meta.ObjectMeta spec=2:DeploymentSpec status=3:DeploymentStatus",
    "DeploymentSpec": (
        "?replicas=1:int32 selector=2:meta.LabelSelector template=3:core.PodTemplateSpec "
        "strategy=4:DeploymentStrategy minReadySeconds=5:int32 ?revisionHistoryLimit=6:int32 "
        "paused=7:bool ?progressDeadlineSeconds=9:int32"
    ),
    "DeploymentStatus": (
        "observedGeneration=1:int64 replicas=2:int32 updatedReplicas=3:int32 "
        "readyReplicas=7:int32 availableReplicas=4:int32 unavailableReplicas=5:int32 "
        "?terminatingReplicas=9:int32 conditions=6:[]DeploymentCondition "
        "?collisionCount=8:int32"
    ),
    "DeploymentStrategy": "type=1:string rollingUpdate=2:RollingUpdateDeployment",
    "RollingUpdateDeployment": "maxUnavailable=1:IntOrString maxSurge=2:IntOrString",
    "DeploymentCondition": (
        "!type=1:string !status=2:string lastUpdateTime=6:Time lastTransitionTime=7:Time "
        "reason=4:string message=5:string"
    ),
    "ReplicaSet": "metadata=1:meta.ObjectMeta spec=2:ReplicaSetSpec status=3:ReplicaSetStatus",
    "StatefulSet": "metadata=1:meta.ObjectMeta spec=2:StatefulSetSpec status=3:StatefulSetStatus",
    "ReplicaSetSpec": (
        "?replicas=1:int32 minReadySeconds=4:int32 selector=2:meta.LabelSelector "
        "template=3:core.PodTemplateSpec"
    ),
    "ReplicaSetStatus": (
        "!replicas=1:int32 fullyLabeledReplicas=2:int32 readyReplicas=4:int32 "
        "availableReplicas=5:int32 ?terminatingReplicas=7:int32 observedGeneration=3:int64 "
        "conditions=6:[]ReplicaSetCondition"
    ),
    "StatefulSetSpec": (
        "?replicas=1:int32 selector=2:meta.LabelSelector template=3:core.PodTemplateSpec "
        "volumeClaimTemplates=4:[]core.PersistentVolumeClaim !serviceName=5:string "
        "podManagementPolicy=6:string updateStrategy=7:StatefulSetUpdateStrategy "
        "?revisionHistoryLimit=8:int32 minReadySeconds=9:int32 "
        "persistentVolumeClaimRetentionPolicy=10:StatefulSetPersistentVolumeClaimRetentionPolicy "
        "ordinals=11:StatefulSetOrdinals"
    ),
    "StatefulSetStatus": (
        "observedGeneration=1:int64 !replicas=2:int32 readyReplicas=3:int32 "
        "currentReplicas=4:int32 updatedReplicas=5:int32 currentRevision=6:string "
        "updateRevision=7:string ?collisionCount=9:int32 conditions=10:[]StatefulSetCondition "
        "!availableReplicas=11:int32"
    ),
    "ReplicaSetCondition": (
        "!type=1:string !status=2:string lastTransitionTime=3:Time reason=4:string message=5:string"
    ),
    "StatefulSetUpdateStrategy": "type=1:string rollingUpdate=2:RollingUpdateStatefulSetStrategy",
    "StatefulSetPersistentVolumeClaimRetentionPolicy": "whenDeleted=1:string whenScaled=2:string",
    "StatefulSetOrdinals": "!start=1:int32",
    "StatefulSetCondition": (
        "!type=1:string !status=2:string lastTransitionTime=3:Time reason=4:string message=5:string"
    ),
    "RollingUpdateStatefulSetStrategy": "?partition=1:int32 maxUnavailable=2:IntOrString",
    "DaemonSet": "metadata=1:meta.ObjectMeta spec=2:DaemonSetSpec status=3:DaemonSetStatus",
    "DaemonSetSpec": (
        "selector=1:meta.LabelSelector template=2:core.PodTemplateSpec "
        "updateStrategy=3:DaemonSetUpdateStrategy minReadySeconds=4:int32 "
        "?revisionHistoryLimit=6:int32"
    ),
    "DaemonSetUpdateStrategy": "type=1:string rollingUpdate=2:RollingUpdateDaemonSet",
    "RollingUpdateDaemonSet": "maxUnavailable=1:IntOrString maxSurge=2:IntOrString",
    "DaemonSetStatus": (
        "!currentNumberScheduled=1:int32 !numberMisscheduled=2:int32 "
        "!desiredNumberScheduled=3:int32 !numberReady=4:int32 observedGeneration=5:int64 "
        "updatedNumberScheduled=6:int32 numberAvailable=7:int32 numberUnavailable=8:int32 "
        "?collisionCount=9:int32 conditions=10:[]DaemonSetCondition"
    ),
    "DaemonSetCondition": (
        "!type=1:string !status=2:string lastTransitionTime=3:Time reason=4:string message=5:string"
    ),
    "ControllerRevision": "metadata=1:meta.ObjectMeta data=2:RawExtension !revision=3:int64",
}

#: k8s.io.api.batch.v1
BATCH: dict[str, str] = {
    "Job": "metadata=1:meta.ObjectMeta spec=2:JobSpec status=3:JobStatus",
    "JobSpec": (
        "?parallelism=1:int32 ?completions=2:int32 ?activeDeadlineSeconds=3:int64 "
        "podFailurePolicy=11:PodFailurePolicy successPolicy=16:SuccessPolicy "
        "?backoffLimit=7:int32 ?backoffLimitPerIndex=12:int32 ?maxFailedIndexes=13:int32 "
        "selector=4:meta.LabelSelector ?manualSelector=5:bool template=6:core.PodTemplateSpec "
        "?ttlSecondsAfterFinished=8:int32 ?completionMode=9:string ?suspend=10:bool "
        "?podReplacementPolicy=14:string ?managedBy=15:string"
    ),
    "JobStatus": (
        "conditions=1:[]JobCondition startTime=2:Time completionTime=3:Time active=4:int32 "
        "succeeded=5:int32 failed=6:int32 ?terminating=11:int32 completedIndexes=7:string "
        "?failedIndexes=10:string uncountedTerminatedPods=8:UncountedTerminatedPods "
        "?ready=9:int32"
    ),
    "JobCondition": (
        "!type=1:string !status=2:string lastProbeTime=3:Time lastTransitionTime=4:Time "
        "reason=5:string message=6:string"
    ),
    "PodFailurePolicy": "rules=1:[]PodFailurePolicyRule",
    "PodFailurePolicyRule": (
        "!action=1:string onExitCodes=2:PodFailurePolicyOnExitCodesRequirement "
        "onPodConditions=3:[]PodFailurePolicyOnPodConditionsPattern"
    ),
    "PodFailurePolicyOnExitCodesRequirement": (
        "?containerName=1:string !operator=2:string values=3:[]int32"
    ),
    "PodFailurePolicyOnPodConditionsPattern": "!type=1:string !status=2:string",
    "SuccessPolicy": "rules=1:[]SuccessPolicyRule",
    "SuccessPolicyRule": "?succeededIndexes=1:string ?succeededCount=2:int32",
    "UncountedTerminatedPods": "succeeded=1:[]string failed=2:[]string",
    "CronJob": "metadata=1:meta.ObjectMeta spec=2:CronJobSpec status=3:CronJobStatus",
    "CronJobSpec": (
        "!schedule=1:string ?timeZone=8:string ?startingDeadlineSeconds=2:int64 "
        "concurrencyPolicy=3:string ?suspend=4:bool jobTemplate=5:JobTemplateSpec "
        "?successfulJobsHistoryLimit=6:int32 ?failedJobsHistoryLimit=7:int32"
    ),
    "JobTemplateSpec": "metadata=1:meta.ObjectMeta spec=2:JobSpec",
    "CronJobStatus": (
        "active=1:[]core.ObjectReference lastScheduleTime=4:Time lastSuccessfulTime=5:Time"
    ),
}

#: k8s.io.api.autoscaling.v1
AUTOSCALING: dict[str, str] = {
    "Scale": "metadata=1:meta.ObjectMeta spec=2:ScaleSpec status=3:ScaleStatus",
    "ScaleSpec": "replicas=1:int32",
    "ScaleStatus": "!replicas=1:int32 selector=2:string",
}
