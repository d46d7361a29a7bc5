"""Run screening partitions on Dask: threads of this process, local processes or a cluster.

In this process (:func:`run_threads`), a thread pool runs the partitions on a few threads
that share the screening context: the heavy steps (pyogrio's read, shapely's vectorised
GEOS calls, the partition's Arrow write) release the GIL, so two partitions use two
cores. Each thread saves its own partition as soon as it is screened, and the calling
thread reports it.

On worker processes (:func:`run_partitions`) the screening context (dissolved layers,
jurisdiction pieces, rules) is sent to every worker once (``client.scatter(...,
broadcast=True)``); each task then reads its own slice of the parcel file and returns the
screened rows, which the client saves as a finished partition as soon as it arrives (so
an interrupted run resumes from there).

On a cluster the workers must be able to read the parcel file at the same path (a
shared file system); the layers need not be, because they travel in the context.
"""

from __future__ import annotations

import itertools
import logging
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from georeview.errors import ComputeError, DataSourceError

log = logging.getLogger(__name__)


def run_threads(
    work: Callable[[int, int, int], None],
    todo: Sequence[tuple[int, int, int]],
    report: Callable[[], None],
    *,
    threads: int,
) -> None:
    """Run ``work(index, start, count)`` for each partition on ``threads`` threads.

    Parameters
    ----------
    work : callable
        Screens and saves one partition (called on a pool thread; it must only read what
        the partitions share). It returns nothing: each partition leaves memory once
        written, so memory holds at most ``threads`` partitions.
    todo : sequence of (int, int, int)
        Partitions still to do, ``(index, start, count)``.
    report : callable
        Called in the calling thread after each partition's ``work`` returns.
    threads : int
        Threads of the pool (at most this many partitions at once).

    Notes
    -----
    A plain :class:`concurrent.futures.ThreadPoolExecutor`, not Dask's threaded
    scheduler: the partitions are independent tasks with nothing to schedule between
    them, and importing Dask cost the command's start-up about 0.13 s. The partitions
    are taken in input order (a stopped run leaves the leading ones done). The
    first exception of a task (or of ``report``) is raised at once; the partitions not
    started are cancelled and those running are waited for, so that no thread still
    writes into the work folder once this function has returned (what they finished
    stays saved, and a resumed run skips it).
    """
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    queue = iter(todo)
    pool = ThreadPoolExecutor(threads, thread_name_prefix="georeview-screen")
    try:
        # at most ``threads`` partitions submitted at once, the next one only after one
        # is reported: a stop then leaves at most ``threads - 1`` more partitions finished
        pending = {pool.submit(work, *p) for p in itertools.islice(queue, threads)}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                fut.result()  # the task's exception, raised here
                report()
                pending |= {pool.submit(work, *p) for p in itertools.islice(queue, 1)}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def quietly(task: Callable[..., Any], *args: Any) -> Any:
    """Run ``task(*args)`` on a worker process with warnings ignored.

    The filter is set for the whole worker process (``warnings.catch_warnings`` around
    each task would race between a worker's threads: it swaps the process's filters).
    A worker process only runs tasks, and the filter is the one the calling process
    sets around its own screening.
    """
    warnings.simplefilter("ignore")
    return task(*args)


def run_partitions(
    task: Callable[[Any, int, int, Any], Any],
    source: Any,
    todo: Sequence[tuple[int, int, int]],
    ctx: Any,
    save: Callable[[int, Any], None],
    *,
    workers: int = 2,
    scheduler: str | None = None,
) -> None:
    """Screen partitions ``todo`` (``(index, start, count)``) on Dask, saving each result.

    Parameters
    ----------
    task : callable
        ``task(source, start, count, ctx)`` -> the partition's result (run on a worker;
        it must be importable there, e.g. :func:`georeview.pipeline.screen.screen_slice`).
    source : georeview.pipeline.partitions.Source
        The parcel file.
    todo : sequence of (int, int, int)
        Partitions still to do.
    ctx : georeview.pipeline.context.ScreenContext
        Broadcast once to every worker.
    save : callable
        ``save(index, frame)``, called on the client as each partition finishes.
    workers : int
        Local worker processes when ``scheduler`` is not given.
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``).

    Raises
    ------
    georeview.errors.ComputeError
        When a partition's worker died more often than the scheduler retries
        (``distributed.scheduler.allowed-failures``, 3 by default): a worker killed while
        screening a partition is replaced by its nanny and the partition runs again, so a
        single death costs time, not rows. Partitions saved before the error stay saved.
    """
    from georeview._compat import require

    require("distributed", what="--workers/--scheduler")
    from distributed import Client, KilledWorker, LocalCluster, as_completed

    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout="20s")
            except OSError as exc:
                raise DataSourceError(
                    f"cannot reach the Dask scheduler ({exc})", path=scheduler, field="--scheduler"
                ) from None
        else:
            cluster = LocalCluster(
                n_workers=max(1, workers),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            client = Client(cluster)
        with client:
            log.info("dask: %s", client)
            ctx_future = client.scatter(ctx, broadcast=True)
            futures = {
                client.submit(
                    quietly, task, source, start, count, ctx_future, key=f"screen-{i}-{start}"
                ): i
                for i, start, count in todo
            }
            saved = 0
            try:
                for fut, frame in as_completed(futures, with_results=True):
                    save(futures[fut], frame)
                    saved += 1
            except KilledWorker as exc:
                raise ComputeError(
                    f"a Dask worker died while screening a partition, more often than the"
                    f" scheduler retries ({exc}); {saved} of {len(futures)} partitions finished"
                    " and are kept: run the same command again to resume",
                    path=getattr(source, "path", None),
                ) from None
    finally:
        if cluster is not None:
            cluster.close()
