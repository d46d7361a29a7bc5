"""GeoParquet layers, read with pyarrow and geopandas, never through GDAL.

The GDAL of the pyogrio 0.13 wheel claims ``.parquet`` for its ADBC driver, which needs
``libduckdb.so`` and fails; pyarrow reads the file, its ``geo`` metadata names the
geometry column and the CRS, and only the row groups holding the rows asked for are read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import geopandas as gpd
from pyproj import CRS

from georeview.errors import DataSourceError

__all__ = ["PARQUET_SUFFIXES", "open_parquet", "parquet_bbox", "parquet_crs", "read_parquet"]

#: GeoParquet suffixes (read with pyarrow, never GDAL).
PARQUET_SUFFIXES = (".parquet", ".geoparquet")


def open_parquet(path: Path, label: str | None) -> tuple[Any, dict[str, Any]]:
    """Open a GeoParquet file: the ``pyarrow.parquet.ParquetFile`` and its ``geo`` metadata.

    Raises
    ------
    DataSourceError
        Not Parquet, or Parquet without the GeoParquet ``geo`` metadata.
    """
    from georeview._compat import require

    pq = require("pyarrow.parquet", what="reading GeoParquet")
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        raise DataSourceError(
            f"cannot open as Parquet ({' '.join(str(exc).split())[:200]})", path=path, field=label
        ) from None
    raw = (pf.schema_arrow.metadata or {}).get(b"geo")
    if not raw:
        raise DataSourceError(
            "is Parquet without GeoParquet 'geo' metadata (no geometry column is declared)",
            path=path,
            field=label,
        )
    return pf, json.loads(raw)


def _primary(geo: dict[str, Any]) -> dict[str, Any]:
    """The ``geo`` metadata of the primary geometry column."""
    column: dict[str, Any] = geo.get("columns", {}).get(geo.get("primary_column", "geometry"), {})
    return column


def parquet_crs(geo: dict[str, Any]) -> str | None:
    """The CRS of the primary geometry column (``None`` when stated as unknown)."""
    col = _primary(geo)
    if "crs" not in col:
        return "OGC:CRS84"  # the GeoParquet default when the key is absent
    crs = col["crs"]
    if crs is None:
        return None
    return CRS.from_user_input(crs).to_string()


def parquet_bbox(geo: dict[str, Any]) -> list[Any] | None:
    """The primary column's 4-value ``bbox`` when the metadata states one."""
    bbox = _primary(geo).get("bbox")
    return bbox if bbox and len(bbox) == 4 else None


def _row_groups(meta: Any, skip: int, stop: int) -> tuple[list[int], int]:
    """The row groups holding rows ``skip..stop``, and the row at which the first starts."""
    groups: list[int] = []
    first = offset = 0
    for i in range(meta.num_row_groups):  # row groups, a handful: not a loop over features
        rows = meta.row_group(i).num_rows
        if offset + rows > skip and offset < stop:
            if not groups:
                first = offset
            groups.append(i)
        offset += rows
    return groups, first


def read_parquet(path: Path, label: str | None, skip: int, count: int | None) -> gpd.GeoDataFrame:
    """Read rows ``skip`` to ``skip + count`` of a GeoParquet file (all when ``count`` is None).

    Raises
    ------
    DataSourceError
        The file cannot be opened or its features cannot be read.
    """
    from geopandas.io.arrow import _arrow_to_geopandas

    pf, geo = open_parquet(path, label)
    n = pf.metadata.num_rows
    stop = n if count is None else min(n, skip + count)
    # read only the row groups that hold rows skip..stop (a partition of a big file)
    groups, first = _row_groups(pf.metadata, skip, stop)
    try:
        if groups:
            table = pf.read_row_groups(groups).slice(skip - first, stop - skip)
        else:
            table = pf.schema_arrow.empty_table()
        return _arrow_to_geopandas(table, geo)
    except Exception as exc:
        raise DataSourceError(
            f"cannot read GeoParquet features ({' '.join(str(exc).split())[:200]})",
            path=path,
            field=label,
        ) from None
