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

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from georeview.errors import OutputError

__all__ = ["atomic_path", "make_folder", "write_atomic"]

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
