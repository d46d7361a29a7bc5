"""A screening run from file to file: checks, partitions, resume, output and summary.

Input is read in partitions (``partition_size`` rows); each finished partition is
written to ``OUT.parts/`` with a manifest keyed by the input's hash and the options, so
an interrupted run resumes where it stopped and produces the same file as an
uninterrupted one. The output is written under a temporary name and renamed when
complete. Partitions run on threads of this process (``threads``, default one per core,
a thread pool with at most ``threads`` partitions in flight); ``--workers N`` and
``--scheduler ADDRESS`` run them on Dask worker processes (:mod:`georeview.pipeline._dask`).
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from georeview.errors import ConfigError, DataSourceError, OutputError
from georeview.load import load_layers
from georeview.pipeline.assume import WISCONSIN_COLUMNS, check_columns, parse_assume
from georeview.pipeline.context import ScreenContext, build_context
from georeview.pipeline.extent import check_parcels_within, layers_extent
from georeview.pipeline.outputs import OUTPUT_SUFFIXES, assemble
from georeview.pipeline.partitions import (
    PARTITION_SIZE,
    Source,
    WorkFolder,
    partitions,
    remove_stale_partials,
    run_key,
)
from georeview.pipeline.screen import screen_slice
from georeview.pipeline.screen_index import write_screen_index
from georeview.report.files import claim, claim_name, make_folder

__all__ = [
    "Progress",
    "ScreenSummary",
    "check_output",
    "run_screen",
    "screen_partitions",
    "thread_count",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScreenSummary:
    """What a screening run did: counts by outcome, first errors, time."""

    out: Path
    rows: int
    partitions: int
    resumed: int
    counts: dict[str, dict[str, int]]
    errors: tuple[tuple[int, str, str], ...]
    seconds: float

    def lines(self) -> list[str]:
        """The summary as text lines (printed by the command line)."""
        c = self.counts
        fmt = lambda d: ", ".join(f"{k} {v:,}" for k, v in sorted(d.items()))  # noqa: E731
        lines = [
            f"screened {self.rows:,} parcels in {self.seconds:.1f} s "
            f"({self.partitions} partitions, {self.resumed} resumed) -> {self.out}",
            f"  status: {fmt(c.get('status', {}))}",
            f"  jurisdiction: {fmt(c.get('jurisdiction', {}))}",
            f"  regulated: {fmt(c.get('regulated', {}))}",
            f"  category: {fmt(c.get('category', {}))}",
            "  parcels with floodplain {floodplain_sqft:,}, floodway {floodway_sqft:,}, "
            "wetland {wetland_sqft:,}".format(
                **{
                    "floodplain_sqft": 0,
                    "floodway_sqft": 0,
                    "wetland_sqft": 0,
                    **c.get("parcels_with", {}),
                }
            ),
        ]
        for r, pid, e in self.errors[:5]:
            lines.append(f"  error row {r} ({pid}): {e}")
        return lines


def run_screen(
    parcels: Path | str,
    layers_dir: Path | str,
    out: Path | str,
    *,
    assume: str | None = None,
    columns: Mapping[str, str] | None = None,
    layer: str | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    threads: int | None = None,
    partition_size: int = PARTITION_SIZE,
    overwrite: bool = False,
    on_partition: Callable[[int, int], None] | None = None,
    index: Path | str | None = None,
    crs: str | None = None,
    csv_bom: bool = True,
) -> ScreenSummary:
    """Screen every parcel of a file against a municipality's layers and ordinance.

    Parameters
    ----------
    parcels : path
        Parcel polygons, any format of :mod:`georeview.load.vector` (with a CRS).
    layers_dir : path
        Folder with layers.toml.
    out : path
        Output ``.csv``, ``.xlsx``, ``.gpkg``, ``.parquet``, ``.fgb``, ``.geojson`` or ``.shp``.
    assume : str, optional
        The assumed activity (:func:`parse_assume`).
    columns : mapping, optional
        Role -> field map (:func:`parse_columns`); default the Wisconsin statewide schema.
    layer : str, optional
        Layer of a multi-layer parcel file.
    workers : int
        More than 1 runs the partitions in local processes on Dask.
    scheduler : str, optional
        Address of a running Dask distributed scheduler.
    threads : int, optional
        Partitions screened at once in this process (default: one per core of the
        machine, at most one per partition left); 1 runs them one after another. Not
        used with ``workers`` > 1 or ``scheduler``.
    partition_size : int
        Rows per partition.
    overwrite : bool
        Replace an existing output.
    on_partition : callable, optional
        Called with ``(finished_partitions, total_partitions)`` after each partition is saved.
    index : path, optional
        Also write this results page (index.html: table and map of every parcel).
    crs : str, optional
        CRS of a CSV parcel file (``--crs``).
    csv_bom : bool
        Start a CSV output with a UTF-8 byte-order mark (for Excel).

    Returns
    -------
    ScreenSummary
    """
    t0 = time.perf_counter()
    out = Path(out)
    check_output(out, overwrite)
    make_folder(out.parent)
    # Claimed for the whole run: a second screening to the same output is refused at
    # once, and under the claim no other run is writing, so what a killed run left
    # (its temporary output) can be removed, and "exists" is checked again.
    with claim(claim_name(out), what=out):
        check_output(out, overwrite)
        remove_stale_partials(out)
        return _screen(
            parcels,
            layers_dir,
            out,
            t0=t0,
            assume=assume,
            columns=columns,
            layer=layer,
            workers=workers,
            scheduler=scheduler,
            threads=threads,
            partition_size=partition_size,
            on_partition=on_partition,
            index=index,
            crs=crs,
            csv_bom=csv_bom,
        )


def _screen(
    parcels: Path | str,
    layers_dir: Path | str,
    out: Path,
    *,
    t0: float,
    assume: str | None,
    columns: Mapping[str, str] | None,
    layer: str | None,
    workers: int,
    scheduler: str | None,
    threads: int | None,
    partition_size: int,
    on_partition: Callable[[int, int], None] | None,
    index: Path | str | None,
    crs: str | None,
    csv_bom: bool,
) -> ScreenSummary:
    """:func:`run_screen` once the output is claimed."""
    if not Path(parcels).exists():
        raise DataSourceError("file not found", path=parcels, field="parcels")
    thread_count(threads, 1)  # a bad --threads is refused before any work
    assumption = parse_assume(assume)
    cols = dict(columns or WISCONSIN_COLUMNS)
    source, info = Source(str(Path(parcels).resolve()), layer, crs).inspected()
    n_rows = info.features
    if out.suffix.lower() == ".xlsx":
        from georeview.report.xlsx import check_rows

        check_rows(n_rows, out)  # before hours of screening, not after
    check_columns(cols, info.fields, path=parcels)
    layers = load_layers(Path(layers_dir))
    extent = layers_extent(layers)
    check_parcels_within(info, extent, layers, str(parcels))
    parts = partitions(n_rows, partition_size)
    options = {
        "assume": assumption.text,
        "columns": cols,
        "partition_size": partition_size,
        "crs": crs,
    }
    new_work = not WorkFolder.path_for(out).exists()
    work = WorkFolder(out, run_key(source, layers, options), len(parts))
    todo = [p for p in parts if not work.done(p[0])]
    resumed = len(parts) - len(todo)
    if resumed:
        log.info("resuming: %d of %d partitions already done", resumed, len(parts))
    try:
        if todo:
            ctx = replace(build_context(layers, assumption, cols), extent=extent)
            progress = Progress(work, len(parts), resumed, on_partition)
            screen_partitions(
                source, todo, ctx, progress, workers=workers, scheduler=scheduler, threads=threads
            )
        elif on_partition and resumed:
            on_partition(resumed, len(parts))
    except BaseException:
        # a run refused or stopped before it finished any partition leaves nothing to
        # resume: its work folder goes (one with finished partitions stays, for --resume)
        if new_work and not any(work.done(i) for i, _, _ in parts):
            work.remove()
        raise
    stats = assemble(work, out, len(parts), csv_bom=csv_bom)
    if index is not None:
        write_screen_index(work, len(parts), Path(index), layers, title=f"Screening: {out.name}")
    work.remove()
    return ScreenSummary(
        out=out,
        rows=n_rows,
        partitions=len(parts),
        resumed=resumed,
        counts=stats["counts"],
        errors=tuple(stats["errors"]),
        seconds=time.perf_counter() - t0,
    )


def check_output(out: Path, overwrite: bool) -> None:
    """Refuse an output format georeview does not write, or an existing output."""
    if out.suffix.lower() not in OUTPUT_SUFFIXES:
        raise OutputError(
            f"unsupported output {out.suffix!r}; use {', '.join(OUTPUT_SUFFIXES)}", path=out
        )
    if out.exists() and not overwrite:
        raise OutputError("exists; pass --overwrite to replace it", path=out)


class Progress:
    """Saves each finished partition and reports how many of them are done.

    :meth:`write` may run on any thread (each partition has its own file);
    :meth:`report` runs in the thread that called :func:`run_screen`.
    """

    def __init__(
        self,
        work: WorkFolder,
        total: int,
        resumed: int,
        on_partition: Callable[[int, int], None] | None,
    ) -> None:
        self.work, self.total, self.finished = work, total, resumed
        self.on_partition = on_partition
        if on_partition and resumed:
            on_partition(resumed, total)

    def write(self, i: int, frame: Any) -> None:
        """Write partition ``i`` (atomically)."""
        self.work.write(i, frame)

    def report(self) -> None:
        """Count one more finished partition and tell ``on_partition``."""
        self.finished += 1
        if self.on_partition:
            self.on_partition(self.finished, self.total)

    def save(self, i: int, frame: Any) -> None:
        """Write partition ``i`` and report it."""
        self.write(i, frame)
        self.report()


def thread_count(threads: int | None, n_todo: int) -> int:
    """Threads for ``n_todo`` partitions: ``threads``, else one per usable core; at most one each.

    Raises
    ------
    georeview.errors.ConfigError
        When ``threads`` is below 1.
    """
    if threads is not None and threads < 1:
        raise ConfigError("must be at least 1", field="--threads")
    if threads is None:
        # the cores this process may run on (a container's or taskset's share), not the machine's
        getaff = getattr(os, "sched_getaffinity", None)
        threads = len(getaff(0)) if getaff else (os.cpu_count() or 1)
    return max(1, min(threads, n_todo))


def screen_partitions(
    source: Source,
    todo: Sequence[tuple[int, int, int]],
    ctx: ScreenContext,
    progress: Progress,
    *,
    workers: int = 1,
    scheduler: str | None = None,
    threads: int | None = None,
) -> None:
    """Screen partitions ``todo``: on threads here, or on Dask worker processes.

    Every finished partition is saved (``progress``) as soon as it is screened. With
    ``workers`` > 1 or a ``scheduler`` the partitions run on Dask worker processes;
    otherwise on :func:`thread_count` threads of this process, which share ``ctx``
    (read only: its arrays, and the pieces GEOS prepares only temporarily) and the
    judge (the ordinance read once, cached, before the threads start).
    """
    if workers > 1 or scheduler:
        from georeview.pipeline._dask import run_partitions

        run_partitions(
            screen_slice, source, todo, ctx, progress.save, workers=workers, scheduler=scheduler
        )
        return
    n_threads = thread_count(threads, len(todo))
    # warnings.catch_warnings swaps the process's filters, so it is set here once around
    # all the threads; those that libraries enter on a thread (shapely.is_valid's, the
    # reader's) may restore each other's filters out of order, and this one restores the
    # caller's when every thread has finished
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if n_threads == 1:
            for i, start, count in todo:
                progress.save(i, screen_slice(source, start, count, ctx))
            return
        from georeview.pipeline._dask import run_threads

        _ = ctx.ordinance  # read and cached here, not by two threads at once

        def work(i: int, start: int, count: int) -> None:
            progress.write(i, screen_slice(source, start, count, ctx))

        run_threads(work, todo, progress.report, threads=n_threads)
