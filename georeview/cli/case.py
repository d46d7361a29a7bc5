"""``georeview case ACTION ...``: the Village's record of a review, from the command line.

Every action works on a workspace (``--workspace DIR``, or ``$GEOREVIEW_WORKSPACE``) whose
database is its SQLite file unless ``--database URL`` (or ``$GEOREVIEW_DATABASE_URL``)
names a PostgreSQL one, and records who acts (``--by NAME``, or ``$GEOREVIEW_USER``).
They call the same functions as the web workspace (:mod:`georeview.cases.service`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from georeview.cli.inspections import _date_arg
from georeview.cli.options import need_workspace, workspace_arguments
from georeview.errors import InputError

__all__ = ["add_arguments", "main"]

#: action -> help line
ACTIONS = {
    "open": "open a case from a submission folder or zip (round 1) and review it",
    "show": "show a case: status, deadlines, findings, comments, decisions, letters",
    "review": "review the current round again (after the Village's determinations)",
    "determine": "record one of the Village's determinations (village.* fact)",
    "determinations": "import or export the case's determinations as a TOML file",
    "comment": "a comment to the applicant: what to change, on which sheet",
    "condition": "a condition of approval",
    "note": "an internal note (never shown to the applicant)",
    "verify": "record that a declared item was verified on a sheet",
    "resolve": "close a comment or condition (fixed, withdrawn)",
    "decide": "record the decision: returned, approved, approved_with_conditions, disapproved",
    "letter": "write the letter for the latest decision (HTML and PDF)",
    "resubmit": "file a resubmission as the next round and review it",
    "diff": "what changed between two rounds",
    "pay": "record a fee paid or a security received",
    "issue": "record that the permit was issued",
    "close": "close a case",
    "withdraw": "record the applicant's withdrawal",
    "list": "the register: every case, filtered; to CSV or .xlsx with --out",
    "export": "one case as a zip archive with a manifest of checksums",
    "audit": "print a case's audit trail and check its hash chain",
}


def _store_options() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    workspace_arguments(p)
    p.add_argument(
        "--by",
        metavar="NAME",
        default=os.environ.get("GEOREVIEW_USER"),
        help="who acts (default $GEOREVIEW_USER)",
    )
    p.add_argument("--layers", type=Path, metavar="DIR", help="the Village's layers folder")
    p.add_argument("--revision", type=int, metavar="N", help="refuse if the case changed since N")
    return p


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``georeview case ACTION`` and each action's options."""
    common = _store_options()
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    a = {name: sub.add_parser(name, help=h, parents=[common]) for name, h in ACTIONS.items()}
    for name in ACTIONS:
        if name not in ("open", "list"):
            a[name].add_argument("case", metavar="CASE", help="the case number, e.g. SOM-2026-0001")
    a["open"].add_argument("submission", type=Path, metavar="SUBMISSION", help="folder or .zip")
    a["resubmit"].add_argument("submission", type=Path, metavar="SUBMISSION", help="folder or .zip")
    for name in ("open", "resubmit"):
        a[name].add_argument("--received", type=_date_arg, help="day received (default today)")
        a[name].add_argument("--no-review", action="store_true", help="file it; review later")
    a["open"].add_argument("--applicant", help="default: the submission's applicant")
    a["open"].add_argument("--contact", default="", help="address, e-mail or phone")
    a["open"].add_argument("--address", default="", help="the site's address")
    a["open"].add_argument("--parcel", default="", help="the site's parcel number")
    a["show"].add_argument("--json", action="store_true", help="the whole record as JSON")
    a["show"].add_argument(
        "--as", dest="audience", choices=("village", "applicant"), default="village"
    )
    a["determine"].add_argument("fact", help="e.g. basin_required (village.basin_required)")
    a["determine"].add_argument("value", help="yes/no, a number, a date or text")
    a["determine"].add_argument("--reason", required=True, help="why (recorded with it)")
    a["determine"].add_argument("--decided-by", help="who decided (default --by)")
    a["determine"].add_argument("--date", type=_date_arg, help="when decided (default today)")
    g = a["determinations"].add_mutually_exclusive_group(required=True)
    g.add_argument("--import", dest="import_file", type=Path, metavar="FILE")
    g.add_argument("--export", dest="export_file", type=Path, metavar="FILE")
    for name in ("comment", "condition", "note"):
        a[name].add_argument("text", help="in plain words")
        a[name].add_argument("--finding", default="", metavar="RULE_ID", help="the finding")
        a[name].add_argument("--sheet", default="", help="the sheet it concerns (e.g. C-2)")
    a["verify"].add_argument("finding", metavar="RULE_ID", help="the declared finding")
    a["verify"].add_argument("--sheet", required=True, help="where it was verified")
    a["verify"].add_argument("--text", default="", help="what was checked")
    a["resolve"].add_argument("number", type=int, help="the comment's or condition's number")
    a["resolve"].add_argument("--resolution", required=True, help="fixed, withdrawn, ...")
    a["decide"].add_argument(
        "outcome", choices=("returned", "approved", "approved_with_conditions", "disapproved")
    )
    a["decide"].add_argument("--reason", default="", help="written reasons")
    a["decide"].add_argument("--date", type=_date_arg, help="day decided (default today)")
    a["letter"].add_argument("--out", type=Path, metavar="DIR", help="also copy the letter here")
    a["letter"].add_argument("--signer", help="who signs (default --by)")
    a["diff"].add_argument("--from", dest="before", type=int, metavar="N")
    a["diff"].add_argument("--to", dest="after", type=int, metavar="N")
    a["diff"].add_argument("--json", action="store_true")
    a["pay"].add_argument("kind", choices=("fee", "security"))
    a["pay"].add_argument("amount", type=float, metavar="USD")
    a["pay"].add_argument("--date", type=_date_arg)
    a["pay"].add_argument("--note", default="")
    a["issue"].add_argument("--date", type=_date_arg, help="issue date (default today)")
    a["close"].add_argument("--reason", required=True)
    a["withdraw"].add_argument("--reason", default="")
    a["list"].add_argument("--status")
    a["list"].add_argument("--owes", choices=("village", "applicant", "none"))
    a["list"].add_argument("--overdue", action="store_true", help="only overdue decisions")
    a["list"].add_argument("--municipality")
    a["list"].add_argument("--search", help="case number, applicant, project, address, parcel")
    a["list"].add_argument("--out", type=Path, metavar="FILE", help=".csv or .xlsx")
    a["export"].add_argument("--out", type=Path, required=True, metavar="FILE.zip")
    a["export"].add_argument("--overwrite", action="store_true")
    a["audit"].add_argument("--json", action="store_true")


def _by(args: argparse.Namespace) -> str:
    if not (args.by or "").strip():
        raise InputError("say who acts: --by NAME (or set GEOREVIEW_USER)", field="--by")
    return str(args.by).strip()


def _print(text: str) -> None:
    sys.stdout.write(text.rstrip("\n") + "\n")


def main(args: argparse.Namespace) -> int:
    """Run one case action; 0 when done, 2 (one line) when refused."""
    from georeview.cases.store import open_workspace

    ws = open_workspace(need_workspace(args), args.database)
    handler = globals()[f"_do_{args.action}"]
    return int(handler(ws, args) or 0)


def _do_open(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases import service

    case = service.open_case(
        ws,
        args.submission,
        by=_by(args),
        received_on=args.received,
        applicant=args.applicant,
        contact=args.contact,
        site_address=args.address,
        parcel_id=args.parcel,
        layers_dir=args.layers,
        review=not args.no_review,
    )
    _print(f"{case.number}: opened ({case.status}); round 1 from {args.submission.name}")
    _summary(ws, case.number)


def _summary(ws: Any, number: str) -> None:
    from georeview.cases.views import case_view

    v = case_view(ws, number)
    rec = v["recommendation"]
    due = v["decision_due"]
    _print(
        f"{v['number']}: {v['status']}, next step by {v['owes']}"
        + (f"; decision due {due['date']} ({due['citation']})" if due else "")
    )
    if rec:
        _print(f"  review of round {v['rounds'][-1]['number']}: {rec['code']}: {rec['words']}")
    comments = [str(a["number"]) for a in v["actions"] if a["open"] and a["kind"] == "comment"]
    conditions = [str(a["number"]) for a in v["actions"] if a["open"] and a["kind"] == "condition"]
    if comments:
        _print(f"  open comments: {', '.join(comments)}")
    if conditions:
        _print(f"  conditions: {', '.join(conditions)}")


def _do_show(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases.views import case_view

    v = case_view(ws, args.case, audience=args.audience)
    if args.json:
        _print(json.dumps(v, indent=2, ensure_ascii=False, default=str))
        return
    _print(f"{v['number']}  {v['title']}  ({v['municipality']})")
    _print(f"  applicant: {v['applicant']}" + (f", {v['contact']}" if v["contact"] else ""))
    if v["site_address"] or v["parcel_id"]:
        _print(f"  site: {v['site_address']}  parcel {v['parcel_id']}".rstrip())
    _print(
        f"  received {v['received_on']}; status {v['status']}; next step by {v['owes']};"
        f" revision {v['revision']}"
    )
    for fee in v["fees"]:
        amount = fee.get("amount_usd")
        money = f"${amount:,.2f}" if isinstance(amount, (int, float)) else fee.get("status")
        _print(f"  {fee.get('name')}: {money} ({fee.get('citation')})")
    for p in v["payments"]:
        _print(f"  received {p['kind']} ${p['amount_usd']:,.2f} on {p['received_on']}")
    for d in v["deadlines"]:
        if d["date"]:
            _print(f"  deadline {d['date']}: {d['name']} ({d['citation']})")
    for r in v["rounds"]:
        last = r["reviews"][-1] if r["reviews"] else None
        _print(
            f"  round {r['number']}: received {r['received_on']}, {len(r['files'])} files"
            + (f"; review {last['number']}: {last['outcome']} {last['counts']}" if last else "")
        )
    for d in v["determinations"]:
        mark = "" if d["in_force"] else " (superseded)"
        _print(
            f"  determination {d['fact']} = {d['value']!r} by {d['by']} {d['date']}:"
            f" {d['reason']}{mark}"
        )
    for a in v["actions"]:
        state = (
            "open"
            if a["open"]
            else ("resolved: " + a["resolved"]["resolution"] if a["resolved"] else "")
        )
        where = " ".join(x for x in (a["citation"], a["sheet"] and f"sheet {a['sheet']}") if x)
        _print(
            f"  {a['kind']} {a['number']} (round {a['round']}) {where}: {a['text']}"
            f" [{a['by']}] {state}".rstrip()
        )
    for f in v["findings"]:
        if f["verified"]:
            _print(
                f"  verified: {f['citation']} {f['title']} on {f['verified']['sheet']}"
                f" by {f['verified']['by']}"
            )
    for d in v["decisions"]:
        _print(
            f"  decision: {d['outcome']} on round {d['round']} by {d['by']} {d['decided_on']}"
            + (f": {d['reason']}" if d["reason"] else "")
        )
    for lt in v["letters"]:
        _print(f"  letter {lt['number']} ({lt['kind']}): {ws.path(lt['pdf'] or lt['html'])}")


def _do_review(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases import service

    r = service.review_round(ws, args.case, by=_by(args), layers_dir=args.layers)
    _print(f"{args.case.upper()}: round {r.round.number} review {r.number}: {r.outcome} {r.counts}")
    _summary(ws, args.case)


def _do_determine(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases import service

    d = service.determine(
        args.case,
        args.fact,
        service.parse_value(args.fact, args.value),
        by=_by(args),
        reason=args.reason,
        decided_by=args.decided_by,
        decided_on=args.date,
        expected_revision=args.revision,
    )
    _print(
        f"{args.case.upper()}: {d.fact} = {d.value!r} ({d.by}, {d.decided_on});"
        " review the round again before deciding (georeview case review)"
    )


def _do_determinations(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases import service
    from georeview.report.files import write_atomic

    if args.import_file:
        rows = service.import_determinations(ws, args.case, args.import_file, by=_by(args))
        _print(
            f"{args.case.upper()}: {len(rows)} determination(s) recorded from"
            f" {args.import_file.name}"
        )
    else:
        write_atomic(args.export_file, service.export_determinations(args.case))
        _print(f"{args.case.upper()}: determinations in force written to {args.export_file}")


def _action(ws: Any, args: argparse.Namespace, kind: str) -> None:
    from georeview.cases import service

    a = service.add_action(
        ws,
        args.case,
        kind,
        getattr(args, "text", ""),
        by=_by(args),
        rule_id=getattr(args, "finding", "") or "",
        sheet=args.sheet or "",
        expected_revision=args.revision,
    )
    _print(
        f"{args.case.upper()}: {a.kind} {a.number} recorded"
        + (f" on {a.citation}" if a.citation else "")
    )


def _do_comment(ws: Any, args: argparse.Namespace) -> None:
    _action(ws, args, "comment")


def _do_condition(ws: Any, args: argparse.Namespace) -> None:
    _action(ws, args, "condition")


def _do_note(ws: Any, args: argparse.Namespace) -> None:
    _action(ws, args, "note")


def _do_verify(ws: Any, args: argparse.Namespace) -> None:
    _action(ws, args, "verified")


def _do_resolve(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases import service

    a = service.resolve_action(
        args.case,
        args.number,
        by=_by(args),
        resolution=args.resolution,
        expected_revision=args.revision,
    )
    _print(f"{args.case.upper()}: {a.kind} {a.number} resolved: {a.resolution}")


def _do_decide(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases import service

    d = service.decide(
        ws,
        args.case,
        args.outcome,
        by=_by(args),
        reason=args.reason,
        decided_on=args.date,
        expected_revision=args.revision,
    )
    _print(
        f"{args.case.upper()}: {d.outcome} (round {d.round.number}; the review recommended"
        f" {d.recommendation}); write its letter: georeview case letter {args.case.upper()}"
    )


def _do_letter(ws: Any, args: argparse.Namespace) -> None:
    import shutil

    from georeview.cases import service

    letter = service.write_letter(ws, args.case, by=_by(args), signer=args.signer)
    paths = [ws.path(letter.html_path), ws.path(letter.pdf_path)]
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        paths = [Path(shutil.copyfile(p, args.out / p.name)) for p in paths]
        for p in paths:
            p.chmod(0o644)
    _print(
        f"{args.case.upper()}: letter {letter.number} ({letter.kind}, {letter.pages} page(s)):"
        f" {paths[1]}"
    )


def _do_resubmit(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases import service

    r = service.resubmit(
        ws,
        args.case,
        args.submission,
        by=_by(args),
        received_on=args.received,
        layers_dir=args.layers,
        review=not args.no_review,
    )
    _print(f"{args.case.upper()}: round {r.number} from {args.submission.name}")
    _summary(ws, args.case)


def _do_diff(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases.diff import diff_lines
    from georeview.cases.views import round_diff

    d = round_diff(ws, args.case, args.before, args.after)
    if args.json:
        _print(json.dumps(d, indent=2, ensure_ascii=False, default=str))
        return
    _print(f"{args.case.upper()}: round {d['from_round']} -> round {d['to_round']}")
    for line in diff_lines(d):
        _print(f"  {line}")
    for c in d["comments"]["resolved"]:
        _print(
            f"  comment {c['number']} resolved since round {d['from_round']}:"
            f" {c['resolved']['resolution']} ({c['resolved']['by']})"
        )
    for c in d["comments"]["open"]:
        _print(f"  comment {c['number']} still open: {c['text']}")


def _do_pay(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases import service

    p = service.record_payment(
        args.case, args.kind, args.amount, by=_by(args), received_on=args.date, note=args.note
    )
    _print(f"{args.case.upper()}: {p.kind} ${p.amount_usd} received {p.received_on}")


def _do_issue(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases import service

    c = service.issue_permit(args.case, by=_by(args), issued_on=args.date)
    _print(f"{c.number}: permit issued {c.issued_on}")
    _summary(ws, c.number)


def _do_close(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases import service

    c = service.close_case(args.case, by=_by(args), reason=args.reason)
    _print(f"{c.number}: closed {c.closed_on}")


def _do_withdraw(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases import service

    c = service.withdraw(args.case, by=_by(args), reason=args.reason)
    _print(f"{c.number}: withdrawn")


def _do_list(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases.views import register, write_register

    rows = register(
        ws,
        status=args.status,
        owes=args.owes,
        overdue=True if args.overdue else None,
        municipality=args.municipality,
        search=args.search,
    )
    if args.out:
        write_register(rows, args.out)
        _print(f"{len(rows)} case(s) written to {args.out}")
        return
    for r in rows:
        due = (
            f"due {r['decision_due']}" + (" OVERDUE" if r["overdue"] else "")
            if r["decision_due"]
            else ""
        )
        _print(
            f"{r['number']}  {r['status']:<24} next: {r['owes']:<9} {due:<22} {r['applicant']}"
            f" / {r['title']}"
        )
    if not rows:
        _print("no cases")


def _do_export(ws: Any, args: argparse.Namespace) -> None:
    from georeview.cases.archive import export_case

    out = export_case(ws, args.case, args.out, overwrite=args.overwrite)
    _print(f"{args.case.upper()}: archive written to {out}")


def _do_audit(ws: Any, args: argparse.Namespace) -> int:
    from georeview.cases.service import verify_audit
    from georeview.cases.views import case_view

    v = case_view(ws, args.case)
    if args.json:
        _print(json.dumps(v["audit"], indent=2, ensure_ascii=False, default=str))
    else:
        for e in v["audit"]:
            _print(
                f"{e['seq']:>4} {e['at'][:19].replace('T', ' ')} UTC {e['actor']}: {e['action']}"
                f" {json.dumps(e['detail'], ensure_ascii=False, default=str)[:160]}"
            )
    problems = verify_audit(args.case)
    for p in problems:
        sys.stderr.write(f"georeview: audit: {p}\n")
    _print("audit trail intact" if not problems else f"{len(problems)} problem(s)")
    return 0 if not problems else 1
