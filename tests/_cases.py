"""What the case-store tests share: the two databases, the CLI, a resubmission.

The store runs on SQLite (the workspace's own file) and on PostgreSQL. PostgreSQL comes
from ``GEOREVIEW_TEST_POSTGRES`` (a URL; scripts/test.sh starts Debian's server and sets
it): each test gets a database of its own, made and dropped here. Without the variable
the PostgreSQL tests skip, except in CI (``CI`` set), where they fail: CI must run them.

Django is configured once per process, so the tests that need a store of their own run
the ``georeview case`` command (or a worker script) in subprocesses.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_sites"
PG_ENV = "GEOREVIEW_TEST_POSTGRES"
BACKENDS = ("sqlite", "postgresql")


def _pg_url() -> str | None:
    url = os.environ.get(PG_ENV)
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"{PG_ENV} is not set in CI: scripts/test.sh starts PostgreSQL")
        pytest.skip(f"no PostgreSQL ({PG_ENV} unset; scripts/test.sh sets it as root)")
    return url


@pytest.fixture
def database(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """``None`` (the workspace's SQLite file) or the URL of a new PostgreSQL database."""
    if request.param == "sqlite":
        yield None
        return
    pytest.importorskip("psycopg")
    import psycopg

    url = _pg_url()
    assert url is not None
    name = f"georeview_test_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL at {PG_ENV} cannot be reached: {exc}")
    parts = urlsplit(url)
    yield urlunsplit(parts._replace(path=f"/{name}"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run_case(
    ws: Path, database: str | None, *args: str, by: str = "A. Reviewer", ok: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``georeview case ARGS`` on a workspace; assert exit 0 unless ``ok=False``."""
    cmd = [sys.executable, "-m", "georeview", "case", *args, "--workspace", str(ws), "--by", by]
    if database:
        cmd += ["--database", database]
    env = {k: v for k, v in os.environ.items() if k != "GEOREVIEW_DATABASE_URL"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    if ok:
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
    return done


def resubmission(tmp: Path, sample: str, **site_map: object) -> Path:
    """A copy of a sample with ``[site_map]`` values replaced (the applicant's corrections)."""
    dest = tmp / f"{sample}-resubmitted"
    shutil.copytree(SAMPLES / sample, dest)
    toml = dest / "submission.toml"
    lines = toml.read_text().splitlines()
    for key, value in site_map.items():
        text = "true" if value is True else "false" if value is False else str(value)
        lines = [f"{key} = {text}" if ln.split("=")[0].strip() == key else ln for ln in lines]
    toml.write_text("\n".join(lines) + "\n")
    return dest
