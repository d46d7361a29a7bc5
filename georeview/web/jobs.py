"""Reviews and screenings out of the request: a queue in the database, warm worker processes.

A page adds a :class:`~georeview.web.models.Job` and returns at once. Each worker process
(:func:`work`, started by ``georeview serve``) loads the review's libraries once, then
claims the oldest queued job, runs it with the same service functions the CLI calls
(:func:`georeview.cases.service.review_round`, :func:`georeview.pipeline.run.run_screen`)
and writes its progress and outcome to the row.

Claiming is one conditional ``UPDATE ... WHERE state = 'queued'``: of two workers (of one
server or of several servers over one PostgreSQL database) only one changes the row. A
running job's worker stamps ``heartbeat_at`` every few seconds; a job whose worker is gone
(its process ended, or it fell silent for :data:`STALE_S`) is marked failed, with why,
when any worker next sweeps (at once when a server starts), and can be queued again from
its page. Queued jobs simply wait for the next worker.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from georeview.errors import GeoReviewError

__all__ = [
    "POLL_S",
    "STALE_S",
    "enqueue_review",
    "enqueue_screen",
    "run_one",
    "sweep",
    "warm",
    "work",
]

log = logging.getLogger("georeview.web.jobs")

#: Seconds an idle worker waits before looking for a job again.
POLL_S = 0.05
#: Seconds between a running job's heartbeats, and after which a silent one is failed.
HEARTBEAT_S = 5.0
STALE_S = 60.0
#: Seconds between an idle worker's sweeps for jobs whose worker is gone.
SWEEP_S = 15.0

_LOST = "the server stopped while this job ran (nothing was filed); queue it again"


def _now() -> dt.datetime:
    from django.utils import timezone

    return timezone.now()


def worker_name() -> str:
    """The current process as a job's ``worker``: host and process id."""
    return f"{socket.gethostname()} {os.getpid()}"


def enqueue_review(case: Any, *, user: Any, by: str) -> Any:
    """Queue a review of the case's current round."""
    from georeview.web.models import Job

    return Job.objects.create(kind=Job.Kind.REVIEW, case=case, user=user, by=by)


def enqueue_screen(params: dict[str, Any], *, user: Any, by: str) -> Any:
    """Queue a screening (``params``: parcels, layers and out, relative to the workspace)."""
    from georeview.web.models import Job

    return Job.objects.create(kind=Job.Kind.SCREEN, params=params, user=user, by=by)


def _alive(worker: str) -> bool | None:
    """Whether a worker of this host is alive (``None``: another host's, not known here)."""
    host, _, pid = worker.rpartition(" ")
    if host != socket.gethostname() or not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep() -> int:
    """Fail the running jobs whose worker is gone; return how many."""
    from georeview.web.models import Job

    stale_before = _now() - dt.timedelta(seconds=STALE_S)
    lost = 0
    for job in Job.objects.filter(state=Job.State.RUNNING).only("id", "worker", "heartbeat_at"):
        alive = _alive(job.worker)
        silent = job.heartbeat_at is None or job.heartbeat_at < stale_before
        if alive is False or (alive is None and silent):
            lost += Job.objects.filter(id=job.id, state=Job.State.RUNNING).update(
                state=Job.State.FAILED, finished_at=_now(), error=_LOST
            )
    return lost


def _claim(me: str) -> Any | None:
    """Take the oldest queued job for this worker, or ``None``."""
    from georeview.web.models import Job

    for job in Job.objects.filter(state=Job.State.QUEUED).order_by("id")[:4]:
        now = _now()
        taken = Job.objects.filter(id=job.id, state=Job.State.QUEUED).update(
            state=Job.State.RUNNING, worker=me, started_at=now, heartbeat_at=now
        )
        if taken:
            job.refresh_from_db()
            return job
    return None


class _Heartbeat:
    """Stamp a running job's ``heartbeat_at`` from a thread until stopped."""

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self) -> None:
        from django.db import connection

        from georeview.web.models import Job

        try:
            while not self.stop.wait(HEARTBEAT_S):
                Job.objects.filter(id=self.job_id).update(heartbeat_at=_now())
        finally:
            connection.close()

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=HEARTBEAT_S + 1)


def _progress(job_id: int) -> Callable[..., None]:
    """A screening's ``on_partition`` callback: partitions done of the total, on the row."""
    from georeview.web.models import Job

    def tick(done: int, total: int, *_: Any) -> None:
        Job.objects.filter(id=job_id).update(done=done, total=total, heartbeat_at=_now())

    return tick


def _run_review(ws: Any, job: Any, layers_root: Path | None) -> dict[str, Any]:
    from georeview.cases import service

    case = job.case
    layers = None if layers_root is None else layers_root / case.municipality
    review = service.review_round(ws, case.number, by=job.by, layers_dir=layers)
    return {
        "case": case.number,
        "round": review.round.number,
        "review": review.number,
        "outcome": review.outcome,
        "counts": review.counts,
    }


def _run_screen(ws: Any, job: Any, scheduler: str | None) -> dict[str, Any]:
    from georeview.pipeline.run import run_screen

    p = job.params
    out = ws.path(p["out"])
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = run_screen(
        ws.path(p["parcels"]),
        Path(p["layers"]),
        out,
        on_partition=_progress(job.id),
        assume=p.get("assume") or "disturb=whole",
        index=ws.path(p["index"]) if p.get("index") else None,
        scheduler=scheduler,
        overwrite=True,
    )
    return {"rows": summary.rows, "counts": summary.counts, "lines": summary.lines()}


def run_one(
    ws: Any, job: Any, *, layers_root: Path | None = None, scheduler: str | None = None
) -> Any:
    """Run a claimed job to its end: ``done`` with its result, or ``failed`` with why."""
    from django.db import close_old_connections

    from georeview.web.models import Job

    start = time.perf_counter()
    state, result, error = Job.State.DONE, {}, ""
    try:
        with _Heartbeat(job.id):
            if job.kind == Job.Kind.REVIEW:
                result = _run_review(ws, job, layers_root)
            else:
                result = _run_screen(ws, job, scheduler)
    except GeoReviewError as exc:
        state, error = Job.State.FAILED, exc.one_line()
    except Exception as exc:  # a bug: the job fails visibly, the worker goes on
        log.exception("job %s failed", job.id)
        state, error = Job.State.FAILED, f"internal error: {type(exc).__name__}: {exc}"[:500]
    close_old_connections()
    Job.objects.filter(id=job.id).update(
        state=state,
        result=result,
        error=error,
        finished_at=_now(),
        seconds=round(time.perf_counter() - start, 3),
    )
    job.refresh_from_db()
    return job


def _warm_target(ws: Any) -> Path | None:
    """A submission to rehearse a review on: the workspace's latest round, else the sample.

    The checkout's ``sample_sites/deerfield_minor_home`` is used only when georeview runs
    from a source checkout (an installed package ships no samples).
    """
    from georeview.cases.models import Round
    from georeview.pipeline.layers_folder import source_checkout

    rnd = Round.objects.order_by("-id").first()
    if rnd is not None:
        return Path(ws.path(rnd.folder))
    checkout = source_checkout()
    sample = None if checkout is None else checkout / "sample_sites" / "deerfield_minor_home"
    return sample if sample is not None and (sample / "submission.toml").is_file() else None


def warm(ws: Any = None, layers_root: Path | None = None) -> float:
    """Load what a review uses, once per worker, so the first job pays no start-up.

    Imports alone leave a first review about 3 s slower than the next (folium's and
    matplotlib's imports, template compiles, the flow kernels' load, the layers' first
    read), so the worker rehearses one whole review into a scratch folder, files nothing,
    and forgets it. Returns the seconds the rehearsal took (0 when there was nothing to
    rehearse on, or it failed: the first real job then pays the start-up instead).
    """
    import shutil
    import tempfile

    import georeview.cases.service
    import georeview.pipeline.run  # noqa: F401
    from georeview.pipeline.review import review
    from georeview.report import write_reports

    target = None if ws is None else _warm_target(ws)
    if target is None:
        return 0.0
    start = time.perf_counter()
    scratch = Path(tempfile.mkdtemp(prefix=".warm-", dir=ws.files))
    try:
        from georeview.config import load_submission_config

        municipality = load_submission_config(
            target / "submission.toml", folder=target
        ).municipality
        layers = None if layers_root is None else layers_root / municipality
        write_reports(review(target, layers), scratch)
    except Exception:  # a rehearsal that fails costs only the warm-up, never a job
        log.info("warm-up review failed", exc_info=True)
        return 0.0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return time.perf_counter() - start


def work(
    folder: str,
    database: str | None,
    options: dict[str, Any],
    stop: Any,
    *,
    layers_root: str | None = None,
    scheduler: str | None = None,
) -> None:
    """A worker process's life: open the workspace, warm up, run jobs until ``stop`` is set."""
    from django.db import close_old_connections

    from georeview.cases.store import open_workspace
    from georeview.web.settings import web_settings

    ws = open_workspace(folder, database, extra_settings=lambda f: web_settings(f, **options))
    layers = None if layers_root is None else Path(layers_root)
    log.info("worker warmed up in %.1f s", warm(ws, layers))
    me = worker_name()
    last_sweep = 0.0
    while not stop.is_set():
        if time.monotonic() - last_sweep > SWEEP_S:
            sweep()
            last_sweep = time.monotonic()
        job = _claim(me)
        if job is None:
            close_old_connections()
            stop.wait(POLL_S)
            continue
        run_one(ws, job, layers_root=layers, scheduler=scheduler)
