"""The web workspace (`georeview serve`) under load: review after upload, and a busy office.

Two parts, on one fresh workspace and one server (``georeview serve --workers 2``, started
as a whole process from the checkout, as a Village would run it):

1. **Review after upload.** Once both workers are warm, ``--runs`` times: upload the
   sample ``deerfield_minor_home`` as a zip and time (a) the upload request, (b) the time
   from its response until the job is done (the job's ``finished_at``, read from the
   SQLite file, which is polled read-only every 50 ms so that no HTTP polling loads the
   server) and (c) the job's own ``seconds``. Alternately with each upload, the one-shot
   ``georeview review sample_sites/deerfield_minor_home --out TMP`` runs as a whole
   process. Medians, and the ratio one-shot CLI / upload-to-done, are printed.

2. **Load test.** ``--users`` simulated users (default 20; 70 % reviewers) on loopback,
   each a thread with its own session, for ``--seconds`` (default 60): reviewers read the
   queue, search it, open case pages, fetch the register's GeoJSON and comment on cases
   (a stale revision is refused: the page is read again and the comment retried, counted
   as a conflict, not an error); applicants read their own cases and poll their job.
   Each user waits ``--think`` seconds on average (uniformly 0..2x) between requests: a
   busy office, not a flood (``--think 0`` floods). At ``--burst-at`` seconds, ``--burst``
   more applicants (default 10) upload a submission at the same moment. Every request's
   latency and status is recorded; printed are the request count and rate, p50/p95/p99
   latency overall and per kind, errors (5xx, an unexpected status or an exception),
   conflicts, and the time from the burst until all its reviews were done.

Then, with the server stopped, the nothing-lost checks read the database (read-only):
every comment posted successfully is there exactly once and no refused one is, every
successful upload made one case and one job, every job is done, every case's audit chain
is intact (all cases in one process, plus ``georeview case audit`` as a whole process on a
sample). The exit status is 1 on any error or anything lost.

The load generator shares the machine with the server (it is one Python process, so at
most about one core of its own): on a 2-core machine the figures are of both together.
Machine load, cores and the georeview version are printed before and after.

    python benchmarks/bench_web.py [--users 20] [--seconds 60] [--runs 7] [--quick]
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import math
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
GEOREVIEW = str(VENV_BIN / "georeview") if (VENV_BIN / "georeview").exists() else None
SAMPLE = REPO / "sample_sites" / "deerfield_minor_home"
PASSWORD = "correct-horse-battery-staple"

# a case's link (not the upload form's, /cases/new/)
_CASE_LINK = re.compile(r'href="/cases/(?!new/)([A-Za-z0-9-]+)/"')
_REVISION = re.compile(r'name="revision" value="(\d+)"')
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
_JOB = re.compile(r'data-job="(\d+)"')
_MESSAGE = re.compile(r'<li class="([^"]*)" role="status">(.*?)</li>', re.S)
_SEARCHES = ("deerfield", "DEE-", "home", "returned", "zz-no-such-thing")


def georeview_cmd(*args: str) -> list[str]:
    """The ``georeview`` command of this venv (or ``python -m georeview``)."""
    return [GEOREVIEW, *args] if GEOREVIEW else [sys.executable, "-m", "georeview", *args]


def version() -> str:
    out = subprocess.run(
        georeview_cmd("--version"), cwd=REPO, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def machine(label: str) -> str:
    one, five, fifteen = os.getloadavg()
    return (
        f"{label}: load average {one:.2f} {five:.2f} {fifteen:.2f}; "
        f"cores {os.cpu_count()} (usable {len(os.sched_getaffinity(0))})"
    )


def submission_zip() -> bytes:
    """The sample site zipped as an applicant would: the zip holds the folder."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(SAMPLE.rglob("*")):
            if f.is_file():
                z.write(f, f"{SAMPLE.name}/{f.relative_to(SAMPLE)}")
    return buf.getvalue()


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of ``values``."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return s[k]


# ----------------------------------------------------------------- the workspace and server


def make_users(folder: Path, users: list[tuple[str, str]]) -> None:
    """Create the accounts in one process (Django starts once)."""
    code = (
        "import json, sys\n"
        "from georeview.web.server import configure\n"
        "configure(sys.argv[1])\n"
        "from georeview.web.roles import add_user\n"
        "for name, role in json.loads(sys.stdin.read()):\n"
        f"    add_user(name, role, password={PASSWORD!r})\n"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(folder)],
        input=json.dumps(users),
        text=True,
        cwd=REPO,
        check=True,
    )


class Server:
    """``georeview serve`` as a whole process; its stderr goes to a log file."""

    def __init__(self, folder: Path, workers: int, threads: int) -> None:
        self.log = folder.parent / "serve.log"
        self.err = self.log.open("w")
        self.proc = subprocess.Popen(
            georeview_cmd(
                "serve",
                "--workspace",
                str(folder),
                "--port",
                "0",
                "--workers",
                str(workers),
                "--threads",
                str(threads),
            ),
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=self.err,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = re.search(r"at (http://[^/ ]+/)", self.log.read_text())
            if m:
                self.url = m.group(1)
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise SystemExit(f"georeview serve did not start:\n{self.log.read_text()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()

    def problems(self) -> list[str]:
        """The server log's lines that tell of an error (tracebacks, 5xx)."""
        text = self.log.read_text()
        return [
            line
            for line in text.splitlines()
            if "Traceback" in line or "Internal Server Error" in line or "ERROR" in line
        ]


class Db:
    """The workspace's SQLite file, read-only."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "georeview.sqlite3"

    def query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        con = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()

    def job(self, job_id: int) -> tuple[str, str | None, float | None]:
        rows = self.query("SELECT state, finished_at, seconds FROM web_job WHERE id = ?", (job_id,))
        return rows[0] if rows else ("missing", None, None)


def epoch(stamp: str) -> float:
    """A Django datetime as SQLite holds it (UTC, USE_TZ) to epoch seconds."""
    return dt.datetime.fromisoformat(stamp).replace(tzinfo=dt.UTC).timestamp()


# ----------------------------------------------------------------- a browser's session


@dataclass
class Rec:
    kind: str
    start: float
    seconds: float
    status: int  # 0: an exception
    ok: bool
    what: str = ""


@dataclass
class Results:
    recs: list[Rec] = field(default_factory=list)
    comments: set[str] = field(default_factory=set)  # texts recorded (the page said so)
    refused: set[str] = field(default_factory=set)  # texts refused as stale
    conflicts: int = 0
    uploads: list[tuple[str, int]] = field(default_factory=list)  # (case number, job id)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, rec: Rec) -> None:
        with self.lock:
            self.recs.append(rec)


class Browser:
    """One user's session: every request timed and recorded with its kind and status."""

    def __init__(self, url: str, results: Results) -> None:
        self.url = url.rstrip("/")
        self.s = requests.Session()
        self.results = results

    def _do(
        self, kind: str, method: str, path: str, expect: int, **kw: Any
    ) -> requests.Response | None:
        kw.setdefault("allow_redirects", False)
        kw.setdefault("timeout", 120)
        headers = kw.pop("headers", {})
        headers.setdefault("Referer", self.url + "/")
        t0 = time.perf_counter()
        start = time.time()
        try:
            r = self.s.request(method, self.url + path, headers=headers, **kw)
        except requests.RequestException as exc:
            self.results.add(
                Rec(kind, start, time.perf_counter() - t0, 0, False, f"{path}: {exc!r}")
            )
            return None
        seconds = time.perf_counter() - t0
        ok = r.status_code == expect
        self.results.add(
            Rec(kind, start, seconds, r.status_code, ok, "" if ok else f"{method} {path}")
        )
        return r if ok else None

    def get(self, path: str, kind: str = "page") -> requests.Response | None:
        return self._do(kind, "GET", path, 200)

    def csrf(self, html: str | None = None) -> str:
        m = _CSRF.search(html or "")
        return m.group(1) if m else self.s.cookies.get("csrftoken", "")

    def login(self, name: str) -> bool:
        page = self.get("/login/", kind="login")
        if page is None:
            return False
        r = self._do(
            "login",
            "POST",
            "/login/",
            302,
            data={
                "username": name,
                "password": PASSWORD,
                "csrfmiddlewaretoken": self.csrf(page.text),
                "next": "/",
            },
        )
        return r is not None

    def upload(self, data: bytes, token: str) -> tuple[str, int] | None:
        """Open a case; return its number and job id (from the case page)."""
        r = self._do(
            "upload",
            "POST",
            "/cases/new/",
            302,
            data={"csrfmiddlewaretoken": token},
            files={"submission": ("deerfield_minor_home.zip", data, "application/zip")},
        )
        if r is None:
            return None
        m = re.match(r"/cases/([A-Za-z0-9-]+)/", r.headers.get("Location", ""))
        if not m:
            self.results.add(Rec("upload", time.time(), 0.0, r.status_code, False, "Location"))
            return None
        page = self.get(f"/cases/{m.group(1)}/")
        job = _JOB.search(page.text) if page is not None else None
        if job is None:
            return None
        got = (m.group(1), int(job.group(1)))
        with self.results.lock:
            self.results.uploads.append(got)
        return got

    def comment(self, number: str, text: str, retries: int = 5) -> None:
        """Comment on a case as a reviewer does: read the page, post, read the answer."""
        for attempt in range(retries):
            page = self.get(f"/cases/{number}/")
            if page is None:
                return
            rev = _REVISION.search(page.text)
            if rev is None:
                self.results.add(Rec("comment", time.time(), 0.0, 200, False, "no revision"))
                return
            said = f"{text} (try {attempt + 1})"
            r = self._do(
                "comment",
                "POST",
                f"/cases/{number}/actions/",
                302,
                data={
                    "csrfmiddlewaretoken": self.csrf(page.text),
                    "kind": "comment",
                    "rule_id": "",
                    "sheet": "C-1",
                    "text": said,
                    "revision": rev.group(1),
                },
            )
            if r is None:
                return
            back = self.get(r.headers.get("Location", f"/cases/{number}/").split("#")[0])
            if back is None:
                return
            msgs = [(tag, body) for tag, body in _MESSAGE.findall(back.text)]
            if any("Comment recorded" in body for _, body in msgs):
                with self.results.lock:
                    self.results.comments.add(said)
                return
            if any("changed since you opened it" in body for _, body in msgs):
                with self.results.lock:
                    self.results.conflicts += 1
                    self.results.refused.add(said)
                continue
            self.results.add(Rec("comment", time.time(), 0.0, 200, False, f"said {msgs!r}"))
            return


# ----------------------------------------------------------------- part 1


def wait_done(db: Db, job_id: int, timeout: float = 300.0) -> tuple[str, float | None, float]:
    """Poll the job's row every 50 ms until it ends: (state, finished epoch, seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state, finished, seconds = db.job(job_id)
        if state in ("done", "failed"):
            return state, epoch(finished) if finished else None, seconds or 0.0
        time.sleep(0.05)
    return "timeout", None, 0.0


def cli_once() -> float:
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        subprocess.run(
            georeview_cmd("review", str(SAMPLE.relative_to(REPO)), "--out", out),
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            check=True,
        )
        return time.perf_counter() - t0


def warm_up(url: str, db: Db, data: bytes, names: list[str], results: Results) -> None:
    """Upload pairs of cases until jobs have run on two different workers (at most 3 pairs)."""
    for _ in range(3):
        got = []
        for name in names[:2]:
            b = Browser(url, results)
            b.login(name)
            c = b.upload(data, b.csrf())
            if c is None:
                raise SystemExit("the warm-up upload failed; see the server log")
            got.append(c)
        for _, job in got:
            wait_done(db, job)
        if len({w for (w,) in db.query("SELECT DISTINCT worker FROM web_job")}) >= 2:
            return


def part_review(url: str, db: Db, data: bytes, applicants: list[str], runs: int) -> Results:
    results = Results()
    warm_up(url, db, data, applicants, results)
    cli_once()  # the one-shot CLI's caches (numba, the jurisdictions) warm as well
    browsers = []
    for name in applicants:
        b = Browser(url, results)
        b.login(name)
        browsers.append(b)
    upload_s, to_done, job_s, cli_s = [], [], [], []
    for i in range(runs):
        b = browsers[i % len(browsers)]
        token = b.csrf(b.get("/cases/new/").text)
        n_before = len(results.recs)
        got = b.upload(data, token)
        answered = results.recs[n_before].start + results.recs[n_before].seconds
        if got is None:
            raise SystemExit("an upload failed; see the server log")
        upload_s.append(results.recs[n_before].seconds)
        state, finished, seconds = wait_done(db, got[1])
        if state != "done" or finished is None:
            raise SystemExit(f"job {got[1]} ended {state}")
        to_done.append(finished - answered)
        job_s.append(seconds)
        cli_s.append(cli_once())
    ratios = [c / d for c, d in zip(cli_s, to_done, strict=True)]
    med = statistics.median
    print(f"review after upload ({runs} runs, alternating with the one-shot CLI):")
    for label, xs in (
        ("(a) upload request", upload_s),
        ("(b) upload response -> job done", to_done),
        ("(c) the job's own seconds", job_s),
        ("one-shot `georeview review` process", cli_s),
    ):
        print(f"  {label:38s} median {med(xs):6.2f} s (min {min(xs):.2f}, max {max(xs):.2f})")
    print(f"  {'ratio one-shot CLI / upload-to-done':38s} median {med(ratios):6.2f}")
    return results


# ----------------------------------------------------------------- part 2


def reviewer(b: Browser, stop: threading.Event, rng: random.Random, think: float, me: str) -> None:
    n = 0
    numbers: list[str] = []
    while not stop.is_set():
        choice = rng.random()
        if choice < 0.25 or not numbers:
            page = b.get("/cases/")
            if page is not None:
                numbers = sorted(set(_CASE_LINK.findall(page.text)))
        elif choice < 0.40:
            b.get(f"/cases/?q={rng.choice(_SEARCHES)}")
        elif choice < 0.75:
            b.get(f"/cases/{rng.choice(numbers)}/")
        elif choice < 0.85:
            b.get("/register/sites.geojson", kind="geojson")
        else:
            n += 1
            b.comment(rng.choice(numbers), f"load test comment {me}-{n}")
        if think:
            stop.wait(rng.uniform(0, 2 * think))


def applicant(b: Browser, stop: threading.Event, rng: random.Random, think: float) -> None:
    mine: list[str] = []
    while not stop.is_set():
        if not mine or rng.random() < 0.3:
            page = b.get("/")
            if page is not None:
                mine = sorted(set(_CASE_LINK.findall(page.text)))
        elif mine:
            page = b.get(f"/cases/{rng.choice(mine)}/")
            job = _JOB.search(page.text) if page is not None else None
            if job is not None and rng.random() < 0.5:
                b.get(f"/jobs/{job.group(1)}.json", kind="job json")
        if think:
            stop.wait(rng.uniform(0, 2 * think))


def burster(b: Browser, data: bytes, token: str, go: threading.Barrier) -> None:
    go.wait()
    got = b.upload(data, token)
    if got is None:
        return
    # the case page polls its job as web.js does (every 400 ms) until it ends
    while True:
        r = b.get(f"/jobs/{got[1]}.json", kind="job json")
        if r is None or r.json().get("state") in ("done", "failed"):
            return
        time.sleep(0.4)


def part_load(
    url: str,
    db: Db,
    data: bytes,
    reviewers: list[str],
    applicants: list[str],
    bursters: list[str],
    a: argparse.Namespace,
    results: Results,
) -> tuple[float, float, float | None]:
    rng = random.Random(26)
    stop = threading.Event()
    browsers = {}
    for name in [*reviewers, *applicants, *bursters]:
        b = Browser(url, results)
        if not b.login(name):
            raise SystemExit(f"{name} could not sign in; see the server log")
        browsers[name] = b
    tokens = {n: browsers[n].csrf(browsers[n].get("/cases/new/").text) for n in bursters}
    threads = [
        threading.Thread(
            target=reviewer,
            args=(browsers[n], stop, random.Random(rng.random()), a.think, n),
            daemon=True,
        )
        for n in reviewers
    ] + [
        threading.Thread(
            target=applicant,
            args=(browsers[n], stop, random.Random(rng.random()), a.think),
            daemon=True,
        )
        for n in applicants
    ]
    go = threading.Barrier(len(bursters) + 1)
    burst = [
        threading.Thread(target=burster, args=(browsers[n], data, tokens[n], go), daemon=True)
        for n in bursters
    ]
    for t in [*threads, *burst]:
        t.start()
    t0 = time.time()
    stop.wait(a.burst_at)
    burst_start = time.time()
    n_uploads = len(results.uploads)
    go.wait()
    stop.wait(max(0.0, t0 + a.seconds - time.time()))
    stop.set()
    t1 = time.time()
    for t in threads:
        t.join(timeout=180)
    for t in burst:
        t.join(timeout=600)
    burst_jobs = [job for _, job in results.uploads[n_uploads:]]
    ends = [wait_done(db, job) for job in burst_jobs]
    burst_done = (
        max(f for _, f, _ in ends) - burst_start
        if ends and all(s == "done" and f for s, f, _ in ends)
        else None
    )
    return t0, t1, burst_done


def report_load(
    results: Results, t0: float, t1: float, burst_done: float | None, n_burst: int
) -> int:
    window = [r for r in results.recs if t0 <= r.start <= t1]
    errors = [r for r in results.recs if not r.ok]
    span = t1 - t0
    print(f"load test: {span:.0f} s")
    print(f"  requests {len(window)}, {len(window) / span:.1f} req/s")

    def line(label: str, recs: list[Rec]) -> None:
        xs = [r.seconds * 1000 for r in recs]
        if not xs:
            return
        print(
            f"  {label:18s} {len(xs):6d} requests; latency p50 {pct(xs, 50):7.0f} ms, "
            f"p95 {pct(xs, 95):7.0f} ms, p99 {pct(xs, 99):7.0f} ms, max {max(xs):7.0f} ms"
        )

    line("all", window)
    for kind in ("page", "geojson", "job json", "comment", "upload"):
        line(kind, [r for r in window if r.kind == kind])
    line("sign-in (before)", [r for r in results.recs if r.kind == "login"])
    print(
        f"  comments recorded {len(results.comments)}, conflicts (stale revision, retried) "
        f"{results.conflicts}"
    )
    print(f"  errors {len(errors)}")
    for r in errors[:10]:
        print(f"    {r.kind} status {r.status}: {r.what}")
    if burst_done is None:
        print(f"  burst of {n_burst} uploads: NOT all reviews done")
    else:
        print(f"  burst of {n_burst} uploads: all reviews done {burst_done:.1f} s after the burst")
    return len(errors)


# ----------------------------------------------------------------- nothing lost


def audit_all(folder: Path) -> list[str]:
    """Every case's audit chain, checked in one process."""
    code = (
        "import json, sys\n"
        "from georeview.web.server import configure\n"
        "configure(sys.argv[1])\n"
        "from georeview.cases.models import Case\n"
        "from georeview.cases.service import verify_audit\n"
        "print(json.dumps({c: verify_audit(c) for c in "
        "Case.objects.values_list('number', flat=True)}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(folder)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return [f"{c}: {p}" for c, ps in got.items() for p in ps]


def nothing_lost(db: Db, folder: Path, results: Results, sample: int) -> list[str]:
    lost: list[str] = []
    rows = db.query("SELECT text FROM cases_action WHERE kind = 'comment'")
    texts = [t for (t,) in rows]
    if len(texts) != len(results.comments) or set(texts) != results.comments:
        lost.append(
            f"comments: {len(results.comments)} recorded by the pages, {len(texts)} in the"
            f" database ({len(results.comments - set(texts))} missing,"
            f" {len(set(texts) - results.comments)} unexpected)"
        )
    if results.refused & set(texts):
        lost.append(f"{len(results.refused & set(texts))} refused comment(s) were filed")
    (events,) = db.query("SELECT COUNT(*) FROM cases_auditevent WHERE action = 'comment'")[0]
    if events != len(texts):
        lost.append(f"{len(texts)} comments but {events} comment audit events")
    cases = {n for (n,) in db.query("SELECT number FROM cases_case")}
    numbers = [n for n, _ in results.uploads]
    if len(set(numbers)) != len(numbers) or set(numbers) != cases:
        lost.append(f"{len(numbers)} uploads answered, {len(cases)} cases in the database")
    jobs = dict(
        db.query("SELECT j.id, c.number FROM web_job j JOIN cases_case c ON c.id = j.case_id")
    )
    for number, job in results.uploads:
        if jobs.get(job) != number:
            lost.append(f"upload {number}: its job {job} is not in the database")
    states = dict(db.query("SELECT state, COUNT(*) FROM web_job GROUP BY state"))
    if set(states) != {"done"}:
        lost.append(f"jobs by state: {states}")
    lost += audit_all(folder)
    for number in sorted(cases)[:: max(1, len(cases) // sample)][:sample]:
        p = subprocess.run(
            georeview_cmd("case", "audit", number, "--workspace", str(folder)),
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        if p.returncode or "audit trail intact" not in p.stdout:
            lost.append(f"georeview case audit {number}: exit {p.returncode} {p.stderr.strip()}")
    print(
        f"nothing lost: {len(texts)} comments, {len(cases)} cases, "
        f"{sum(states.values())} jobs ({states}), audit chains of {len(cases)} cases "
        f"(`georeview case audit` on {min(sample, len(cases))}): "
        + ("all intact" if not lost else f"{len(lost)} PROBLEM(S)")
    )
    for x in lost:
        print(f"  LOST: {x}")
    return lost


# ----------------------------------------------------------------- main


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--users", type=int, default=20, help="simulated users (70%% reviewers)")
    p.add_argument("--seconds", type=float, default=60.0, help="length of the load test")
    p.add_argument("--runs", type=int, default=7, help="uploads timed in part 1")
    p.add_argument("--burst", type=int, default=10, help="uploads at once in the load test")
    p.add_argument("--burst-at", type=float, default=10.0, help="seconds into the load test")
    p.add_argument("--think", type=float, default=0.5, help="mean seconds between requests")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=8, help="the server's request threads")
    p.add_argument("--audit-sample", type=int, default=5, help="cases `case audit` checks")
    p.add_argument("--keep", action="store_true", help="keep the workspace (path printed)")
    p.add_argument("--quick", action="store_true", help="6 users, 15 s, 3 runs, burst at 5 s")
    a = p.parse_args()
    if a.quick:
        a.users, a.seconds, a.runs, a.burst_at = 6, 15.0, 3, 5.0
    a.burst_at = min(a.burst_at, a.seconds / 2)
    n_reviewers = max(1, round(a.users * 0.7))
    reviewers = [f"reviewer-{i + 1:02d}" for i in range(n_reviewers)]
    applicants = [f"applicant-{i + 1:02d}" for i in range(max(1, a.users - n_reviewers))]
    bursters = [f"burst-{i + 1:02d}" for i in range(a.burst)]

    print(f"{version()}; python {sys.version.split()[0]}")
    print(machine("before"))
    root = Path(tempfile.mkdtemp(prefix="bench-web-"))
    folder = root / "workspace"
    data = submission_zip()
    make_users(
        folder,
        [(n, "reviewer") for n in reviewers] + [(n, "applicant") for n in [*applicants, *bursters]],
    )
    server = Server(folder, a.workers, a.threads)
    db = Db(folder)
    print(
        f"server {server.url} ({a.workers} workers, {a.threads} threads); "
        f"{len(reviewers)} reviewers, {len(applicants)} applicants, {len(bursters)} in the burst"
    )
    try:
        results = part_review(server.url, db, data, applicants, a.runs)
        results.recs.clear()
        t0, t1, burst_done = part_load(
            server.url, db, data, reviewers, applicants, bursters, a, results
        )
        n_errors = report_load(results, t0, t1, burst_done, len(bursters))
        print(machine("after"))
    finally:
        server.stop()
    problems = server.problems()
    if problems:
        print(f"server log: {len(problems)} error line(s), e.g. {problems[0]}")
    lost = nothing_lost(db, folder, results, a.audit_sample)
    if a.keep:
        print(f"workspace kept: {folder}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if n_errors or lost or problems or burst_done is None else 0


if __name__ == "__main__":
    sys.exit(main())
