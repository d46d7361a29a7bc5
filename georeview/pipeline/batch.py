"""Batch review: a folder of submission folders (and zip files of them).

``georeview review FOLDER --out OUT`` on a folder that holds submissions writes one
report per submission (``OUT/<name>/report.json``, ``report.html``, ``map.html``), a
summary table ``OUT/summary.csv`` and the sites as ``OUT/sites.gpkg``. A submission
that cannot be reviewed (any :class:`georeview.errors.GeoReviewError`) becomes an error
row with its reason; the others finish.

The entries are found by :mod:`.submissions` (zip files extracted safely by
:mod:`.zipsafe`); the tables beside the reports are written by :mod:`.batch_outputs`.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from georeview.errors import DataSourceError, GeoReviewError, OutputError
from georeview.pipeline.batch_outputs import (
    SUMMARY_COLUMNS,
    in_one_crs,
    received_and_due,
    with_outcomes,
    write_batch_index,
    write_sites,
    write_summary,
    write_summary_xlsx,
)
from georeview.pipeline.submissions import find_submissions
from georeview.pipeline.zipsafe import reason_of
from georeview.report.files import claim_folder

__all__ = ["BatchResult", "review_many"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Job:
    """One review job (picklable, for the process pool)."""

    name: str
    sub: Path
    out: Path
    layers_dir: Path | None
    overwrite: bool
    #: The Village's determinations for it (``<name>.toml`` of ``--determinations DIR``).
    determinations: Path | None
    #: The batch folder: no determinations file may come from it.
    batch: Path


#: What one job gives: its summary row, its (site, working CRS), its error text.
_Done = tuple[dict[str, Any], Any, str]


@dataclass(frozen=True)
class BatchResult:
    """What a batch review wrote: one summary row per submission."""

    out: Path
    rows: tuple[dict[str, Any], ...]
    summary_csv: Path
    sites_gpkg: Path | None
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n_ok(self) -> int:
        """Submissions reviewed."""
        return sum(r["status"] == "ok" for r in self.rows)

    @property
    def n_error(self) -> int:
        """Submissions that became error rows."""
        return sum(r["status"] == "error" for r in self.rows)


def _review_one(job: _Job, cache: dict) -> tuple[dict[str, Any], Any]:
    """Review one submission and write its reports; return its summary row and site."""
    from georeview.load import load_layers
    from georeview.pipeline.jurisdictions import jurisdictions_for
    from georeview.pipeline.layers_folder import resolve_layers
    from georeview.pipeline.review import review
    from georeview.report import write_reports

    name, sub = job.name, job.sub
    target = job.out / name
    if (target / "report.json").exists() and not job.overwrite:
        raise OutputError("report.json exists; pass --overwrite to replace it", path=target)
    folder, _ = resolve_layers(sub, job.layers_dir, also_not_in=(job.batch,))
    key = str(Path(folder).resolve())
    if key not in cache:
        layers = load_layers(folder)
        cache[key] = (layers, jurisdictions_for(layers))
    layers, jur = cache[key]
    result = review(
        sub,
        layers=layers,
        jurisdictions=jur,
        determinations=job.determinations,
        determinations_not_in=(job.batch,),
    )
    write_reports(result, target)
    report = result.to_dict()
    m = report["measures"]
    c = report["classification"]
    counts = report["summary"]["counts"]
    row = {
        "municipality": report["municipality"],
        "jurisdiction": report["jurisdiction"]["status"],
        "regulated": {True: "yes", False: "no", None: "unknown"}[c["regulated"]],
        "category": c["category"] or "",
        "larger_site": {True: "yes", False: "no"}.get(c["larger_site"], "unknown"),
        "site_area_sqft": m["site_area_sqft"],
        "disturbed_area_sqft": m["disturbed_area_sqft"],
        "fail": counts["fail"],
        "needs_info": counts["needs_info"],
        "pass": counts["pass"],
        "report": str(Path(name) / "report.json"),
        **received_and_due(report),
    }
    # the site in its layers' working CRS, with that CRS (sites.gpkg states it)
    site = (result.submission.site.geometry.union_all(), result.layers.config.working_crs)
    return row, site


def _job(job: _Job) -> _Done:
    """Process-pool entry: review one submission, turning our errors into an error row."""
    return _guarded(job, {})


def _guarded(job: _Job, cache: dict) -> tuple[dict[str, Any], Any, str]:
    """Review one submission; any failure becomes its error text, never the batch's end.

    Our own errors give their one line. Anything else (a bug, a GEOS or GDAL failure
    on a strange geometry, a recursion limit) is logged with its traceback at debug
    level and becomes an error row naming the exception, so one record cannot stop
    the others.
    """
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row, site = _review_one(job, cache)
        return row, site, ""
    except GeoReviewError as exc:
        return {}, None, exc.one_line()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # per-record isolation, see the docstring
        log.debug("%s: unexpected failure", job.name, exc_info=True)
        return {}, None, f"could not be reviewed ({type(exc).__name__}: {reason_of(exc)})"


def review_many(
    folder: Path | str,
    out: Path | str,
    *,
    layers_dir: Path | str | None = None,
    overwrite: bool = False,
    workers: int = 1,
    on_submission: Callable[[int, int], None] | None = None,
    determinations_dir: Path | str | None = None,
) -> BatchResult:
    """Review every submission of a batch folder; write reports, summary.csv/.xlsx, sites.gpkg.

    Parameters
    ----------
    folder : path
        Folder of submission folders and zip files of them.
    out : path
        Output folder: ``<name>/report.json|html``, ``map.html``, ``summary.csv``,
        ``summary.xlsx``, ``sites.gpkg``.
    layers_dir : path, optional
        One layers folder for all; by default each submission's municipality picks its own.
    overwrite : bool
        Replace existing reports (otherwise such a submission becomes an error row).
    workers : int
        Review submissions in this many processes.
    on_submission : callable, optional
        Called with ``(reviewed, total)`` before the first and after each submission
        (the command line's progress bar).
    determinations_dir : path, optional
        The Village's determinations, one ``<submission name>.toml`` per submission
        that has any, in a folder outside the batch. A ``determinations.toml`` inside
        a submission or zip is never read (its report warns of it).

    Returns
    -------
    BatchResult
        One row per submission (in name order), ``status`` ``ok`` or ``error``.
    """
    import time

    t0 = time.perf_counter()
    folder, out = Path(folder), Path(out)
    if not folder.is_dir():
        raise DataSourceError("batch folder not found", path=folder)
    decided = _determinations_dir(determinations_dir, folder)
    # the folder is claimed for the whole batch: a second run on the same --out is
    # refused at once instead of both passing the "exists" check below
    with claim_folder(out):
        summary_csv = out / "summary.csv"
        if summary_csv.exists() and not overwrite:
            raise OutputError("summary.csv exists; pass --overwrite to replace it", path=out)
        with tempfile.TemporaryDirectory(prefix="georeview-batch-") as scratch:
            found = find_submissions(folder, Path(scratch))
            jobs = [
                _Job(
                    name,
                    sub,
                    out,
                    Path(layers_dir) if layers_dir else None,
                    overwrite,
                    _decided_for(decided, name),
                    folder,
                )
                for name, _, sub, err in found
                if sub is not None
            ]
            done = _run(jobs, workers, on_submission)
            rows, sites = _rows(found, done)
        rows = with_outcomes(out, rows)  # each report.json read once, for every table
        write_summary(summary_csv, rows)
        write_summary_xlsx(out / "summary.xlsx", rows)
        crs, geoms = in_one_crs(sites)
        gpkg = write_sites(out / "sites.gpkg", rows, geoms, crs)
        title = f"Batch review: {folder.name}"
        write_batch_index(out / "index.html", rows, geoms, crs, title=title)
    return BatchResult(
        out=out,
        rows=tuple(rows),
        summary_csv=summary_csv,
        sites_gpkg=gpkg,
        seconds=time.perf_counter() - t0,
    )


def _determinations_dir(path: Path | str | None, batch: Path) -> Path | None:
    """The ``--determinations`` folder of a batch, checked: a folder outside the batch.

    Raises
    ------
    DataSourceError
        Not a folder, or inside the batch folder (the applicants' files).
    """
    if path is None:
        return None
    import os

    path = Path(path)
    if not path.is_dir():
        raise DataSourceError(
            "for a batch, --determinations names a folder of <submission name>.toml files",
            path=path,
            field="--determinations",
        )
    if Path(os.path.realpath(path)).is_relative_to(Path(os.path.realpath(batch))):
        raise DataSourceError(
            "lies in the batch folder: the Village's determinations are kept outside the"
            " applicants' files",
            path=path,
            field="--determinations",
        )
    return path


def _decided_for(folder: Path | None, name: str) -> Path | None:
    """``<name>.toml`` of the determinations folder, when there is one.

    A link is passed on too, to be refused by name when it is read.
    """
    if folder is None:
        return None
    f = folder / f"{name}.toml"
    return f if f.exists() or f.is_symlink() else None


def _run(
    jobs: list[_Job], workers: int, on_submission: Callable[[int, int], None] | None = None
) -> dict[str, _Done]:
    """Run the jobs (in ``workers`` processes when more than one); results by name.

    In one process the layers and jurisdictions of a layers folder are loaded once and
    shared by its submissions. ``on_submission(done, total)`` is called after each.
    """

    def tick(n: int) -> None:
        if on_submission is not None:
            on_submission(n, len(jobs))

    done: dict[str, _Done] = {}
    tick(0)
    if workers > 1 and len(jobs) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            for job, result in zip(jobs, pool.map(_job, jobs), strict=True):
                done[job.name] = result
                tick(len(done))
        return done
    cache: dict = {}
    for job in jobs:
        done[job.name] = _guarded(job, cache)
        tick(len(done))
    return done


def _rows(
    found: list[tuple[str, str, Path | None, str]], done: dict[str, _Done]
) -> tuple[list[dict[str, Any]], list[Any]]:
    """One summary row and one site (or ``None``) per entry found, in the entries' order."""
    rows: list[dict[str, Any]] = []
    sites: list[Any] = []
    for name, source, sub, err in found:
        row, site, error = done.get(name, ({}, None, err)) if sub is not None else ({}, None, err)
        if error:
            log.info("%s: %s", name, error)  # printed with the summary
        rows.append(
            {
                **dict.fromkeys(SUMMARY_COLUMNS, ""),
                **row,
                "name": name,
                "source": source,
                "status": "error" if error else "ok",
                "error": error,
            }
        )
        sites.append(site)
    return rows, sites
