"""One reader for every vector input: submissions, site-map layers, reference layers, parcels.

Formats, by what the path is:

- GeoPackage, shapefile, GeoJSON, FlatGeobuf and File Geodatabase folders (``*.gdb``)
  through pyogrio/GDAL;
- a ``.zip`` (zipped shapefile or zipped File Geodatabase) through GDAL's ``/vsizip/``,
  after its member count and uncompressed size are checked against the zip limits;
- KML through GDAL, and KMZ through GDAL given the KML inside it once georeview has
  checked the zip (:mod:`georeview.load.kml`); always EPSG:4326;
- GeoParquet (``.parquet``, ``.geoparquet``) through pyarrow and geopandas, never through
  GDAL (:mod:`georeview.load.geoparquet`);
- CSV with a WKT column or x/y columns, through pandas; its CRS is in a ``.prj`` beside
  it (GDAL's GeoCSV convention) or named by the caller (``--crs``, ``crs =`` in
  layers.toml), and the two must agree (:mod:`georeview.load.csv_layer`).

Every format gives the same GeoDataFrame for the same features (same columns, same
coordinates), so a layer gives the same numbers whatever it is stored in. Each failure is
a :mod:`georeview.errors` error that names the file and the field.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import shapely
from pyproj import CRS

from georeview.errors import CRSError, DataSourceError
from georeview.load.crs import bbox_into
from georeview.load.csv_layer import csv_crs, csv_geometry_columns, csv_rows, read_csv
from georeview.load.files import (
    QuietWarnings,
    check_exists,
    check_gdal_path,
    check_limit,
    check_shapefile_parts,
    check_zip,
    driver_error,
)
from georeview.load.geoparquet import (
    PARQUET_SUFFIXES,
    open_parquet,
    parquet_bbox,
    parquet_crs,
    read_parquet,
)
from georeview.load.kml import KML_SUFFIXES, gdal_source

__all__ = [
    "PARQUET_SUFFIXES",
    "VECTOR_SUFFIXES",
    "VectorInfo",
    "format_of",
    "layer_names",
    "read_rows",
    "read_vector",
    "resolve_layer",
    "vector_info",
]

#: Every vector suffix accepted, for inputs named by path (``.gdb`` is a folder).
VECTOR_SUFFIXES = (
    ".geojson",
    ".json",
    ".shp",
    ".gpkg",
    ".fgb",
    ".gdb",
    ".zip",
    *KML_SUFFIXES,
    *PARQUET_SUFFIXES,
    ".csv",
)


@dataclass(frozen=True)
class VectorInfo:
    """What a vector layer holds, read without reading its features."""

    features: int
    crs: str | None
    fields: tuple[str, ...]
    #: ``(minx, miny, maxx, maxy)`` in ``crs`` when the format stores it (else ``None``).
    bounds: tuple[float, float, float, float] | None = None


def format_of(path: Path | str) -> str:
    """``"parquet"``, ``"csv"`` or ``"gdal"``: which reader a path goes through."""
    suffix = Path(path).suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    if suffix == ".csv":
        return "csv"
    return "gdal"


def _gdal_checks(path: Path, label: str | None) -> None:
    """Checks made before GDAL opens a file (sidecars, zip limits)."""
    check_gdal_path(path, label)
    check_shapefile_parts(path, label)
    if path.suffix.lower() == ".zip":
        check_zip(path, label)


def layer_names(path: Path | str, label: str | None = None) -> list[str | None]:
    """Names of the layers with geometry in a file (``[None]`` for single-layer formats)."""
    import pyogrio

    path = Path(path)
    check_exists(path, label)
    if format_of(path) != "gdal":
        return [None]
    _gdal_checks(path, label)
    try:
        layers = pyogrio.list_layers(gdal_source(path, label))
    except Exception as exc:  # pyogrio raises several driver-specific classes
        raise driver_error(exc, "cannot open as a vector layer", path, label) from None
    with_geom = [str(name) for name, gtype in layers if gtype is not None]
    return list(with_geom) or [None]


def _pick_layer(path: Path, layer: str | None, label: str | None) -> str | None:
    """The layer to read: the one named, or the only one; several unnamed is refused."""
    names = layer_names(path, label)
    if layer is not None:
        if names != [None] and layer not in names:
            raise DataSourceError(
                f"has no layer {layer!r}; its layers are {', '.join(map(str, names))}",
                path=path,
                field=label,
            )
        return layer if names != [None] or format_of(path) == "gdal" else None
    if len(names) > 1:
        raise DataSourceError(
            f"has {len(names)} layers ({', '.join(map(str, names))}); name the one to read"
            " (--layer, or layer = in layers.toml)",
            path=path,
            field=label,
        )
    return names[0]


def vector_info(
    path: Path | str,
    *,
    layer: str | None = None,
    label: str | None = None,
    crs: Any = None,
    force_count: bool = False,
) -> VectorInfo:
    """Count the features of a layer and read its CRS and field names.

    Parameters
    ----------
    path : path
        Any format of :data:`VECTOR_SUFFIXES`.
    layer : str, optional
        The layer of a multi-layer file (a file with several and none named is refused).
    label : str, optional
        The field or option that named the file (for messages).
    crs : optional
        The CRS of a CSV (needed there unless a ``.prj`` beside it gives it, and then
        it must agree; ignored for formats that state theirs).
    force_count : bool
        Count features when the driver does not store the count (GeoJSON).
    """
    import pyogrio

    path = Path(path)
    check_exists(path, label)
    kind = format_of(path)
    if kind == "parquet":
        pf, geo = open_parquet(path, label)
        names = tuple(f for f in pf.schema_arrow.names if f != geo.get("primary_column"))
        bbox = parquet_bbox(geo)
        bounds = None if bbox is None else _bounds4(bbox)
        return VectorInfo(pf.metadata.num_rows, parquet_crs(geo), names, bounds)
    if kind == "csv":
        n, header = csv_rows(path, label)
        geom = csv_geometry_columns(header) or ()
        found = csv_crs(path, crs, label)
        return VectorInfo(n, found, tuple(c for c in header if c not in geom))
    layer = _pick_layer(path, layer, label)
    try:
        info = pyogrio.read_info(
            gdal_source(path, label), layer=layer, force_feature_count=force_count
        )
    except Exception as exc:
        raise driver_error(exc, "cannot open as a vector layer", path, label) from None
    bounds = info.get("total_bounds")
    return VectorInfo(
        int(info.get("features", 0)),
        info.get("crs"),
        tuple(map(str, info.get("fields", ()))),
        None if bounds is None else _bounds4(bounds),
    )


def _bounds4(values: Sequence[Any]) -> tuple[float, float, float, float]:
    """``(minx, miny, maxx, maxy)`` as floats, from a 4-value bbox (list or array)."""
    minx, miny, maxx, maxy = map(float, values)
    return minx, miny, maxx, maxy


def _check_readable(
    info: VectorInfo, path: Path, label: str | None, max_features: int, limit_name: str
) -> str:
    """Refuse a layer over the feature limit or without a CRS; return its CRS."""
    check_limit(
        info.features,
        max_features,
        "features",
        limit_name,
        path=path,
        field=label,
    )
    if info.crs is None:
        why = {
            "csv": "a CSV states no CRS: put its .prj beside it, or name it (--crs, or"
            " crs = in layers.toml)",
            "parquet": "its GeoParquet metadata says the CRS is unknown",
        }.get(format_of(path), "for a shapefile, the .prj file is missing")
        raise CRSError(f"has no coordinate reference system ({why})", path=path, field=label)
    return info.crs


def read_vector(
    path: Path | str,
    *,
    layer: str | None = None,
    label: str | None = None,
    bbox: tuple[float, float, float, float] | None = None,
    bbox_crs: CRS | None = None,
    where: str | None = None,
    crs: Any = None,
    skip: int = 0,
    count: int | None = None,
    max_features: int | None = None,
    limit_name: str = "GEOREVIEW_MAX_LAYER_FEATURES",
) -> gpd.GeoDataFrame:
    """Read a vector layer of any supported format, in its own CRS.

    Parameters
    ----------
    path : path
        Any format of :data:`VECTOR_SUFFIXES`.
    layer : str, optional
        The layer of a multi-layer file; a file with several layers and none named is
        refused with their names.
    label : str, optional
        The field or option that named the file (for messages).
    bbox : tuple of float, optional
        Read only features intersecting ``(minx, miny, maxx, maxy)``, given in
        ``bbox_crs`` (default: the layer's CRS).
    where : str, optional
        Attribute filter, an SQL ``WHERE`` clause (``MCD_NAME = 'Deerfield' AND
        CTV = 'V'``) in GDAL's SQLite dialect for every format (text comparisons are
        case-sensitive). GeoParquet and CSV rows are filtered by the same SQL, in memory.
    crs : optional
        The CRS of a CSV file (or from the ``.prj`` beside it).
    skip, count : int
        Read rows ``skip`` to ``skip + count`` only (input order; a partition).
    max_features : int, optional
        Refuse a layer with more features than this, before reading any (default
        ``limits().max_layer_features``).
    limit_name : str
        The environment variable that sets ``max_features``, named in the refusal so that
        raising it as told lifts the limit (``GEOREVIEW_MAX_SUBMISSION_FEATURES`` for a
        submission's files).

    Raises
    ------
    DataSourceError
        A missing or unreadable file, several layers and none named, a CSV without
        geometry columns, a bad ``where``.
    CRSError
        The layer states no CRS (a shapefile without .prj, a CSV without ``crs`` or
        .prj), or a CSV's ``crs`` and .prj disagree.
    LimitError
        More features than ``max_features``; a zip over the zip limits.
    """
    from georeview.config import limits

    path = Path(path)
    info = vector_info(path, layer=layer, label=label, crs=crs)
    if max_features is None:
        max_features = limits().max_layer_features
    layer_crs = _check_readable(info, path, label, max_features, limit_name)
    read_bbox = bbox
    if bbox is not None and bbox_crs is not None:
        read_bbox = bbox_into(bbox, bbox_crs, layer_crs, path)
    name = resolve_layer(path, layer, label)
    return _read_layer(path, name, label, layer_crs, skip, count, where=where, bbox=read_bbox)


def resolve_layer(path: Path | str, layer: str | None, label: str | None = None) -> str | None:
    """The layer :func:`read_vector` reads from ``path`` (``layer`` checked, or the only one).

    What :func:`read_rows` is given, so that reading a file in many slices lists its
    layers once rather than once per slice.
    """
    path = Path(path)
    return _pick_layer(path, layer, label) if format_of(path) == "gdal" else layer


def read_rows(
    path: Path | str,
    *,
    layer: str | None,
    layer_crs: str,
    skip: int,
    count: int,
    label: str | None = None,
) -> gpd.GeoDataFrame:
    """Read rows ``skip`` to ``skip + count`` of a layer already inspected, in input order.

    The partition reader: the checks of :func:`read_vector` (the file opens, the layer
    is named or the only one, it has a CRS, its feature count) are made once by the
    caller, through :func:`vector_info` and :func:`resolve_layer`, rather than once per
    slice, so each slice costs the read alone. It gives the rows ``read_vector(path,
    skip=skip, count=count)`` gives.

    Parameters
    ----------
    path : path
        Any format of :data:`VECTOR_SUFFIXES`.
    layer : str or None
        The layer as :func:`resolve_layer` returned it.
    layer_crs : str
        The layer's CRS (:attr:`VectorInfo.crs`; a CSV's as given).
    skip, count : int
        The slice.
    label : str, optional
        The field or option that named the file (for messages).
    """
    return _read_layer(Path(path), layer, label, layer_crs, skip, count)


def _read_layer(
    path: Path,
    name: str | None,
    label: str | None,
    layer_crs: str,
    skip: int,
    count: int | None,
    *,
    where: str | None = None,
    bbox: tuple[float, float, float, float] | None = None,
) -> gpd.GeoDataFrame:
    """Read a layer whose checks are made, by format.

    GDAL filters ``where`` and ``bbox`` as it reads; the Parquet and CSV readers' rows are
    filtered after.
    """
    kind = format_of(path)
    if kind == "gdal":
        kw = {"bbox": bbox, "skip_features": skip, "max_features": count}
        return _read_gdal(path, name, label, where, layer_crs, kw)
    if kind == "parquet":
        gdf = read_parquet(path, label, skip, count)
    else:
        gdf = read_csv(path, label, layer_crs, skip, count)
    if bbox is not None and len(gdf):
        gdf = gdf[shapely.intersects(gdf.geometry.values, shapely.box(*bbox))]
    if where is not None:
        gdf = _filter_where(gdf, where, path, label)
    return gdf


def _read_gdal(
    path: Path,
    name: str | None,
    label: str | None,
    where: str | None,
    layer_crs: str,
    options: dict[str, Any],
) -> gpd.GeoDataFrame:
    """Read layer ``name`` through pyogrio, letting a geometry GEOS cannot build be empty."""
    import pyogrio

    kw = {"layer": None if where else name, **options, **_where_sql(name, where)}
    src = gdal_source(path, label)
    try:
        # GDAL's warnings (a polygon of many rings is slow to assemble, a NaN
        # coordinate) become debug lines: what is wrong is refused after the read
        with QuietWarnings(path):
            return pyogrio.read_dataframe(src, **kw)
    except Exception as exc:
        first = exc
    # One geometry GEOS cannot build (a ring of two points) fails the whole read:
    # read the attributes and the raw WKB apart and let that feature alone be empty
    # (callers refuse it, or make it an error row)
    try:
        with QuietWarnings(path):
            frame = pyogrio.read_dataframe(src, read_geometry=False, **kw)
            _, _, wkb, _ = pyogrio.raw.read(src, columns=[], **kw)
        geoms = shapely.from_wkb(wkb, on_invalid="ignore")
    except Exception:
        what = "cannot read features" if where is None else f"cannot apply where {where!r}"
        raise driver_error(first, what, path, label) from None
    return gpd.GeoDataFrame(frame, geometry=np.asarray(geoms, dtype=object), crs=layer_crs)


def _filter_where(
    gdf: gpd.GeoDataFrame, where: str, path: Path, label: str | None
) -> gpd.GeoDataFrame:
    """Apply a WHERE clause to an in-memory frame (GeoParquet, CSV).

    The rows go through an in-memory FlatGeobuf queried in GDAL's SQLite dialect, so
    the clause means exactly what it means for the GDAL formats, not a re-implementation.
    """
    import pyogrio

    if len(gdf) == 0:
        return gdf
    key = "georeview_row"
    tagged = gdf.assign(**{key: np.arange(len(gdf), dtype=np.int64)})
    plain = tagged[[key, *[c for c in gdf.columns if c != gdf.geometry.name]]]
    buf = io.BytesIO()
    try:
        pyogrio.write_dataframe(
            gpd.GeoDataFrame(plain, geometry=gdf.geometry.values, crs=gdf.crs),
            buf,
            driver="FlatGeobuf",
            layer="rows",
            layer_options={"SPATIAL_INDEX": "NO"},
        )
        kept = pyogrio.read_dataframe(
            buf.getvalue(), read_geometry=False, **_where_sql("rows", where, key)
        )
    except Exception as exc:
        raise driver_error(exc, f"cannot apply where {where!r}", path, label) from None
    return gdf.iloc[np.sort(kept[key].to_numpy(dtype=np.int64))]


def _where_sql(layer: str | None, where: str | None, columns: str = "*") -> dict[str, Any]:
    """The pyogrio arguments applying ``where`` in GDAL's SQLite dialect (any driver).

    One dialect for every format: OGR SQL compares text without regard to case
    (``'Deerfield'`` matches the Town of ``DEERFIELD``), SQLite does not, and a
    GeoPackage is always queried in SQLite.
    """
    if where is None:
        return {}
    return {"sql": f'SELECT {columns} FROM "{layer}" WHERE {where}', "sql_dialect": "SQLITE"}
