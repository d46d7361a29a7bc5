"""What a batch review writes beside the reports: summary.csv and .xlsx, sites.gpkg, index.html.

Every table reads each submission's summary row and, for its outcome, its report.json.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from georeview.errors import GeoReviewError, OutputError
from georeview.sanitise import csv_cell

__all__ = [
    "SUMMARY_COLUMNS",
    "SUMMARY_LABELS",
    "in_one_crs",
    "received_and_due",
    "with_outcomes",
    "write_batch_index",
    "write_sites",
    "write_summary",
    "write_summary_xlsx",
]

log = logging.getLogger(__name__)

#: Columns of summary.csv, in order.
#: ``outcome`` is what a reviewer sorts by: error, or the report's recommendation
#: (summary.outcome: return to applicant, disapprove, awaiting the Village, approve with
#: conditions, approve, not regulated); ``extraordinary``
#: is yes/no/unknown on its own; ``report_html`` is the link to the reader's report.
#: ``applicant``, ``application_date`` (received) and ``decision_deadline`` (with its
#: ``decision_citation``) are what a clerk files a submission by.
SUMMARY_COLUMNS = (
    "name",
    "source",
    "status",
    "outcome",
    "recommendation",
    "error",
    "applicant",
    "application_date",
    "decision_deadline",
    "decision_citation",
    "municipality",
    "jurisdiction",
    "regulated",
    "category",
    "larger_site",
    "extraordinary",
    "site_area_sqft",
    "disturbed_area_sqft",
    "fail",
    "needs_info",
    "pass",
    "report",
    "report_html",
)
#: Each summary column's header in summary.xlsx (plain words, units) and its meaning.
SUMMARY_LABELS: dict[str, tuple[str, str]] = {
    "name": ("Name", "the submission's output folder under the batch's output"),
    "source": ("Source", "the folder or zip entry it was read from"),
    "status": ("Status", "ok (reviewed) or error (see Error)"),
    "outcome": (
        "Outcome",
        "error, return to applicant, disapprove, awaiting the Village, approve with "
        "conditions, approve, or not regulated",
    ),
    "recommendation": (
        "Recommendation",
        "the report's recommendation in the ordinance's words (report.json summary.outcome.words)",
    ),
    "error": ("Error", "why the submission could not be reviewed"),
    "applicant": ("Applicant", "the applicant the submission names (submission.toml applicant)"),
    "application_date": (
        "Received",
        "the date the application was received (submission.toml application_date)",
    ),
    "decision_deadline": (
        "Decision deadline",
        "the latest day the Village must decide by (report.json deadlines marked decision in"
        " the ordinance's calendar.toml; blank when the category or dates leave it open)",
    ),
    "decision_citation": ("Decision deadline (citation)", "the section that sets that deadline"),
    "municipality": ("Municipality", "the ordinance it was reviewed against"),
    "jurisdiction": ("Jurisdiction", "village, extraterritorial, outside, straddles ..."),
    "regulated": ("Regulated", "yes, no or unknown"),
    "category": ("Category", "the ordinance's category"),
    "larger_site": ("Larger site", "yes, no or unknown"),
    "extraordinary": ("Extraordinary", "yes, no or unknown"),
    "site_area_sqft": ("Site area (sq ft)", "the site polygon's area, in the working CRS"),
    "disturbed_area_sqft": ("Disturbed area (sq ft)", "the disturbance polygon's area"),
    "fail": ("Findings failing", "findings with status fail"),
    "needs_info": ("Findings needing information", "findings with status needs_info"),
    "pass": ("Findings passing", "findings with status pass"),
    "report": ("Report (JSON)", "path of report.json, relative to the batch's output"),
    "report_html": ("Report (HTML)", "path of report.html, relative to the batch's output"),
}
#: report.json ``summary.outcome.code`` -> the outcome column's words.
OUTCOME_WORDS = {
    "return_to_applicant": "return to applicant",
    "disapprove": "disapprove",
    "awaiting_village": "awaiting the Village",
    "approve_with_conditions": "approve with conditions",
    "approve": "approve",
    "not_regulated": "not regulated",
}
#: The batch's index.html table, in this order (the report link is shown first).
INDEX_COLUMNS = (
    "report_html",
    "name",
    "applicant",
    "application_date",
    "decision_deadline",
    "outcome",
    "recommendation",
    "error",
    "jurisdiction",
    "regulated",
    "category",
    "larger_site",
    "extraordinary",
    "fail",
    "needs_info",
    "site_area_sqft",
    "disturbed_area_sqft",
)
#: Headers of the index page: short words (summary.xlsx's SUMMARY_LABELS say more).
INDEX_LABELS: dict[str, str] = {
    **{c: words for c, (words, _) in SUMMARY_LABELS.items()},
    "report_html": "Report",
    "name": "Submission",
    "fail": "Fails",
    "needs_info": "Needs information",
}


#: CRS of sites.gpkg and index.html when no submission could be read (otherwise the
#: working CRS of the submissions' layers).
_DEFAULT_CRS = "EPSG:3071"


def _outcome(row: Mapping[str, Any], report: Mapping[str, Any] | None) -> dict[str, Any]:
    """The reviewer's columns of one row, read from its report.json (see SUMMARY_COLUMNS)."""
    if row.get("status") != "ok" or report is None:
        return {"outcome": "error" if row.get("status") == "error" else "", "extraordinary": ""}
    c = report.get("classification") or {}
    counts = (report.get("summary") or {}).get("counts") or {}
    # None (or a missing key) is not decided: "unknown"
    yes_no: dict[bool | None, str] = {True: "yes", False: "no"}
    extraordinary = yes_no.get(c.get("extraordinary"), "unknown")
    code = ((report.get("summary") or {}).get("outcome") or {}).get("code")
    if code:
        # the reviewer's outcome of the report (georeview.pipeline.owes), in words
        outcome = OUTCOME_WORDS.get(code, code.replace("_", " "))
    elif counts.get("fail"):
        outcome = "fails"
    elif counts.get("needs_info") or c.get("regulated") is None:
        outcome = "incomplete"
    elif not c.get("regulated"):
        outcome = "not regulated"
    elif extraordinary == "yes":
        outcome = "extraordinary"
    else:
        outcome = c.get("category") or "regulated"
    words = ((report.get("summary") or {}).get("outcome") or {}).get("words") or ""
    return {
        "outcome": outcome,
        "recommendation": str(words),
        "extraordinary": extraordinary,
        "report_html": str(PurePosixPath(str(row["name"])) / "report.html"),
    }


def received_and_due(report: Mapping[str, Any]) -> dict[str, str]:
    """The applicant, received date and decision deadline of one report.json.

    The decision deadline is the latest dated one of the deadlines the municipality's
    ``calendar.toml`` marks ``decision = true`` (as
    :func:`georeview.calendar.starts_after_decision` reads them): after additional
    information the later decision binds. Blank when none is dated (no application date,
    or a category not yet known).
    """
    from georeview.calendar import municipality_calendar

    sub = report.get("submission") or {}
    due: tuple[str, str] = ("", "")
    listed = report.get("deadlines") or []
    if listed:
        try:
            spec = municipality_calendar(str(report.get("municipality")))
        except GeoReviewError:
            spec = {}
        ids = {d.get("id") for d in spec.get("deadlines", []) if d.get("decision")}
        dated = [
            (str(d["date"]), str(d.get("citation") or ""))
            for d in listed
            if d.get("id") in ids and d.get("date")
        ]
        if dated:
            due = max(dated)  # ISO dates: the latest sorts last
    return {
        "applicant": str(sub.get("applicant") or ""),
        "application_date": str(sub.get("application_date") or ""),
        "decision_deadline": due[0],
        "decision_citation": due[1],
    }


def with_outcomes(out: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with their outcome columns, each report.json read once."""
    full = []
    for r in rows:
        if r.get("outcome"):
            full.append(r)
            continue
        report = None
        if r.get("status") == "ok" and r.get("report"):
            try:
                report = json.loads((out / str(r["report"])).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                report = None
        extra = received_and_due(report) if report is not None else {}
        full.append({**r, **extra, **_outcome(r, report)})
    return full


def write_summary(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write summary.csv: one row per submission, every cell made safe for a spreadsheet."""
    from georeview.report.files import write_atomic

    rows = with_outcomes(path.parent, rows)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(SUMMARY_COLUMNS), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: csv_cell(r.get(k, "")) for k in SUMMARY_COLUMNS})
    write_atomic(path, buf.getvalue())


def write_summary_xlsx(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write summary.xlsx: summary.csv's rows, names as text, a header in words.

    The workbook is built in memory (a batch has one row per submission) and written
    whole by :func:`~georeview.report.files.write_atomic`.
    """
    import io

    import pandas as pd

    from georeview.report.decimals import round_frame
    from georeview.report.files import write_atomic
    from georeview.report.xlsx import write_xlsx

    rows = with_outcomes(path.parent, rows)
    frame = pd.DataFrame(
        [{k: r.get(k) for k in SUMMARY_COLUMNS} for r in rows], columns=list(SUMMARY_COLUMNS)
    )
    numbers = ("site_area_sqft", "disturbed_area_sqft", "fail", "needs_info", "pass")
    for col in numbers:
        frame[col] = pd.to_numeric(frame[col].replace("", None))
    text = [c for c in SUMMARY_COLUMNS if c not in numbers]
    for col in text:
        frame[col] = frame[col].astype("string")
    frame = round_frame(frame, SUMMARY_COLUMNS)
    columns = [(c, *SUMMARY_LABELS[c]) for c in SUMMARY_COLUMNS]
    buf = io.BytesIO()
    write_xlsx(buf, [frame], columns, n_rows=len(frame), sheet="summary", text_columns=text)
    return write_atomic(path, buf.getvalue())


def in_one_crs(sites: list[Any]) -> tuple[str, list[Any]]:
    """The batch's CRS and each site in it.

    ``sites`` holds ``(geometry, working_crs)`` per row, ``None`` for error rows. The
    batch's CRS is the working CRS of its first site (every Wisconsin municipality's is
    EPSG:3071); a site reviewed in another working CRS is reprojected into it, with a
    warning.
    """
    import geopandas as gpd
    from pyproj import CRS

    first = next((s[1] for s in sites if s is not None), _DEFAULT_CRS)
    target = CRS.from_user_input(first)
    out = []
    moved = 0
    for s in sites:  # one geometry per submission
        if s is None or CRS.from_user_input(s[1]) == target:
            out.append(None if s is None else s[0])
        else:
            out.append(gpd.GeoSeries([s[0]], crs=s[1]).to_crs(target).iloc[0])
            moved += 1
    if moved:
        log.warning("%d sites reviewed in another working CRS are drawn in %s", moved, first)
    return first, out


def _village_limits(out: Path, rows: list[dict[str, Any]], crs: str) -> Any:
    """The village limits of the municipalities reviewed (context for the overview map)."""
    import geopandas as gpd

    from georeview.load import load_layers

    folders: dict[str, None] = {}
    for r in rows:
        if r.get("status") != "ok" or not r.get("report"):
            continue
        try:
            report = json.loads((out / str(r["report"])).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        folder = (report.get("layers") or {}).get("folder")
        if folder:
            folders[str(folder)] = None
    frames = []
    for folder in folders:
        try:
            layers = load_layers(Path(folder))
            boundary = layers.read("boundary")
        except GeoReviewError as exc:
            log.warning("village limits not drawn on the overview: %s", exc.one_line())
            continue
        if boundary is not None and len(boundary):
            name = layers.config.village_name or layers.config.municipality.title()
            frames.append(
                gpd.GeoDataFrame(
                    {"name": [name]},
                    geometry=[boundary.to_crs(crs).geometry.union_all()],
                    crs=crs,
                )
            )
    if not frames:
        return None
    import pandas as pd

    return gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), crs=crs)


def write_batch_index(
    path: Path, rows: list[dict[str, Any]], sites: list[Any], crs: str, *, title: str
) -> Path:
    """Write index.html: a sortable table and a map of every submission, linked to its report.

    Error rows have no site and appear in the table only.
    """
    import geopandas as gpd
    import pandas as pd

    from georeview.report.index import quantity_decimals, write_index

    rows = with_outcomes(path.parent, rows)
    frame = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    gdf = gpd.GeoDataFrame(frame, geometry=list(sites), crs=crs)
    return write_index(
        gdf,
        path,
        title=title,
        working_crs=crs,
        columns=list(INDEX_COLUMNS),
        link_column="report_html",
        context=_village_limits(path.parent, rows, crs),
        labels=INDEX_LABELS,
        decimals=quantity_decimals(INDEX_COLUMNS),
    )


def write_sites(path: Path, rows: list[dict[str, Any]], sites: list[Any], crs: str) -> Path | None:
    """Write the reviewed sites with their summary row (temporary name, then rename)."""
    import geopandas as gpd
    import pandas as pd

    from georeview.geopackage import write_layer
    from georeview.report.decimals import round_frame

    keep = [i for i, s in enumerate(sites) if s is not None]
    if not keep:
        return None
    rows = with_outcomes(path.parent, rows)
    frame = pd.DataFrame([rows[i] for i in keep], columns=list(SUMMARY_COLUMNS))
    for col in ("site_area_sqft", "disturbed_area_sqft"):
        frame[col] = pd.to_numeric(frame[col])
    gdf = gpd.GeoDataFrame(frame, geometry=[sites[i] for i in keep], crs=crs)
    gdf = round_frame(gdf, SUMMARY_COLUMNS)
    tmp = path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")
    try:
        tmp.unlink(missing_ok=True)
        # GeoPackage 1.3 with typed MultiPolygon geometry, as the screening's (ArcGIS Pro 3.x)
        write_layer(gdf, tmp, "sites", geometry_type="MultiPolygon", promote_to_multi=True)
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"cannot write ({exc})", path=path) from None
    finally:
        tmp.unlink(missing_ok=True)
    return path
