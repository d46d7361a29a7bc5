"""Run screening partitions on Dask: local worker processes or a running cluster.

The screening context (dissolved layers, jurisdiction pieces, rules) is sent to every
worker once (``client.scatter(..., broadcast=True)``); each task then reads its own slice
of the parcel file and returns the screened rows, which the client saves as a finished
partition as soon as it arrives (so an interrupted run resumes from there).

On a cluster the workers must be able to read the parcel file at the same path (a
shared file system); the layers need not be, because they travel in the context.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from georeview.errors import ComputeError, DataSourceError

log = logging.getLogger(__name__)


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
                    task, source, start, count, ctx_future, key=f"screen-{i}-{start}"
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
