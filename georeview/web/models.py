"""The job queue: reviews and screenings run by worker processes, out of the request.

A page that starts a review or a screening adds a :class:`Job` row and returns; a worker
(:mod:`georeview.web.jobs`) claims the oldest queued job in a transaction, runs it and
writes its progress and result to the row, which the page polls. A job is never lost with
a server: queued jobs wait in the database for the next worker, and a job that was running
when its server stopped is marked failed, visibly, when the server starts again.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.db import models

__all__ = ["Job"]


class Job(models.Model):
    """One review or screening to run."""

    class Kind(models.TextChoices):
        """What the job runs."""

        REVIEW = "review", "Review of a round"
        SCREEN = "screen", "Screening of a parcel file"

    class State(models.TextChoices):
        """Where the job stands."""

        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    #: the case a review is for (none for a screening)
    case = models.ForeignKey(
        "cases.Case", null=True, blank=True, on_delete=models.PROTECT, related_name="jobs"
    )
    #: what the worker needs: a screening's files and layers, relative to the workspace
    params = models.JSONField(default=dict)
    #: who asked for it
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="jobs"
    )
    by = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    #: seconds the work took in the worker (start to finish, the libraries already loaded)
    seconds = models.FloatField(null=True, blank=True)
    #: done / total of what the job counts (a screening's partitions)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    #: which worker runs it: host and process id
    worker = models.CharField(max_length=120, blank=True)
    #: the running worker's last sign of life: a job whose worker fell silent is failed
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    #: the outcome: a review's number and recommendation, a screening's counts and files
    result = models.JSONField(default=dict)
    #: why it failed, in one line (bad input, or the server stopped while it ran)
    error = models.TextField(blank=True)

    class Meta:
        """Oldest first; the queue's index on state and id."""

        ordering: ClassVar[list[str]] = ["id"]
        indexes: ClassVar[list[Any]] = [models.Index(fields=["state", "id"], name="job_queue")]

    def __str__(self) -> str:
        return f"job {self.id} ({self.kind}, {self.state})"
