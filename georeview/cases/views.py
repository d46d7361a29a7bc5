"""What a case says, read from the store: the case page, the register, a letter's content.

Nothing here changes a case. :func:`case_view` is the whole record of one case as a
JSON-ready dict, for the Village (``audience="village"``) or for its applicant
(``"applicant"``: the Village's internal notes are left out, nothing else). The register
(:func:`register`) lists every case with its status, who owes the next step and the
ordinance's deadlines, computed from the case's dates with the municipality's calendar
(:func:`georeview.calendar.deadlines`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from georeview.errors import InputError

if TYPE_CHECKING:
    from georeview.cases.models import Case, Decision
    from georeview.cases.store import Workspace

__all__ = [
    "AUDIENCES",
    "OWES",
    "case_deadlines",
    "case_view",
    "decision_due",
    "findings_view",
    "letter_context",
    "register",
    "round_diff",
    "write_register",
]

AUDIENCES = ("village", "applicant")
#: Who owes the next step, by status.
OWES = {
    "received": "village",
    "under_review": "village",
    "returned": "applicant",
    "approved": "village",
    "approved_with_conditions": "village",
    "permit_issued": "applicant",
    "disapproved": "none",
    "closed": "none",
    "withdrawn": "none",
}
#: The register's columns, in order: (name, header, meaning).
REGISTER_COLUMNS = (
    ("number", "Case", "The case number (municipality code, year, sequence)"),
    ("municipality", "Municipality", "Whose ordinance the case is reviewed under"),
    ("status", "Status", "Where the case stands"),
    ("owes", "Next step by", "Who owes the next step: village, applicant or none"),
    ("title", "Project", "The submission's project name"),
    ("applicant", "Applicant", "The applicant"),
    ("site_address", "Site address", "The site's address, as recorded at intake"),
    ("parcel_id", "Parcel", "The site's parcel number, as recorded at intake"),
    ("received_on", "Received", "Receipt of the application (round 1)"),
    ("rounds", "Rounds", "Submissions received"),
    ("recommendation", "Review recommends", "The latest review's outcome code"),
    ("decision_due", "Decision due", "The last day of the Village's decision (calendar)"),
    ("days_left", "Days left", "Calendar days from today to the decision due"),
    ("overdue", "Overdue", "The decision is due before today"),
    ("permit_expires", "Permit expires", "The issued permit's term, without extensions"),
    ("open_comments", "Open comments", "Comments to the applicant not yet resolved"),
    ("revision", "Revision", "Changes recorded on the case"),
    ("updated_at", "Last change", "When the case last changed (UTC)"),
)


def _record(municipality: str) -> dict[str, Any]:
    from georeview.ordinances import table

    return table(municipality, "record")


def _latest_report(ws: Workspace, case: Case) -> dict[str, Any] | None:
    from georeview.cases.lookup import current_round, latest_review, report_of

    review = latest_review(current_round(case))
    return None if review is None else report_of(ws, review)


def case_deadlines(
    case: Case, report: Mapping[str, Any] | None, *, issue_date: dt.date | None = None
) -> list[Any]:
    """The ordinance's deadlines for the case, from its dates (calendar.toml's periods).

    The application date is round 1's receipt. A resubmission's receipt is the fact the
    municipality's ``record.toml`` names (``[case] resubmission_is``): Somers counts its
    decision from the additional information, Deerfield from the completed plan. The
    issue date is the permit's, or ``issue_date`` (a decision appealed from, which the
    calendar counts from the same fact).
    """
    from georeview.calendar import deadlines

    rounds = list(case.rounds.order_by("number"))
    facts: dict[str, Any] = {
        "application_date": case.received_on,
        "issue_date": issue_date or case.issued_on,
    }
    if len(rounds) > 1:
        key = _record(case.municipality).get("case", {}).get("resubmission_is")
        if key in ("application_date", "additional_info_date"):
            facts[key] = rounds[-1].received_on
    category = None
    activity: Mapping[str, Any] = {}
    if report is not None:
        category = (report.get("classification") or {}).get("category")
        activity = (report.get("submission") or {}).get("activity") or {}
    days = activity.get("building_permit_days")
    start = activity.get("start_date")
    return deadlines(
        case.municipality,
        category=category if category in ("major", "minor") else None,
        building_permit_days=int(days) if isinstance(days, int) and days >= 0 else None,
        start_date=dt.date.fromisoformat(start) if isinstance(start, str) else None,
        **facts,
    )


def decision_due(case: Case, listed: list[Any]) -> Any | None:
    """The deadline the Village's next decision falls under (None when none is pending).

    Of the calendar's decision deadlines (``decision = true``, or counted from the
    additional information), the one counted from the latest known date; of several
    such (one per category when the category is unknown), the earliest.
    """
    from georeview.calendar import municipality_calendar

    if OWES.get(case.status) != "village" or case.status not in ("received", "under_review"):
        return None
    spec = {d["id"]: d for d in municipality_calendar(case.municipality).get("deadlines", [])}
    starts = {
        "application_date": case.received_on,
        "additional_info_date": _resubmitted_on(case),
    }
    candidates = []
    for d in listed:
        item = spec.get(d.id, {})
        start = starts.get(item.get("from"))
        if d.date is None or start is None:
            continue
        if item.get("decision") or item.get("from") == "additional_info_date":
            candidates.append((start, d.date, d))
    if not candidates:
        return None
    latest = max(c[0] for c in candidates)
    return min((c for c in candidates if c[0] == latest), key=lambda c: c[1])[2]


def _resubmitted_on(case: Case) -> dt.date | None:
    rounds = list(case.rounds.order_by("number"))
    return rounds[-1].received_on if len(rounds) > 1 else None


def _permit_expires(case: Case, listed: list[Any]) -> dt.date | None:
    from georeview.calendar import municipality_calendar

    terms = {
        d["id"]
        for d in municipality_calendar(case.municipality).get("deadlines", [])
        if d.get("term") or (d.get("from") == "issue_date" and not d.get("plus_days"))
    }
    dates = [d.date for d in listed if d.id in terms and d.date is not None]
    return min(dates) if dates and case.issued_on else None


def _deadline_dict(d: Any) -> dict[str, Any]:
    return {
        "id": d.id,
        "name": d.name,
        "date": None if d.date is None else d.date.isoformat(),
        "citation": d.citation,
        "rule": d.rule,
    }


# ----------------------------------------------------------------- one case


def _action_dict(a: Any) -> dict[str, Any]:
    return {
        "number": a.number,
        "kind": a.kind,
        "round": a.round.number,
        "rule_id": a.rule_id,
        "citation": a.citation,
        "sheet": a.sheet,
        "text": a.text,
        "declared": a.declared,
        "by": a.by,
        "at": a.at.isoformat(),
        "open": a.resolved_at is None and a.kind in ("comment", "condition"),
        "resolved": None
        if a.resolved_at is None
        else {
            "round": a.resolved_round.number if a.resolved_round else None,
            "by": a.resolved_by,
            "at": a.resolved_at.isoformat(),
            "resolution": a.resolution,
        },
    }


def _determination_dict(d: Any) -> dict[str, Any]:
    return {
        "id": d.id,
        "fact": d.fact,
        "value": d.value,
        "by": d.by,
        "date": d.decided_on.isoformat(),
        "reason": d.reason,
        "round": d.round.number,
        "source": d.source,
        "recorded_by": d.recorded_by,
        "recorded_at": d.recorded_at.isoformat(),
        "supersedes": d.supersedes_id,
        "in_force": not hasattr(d, "superseded_by") or _superseded(d) is None,
    }


def _superseded(d: Any) -> Any:
    from django.core.exceptions import ObjectDoesNotExist

    try:
        return d.superseded_by
    except ObjectDoesNotExist:
        return None


def findings_view(report: Mapping[str, Any], actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The review's findings, each with the reviewer's actions on it and whether it is verified.

    A declared finding reads ``verified`` once a reviewer recorded "verified on sheet X"
    for it (who, when and the sheet come with it), and in later rounds while the
    applicant's words stay those verified; nothing else about the finding changes.
    """
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for a in actions:
        if a["rule_id"]:
            by_rule.setdefault(a["rule_id"], []).append(a)
    out = []
    for f in report.get("findings", []):
        mine = by_rule.get(f["rule_id"], [])
        words = (f.get("declared") or {}).get("words") or ""
        verified = [a for a in mine if a["kind"] == "verified" and a["declared"] == words]
        out.append(
            {
                "rule_id": f["rule_id"],
                "citation": f.get("citation"),
                "title": f.get("title"),
                "status": f["status"],
                "message": f.get("message"),
                "evidence": f.get("evidence") or [],
                "declared": f.get("declared"),
                "verified": None
                if not verified
                else {k: verified[-1][k] for k in ("sheet", "by", "at")},
                "actions": [a["number"] for a in mine],
            }
        )
    return out


def case_view(ws: Workspace, number: str, *, audience: str = "village") -> dict[str, Any]:
    """The whole record of a case, JSON-ready, as the Village or the applicant reads it.

    The applicant's view leaves out the internal notes and the audit trail, and holds the
    comments and conditions of a round only once the Village has decided it (a comment
    being drafted is the Village's until its letter goes out).

    Raises
    ------
    georeview.errors.InputError
        No such case, or an unknown audience.
    """
    from django.db import models

    from georeview.cases.lookup import get_case

    if audience not in AUDIENCES:
        raise InputError(f"unknown audience {audience!r}", field="audience")
    case = get_case(number)
    report = _latest_report(ws, case)
    listed = case_deadlines(case, report)
    due = decision_due(case, listed)
    # the applicant reads the Village's comments and conditions once they are sent: those
    # of a round the Village has decided (returned, approved, disapproved), never its notes
    sent = case.decisions.aggregate(last=models.Max("round__number"))["last"] or 0
    actions = [
        _action_dict(a)
        for a in case.actions.select_related("round", "resolved_round").order_by("number")
        if audience == "village" or (a.kind != "note" and a.round.number <= sent)
    ]
    rounds = [
        {
            "number": r.number,
            "received_on": r.received_on.isoformat(),
            "received_by": r.received_by,
            "source_name": r.source_name,
            "folder": r.folder,
            "manifest_sha256": r.manifest_sha256,
            "files": [
                {"path": f.path, "size_bytes": f.size_bytes, "sha256": f.sha256}
                for f in r.files.order_by("path")
            ],
            "reviews": [
                {
                    "number": v.number,
                    "at": v.at.isoformat(),
                    "by": v.by,
                    "folder": v.folder,
                    "outcome": v.outcome,
                    "counts": v.counts,
                    "report_sha256": v.report_sha256,
                    "georeview_version": v.georeview_version,
                    "determinations": v.determination_ids,
                }
                for v in r.reviews.order_by("number")
            ],
        }
        for r in case.rounds.order_by("number")
    ]
    out: dict[str, Any] = {
        "number": case.number,
        "municipality": case.municipality,
        "title": case.title,
        "applicant": case.applicant,
        "contact": case.contact,
        "site_address": case.site_address,
        "parcel_id": case.parcel_id,
        "site_lonlat": None if case.site_lon is None else [case.site_lon, case.site_lat],
        "received_on": case.received_on.isoformat(),
        "status": case.status,
        "owes": OWES.get(case.status, "none"),
        "issued_on": None if case.issued_on is None else case.issued_on.isoformat(),
        "closed_on": None if case.closed_on is None else case.closed_on.isoformat(),
        "revision": case.revision,
        "decision_due": None if due is None else _deadline_dict(due),
        "deadlines": [_deadline_dict(d) for d in listed],
        "fees": [] if report is None else (report.get("fees") or {}).get("items", []),
        "payments": [
            {
                "kind": p.kind,
                "amount_usd": float(p.amount_usd),
                "received_on": p.received_on.isoformat(),
                "note": p.note,
                "by": p.by,
            }
            for p in case.payments.order_by("id")
        ],
        "rounds": rounds,
        "recommendation": None if report is None else report["summary"]["outcome"],
        "findings": [] if report is None else findings_view(report, actions),
        "determinations": [
            _determination_dict(d)
            for d in case.determinations.select_related("round").order_by("fact", "id")
        ],
        "actions": actions,
        "decisions": [
            {
                "id": d.id,
                "round": d.round.number,
                "review": d.review.number,
                "outcome": d.outcome,
                "recommendation": d.recommendation,
                "by": d.by,
                "decided_on": d.decided_on.isoformat(),
                "reason": d.reason,
            }
            for d in case.decisions.select_related("round", "review").order_by("id")
        ],
        "letters": [
            {
                "number": lt.number,
                "kind": lt.kind,
                "decision": lt.decision_id,
                "html": lt.html_path,
                "pdf": lt.pdf_path,
                "pages": lt.pages,
                "html_sha256": lt.html_sha256,
                "pdf_sha256": lt.pdf_sha256,
                "by": lt.by,
                "at": lt.at.isoformat(),
            }
            for lt in case.letters.order_by("number")
        ],
    }
    if audience == "village":
        out["audit"] = [
            {
                "seq": e.seq,
                "at": e.at.isoformat(),
                "actor": e.actor,
                "action": e.action,
                "detail": e.detail,
                "revision": e.revision,
                "hash": e.hash,
            }
            for e in case.audit.order_by("seq")
        ]
    return out


# ----------------------------------------------------------------- the register


def _register_row(ws: Workspace, case: Case, today: dt.date) -> dict[str, Any]:
    report = _latest_report(ws, case)
    listed = case_deadlines(case, report)
    due = decision_due(case, listed)
    expires = _permit_expires(case, listed)
    return {
        "number": case.number,
        "municipality": case.municipality,
        "status": case.status,
        "owes": OWES.get(case.status, "none"),
        "title": case.title,
        "applicant": case.applicant,
        "site_address": case.site_address,
        "parcel_id": case.parcel_id,
        "received_on": case.received_on.isoformat(),
        "rounds": case.rounds.count(),
        "recommendation": None if report is None else report["summary"]["outcome"]["code"],
        "decision_due": None if due is None else due.date.isoformat(),
        "days_left": None if due is None else (due.date - today).days,
        "overdue": due is not None and due.date < today,
        "permit_expires": None if expires is None else expires.isoformat(),
        "open_comments": case.actions.filter(kind="comment", resolved_at__isnull=True).count(),
        "revision": case.revision,
        "updated_at": case.updated_at.isoformat(timespec="seconds"),
    }


def register(
    ws: Workspace,
    *,
    status: str | None = None,
    owes: str | None = None,
    overdue: bool | None = None,
    municipality: str | None = None,
    search: str | None = None,
    today: dt.date | None = None,
) -> list[dict[str, Any]]:
    """Every case as a register row, filtered; overdue first, then by decision due, number.

    ``search`` matches the case number, applicant, title, address or parcel (any part,
    case-insensitive).
    """
    from django.db.models import Q

    from georeview.cases.models import Case

    today = today or dt.date.today()
    q = Case.objects.all()
    if status:
        q = q.filter(status=status)
    if municipality:
        q = q.filter(municipality=municipality)
    if search:
        s = search.strip()
        q = q.filter(
            Q(number__icontains=s)
            | Q(applicant__icontains=s)
            | Q(title__icontains=s)
            | Q(site_address__icontains=s)
            | Q(parcel_id__icontains=s)
        )
    rows = [_register_row(ws, c, today) for c in q.order_by("number")]
    if owes:
        rows = [r for r in rows if r["owes"] == owes]
    if overdue is not None:
        rows = [r for r in rows if r["overdue"] == overdue]
    return sorted(
        rows,
        key=lambda r: (not r["overdue"], r["decision_due"] or "9999-12-31", r["number"]),
    )


def write_register(rows: list[dict[str, Any]], path: Path) -> Path:
    """Write register rows as CSV or .xlsx (by the file's suffix), atomically."""
    import pandas as pd

    from georeview.report.files import atomic_path

    path = Path(path)
    frame = pd.DataFrame(rows, columns=[c[0] for c in REGISTER_COLUMNS])
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".xlsx"):
        raise InputError("the register is written as .csv or .xlsx", path=path, field="--out")
    with atomic_path(path) as tmp:
        if suffix == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            from georeview.report.xlsx import write_xlsx

            write_xlsx(
                tmp,
                [frame],
                REGISTER_COLUMNS,
                n_rows=len(frame),
                sheet="Register",
                text_columns=("number", "parcel_id"),
            )
    return path


# ----------------------------------------------------------------- round diff


def _snapshot(ws: Workspace, rnd: Any) -> Any:
    from georeview.cases.diff import RoundSnapshot
    from georeview.cases.lookup import latest_review, report_of

    review = latest_review(rnd)
    if review is None:
        raise InputError(f"round {rnd.number} has no review", field="round")
    gpkg = ws.path(review.folder) / "layers.gpkg"
    return RoundSnapshot(
        number=rnd.number,
        report=report_of(ws, review),
        files={f.path: f.sha256 for f in rnd.files.all()},
        gpkg=gpkg if gpkg.is_file() else None,
    )


def _reworded(
    diff: dict[str, Any], before: Mapping[str, Any], after: Mapping[str, Any]
) -> dict[str, Any]:
    """The diff's finding messages as the page and the letters word them (no judge's tags)."""
    from georeview.report.reader import applicant_message

    def words(report: Mapping[str, Any], rule_id: str, fallback: Any) -> Any:
        f = next((f for f in report.get("findings", []) if f["rule_id"] == rule_id), None)
        return fallback if f is None else applicant_message(f, report)

    findings = diff.get("findings", {})
    for f in findings.get("changed", []):
        f["message_before"] = words(before, f["rule_id"], f.get("message_before"))
        f["message_after"] = words(after, f["rule_id"], f.get("message_after"))
    for f in findings.get("new", []):
        f["message"] = words(after, f["rule_id"], f.get("message"))
    for f in findings.get("gone", []):
        f["message"] = words(before, f["rule_id"], f.get("message"))
    return diff


def round_diff(
    ws: Workspace, number: str, before: int | None = None, after: int | None = None
) -> dict[str, Any]:
    """What changed between two rounds (default: the last two), with the comments' state.

    ``comments.resolved`` are the comments made by ``before`` and resolved since;
    ``comments.open`` those still open.
    """
    from georeview.cases.diff import diff_rounds
    from georeview.cases.lookup import get_case

    case = get_case(number)
    rounds = {r.number: r for r in case.rounds.all()}
    last = max(rounds)
    after = after or last
    before = before or (after - 1)
    if before not in rounds or after not in rounds or before >= after:
        raise InputError(
            f"case {case.number} has rounds 1 to {last}: compare an earlier with a later one",
            field="round",
        )
    old, new = _snapshot(ws, rounds[before]), _snapshot(ws, rounds[after])
    out = _reworded(diff_rounds(old, new), old.report, new.report)
    comments = [
        _action_dict(a)
        for a in case.actions.filter(kind="comment", round__number__lte=before)
        .select_related("round", "resolved_round")
        .order_by("number")
    ]
    out["comments"] = {
        "resolved": [
            c
            for c in comments
            if c["resolved"] and c["resolved"]["round"] and before < c["resolved"]["round"] <= after
        ],
        "open": [c for c in comments if c["resolved"] is None],
    }
    return out


# ----------------------------------------------------------------- letters


_KIND_OF = {
    "returned": "comment",
    "approved": "approval",
    "approved_with_conditions": "approval",
    "disapproved": "disapproval",
}


def letter_kind(outcome: str) -> str:
    """The letter a decision's outcome calls for."""
    return _KIND_OF[outcome]


def _open_items(report: Mapping[str, Any], comments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A comment letter's items: the reviewer's open comments, then what the review says is owed.

    An item the review owes that a reviewer's comment already addresses (same finding)
    is said once, in the reviewer's words.
    """
    from georeview.report.reader import applicant_message

    items = [
        {
            "sheet": c["sheet"] or None,
            "on": None,
            "citation": c["citation"],
            "text": c["text"],
            "source": "comment",
            "number": c["number"],
        }
        for c in comments
        if c["open"]
    ]
    commented = {c["rule_id"] for c in comments if c["open"] and c["rule_id"]}
    findings = {f["rule_id"]: f for f in report.get("findings", [])}
    for owed in (report.get("summary", {}).get("owes", {}) or {}).get("applicant", []):
        if owed.get("rule_id") in commented:
            continue
        finding = findings.get(owed.get("rule_id"), owed)
        on = owed.get("on") or []
        items.append(
            {
                "sheet": None,
                "on": f"On {on[0]}." if on else None,
                "citation": owed.get("citation"),
                "text": applicant_message(finding, report),
                # a failing finding asks for a correction, a missing fact for information
                "source": "fail" if owed.get("correct") else "owed",
                "number": None,
            }
        )
    return items


def _letter_deadlines(
    case: Case, decision: Decision, report: Mapping[str, Any], today: dt.date
) -> list[dict[str, Any]]:
    """The dates a letter gives: those still ahead that its decision leaves to the applicant.

    The Village's own decision deadlines never (the letter is that decision, or its
    opening says when the next one falls), nor a date already past (a planned start the
    applicant gave before a return). An approval gives the permit's term (record.toml
    ``[permit] term_deadlines``; not yet known until the permit is issued) and the duties'
    dates still ahead; a disapproval the periods that run from the decision (an appeal),
    counted from the day decided; a comment letter none: nothing runs until the
    resubmission, and its opening says what runs then.
    """
    from georeview.calendar import municipality_calendar

    spec = {d["id"]: d for d in municipality_calendar(case.municipality).get("deadlines", [])}
    term = set(_record(case.municipality).get("permit", {}).get("term_deadlines", []))
    kind = letter_kind(decision.outcome)
    listed = case_deadlines(
        case, report, issue_date=decision.decided_on if kind == "disapproval" else None
    )

    def keep(d: Any) -> bool:
        item = spec.get(d.id, {})
        if kind == "comment" or item.get("decision"):
            return False
        if item.get("from") == "additional_info_date":
            return False
        if d.id in term or item.get("term"):
            return kind == "approval"
        if kind == "disapproval" and item.get("from") != "issue_date":
            return False
        return d.date is not None and d.date >= today

    return [_deadline_dict(d) for d in listed if keep(d)]


def letter_context(
    ws: Workspace, case: Case, decision: Decision, number: int, *, signer: str
) -> dict[str, Any]:
    """The content of the letter for a decision (:func:`georeview.cases.letters.render_letter`)."""
    from georeview.cases.lookup import report_of
    from georeview.report.reader import applicant_message, plain, untag

    report = report_of(ws, decision.review)
    view = case_view(ws, case.number, audience="applicant")
    comments = [a for a in view["actions"] if a["kind"] == "comment"]
    conditions = [
        {"number": a["number"], "text": a["text"], "citation": a["citation"]}
        for a in view["actions"]
        if a["kind"] == "condition" and a["open"]
    ]
    conditions += [
        {"number": None, "text": untag(plain(str(c))[0]), "citation": ""}
        for c in (report["summary"]["outcome"].get("conditions") or [])
    ]
    reasons = [
        {"citation": f.get("citation") or "", "text": applicant_message(f, report)}
        for f in report.get("findings", [])
        if f["status"] == "fail"
    ]
    if decision.reason:
        reasons.append({"citation": "", "text": decision.reason})
    prior = [r["number"] for r in view["rounds"] if r["number"] < decision.round.number]
    resolved = [
        {
            "number": c["number"],
            "text": c["text"],
            "citation": c["citation"],
            "round": c["resolved"]["round"],
            "resolution": c["resolved"]["resolution"],
        }
        for c in comments
        if c["resolved"] and prior and c["round"] in prior
    ]
    return {
        "kind": letter_kind(decision.outcome),
        "municipality": case.municipality,
        "category": (report.get("classification") or {}).get("category"),
        "case": {
            k: view[k]
            for k in (
                "number",
                "title",
                "applicant",
                "contact",
                "site_address",
                "parcel_id",
                "received_on",
            )
        },
        "round": {
            "number": decision.round.number,
            "received_on": decision.round.received_on.isoformat(),
        },
        "letter": {"number": number, "date": dt.date.today().isoformat()},
        "decision": {
            "outcome": decision.outcome,
            "by": decision.by,
            "decided_on": decision.decided_on.isoformat(),
            "reason": decision.reason,
        },
        "items": _open_items(report, comments) if decision.outcome == "returned" else [],
        "resolved": resolved,
        "conditions": conditions if decision.outcome.startswith("approved") else [],
        "reasons": reasons if decision.outcome == "disapproved" else [],
        "deadlines": _letter_deadlines(case, decision, report, dt.date.today()),
        "fees": [
            {k: f.get(k) for k in ("name", "amount_usd", "status", "citation", "note")}
            for f in view["fees"]
        ],
        "payments": [
            {k: p[k] for k in ("kind", "amount_usd", "received_on")} for p in view["payments"]
        ],
        "signer": {"name": signer, "title": None},
    }


def determination_questions(case: Case, report: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The Village's questions for a case: every ``village.*`` fact its ordinance's rules read.

    Each comes with the registry's words, type and units, the findings of the latest review
    that wait on it (those first), and the determination in force, if any, so a form can
    ask exactly what the ordinance asks, in the values the fact allows.
    """
    from georeview.cases.lookup import current_determinations
    from georeview.facts.registry import registry
    from georeview.rules.load import load_ordinance

    facts = registry().facts
    asked: dict[str, list[str]] = {}
    for rule in load_ordinance(case.municipality).rules:
        for name in sorted(rule.facts()):
            if name.startswith("village.") and name in facts:
                asked.setdefault(name, []).append(rule.id)
    waiting = {
        f["rule_id"] for f in (report or {}).get("findings", []) if f.get("status") == "needs_info"
    }
    current = {d.fact: d for d in current_determinations(case)}
    out = []
    for name, rule_ids in asked.items():
        f = facts[name]
        d = current.get(name) or current.get(name.removeprefix("village."))
        out.append(
            {
                "fact": name.removeprefix("village."),
                "description": f.description,
                "type": f.type,
                "units": f.units,
                "rules": rule_ids,
                "waiting": sorted(set(rule_ids) & waiting),
                "current": None if d is None else _determination_dict(d),
            }
        )
    return sorted(out, key=lambda q: (not q["waiting"], q["fact"]))
