"""KML and KMZ (Google Earth) files: what GDAL is given to read, and what a site is in one.

KML is always WGS84 longitude/latitude (EPSG:4326, OGC KML 2.2 § 6.2), which GDAL states
for every KML layer; altitudes are dropped (areas are measured in plan). GDAL reads a
KML file itself (its LIBKML driver, or the KML driver where LIBKML is not built). A KMZ
is a zip: georeview checks it as it checks any zip from an applicant
(:mod:`georeview.load.archive`: entries, links, escapes, encryption, Deflate64, sizes
counted while decompressing) and hands GDAL only the bytes of its KML (``doc.kml``, or
the one ``.kml`` at its top level, as Google Earth reads it), so GDAL never opens the zip.

Google Earth files hold Folders of Placemarks, pins and paths beside the polygon. A site
or disturbance file is taken as its polygons: points and lines are set aside with a
warning; polygons in more than one folder are refused, as a GeoPackage of several layers
is, because which folder is the site would be a guess.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely

from georeview.errors import DataSourceError, GeometryError
from georeview.load.archive import ZipEntry, checked_entries, read_entry
from georeview.load.geometry import polygonal

__all__ = ["KML_SUFFIXES", "gdal_source", "kml_polygons"]

#: Suffixes read as KML (``.kmz``: zipped KML).
KML_SUFFIXES = (".kml", ".kmz")
#: shapely geometry type ids: polygons, lines, points, collections.
_POLYGONS, _LINES, _POINTS, _COLLECTION = (3, 6), (1, 2, 5), (0, 4), 7


def gdal_source(path: Path, label: str | None) -> Path | bytes:
    """What GDAL opens for ``path``: the path itself, or a KMZ's KML, checked and read.

    Raises
    ------
    DataSourceError
        A KMZ that is not a zip, holds no KML (or several and no ``doc.kml``), or an
        entry the zip checks refuse.
    LimitError
        A KMZ over the zip limits (``GEOREVIEW_MAX_ZIP_MEMBERS``, ``GEOREVIEW_MAX_ZIP_BYTES``).
    """
    if path.suffix.lower() != ".kmz":
        return path
    from georeview.config import limits

    lim = limits()
    st = path.stat()
    # cached by size and time: a KMZ is listed, inspected and read in three GDAL calls
    return _kmz_document(
        str(path), st.st_size, st.st_mtime_ns, lim.max_zip_bytes, lim.max_zip_members, label
    )


@lru_cache(maxsize=4)
def _kmz_document(
    name: str, size: int, mtime_ns: int, max_bytes: int, max_members: int, label: str | None
) -> bytes:
    """The KML of a KMZ after the zip checks (arguments past ``name`` key the cache)."""
    path = Path(name)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataSourceError(
            f"not a readable zip file, as a KMZ must be ({exc})", path=path, field=label
        ) from None
    with zf:
        entries = checked_entries(
            zf, path, max_bytes=max_bytes, max_members=max_members, field=label
        )
        info = _main_kml(entries, path, label)
        return read_entry(zf, info, path, max_bytes=max_bytes, field=label)


def _main_kml(entries: list[ZipEntry], path: Path, label: str | None) -> zipfile.ZipInfo:
    """The KML a KMZ is read as: ``doc.kml`` at its top level, or the only ``.kml`` there.

    Google's KMZ reference puts one KML at the top level (``doc.kml`` by custom); several
    there and no ``doc.kml`` is refused rather than picking one.
    """
    top = [
        (info, rel)
        for info, rel in entries
        if rel is not None
        and not info.is_dir()
        and len(rel.parts) == 1
        and rel.suffix.lower() == ".kml"
    ]
    doc = [info for info, rel in top if rel.name.lower() == "doc.kml"]
    if len(doc) == 1:
        return doc[0]
    if len(top) == 1:
        return top[0][0]
    if not top:
        names = [rel.as_posix() for info, rel in entries if rel is not None and not info.is_dir()]
        listed = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "") or "none"
        raise DataSourceError(
            "holds no KML file at its top level (a KMZ is a zip holding doc.kml);"
            f" its files: {listed}",
            path=path,
            field=label,
        )
    raise DataSourceError(
        f"holds {len(top)} KML files at its top level"
        f" ({', '.join(rel.name for _, rel in top)}) and no single doc.kml: which one is"
        " the layer would be a guess",
        path=path,
        field=label,
    )


def kml_polygons(
    folders: Sequence[tuple[str | None, gpd.GeoDataFrame]], path: Path, field: str
) -> tuple[gpd.GeoDataFrame, tuple[str, ...]]:
    """The polygons of a KML site or disturbance file, in plan, and what was set aside.

    Parameters
    ----------
    folders : sequence of (name, GeoDataFrame)
        Each KML layer (GDAL makes one per Folder, and one for the Document's own
        Placemarks) as read, in EPSG:4326 (none: a KML without placemarks).
    path : Path
        The KML or KMZ file (for messages).
    field : str
        The submission.toml key that named it.

    Returns
    -------
    (GeoDataFrame, tuple of str)
        The polygon placemarks of the one folder holding polygons, with altitudes
        dropped (the polygon parts of a MultiGeometry kept), and the warning saying
        how many placemarks without area were ignored (none: empty).

    Raises
    ------
    GeometryError
        No polygon placemark at all.
    DataSourceError
        Polygons in more than one folder.
    """
    kept: list[tuple[str | None, gpd.GeoDataFrame]] = []
    points = lines = other = 0
    for name, gdf in folders:
        geoms = np.asarray(shapely.force_2d(gdf.geometry.values), dtype=object)
        types = shapely.get_type_id(geoms)
        coll = np.flatnonzero(types == _COLLECTION)
        for i in coll:  # MultiGeometry placemarks only (rare): their polygon parts
            geoms[i] = polygonal(geoms[i]) if not shapely.is_empty(geoms[i]) else None
        is_poly = np.isin(shapely.get_type_id(geoms), _POLYGONS) & ~shapely.is_empty(geoms)
        points += int(np.isin(types, _POINTS).sum())
        lines += int(np.isin(types, _LINES).sum())
        other += int((~is_poly & ~np.isin(types, (*_POINTS, *_LINES))).sum())
        if is_poly.any():
            part = gdf[is_poly].set_geometry(
                gpd.GeoSeries(geoms[is_poly], crs=gdf.crs, index=gdf.index[is_poly])
            )
            kept.append((name, part))
    counts = _counts(point=points, line=lines, other=other)
    if not kept:
        raise GeometryError(
            f"holds no polygon ({counts}); a {field} is an area: draw it as a polygon"
            " (Google Earth: Add Polygon)",
            path=path,
            field=field,
        )
    if len(kept) > 1:
        raise DataSourceError(
            f"has polygons in {len(kept)} folders ({', '.join(str(n) for n, _ in kept)}):"
            f" which folder is the {field} would be a guess; keep the {field}'s polygons in"
            " one folder, or save that folder alone",
            path=path,
            field=field,
        )
    name, gdf = kept[0]
    notes: tuple[str, ...] = ()
    if points or lines or other:
        notes = (
            f"{path.name}: {counts} ignored (pins, labels, paths: a {field} is an area);"
            f" the {field} is the {len(gdf)} polygon placemark(s) of folder {name!r}.",
        )
    return gdf.reset_index(drop=True), notes


def _counts(**kinds: int) -> str:
    """``"1 point and 2 line placemarks"``: the kinds set aside, those present only."""
    words = {"point": "point", "line": "line", "other": "empty or mixed"}
    said = [f"{n} {words[k]}" for k, n in kinds.items() if n]
    if not said:
        return "no placemarks"
    return (", ".join(said[:-1]) + " and " + said[-1] if len(said) > 1 else said[0]) + (
        " placemark" + ("s" if sum(kinds.values()) > 1 else "")
    )
