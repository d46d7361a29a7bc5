"""A submission folder: ``submission.toml``, its site and disturbance polygons, its other files.

Submissions are untrusted (SECURITY.md): every file they name stays inside the folder, is a
regular file, fits the upload and feature limits and holds one layer; the site's polygons
must be polygons with finite coordinates, lie where the working CRS is used and cover an
area a construction site could. Invalid polygons are repaired and the repairs reported. A
KML or KMZ site is its polygons (:func:`georeview.load.kml.kml_polygons`); the pins and
paths beside them are set aside with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import shapely
from pyproj import CRS

from georeview.config import Submission, limits, load_submission_config
from georeview.errors import DataSourceError, GeometryError, LimitError
from georeview.load.crs import to_crs
from georeview.load.csv_layer import csv_prj
from georeview.load.files import check_limit, check_regular, check_shapefile_counts
from georeview.load.geometry import (
    check_finite_coordinates,
    check_in_area_of_use,
    check_site_size,
    drop_empty,
    polygonal,
    repair_invalid,
    reproject,
)
from georeview.load.kml import KML_SUFFIXES, kml_polygons
from georeview.load.vector import VECTOR_SUFFIXES, layer_names, read_vector

__all__ = [
    "LoadedSubmission",
    "Repair",
    "load_submission",
    "read_polygons",
    "read_submission_layer",
    "submission_file",
]

#: Sidecar files counted with a shapefile towards the upload size limit.
_SHAPEFILE_PARTS = (".shp", ".shx", ".dbf", ".prj", ".cpg")
#: The variable that sets limits().max_submission_features, named when a file is over it.
SUBMISSION_LIMIT = "GEOREVIEW_MAX_SUBMISSION_FEATURES"
#: shapely geometry type ids of Polygon and MultiPolygon.
_POLYGON_TYPES = (3, 6)


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
    #: What loading set aside, for report.json ``warnings`` (a KML's pins and paths).
    notes: tuple[str, ...] = ()

    @property
    def site_geom(self) -> shapely.Geometry:
        """The site as one (multi)polygon."""
        return shapely.union_all(self.site.geometry.values)

    @property
    def disturbance_geom(self) -> shapely.Geometry:
        """Disturbed areas as one (multi)polygon."""
        return shapely.union_all(self.disturbance.geometry.values)


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
    site, rep1, notes1 = read_polygons(
        submission_file(folder, cfg.site, "site"), crs, field="site", folder=folder
    )
    if cfg.disturbance:
        dist, rep2, notes2 = read_polygons(
            submission_file(folder, cfg.disturbance, "disturbance"),
            crs,
            field="disturbance",
            folder=folder,
        )
        declared = True
    else:
        dist, rep2, notes2, declared = site, (), (), False
    return LoadedSubmission(
        folder=folder,
        config=cfg,
        site=site,
        disturbance=dist,
        disturbance_declared=declared,
        repairs=rep1 + rep2,
        notes=notes1 + notes2,
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
    try:
        found = path.exists()
    except OSError as exc:  # a name the file system cannot hold (ENAMETOOLONG), ...
        shown = name if len(name) <= 60 else f"{name[:40]}...{name[-12:]}"
        raise DataSourceError(
            f"{shown!r} ({len(name.encode('utf-8', 'surrogateescape'))} bytes) cannot be a file"
            f" name here ({exc.strerror or type(exc).__name__})",
            path=toml,
            field=field,
        ) from None
    if not found:
        raise DataSourceError(
            f"file {name!r} named in submission.toml not found", path=toml, field=field
        )
    check_regular(path, folder, field=field)
    return path


def _unpacked_size(path: Path, field: str) -> int:
    """Bytes of ``path`` as GDAL will read them.

    A zip (a zipped shapefile, a KMZ) counts the uncompressed sizes of its entries,
    which the compressed size hides (8.7 kB of zip carried 4 MB of geometry).
    """
    if path.suffix.lower() not in (".zip", ".kmz"):
        return path.stat().st_size
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            return sum(m.file_size for m in zf.infolist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataSourceError(f"not a readable zip file ({exc})", path=path, field=field) from None


def _check_upload_size(path: Path, max_bytes: int, field: str, folder: Path | None = None) -> None:
    """Refuse a submission file (with its shapefile sidecars) larger than ``max_bytes``.

    A zip is counted uncompressed (:func:`_unpacked_size`). With ``folder``, every part
    must also be a regular file inside it (a sidecar that is a link out of the
    submission or a FIFO is refused before GDAL opens it).
    """
    if path.suffix.lower() == ".shp":
        parts = [
            p for p in path.parent.glob(path.stem + ".*") if p.suffix.lower() in _SHAPEFILE_PARTS
        ]
    elif path.is_dir():  # a File Geodatabase folder
        parts = list(path.rglob("*"))
    elif path.suffix.lower() == ".csv":  # a CSV and the .prj giving its CRS
        parts = [path, *filter(None, [csv_prj(path)])]
    else:
        parts = [path]
    if folder is not None:
        for p in parts:
            check_regular(p, folder, field=field)
    size = sum(_unpacked_size(p, field) for p in parts if p.is_file())
    if size > max_bytes:
        raise LimitError(
            f"{size:,} bytes exceed the upload limit of {max_bytes:,} bytes"
            " (GEOREVIEW_MAX_UPLOAD_BYTES)",
            path=path,
            field=field,
        )


def _check_submission_file(path: Path, folder: Path | None, label: str) -> None:
    """The checks every submission vector file passes before it is opened.

    A supported format, within the upload size (its parts regular files inside the
    submission), matching shapefile record counts.
    """
    if path.suffix.lower() not in VECTOR_SUFFIXES:
        raise DataSourceError(
            f"unsupported format {path.suffix!r}; use one of {', '.join(VECTOR_SUFFIXES)}",
            path=path,
            field=label,
        )
    _check_upload_size(path, limits().max_upload_bytes, label, folder)
    check_shapefile_counts(path, label)


def _open_submission_file(
    path: Path, *, folder: Path | None, label: str, max_features: int
) -> gpd.GeoDataFrame:
    """Read a submission's vector file after the checks every such file passes.

    Those of :func:`_check_submission_file`, and one layer (which layer is the site
    would otherwise be a guess).
    """
    _check_submission_file(path, folder, label)
    names = layer_names(path, label) if path.exists() else [None]
    if len(names) > 1:
        raise DataSourceError(
            f"has {len(names)} layers ({', '.join(map(str, names))}); a submission file must"
            " hold one",
            path=path,
            field=label,
        )
    return read_vector(path, label=label, max_features=max_features, limit_name=SUBMISSION_LIMIT)


def _open_kml_polygons(
    path: Path, *, folder: Path | None, label: str, max_features: int
) -> tuple[gpd.GeoDataFrame, tuple[str, ...]]:
    """Read the polygons of a KML or KMZ site or disturbance file, and what was set aside.

    Every folder (GDAL layer) is read, ``max_features`` counting them all; the polygons
    must lie in one of them (:func:`georeview.load.kml.kml_polygons`).
    """
    _check_submission_file(path, folder, label)
    # GDAL names every KML layer (after its Folder or Document): [None] is no placemark
    names = [n for n in layer_names(path, label) if n is not None]
    folders = [
        (
            n,
            read_vector(
                path, layer=n, label=label, max_features=max_features, limit_name=SUBMISSION_LIMIT
            ),
        )
        for n in names
    ]
    check_limit(
        sum(len(g) for _, g in folders),
        max_features,
        "features",
        SUBMISSION_LIMIT,
        path=path,
        field=label,
    )
    return kml_polygons(folders, path, label)


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
    gdf = drop_empty(gdf)
    check_finite_coordinates(gdf.geometry.values, path=path, field=label)
    gdf, _ = repair_invalid(gdf)
    return reproject(gdf, working_crs, path=path, field=label)


def _check_polygons(geoms: Any, path: Path, field: str) -> None:
    """Refuse an empty geometry, a point or line, or a coordinate that is not finite."""
    missing = np.flatnonzero(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    if missing.size:
        raise GeometryError(
            f"feature {int(missing[0])} has an empty geometry", path=path, field=field
        )
    types = shapely.get_type_id(geoms)
    not_poly = np.flatnonzero(~np.isin(types, _POLYGON_TYPES))
    if not_poly.size:
        i = int(not_poly[0])
        raise GeometryError(
            f"feature {i} is a {geoms[i].geom_type}, but a polygon is needed",
            path=path,
            field=field,
        )
    check_finite_coordinates(geoms, path=path, field=field)


def _repair_polygons(
    gdf: gpd.GeoDataFrame, path: Path, field: str
) -> tuple[gpd.GeoDataFrame, tuple[Repair, ...]]:
    """Repair invalid polygons one by one, keeping each repair for the report.

    Raises
    ------
    GeometryError
        A polygon with no area left once repaired.
    """
    geoms = gdf.geometry.values
    valid = shapely.is_valid(geoms)
    if valid.all():
        return gdf, ()
    repairs: list[Repair] = []
    fixed = geoms.copy()
    for feat in np.flatnonzero(~valid):  # few features: a loop over invalid ones only
        reason = shapely.is_valid_reason(geoms[feat])
        fixed[feat] = polygonal(shapely.make_valid(geoms[feat]))
        repairs.append(Repair(path.name, int(feat), f"{reason}; repaired with make_valid"))
        if fixed[feat] is None or shapely.is_empty(fixed[feat]):
            raise GeometryError(
                f"feature {int(feat)} is invalid ({reason}) and has no area once repaired",
                path=path,
                field=field,
            )
    gdf = gdf.set_geometry(gpd.GeoSeries(fixed, crs=gdf.crs, index=gdf.index))
    return gdf, tuple(repairs)


def read_polygons(
    path: Path,
    working_crs: CRS,
    *,
    field: str,
    max_features: int | None = None,
    folder: Path | None = None,
) -> tuple[gpd.GeoDataFrame, tuple[Repair, ...], tuple[str, ...]]:
    """Read a submission's polygon file (site or disturbance), strictly.

    Parameters
    ----------
    path : Path
        Any format of :data:`~georeview.load.vector.VECTOR_SUFFIXES` with a declared
        CRS (KML and KMZ: EPSG:4326 by the standard; CSV: its .prj).
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
    (GeoDataFrame, tuple of Repair, tuple of str)
        Polygons in the working CRS, the repairs made, and the warnings of what was
        set aside (a KML's pins and paths).

    Raises
    ------
    CRSError
        The file declares no CRS.
    GeometryError
        No features, an empty geometry, or points/lines where a polygon belongs (in
        a KML: no polygon at all).
    DataSourceError
        A KML with polygons in several folders.
    LimitError
        A file larger than ``limits().max_upload_bytes``, more features than
        ``max_features``, more vertices than ``limits().max_submission_vertices``, or a
        site larger than ``limits().max_site_sqmi``.
    """
    path = Path(path)
    lim = limits()
    if max_features is None:
        max_features = lim.max_submission_features
    notes: tuple[str, ...] = ()
    if path.suffix.lower() in KML_SUFFIXES:
        gdf, notes = _open_kml_polygons(path, folder=folder, label=field, max_features=max_features)
    else:
        gdf = _open_submission_file(path, folder=folder, label=field, max_features=max_features)
    if len(gdf) == 0:
        raise GeometryError("contains no features", path=path, field=field)
    check_limit(
        int(shapely.get_num_coordinates(gdf.geometry.values).sum()),
        lim.max_submission_vertices,
        "vertices",
        "GEOREVIEW_MAX_SUBMISSION_VERTICES",
        path=path,
        field=field,
    )
    _check_polygons(gdf.geometry.values, path, field)
    gdf, repairs = _repair_polygons(gdf, path, field)
    out = reproject(gdf, working_crs, path=path, field=field)
    check_in_area_of_use(out, working_crs, path=path, field=field)
    check_site_size(out, working_crs, lim.max_site_sqmi, path=path, field=field)
    return out, repairs, notes
