"""Load stage: read submissions and reference layers, check CRS, repair geometry.

Everything that enters the pipeline passes through here once. Vectors come out
in the working CRS (a projected CRS; EPSG:3071 unless layers.toml says another);
rasters are never read here (the terrain stage reads windows of them in their
own CRS). Each problem is raised as a :mod:`georeview.errors` error that names
the file and, where it has one, the field.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS
from pyproj.exceptions import CRSError as PyprojCRSError

from georeview.config import (
    LayersConfig,
    LayerSpec,
    Limits,
    Submission,
    limits,
    load_layers_config,
    load_submission_config,
)
from georeview.errors import ConfigError, CRSError, DataSourceError, GeometryError, LimitError
from georeview.load.vector import (
    RASTER_SUFFIXES,
    VECTOR_SUFFIXES,
    check_boundary,
    layer_names,
    map_fields,
    read_depth_grid,
    read_vector,
)

log = logging.getLogger(__name__)

#: Default limit on features per reference layer (``GEOREVIEW_MAX_LAYER_FEATURES``).
MAX_FEATURES = Limits().max_layer_features
#: Default limit on features per submission file (``GEOREVIEW_MAX_SUBMISSION_FEATURES``).
MAX_SUBMISSION_FEATURES = Limits().max_submission_features
#: Sidecar files counted with a shapefile towards the upload size limit.
_SHAPEFILE_PARTS = (".shp", ".shx", ".dbf", ".prj", ".cpg")
#: A site must lie within this many degrees of its working CRS's area of use.
_AREA_OF_USE_MARGIN_DEG = 0.5


@dataclass(frozen=True)
class Repair:
    """One geometry repaired on loading, kept so the report can say so."""

    path: str
    feature: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {"path": self.path, "feature": self.feature, "reason": self.reason}


@dataclass(frozen=True)
class LoadedSubmission:
    """A validated submission: its config and its geometries in the working CRS."""

    folder: Path
    config: Submission
    site: gpd.GeoDataFrame
    disturbance: gpd.GeoDataFrame
    disturbance_declared: bool
    repairs: tuple[Repair, ...] = ()

    @property
    def site_geom(self) -> shapely.Geometry:
        """The site as one (multi)polygon."""
        return shapely.union_all(self.site.geometry.values)

    @property
    def disturbance_geom(self) -> shapely.Geometry:
        """Disturbed areas as one (multi)polygon."""
        return shapely.union_all(self.disturbance.geometry.values)


@dataclass(frozen=True)
class Layers:
    """A municipality's reference layers, read lazily and cached per instance."""

    folder: Path
    config: LayersConfig
    _cache: dict[tuple[str, tuple[float, ...] | None], gpd.GeoDataFrame] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def working_crs(self) -> CRS:
        """The projected CRS for area and distance math."""
        return to_crs(self.config.working_crs, path=self.folder / "layers.toml")

    def spec(self, name: str) -> LayerSpec | None:
        """Return the layers.toml table for ``name`` (``None`` when absent or not a layer)."""
        spec = getattr(self.config, name, None)
        return spec if isinstance(spec, LayerSpec) else None

    def path(self, name: str) -> Path | None:
        """Return the file of layer ``name`` (``None`` when layers.toml has none)."""
        spec = self.spec(name)
        return None if spec is None else (self.folder / spec.path)

    def has(self, name: str) -> bool:
        """Whether layers.toml names layer ``name``."""
        return self.spec(name) is not None

    def read(
        self, name: str, *, bbox: tuple[float, float, float, float] | None = None
    ) -> gpd.GeoDataFrame | None:
        """Read vector layer ``name`` in the working CRS, or ``None`` when absent.

        Parameters
        ----------
        name : str
            A layer table of layers.toml (``wetlands``, ``floodplain``, ...).
        bbox : tuple of float, optional
            ``(minx, miny, maxx, maxy)`` in the working CRS: read only features
            that intersect it (a review reads only what is near the site).
        """
        spec = self.spec(name)
        if spec is None:
            return None
        key = (name, None if bbox is None else tuple(round(v, 3) for v in bbox))
        if key not in self._cache:
            path = self.folder / spec.path
            if name == "floodplain" and path.suffix.lower() in RASTER_SUFFIXES:
                gdf = read_depth_grid(path, self.working_crs, bbox=bbox, label=name)
            else:
                gdf = read_layer(
                    path,
                    self.working_crs,
                    layer=spec.layer,
                    bbox=bbox,
                    label=name,
                    where=spec.where,
                    crs=spec.crs,
                )
            toml = self.folder / "layers.toml"
            gdf = map_fields(gdf, name, spec, toml)
            if name == "boundary":
                nb = self.config.neighbors
                check_boundary(gdf, spec, toml, nb.kind_field if nb else "CTV")
            self._cache[key] = gdf
        return self._cache[key]


def to_crs(value: Any, *, path: object = None, field: str | None = "working_crs") -> CRS:
    """Turn any CRS input (``"EPSG:3071"``, WKT, a CRS) into a projected :class:`pyproj.CRS`."""
    try:
        crs = CRS.from_user_input(value)
    except PyprojCRSError as exc:
        raise CRSError(f"not a CRS: {value!r} ({exc})", path=path, field=field) from None
    if not crs.is_projected:
        raise CRSError(
            f"{crs.name} is not projected; area and distance need a projected CRS "
            "such as EPSG:3071",
            path=path,
            field=field,
        )
    return crs


def _open_vector(
    path: Path,
    *,
    layer: str | None,
    bbox: tuple[float, float, float, float] | None,
    label: str,
    bbox_crs: CRS | None = None,
    max_features: int | None = None,
    where: str | None = None,
    crs: Any = None,
) -> gpd.GeoDataFrame:
    """Read a vector file of any format (:func:`georeview.load.vector.read_vector`).

    Files with more features than ``max_features`` (default: the layer limit of
    :func:`georeview.config.limits`) are refused before any feature is read; a file
    without a CRS is refused; every driver failure is a DataSourceError.
    """
    return read_vector(
        path,
        layer=layer,
        label=label,
        bbox=bbox,
        bbox_crs=bbox_crs,
        where=where,
        crs=crs,
        max_features=max_features,
    )


class _quiet_warnings:  # noqa: N801 (used as a context manager)
    """Turn GDAL/shapely warnings while reading into debug log lines, not stderr noise.

    A NaN coordinate or an unclosed ring makes shapely and pyogrio warn; what is wrong
    is then refused (or repaired and reported) by the checks after the read, so the raw
    Python warning would only repeat it, badly.
    """

    def __init__(self, path: object):
        self.path = path

    def __enter__(self) -> None:
        import warnings

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


#: Characters GDAL drops from a file path before opening it (measured with GDAL 3.x
#: through pyogrio: "a/\r/site.geojson" opens "a/site.geojson"), so the file read
#: would not be the one checked.
_GDAL_STRIPPED = re.compile(r"[\t\n\v\f\r]")


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


def _check_shapefile_parts(path: Path, label: str | None) -> None:
    """Refuse a shapefile without its .shx or .dbf before GDAL tries to open it."""
    if path.suffix.lower() != ".shp":
        return
    for side in (".shx", ".dbf"):
        if not path.with_suffix(side).exists() and not path.with_suffix(side.upper()).exists():
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
    shx = _sidecar(path, ".shx")
    dbf = _sidecar(path, ".dbf")
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


def _sidecar(path: Path, side: str) -> Path | None:
    for cand in (path.with_suffix(side), path.with_suffix(side.upper())):
        if cand.exists():
            return cand
    return None


def _driver_error(exc: Exception, what: str, path: Path, label: str | None) -> DataSourceError:
    """Turn a pyogrio/GDAL failure into a DataSourceError naming the file."""
    if isinstance(exc, UnicodeDecodeError):
        return DataSourceError(
            f"attribute text is not UTF-8 (byte 0x{exc.object[exc.start]:02x} at {exc.start});"
            " GeoJSON must be UTF-8 (RFC 7946 section 11), a shapefile names its encoding in a"
            " .cpg file: export the file again as UTF-8",
            path=path,
            field=label,
        )
    return DataSourceError(f"{what} ({_short(exc)})", path=path, field=label)


def _layer_names(path: Path, label: str | None = None) -> list[str]:
    """Names of the vector layers with geometry in a file (one for most formats)."""
    if not path.exists():
        return [None]  # type: ignore[list-item]  # _open_vector reports the missing file
    return layer_names(path, label)  # type: ignore[return-value]


def _short(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text[:200]


def read_layer(
    path: Path,
    working_crs: CRS,
    *,
    layer: str | tuple[str, ...] | None = None,
    bbox: tuple[float, float, float, float] | None = None,
    label: str = "layer",
    where: str | None = None,
    crs: Any = None,
) -> gpd.GeoDataFrame:
    """Read a reference layer and reproject it to the working CRS.

    ``where`` is an attribute filter (layers.toml ``where``) and ``crs`` the CRS of a
    CSV layer; any format of :mod:`georeview.load.vector` is read.

    Invalid polygons are repaired with :func:`shapely.make_valid` (reference
    layers are the municipality's; their repairs are logged, not reported);
    empty geometries are dropped.
    """
    path = Path(path)
    if layer is None:
        names = _layer_names(path, label)
    else:
        names = [layer] if isinstance(layer, str) else list(layer)
    if len(names) > 1:
        # NHD ships flowlines and waterbodies as two layers of one file: read them all,
        # keeping where each feature came from.
        parts = [
            _open_vector(
                path, layer=n, bbox=bbox, label=label, bbox_crs=working_crs, where=where, crs=crs
            )
            .to_crs(working_crs)
            .assign(source_layer=n)
            for n in names
        ]
        gdf = gpd.GeoDataFrame(pd.concat(parts, ignore_index=True), crs=working_crs)
    else:
        gdf = _open_vector(
            path,
            layer=names[0],
            bbox=bbox,
            label=label,
            bbox_crs=working_crs,
            where=where,
            crs=crs,
        )
    gdf = gdf[~(gdf.geometry.isna() | gdf.geometry.is_empty)]
    invalid = ~gdf.geometry.is_valid
    if invalid.any():
        log.info("%s: repaired %d invalid geometries with make_valid", path, int(invalid.sum()))
        gdf = gdf.set_geometry(gdf.geometry.make_valid())
    return gdf.to_crs(working_crs)


def _open_submission_file(
    path: Path, *, folder: Path | None, label: str, max_features: int
) -> gpd.GeoDataFrame:
    """Read a submission's vector file after the checks every such file passes.

    A supported format, within the upload size, matching shapefile record counts, and
    one layer (which layer is the site would otherwise be a guess).
    """
    if path.suffix.lower() not in VECTOR_SUFFIXES:
        raise DataSourceError(
            f"unsupported format {path.suffix!r}; use one of {', '.join(VECTOR_SUFFIXES)}",
            path=path,
            field=label,
        )
    _check_upload_size(path, limits().max_upload_bytes, label, folder)
    check_shapefile_counts(path, label)
    names = _layer_names(path, label)
    if len(names) > 1:
        raise DataSourceError(
            f"has {len(names)} layers ({', '.join(names)}); a submission file must hold one",
            path=path,
            field=label,
        )
    return _open_vector(path, layer=None, bbox=None, label=label, max_features=max_features)


def read_submission_layer(
    path: Path, working_crs: CRS, *, folder: Path, label: str
) -> gpd.GeoDataFrame:
    """Read one of a submission's other layers (``sitemap/``, contours, grid), strictly.

    The same limits and checks as the site file: a regular file inside the
    submission (shapefile parts too), the upload size and feature limits, matching
    shapefile record counts, one layer, finite coordinates. Invalid geometries are
    repaired with make_valid (these layers are counted and measured, not reported).
    """
    path = Path(path)
    check_regular(path, folder, field=label)
    gdf = _open_submission_file(
        path, folder=folder, label=label, max_features=limits().max_submission_features
    )
    gdf = gdf[~(gdf.geometry.isna() | gdf.geometry.is_empty)]
    coords, owner = shapely.get_coordinates(gdf.geometry.values, include_z=False, return_index=True)
    bad = owner[~np.isfinite(coords).all(axis=1)]
    if bad.size:
        raise GeometryError(
            f"feature {int(bad[0])} has a coordinate that is not a finite number (NaN or"
            " Infinity)",
            path=path,
            field=label,
        )
    invalid = ~gdf.geometry.is_valid
    if invalid.any():
        gdf = gdf.set_geometry(gdf.geometry.make_valid())
    out = gdf.to_crs(working_crs)
    if len(out) and not np.isfinite(out.total_bounds).all():
        raise CRSError(
            "coordinates do not transform to the working CRS (is the declared CRS right?)",
            path=path,
            field=label,
        )
    return out


def read_polygons(
    path: Path,
    working_crs: CRS,
    *,
    field: str,
    max_features: int | None = None,
    folder: Path | None = None,
) -> tuple[gpd.GeoDataFrame, tuple[Repair, ...]]:
    """Read a submission's polygon file (site or disturbance), strictly.

    Parameters
    ----------
    path : Path
        GeoJSON, shapefile or GeoPackage with a declared CRS.
    working_crs : pyproj.CRS
        Projected CRS to reproject into.
    field : str
        The submission.toml key that named the file (for messages).
    max_features : int, optional
        Refuse files with more features than this (default
        ``limits().max_submission_features``).
    folder : Path, optional
        The submission folder: the file and every shapefile part must be regular
        files inside it once links are resolved.

    Returns
    -------
    (GeoDataFrame, tuple of Repair)
        Polygons in the working CRS, and the repairs made.

    Raises
    ------
    CRSError
        The file declares no CRS.
    GeometryError
        No features, an empty geometry, or points/lines where a polygon belongs.
    LimitError
        A file larger than ``limits().max_upload_bytes``, more features than
        ``max_features``, or a site larger than ``limits().max_site_sqmi``.
    """
    path = Path(path)
    lim = limits()
    if max_features is None:
        max_features = lim.max_submission_features
    gdf = _open_submission_file(path, folder=folder, label=field, max_features=max_features)
    if len(gdf) == 0:
        raise GeometryError("contains no features", path=path, field=field)
    geoms = gdf.geometry.values
    missing = np.flatnonzero(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    if missing.size:
        raise GeometryError(
            f"feature {int(missing[0])} has an empty geometry", path=path, field=field
        )
    types = shapely.get_type_id(geoms)
    not_poly = np.flatnonzero(~np.isin(types, (3, 6)))
    if not_poly.size:
        i = int(not_poly[0])
        raise GeometryError(
            f"feature {i} is a {geoms[i].geom_type}, but a polygon is needed",
            path=path,
            field=field,
        )
    coords, owner = shapely.get_coordinates(geoms, include_z=False, return_index=True)
    bad = owner[~np.isfinite(coords).all(axis=1)]
    if bad.size:
        raise GeometryError(
            f"feature {int(bad[0])} has a coordinate that is not a finite number (NaN or"
            " Infinity)",
            path=path,
            field=field,
        )
    repairs: list[Repair] = []
    valid = shapely.is_valid(geoms)
    if not valid.all():
        fixed = geoms.copy()
        for feat in np.flatnonzero(~valid):  # few features: a loop over invalid ones only
            reason = shapely.is_valid_reason(geoms[feat])
            fixed[feat] = _polygonal(shapely.make_valid(geoms[feat]))
            repairs.append(Repair(path.name, int(feat), f"{reason}; repaired with make_valid"))
            if fixed[feat] is None or shapely.is_empty(fixed[feat]):
                raise GeometryError(
                    f"feature {int(feat)} is invalid ({reason}) and has no area once repaired",
                    path=path,
                    field=field,
                )
        gdf = gdf.set_geometry(gpd.GeoSeries(fixed, crs=gdf.crs, index=gdf.index))
    out = gdf.to_crs(working_crs)
    if not np.isfinite(out.total_bounds).all():
        raise CRSError(
            "coordinates do not transform to the working CRS (is the declared CRS right?)",
            path=path,
            field=field,
        )
    check_in_area_of_use(out, working_crs, path=path, field=field)
    check_site_size(out, working_crs, lim.max_site_sqmi, path=path, field=field)
    return out, tuple(repairs)


def _check_upload_size(
    path: Path, max_bytes: int, field: str, folder: Path | None = None
) -> None:
    """Refuse a submission file (with its shapefile sidecars) larger than ``max_bytes``.

    With ``folder``, every part must also be a regular file inside it (a sidecar that
    is a link out of the submission or a FIFO is refused before GDAL opens it).
    """
    if path.suffix.lower() == ".shp":
        parts = [
            p for p in path.parent.glob(path.stem + ".*") if p.suffix.lower() in _SHAPEFILE_PARTS
        ]
    elif path.is_dir():  # a File Geodatabase folder
        parts = list(path.rglob("*"))
    else:
        parts = [path]
    if folder is not None:
        for p in parts:
            check_regular(p, folder, field=field)
    size = sum(p.stat().st_size for p in parts if p.is_file())
    if size > max_bytes:
        raise LimitError(
            f"{size:,} bytes exceed the upload limit of {max_bytes:,} bytes"
            " (GEOREVIEW_MAX_UPLOAD_BYTES)",
            path=path,
            field=field,
        )


def check_in_area_of_use(
    gdf: gpd.GeoDataFrame, working_crs: CRS, *, path: object = None, field: str | None = None
) -> None:
    """Refuse geometries far outside the area where the working CRS is meant to be used.

    A site whose file declares the wrong CRS (Wisconsin Transverse Mercator metres
    labelled UTM 16N, state-plane feet labelled metres) lands hundreds of kilometres from
    Wisconsin once reprojected; measured there it would give wrong areas and an
    "outside the village" answer that looks plausible. The check compares the
    geometries' longitude/latitude bounds with the working CRS's EPSG area of use
    (Wisconsin for EPSG:3071) grown by half a degree. A CRS without an area of use is
    not checked.

    Raises
    ------
    CRSError
        When the geometries lie wholly outside that area.
    """
    aou = working_crs.area_of_use
    if aou is None or len(gdf) == 0:
        return
    m = _AREA_OF_USE_MARGIN_DEG
    west, south, east, north = gdf.to_crs("EPSG:4326").total_bounds
    inside = (
        np.isfinite([west, south, east, north]).all()
        and east >= aou.west - m
        and west <= aou.east + m
        and north >= aou.south - m
        and south <= aou.north + m
    )
    if not inside:
        raise CRSError(
            f"lies outside the area covered by the layers: at longitude {west:.2f} to"
            f" {east:.2f}, latitude {south:.2f} to {north:.2f}, while the working CRS"
            f" {working_crs.name} covers {aou.name.rstrip('.')} ({aou.west:.2f} to"
            f" {aou.east:.2f}, {aou.south:.2f} to {aou.north:.2f}); is the declared CRS right?",
            path=path,
            field=field,
        )


def check_site_size(
    gdf: gpd.GeoDataFrame,
    working_crs: CRS,
    max_sqmi: float,
    *,
    path: object = None,
    field: str | None = None,
) -> None:
    """Refuse a polygon file whose area is absurd for a construction site.

    Raises
    ------
    LimitError
        When the union of the polygons exceeds ``max_sqmi`` square miles.
    """
    from georeview.measure.areas import sqft_per_crs_unit2
    from georeview.units import SQFT_PER_SQMI

    area = float(shapely.area(shapely.union_all(gdf.geometry.values)))
    sqmi = area * sqft_per_crs_unit2(working_crs) / SQFT_PER_SQMI
    if sqmi > max_sqmi:
        raise LimitError(
            f"covers {sqmi:,.1f} square miles, more than the {max_sqmi:g} square miles"
            " a construction site could cover (GEOREVIEW_MAX_SITE_SQMI); is this the right"
            " file, and are its CRS and units right?",
            path=path,
            field=field,
        )


def _polygonal(geom: shapely.Geometry) -> shapely.Geometry | None:
    """Keep the polygonal part of a make_valid result (drop stray lines and points)."""
    if geom.geom_type in ("Polygon", "MultiPolygon"):
        return geom
    parts = [g for g in getattr(geom, "geoms", []) if g.geom_type in ("Polygon", "MultiPolygon")]
    return shapely.union_all(parts) if parts else None


def load_layers(folder: Path) -> Layers:
    """Read ``folder/layers.toml`` and check that every named file exists."""
    folder = Path(folder)
    toml_path = folder / "layers.toml"
    cfg = load_layers_config(toml_path)
    to_crs(cfg.working_crs, path=toml_path)
    root = folder.resolve()
    for name in type(cfg).model_fields:
        spec = getattr(cfg, name)
        if not isinstance(spec, LayerSpec):
            continue
        # Layer paths stay inside the layers folder: a layers.toml copied from
        # elsewhere (or planted) must not read files the Village did not put there.
        if not cfg.trusted and not (folder / spec.path).resolve().is_relative_to(root):
            raise ConfigError(
                f"{spec.path!r} is outside the layers folder; keep layer files inside it,"
                " or set trusted = true in layers.toml to allow paths elsewhere",
                path=toml_path,
                field=f"{name}.path",
            )
        if not (folder / spec.path).exists():
            raise DataSourceError(
                f"layer file {spec.path!r} not found", path=toml_path, field=f"{name}.path"
            )
    return Layers(folder=folder, config=cfg)


def load_submission(folder: Path, working_crs: CRS | str = "EPSG:3071") -> LoadedSubmission:
    """Read a submission folder: ``submission.toml`` and the geometry files it names.

    Parameters
    ----------
    folder : Path
        The submission folder.
    working_crs : pyproj.CRS or str
        The municipality's working CRS (projected).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DataSourceError("submission folder not found", path=folder)
    toml_path = folder / "submission.toml"
    cfg = load_submission_config(toml_path, folder=folder)
    crs = to_crs(working_crs)
    site, rep1 = read_polygons(
        submission_file(folder, cfg.site, "site"), crs, field="site", folder=folder
    )
    if cfg.disturbance:
        dist, rep2 = read_polygons(
            submission_file(folder, cfg.disturbance, "disturbance"),
            crs,
            field="disturbance",
            folder=folder,
        )
        declared = True
    else:
        dist, rep2, declared = site, (), False
    return LoadedSubmission(
        folder=folder,
        config=cfg,
        site=site,
        disturbance=dist,
        disturbance_declared=declared,
        repairs=rep1 + rep2,
    )


def submission_file(folder: Path, name: str, field: str) -> Path:
    """Resolve a file named in submission.toml, refusing paths that leave the folder.

    Submissions are untrusted (SECURITY.md): ``../``, absolute paths and symbolic
    links out of the folder are refused, naming the submission.toml field, and so is
    anything that is not a regular file (a FIFO would hang the reader, a device
    would read forever).

    Raises
    ------
    DataSourceError
        When the path leaves the folder, does not exist or is not a regular file.
    """
    folder = Path(folder)
    toml = folder / "submission.toml"
    if "\x00" in name:
        raise DataSourceError(f"{name!r} is not a file name", path=toml, field=field)
    path = (folder / name).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise DataSourceError(
            f"{name!r} points outside the submission folder", path=toml, field=field
        )
    if not path.exists():
        raise DataSourceError(
            f"file {name!r} named in submission.toml not found", path=toml, field=field
        )
    check_regular(path, folder, field=field)
    return path


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
    import stat

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
        kind = (
            "a folder"
            if stat.S_ISDIR(mode)
            else "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "not a regular file"
        )
        raise DataSourceError(
            f"is {kind}, not a regular file; a submission holds only regular files",
            path=path,
            field=field,
        )
