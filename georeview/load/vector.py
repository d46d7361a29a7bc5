"""One reader for every vector input: submissions, site-map layers, reference layers, parcels.

Formats, by what the path is:

- GeoPackage, shapefile, GeoJSON, FlatGeobuf and File Geodatabase folders (``*.gdb``)
  through pyogrio/GDAL;
- a ``.zip`` (zipped shapefile or zipped File Geodatabase) through GDAL's ``/vsizip/``,
  after its member count and uncompressed size are checked against the zip limits;
- GeoParquet (``.parquet``, ``.geoparquet``) through pyarrow and geopandas, never through
  GDAL: the GDAL of the pyogrio 0.13 wheel claims ``.parquet`` for its ADBC driver, which
  needs ``libduckdb.so`` and fails;
- CSV with a WKT column or x/y columns, through pandas; a CSV states no CRS, so the
  caller names it (``--crs``, ``crs =`` in layers.toml).

Every format gives the same GeoDataFrame for the same features (same columns, same
coordinates), so a layer gives the same numbers whatever it is stored in. Each failure is
a :mod:`georeview.errors` error that names the file and the field.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS
from pyproj.exceptions import CRSError as PyprojCRSError

from georeview.errors import CRSError, DataSourceError, LimitError

__all__ = [
    "PARQUET_SUFFIXES",
    "VECTOR_SUFFIXES",
    "VectorInfo",
    "format_of",
    "layer_names",
    "read_vector",
    "vector_info",
]

#: GeoParquet suffixes (read with pyarrow, never GDAL).
PARQUET_SUFFIXES = (".parquet", ".geoparquet")
#: Every vector suffix accepted, for inputs named by path (``.gdb`` is a folder).
VECTOR_SUFFIXES = (
    ".geojson",
    ".json",
    ".shp",
    ".gpkg",
    ".fgb",
    ".gdb",
    ".zip",
    *PARQUET_SUFFIXES,
    ".csv",
)
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


def _check_exists(path: Path, label: str | None) -> None:
    if not path.exists():
        raise DataSourceError("file not found", path=path, field=label)
    if path.is_dir() and path.suffix.lower() != ".gdb":
        raise DataSourceError(
            "is a folder; give a file (a File Geodatabase folder ends in .gdb)",
            path=path,
            field=label,
        )


def _check_zip(path: Path, label: str | None) -> None:
    """Refuse a zip with more members or more uncompressed bytes than the zip limits."""
    from georeview.config import limits

    lim = limits()
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataSourceError(f"not a readable zip file ({exc})", path=path, field=label) from None
    if len(members) > lim.max_zip_members:
        raise LimitError(
            f"{len(members):,} zip members exceed the limit of {lim.max_zip_members:,}"
            " (GEOREVIEW_MAX_ZIP_MEMBERS)",
            path=path,
            field=label,
        )
    size = sum(m.file_size for m in members)
    if size > lim.max_zip_bytes:
        raise LimitError(
            f"{size:,} uncompressed bytes exceed the limit of {lim.max_zip_bytes:,}"
            " (GEOREVIEW_MAX_ZIP_BYTES)",
            path=path,
            field=label,
        )


def _gdal_checks(path: Path, label: str | None) -> None:
    """Checks made before GDAL opens a file (sidecars, zip limits)."""
    from georeview.load import _check_shapefile_parts, check_gdal_path

    check_gdal_path(path, label)
    _check_shapefile_parts(path, label)
    if path.suffix.lower() == ".zip":
        _check_zip(path, label)


def _quiet_warnings(path: Path) -> Any:
    from georeview.load import _quiet_warnings as quiet

    return quiet(path)


def _driver_error(exc: Exception, what: str, path: Path, label: str | None) -> DataSourceError:
    from georeview.load import _driver_error as turn

    return turn(exc, what, path, label)


def layer_names(path: Path | str, label: str | None = None) -> list[str | None]:
    """Names of the layers with geometry in a file (``[None]`` for single-layer formats)."""
    import pyogrio

    path = Path(path)
    _check_exists(path, label)
    if format_of(path) != "gdal":
        return [None]
    _gdal_checks(path, label)
    try:
        layers = pyogrio.list_layers(path)
    except Exception as exc:  # pyogrio raises several driver-specific classes
        raise _driver_error(exc, "cannot open as a vector layer", path, label) from None
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


# --------------------------------------------------------------------------- GeoParquet


def _parquet(path: Path, label: str | None) -> tuple[Any, dict[str, Any]]:
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


def _parquet_crs(geo: dict[str, Any]) -> str | None:
    col = geo.get("columns", {}).get(geo.get("primary_column", "geometry"), {})
    if "crs" not in col:
        return "OGC:CRS84"  # the GeoParquet default when the key is absent
    crs = col["crs"]
    if crs is None:
        return None
    return CRS.from_user_input(crs).to_string()


def _read_parquet(path: Path, label: str | None, skip: int, count: int | None) -> gpd.GeoDataFrame:
    from geopandas.io.arrow import _arrow_to_geopandas

    pf, geo = _parquet(path, label)
    meta = pf.metadata
    n = meta.num_rows
    stop = n if count is None else min(n, skip + count)
    # read only the row groups that hold rows skip..stop (a partition of a big file)
    groups: list[int] = []
    first = offset = 0  # first: the row at which the first of *groups* starts
    for i in range(meta.num_row_groups):
        rows = meta.row_group(i).num_rows
        if offset + rows > skip and offset < stop:
            if not groups:
                first = offset
            groups.append(i)
        offset += rows
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


# --------------------------------------------------------------------------- CSV


def _csv_geometry_columns(columns: Sequence[str]) -> tuple[str, ...] | None:
    lower = {c.lower(): c for c in columns}
    for name in CSV_WKT_COLUMNS:
        if name in lower:
            return (lower[name],)
    for x, y in CSV_XY_COLUMNS:
        if x in lower and y in lower:
            return (lower[x], lower[y])
    return None


def _read_csv(
    path: Path, label: str | None, crs: Any, skip: int, count: int | None
) -> gpd.GeoDataFrame:
    try:
        # text columns stay text: parcel ids such as "0123" keep their leading zero
        frame = pd.read_csv(
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
    geom_cols = _csv_geometry_columns(frame.columns)
    if geom_cols is None:
        raise DataSourceError(
            "a CSV needs a WKT column (" + ", ".join(CSV_WKT_COLUMNS) + ") or x/y columns"
            f" ({', '.join('/'.join(p) for p in CSV_XY_COLUMNS)}); its columns are"
            f" {', '.join(frame.columns)}",
            path=path,
            field=label,
        )
    if len(geom_cols) == 1:
        text = frame[geom_cols[0]].to_numpy(dtype=object)
        geoms = shapely.from_wkt(text, on_invalid="ignore")
        bad = np.flatnonzero(pd.isna(geoms) & ~pd.isna(text))
        if bad.size:
            raise DataSourceError(
                f"row {skip + int(bad[0]) + 1}: {geom_cols[0]} is not WKT"
                f" ({str(text[bad[0]])[:40]!r})",
                path=path,
                field=label,
            )
    else:
        xy = frame[list(geom_cols)].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(xy).all(axis=1))
        if bad.size:
            raise DataSourceError(
                f"row {skip + int(bad[0]) + 1}: {'/'.join(geom_cols)} are not numbers",
                path=path,
                field=label,
            )
        geoms = shapely.points(xy)
    return gpd.GeoDataFrame(frame.drop(columns=list(geom_cols)), geometry=geoms, crs=crs)


def _csv_rows(path: Path, label: str | None) -> tuple[int, tuple[str, ...]]:
    try:
        frame = pd.read_csv(path, dtype=str, usecols=[0], encoding="utf-8-sig")
        header = pd.read_csv(path, dtype=str, nrows=0, encoding="utf-8-sig").columns
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
        raise DataSourceError(f"cannot read as CSV ({exc})", path=path, field=label) from None
    return len(frame), tuple(map(str, header))


# --------------------------------------------------------------------------- the reader


def _user_crs(crs: Any, label: str | None, path: Path) -> str | None:
    if crs is None:
        return None
    try:
        return CRS.from_user_input(crs).to_string()
    except PyprojCRSError as exc:
        raise CRSError(f"not a CRS: {crs!r} ({exc})", path=path, field="--crs") from None


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
        The CRS of a CSV (required there; ignored for formats that state theirs).
    force_count : bool
        Count features when the driver does not store the count (GeoJSON).
    """
    import pyogrio

    path = Path(path)
    _check_exists(path, label)
    kind = format_of(path)
    if kind == "parquet":
        pf, geo = _parquet(path, label)
        names = tuple(f for f in pf.schema_arrow.names if f != geo.get("primary_column"))
        col = geo.get("columns", {}).get(geo.get("primary_column", "geometry"), {})
        bbox = col.get("bbox")
        bounds = _bounds4(bbox) if bbox and len(bbox) == 4 else None
        return VectorInfo(pf.metadata.num_rows, _parquet_crs(geo), names, bounds)
    if kind == "csv":
        n, header = _csv_rows(path, label)
        geom = _csv_geometry_columns(header) or ()
        return VectorInfo(n, _user_crs(crs, label, path), tuple(c for c in header if c not in geom))
    layer = _pick_layer(path, layer, label)
    try:
        info = pyogrio.read_info(path, layer=layer, force_feature_count=force_count)
    except Exception as exc:
        raise _driver_error(exc, "cannot open as a vector layer", path, label) from None
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
        The CRS of a CSV file.
    skip, count : int
        Read rows ``skip`` to ``skip + count`` only (input order; a partition).
    max_features : int, optional
        Refuse a layer with more features than this, before reading any (default
        ``limits().max_layer_features``).

    Raises
    ------
    DataSourceError
        A missing or unreadable file, several layers and none named, a CSV without
        geometry columns, a bad ``where``.
    CRSError
        The layer states no CRS (a shapefile without .prj, a CSV without ``crs``).
    LimitError
        More features than ``max_features``; a zip over the zip limits.
    """
    import pyogrio

    from georeview.config import limits

    path = Path(path)
    info = vector_info(path, layer=layer, label=label, crs=crs)
    if max_features is None:
        max_features = limits().max_layer_features
    if info.features > max_features:
        raise LimitError(
            f"{info.features:,} features exceed the limit of {max_features:,}"
            " (GEOREVIEW_MAX_LAYER_FEATURES)",
            path=path,
            field=label,
        )
    if info.crs is None:
        why = {
            "csv": "a CSV states no CRS: name it (--crs, or crs = in layers.toml)",
            "parquet": "its GeoParquet metadata says the CRS is unknown",
        }.get(format_of(path), "for a shapefile, the .prj file is missing")
        raise CRSError(f"has no coordinate reference system ({why})", path=path, field=label)
    read_bbox = bbox
    if bbox is not None and bbox_crs is not None:
        read_bbox = _bbox_into(bbox, bbox_crs, info.crs, path)
    kind = format_of(path)
    if kind == "gdal":
        name = _pick_layer(path, layer, label)
        kw = {
            "layer": None if where else name,
            "bbox": read_bbox,
            "skip_features": skip,
            "max_features": count,
            **_where_sql(name, where),
        }
        try:
            # GDAL's warnings (a polygon of many rings is slow to assemble, a NaN
            # coordinate) become debug lines: what is wrong is refused after the read
            with _quiet_warnings(path):
                return pyogrio.read_dataframe(path, **kw)
        except Exception as exc:
            first = exc
        # One geometry GEOS cannot build (a ring of two points) fails the whole read:
        # read the attributes and the raw WKB apart and let that feature alone be empty
        # (callers refuse it, or make it an error row)
        try:
            with _quiet_warnings(path):
                frame = pyogrio.read_dataframe(path, read_geometry=False, **kw)
                _, _, wkb, _ = pyogrio.raw.read(path, columns=[], **kw)
            geoms = shapely.from_wkb(wkb, on_invalid="ignore")
        except Exception:
            what = "cannot read features" if where is None else f"cannot apply where {where!r}"
            raise _driver_error(first, what, path, label) from None
        return gpd.GeoDataFrame(frame, geometry=np.asarray(geoms, dtype=object), crs=info.crs)
    if kind == "parquet":
        gdf = _read_parquet(path, label, skip, count)
    else:
        gdf = _read_csv(path, label, info.crs, skip, count)
    if read_bbox is not None and len(gdf):
        gdf = gdf[shapely.intersects(gdf.geometry.values, shapely.box(*read_bbox))]
    if where is not None:
        gdf = _filter_where(gdf, where, path, label)
    return gdf


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
        raise _driver_error(exc, f"cannot apply where {where!r}", path, label) from None
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


def _bbox_into(
    bbox: tuple[float, float, float, float], src: CRS, layer_crs: str, path: Path
) -> tuple[float, float, float, float]:
    """Return a bbox in ``src`` transformed into the layer's CRS (densified edges)."""
    from pyproj import Transformer

    try:
        dst = CRS.from_user_input(layer_crs)
    except PyprojCRSError as exc:
        raise CRSError(f"unreadable CRS ({exc})", path=path) from None
    t = Transformer.from_crs(src, dst, always_xy=True)
    minx, miny, maxx, maxy = bbox
    return t.transform_bounds(minx, miny, maxx, maxy, densify_pts=21)


# --------------------------------------------------------------------------- layers as downloaded

#: NHD ``FType`` domain, text form -> code (USGS NHD data dictionary; NHDPlus HR ships
#: the code, some state extracts and conversions the text).
NHD_FTYPE_CODES: dict[str, int] = {
    "artificialpath": 558,
    "canalditch": 336,
    "coastline": 566,
    "connector": 334,
    "pipeline": 428,
    "streamriver": 460,
    "underground conduit": 420,
    "undergroundconduit": 420,
    "drainageway": 468,
    "estuary": 493,
    "icemass": 378,
    "ice mass": 378,
    "lakepond": 390,
    "playa": 361,
    "reservoir": 436,
    "swampmarsh": 466,
    "foreshore": 364,
    "inundationarea": 403,
    "spillway": 455,
    "wash": 484,
}

#: The column a hydrography layer's feature type is read from once loaded.
NHD_FTYPE_FIELD = "FType"

#: Field keys of each layers.toml table, and whether the rules cannot do without them
#: (a required field missing is refused even when layers.toml leaves it at its default).
FIELD_KEYS: dict[str, dict[str, bool]] = {
    "boundary": {"name_field": False, "id_field": False},
    "neighbors": {"kind_field": True, "name_field": False, "id_field": False},
    "floodplain": {
        "zone_field": False,
        "subtype_field": False,
        "sfha_field": False,
        "id_field": False,
    },
    "wetlands": {"name_field": False, "id_field": False},
    "hydrography": {"ftype_field": False, "name_field": False, "id_field": False},
    "soils": {
        "musym_field": False,
        "hsg_field": False,
        "kfactor_field": False,
        "id_field": False,
    },
    "roads": {"name_field": False, "id_field": False},
}


def map_fields(
    gdf: gpd.GeoDataFrame, name: str, spec: Any, toml_path: Path | str
) -> gpd.GeoDataFrame:
    """Give a layer's mapped fields the names layers.toml uses, whatever their case.

    NFHL fields come as ``FLD_ZONE`` or ``fld_zone``, NHD's as ``FType`` or ``FTYPE``:
    a column matching a mapped field without regard to case is renamed to the mapped
    name, and an NHD ``FType`` in text form (``StreamRiver``) becomes its code (460).

    Raises
    ------
    ConfigError
        A field named in layers.toml (or one the rules need) that the data lacks,
        naming the key, the field and the columns present; a floodplain with neither
        its zone nor its SFHA field.
    """
    from georeview.errors import ConfigError

    keys = FIELD_KEYS.get(name, {})
    given: set[str] = getattr(spec, "model_fields_set", set())
    lower = {str(c).lower(): c for c in gdf.columns if c != gdf.geometry.name}
    renames: dict[str, str] = {}
    missing: list[str] = []
    for key, required in keys.items():
        field = getattr(spec, key, None)
        if not field:
            continue
        found = field if field in gdf.columns else lower.get(field.lower())
        if found is None:
            if key in given or required:
                columns = ", ".join(map(str, lower.values())) or "(none)"
                raise ConfigError(
                    f"field {field!r} is not in {Path(str(spec.path)).name}; its columns are"
                    f" {columns}",
                    path=toml_path,
                    field=f"{name}.{key}",
                )
            missing.append(key)
        elif found != field:
            renames[found] = field
    if renames:
        gdf = gdf.rename(columns=renames)
    if name == "floodplain" and {"zone_field", "sfha_field"} <= set(missing) and len(gdf):
        raise ConfigError(
            f"neither {spec.zone_field!r} nor {spec.sfha_field!r} is in"
            f" {Path(str(spec.path)).name} (an NFHL S_FLD_HAZ_AR layer has FLD_ZONE and"
            f" SFHA_TF); its columns are {', '.join(map(str, lower.values())) or '(none)'}",
            path=toml_path,
            field="floodplain.zone_field",
        )
    if name == "hydrography" and spec.ftype_field in gdf.columns:
        # the site-map rules read NHD's own name, FType, as integer codes
        codes = nhd_ftype_codes(gdf[spec.ftype_field])
        gdf = gdf.drop(columns=[spec.ftype_field]).assign(**{NHD_FTYPE_FIELD: codes})
    return gdf


def nhd_ftype_codes(values: pd.Series) -> pd.Series:
    """NHD ``FType`` values as integer codes (text names mapped; unknown -> -1)."""
    numeric = pd.to_numeric(values.astype(object), errors="coerce").astype(float)
    text = values.astype("string").str.strip().str.lower().astype(object)
    named = pd.to_numeric(pd.Series(text, index=values.index).map(NHD_FTYPE_CODES)).astype(float)
    return numeric.fillna(named).fillna(-1).astype(np.int64)


def check_boundary(
    gdf: gpd.GeoDataFrame, spec: Any, toml_path: Path | str, kind_field: str = "CTV"
) -> None:
    """Refuse a boundary layer that holds more than one municipality and no ``where``.

    The statewide (or county) LTSB file used as the boundary would make every
    municipality in it "the village".
    """
    from georeview.errors import ConfigError

    if spec.where is not None or len(gdf) < 2:
        return
    cols = [
        c
        for c in (spec.name_field or "MCD_NAME", kind_field, "GEOID", "MCD_FIPS")
        if c in gdf.columns
    ]
    if not cols:
        return  # several pieces of one limit, nothing says otherwise
    distinct = gdf[cols].astype("string").drop_duplicates()
    if len(distinct) > 1:
        sample = ", ".join(" ".join(map(str, r)) for r in distinct.head(4).itertuples(index=False))
        raise ConfigError(
            f"{Path(str(spec.path)).name} holds {len(distinct)} municipalities ({sample}, ...)"
            " and no filter: add where = \"MCD_NAME = '<name>' AND CTV = '<C|V|T>'\"",
            path=toml_path,
            field="boundary.where",
        )


#: Raster suffixes a floodplain may be given as (a FEMA flood-depth grid).
RASTER_SUFFIXES = (".tif", ".tiff", ".vrt", ".img")


def read_depth_grid(
    path: Path | str,
    working_crs: CRS,
    *,
    bbox: tuple[float, float, float, float] | None = None,
    label: str = "floodplain",
) -> gpd.GeoDataFrame:
    """The cells of a FEMA flood-depth raster with depth > 0, as 1 % floodplain polygons.

    The polygons carry NFHL fields (``FLD_ZONE = "A"``, ``SFHA_TF = "T"``,
    ``ZONE_SUBTY = None``) so the floodplain rules read them as they read
    ``S_FLD_HAZ_AR``; cells are polygonised by GDAL (``rasterio.features.shapes``),
    whole cells, in the raster's CRS, then reprojected.

    Raises
    ------
    DataSourceError
        The raster cannot be read.
    CRSError
        The raster has no CRS.
    LimitError
        The window read is larger than ``limits().max_raster_cells``.
    """
    import rasterio
    from rasterio.features import shapes
    from rasterio.windows import from_bounds

    from georeview.config import limits

    path = Path(path)
    try:
        ds = rasterio.open(path)
    except rasterio.errors.RasterioError as exc:
        raise DataSourceError(f"cannot open as a raster ({exc})", path=path, field=label) from None
    with ds:
        if ds.crs is None:
            raise CRSError("the depth grid has no CRS", path=path, field=label)
        window = None
        if bbox is not None:
            b = _bbox_into(bbox, working_crs, ds.crs.to_wkt(), path)
            window = from_bounds(*b, transform=ds.transform).round_offsets().round_lengths()
            window = window.intersection(rasterio.windows.Window(0, 0, ds.width, ds.height))
        cells = (window.width * window.height) if window is not None else ds.width * ds.height
        if cells > limits().max_raster_cells:
            raise LimitError(
                f"{cells:,} cells exceed the limit of {limits().max_raster_cells:,}"
                " (GEOREVIEW_MAX_RASTER_CELLS)",
                path=path,
                field=label,
            )
        depth = ds.read(1, window=window, masked=True)
        transform = ds.window_transform(window) if window is not None else ds.transform
        wet = (depth.filled(0) > 0).astype(np.uint8)
        geoms = [shapely.geometry.shape(g) for g, v in shapes(wet, mask=wet, transform=transform)]
        crs = ds.crs
    out = gpd.GeoDataFrame(
        {
            "FLD_ZONE": ["A"] * len(geoms),
            "ZONE_SUBTY": [None] * len(geoms),
            "SFHA_TF": ["T"] * len(geoms),
        },
        geometry=geoms,
        crs=crs,
    )
    return out.to_crs(working_crs)
