"""Checks made on a file before GDAL (or pyarrow, or pandas) opens it, and GDAL's failures.

What is refused here is refused by path and size alone: a path GDAL would read as another,
a link out of a submission, a FIFO or a device, a shapefile missing a part or whose parts
disagree, a zip over the zip limits. GDAL's exceptions become one
:class:`~georeview.errors.DataSourceError` naming the file; its warnings become debug lines.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import warnings
import zipfile
from pathlib import Path
from types import TracebackType

from georeview.errors import DataSourceError, LimitError

__all__ = [
    "QuietWarnings",
    "check_exists",
    "check_gdal_path",
    "check_limit",
    "check_regular",
    "check_shapefile_counts",
    "check_shapefile_parts",
    "check_zip",
    "driver_error",
    "sidecar",
]

log = logging.getLogger(__name__)

#: Characters GDAL drops from a file path before opening it (measured with GDAL 3.x
#: through pyogrio: "a/\r/site.geojson" opens "a/site.geojson"), so the file read
#: would not be the one checked.
_GDAL_STRIPPED = re.compile(r"[\t\n\v\f\r]")
#: The name pyogrio gives bytes it hands GDAL (``/vsimem/pyogrio_<hex>``).
_IN_MEMORY = re.compile(r"/vsimem/pyogrio_\w+")


class QuietWarnings:
    """Turn GDAL/shapely warnings while reading into debug log lines, not stderr noise.

    A NaN coordinate or an unclosed ring makes shapely and pyogrio warn; what is wrong
    is then refused (or repaired and reported) by the checks after the read, so the raw
    Python warning would only repeat it, badly.
    """

    def __init__(self, path: object):
        self.path = path

    def __enter__(self) -> None:
        self._cm = warnings.catch_warnings(record=True)
        self._caught = self._cm.__enter__()
        warnings.simplefilter("always")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._cm.__exit__(exc_type, exc, tb)
        for w in self._caught:
            log.debug("%s: %s", self.path, w.message)


def check_limit(
    count: int, limit: int, what: str, env: str, *, path: object, field: str | None
) -> None:
    """Refuse ``count`` things (features, cells, zip members) over ``limit``.

    Raises
    ------
    LimitError
        ``"<count> <what> exceed the limit of <limit> (<env>)"``, naming the file.
    """
    if count > limit:
        raise LimitError(
            f"{count:,} {what} exceed the limit of {limit:,} ({env})", path=path, field=field
        )


def check_exists(path: Path, label: str | None) -> None:
    """Refuse a missing path, and a folder that is not a File Geodatabase (``*.gdb``)."""
    if not path.exists():
        raise DataSourceError("file not found", path=path, field=label)
    if path.is_dir() and path.suffix.lower() != ".gdb":
        raise DataSourceError(
            "is a folder; give a file (a File Geodatabase folder ends in .gdb)",
            path=path,
            field=label,
        )


def check_zip(path: Path, label: str | None) -> None:
    """Refuse a zip with more members or more uncompressed bytes than the zip limits."""
    from georeview.config import limits

    lim = limits()
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataSourceError(f"not a readable zip file ({exc})", path=path, field=label) from None
    check_limit(
        len(members),
        lim.max_zip_members,
        "zip members",
        "GEOREVIEW_MAX_ZIP_MEMBERS",
        path=path,
        field=label,
    )
    check_limit(
        sum(m.file_size for m in members),
        lim.max_zip_bytes,
        "uncompressed bytes",
        "GEOREVIEW_MAX_ZIP_BYTES",
        path=path,
        field=label,
    )


def check_gdal_path(path: Path, label: str | None) -> None:
    """Refuse a path GDAL would read as another path (one holding a tab or line break).

    Raises
    ------
    DataSourceError
        Naming the file, when its path holds such a character.
    """
    if _GDAL_STRIPPED.search(str(path)):
        raise DataSourceError(
            "the path holds a tab or line break, which GDAL drops (it would read another"
            " file); rename the file or folder",
            path=repr(str(path)),
            field=label,
        )


def sidecar(path: Path, side: str) -> Path | None:
    """The shapefile part ``side`` (``".shx"``) next to ``path``, either case, if present."""
    for cand in (path.with_suffix(side), path.with_suffix(side.upper())):
        if cand.exists():
            return cand
    return None


def check_shapefile_parts(path: Path, label: str | None) -> None:
    """Refuse a shapefile without its .shx or .dbf before GDAL tries to open it."""
    if path.suffix.lower() != ".shp":
        return
    for side in (".shx", ".dbf"):
        if sidecar(path, side) is None:
            raise DataSourceError(
                f"shapefile is missing its {side} file (a shapefile is .shp + .shx + .dbf + .prj)",
                path=path,
                field=label,
            )


def check_shapefile_counts(path: Path, label: str | None) -> None:
    """Refuse a shapefile whose .shp, .shx and .dbf do not hold the same number of records.

    GDAL reads such a file without complaint, pairing shapes with attribute rows up to
    the shorter part and dropping the rest: a site read as a third of itself. The
    counts come from the headers (ESRI Shapefile Technical Description, 1998: the
    .shx is a 100-byte header and 8 bytes per record; dBASE: record count at byte 4).
    """
    if path.suffix.lower() != ".shp":
        return
    shx = sidecar(path, ".shx")
    dbf = sidecar(path, ".dbf")
    if shx is None or dbf is None:
        return
    try:
        shp_words = int.from_bytes(path.read_bytes()[24:28], "big") if path.stat().st_size else 0
        shp_size = path.stat().st_size
        shx_size = shx.stat().st_size
        with open(dbf, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise DataSourceError(f"cannot read ({exc.strerror})", path=path, field=label) from None
    n_shx = (shx_size - 100) // 8
    n_dbf = int.from_bytes(head[4:8], "little") if len(head) == 8 else -1
    if shp_words * 2 != shp_size:
        raise DataSourceError(
            f"the .shp header says {shp_words * 2:,} bytes but the file has {shp_size:,}"
            " (truncated or damaged): export the shapefile again",
            path=path,
            field=label,
        )
    if n_shx != n_dbf:
        raise DataSourceError(
            f"the .shp/.shx hold {n_shx:,} shapes but the .dbf holds {n_dbf:,} attribute"
            " records: the parts do not belong together; export the shapefile again",
            path=path,
            field=label,
        )


def _file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def check_regular(path: Path, folder: Path | None, *, field: str | None = None) -> None:
    """Refuse ``path`` unless it is a regular file inside ``folder`` once links are resolved.

    Called before a submission's file (or a shapefile's sidecar) is opened: a symbolic
    link out of the submission, a FIFO (opening it blocks for ever) or a device is
    refused with the file named.

    Raises
    ------
    DataSourceError
        When it is not a regular file, or it resolves outside ``folder``.
    """
    check_gdal_path(path, field)
    real = Path(os.path.realpath(path))
    if folder is not None and not real.is_relative_to(Path(os.path.realpath(folder))):
        raise DataSourceError(
            "is a link that points outside the submission folder", path=path, field=field
        )
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        raise DataSourceError(f"cannot read ({exc.strerror})", path=path, field=field) from None
    if not stat.S_ISREG(mode):
        raise DataSourceError(
            f"is {_file_kind(mode)}, not a regular file; a submission holds only regular files",
            path=path,
            field=field,
        )


def driver_error(exc: Exception, what: str, path: Path, label: str | None) -> DataSourceError:
    """Turn a pyogrio/GDAL failure into a DataSourceError naming the file."""
    if isinstance(exc, UnicodeDecodeError):
        return DataSourceError(
            f"attribute text is not UTF-8 (byte 0x{exc.object[exc.start]:02x} at {exc.start});"
            " GeoJSON must be UTF-8 (RFC 7946 section 11), a shapefile names its encoding in a"
            " .cpg file: export the file again as UTF-8",
            path=path,
            field=label,
        )
    text = " ".join(str(exc).split())
    # a KMZ's KML is given to GDAL in memory: name the file, not the in-memory copy
    text = _IN_MEMORY.sub(path.name, text)
    return DataSourceError(f"{what} ({text[:200]})", path=path, field=label)
