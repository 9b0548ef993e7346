"""The Job controller (``pkg/controller/job`` upstream)."""

from kubesched.controllers.job.job_controller import (
    JOBS,
    NAME,
    JobController,
    start_job_controller,
)

__all__ = ["JOBS", "NAME", "JobController", "start_job_controller"]
