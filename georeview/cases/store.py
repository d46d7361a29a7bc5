"""The workspace: a folder of files and the database the cases live in.

A workspace is a folder. Its files (every round's submission as received, the reviews,
the letters) are under ``files/``; its database is SQLite in ``georeview.sqlite3`` unless a
URL names a PostgreSQL database (``postgresql://user:password@host:5432/name``; a socket
folder as ``?host=/var/run/postgresql``). Opening a workspace configures Django for this
process, once, and applies the migrations of :mod:`georeview.cases.migrations` (the first
open creates every table).

The database URL comes from ``--database``, else ``GEOREVIEW_DATABASE_URL``, else the
workspace's SQLite file. A process works on one workspace: opening a second one raises.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from georeview.errors import ConfigError, DataSourceError, DependencyError, InputError

__all__ = [
    "DATABASE_ENV",
    "SQLITE_NAME",
    "Workspace",
    "database_settings",
    "open_workspace",
    "opened",
]

#: The environment variable a database URL may come from.
DATABASE_ENV = "GEOREVIEW_DATABASE_URL"
#: The workspace's own database file (the default store).
SQLITE_NAME = "georeview.sqlite3"
#: Seconds a writer waits for another's transaction on SQLite before giving up.
SQLITE_TIMEOUT_S = 60

_OPENED: list[Workspace] = []


@dataclass(frozen=True)
class Workspace:
    """An open workspace: its folder and the database it was opened with."""

    folder: Path
    database: str

    @property
    def files(self) -> Path:
        """Where the case files live."""
        return self.folder / "files"

    def path(self, relative: str) -> Path:
        """A stored path (relative to the workspace) as a path on disk, never outside it."""
        full = (self.folder / relative).resolve()
        if not full.is_relative_to(self.folder.resolve()):
            raise DataSourceError(
                "refused: a stored path leads outside the workspace", path=relative
            )
        return full

    def relative(self, path: Path) -> str:
        """A path under the workspace as it is stored (POSIX, relative)."""
        return Path(path).resolve().relative_to(self.folder.resolve()).as_posix()


def database_settings(url: str | None, folder: Path) -> dict[str, Any]:
    """Django's ``DATABASES["default"]`` for a URL (``None``: the workspace's SQLite file).

    Raises
    ------
    georeview.errors.ConfigError
        A URL of another kind, or a PostgreSQL URL without a database name.
    """
    if not url:
        url = f"sqlite:///{(folder / SQLITE_NAME).resolve()}"
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        # as SQLAlchemy spells it: sqlite:///relative/file, sqlite:////absolute/file
        name = unquote(parts.path[1:])
        if not name:
            raise ConfigError(
                "sqlite URL without a file (sqlite:///path/to/file)", field="--database"
            )
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": name,
            # IMMEDIATE: a writer takes the lock when its transaction begins, so two
            # processes changing one case queue for it instead of one failing mid-way
            "OPTIONS": {
                "timeout": SQLITE_TIMEOUT_S,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    if parts.scheme in ("postgres", "postgresql"):
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise ConfigError(
                "PostgreSQL URL without a database name (postgresql://user@host/name)",
                field="--database",
            )
        query = parse_qs(parts.query)
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": query.get("host", [parts.hostname or ""])[0],
            "PORT": str(parts.port or ""),
            "CONN_MAX_AGE": 0,
        }
    raise ConfigError(
        f"unknown database URL scheme {parts.scheme!r} (sqlite:///FILE or postgresql://...)",
        field="--database",
    )


def _secret_key(folder: Path) -> str:
    """The workspace's own secret key (signing, next: sessions), made on first open."""
    path = folder / "secret_key"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


def open_workspace(
    folder: Path | str,
    database: str | None = None,
    *,
    extra_settings: Callable[[Path], dict[str, Any]] | None = None,
) -> Workspace:
    """Open (create on first use) a workspace and configure Django for it.

    Parameters
    ----------
    folder : path
        The workspace folder (created with its ``files/`` when missing).
    database : str, optional
        A database URL; default ``$GEOREVIEW_DATABASE_URL``, else the workspace's SQLite file.
    extra_settings : callable, optional
        ``folder -> settings``: more Django settings for a process that serves the workspace
        (:mod:`georeview.web`); its ``INSTALLED_APPS`` are added after the store's own.

    Raises
    ------
    georeview.errors.DependencyError
        Django is not installed (``pip install "georeview[workspace]"``).
    georeview.errors.InputError
        This process already opened another workspace.
    georeview.errors.DataSourceError
        The database cannot be reached.
    """
    folder = Path(folder).expanduser().resolve()
    url = database or os.environ.get(DATABASE_ENV) or None
    db = database_settings(url, folder)
    label = f"{db['ENGINE'].rsplit('.', 1)[-1]}:{db['NAME']}"
    if _OPENED:
        if _OPENED[0].folder == folder and _OPENED[0].database == label:
            return _OPENED[0]
        raise InputError(
            f"this process already opened the workspace {_OPENED[0].folder}", path=folder
        )
    try:
        import django
        from django.conf import settings
    except ImportError:
        raise DependencyError(
            'the case store needs Django: pip install "georeview[workspace]"', field="workspace"
        ) from None
    (folder / "files").mkdir(parents=True, exist_ok=True)
    if not settings.configured:
        more = dict(extra_settings(folder)) if extra_settings else {}
        apps = ["django.contrib.contenttypes", "django.contrib.auth", "georeview.cases"]
        settings.configure(
            DEBUG=False,
            SECRET_KEY=_secret_key(folder),
            INSTALLED_APPS=apps + [a for a in more.pop("INSTALLED_APPS", []) if a not in apps],
            DATABASES={"default": db},
            DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
            USE_TZ=True,
            # the Villages are in Wisconsin: times are stored in UTC and read in Central time
            TIME_ZONE="America/Chicago",
            GEOREVIEW_WORKSPACE=str(folder),
            **more,
        )
        django.setup()
    _migrate(label)
    ws = Workspace(folder, label)
    _OPENED.append(ws)
    return ws


def opened() -> Workspace:
    """The workspace this process opened (the web pages' and workers' one).

    Raises
    ------
    georeview.errors.InputError
        No workspace is open in this process.
    """
    if not _OPENED:
        raise InputError("no workspace is open in this process", field="workspace")
    return _OPENED[0]


def _migrate(label: str) -> None:
    """Apply the migrations not yet applied (all of them on a new database)."""
    from django.core.management import call_command
    from django.db import DatabaseError

    try:
        call_command("migrate", interactive=False, verbosity=0)
    except DatabaseError as exc:
        raise DataSourceError(
            f"cannot open the database ({' '.join(str(exc).split())[:200]})", path=label
        ) from None
