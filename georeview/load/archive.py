"""Checks on a zip file's entries, shared by the batch's extraction and the KMZ reader.

A zip from an applicant is checked entry by entry before anything is decompressed:
entries that would land outside the folder (``../``, absolute paths, drive letters),
symbolic links, encrypted entries, compression methods the standard library cannot read
(Deflate64), two entries for one path, a name that is both a file and a folder, more
entries or more declared bytes than the zip limits. What is then decompressed is counted
while decompressing (the header's sizes are not trusted), so a zip bomb stops at the limit.
"""

from __future__ import annotations

import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from georeview.errors import DataSourceError, LimitError

__all__ = ["ZipEntry", "checked_entries", "entry_blocks", "read_entry"]

#: One entry of a checked zip and its relative path (``None`` for the root folder).
ZipEntry = tuple[zipfile.ZipInfo, PurePosixPath | None]

#: Compression methods the standard library decompresses (stored, deflate, bzip2, lzma).
_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}


def checked_entries(
    zf: zipfile.ZipFile,
    zip_path: Path,
    *,
    max_bytes: int,
    max_members: int,
    field: str | None = None,
) -> list[ZipEntry]:
    """Every entry of an open zip with its relative path, once all the checks pass.

    Raises
    ------
    LimitError
        More entries than ``max_members``, or more declared bytes than ``max_bytes``.
    DataSourceError
        An entry escaping the folder, a link, an encrypted or Deflate64 entry, two
        entries for one path, a name that is both a file and a folder.
    """
    infos = zf.infolist()
    if len(infos) > max_members:
        raise LimitError(
            f"{len(infos):,} entries exceed the limit of {max_members:,}"
            " (GEOREVIEW_MAX_ZIP_MEMBERS)",
            path=zip_path,
            field=field,
        )
    if sum(i.file_size for i in infos) > max_bytes:
        raise LimitError(
            f"uncompressed size exceeds the limit of {max_bytes:,} bytes (GEOREVIEW_MAX_ZIP_BYTES)",
            path=zip_path,
            field=field,
        )
    planned = [(i, _entry_path(i, zip_path, field)) for i in infos]
    _check_entries(planned, zip_path, field)
    return planned


def entry_blocks(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    zip_path: Path,
    *,
    max_bytes: int,
    done: int = 0,
    field: str | None = None,
) -> Iterator[bytes]:
    """The blocks of one entry as it decompresses, counted against ``max_bytes``.

    The count starts at ``done`` (the bytes already taken from the same zip), so a
    folder's extraction holds all its entries to one budget. Counting the bytes as they
    come, not the sizes the headers declare, is what stops a zip that lies about them.

    Raises
    ------
    LimitError
        ``done`` plus this entry's bytes exceed ``max_bytes``.
    """
    total = done
    with zf.open(info) as src:
        while block := src.read(1 << 16):
            total += len(block)
            if total > max_bytes:
                raise LimitError(
                    f"uncompressed size exceeds the limit of {max_bytes:,} bytes"
                    " (GEOREVIEW_MAX_ZIP_BYTES)",
                    path=zip_path,
                    field=field,
                )
            yield block


def read_entry(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    zip_path: Path,
    *,
    max_bytes: int,
    field: str | None = None,
) -> bytes:
    """The bytes of one checked entry, counted while decompressing against ``max_bytes``.

    Raises
    ------
    LimitError
        The entry decompresses to more than ``max_bytes`` (whatever its header says).
    DataSourceError
        A damaged entry (bad CRC, truncated stream).
    """
    try:
        blocks = list(entry_blocks(zf, info, zip_path, max_bytes=max_bytes, field=field))
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, ValueError) as exc:
        text = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise DataSourceError(
            f"cannot read entry {info.filename!r} ({text})", path=zip_path, field=field
        ) from None
    return b"".join(blocks)


def _entry_path(info: zipfile.ZipInfo, zip_path: Path, field: str | None) -> PurePosixPath | None:
    """The relative path of a zip entry, or a refusal for one escaping the folder."""
    name = info.filename.replace("\\", "/")
    mode = (info.external_attr >> 16) & 0o170000
    if mode == stat.S_IFLNK:
        raise DataSourceError(
            f"refused: entry {info.filename!r} is a symbolic link", path=zip_path, field=field
        )
    p = PurePosixPath(name)
    if name.startswith("/") or (len(name) > 1 and name[1] == ":") or ".." in p.parts:
        raise DataSourceError(
            f"refused: entry {info.filename!r} would be written outside the folder",
            path=zip_path,
            field=field,
        )
    parts = [x for x in p.parts if x not in ("", ".")]
    return PurePosixPath(*parts) if parts else None


def _check_entries(planned: list[ZipEntry], zip_path: Path, field: str | None) -> None:
    """Refuse entries that cannot be read as one tree.

    Encrypted entries (flag bit 0, APPNOTE 4.4.4), compression methods the standard
    library cannot read (Deflate64 is method 9), two entries for one path, and a path
    that is both a file and a folder.
    """
    files: set[str] = set()
    dirs: set[str] = set()

    def refuse(what: str) -> DataSourceError:
        return DataSourceError(what, path=zip_path, field=field)

    for info, rel in planned:
        if info.flag_bits & 0x1:
            raise refuse(
                f"entry {info.filename!r} is encrypted (password-protected);"
                " send the zip without a password"
            )
        if info.compress_type not in _METHODS:
            extra = " (Deflate64)" if info.compress_type == 9 else ""
            raise refuse(
                f"entry {info.filename!r} uses compression method {info.compress_type}{extra},"
                " which georeview cannot read; zip it again with ordinary deflate"
            )
        if rel is None:
            continue
        key = rel.as_posix()
        parents = {p.as_posix() for p in rel.parents if p.as_posix() != "."}
        if info.is_dir():
            if key in files:
                raise refuse(f"{key!r} is both a file and a folder")
            dirs.add(key)
        else:
            if key in files:
                raise refuse(f"two entries for {key!r}")
            if key in dirs:
                raise refuse(f"{key!r} is both a file and a folder")
            files.add(key)
        clash = parents & files
        if clash:
            raise refuse(f"{sorted(clash)[0]!r} is both a file and a folder")
        dirs |= parents
    clash = files & dirs
    if clash:
        raise refuse(f"{sorted(clash)[0]!r} is both a file and a folder")
