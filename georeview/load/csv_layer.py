"""CSV layers: a WKT column or x/y columns, read with pandas; the CRS from a .prj or the caller.

Text columns stay text (a parcel id such as ``"0123"`` keeps its leading zero). A CSV
states no CRS itself: it comes from a ``.prj`` beside it (``site.csv`` + ``site.prj``,
the GeoCSV convention GDAL's CSV driver reads), or from ``--crs`` or ``crs =`` in
layers.toml; given both, they must agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS
from pyproj.exceptions import CRSError as PyprojCRSError

from georeview.errors import CRSError, DataSourceError
from georeview.load.files import check_regular, sidecar

__all__ = [
    "CSV_WKT_COLUMNS",
    "CSV_XY_COLUMNS",
    "csv_crs",
    "csv_geometry_columns",
    "csv_prj",
    "csv_rows",
    "read_csv",
]

#: Column names taken as WKT geometry in a CSV (compared case-insensitively).
CSV_WKT_COLUMNS = ("wkt", "geometry", "geom", "the_geom", "wkt_geom", "shape")
#: Coordinate column pairs taken as point geometry in a CSV (case-insensitive).
CSV_XY_COLUMNS = (
    ("x", "y"),
    ("lon", "lat"),
    ("longitude", "latitude"),
    ("point_x", "point_y"),
    ("easting", "northing"),
)


def csv_geometry_columns(columns: Sequence[str]) -> tuple[str, ...] | None:
    """The WKT column (one name) or the x/y columns (two) of a CSV header, if any."""
    lower = {c.lower(): c for c in columns}
    for name in CSV_WKT_COLUMNS:
        if name in lower:
            return (lower[name],)
    for x, y in CSV_XY_COLUMNS:
        if x in lower and y in lower:
            return (lower[x], lower[y])
    return None


def _read_frame(path: Path, label: str | None, skip: int, count: int | None) -> pd.DataFrame:
    """Rows ``skip`` to ``skip + count`` of a CSV, every column as text."""
    try:
        # text columns stay text: parcel ids such as "0123" keep their leading zero
        return pd.read_csv(
            path,
            dtype=str,
            keep_default_na=False,
            na_values=[""],
            skiprows=range(1, skip + 1) if skip else None,
            nrows=count,
            encoding="utf-8-sig",
        )
    except UnicodeDecodeError as exc:
        raise DataSourceError(
            f"not UTF-8 text (byte {exc.start}); save the CSV as UTF-8", path=path, field=label
        ) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, OSError) as exc:
        raise DataSourceError(f"cannot read as CSV ({exc})", path=path, field=label) from None


def _wkt_geometries(
    frame: pd.DataFrame, column: str, skip: int, path: Path, label: str | None
) -> np.ndarray:
    """Parse a WKT column, refusing the first row that is not WKT (a blank is no geometry)."""
    text = frame[column].to_numpy(dtype=object)
    geoms = shapely.from_wkt(text, on_invalid="ignore")
    bad = np.flatnonzero(pd.isna(geoms) & ~pd.isna(text))
    if bad.size:
        raise DataSourceError(
            f"row {skip + int(bad[0]) + 1}: {column} is not WKT ({str(text[bad[0]])[:40]!r})",
            path=path,
            field=label,
        )
    return np.asarray(geoms, dtype=object)


def _xy_points(
    frame: pd.DataFrame, columns: tuple[str, ...], skip: int, path: Path, label: str | None
) -> np.ndarray:
    """Points from x/y columns, refusing the first row whose coordinates are not numbers."""
    xy = frame[list(columns)].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(xy).all(axis=1))
    if bad.size:
        raise DataSourceError(
            f"row {skip + int(bad[0]) + 1}: {'/'.join(columns)} are not numbers",
            path=path,
            field=label,
        )
    return np.asarray(shapely.points(xy), dtype=object)


def read_csv(
    path: Path, label: str | None, crs: Any, skip: int, count: int | None
) -> gpd.GeoDataFrame:
    """Read rows ``skip`` to ``skip + count`` of a CSV layer in ``crs``.

    Raises
    ------
    DataSourceError
        Not UTF-8, not CSV, no geometry columns, or a row whose geometry does not parse.
    """
    frame = _read_frame(path, label, skip, count)
    geom_cols = csv_geometry_columns(frame.columns)
    if geom_cols is None:
        raise DataSourceError(
            "a CSV needs a WKT column (" + ", ".join(CSV_WKT_COLUMNS) + ") or x/y columns"
            f" ({', '.join('/'.join(p) for p in CSV_XY_COLUMNS)}); its columns are"
            f" {', '.join(frame.columns)}",
            path=path,
            field=label,
        )
    if len(geom_cols) == 1:
        geoms = _wkt_geometries(frame, geom_cols[0], skip, path, label)
    else:
        geoms = _xy_points(frame, geom_cols, skip, path, label)
    return gpd.GeoDataFrame(frame.drop(columns=list(geom_cols)), geometry=geoms, crs=crs)


def csv_rows(path: Path, label: str | None) -> tuple[int, tuple[str, ...]]:
    """The number of data rows of a CSV and its header."""
    try:
        frame = pd.read_csv(path, dtype=str, usecols=[0], encoding="utf-8-sig")
        header = pd.read_csv(path, dtype=str, nrows=0, encoding="utf-8-sig").columns
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
        raise DataSourceError(f"cannot read as CSV ({exc})", path=path, field=label) from None
    return len(frame), tuple(map(str, header))


#: Largest .prj read: one CRS in WKT is a few kilobytes (EPSG:3071 in WKT2 is 2.1 KB).
_MAX_PRJ_BYTES = 64 * 1024


def csv_prj(path: Path) -> Path | None:
    """The ``.prj`` beside a CSV (``site.prj`` for ``site.csv``, either case), if any."""
    return sidecar(path, ".prj")


def _prj_crs(prj: Path, label: str | None) -> CRS:
    """The CRS a .prj states (WKT, as GDAL writes and reads it).

    Raises
    ------
    CRSError
        Naming the .prj: not text, too large for a .prj, or not a CRS.
    """
    check_regular(prj, None, field=label)
    try:
        with open(prj, "rb") as fh:
            raw = fh.read(_MAX_PRJ_BYTES + 1)
    except OSError as exc:
        raise CRSError(f"cannot read ({exc.strerror})", path=prj, field=label) from None
    if len(raw) > _MAX_PRJ_BYTES:
        raise CRSError(
            f"more than {_MAX_PRJ_BYTES:,} bytes: not a .prj (one CRS in WKT)",
            path=prj,
            field=label,
        )
    try:
        text = raw.decode("utf-8-sig").strip()
        if not text:
            raise ValueError("the file is empty")
        return CRS.from_user_input(text)
    except (UnicodeDecodeError, ValueError, PyprojCRSError) as exc:
        why = " ".join(str(exc).split())[:160]
        raise CRSError(
            f"not a readable CRS ({why}); a .prj holds the CRS as WKT, as a shapefile's does",
            path=prj,
            field=label,
        ) from None


def csv_crs(path: Path, crs: Any, label: str | None) -> str | None:
    """The CRS of a CSV layer: from the .prj beside it, from ``crs``, or both agreeing.

    Parameters
    ----------
    path : Path
        The CSV file.
    crs : optional
        The CRS the caller names (``--crs``, ``crs =`` in layers.toml), or ``None``.
    label : str, optional
        The field or option that named the file (for messages).

    Returns
    -------
    str or None
        The CRS (``None``: neither gives one).

    Raises
    ------
    CRSError
        ``crs`` is not a CRS; the .prj is malformed (naming the .prj); the .prj and
        ``crs`` name different CRSs (rather than choosing one).
    """
    given = None
    if crs is not None:
        try:
            given = CRS.from_user_input(crs)
        except PyprojCRSError as exc:
            raise CRSError(f"not a CRS: {crs!r} ({exc})", path=path, field="--crs") from None
    prj = csv_prj(path)
    if prj is None:
        return None if given is None else given.to_string()
    stated = _prj_crs(prj, label)
    if given is not None and not stated.equals(given, ignore_axis_order=True):
        raise CRSError(
            f"its {prj.name} says {_crs_name(stated)} but the CRS given (--crs, or crs = in"
            f" layers.toml) is {_crs_name(given)}: remove one, or make them agree",
            path=path,
            field=label,
        )
    return stated.to_wkt() if given is None else given.to_string()


def _crs_name(crs: CRS) -> str:
    """``EPSG:3071 (NAD83(HARN) / Wisconsin Transverse Mercator)``, or the name alone."""
    code = crs.to_epsg(min_confidence=90)
    return f"EPSG:{code} ({crs.name})" if code else crs.name
