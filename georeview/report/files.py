"""Output files written whole or not at all.

report.json, report.html, map.html, index.html, a batch's summary.csv and the
screening's partition manifest are written by :func:`write_atomic`: the bytes go to
a temporary file in the same folder, are flushed to disk, and the file is renamed
over the target, so a failed or interrupted write never leaves a partial file that
looks complete. It lives in a module of its own, importing nothing of georeview but
the error tree, so the report's modules and the pipeline's can use it without
importing the report package's ``__init__`` (which imports them).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from georeview.errors import OutputError

__all__ = ["write_atomic"]


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
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
        try:
            # mkstemp creates 0600; give the report the permissions a normal file gets.
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise OutputError(f"cannot write ({exc.strerror or exc})", path=path) from None
    return path
