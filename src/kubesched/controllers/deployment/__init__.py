"""The Deployment controller, split as upstream's ``pkg/controller/deployment`` folder:
:mod:`.controller` (handlers, workers, ``syncDeployment``), :mod:`.sync` (new
ReplicaSets, scaling, history cleanup, status), :mod:`.rolling`, :mod:`.recreate` and
:mod:`.progress`. Rollbacks need nothing here: ``kubectl rollout undo`` copies an old
ReplicaSet's template into the Deployment, which then rolls out like any change.
"""

from kubesched.controllers.deployment.controller import DEPLOYMENTS, DeploymentController

__all__ = ["DEPLOYMENTS", "DeploymentController"]
