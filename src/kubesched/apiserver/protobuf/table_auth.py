"""The protobuf table of the self-reviews kubectl sends (``kubectl auth can-i``,
``kubectl auth whoami``): authorization.k8s.io/v1 and authentication.k8s.io/v1.

Field numbers are wire facts of release-1.34's ``generated.proto`` files; every field
here is ``omitempty`` in Go but FieldSelectorRequirement's key and operator. Only what a
request carries is listed: the reviews' status is the server's answer, never read from a
body (a status field on the wire is skipped as an unknown field). Notation:
:mod:`.schema`.
"""

#: k8s.io.api.authorization.v1
AUTHORIZATION: dict[str, str] = {
    "SelfSubjectAccessReview": "metadata=1:meta.ObjectMeta spec=2:SelfSubjectAccessReviewSpec",
    "SelfSubjectAccessReviewSpec": (
        "resourceAttributes=1:ResourceAttributes nonResourceAttributes=2:NonResourceAttributes"
    ),
    "ResourceAttributes": (
        "namespace=1:string verb=2:string group=3:string version=4:string resource=5:string "
        "subresource=6:string name=7:string fieldSelector=8:FieldSelectorAttributes "
        "labelSelector=9:LabelSelectorAttributes"
    ),
    "NonResourceAttributes": "path=1:string verb=2:string",
    "FieldSelectorAttributes": ("rawSelector=1:string requirements=2:[]FieldSelectorRequirement"),
    "FieldSelectorRequirement": "!key=1:string !operator=2:string values=3:[]string",
    "LabelSelectorAttributes": (
        "rawSelector=1:string requirements=2:[]meta.LabelSelectorRequirement"
    ),
    "SelfSubjectRulesReview": "metadata=1:meta.ObjectMeta spec=2:SelfSubjectRulesReviewSpec",
    "SelfSubjectRulesReviewSpec": "namespace=1:string",
}

#: k8s.io.api.authentication.v1
AUTHENTICATION: dict[str, str] = {
    "SelfSubjectReview": "metadata=1:meta.ObjectMeta",
}
