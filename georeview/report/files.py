"""Output files written whole or not at all, with the permissions a normal file gets.

report.json, report.html, map.html, index.html, a batch's summary.csv and summary.xlsx,
the screening's partition manifest and the site-map sheet are written through this
module: the bytes go to a temporary file in the same folder, are flushed to disk, and
the file is renamed over the target, so a failed or interrupted write never leaves a
partial file that looks complete.

The temporary file is created with ``os.open(..., 0o666)``, so the kernel gives it the
mode a plain ``open()`` would (``0o666 & ~umask``: 0644 under the usual umask 022), not
the 0600 of :func:`tempfile.mkstemp` (sheet.pdf was once written 0600, unreadable by the
office's other accounts). The umask is never read or changed (``os.umask`` sets it for
the whole process, under every other thread's feet).

It lives in a module of its own, importing nothing of georeview but the error tree, so
the report's modules and the pipeline's can use it without importing the report
package's ``__init__`` (which imports them).
"""

from __future__ import annotations

import fcntl
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from georeview.errors import OutputError

__all__ = ["atomic_path", "claim", "claim_folder", "claim_name", "make_folder", "write_atomic"]

#: Attempts at a free temporary name before giving up (each is 8 random hex digits).
_TRIES = 16


def _create_temporary(path: Path) -> tuple[int, Path]:
    """A new, empty ``.<name>.<random>.part`` beside ``path``: (open fd, its path)."""
    for _ in range(_TRIES):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")
        try:
            # 0o666: the kernel applies the umask, as for open(); O_EXCL: never another's file
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        return fd, tmp
    raise FileExistsError(f"no free temporary name beside {path.name}")


def write_atomic(path: Path, text: str | bytes) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder.

    Raises
    ------
    OutputError
        When the folder cannot be written (permissions, disk full).
    """
    path = Path(path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_temporary(path)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise OutputError(f"cannot write ({exc.strerror or exc})", path=path) from None
    return path


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary name beside ``path`` for a writer that wants a file name (matplotlib).

    The temporary file exists, empty, with the mode a normal file gets; the writer
    opens it for writing (which keeps that mode). When the block ends without an
    exception it is renamed over ``path``; otherwise it is removed.

    Raises
    ------
    OutputError
        When the folder cannot be written or the rename fails.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_temporary(path)
        os.close(fd)
    except OSError as exc:
        raise OutputError(f"cannot write ({exc.strerror or exc})", path=path) from None
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"cannot write ({exc.strerror or exc})", path=path) from None
    finally:
        tmp.unlink(missing_ok=True)


def make_folder(path: Path) -> Path:
    """Create an output folder (and its parents), or say in one line why it cannot be.

    Raises
    ------
    OutputError
        ``path`` or a parent is a file, or the folder cannot be created (permissions,
        a read-only or full file system).
    """
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # FileExistsError for a file at path, NotADirectoryError below one
        raise OutputError(
            f"cannot create the output folder ({exc.strerror or type(exc).__name__})", path=path
        ) from None
    return Path(path)


#: The lock file a run holds in an output folder while it writes there.
FOLDER_LOCK = ".georeview.lock"


def claim_name(out: Path) -> Path:
    """The lock file of a file output ``out``: ``.NAME.lock`` beside it."""
    return Path(out).with_name(f".{Path(out).name}.lock")


@contextmanager
def claim(lock: Path, *, what: Path) -> Iterator[Path]:
    """Hold ``lock`` (an exclusive ``flock``) while the block writes ``what``.

    Two runs given the same output both passed an "exists" check and one silently
    replaced the other's files; with the claim the second is refused at once. The claim
    is a kernel lock on an open file, so it goes when its process dies (a killed run
    leaves no stale claim), and checking "exists" after taking it leaves no gap between
    check and write. The lock file is removed when the block ends; a run that opened it
    just before it was removed holds a lock on a deleted file, so after locking the name
    is checked to be the file locked, and taken again if not.

    Raises
    ------
    OutputError
        Another run holds the claim, or the lock file cannot be made.
    """
    lock = Path(lock)
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
        except OSError as exc:
            raise OutputError(f"cannot write ({exc.strerror or exc})", path=what) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise OutputError(
                "another georeview run is writing it now; "
                "wait for that run or choose another output",
                path=what,
            ) from None
        try:
            same = os.stat(lock, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        yield lock
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)


@contextmanager
def claim_folder(path: Path) -> Iterator[Path]:
    """Create the output folder ``path`` (:func:`make_folder`) and hold it while the block runs.

    Raises
    ------
    OutputError
        As :func:`make_folder` and :func:`claim`.
    """
    folder = make_folder(path)
    with claim(folder / FOLDER_LOCK, what=folder):
        yield folder
