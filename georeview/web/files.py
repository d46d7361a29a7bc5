"""Every file the workspace serves, each behind the same case check as its page.

A file is named by what it is (round 2's file ``plan.pdf``, review 1's ``map.html``,
letter 3's PDF), looked up in the case's own rows, and resolved with
:meth:`georeview.cases.store.Workspace.path`, which refuses anything outside the
workspace: a URL never names a path on disk.

The review's own pages (report.html, map.html) carry scripts georeview wrote inline, with
text from the submission inside them (escaped when written). They are served under a
policy of their own: a sandbox without the app's origin (so a script in them can reach
neither the session nor the app), inline scripts and styles only, nothing fetched.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any

from django.http import FileResponse, Http404
from django.views.decorators.http import require_GET

from georeview.web.authz import applicant_or_village, case_for, village_only
from georeview.web.roles import is_village

__all__ = [
    "SANDBOX_CSP",
    "inspection_file",
    "letter_file",
    "review_file",
    "round_file",
    "screen_file",
]

#: The policy of the review's own HTML pages (see the module's docstring). ``'unsafe-eval'``
#: because the map's measuring tool (leaflet-measure) compiles its lodash templates with
#: ``new Function``; it is allowed only here, in a sandbox with no origin and no network.
SANDBOX_CSP = (
    "sandbox allow-scripts allow-popups allow-downloads; default-src 'none'; "
    "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:; "
    "font-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'; "
    "frame-ancestors 'self'"
)
#: The review's outputs a user may download, by name.
REVIEW_FILES = ("report.html", "map.html", "report.json", "layers.gpkg")


def _send(path: Path, *, download: bool = False, filename: str | None = None) -> Any:
    if not path.is_file():
        raise Http404("no such file")
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    inline = kind in ("text/html", "application/pdf", "image/png", "image/jpeg") and not download
    resp = FileResponse(
        path.open("rb"), content_type=kind, as_attachment=not inline, filename=filename or path.name
    )
    if kind == "text/html":
        resp["Content-Security-Policy"] = SANDBOX_CSP
    return resp


def _ws() -> Any:
    from georeview.cases.store import opened

    return opened()


@applicant_or_village
@require_GET
def round_file(request: Any, number: str, round_number: int, path: str) -> Any:
    """One file of a round, exactly as received (a download, never rendered here)."""
    case = case_for(request, number)
    rnd = case.rounds.filter(number=round_number).first()
    row = None if rnd is None else rnd.files.filter(path=path).first()
    if row is None:
        raise Http404("no such file")
    return _send(_ws().path(f"{rnd.folder}/{row.path}"), download=True)


@applicant_or_village
@require_GET
def review_file(request: Any, number: str, round_number: int, review_number: int, name: str) -> Any:
    """A review's report.html, map.html, report.json or layers.gpkg."""
    case = case_for(request, number)
    review = None
    rnd = case.rounds.filter(number=round_number).first()
    if rnd is not None:
        review = rnd.reviews.filter(number=review_number).first()
    if review is None or name not in REVIEW_FILES:
        raise Http404("no such file")
    return _send(_ws().path(f"{review.folder}/{name}"), download=name == "layers.gpkg")


@applicant_or_village
@require_GET
def letter_file(request: Any, number: str, letter_number: int, ext: str) -> Any:
    """A letter as written: its PDF, or its HTML."""
    case = case_for(request, number)
    letter = case.letters.filter(number=letter_number).first()
    if letter is None or ext not in ("pdf", "html"):
        raise Http404("no such letter")
    stored = letter.pdf_path if ext == "pdf" else letter.html_path
    if not stored:
        raise Http404("no such letter")
    return _send(_ws().path(stored))


@village_only
@require_GET
def inspection_file(request: Any, number: str, check_number: int, name: str) -> Any:
    """An inspection check's log, rain file or report."""
    case = case_for(request, number)
    check = case.inspections.filter(number=check_number).first()
    stored = (
        None
        if check is None
        else {
            "log.csv": check.log_path,
            "rain.csv": check.rain_path,
            "report.html": check.report_path,
        }.get(name)
    )
    if not stored:
        raise Http404("no such file")
    return _send(_ws().path(stored))


@village_only
@require_GET
def screen_file(request: Any, job_id: int, name: str) -> Any:
    """A screening's results (CSV) or its index page."""
    from georeview.web.models import Job

    job = Job.objects.filter(id=job_id, kind=Job.Kind.SCREEN, state=Job.State.DONE).first()
    if job is None or not is_village(request.user):
        raise Http404("no such file")
    stored = {"screening.csv": job.params.get("out"), "index.html": job.params.get("index")}
    if not stored.get(name):
        raise Http404("no such file")
    return _send(_ws().path(str(stored[name])), download=name.endswith(".csv"))
