"""Every change to a case, through one interface (the CLI and the workspace call these).

Each function takes the case number and who acts (``by``), checks what the case's status
and its latest review allow, and makes its change in one transaction that locks the
case's row (:func:`_changing`): it bumps the case's ``revision`` and appends one event to
the audit trail, chained by hash to the one before. Two reviewers acting on one case at
once therefore both apply, one after the other; a change that names the revision it was
made from (``expected_revision``, what a form shows) is refused with
:class:`~georeview.errors.ConflictError` when another came first.

What a reviewer may change is the Village's own: its determinations (each a new row
superseding the last, never an edit), comments, conditions, internal notes, "verified
on sheet X" for a declared item, decisions, payments. A measured or computed result is
never changed: disagreeing with one is a determination with its reason, and the next
review reads it (:func:`review_round`).

The workspace must be open (:func:`georeview.cases.store.open_workspace`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from georeview.cases.lookup import (
    current_determinations,
    current_round,
    get_case,
    latest_review,
    report_of,
)
from georeview.errors import ConflictError, InputError

if TYPE_CHECKING:
    from georeview.cases.models import Action, Case, Decision, Letter, Review, Round
    from georeview.cases.store import Workspace

__all__ = [
    "add_action",
    "close_case",
    "current_determinations",
    "decide",
    "determine",
    "get_case",
    "import_determinations",
    "issue_permit",
    "latest_review",
    "link_owner",
    "open_case",
    "record_inspections",
    "record_payment",
    "resolve_action",
    "resubmit",
    "review_round",
    "verify_audit",
    "withdraw",
    "write_letter",
]

#: Who the audit trail names for what georeview itself does (a review's own resolution).
SYSTEM = "georeview"
#: The review's recommendation (summary.outcome.code) -> the decision it recommends.
RECOMMENDED = {
    "approve": "approved",
    "approve_with_conditions": "approved_with_conditions",
    "return_to_applicant": "returned",
    "disapprove": "disapproved",
}
#: Statuses in which a round is (or may be) under review.
OPEN_STATUSES = ("received", "under_review")
#: Statuses after which nothing but closing is recorded.
FINAL_STATUSES = ("closed", "withdrawn")
#: Finding statuses that settle a comment made on the finding.
SETTLED = ("pass", "not_applicable")


def _now() -> dt.datetime:
    from django.utils import timezone

    return timezone.now()


def _today() -> dt.date:
    from django.utils import timezone

    return timezone.localdate()


def _need(text: str | None, what: str) -> str:
    """Non-empty text, stripped, or an error naming the field."""
    if text is None or not str(text).strip():
        raise InputError(f"{what} must be non-empty text", field=what)
    return str(text).strip()


# ----------------------------------------------------------------- the audit trail


def _event_hash(prev: str, body: Mapping[str, Any]) -> str:
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256((prev + "\n" + text).encode()).hexdigest()


def _event_body(event: Any) -> dict[str, Any]:
    return {
        "case": event.case.number,
        "seq": event.seq,
        "at": event.at.isoformat(),
        "actor": event.actor,
        "action": event.action,
        "detail": event.detail,
        "revision": event.revision,
    }


def _append_event(case: Case, actor: str, action: str, detail: dict[str, Any]) -> None:
    from georeview.cases.models import AuditEvent

    last = case.audit.order_by("-seq").first()
    event = AuditEvent(
        case=case,
        seq=1 if last is None else last.seq + 1,
        at=_now(),
        actor=actor,
        action=action,
        detail=json.loads(json.dumps(detail, default=str)),
        revision=case.revision,
        prev_hash="" if last is None else last.hash,
    )
    event.hash = _event_hash(event.prev_hash, _event_body(event))
    event.save()


def verify_audit(number: str) -> list[str]:
    """Check a case's audit trail against its hash chain; return what is wrong (empty: intact)."""
    case = get_case(number)
    problems, prev = [], ""
    for i, event in enumerate(case.audit.order_by("seq"), start=1):
        if event.seq != i:
            problems.append(f"event {i} is missing (next is {event.seq})")
        if event.prev_hash != prev or event.hash != _event_hash(prev, _event_body(event)):
            problems.append(f"event {event.seq} ({event.action}) was changed outside georeview")
        prev = event.hash
    return problems


@contextmanager
def _changing(
    number: str, *, by: str, action: str, expected_revision: int | None = None
) -> Iterator[tuple[Case, dict[str, Any]]]:
    """Lock a case, yield it and the audit detail to fill; then bump and record the change."""
    from django.db import transaction

    from georeview.cases.models import Case

    by = _need(by, "by")
    with transaction.atomic():
        case = Case.objects.select_for_update().filter(number=str(number).strip().upper()).first()
        if case is None:
            raise InputError(f"no case {number!r} in this workspace", field="case")
        if expected_revision is not None and case.revision != expected_revision:
            last = case.audit.order_by("-seq").first()
            who = (
                ""
                if last is None
                else f": {last.action} by {last.actor} at {last.at:%Y-%m-%d %H:%M}"
            )
            raise ConflictError(
                f"case {case.number} changed since you opened it (revision"
                f" {expected_revision}, now {case.revision}{who}); reload it and try again",
                field="case",
            )
        detail: dict[str, Any] = {}
        yield case, detail
        case.revision += 1
        case.save()
        _append_event(case, by, action, detail)


def _not_final(case: Case, what: str) -> None:
    if case.status in FINAL_STATUSES:
        raise ConflictError(f"case {case.number} is {case.status}: cannot {what}", field="case")


# ----------------------------------------------------------------- intake and reviews


def _submission_meta(folder: Path) -> Any:
    from georeview.config import load_submission_config

    return load_submission_config(folder / "submission.toml", folder=folder)


@contextmanager
def _staged(ws: Workspace, source: Path) -> Iterator[tuple[Path, list[Any], list[Path]]]:
    """A submission copied into a scratch folder of the workspace, its files, and ``made``.

    ``made`` collects the round folders the block files (:func:`_file_round`): if the
    block fails, they are removed with the scratch folder, so a failed intake leaves
    neither a row nor a folder behind.
    """
    from georeview.cases.intake import stage

    scratch = Path(tempfile.mkdtemp(prefix=".incoming-", dir=ws.files))
    made: list[Path] = []
    try:
        yield scratch, stage(Path(source), scratch / "submission"), made
    except BaseException:
        _unfile(made)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _case_code(municipality: str) -> str:
    from georeview.ordinances import table

    code = str(table(municipality, "record").get("case", {}).get("code", "")).strip().upper()
    return code or municipality[:3].upper()


def _next_sequence(municipality: str, year: int) -> int:
    from georeview.cases.models import CaseSequence

    CaseSequence.objects.get_or_create(municipality=municipality, year=year)
    seq = CaseSequence.objects.select_for_update().get(municipality=municipality, year=year)
    seq.last += 1
    seq.save()
    return int(seq.last)


def _unfile(folders: list[Path]) -> None:
    """Remove round folders filed by a change whose transaction then failed (none is recorded)."""
    for folder in folders:
        for p in [folder, *folder.rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(folder, ignore_errors=True)
        # a new case's own folder goes too once its only round is gone
        if folder.parent.is_dir() and not any(folder.parent.iterdir()):
            folder.parent.rmdir()


def _file_round(
    ws: Workspace,
    case: Case,
    number: int,
    scratch: Path,
    files: list[Any],
    made: list[Path],
    **kw: Any,
) -> Round:
    """Move a staged submission into its round's folder, freeze it and record its files.

    The folder is added to ``made`` (:func:`_staged` removes it if the change fails).
    """
    from georeview.cases.intake import freeze, manifest_sha256
    from georeview.cases.models import Round, RoundFile

    folder = ws.files / case.number / f"round-{number}"
    folder.mkdir(parents=True, exist_ok=False)
    made.append(folder)
    (scratch / "submission").rename(folder / "submission")
    freeze(folder / "submission")
    rnd = Round.objects.create(
        case=case,
        number=number,
        folder=ws.relative(folder / "submission"),
        manifest_sha256=manifest_sha256(files),
        **kw,
    )
    RoundFile.objects.bulk_create(
        [RoundFile(round=rnd, path=f.path, size_bytes=f.size_bytes, sha256=f.sha256) for f in files]
    )
    return rnd


def open_case(
    ws: Workspace,
    source: Path | str,
    *,
    by: str,
    received_on: dt.date | None = None,
    applicant: str | None = None,
    contact: str = "",
    site_address: str = "",
    parcel_id: str = "",
    layers_dir: Path | None = None,
    review: bool = True,
    owner: Any = None,
    source_name: str | None = None,
) -> Case:
    """Open a case from a submission folder or zip: round 1, then its review.

    Parameters
    ----------
    ws : Workspace
        The open workspace.
    source : path
        The submission as received (a folder holding ``submission.toml``, or a zip of one).
    by : str
        Who received it.
    received_on : datetime.date, optional
        The day the Village received it (default today): the ordinance's periods run from it.
    applicant, contact, site_address, parcel_id : str, optional
        The applicant (default: the submission's ``applicant``) and how to reach them.
    layers_dir : Path, optional
        The Village's layers folder (default: found as ``georeview review`` finds it).
    review : bool
        Review round 1 now.
    owner : User, optional
        The applicant's account in the web workspace (the one applicant who may see it).
    source_name : str, optional
        The name the submission came as (an upload's own file name; default ``source``'s).
    """
    from django.db import transaction

    from georeview.cases.models import Case, Status

    by = _need(by, "by")
    received_on = received_on or _today()
    with _staged(ws, Path(source)) as (scratch, files, made):
        meta = _submission_meta(scratch / "submission")
        municipality = meta.municipality
        code = _case_code(municipality)
        with transaction.atomic():
            seq = _next_sequence(municipality, received_on.year)
            case = Case.objects.create(
                number=f"{code}-{received_on.year}-{seq:04d}",
                municipality=municipality,
                year=received_on.year,
                sequence=seq,
                title=(meta.name or Path(source).stem)[:300],
                applicant=(applicant or meta.applicant or "")[:200] or "(not given)",
                contact=contact,
                site_address=site_address,
                parcel_id=parcel_id,
                received_on=received_on,
                status=Status.RECEIVED,
                revision=1,
                owner=owner,
            )
            rnd = _file_round(
                ws,
                case,
                1,
                scratch,
                files,
                made,
                received_on=received_on,
                received_by=by,
                source_name=source_name or Path(source).name,
            )
            _append_event(
                case,
                by,
                "opened",
                {
                    "round": 1,
                    "files": len(files),
                    "manifest_sha256": rnd.manifest_sha256,
                    "source": source_name or Path(source).name,
                    "received_on": received_on,
                    "owner": None if owner is None else owner.get_username(),
                },
            )
    if review:
        review_round(ws, case.number, by=by, layers_dir=layers_dir)
        case.refresh_from_db()
    return case


def _as_determinations(case: Case) -> Any:
    """The case's determinations as the review reads them."""
    from georeview.facts.determinations import Determination, Determinations

    items = tuple(
        Determination(
            d.fact,
            dt.date.fromisoformat(d.value) if _is_date_fact(d.fact) else d.value,
            d.by,
            d.decided_on,
            d.reason,
        )
        for d in current_determinations(case)
    )
    return Determinations(items=items, source=f"case {case.number}")


def _is_date_fact(fact: str) -> bool:
    from georeview.facts.registry import registry

    f = registry().get(fact)
    return f is not None and f.type == "date"


def review_round(ws: Workspace, number: str, *, by: str, layers_dir: Path | None = None) -> Review:
    """Review the case's current round with every determination the case holds.

    The review runs outside the case's lock (it takes seconds); its outputs are written
    to a scratch folder and filed, with the review's row, in one change. Comments on a
    finding the review now settles (pass, not applicable) are resolved by it.
    """
    from georeview.pipeline.review import review as run_review
    from georeview.report import write_reports

    case = get_case(number)
    _not_final(case, "review it")
    rnd = current_round(case)
    decided = _as_determinations(case)
    ids = sorted(d.id for d in current_determinations(case))
    result = run_review(ws.path(rnd.folder), layers_dir, determinations=decided)
    scratch = Path(tempfile.mkdtemp(prefix=".review-", dir=ws.path(rnd.folder).parent))
    try:
        write_reports(result, scratch, record={"case_number": case.number, "reviewer": by})
        report = json.loads((scratch / "report.json").read_text())
        where = _site_lonlat(result)
        return _file_review(
            ws, case.number, rnd.number, scratch, report, by=by, ids=ids, where=where
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _file_review(
    ws: Workspace,
    number: str,
    round_number: int,
    scratch: Path,
    report: dict[str, Any],
    *,
    by: str,
    ids: list[int],
    where: tuple[float, float] | None,
) -> Review:
    from georeview._version import __version__
    from georeview.cases.intake import freeze, sha256_of
    from georeview.cases.models import Review, Status

    with _changing(number, by=by, action="reviewed") as (case, detail):
        rnd = case.rounds.get(number=round_number)
        n = rnd.reviews.count() + 1
        folder = ws.path(rnd.folder).parent / f"review-{n}"
        scratch.rename(folder)
        freeze(folder)
        summary = report.get("summary", {})
        review = Review.objects.create(
            round=rnd,
            number=n,
            by=by,
            folder=ws.relative(folder),
            report_sha256=sha256_of(folder / "report.json"),
            georeview_version=__version__,
            outcome=summary.get("outcome", {}).get("code", ""),
            counts=summary.get("counts", {}),
            determination_ids=ids,
        )
        if case.status == Status.RECEIVED:
            case.status = Status.UNDER_REVIEW
        if where is not None:
            case.site_lon, case.site_lat = where
        resolved = _settle_comments(case, rnd, report)
        detail.update(
            round=rnd.number,
            review=n,
            outcome=review.outcome,
            counts=review.counts,
            report_sha256=review.report_sha256,
            determinations=ids,
            resolved_comments=resolved,
        )
    return review


def _site_lonlat(result: Any) -> tuple[float, float] | None:
    """The site's centre in WGS 84 (longitude, latitude), for the register's map."""
    import geopandas as gpd

    site = gpd.GeoSeries([result.submission.site_geom], crs=result.layers.config.working_crs)
    centre = site.representative_point().to_crs(4326).iloc[0]
    return None if centre.is_empty else (float(centre.x), float(centre.y))


def _settle_comments(case: Case, rnd: Round, report: Mapping[str, Any]) -> list[int]:
    """Resolve the open comments whose finding this review settles; return their numbers."""
    status = {f["rule_id"]: f["status"] for f in report.get("findings", [])}
    done = []
    for action in case.actions.filter(kind="comment", resolved_at__isnull=True).exclude(rule_id=""):
        if status.get(action.rule_id) in SETTLED:
            action.resolved_round = rnd
            # fixed, as the round's review reads the finding (who says so is the review)
            action.resolved_by = f"{SYSTEM}: round {rnd.number} reads it {status[action.rule_id]}"
            action.resolved_at = _now()
            action.resolution = "fixed"
            action.save()
            done.append(action.number)
    return done


def resubmit(
    ws: Workspace,
    number: str,
    source: Path | str,
    *,
    by: str,
    received_on: dt.date | None = None,
    layers_dir: Path | None = None,
    review: bool = True,
    source_name: str | None = None,
) -> Round:
    """File a resubmission as the case's next round, then review it with the case's determinations.

    ``source_name`` is the name the resubmission came as (an upload's own file name).

    Raises
    ------
    georeview.errors.ConflictError
        The case is decided (approved, disapproved, issued), closed or withdrawn.
    georeview.errors.InputError
        The resubmission names another municipality than the case's.
    """
    from georeview.cases.models import Status

    case = get_case(number)
    if case.status not in (Status.RETURNED, Status.UNDER_REVIEW, Status.RECEIVED):
        raise ConflictError(
            f"case {case.number} is {case.status}: a resubmission follows a return", field="case"
        )
    with _staged(ws, Path(source)) as (scratch, files, made):
        meta = _submission_meta(scratch / "submission")
        if meta.municipality != case.municipality:
            raise InputError(
                f"the resubmission is for {meta.municipality!r}, the case for"
                f" {case.municipality!r}",
                path=Path(source) / "submission.toml",
                field="municipality",
            )
        with _changing(case.number, by=by, action="resubmitted") as (case, detail):
            if case.status not in (Status.RETURNED, Status.UNDER_REVIEW, Status.RECEIVED):
                raise ConflictError(f"case {case.number} is {case.status}", field="case")
            n = current_round(case).number + 1
            day = received_on or _today()
            rnd = _file_round(
                ws,
                case,
                n,
                scratch,
                files,
                made,
                received_on=day,
                received_by=_need(by, "by"),
                source_name=source_name or Path(source).name,
            )
            case.status = Status.UNDER_REVIEW
            detail.update(
                round=n,
                files=len(files),
                manifest_sha256=rnd.manifest_sha256,
                source=source_name or Path(source).name,
                received_on=day,
            )
    if review:
        review_round(ws, case.number, by=by, layers_dir=layers_dir)
    return rnd


# ----------------------------------------------------------------- determinations


def parse_value(fact: str, text: str) -> Any:
    """A determination's value from its words on a command line, by the fact's type.

    Raises
    ------
    georeview.errors.InputError
        Not a value of the fact's type (``yes``/``no`` for a yes-or-no fact, a number, a date).
    """
    from georeview.facts.registry import registry

    f = registry().get(fact if fact.startswith("village.") else f"village.{fact}")
    kind = None if f is None else f.type
    t = str(text).strip()
    try:
        if kind == "bool":
            words = {"yes": True, "true": True, "y": True, "no": False, "false": False, "n": False}
            return words[t.lower()]
        if kind == "integer":
            return int(t)
        if kind == "number":
            return float(t.replace(",", ""))
        if kind == "date":
            return dt.date.fromisoformat(t)
    except (KeyError, ValueError):
        raise InputError(f"{t!r} is not a {kind} value", field=f"determination {fact}") from None
    return t


def determine(
    number: str,
    fact: str,
    value: Any,
    *,
    by: str,
    reason: str,
    decided_by: str | None = None,
    decided_on: dt.date | None = None,
    expected_revision: int | None = None,
    source: str = "recorded",
) -> Any:
    """Record one of the Village's determinations (a ``village.*`` fact) in the case.

    An earlier determination of the same fact stays, superseded by this one. The next
    review reads it (:func:`review_round`); a decision waits for that review.
    """
    from georeview.cases.models import Determination
    from georeview.facts.determinations import make_determination

    name = fact.removeprefix("village.")
    decided_by = (decided_by or by or "").strip()
    checked = make_determination(
        name,
        {"value": value, "by": decided_by, "date": decided_on or _today(), "reason": reason},
        where=f"determination {name}",
    )
    stored = checked.value.isoformat() if isinstance(checked.value, dt.date) else checked.value
    with _changing(number, by=by, action="determined", expected_revision=expected_revision) as (
        case,
        detail,
    ):
        _not_final(case, "record a determination")
        before = case.determinations.filter(fact=checked.fact, superseded_by__isnull=True).first()
        row = Determination.objects.create(
            case=case,
            round=current_round(case),
            fact=checked.fact,
            value=stored,
            by=checked.by,
            decided_on=checked.date,
            reason=checked.reason,
            supersedes=before,
            source=source,
            recorded_by=by,
        )
        detail.update(
            fact=checked.fact,
            value=stored,
            by=checked.by,
            date=checked.date,
            reason=checked.reason,
            supersedes=None if before is None else before.id,
            id=row.id,
        )
    return row


def import_determinations(ws: Workspace, number: str, path: Path, *, by: str) -> list[Any]:
    """Record every determination of a reviewer's determinations file in the case.

    The file is read as ``--determinations`` reads it, and never from the case's own
    rounds (the applicant's files).
    """
    from georeview.facts.determinations import load_determinations

    case = get_case(number)
    rounds = tuple(ws.path(r.folder) for r in case.rounds.all())
    loaded = load_determinations(Path(path), case.municipality, not_in=rounds)
    return [
        determine(
            number,
            d.fact,
            d.value,
            by=by,
            reason=d.reason,
            decided_by=d.by,
            decided_on=d.date,
            source=f"imported from {Path(path).name}",
        )
        for d in loaded.items
    ]


def export_determinations(number: str) -> str:
    """The case's determinations in force as a determinations file (TOML)."""
    case = get_case(number)
    lines = [
        f"# The Village's determinations in force for case {case.number}, exported by georeview.",
        f'municipality = "{case.municipality}"',
    ]
    for d in current_determinations(case):
        lines += [
            "",
            f"[determinations.{d.fact.removeprefix('village.')}]",
            f"value = {_toml_value(d.value, d.fact)}",
            f"by = {_toml_str(d.by)}",
            f"date = {d.decided_on.isoformat()}",
            f"reason = {_toml_str(d.reason)}",
        ]
    return "\n".join(lines) + "\n"


def _toml_str(text: str) -> str:
    return json.dumps(str(text), ensure_ascii=False)


def _toml_value(value: Any, fact: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if _is_date_fact(fact):
        return str(value)
    return _toml_str(value)


# ----------------------------------------------------------------- reviewer actions


def _finding(ws: Workspace, case: Case, rule_id: str) -> dict[str, Any]:
    review = latest_review(current_round(case))
    if review is None:
        raise ConflictError(f"case {case.number} has no review yet", field="case")
    for f in report_of(ws, review)["findings"]:
        if f["rule_id"] == rule_id:
            return dict(f)
    raise InputError(
        f"no finding {rule_id!r} in the review of round {review.round.number}", field="finding"
    )


def add_action(
    ws: Workspace,
    number: str,
    kind: str,
    text: str,
    *,
    by: str,
    rule_id: str = "",
    sheet: str = "",
    expected_revision: int | None = None,
) -> Action:
    """Record a comment, condition, internal note or "verified on sheet" on a finding.

    Parameters
    ----------
    kind : {"comment", "condition", "note", "verified"}
        A comment to the applicant (what to change, on which sheet), a condition of
        approval, an internal note the applicant never sees, or that a declared item was
        checked on the plan set (``sheet`` required; only a finding resting on what the
        applicant declared can be verified).
    rule_id : str
        The finding (report.json ``findings[].rule_id``); blank for the submission as a whole.

    Raises
    ------
    georeview.errors.InputError
        An unknown kind or finding, empty text, a verification without a sheet or of a
        finding that is measured or computed (a reviewer who disagrees with one records a
        determination with its reason instead).
    """
    from georeview.cases.models import Action

    if kind not in Action.Kind.values:
        raise InputError(f"unknown action {kind!r} ({', '.join(Action.Kind.values)})", field="kind")
    sheet = (sheet or "").strip()
    if kind == Action.Kind.VERIFIED:
        if not rule_id or not sheet:
            raise InputError("a verification names the finding and the sheet", field="sheet")
        text = text or f"Verified on {sheet}."
    text = _need(text, "text")
    with _changing(number, by=by, action=kind, expected_revision=expected_revision) as (
        case,
        detail,
    ):
        _not_final(case, f"record a {kind}")
        citation = words = ""
        if rule_id:
            finding = _finding(ws, case, rule_id)
            citation = finding.get("citation") or ""
            if kind == Action.Kind.VERIFIED and "declared" not in (finding.get("evidence") or []):
                raise InputError(
                    f"{rule_id} rests on {', '.join(finding.get('evidence') or ['nothing'])},"
                    " not on what the applicant declared: a measured or computed result is"
                    " not verified or changed by a reviewer (record a determination with its"
                    " reason to disagree with it)",
                    field="finding",
                )
            declared = finding.get("declared") or {}
            if isinstance(declared, Mapping):
                words = str(declared.get("words") or "")
                if not sheet and declared.get("where"):
                    sheet = str(declared["where"])
        n = (case.actions.order_by("-number").values_list("number", flat=True).first() or 0) + 1
        action = Action.objects.create(
            case=case,
            round=current_round(case),
            number=n,
            kind=kind,
            rule_id=rule_id,
            citation=citation,
            sheet=sheet,
            text=text,
            declared=words if kind == Action.Kind.VERIFIED else "",
            by=by,
        )
        detail.update(number=n, kind=kind, rule_id=rule_id, sheet=sheet, text=text)
    return action


def resolve_action(
    number: str,
    action_number: int,
    *,
    by: str,
    resolution: str,
    expected_revision: int | None = None,
) -> Action:
    """Close a comment or condition (fixed, withdrawn): who, when, in which round, why."""
    with _changing(number, by=by, action="resolved", expected_revision=expected_revision) as (
        case,
        detail,
    ):
        action = case.actions.filter(number=action_number).first()
        if action is None or action.kind not in ("comment", "condition"):
            raise InputError(
                f"case {case.number} has no comment or condition {action_number}", field="number"
            )
        if action.resolved_at is not None:
            raise ConflictError(
                f"{action.kind} {action_number} is already resolved", field="number"
            )
        action.resolved_round = current_round(case)
        action.resolved_by = by
        action.resolved_at = _now()
        action.resolution = _need(resolution, "resolution")
        action.save()
        detail.update(number=action_number, kind=action.kind, resolution=action.resolution)
    return action


# ----------------------------------------------------------------- decisions


def _fresh_review(ws: Workspace, case: Case) -> tuple[Review, dict[str, Any]]:
    """The current round's latest review, refused when determinations came after it."""
    rnd = current_round(case)
    review = latest_review(rnd)
    if review is None:
        raise ConflictError(f"round {rnd.number} of {case.number} has no review yet", field="case")
    ids = sorted(d.id for d in current_determinations(case))
    if sorted(review.determination_ids) != ids:
        raise ConflictError(
            f"the review of round {rnd.number} predates determinations recorded since:"
            f" review the round again (georeview case review {case.number}) before deciding",
            field="case",
        )
    return review, report_of(ws, review)


def decide(
    ws: Workspace,
    number: str,
    outcome: str,
    *,
    by: str,
    reason: str = "",
    decided_on: dt.date | None = None,
    expected_revision: int | None = None,
) -> Decision:
    """Record the Village's decision on the current round.

    The decision is made against the round's latest review, which must have read every
    determination in force. A decision other than the review's recommendation needs its
    written reason; a disapproval needs reasons (the failing findings, or ``reason``);
    an approval with open conditions is an approval with conditions.
    """
    from georeview.cases.models import Decision

    if outcome not in Decision.Outcome.values:
        raise InputError(
            f"unknown outcome {outcome!r} ({', '.join(Decision.Outcome.values)})", field="outcome"
        )
    reason = (reason or "").strip()
    with _changing(number, by=by, action="decided", expected_revision=expected_revision) as (
        case,
        detail,
    ):
        if case.status not in OPEN_STATUSES:
            raise ConflictError(
                f"case {case.number} is {case.status}: a decision is made on a round under review",
                field="case",
            )
        review, report = _fresh_review(ws, case)
        summary = report.get("summary", {})
        recommended = RECOMMENDED.get(review.outcome)
        conditions = case.actions.filter(kind="condition", resolved_at__isnull=True).count()
        conditions += len(summary.get("outcome", {}).get("conditions") or [])
        if outcome == "approved" and conditions:
            raise InputError(
                f"{conditions} condition(s) are open: decide approved_with_conditions, or"
                " resolve them",
                field="outcome",
            )
        if outcome == "approved_with_conditions" and not conditions:
            raise InputError("no condition is recorded (georeview case condition)", field="outcome")
        if outcome == "disapproved" and not (reason or summary.get("fail")):
            raise InputError(
                "a disapproval states its reasons in writing: --reason", field="reason"
            )
        if outcome != recommended and not reason and outcome != "approved_with_conditions":
            raise InputError(
                f"the review recommends {review.outcome or 'no decision yet'}: a decision of"
                f" {outcome} states its reason (--reason)",
                field="reason",
            )
        decision = Decision.objects.create(
            case=case,
            round=review.round,
            review=review,
            outcome=outcome,
            recommendation=review.outcome,
            by=by,
            decided_on=decided_on or _today(),
            reason=reason,
        )
        case.status = outcome
        detail.update(
            outcome=outcome,
            round=review.round.number,
            review=review.number,
            recommendation=review.outcome,
            reason=reason,
            decided_on=decision.decided_on,
        )
    return decision


def issue_permit(number: str, *, by: str, issued_on: dt.date | None = None) -> Case:
    """Record that the permit was issued (the permit's term runs from it)."""
    with _changing(number, by=by, action="permit_issued") as (case, detail):
        if case.status not in ("approved", "approved_with_conditions"):
            raise ConflictError(
                f"case {case.number} is {case.status}: a permit follows an approval", field="case"
            )
        case.issued_on = issued_on or _today()
        case.status = "permit_issued"
        detail.update(issued_on=case.issued_on)
    return case


def close_case(number: str, *, by: str, reason: str, closed_on: dt.date | None = None) -> Case:
    """Close a case (work finished and stabilized, or a disapproval not appealed)."""
    with _changing(number, by=by, action="closed") as (case, detail):
        _not_final(case, "close it")
        case.status = "closed"
        case.closed_on = closed_on or _today()
        detail.update(reason=_need(reason, "reason"), closed_on=case.closed_on)
    return case


def withdraw(number: str, *, by: str, reason: str = "") -> Case:
    """Record the applicant's withdrawal of the application."""
    with _changing(number, by=by, action="withdrawn") as (case, detail):
        _not_final(case, "withdraw it")
        if case.status == "permit_issued":
            raise ConflictError(
                f"case {case.number}'s permit is issued: close it instead", field="case"
            )
        case.status = "withdrawn"
        case.closed_on = _today()
        detail.update(reason=reason)
    return case


def record_payment(
    number: str,
    kind: str,
    amount_usd: float,
    *,
    by: str,
    received_on: dt.date | None = None,
    note: str = "",
) -> Any:
    """Record a fee paid or a security received."""
    from decimal import Decimal, InvalidOperation

    from georeview.cases.models import Payment

    if kind not in Payment.Kind.values:
        raise InputError(
            f"unknown payment {kind!r} ({', '.join(Payment.Kind.values)})", field="kind"
        )
    try:
        amount = Decimal(str(amount_usd)).quantize(Decimal("0.01"))
    except InvalidOperation:
        raise InputError(f"{amount_usd!r} is not an amount", field="amount") from None
    if amount <= 0:
        raise InputError("an amount is more than zero", field="amount")
    with _changing(number, by=by, action="payment") as (case, detail):
        _not_final(case, "record a payment")
        p = Payment.objects.create(
            case=case,
            kind=kind,
            amount_usd=amount,
            received_on=received_on or _today(),
            note=note,
            by=by,
        )
        detail.update(kind=kind, amount_usd=str(amount), received_on=p.received_on, note=note)
    return p


def write_letter(ws: Workspace, number: str, *, by: str, signer: str | None = None) -> Letter:
    """Write the letter for the case's latest decision (HTML and PDF) and file it.

    The letter is rendered while the case is locked, so its number and what it lists are
    those of the case as it stands; the files are kept as written, with their checksums.
    """
    from georeview.cases import letters
    from georeview.cases.intake import sha256_of
    from georeview.cases.models import Letter
    from georeview.cases.views import letter_context, letter_kind
    from georeview.report.files import write_atomic

    with _changing(number, by=by, action="letter") as (case, detail):
        decision = case.decisions.order_by("-id").first()
        if decision is None:
            raise ConflictError(
                f"case {case.number} has no decision to write a letter for", field="case"
            )
        n = case.letters.count() + 1
        kind = letter_kind(decision.outcome)
        html = letters.render_letter(
            letter_context(ws, case, decision, n, signer=_need(signer or by, "signer"))
        )
        folder = ws.files / case.number / "letters"
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"{case.number}-letter-{n}-{kind}"
        html_path = write_atomic(folder / f"{stem}.html", html)
        pdf_path = folder / f"{stem}.pdf"
        pages = letters.write_pdf(html, pdf_path)
        for p in (html_path, pdf_path):
            p.chmod(0o444)
        letter = Letter.objects.create(
            case=case,
            decision=decision,
            number=n,
            kind=kind,
            by=by,
            html_path=ws.relative(html_path),
            pdf_path=ws.relative(pdf_path),
            html_sha256=sha256_of(html_path),
            pdf_sha256=sha256_of(pdf_path),
            pages=pages,
        )
        detail.update(
            number=n,
            kind=kind,
            decision=decision.id,
            pages=pages,
            html_sha256=letter.html_sha256,
            pdf_sha256=letter.pdf_sha256,
        )
    return letter


# ----------------------------------------------------------------- after the approval


#: Statuses in which the site is under construction and its inspections are checked.
INSPECTED_STATUSES = ("approved", "approved_with_conditions", "permit_issued")


def record_inspections(
    ws: Workspace, number: str, log: Path | str, rain: Path | str, *, by: str
) -> Any:
    """Check an approved case's inspection log against its rain data and file both with the report.

    The files are copied into the case's ``inspections/<n>/`` folder as received and made
    read-only; the check is :func:`georeview.procedure.inspections.run` (the same as
    ``georeview inspections``), its report written beside them.

    Raises
    ------
    georeview.errors.ConflictError
        The case is not approved (nothing is under construction to inspect).
    georeview.errors.InputError
        A log or rain file the check cannot read (nothing is filed).
    """
    from georeview.cases.models import InspectionCheck
    from georeview.procedure.inspections import run

    case = get_case(number)
    if case.status not in INSPECTED_STATUSES:
        raise ConflictError(
            f"case {case.number} is {case.status}: inspections follow an approval", field="case"
        )
    scratch = Path(tempfile.mkdtemp(prefix=".inspections-", dir=ws.files))
    filed: list[Path] = []
    try:
        shutil.copyfile(log, scratch / "log.csv")
        shutil.copyfile(rain, scratch / "rain.csv")
        result = run(
            scratch / "log.csv",
            scratch / "rain.csv",
            case.municipality,
            out_path=scratch / "report.html",
        )
        summary = {
            "start": result.start.isoformat(),
            "end": result.end.isoformat(),
            "inspections": result.n_inspections,
            "rain_events": result.n_rain_events,
            "missed_rain": len(result.missed_rain),
            "missed_weeks": len(result.missed_weeks),
            "incomplete_entries": len(result.incomplete_entries),
            "days_without_rain_data": result.days_without_rain_data,
        }
        with _changing(case.number, by=by, action="inspections") as (case, detail):
            n = case.inspections.count() + 1
            folder = ws.files / case.number / "inspections" / str(n)
            folder.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(scratch), folder)
            filed.append(folder)
            for p in folder.iterdir():
                p.chmod(0o444)
            check = InspectionCheck.objects.create(
                case=case,
                number=n,
                log_path=ws.relative(folder / "log.csv"),
                rain_path=ws.relative(folder / "rain.csv"),
                report_path=ws.relative(folder / "report.html"),
                status=result.status,
                summary=summary,
                by=by,
            )
            detail.update(number=n, status=result.status, **summary)
    except BaseException:
        _unfile(filed)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return check


def link_owner(number: str, user: Any, *, by: str) -> Case:
    """Link a case to the applicant's account in the web workspace (the one who may see it)."""
    with _changing(number, by=by, action="owner") as (case, detail):
        case.owner = user
        detail.update(owner=None if user is None else user.get_username())
    return case
