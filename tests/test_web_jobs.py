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

import pytest

from tests._cases import BACKENDS, REPO, SAMPLES

pytest.importorskip("waitress")

WORKER = REPO / "tests" / "_web_jobs_worker.py"
PASSWORD = "correct-horse-battery"


def _run(ws: Path, database: str | None, *args: str) -> object:
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
    assert sorted(got[0] + got[1]) == sorted(ids)  # type: ignore[arg-type]
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
    assert out["state"] == "failed"  # type: ignore[index]
    assert "no-such-layers" in out["error"]  # type: ignore[index]
    assert "Traceback" not in out["error"]  # type: ignore[index]
    assert out["reviews"] == 0  # type: ignore[index]


# ----------------------------------------------------------------- a server restarted


@contextmanager
def _server(ws: Path, workers: int) -> Iterator[tuple[str, list[str]]]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "georeview",
            "serve",
            "--workspace",
            str(ws),
            "--port",
            "0",
            "--workers",
            str(workers),
        ],
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
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


def _login(base: str, name: str) -> object:
    requests = pytest.importorskip("requests")
    s = requests.Session()
    page = s.get(base + "login/").text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    r = s.post(
        base + "login/", data={"username": name, "password": PASSWORD, "csrfmiddlewaretoken": token}
    )
    assert r.url in (base, base + "cases/"), r.text[:500]
    return s


def _job(base: str, s: object, job: str) -> dict[str, object]:
    return s.get(f"{base}jobs/{job}.json").json()  # type: ignore[attr-defined, no-any-return]


def test_a_job_queued_when_the_server_stops_runs_when_it_starts(tmp_path: Path) -> None:
    """Queued with no worker, server stopped, started again: the review runs and is filed."""
    ws = tmp_path / "ws"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "georeview",
            "users",
            "add",
            "alice",
            "--role",
            "applicant",
            "--password-stdin",
            "--workspace",
            str(ws),
        ],
        input=PASSWORD + "\n",
        text=True,
        check=True,
        cwd=REPO,
        capture_output=True,
    )
    zipped = tmp_path / "plan.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        for f in sorted((SAMPLES / "deerfield_minor_home").rglob("*")):
            z.write(f, f.relative_to(SAMPLES))
    with _server(ws, workers=0) as (base, _):
        s = _login(base, "alice")
        page = s.get(base + "cases/new/").text  # type: ignore[attr-defined]
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        with zipped.open("rb") as f:
            r = s.post(
                base + "cases/new/",
                data={"csrfmiddlewaretoken": token},  # type: ignore[attr-defined]
                files={"submission": ("plan.zip", f)},
            )
        job = re.search(r'data-job="(\d+)"', r.text).group(1)  # type: ignore[union-attr]
        number = r.url.rstrip("/").rsplit("/", 1)[-1]
        time.sleep(1)
        assert _job(base, s, job)["state"] == "queued"
    with _server(ws, workers=1) as (base, _):
        s = _login(base, "alice")
        deadline = time.monotonic() + 120
        while _job(base, s, job)["state"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        state = _job(base, s, job)
        assert state["state"] == "done", state
        assert state["result"]["case"] == number  # type: ignore[index]
        page = s.get(f"{base}cases/{number}/").text  # type: ignore[attr-defined]
        assert "Reviewed in" in page and "map.html" in page


def test_a_job_running_when_the_server_died_is_failed_on_the_page(tmp_path: Path) -> None:
    """A worker that died mid-job: the next start marks the job failed and the page says so."""
    ws = tmp_path / "ws"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    left = _run(ws, None, "orphan", dead)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "georeview",
            "users",
            "add",
            "rita",
            "--role",
            "reviewer",
            "--password-stdin",
            "--workspace",
            str(ws),
        ],
        input=PASSWORD + "\n",
        text=True,
        check=True,
        cwd=REPO,
        capture_output=True,
    )
    with _server(ws, workers=0) as (base, lines):
        s = _login(base, "rita")
        state = _job(base, s, str(left["job"]))  # type: ignore[index]
        page = s.get(f"{base}cases/{left['case']}/").text  # type: ignore[attr-defined, index]
    assert any(
        "1 job(s) were running when the server stopped: marked failed" in ln for ln in lines
    ), lines
    assert state["state"] == "failed"
    assert "The review failed: the server stopped while this job ran" in page
    assert "Review again" in page
