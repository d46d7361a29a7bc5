"""Safe extraction of a submission's zip file.

Entries that would land outside the destination (``../``, absolute paths, drive
letters), symbolic links, encrypted entries, compression methods the standard library
cannot read, more than :data:`MAX_ZIP_MEMBERS` entries or more than
:data:`MAX_UNZIPPED_BYTES` of content (counted while decompressing, not trusted from
the header) are refused before or while extracting.
"""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path, PurePosixPath

from georeview.config import Limits, limits
from georeview.errors import DataSourceError, LimitError

__all__ = ["MAX_UNZIPPED_BYTES", "MAX_ZIP_MEMBERS", "extract_zip", "reason_of"]

#: Default largest total uncompressed size of one zip file, bytes (``GEOREVIEW_MAX_ZIP_BYTES``).
MAX_UNZIPPED_BYTES = Limits().max_zip_bytes
#: Default most entries one zip file may hold (``GEOREVIEW_MAX_ZIP_MEMBERS``).
MAX_ZIP_MEMBERS = Limits().max_zip_members


def _safe_member(info: zipfile.ZipInfo, zip_path: Path) -> PurePosixPath | None:
    """The relative path of a zip entry, or a refusal for one escaping the folder."""
    name = info.filename.replace("\\", "/")
    mode = (info.external_attr >> 16) & 0o170000
    if mode == stat.S_IFLNK:
        raise DataSourceError(f"refused: entry {info.filename!r} is a symbolic link", path=zip_path)
    p = PurePosixPath(name)
    if name.startswith("/") or (len(name) > 1 and name[1] == ":") or ".." in p.parts:
        raise DataSourceError(
            f"refused: entry {info.filename!r} would be written outside the folder", path=zip_path
        )
    parts = [x for x in p.parts if x not in ("", ".")]
    return PurePosixPath(*parts) if parts else None


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
        infos = zf.infolist()
        if len(infos) > max_members:
            raise LimitError(
                f"{len(infos):,} entries exceed the limit of {max_members:,}"
                " (GEOREVIEW_MAX_ZIP_MEMBERS)",
                path=zip_path,
            )
        if sum(i.file_size for i in infos) > max_bytes:
            raise LimitError(
                f"uncompressed size exceeds the limit of {max_bytes:,} bytes"
                " (GEOREVIEW_MAX_ZIP_BYTES)",
                path=zip_path,
            )
        planned = [(i, _safe_member(i, zip_path)) for i in infos]
        _check_members(planned, zip_path)
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
                with zf.open(info) as src, open(target, "xb") as dst:
                    while block := src.read(1 << 16):
                        total += len(block)
                        if total > max_bytes:
                            raise LimitError(
                                f"uncompressed size exceeds the limit of {max_bytes:,} bytes"
                                " (GEOREVIEW_MAX_ZIP_BYTES)",
                                path=zip_path,
                            )
                        dst.write(block)
            except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, ValueError) as exc:
                raise DataSourceError(
                    f"cannot extract {info.filename!r} ({reason_of(exc)})", path=zip_path
                ) from None
    return dest


#: Compression methods the standard library decompresses (stored, deflate, bzip2, lzma).
_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}


def _check_members(
    planned: list[tuple[zipfile.ZipInfo, PurePosixPath | None]], zip_path: Path
) -> None:
    """Refuse, before extracting anything, entries that cannot be extracted as one tree.

    Encrypted entries (flag bit 0, APPNOTE 4.4.4), compression methods the standard
    library cannot read (Deflate64 is method 9), two entries for one path, and a path
    that is both a file and a folder.
    """
    files: set[str] = set()
    dirs: set[str] = set()
    for info, rel in planned:
        if info.flag_bits & 0x1:
            raise DataSourceError(
                f"entry {info.filename!r} is encrypted (password-protected);"
                " send the zip without a password",
                path=zip_path,
            )
        if info.compress_type not in _METHODS:
            extra = " (Deflate64)" if info.compress_type == 9 else ""
            raise DataSourceError(
                f"entry {info.filename!r} uses compression method {info.compress_type}{extra},"
                " which georeview cannot read; zip it again with ordinary deflate",
                path=zip_path,
            )
        if rel is None:
            continue
        key = rel.as_posix()
        parents = {p.as_posix() for p in rel.parents if p.as_posix() != "."}
        if info.is_dir():
            if key in files:
                raise DataSourceError(f"{key!r} is both a file and a folder", path=zip_path)
            dirs.add(key)
        else:
            if key in files:
                raise DataSourceError(f"two entries for {key!r}", path=zip_path)
            if key in dirs:
                raise DataSourceError(f"{key!r} is both a file and a folder", path=zip_path)
            files.add(key)
        clash = parents & files
        if clash:
            raise DataSourceError(
                f"{sorted(clash)[0]!r} is both a file and a folder", path=zip_path
            )
        dirs |= parents
    clash = files & dirs
    if clash:
        raise DataSourceError(f"{sorted(clash)[0]!r} is both a file and a folder", path=zip_path)


def reason_of(exc: BaseException) -> str:
    """One short line for an exception (its message, or its type when it has none)."""
    text = " ".join(str(exc).split())[:200]
    return text or type(exc).__name__
