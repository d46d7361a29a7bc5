"""The Village's record of a review, as database tables (Django models).

One **case** is one application for one site. Each submission the Village receives for it
is a **round**: its files as received (:class:`RoundFile`, checksummed, never replaced) and
the reviews of them (:class:`Review`). What the Village decides lives in the case:
**determinations** (a change is a new row that supersedes the last, never an edit),
reviewer **actions** on findings (comments, conditions, internal notes, "verified on sheet
X"), **decisions** with their outcome, **letters**, **payments**, and an **audit trail**
(:class:`AuditEvent`) that georeview only ever appends to.

Every change to a case runs in one transaction that locks the case's row and bumps its
``revision`` (:mod:`georeview.cases.service`): two reviewers acting on one case at once
both apply, in turn, and a change made from a stale view (``expected_revision``) is refused
with who changed the case since. The schema changes only by migrations made with
``django-admin makemigrations`` (``georeview/cases/migrations``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.db import models

__all__ = [
    "Action",
    "AuditEvent",
    "Case",
    "CaseSequence",
    "Decision",
    "Determination",
    "InspectionCheck",
    "Letter",
    "Payment",
    "Review",
    "Round",
    "RoundFile",
    "Status",
]


class Status(models.TextChoices):
    """Where a case stands (the register's ``status``)."""

    RECEIVED = "received", "Received"
    UNDER_REVIEW = "under_review", "Under review"
    RETURNED = "returned", "Returned to the applicant"
    APPROVED = "approved", "Approved"
    APPROVED_WITH_CONDITIONS = "approved_with_conditions", "Approved with conditions"
    DISAPPROVED = "disapproved", "Disapproved"
    PERMIT_ISSUED = "permit_issued", "Permit issued"
    CLOSED = "closed", "Closed"
    WITHDRAWN = "withdrawn", "Withdrawn"


class CaseSequence(models.Model):
    """The last sequence number given to a municipality's cases of one year."""

    municipality = models.CharField(max_length=40)
    year = models.PositiveIntegerField()
    last = models.PositiveIntegerField(default=0)

    class Meta:
        constraints: ClassVar[list[Any]] = [
            models.UniqueConstraint(fields=["municipality", "year"], name="one_sequence_per_year")
        ]


class Case(models.Model):
    """One application for one site, from intake to closing."""

    number = models.CharField(max_length=32, unique=True, help_text="e.g. SOM-2026-0001")
    municipality = models.CharField(max_length=40)
    year = models.PositiveIntegerField()
    sequence = models.PositiveIntegerField()
    title = models.CharField(max_length=300, help_text="the submission's project name")
    applicant = models.CharField(max_length=200)
    contact = models.CharField(max_length=400, blank=True)
    site_address = models.CharField(max_length=300, blank=True)
    parcel_id = models.CharField(max_length=100, blank=True)
    #: the applicant's account in the web workspace (a case opened at the counter has none
    #: until the Village links one): the one applicant who may see the case
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="cases",
    )
    #: the site's centre in WGS 84, for the register's map (from the first review)
    site_lon = models.FloatField(null=True, blank=True)
    site_lat = models.FloatField(null=True, blank=True)
    received_on = models.DateField(help_text="receipt of the application (round 1)")
    status = models.CharField(max_length=32, choices=Status.choices, default=Status.RECEIVED)
    issued_on = models.DateField(null=True, blank=True, help_text="the permit's issue date")
    closed_on = models.DateField(null=True, blank=True)
    #: bumped by every change to the case: a change from a stale view is refused
    revision = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering: ClassVar[list[str]] = ["municipality", "year", "sequence"]
        constraints: ClassVar[list[Any]] = [
            models.UniqueConstraint(
                fields=["municipality", "year", "sequence"], name="one_case_per_number"
            )
        ]

    def __str__(self) -> str:
        return self.number


class Round(models.Model):
    """One submission received for a case: its files exactly as received."""

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="rounds")
    number = models.PositiveIntegerField()
    received_on = models.DateField()
    received_at = models.DateTimeField(auto_now_add=True)
    received_by = models.CharField(max_length=200)
    #: the folder or zip name it came as
    source_name = models.CharField(max_length=300)
    #: the files' folder, relative to the workspace
    folder = models.CharField(max_length=500)
    #: sha256 of the manifest (every file's path, size and sha256, sorted)
    manifest_sha256 = models.CharField(max_length=64)

    class Meta:
        ordering: ClassVar[list[str]] = ["case", "number"]
        constraints: ClassVar[list[Any]] = [
            models.UniqueConstraint(fields=["case", "number"], name="one_round_per_number")
        ]

    def __str__(self) -> str:
        return f"{self.case.number} round {self.number}"


class RoundFile(models.Model):
    """One file of a round, as received."""

    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="files")
    path = models.CharField(max_length=500, help_text="relative to the submission folder")
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)

    class Meta:
        ordering: ClassVar[list[str]] = ["round", "path"]
        constraints: ClassVar[list[Any]] = [
            models.UniqueConstraint(fields=["round", "path"], name="one_file_per_path")
        ]


class Review(models.Model):
    """One run of georeview's review on a round (a round is re-reviewed after determinations)."""

    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="reviews")
    number = models.PositiveIntegerField()
    at = models.DateTimeField(auto_now_add=True)
    by = models.CharField(max_length=200)
    #: report.json, report.html, map.html and layers.gpkg, relative to the workspace
    folder = models.CharField(max_length=500)
    report_sha256 = models.CharField(max_length=64)
    georeview_version = models.CharField(max_length=40)
    #: report.json summary.outcome.code: the review's recommendation
    outcome = models.CharField(max_length=40)
    #: report.json summary.counts
    counts = models.JSONField(default=dict)
    #: the ids of the determinations the review read (the case's current ones then)
    determination_ids = models.JSONField(default=list)

    class Meta:
        ordering: ClassVar[list[str]] = ["round", "number"]
        constraints: ClassVar[list[Any]] = [
            models.UniqueConstraint(fields=["round", "number"], name="one_review_per_number")
        ]


class Determination(models.Model):
    """One decision of the Village on a ``village.*`` fact; a later one supersedes it."""

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="determinations")
    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="determinations")
    fact = models.CharField(max_length=120)
    #: the value as JSON (true, 12500.0, "text"; a date as "YYYY-MM-DD")
    value = models.JSONField()
    by = models.CharField(max_length=200, help_text="who decided")
    decided_on = models.DateField()
    reason = models.TextField()
    supersedes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by"
    )
    #: how it came: "recorded" or "imported from <file name>"
    source = models.CharField(max_length=300, default="recorded")
    recorded_by = models.CharField(max_length=200)
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar[list[str]] = ["case", "fact", "id"]


class Action(models.Model):
    """A reviewer's action on a finding (or on the submission as a whole)."""

    class Kind(models.TextChoices):
        COMMENT = "comment", "Comment to the applicant"
        CONDITION = "condition", "Condition of approval"
        NOTE = "note", "Internal note"
        VERIFIED = "verified", "Verified on the sheet"

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="actions")
    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="actions")
    number = models.PositiveIntegerField(help_text="per case: comment 3, condition 1, ...")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    #: the finding it is on (report.json findings[].rule_id), blank for the whole submission
    rule_id = models.CharField(max_length=160, blank=True)
    citation = models.CharField(max_length=120, blank=True)
    sheet = models.CharField(max_length=120, blank=True)
    text = models.TextField()
    #: for "verified": the applicant's words checked (a later round with other words is
    #: not verified by it)
    declared = models.TextField(blank=True)
    by = models.CharField(max_length=200)
    at = models.DateTimeField(auto_now_add=True)
    #: a comment or condition closed: in which round, by whom, why ("fixed", "withdrawn")
    resolved_round = models.ForeignKey(
        Round, null=True, blank=True, on_delete=models.PROTECT, related_name="resolved_actions"
    )
    resolved_by = models.CharField(max_length=200, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering: ClassVar[list[str]] = ["case", "number"]
        constraints: ClassVar[list[Any]] = [
            models.UniqueConstraint(fields=["case", "number"], name="one_action_per_number")
        ]

    @property
    def for_applicant(self) -> bool:
        """Whether the applicant may read it (never an internal note)."""
        return self.kind != self.Kind.NOTE


class Decision(models.Model):
    """The Village's decision on a round: return, approve (with conditions) or disapprove."""

    class Outcome(models.TextChoices):
        RETURNED = "returned", "Returned to the applicant"
        APPROVED = "approved", "Approved"
        APPROVED_WITH_CONDITIONS = "approved_with_conditions", "Approved with conditions"
        DISAPPROVED = "disapproved", "Disapproved"

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="decisions")
    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="decisions")
    review = models.ForeignKey(Review, on_delete=models.PROTECT, related_name="decisions")
    outcome = models.CharField(max_length=32, choices=Outcome.choices)
    #: the review's recommendation it was made against (summary.outcome.code)
    recommendation = models.CharField(max_length=40)
    by = models.CharField(max_length=200)
    decided_on = models.DateField()
    #: the written reasons (a disapproval's, or why a decision departs from the review)
    reason = models.TextField(blank=True)
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar[list[str]] = ["case", "id"]


class Letter(models.Model):
    """A letter georeview wrote for a decision: HTML and PDF, kept as written."""

    class Kind(models.TextChoices):
        COMMENT = "comment", "Comment letter"
        APPROVAL = "approval", "Approval"
        DISAPPROVAL = "disapproval", "Disapproval"

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="letters")
    decision = models.ForeignKey(Decision, on_delete=models.PROTECT, related_name="letters")
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    html_path = models.CharField(max_length=500)
    pdf_path = models.CharField(max_length=500, blank=True)
    html_sha256 = models.CharField(max_length=64)
    pdf_sha256 = models.CharField(max_length=64, blank=True)
    pages = models.PositiveIntegerField(null=True, blank=True)
    by = models.CharField(max_length=200)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar[list[str]] = ["case", "number"]
        constraints: ClassVar[list[Any]] = [
            models.UniqueConstraint(fields=["case", "number"], name="one_letter_per_number")
        ]


class Payment(models.Model):
    """A fee paid or a security received, as the Village records it."""

    class Kind(models.TextChoices):
        FEE = "fee", "Fee"
        SECURITY = "security", "Security"

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="payments")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    amount_usd = models.DecimalField(max_digits=12, decimal_places=2)
    received_on = models.DateField()
    note = models.CharField(max_length=300, blank=True)
    by = models.CharField(max_length=200)
    recorded_at = models.DateTimeField(auto_now_add=True)


class InspectionCheck(models.Model):
    """An inspection log and its rain data checked for an approved case, as filed."""

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="inspections")
    number = models.PositiveIntegerField()
    #: the uploaded log, rain file and the check's report, relative to the workspace
    log_path = models.CharField(max_length=500)
    rain_path = models.CharField(max_length=500)
    report_path = models.CharField(max_length=500)
    #: the check's status line and counts (georeview.procedure.inspections)
    status = models.CharField(max_length=40)
    summary = models.JSONField(default=dict)
    by = models.CharField(max_length=200)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar[list[str]] = ["case", "number"]
        constraints: ClassVar[list[Any]] = [
            models.UniqueConstraint(fields=["case", "number"], name="one_check_per_number")
        ]


class AuditQuerySet(models.QuerySet["AuditEvent"]):
    """Bulk updates and deletes are refused: the trail is only appended to."""

    def update(self, **kwargs: Any) -> int:
        """Refuse: an audit event is never changed."""
        raise PermissionError("the audit trail cannot be edited")

    def delete(self) -> tuple[int, dict[str, int]]:
        """Refuse: an audit event is never removed."""
        raise PermissionError("the audit trail cannot be edited")


class AuditEvent(models.Model):
    """One change to a case: who, when, what. Chained by hash, per case."""

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="audit")
    seq = models.PositiveIntegerField()
    at = models.DateTimeField()
    actor = models.CharField(max_length=200)
    action = models.CharField(max_length=60)
    detail = models.JSONField(default=dict)
    #: the revision of the case this change made
    revision = models.PositiveIntegerField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering: ClassVar[list[str]] = ["case", "seq"]
        constraints: ClassVar[list[Any]] = [
            models.UniqueConstraint(fields=["case", "seq"], name="one_event_per_seq")
        ]

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Insert only: an event already stored is never saved again."""
        if self.pk is not None or kwargs.get("force_update"):
            raise PermissionError("the audit trail cannot be edited")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        """Refuse: an audit event is never removed."""
        raise PermissionError("the audit trail cannot be edited")
