"""The protobuf table of k8s.io/apimachinery meta/v1 messages the decoder needs.

Field numbers and types are wire facts of release-1.34's ``pkg/apis/meta/v1/generated.proto``;
presence follows the Go struct tags of ``types.go``. Time, MicroTime, FieldsV1, Quantity,
IntOrString and RawExtension are built into the schema (:mod:`.schema`), not listed here.

Each entry is one message in the tables' notation (see :mod:`.schema`).
"""

#: k8s.io.apimachinery.pkg.apis.meta.v1
META: dict[str, str] = {
    "DeleteOptions": (
        "?gracePeriodSeconds=1:int64 preconditions=2:Preconditions ?orphanDependents=3:bool "
        "?propagationPolicy=4:string dryRun=5:[]string "
        "?ignoreStoreReadErrorWithClusterBreakingPotential=6:bool"
    ),
    "ObjectMeta": (
        "name=1:string generateName=2:string namespace=3:string selfLink=4:string uid=5:string "
        "resourceVersion=6:string generation=7:int64 creationTimestamp=8:Time "
        "deletionTimestamp=9:Time ?deletionGracePeriodSeconds=10:int64 labels=11:{}string "
        "annotations=12:{}string ownerReferences=13:[]OwnerReference finalizers=14:[]string "
        "managedFields=17:[]ManagedFieldsEntry"
    ),
    "Preconditions": "?uid=1:string ?resourceVersion=2:string",
    "OwnerReference": (
        "!apiVersion=5:string !kind=1:string !name=3:string !uid=4:string ?controller=6:bool "
        "?blockOwnerDeletion=7:bool"
    ),
    "ManagedFieldsEntry": (
        "manager=1:string operation=2:string apiVersion=3:string time=4:Time "
        "fieldsType=6:string fieldsV1=7:FieldsV1 subresource=8:string"
    ),
    "Condition": (
        "!type=1:string !status=2:string observedGeneration=3:int64 lastTransitionTime=4:Time "
        "!reason=5:string !message=6:string"
    ),
    "LabelSelector": "matchLabels=1:{}string matchExpressions=2:[]LabelSelectorRequirement",
    "LabelSelectorRequirement": "!key=1:string !operator=2:string values=3:[]string",
}
