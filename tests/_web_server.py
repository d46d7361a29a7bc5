"""A live ``georeview serve`` for the web tests: a workspace, its accounts, a signed-in client.

:func:`live_server` makes a workspace in a temporary folder, adds the accounts of
:data:`USERS` (one ``georeview users add`` each, password on stdin) and starts ``georeview
serve --port 0`` as a subprocess from the checkout (so it finds ``layers/<municipality>``),
reading the address it prints. The :func:`web_server` fixture is one such server per test
module. :class:`Client` is a ``requests`` session signed in as one user, which posts forms
with its session's CSRF token.

Only the repository's own data is read: the submissions are the samples of
``sample_sites`` (zipped here as an applicant uploads them).
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_sites"
PASSWORD = "correct-horse-battery"
#: The accounts every test server has: name -> role.
USERS = {
    "rita": "reviewer",
    "alice": "applicant",
    "bob": "applicant",
    "adam": "admin",
    # signed in with wrong passwords by the throttling test only (so no one else is locked)
    "lockout": "applicant",
}
#: The sample the flows use: its round 1 fails three site-map rules, fixed by resubmission.
SAMPLE = "somers_bad_map"
#: The site-map values of the resubmission that fixes them (as tests/_cases.resubmission).
FIXED = {"scale_ft_per_inch": 100, "contour_interval_ft": 2, "grid": True}
#: The scale finding's rule id (its comment resolves on resubmission).
SCALE_RULE = "somers.17.10.B.4.scale"
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def _georeview(*args: str, stdin: str | None = None, timeout: float = 120) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "georeview", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=timeout,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def add_users(ws: Path, users: dict[str, str]) -> None:
    """Add each account with its role and :data:`PASSWORD` (``georeview users add``)."""
    for name, role in users.items():
        _georeview(
            "users",
            "add",
            name,
            "--role",
            role,
            "--password-stdin",
            "--workspace",
            str(ws),
            stdin=PASSWORD + "\n",
        )


@dataclass
class Server:
    """A running server: its base URL (ends in ``/``), workspace and its stderr so far."""

    base: str
    workspace: Path
    tmp: Path
    lines: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` (with or without its leading ``/``)."""
        return self.base + path.lstrip("/")


@contextmanager
def live_server(tmp: Path, *, workers: int = 1) -> Iterator[Server]:
    """A workspace in ``tmp`` with :data:`USERS`, served until the block ends (SIGTERM)."""
    ws = tmp / "workspace"
    add_users(ws, USERS)
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
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    match = None
    try:
        while match is None:
            line = proc.stderr.readline()
            assert line, f"the server ended before serving: {''.join(lines)}"
            lines.append(line)
            match = re.search(r"at (http://127\.0\.0\.1:\d+/) ", line)
        yield Server(match.group(1), ws, tmp, lines)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        rest = proc.stderr.read()
        proc.stderr.close()
        lines.append(rest)
    assert "Traceback" not in "".join(lines), "".join(lines)


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One live server per test module (its own workspace and accounts)."""
    pytest.importorskip("waitress")
    pytest.importorskip("django")
    with live_server(tmp_path_factory.mktemp("web")) as server:
        yield server


# ----------------------------------------------------------------- submissions


def zip_folder(folder: Path, dest: Path) -> Path:
    """The submission as an applicant uploads it: a zip holding the folder itself."""
    with zipfile.ZipFile(dest, "w") as zf:
        for p in sorted(folder.rglob("*")):
            zf.write(p, f"{folder.name}/{p.relative_to(folder).as_posix()}")
    return dest


def sample_copy(tmp: Path, sample: str, folder: str, **top: str) -> Path:
    """A copy of a sample in ``tmp/folder`` with top-level string values replaced."""
    dest = tmp / folder
    shutil.copytree(SAMPLES / sample, dest)
    toml = dest / "submission.toml"
    lines = toml.read_text().splitlines()
    for key, value in top.items():
        quoted = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        lines = [f"{key} = {quoted}" if ln.split("=")[0].strip() == key else ln for ln in lines]
    toml.write_text("\n".join(lines) + "\n")
    return dest


def first_zip(tmp: Path, sample: str = SAMPLE) -> Path:
    """Round 1 of the sample, zipped."""
    return zip_folder(SAMPLES / sample, tmp / f"{sample}.zip")


def fixed_zip(tmp: Path) -> Path:
    """The resubmission of :data:`SAMPLE` that fixes its site map, zipped."""
    from _cases import resubmission

    folder = resubmission(tmp, SAMPLE, **FIXED)
    return zip_folder(folder, tmp / f"{folder.name}.zip")


# ----------------------------------------------------------------- a signed-in client


class Client:
    """A ``requests`` session of one user (or the anonymous, ``name=None``)."""

    def __init__(self, server: Server, name: str | None = None) -> None:
        requests = pytest.importorskip("requests")
        self.server = server
        self.name = name
        self.s = requests.Session()
        if name is not None:
            r = self.login(name, PASSWORD)
            assert r.url in (server.base, server.url("cases/")), (name, r.status_code, r.url)

    def token(self) -> str:
        """The session's CSRF token (from its cookie; a page is fetched first if none)."""
        got = self.s.cookies.get("csrftoken")
        if not got:
            self.s.get(self.server.url("login/"))
            got = self.s.cookies.get("csrftoken")
        assert got, "no CSRF cookie"
        return str(got)

    def login(self, name: str, password: str) -> Any:
        """Post the sign-in form; the response (after redirects)."""
        page = self.s.get(self.server.url("login/")).text
        token = CSRF.search(page).group(1)  # type: ignore[union-attr]
        return self.s.post(
            self.server.url("login/"),
            data={"username": name, "password": password, "csrfmiddlewaretoken": token},
        )

    def get(self, path: str, **kw: Any) -> Any:
        """GET ``path`` (no redirect followed unless ``allow_redirects=True``)."""
        kw.setdefault("allow_redirects", False)
        return self.s.get(self.server.url(path), timeout=60, **kw)

    def post(
        self, path: str, data: dict[str, Any] | None = None, *, csrf: bool = True, **kw: Any
    ) -> Any:
        """POST a form to ``path`` with the session's CSRF token (unless ``csrf=False``)."""
        data = dict(data or {})
        headers = dict(kw.pop("headers", {}))
        if csrf:
            data["csrfmiddlewaretoken"] = self.token()
            headers.setdefault("Referer", self.server.base)
        kw.setdefault("allow_redirects", False)
        return self.s.post(self.server.url(path), data=data, headers=headers, timeout=120, **kw)

    def upload(self, path: str, zipped: Path, field_name: str = "submission") -> Any:
        """POST a file (the submission zip) to ``path``; follows the redirect."""
        with zipped.open("rb") as f:
            return self.post(path, files={field_name: (zipped.name, f)}, allow_redirects=True)

    def job(self, job_id: int | str) -> dict[str, Any]:
        """The job's state (``/jobs/<id>.json``)."""
        r = self.get(f"jobs/{job_id}.json")
        assert r.status_code == 200, r.status_code
        return r.json()  # type: ignore[no-any-return]

    def wait_job(self, job_id: int | str, timeout: float = 180) -> dict[str, Any]:
        """Wait until the job is done; assert it did not fail."""
        deadline = time.monotonic() + timeout
        while (state := self.job(job_id))["state"] in ("queued", "running"):
            assert time.monotonic() < deadline, state
            time.sleep(0.3)
        assert state["state"] == "done", state
        return state

    def case_revision(self, number: str) -> int:
        """The case's revision as its page shows it (the forms' hidden ``revision``)."""
        page = self.get(f"cases/{number}/").text
        return int(re.search(r'name="revision" value="(\d+)"', page).group(1))  # type: ignore[union-attr]


def job_of(page: str) -> str:
    """The job id a case page follows (its ``#job`` box)."""
    return re.search(r'data-job="(\d+)"', page).group(1)  # type: ignore[union-attr]


def case_of(url: str) -> str:
    """The case number of a case page's URL."""
    return url.rstrip("/").split("/")[-1].split("#")[0]
