"""The workspace's pages: the Village's queue and case pages, the applicant's own cases.

Every view reads and changes cases only through :mod:`georeview.cases` (the service the
``georeview case`` commands call); every case it names goes through
:func:`georeview.web.authz.case_for` first. A change made from a page carries the case's
revision as the page showed it, so a change made meanwhile by someone else is refused with
who made it, not overwritten. Errors of input (a bad zip, a value not of the fact's type)
come back as one line on the page, never a traceback.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from georeview.errors import GeoReviewError
from georeview.web.authz import applicant_or_village, case_for, village_only
from georeview.web.roles import is_village, role_of

__all__ = [
    "action_add",
    "action_resolve",
    "audit_page",
    "case_page",
    "decide",
    "determine",
    "diff_page",
    "home",
    "inspections",
    "issue",
    "job_status",
    "new_case",
    "payment",
    "queue",
    "register_limits",
    "register_map",
    "register_sites",
    "resubmit",
    "review_again",
    "screen_new",
    "screen_page",
    "screens",
    "set_owner",
    "withdraw",
]

#: Metres of simplification of the villages' limits on the register map.
LIMITS_SIMPLIFY_M = 1.0
#: The findings an applicant reads first: what they owe.
_OWED = ("fail", "needs_info")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._ -]+")


def _ws() -> Any:
    from georeview.cases.store import opened

    return opened()


def _by(request: Any) -> str:
    return str(request.user.get_username())


def _back(number: str, anchor: str = "") -> Any:
    return redirect(reverse("case", args=[number]) + (f"#{anchor}" if anchor else ""))


def _revision(request: Any) -> int | None:
    text = request.POST.get("revision", "")
    return int(text) if text.isdigit() else None


def _safe_name(name: str, default: str) -> str:
    """An uploaded file's own name, reduced to a plain file name (never a path)."""
    base = _SAFE_NAME.sub("_", Path(str(name).replace("\\", "/")).name).strip(" .")
    return base[:120] or default


def _receive(upload: Any, name: str) -> Path:
    """An uploaded file moved into a private scratch folder of the workspace's uploads.

    Django has streamed it to ``files/.uploads`` already (``FILE_UPLOAD_TEMP_DIR``); the
    size limit is checked before anything reads it.
    """
    from django.conf import settings

    limit = int(settings.GEOREVIEW_UPLOAD_LIMIT)
    if upload.size > limit:
        raise _TooLargeError(
            f"{upload.name}: {upload.size:,} bytes, more than the {limit:,} allowed"
        )
    folder = Path(tempfile.mkdtemp(prefix="up-", dir=settings.FILE_UPLOAD_TEMP_DIR))
    dest = folder / name
    with dest.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return dest


class _TooLargeError(Exception):
    """An upload over the workspace's limit."""


def _forget(path: Path) -> None:
    shutil.rmtree(path.parent, ignore_errors=True)


def _latest_job(case: Any) -> Any:
    return case.jobs.order_by("-id").first()


def _job_dict(job: Any) -> dict[str, Any] | None:
    if job is None:
        return None
    return {
        "id": job.id,
        "kind": job.kind,
        "state": job.state,
        "done": job.done,
        "total": job.total,
        "seconds": job.seconds,
        "error": job.error,
        "result": job.result,
        "created_at": job.created_at.isoformat(),
    }


# ----------------------------------------------------------------- pages


@applicant_or_village
@require_GET
def home(request: Any) -> Any:
    """The Village's queue, or the applicant's own cases."""
    if is_village(request.user):
        return redirect("queue")
    from georeview.cases.models import Case

    ws = _ws()
    from georeview.cases.views import register

    mine = set(Case.objects.filter(owner=request.user).values_list("number", flat=True))
    rows = [r for r in register(ws) if r["number"] in mine]
    return render(request, "web/mine.html", {"rows": rows})


@village_only
@require_GET
def queue(request: Any) -> Any:
    """Every case: status, who owes the next step, decision due; overdue first; filters."""
    from georeview.cases.models import Status
    from georeview.cases.views import register

    g = request.GET
    overdue = {"yes": True, "no": False}.get(g.get("overdue", ""))
    rows = register(
        _ws(),
        status=g.get("status") or None,
        owes=g.get("owes") or None,
        overdue=overdue,
        municipality=g.get("municipality") or None,
        search=g.get("q") or None,
    )
    return render(
        request,
        "web/queue.html",
        {
            "rows": rows,
            "statuses": Status.choices,
            "q": g.get("q", ""),
            "status": g.get("status", ""),
            "owes": g.get("owes", ""),
            "overdue": g.get("overdue", ""),
        },
    )


def _findings_for(
    view: dict[str, Any], audience: str, report: dict[str, Any] | None
) -> dict[str, list[dict[str, Any]]]:
    """The findings in the case page's groups, each with its actions inline.

    Messages read as the report and the letters word them: for the applicant without the
    note of how a Village determination settled a reading (as the comment letter).
    """
    from georeview.report.reader import applicant_message, display_message

    word = applicant_message if audience == "applicant" else display_message
    original = {f["rule_id"]: f for f in (report or {}).get("findings", [])}
    by_number = {a["number"]: a for a in view["actions"]}
    groups: dict[str, list[dict[str, Any]]] = {
        "fail": [],
        "needs_info": [],
        "pass_declared": [],
        "other": [],
    }
    for f in view["findings"]:
        f = dict(f)
        if f["rule_id"] in original:
            f["message"] = word(original[f["rule_id"]], report or {})
        f["action_list"] = [by_number[n] for n in f["actions"] if n in by_number]
        if audience == "applicant" and f["status"] not in _OWED and not f["action_list"]:
            continue
        key = f["status"] if f["status"] in groups else "other"
        groups[key].append(f)
    return groups


@applicant_or_village
@require_GET
def case_page(request: Any, number: str) -> Any:
    """The case: summary, map, findings with actions, determinations, rounds, letters."""
    from georeview.cases.lookup import current_round, latest_review, report_of
    from georeview.cases.views import case_view, determination_questions

    case = case_for(request, number)
    ws = _ws()
    village = is_village(request.user)
    audience = "village" if village else "applicant"
    view = case_view(ws, case.number, audience=audience)
    rnd = current_round(case)
    review = latest_review(rnd)
    report = None if review is None else report_of(ws, review)
    ctx: dict[str, Any] = {
        "case": case,
        "v": view,
        "groups": _findings_for(view, audience, report),
        "decision": view["decisions"][-1] if view["decisions"] else None,
        "round": rnd,
        "review": review,
        "job": _job_dict(_latest_job(case)),
        "village": village,
        "general": [a for a in view["actions"] if not a["rule_id"]],
        "can_resubmit": case.status in ("returned",)
        and (village or case.owner_id == request.user.id),
        "can_withdraw": case.status not in ("closed", "withdrawn", "permit_issued"),
    }
    if village:
        from georeview.web.forms import DecideForm

        ctx["questions"] = determination_questions(case, report)
        ctx["decide_form"] = DecideForm(initial={"revision": case.revision})
        ctx["inspections"] = list(case.inspections.order_by("number"))
        ctx["applicants"] = (
            get_user_model()
            .objects.filter(groups__name="applicant", is_active=True)
            .order_by("username")
        )
        ctx["rounds_pairs"] = [
            (r["number"] - 1, r["number"]) for r in view["rounds"] if r["number"] > 1
        ]
    return render(request, "web/case.html", ctx)


@village_only
@require_GET
def diff_page(request: Any, number: str, before: int, after: int) -> Any:
    """What changed between two rounds, with the comments resolved and still open."""
    from georeview.cases.diff import diff_lines
    from georeview.cases.views import round_diff

    case = case_for(request, number)
    try:
        diff = round_diff(_ws(), case.number, before, after)
    except GeoReviewError as exc:
        raise Http404(exc.one_line()) from None
    return render(request, "web/diff.html", {"case": case, "d": diff, "lines": diff_lines(diff)})


@village_only
@require_GET
def audit_page(request: Any, number: str) -> Any:
    """The case's audit trail, and whether its hash chain is intact."""
    from georeview.cases.service import verify_audit

    case = case_for(request, number)
    return render(
        request,
        "web/audit.html",
        {"case": case, "events": case.audit.order_by("seq"), "problems": verify_audit(case.number)},
    )


@village_only
@require_GET
def register_map(request: Any) -> Any:
    """A map of every case's site, coloured by status."""
    return render(request, "web/register_map.html", {})


@village_only
@require_GET
def register_sites(request: Any) -> Any:
    """Every case's site as GeoJSON points (WGS 84) with its status, for the register map."""
    from georeview.cases.models import Case

    features = [
        {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": [c.site_lon, c.site_lat]},
            "properties": {
                "number": c.number,
                "status": c.status,
                "title": c.title,
                "applicant": c.applicant,
                "url": reverse("case", args=[c.number]),
            },
        }
        for c in Case.objects.filter(site_lon__isnull=False).order_by("number")
    ]
    return JsonResponse({"type": "FeatureCollection", "features": features})


@functools.cache
def _limits_geojson(folder: str, mtime_ns: int) -> dict[str, Any]:
    """A municipality's limits (its layers' ``boundary``) in WGS 84, for the register map.

    Cached per layers folder and the boundary file's modification time.
    """
    import json

    from georeview.load.layers import load_layers
    from georeview.units import crs_metres_per_unit

    layers = load_layers(Path(folder))
    gdf = layers.read("boundary")
    if gdf is None or gdf.empty:
        return {"type": "FeatureCollection", "features": []}
    name = layers.config.village_name
    # 1 m of simplification, in the working CRS's own unit: the map shows a village, not
    # a survey
    out = gdf[["geometry"]].assign(name=name)
    out["geometry"] = out.geometry.simplify(
        LIMITS_SIMPLIFY_M / crs_metres_per_unit(layers.working_crs)
    )
    return json.loads(out.to_crs(4326).to_json(drop_id=True))


@village_only
@require_GET
def register_limits(request: Any) -> Any:
    """The limits of every municipality the workspace has layers for, as GeoJSON (WGS 84)."""
    features: list[Any] = []
    for folder in _municipalities(_layers_root()).values():
        boundary = load_boundary_path(folder)
        if boundary is None:
            continue
        features += _limits_geojson(str(folder), boundary.stat().st_mtime_ns)["features"]
    return JsonResponse({"type": "FeatureCollection", "features": features})


def load_boundary_path(folder: Path) -> Path | None:
    """The boundary file a layers folder names, if it has one."""
    from georeview.load.layers import load_layers

    try:
        return load_layers(folder).path("boundary")
    except GeoReviewError:
        return None


@applicant_or_village
@require_GET
def job_status(request: Any, job_id: int) -> Any:
    """A job's state and progress, for the page that polls it."""
    from georeview.web.models import Job

    job = Job.objects.filter(id=job_id).select_related("case").first()
    if job is None:
        raise Http404("no such job")
    if job.case is not None:
        case_for(request, job.case.number)
    elif not is_village(request.user):
        raise Http404("no such job")
    return JsonResponse(_job_dict(job) or {})


# ----------------------------------------------------------------- intake


def _upload_form(request: Any) -> Any:
    from georeview.web.forms import UploadForm

    return UploadForm(request.POST or None, request.FILES or None)


@applicant_or_village
def new_case(request: Any) -> Any:
    """Open a case by uploading a submission zip; its review is queued at once."""
    from georeview.cases import service
    from georeview.web import jobs

    form = _upload_form(request)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["submission"]
        name = _safe_name(upload.name, "submission.zip")
        try:
            path = _receive(upload, name)
        except _TooLargeError as exc:
            form.add_error("submission", str(exc))
            return render(request, "web/new_case.html", {"form": form}, status=400)
        try:
            owner = request.user if role_of(request.user) == "applicant" else None
            case = service.open_case(
                _ws(), path, by=_by(request), review=False, owner=owner, source_name=name
            )
        except GeoReviewError as exc:
            form.add_error("submission", exc.one_line())
            return render(request, "web/new_case.html", {"form": form}, status=400)
        finally:
            _forget(path)
        jobs.enqueue_review(case, user=request.user, by=_by(request))
        messages.success(request, f"Case {case.number} opened; its review is running.")
        return redirect("case", case.number)
    status = 400 if request.method == "POST" else 200
    return render(request, "web/new_case.html", {"form": form}, status=status)


@applicant_or_village
@require_POST
def resubmit(request: Any, number: str) -> Any:
    """File a resubmission zip as the case's next round; its review is queued."""
    from georeview.cases import service
    from georeview.web import jobs

    case = case_for(request, number)
    form = _upload_form(request)
    if not form.is_valid():
        messages.error(request, "; ".join(e for errs in form.errors.values() for e in errs))
        return _back(case.number, "resubmit")
    upload = form.cleaned_data["submission"]
    name = _safe_name(upload.name, "resubmission.zip")
    try:
        path = _receive(upload, name)
    except _TooLargeError as exc:
        messages.error(request, str(exc))
        return _back(case.number, "resubmit")
    try:
        rnd = service.resubmit(
            _ws(), case.number, path, by=_by(request), review=False, source_name=name
        )
    except GeoReviewError as exc:
        messages.error(request, exc.one_line())
        return _back(case.number, "resubmit")
    finally:
        _forget(path)
    jobs.enqueue_review(case, user=request.user, by=_by(request))
    messages.success(request, f"Round {rnd.number} received; its review is running.")
    return _back(case.number)


@applicant_or_village
@require_POST
def withdraw(request: Any, number: str) -> Any:
    """The applicant withdraws the application (or the Village records that they did)."""
    from georeview.cases import service

    case = case_for(request, number)
    try:
        service.withdraw(case.number, by=_by(request), reason=request.POST.get("reason", ""))
    except GeoReviewError as exc:
        messages.error(request, exc.one_line())
    else:
        messages.success(request, f"Case {case.number} withdrawn.")
    return _back(case.number)


# ----------------------------------------------------------------- the Village's actions


def _act(request: Any, number: str, anchor: str, change: Any, done: str) -> Any:
    """Run one change on a case from a form; say what happened, or why not, on the page."""
    case = case_for(request, number)
    try:
        change(case)
    except GeoReviewError as exc:
        messages.error(request, exc.one_line())
    else:
        messages.success(request, done)
    return _back(case.number, anchor)


@village_only
@require_POST
def review_again(request: Any, number: str) -> Any:
    """Queue a review of the current round (after determinations, or a failed job)."""
    from georeview.web import jobs

    case = case_for(request, number)
    jobs.enqueue_review(case, user=request.user, by=_by(request))
    messages.success(request, "Review queued.")
    return _back(case.number)


@village_only
@require_POST
def determine(request: Any, number: str) -> Any:
    """Record one of the Village's determinations from the form."""
    from georeview.cases import service
    from georeview.web.forms import DeterminationForm

    form = DeterminationForm(request.POST)
    if not form.is_valid():
        messages.error(request, "a determination needs its fact, value and reason")
        return _back(number, "determinations")
    c = form.cleaned_data

    def change(case: Any) -> None:
        value = service.parse_value(c["fact"], c["value"])
        service.determine(
            case.number,
            c["fact"],
            value,
            by=_by(request),
            reason=c["reason"],
            decided_by=c["decided_by"] or None,
            expected_revision=_revision(request),
        )

    return _act(
        request,
        number,
        "determinations",
        change,
        f"Determination of {c['fact']} recorded; review again before deciding.",
    )


@village_only
@require_POST
def action_add(request: Any, number: str) -> Any:
    """A comment, condition, internal note or "verified on sheet" on a finding."""
    from georeview.cases import service
    from georeview.web.forms import ActionForm

    form = ActionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "the action form was not complete")
        return _back(number)
    c = form.cleaned_data

    def change(case: Any) -> None:
        service.add_action(
            _ws(),
            case.number,
            c["kind"],
            c["text"],
            by=_by(request),
            rule_id=c["rule_id"],
            sheet=c["sheet"],
            expected_revision=c["revision"],
        )

    return _act(
        request, number, c["rule_id"] or "general", change, f"{c['kind'].title()} recorded."
    )


@village_only
@require_POST
def action_resolve(request: Any, number: str, action: int) -> Any:
    """Close a comment or condition (fixed, withdrawn) with why."""
    from georeview.cases import service

    def change(case: Any) -> None:
        service.resolve_action(
            case.number,
            action,
            by=_by(request),
            resolution=request.POST.get("reason", "") or "resolved by the reviewer",
            expected_revision=_revision(request),
        )

    return _act(request, number, "", change, f"Action {action} resolved.")


@village_only
@require_POST
def decide(request: Any, number: str) -> Any:
    """The Village's decision on the current round, and its letter (HTML and PDF)."""
    from georeview.cases import service
    from georeview.web.forms import DecideForm

    form = DecideForm(request.POST)
    if not form.is_valid():
        messages.error(request, "choose a decision")
        return _back(number, "decide")
    c = form.cleaned_data

    def change(case: Any) -> None:
        service.decide(
            _ws(),
            case.number,
            c["outcome"],
            by=_by(request),
            reason=c["reason"],
            expected_revision=c["revision"],
        )
        service.write_letter(_ws(), case.number, by=_by(request))

    return _act(request, number, "letters", change, "Decision recorded and its letter written.")


@village_only
@require_POST
def issue(request: Any, number: str) -> Any:
    """Record that the permit was issued, or close the case (``what``)."""
    from georeview.cases import service

    what = request.POST.get("what", "issue")

    def change(case: Any) -> None:
        if what == "close":
            service.close_case(case.number, by=_by(request), reason=request.POST.get("reason", ""))
        else:
            service.issue_permit(case.number, by=_by(request))

    return _act(
        request, number, "", change, "Permit issued." if what != "close" else "Case closed."
    )


@village_only
@require_POST
def payment(request: Any, number: str) -> Any:
    """A fee paid or a security received."""
    from georeview.cases import service
    from georeview.web.forms import PaymentForm

    form = PaymentForm(request.POST)
    if not form.is_valid():
        messages.error(request, "a payment needs its kind and amount")
        return _back(number, "payments")
    c = form.cleaned_data

    def change(case: Any) -> None:
        service.record_payment(
            case.number,
            c["kind"],
            c["amount_usd"],
            by=_by(request),
            received_on=c["received_on"] or dt.date.today(),
            note=c["note"],
        )

    return _act(request, number, "payments", change, "Payment recorded.")


@village_only
@require_POST
def set_owner(request: Any, number: str) -> Any:
    """Link the case to an applicant's account (a case opened at the counter)."""
    from georeview.cases import service

    user = (
        get_user_model()
        .objects.filter(username=request.POST.get("owner", ""), groups__name="applicant")
        .first()
    )

    def change(case: Any) -> None:
        service.link_owner(case.number, user, by=_by(request))

    return _act(request, number, "", change, "Applicant's account linked.")


@village_only
@require_POST
def inspections(request: Any, number: str) -> Any:
    """Check an approved case's inspection log against its rain data."""
    from georeview.cases import service
    from georeview.web.forms import InspectionsForm

    case = case_for(request, number)
    form = InspectionsForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "upload both the inspection log and the rain data (CSV)")
        return _back(case.number, "inspections")
    got: list[Path] = []
    try:
        got.extend(_receive(form.cleaned_data[k], f"{k}.csv") for k in ("log", "rain"))
        check = service.record_inspections(_ws(), case.number, got[0], got[1], by=_by(request))
    except (GeoReviewError, _TooLargeError) as exc:
        messages.error(request, exc.one_line() if isinstance(exc, GeoReviewError) else str(exc))
        return _back(case.number, "inspections")
    finally:
        for p in got:
            _forget(p)
    messages.success(request, f"Inspection check {check.number}: {check.status}.")
    return _back(case.number, "inspections")


# ----------------------------------------------------------------- screenings


def _municipalities(layers_root: Path | None) -> dict[str, Path]:
    """The municipalities with a layers folder the server may screen against."""
    from georeview.ordinances import municipalities
    from georeview.pipeline.layers_folder import find_layers_dir

    out = {}
    for m in municipalities():
        try:
            out[m] = (layers_root / m) if layers_root else find_layers_dir(m)
        except GeoReviewError:
            continue
        if not (out[m] / "layers.toml").is_file():
            out.pop(m)
    return out


def _layers_root() -> Path | None:
    from django.conf import settings

    root = getattr(settings, "GEOREVIEW_LAYERS_ROOT", None)
    return Path(root) if root else None


@village_only
@require_GET
def screens(request: Any) -> Any:
    """The screenings run from the workspace, newest first, and the form to start one."""
    from georeview.web.forms import ScreenForm
    from georeview.web.models import Job

    form = ScreenForm(municipalities=sorted(_municipalities(_layers_root())))
    jobs = Job.objects.filter(kind=Job.Kind.SCREEN).order_by("-id")[:50]
    return render(request, "web/screens.html", {"form": form, "jobs": jobs})


@village_only
@require_POST
def screen_new(request: Any) -> Any:
    """Upload a parcel file and queue its screening."""
    from georeview.web import jobs
    from georeview.web.forms import ScreenForm

    layers = _municipalities(_layers_root())
    form = ScreenForm(request.POST, request.FILES, municipalities=sorted(layers))
    if not form.is_valid():
        messages.error(request, "a screening needs a parcel file and a municipality")
        return redirect("screens")
    c = form.cleaned_data
    ws = _ws()
    name = _safe_name(c["parcels"].name, "parcels.gpkg")
    try:
        got = _receive(c["parcels"], name)
    except _TooLargeError as exc:
        messages.error(request, str(exc))
        return redirect("screens")
    (ws.files / "screenings").mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="screen-", dir=ws.files / "screenings"))
    parcels = folder / name
    shutil.move(str(got), parcels)
    _forget(got)
    job = jobs.enqueue_screen(
        {
            "parcels": ws.relative(parcels),
            "layers": str(layers[c["municipality"]]),
            "municipality": c["municipality"],
            "assume": c["assume"],
            "out": ws.relative(folder / "screening.csv"),
            "index": ws.relative(folder / "index.html"),
            "name": name,
        },
        user=request.user,
        by=_by(request),
    )
    return redirect("screen", job.id)


@village_only
@require_GET
def screen_page(request: Any, job_id: int) -> Any:
    """One screening: its progress while it runs, its results when done."""
    from georeview.web.models import Job

    job = Job.objects.filter(id=job_id, kind=Job.Kind.SCREEN).first()
    if job is None:
        raise Http404("no such screening")
    return render(request, "web/screen.html", {"job": job})


def forbidden(request: Any, exception: Any = None) -> HttpResponse:
    """403 in the workspace's own page."""
    return render(
        request, "web/error.html", {"code": 403, "what": "Not for this account."}, status=403
    )


def not_found(request: Any, exception: Any = None) -> HttpResponse:
    """404 in the workspace's own page (a case the user may not see reads as absent)."""
    return render(request, "web/error.html", {"code": 404, "what": "Nothing here."}, status=404)
