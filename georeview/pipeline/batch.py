"""Batch review: a folder of submission folders (and zip files of them).

``georeview review FOLDER --out OUT`` on a folder that holds submissions writes one
report per submission (``OUT/<name>/report.json``, ``report.html``, ``map.html``), a
summary table ``OUT/summary.csv`` and the sites as ``OUT/sites.gpkg``. A submission
that cannot be reviewed (any :class:`georeview.errors.GeoReviewError`) becomes an error
row with its reason; the others finish.

Zip files are extracted into a temporary folder, safely: entries that would land
outside it (``../``, absolute paths, drive letters), symbolic links, more than
:data:`MAX_ZIP_MEMBERS` entries or more than :data:`MAX_UNZIPPED_BYTES` of content
(counted while decompressing, not trusted from the header) are refused.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import stat
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from georeview.config import Limits, limits
from georeview.errors import DataSourceError, GeoReviewError, LimitError, OutputError
from georeview.sanitise import csv_cell, unique_names

log = logging.getLogger(__name__)

#: Default largest total uncompressed size of one zip file, bytes (``GEOREVIEW_MAX_ZIP_BYTES``).
MAX_UNZIPPED_BYTES = Limits().max_zip_bytes
#: Default most entries one zip file may hold (``GEOREVIEW_MAX_ZIP_MEMBERS``).
MAX_ZIP_MEMBERS = Limits().max_zip_members
#: Columns of summary.csv, in order.
#: ``outcome`` is what a reviewer sorts by: error, fails, incomplete (something needs
#: information), extraordinary (regulated and extraordinary, nothing fails or is
#: missing), the category (major, minor, regulated) or not regulated; ``extraordinary``
#: is yes/no/unknown on its own; ``report_html`` is the link to the reader's report.
SUMMARY_COLUMNS = (
    "name",
    "source",
    "status",
    "outcome",
    "error",
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
#: CRS of sites.gpkg and index.html when no submission could be read (otherwise the
#: working CRS of the submissions' layers).
_DEFAULT_CRS = "EPSG:3071"


def is_batch(path: Path | str) -> bool:
    """Whether ``path`` is a folder of submissions rather than one submission.

    True for a folder without its own submission.toml that holds at least one
    sub-folder with a submission.toml, or a zip file.
    """
    path = Path(path)
    if not path.is_dir() or (path / "submission.toml").exists():
        return False
    return any(
        (p.is_dir() and (p / "submission.toml").is_file())
        or (p.is_file() and p.suffix.lower() == ".zip")
        for p in path.iterdir()
    )


def _safe_member(info: zipfile.ZipInfo, zip_path: Path) -> PurePosixPath | None:
    """The relative path of a zip entry, or a refusal for one escaping the folder."""
    name = info.filename.replace("\\", "/")
    mode = (info.external_attr >> 16) & 0o170000
    if mode == stat.S_IFLNK:
        raise DataSourceError(f"refused: entry {info.filename!r} is a symbolic link", path=zip_path)
    p = PurePosixPath(name)
    if name.startswith("/") or (len(name) > 1 and name[1] == ":") or ".." in p.parts:
        raise DataSourceError(
            f"refused: entry {info.filename!r} would be written outside the folder", path=zip_path
        )
    parts = [x for x in p.parts if x not in ("", ".")]
    return PurePosixPath(*parts) if parts else None


def extract_zip(
    zip_path: Path | str,
    dest: Path | str,
    *,
    max_bytes: int | None = None,
    max_members: int | None = None,
) -> Path:
    """Extract a zip file into ``dest`` safely; return ``dest``.

    ``max_bytes`` and ``max_members`` default to the limits in force
    (:func:`georeview.config.limits`: ``GEOREVIEW_MAX_ZIP_BYTES``, ``GEOREVIEW_MAX_ZIP_MEMBERS``).

    Raises
    ------
    DataSourceError
        Not a zip file, or an entry escaping ``dest`` or a symbolic link.
    LimitError
        Too many entries or too many bytes once decompressed.
    """
    zip_path, dest = Path(zip_path), Path(dest)
    lim = limits()
    max_bytes = lim.max_zip_bytes if max_bytes is None else max_bytes
    max_members = lim.max_zip_members if max_members is None else max_members
    try:
        zf = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataSourceError(f"not a readable zip file ({exc})", path=zip_path) from None
    with zf:
        infos = zf.infolist()
        if len(infos) > max_members:
            raise LimitError(
                f"{len(infos):,} entries exceed the limit of {max_members:,}"
                " (GEOREVIEW_MAX_ZIP_MEMBERS)",
                path=zip_path,
            )
        if sum(i.file_size for i in infos) > max_bytes:
            raise LimitError(
                f"uncompressed size exceeds the limit of {max_bytes:,} bytes"
                " (GEOREVIEW_MAX_ZIP_BYTES)",
                path=zip_path,
            )
        planned = [(i, _safe_member(i, zip_path)) for i in infos]
        _check_members(planned, zip_path)
        total = 0
        root = dest.resolve()
        for info, rel in planned:
            if rel is None:
                continue
            target = (dest / rel).resolve()
            if not target.is_relative_to(root):
                raise DataSourceError(
                    f"refused: entry {info.filename!r} would be written outside the folder",
                    path=zip_path,
                )
            try:
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                # "x" mode: an entry never replaces a file already extracted
                with zf.open(info) as src, open(target, "xb") as dst:
                    while block := src.read(1 << 16):
                        total += len(block)
                        if total > max_bytes:
                            raise LimitError(
                                f"uncompressed size exceeds the limit of {max_bytes:,} bytes"
                                " (GEOREVIEW_MAX_ZIP_BYTES)",
                                path=zip_path,
                            )
                        dst.write(block)
            except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, ValueError) as exc:
                raise DataSourceError(
                    f"cannot extract {info.filename!r} ({_reason(exc)})", path=zip_path
                ) from None
    return dest


#: Compression methods the standard library decompresses (stored, deflate, bzip2, lzma).
_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}


def _check_members(
    planned: list[tuple[zipfile.ZipInfo, PurePosixPath | None]], zip_path: Path
) -> None:
    """Refuse, before extracting anything, entries that cannot be extracted as one tree.

    Encrypted entries (flag bit 0, APPNOTE 4.4.4), compression methods the standard
    library cannot read (Deflate64 is method 9), two entries for one path, and a path
    that is both a file and a folder.
    """
    files: set[str] = set()
    dirs: set[str] = set()
    for info, rel in planned:
        if info.flag_bits & 0x1:
            raise DataSourceError(
                f"entry {info.filename!r} is encrypted (password-protected);"
                " send the zip without a password",
                path=zip_path,
            )
        if info.compress_type not in _METHODS:
            extra = " (Deflate64)" if info.compress_type == 9 else ""
            raise DataSourceError(
                f"entry {info.filename!r} uses compression method {info.compress_type}{extra},"
                " which georeview cannot read; zip it again with ordinary deflate",
                path=zip_path,
            )
        if rel is None:
            continue
        key = rel.as_posix()
        parents = {p.as_posix() for p in rel.parents if p.as_posix() != "."}
        if info.is_dir():
            if key in files:
                raise DataSourceError(f"{key!r} is both a file and a folder", path=zip_path)
            dirs.add(key)
        else:
            if key in files:
                raise DataSourceError(f"two entries for {key!r}", path=zip_path)
            if key in dirs:
                raise DataSourceError(f"{key!r} is both a file and a folder", path=zip_path)
            files.add(key)
        clash = parents & files
        if clash:
            raise DataSourceError(
                f"{sorted(clash)[0]!r} is both a file and a folder", path=zip_path
            )
        dirs |= parents
    clash = files & dirs
    if clash:
        raise DataSourceError(f"{sorted(clash)[0]!r} is both a file and a folder", path=zip_path)


def _reason(exc: BaseException) -> str:
    """One short line for an exception (its message, or its type when it has none)."""
    text = " ".join(str(exc).split())[:200]
    return text or type(exc).__name__


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


#: Names in ``--out`` that belong to the batch itself, never given to a submission.
_RESERVED = ("summary.csv", "sites.gpkg", "index.html")


def _find_submissions(folder: Path, scratch: Path) -> list[tuple[str, str, Path | None, str]]:
    """``(name, source, submission_dir or None, error)`` for each entry of a batch folder.

    ``name`` is the output folder: the entry's name made safe
    (:func:`georeview.sanitise.safe_name`) and unique among the rows (a folder and a
    zip of one stem, two zips' inner folders). ``source`` says where the row came
    from: the entry's own name, and for a zip holding several submissions the
    folder inside it (``batch.zip:inner/folder``). Each zip is extracted into its own
    new folder under ``scratch``; whatever goes wrong with one entry is its error row.
    """
    raw: list[tuple[str, str, Path | None, str]] = []
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise DataSourceError(
            f"cannot list the batch folder ({_reason(exc)})", path=folder
        ) from None
    for entry in entries:
        try:
            raw += _entry_submissions(entry, scratch)
        except GeoReviewError as exc:
            raw.append((entry.stem, entry.name, None, exc.one_line()))
        except (OSError, ValueError, RuntimeError, RecursionError) as exc:
            raw.append((entry.stem, entry.name, None, f"{entry.name}: {_reason(exc)}"))
    names = unique_names([r[0] for r in raw], reserved=_RESERVED)
    return [(n, *r[1:]) for n, r in zip(names, raw, strict=True)]


def _entry_submissions(entry: Path, scratch: Path) -> list[tuple[str, str, Path | None, str]]:
    """The submissions of one batch entry (a submission folder or a zip file)."""
    if entry.is_dir() and (entry / "submission.toml").exists():
        if entry.is_symlink():
            # Not followed: a link could make the batch read a folder elsewhere. Listed
            # as an error row so the submission is not silently lost.
            return [(entry.name, entry.name, None, "is a symbolic link; not followed")]
        return [(entry.name, entry.name, entry, "")]
    if not (entry.is_file() and entry.suffix.lower() == ".zip"):
        return []
    # A private folder per zip: the zip's own name never becomes a path (a stem of
    # ".." would otherwise extract into the parent of the scratch folder).
    dest = Path(tempfile.mkdtemp(prefix="zip-", dir=scratch))
    extract_zip(entry, dest)
    subs = sorted({p.parent for p in dest.rglob("submission.toml")})
    if not subs:
        return [(entry.stem, entry.name, None, "no submission.toml in the zip file")]
    out: list[tuple[str, str, Path | None, str]] = []
    for sub in subs:
        inner = sub.relative_to(dest).as_posix()
        if len(subs) == 1:
            out.append((entry.stem, entry.name, sub, ""))
        else:
            label = inner if inner != "." else "root"
            out.append((f"{entry.stem}-{label}", f"{entry.name}:{inner}", sub, ""))
    return out


def _review_one(
    name: str, sub: Path, out: Path, layers_dir: Path | None, overwrite: bool, cache: dict
) -> tuple[dict[str, Any], Any]:
    """Review one submission and write its reports; return its summary row and site."""
    from georeview.load import load_layers
    from georeview.pipeline.review import jurisdictions_for, resolve_layers, review
    from georeview.report import write_reports

    target = out / name
    if (target / "report.json").exists() and not overwrite:
        raise OutputError("report.json exists; pass --overwrite to replace it", path=target)
    folder, _ = resolve_layers(sub, layers_dir)
    key = str(Path(folder).resolve())
    if key not in cache:
        layers = load_layers(folder)
        cache[key] = (layers, jurisdictions_for(layers))
    layers, jur = cache[key]
    result = review(sub, layers=layers, jurisdictions=jur)
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
    }
    # the site in its layers' working CRS, with that CRS (sites.gpkg states it)
    site = (result.submission.site.geometry.union_all(), result.layers.config.working_crs)
    return row, site


def _job(args: tuple[str, str, str, str | None, bool]) -> tuple[dict[str, Any], Any, str]:
    """Process-pool entry: review one submission, turning our errors into an error row."""
    name, sub, out, layers_dir, overwrite = args
    layers = Path(layers_dir) if layers_dir else None
    return _guarded(name, Path(sub), Path(out), layers, overwrite, {})


def _guarded(
    name: str, sub: Path, out: Path, layers_dir: Path | None, overwrite: bool, cache: dict
) -> tuple[dict[str, Any], Any, str]:
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
            row, site = _review_one(name, sub, out, layers_dir, overwrite, cache)
        return row, site, ""
    except GeoReviewError as exc:
        return {}, None, exc.one_line()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # per-record isolation, see the docstring
        log.debug("%s: unexpected failure", name, exc_info=True)
        return {}, None, f"could not be reviewed ({type(exc).__name__}: {_reason(exc)})"


def review_many(
    folder: Path | str,
    out: Path | str,
    *,
    layers_dir: Path | str | None = None,
    overwrite: bool = False,
    workers: int = 1,
) -> BatchResult:
    """Review every submission of a batch folder; write reports, summary.csv and sites.gpkg.

    Parameters
    ----------
    folder : path
        Folder of submission folders and zip files of them.
    out : path
        Output folder: ``<name>/report.json|html``, ``map.html``, ``summary.csv``, ``sites.gpkg``.
    layers_dir : path, optional
        One layers folder for all; by default each submission's municipality picks its own.
    overwrite : bool
        Replace existing reports (otherwise such a submission becomes an error row).
    workers : int
        Review submissions in this many processes.

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
    summary_csv = out / "summary.csv"
    if summary_csv.exists() and not overwrite:
        raise OutputError("summary.csv exists; pass --overwrite to replace it", path=out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    sites: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="georeview-batch-") as scratch:
        found = _find_submissions(folder, Path(scratch))
        jobs = [
            (name, str(sub), str(out), str(layers_dir) if layers_dir else None, overwrite)
            for name, _, sub, err in found
            if sub is not None
        ]
        if workers > 1 and len(jobs) > 1:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(max_workers=workers) as pool:
                done = dict(zip((j[0] for j in jobs), pool.map(_job, jobs), strict=True))
        else:
            cache: dict = {}
            done = {}
            for job in jobs:
                job_name, job_sub, job_out, job_layers, job_overwrite = job
                done[job_name] = _guarded(
                    job_name,
                    Path(job_sub),
                    Path(job_out),
                    Path(job_layers) if job_layers else None,
                    job_overwrite,
                    cache,
                )
        for name, source, sub, err in found:
            row, site, error = (
                done.get(name, ({}, None, err)) if sub is not None else ({}, None, err)
            )
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
    _write_summary(summary_csv, rows)
    crs, geoms = _in_one_crs(sites)
    gpkg = _write_sites(out / "sites.gpkg", rows, geoms, crs)
    _write_index(out / "index.html", rows, geoms, crs, title=f"Batch review: {folder.name}")
    return BatchResult(
        out=out,
        rows=tuple(rows),
        summary_csv=summary_csv,
        sites_gpkg=gpkg,
        seconds=time.perf_counter() - t0,
    )


def _outcome(row: Mapping[str, Any], report: Mapping[str, Any] | None) -> dict[str, Any]:
    """The reviewer's columns of one row, read from its report.json (see SUMMARY_COLUMNS)."""
    if row.get("status") != "ok" or report is None:
        return {"outcome": "error" if row.get("status") == "error" else "", "extraordinary": ""}
    c = report.get("classification") or {}
    counts = (report.get("summary") or {}).get("counts") or {}
    # None (or a missing key) is not decided: "unknown"
    yes_no: dict[bool | None, str] = {True: "yes", False: "no"}
    extraordinary = yes_no.get(c.get("extraordinary"), "unknown")
    if counts.get("fail"):
        outcome = "fails"
    elif counts.get("needs_info") or c.get("regulated") is None:
        outcome = "incomplete"
    elif not c.get("regulated"):
        outcome = "not regulated"
    elif extraordinary == "yes":
        outcome = "extraordinary"
    else:
        outcome = c.get("category") or "regulated"
    return {
        "outcome": outcome,
        "extraordinary": extraordinary,
        "report_html": str(PurePosixPath(str(row["name"])) / "report.html"),
    }


def _with_outcomes(out: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
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
        full.append({**r, **_outcome(r, report)})
    return full


def _write_summary(path: Path, rows: list[dict[str, Any]]) -> None:
    from georeview.report import write_atomic

    rows = _with_outcomes(path.parent, rows)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(SUMMARY_COLUMNS), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: csv_cell(r.get(k, "")) for k in SUMMARY_COLUMNS})
    write_atomic(path, buf.getvalue())


def _in_one_crs(sites: list[Any]) -> tuple[str, list[Any]]:
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


def _write_index(
    path: Path, rows: list[dict[str, Any]], sites: list[Any], crs: str, *, title: str
) -> Path:
    """Write index.html: a sortable table and a map of every submission, linked to its report.

    Error rows have no site and appear in the table only.
    """
    import geopandas as gpd
    import pandas as pd

    from georeview.report.index import write_index

    rows = _with_outcomes(path.parent, rows)
    frame = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    gdf = gpd.GeoDataFrame(frame, geometry=list(sites), crs=crs)
    columns = [
        "name",
        "outcome",
        "jurisdiction",
        "regulated",
        "category",
        "larger_site",
        "extraordinary",
        "fail",
        "needs_info",
        "disturbed_area_sqft",
        "error",
        "report_html",
    ]
    return write_index(
        gdf,
        path,
        title=title,
        working_crs=crs,
        columns=columns,
        link_column="report_html",
        context=_village_limits(path.parent, rows, crs),
    )


def _write_sites(
    path: Path, rows: list[dict[str, Any]], sites: list[Any], crs: str
) -> Path | None:
    """Write the reviewed sites with their summary row (temporary name, then rename)."""
    import geopandas as gpd
    import pandas as pd

    keep = [i for i, s in enumerate(sites) if s is not None]
    if not keep:
        return None
    rows = _with_outcomes(path.parent, rows)
    frame = pd.DataFrame([rows[i] for i in keep], columns=list(SUMMARY_COLUMNS))
    for col in ("site_area_sqft", "disturbed_area_sqft"):
        frame[col] = pd.to_numeric(frame[col])
    gdf = gpd.GeoDataFrame(frame, geometry=[sites[i] for i in keep], crs=crs)
    tmp = path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")
    try:
        tmp.unlink(missing_ok=True)
        # GeoPackage 1.3 with typed MultiPolygon geometry, as the screening's (ArcGIS Pro 3.x)
        gdf.to_file(
            tmp,
            layer="sites",
            driver="GPKG",
            engine="pyogrio",
            dataset_options={"VERSION": "1.3"},
            geometry_type="MultiPolygon",
            promote_to_multi=True,
        )
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"cannot write ({exc})", path=path) from None
    finally:
        tmp.unlink(missing_ok=True)
    return path
