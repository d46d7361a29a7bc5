"""The job queue: claimed once, a lost job failed visibly, a queued one run after a restart."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests._cases import BACKENDS, REPO, SAMPLES

pytest.importorskip("waitress")

WORKER = REPO / "tests" / "_web_jobs_worker.py"
PASSWORD = "correct-horse-battery"


def _run(ws: Path, database: str | None, *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, str(WORKER), str(ws), database or "-", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("database", BACKENDS, indirect=True)
def test_two_workers_claim_each_job_once(tmp_path: Path, database: str | None) -> None:
    """Two processes claiming from one queue at once: every job taken, none twice."""
    ids = _run(tmp_path / "ws", database, "enqueue", "60")
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(tmp_path / "ws"), database or "-", "claim", str(go)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for _ in range(2)
    ]
    time.sleep(3)  # both opened the workspace and wait for the go
    go.touch()
    got = [json.loads(p.communicate(timeout=120)[0].strip()) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sorted(got[0] + got[1]) == sorted(ids)
    assert not set(got[0]) & set(got[1])


def test_sweep_fails_the_jobs_whose_worker_is_gone(tmp_path: Path) -> None:
    """A dead worker of this host, or another host's silent one: failed, saying why."""
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    out = _run(tmp_path / "ws", None, "lost", dead)
    assert out == {
        "dead_here": "failed",
        "alive_here": "running",
        "silent_elsewhere": "failed",
        "fresh_elsewhere": "running",
        "swept": 2,
        "error": "the server stopped while this job ran (nothing was filed); queue it again",
    }


def test_a_review_that_cannot_run_fails_in_one_line(tmp_path: Path) -> None:
    """Bad input fails the job with the one-line error; nothing is filed."""
    out = _run(tmp_path / "ws", None, "bad_review", str(tmp_path / "no-such-layers"))
    assert out["state"] == "failed"
    assert "no-such-layers" in out["error"]
    assert "Traceback" not in out["error"]
    assert out["reviews"] == 0


# ----------------------------------------------------------------- servers, restarted


@contextmanager
def _server(ws: Path, workers: int, database: str | None = None) -> Iterator[tuple[str, list[str]]]:
    """``georeview serve`` on a free port until the block ends: its URL and its stderr."""
    more = ["--database", database] if database else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "georeview", "serve", "--workspace", str(ws), "--port", "0",
         "--workers", str(workers), *more],
        stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    lines: list[str] = []
    assert proc.stderr is not None
    while True:
        line = proc.stderr.readline()
        assert line, f"the server ended: {''.join(lines)}"
        lines.append(line)
        if m := re.search(r"at (http://\S+/) ", line):
            break
    try:
        yield m.group(1), lines
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        rest = proc.stderr.read()
        proc.stderr.close()
        assert proc.returncode == 0, "".join(lines) + rest


def _users(ws: Path, database: str | None, **roles: str) -> None:
    more = ["--database", database] if database else []
    for name, role in roles.items():
        subprocess.run(
            [sys.executable, "-m", "georeview", "users", "add", name, "--role", role,
             "--password-stdin", "--workspace", str(ws), *more],
            input=PASSWORD + "\n", text=True, check=True, cwd=REPO, capture_output=True,
        )  # fmt: skip


def _zipped(tmp_path: Path) -> Path:
    zipped = tmp_path / "plan.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        for f in sorted((SAMPLES / "deerfield_minor_home").rglob("*")):
            z.write(f, f.relative_to(SAMPLES))
    return zipped


def _login(base: str, name: str) -> Any:
    requests = pytest.importorskip("requests")
    s = requests.Session()
    token = _token(s.get(base + "login/").text)
    r = s.post(
        base + "login/", data={"username": name, "password": PASSWORD, "csrfmiddlewaretoken": token}
    )
    assert r.url in (base, base + "cases/"), r.text[:500]
    return s


def _token(page: str) -> str:
    m = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert m is not None
    return m.group(1)


def _upload(base: str, s: Any, zipped: Path) -> tuple[str, str]:
    """Upload the zip as the signed-in applicant: the job and the case number."""
    token = _token(s.get(base + "cases/new/").text)
    with zipped.open("rb") as f:
        r = s.post(
            base + "cases/new/",
            data={"csrfmiddlewaretoken": token},
            files={"submission": ("plan.zip", f)},
        )
    m = re.search(r'data-job="(\d+)"', r.text)
    assert m is not None, r.text[:500]
    return m.group(1), r.url.rstrip("/").rsplit("/", 1)[-1]


def _job(base: str, s: Any, job: str) -> dict[str, Any]:
    return s.get(f"{base}jobs/{job}.json").json()


def _wait(base: str, s: Any, job: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while (state := _job(base, s, job))["state"] in ("queued", "running"):
        assert time.monotonic() < deadline, state
        time.sleep(0.2)
    return state


def test_a_job_queued_when_the_server_stops_runs_when_it_starts(tmp_path: Path) -> None:
    """Queued with no worker, server stopped, started again: the review runs and is filed."""
    ws = tmp_path / "ws"
    _users(ws, None, alice="applicant")
    with _server(ws, workers=0) as (base, _):
        s = _login(base, "alice")
        job, number = _upload(base, s, _zipped(tmp_path))
        time.sleep(1)
        assert _job(base, s, job)["state"] == "queued"
    with _server(ws, workers=1) as (base, _):
        s = _login(base, "alice")
        state = _wait(base, s, job)
        assert state["state"] == "done", state
        assert state["result"]["case"] == number
        page = s.get(f"{base}cases/{number}/").text
        assert "Reviewed." in page
        assert "map.html" in page


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
def test_two_servers_over_one_postgresql_database(tmp_path: Path, database: str) -> None:
    """Upload to a server that runs no worker: the other server's worker reviews it."""
    ws = tmp_path / "ws"
    _users(ws, database, alice="applicant")
    with _server(ws, 0, database) as (front, _), _server(ws, 1, database) as (back, _):
        s = _login(front, "alice")
        job, number = _upload(front, s, _zipped(tmp_path))
        state = _wait(front, s, job)
        assert state["state"] == "done", state
        assert state["result"]["case"] == number
        # the other server reads the same record
        assert number in _login(back, "alice").get(back).text


def test_a_job_running_when_the_server_died_is_failed_on_the_page(tmp_path: Path) -> None:
    """A worker that died mid-job: the next start marks the job failed and the page says so."""
    ws = tmp_path / "ws"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    left = _run(ws, None, "orphan", dead)
    _users(ws, None, rita="reviewer")
    with _server(ws, workers=0) as (base, lines):
        s = _login(base, "rita")
        state = _job(base, s, str(left["job"]))
        page = s.get(f"{base}cases/{left['case']}/").text
    swept = "1 job(s) were running when the server stopped: marked failed"
    assert any(swept in ln for ln in lines), lines
    assert state["state"] == "failed"
    assert "The review failed: the server stopped while this job ran" in page
    assert "Review again" in page
