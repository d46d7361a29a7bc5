"""Safe extraction of a submission's zip file.

Entries that would land outside the destination (``../``, absolute paths, drive
letters), symbolic links, encrypted entries, compression methods the standard library
cannot read, more than :data:`MAX_ZIP_MEMBERS` entries or more than
:data:`MAX_UNZIPPED_BYTES` of content (counted while decompressing, not trusted from
the header) are refused before or while extracting. The entry checks are
:mod:`georeview.load.archive`'s, which the KMZ reader applies too.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from georeview.config import Limits, limits
from georeview.errors import DataSourceError
from georeview.load.archive import checked_entries, entry_blocks

__all__ = ["MAX_UNZIPPED_BYTES", "MAX_ZIP_MEMBERS", "extract_zip", "reason_of"]

#: Default largest total uncompressed size of one zip file, bytes (``GEOREVIEW_MAX_ZIP_BYTES``).
MAX_UNZIPPED_BYTES = Limits().max_zip_bytes
#: Default most entries one zip file may hold (``GEOREVIEW_MAX_ZIP_MEMBERS``).
MAX_ZIP_MEMBERS = Limits().max_zip_members


def extract_zip(
    zip_path: Path | str,
    dest: Path | str,
    *,
    max_bytes: int | None = None,
    max_members: int | None = None,
) -> Path:
    """Extract a zip file into ``dest`` safely; return ``dest``.

    ``max_bytes`` and ``max_members`` default to the limits in force
    (:func:`georeview.config.limits`: ``GEOREVIEW_MAX_ZIP_BYTES``, ``GEOREVIEW_MAX_ZIP_MEMBERS``).

    Raises
    ------
    DataSourceError
        Not a zip file, or an entry escaping ``dest`` or a symbolic link.
    LimitError
        Too many entries or too many bytes once decompressed.
    """
    zip_path, dest = Path(zip_path), Path(dest)
    lim = limits()
    max_bytes = lim.max_zip_bytes if max_bytes is None else max_bytes
    max_members = lim.max_zip_members if max_members is None else max_members
    try:
        zf = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataSourceError(f"not a readable zip file ({exc})", path=zip_path) from None
    with zf:
        planned = checked_entries(zf, zip_path, max_bytes=max_bytes, max_members=max_members)
        total = 0
        root = dest.resolve()
        for info, rel in planned:
            if rel is None:
                continue
            target = (dest / rel).resolve()
            if not target.is_relative_to(root):
                raise DataSourceError(
                    f"refused: entry {info.filename!r} would be written outside the folder",
                    path=zip_path,
                )
            try:
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                # "x" mode: an entry never replaces a file already extracted
                with open(target, "xb") as dst:
                    for block in entry_blocks(zf, info, zip_path, max_bytes=max_bytes, done=total):
                        total += len(block)
                        dst.write(block)
            except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, ValueError) as exc:
                raise DataSourceError(
                    f"cannot extract {info.filename!r} ({reason_of(exc)})", path=zip_path
                ) from None
    return dest


def reason_of(exc: BaseException) -> str:
    """One short line for an exception (its message, or its type when it has none)."""
    text = " ".join(str(exc).split())[:200]
    return text or type(exc).__name__
