"""The Job controller (``pkg/controller/job`` upstream)."""

from kubesched.controllers.job.job_controller import JOBS, JobController

__all__ = ["JOBS", "JobController"]
