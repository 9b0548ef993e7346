"""The CronJob controller (``pkg/controller/cronjob`` upstream)."""

from kubesched.controllers.cronjob.cronjob_controller import (
    CRONJOBS,
    NAME,
    CronJobController,
    start_cronjob_controller,
)

__all__ = ["CRONJOBS", "NAME", "CronJobController", "start_cronjob_controller"]
