"""A round's files as received: copied into the workspace, checksummed, made read-only.

A submission comes as a folder or a zip. A zip goes through the same checks as a batch's
zips (:func:`georeview.pipeline.zipsafe.extract_zip`: size, entry count, paths that
escape, links, bombs). A folder is copied file by file; a symbolic link anywhere in it is
refused, so nothing outside the submission is ever read through it. The copy is then
hashed (SHA-256 of every file) and its files and folders made read-only: what the Village
received is what it keeps, and :func:`check_manifest` tells whether it still is.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from georeview.errors import DataSourceError, LimitError

__all__ = [
    "FileEntry",
    "check_manifest",
    "freeze",
    "manifest_sha256",
    "scan",
    "sha256_of",
    "stage",
]

#: The file every submission holds at its root.
SUBMISSION_FILE = "submission.toml"
_BLOCK = 1 << 20


@dataclass(frozen=True)
class FileEntry:
    """One file of a round: its path in the submission, size and SHA-256."""

    path: str
    size_bytes: int
    sha256: str


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file, hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def manifest_sha256(entries: Iterable[FileEntry]) -> str:
    """The SHA-256 of a manifest: one JSON line per file, sorted by path."""
    lines = [
        json.dumps([e.path, e.size_bytes, e.sha256], ensure_ascii=False)
        for e in sorted(entries, key=lambda e: e.path)
    ]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _copy_folder(source: Path, dest: Path, *, max_bytes: int, max_members: int) -> None:
    """Copy a submission folder's regular files; refuse links and what exceeds the limits."""
    total = count = 0
    for root, dirs, files in os.walk(source, followlinks=False):
        here = Path(root)
        for name in [*dirs, *files]:
            p = here / name
            if p.is_symlink():
                raise DataSourceError(
                    "refused: the submission holds a symbolic link (nothing outside a"
                    " submission is read through it)",
                    path=p,
                )
        for name in files:
            p = here / name
            if not stat.S_ISREG(p.lstat().st_mode):
                raise DataSourceError("refused: not a regular file", path=p)
            count += 1
            total += p.lstat().st_size
            if count > max_members or total > max_bytes:
                raise LimitError(
                    f"the submission exceeds {max_members:,} files or {max_bytes:,} bytes"
                    " (GEOREVIEW_MAX_ZIP_MEMBERS, GEOREVIEW_MAX_ZIP_BYTES)",
                    path=source,
                )
            target = dest / p.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, target, follow_symlinks=False)


def _lift_single_folder(dest: Path) -> None:
    """A zip of one folder holding the submission: its contents become the round's root."""
    if (dest / SUBMISSION_FILE).exists():
        return
    children = list(dest.iterdir())
    if len(children) == 1 and children[0].is_dir() and (children[0] / SUBMISSION_FILE).is_file():
        inner = children[0]
        for child in inner.iterdir():
            child.rename(dest / child.name)
        inner.rmdir()


def stage(source: Path, dest: Path) -> list[FileEntry]:
    """Copy a submission (folder or zip) into ``dest`` and list its files.

    Raises
    ------
    georeview.errors.DataSourceError
        Missing, neither folder nor zip, a link, an unsafe zip, or no ``submission.toml``.
    georeview.errors.LimitError
        More files or bytes than the zip limits allow.
    """
    from georeview.config import limits

    source = Path(source)
    lim = limits()
    if source.is_symlink():
        raise DataSourceError("refused: the submission is a symbolic link", path=source)
    dest.mkdir(parents=True, exist_ok=False)
    if source.is_dir():
        _copy_folder(source, dest, max_bytes=lim.max_zip_bytes, max_members=lim.max_zip_members)
    elif source.is_file() and source.suffix.lower() == ".zip":
        from georeview.pipeline.zipsafe import extract_zip

        extract_zip(source, dest)
        _lift_single_folder(dest)
    elif not source.exists():
        raise DataSourceError("no such submission folder or zip", path=source)
    else:
        raise DataSourceError("a submission is a folder or a .zip file", path=source)
    if not (dest / SUBMISSION_FILE).is_file():
        raise DataSourceError(f"the submission has no {SUBMISSION_FILE}", path=source)
    return scan(dest)


def scan(folder: Path) -> list[FileEntry]:
    """Every file under ``folder`` with its size and SHA-256, sorted by path."""
    out = [
        FileEntry(p.relative_to(folder).as_posix(), p.stat().st_size, sha256_of(p))
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    ]
    return sorted(out, key=lambda e: e.path)


def freeze(folder: Path) -> None:
    """Make a folder's files and folders read-only (what was received is kept as received)."""
    for p in folder.rglob("*"):
        if p.is_file():
            p.chmod(0o444)
    for p in sorted((d for d in folder.rglob("*") if d.is_dir()), reverse=True):
        p.chmod(0o555)
    folder.chmod(0o555)


def check_manifest(folder: Path, expected: Iterable[FileEntry]) -> list[str]:
    """What differs between a round's folder and its manifest (empty: as received).

    Returns
    -------
    list of str
        One line per file missing, added or changed.
    """
    have = {e.path: e for e in scan(folder)} if folder.is_dir() else {}
    want = {e.path: e for e in expected}
    problems = [f"missing: {p}" for p in sorted(set(want) - set(have))]
    problems += [f"not received: {p}" for p in sorted(set(have) - set(want))]
    problems += [
        f"changed since received: {p}"
        for p in sorted(set(want) & set(have))
        if want[p].sha256 != have[p].sha256
    ]
    return problems
