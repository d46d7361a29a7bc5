"""The job queue in a process of its own, for tests/test_web_jobs.py.

    python tests/_web_jobs_worker.py WORKSPACE DATABASE|- SCENARIO [ARGS...]

Scenarios (each prints one JSON line):

- ``enqueue N``: queue N screening jobs (never run: only claimed) and print their ids.
- ``claim GO_FILE``: wait for GO_FILE, then claim jobs until none is left; print the ids.
- ``lost DEAD_PID``: put four running jobs in the table (a dead worker of this host, a
  live one, another host's silent one and another host's fresh one), sweep, print states.
- ``orphan DEAD_PID``: open a case whose review job is left running by a dead worker.
- ``bad_review LAYERS``: open a case, run its review job with a layers folder that does
  not exist; print the job's state and error.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    ws_dir, database, scenario, *rest = argv
    from georeview.web.server import configure

    ws = configure(Path(ws_dir), None if database == "-" else database)
    from django.utils import timezone

    from georeview.web import jobs
    from georeview.web.models import Job

    if scenario == "enqueue":
        made = [jobs.enqueue_screen({"n": i}, user=None, by="test").id for i in range(int(rest[0]))]
        print(json.dumps(made))
    elif scenario == "claim":
        while not Path(rest[0]).exists():
            time.sleep(0.005)
        got = []
        while (job := jobs._claim(jobs.worker_name())) is not None:
            got.append(job.id)
        print(json.dumps(got))
    elif scenario == "lost":
        host, now = socket.gethostname(), timezone.now()
        old = now - dt.timedelta(seconds=jobs.STALE_S * 2)
        rows = {
            "dead_here": (f"{host} {rest[0]}", now),
            "alive_here": (f"{host} {os.getpid()}", old),
            "silent_elsewhere": ("another-host 12", old),
            "fresh_elsewhere": ("another-host 13", now),
        }
        ids = {
            k: Job.objects.create(
                kind="screen", state="running", by="t", worker=w, heartbeat_at=h, started_at=h
            ).id
            for k, (w, h) in rows.items()
        }
        n = jobs.sweep()
        out = {k: Job.objects.get(id=i).state for k, i in ids.items()}
        out["swept"] = n
        out["error"] = Job.objects.get(id=ids["dead_here"]).error
        print(json.dumps(out))
    elif scenario == "bad_review":
        from georeview.cases import service

        case = service.open_case(
            ws, REPO / "sample_sites" / "deerfield_minor_home", by="t", review=False
        )
        job = jobs.enqueue_review(case, user=None, by="t")
        claimed = jobs._claim(jobs.worker_name())
        assert claimed is not None
        assert claimed.id == job.id
        done = jobs.run_one(ws, claimed, layers_root=Path(rest[0]))
        print(
            json.dumps(
                {
                    "state": done.state,
                    "error": done.error,
                    "reviews": case.rounds.get().reviews.count(),
                }
            )
        )
    elif scenario == "orphan":
        from georeview.cases import service

        case = service.open_case(
            ws, REPO / "sample_sites" / "deerfield_minor_home", by="t", review=False
        )
        job = jobs.enqueue_review(case, user=None, by="t")
        Job.objects.filter(id=job.id).update(
            state="running",
            worker=f"{socket.gethostname()} {rest[0]}",
            heartbeat_at=timezone.now(),
            started_at=timezone.now(),
        )
        print(json.dumps({"case": case.number, "job": job.id}))
    else:
        raise SystemExit(f"unknown scenario {scenario}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
