"""Parcel geometries checked, repaired and reprojected, all at once (array work).

Every parcel ends ``ok``, ``repaired`` (with the reason) or ``error`` (with the reason);
an error row keeps its place in the output, it is never dropped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely

from georeview.errors import CRSError

__all__ = ["NONFINITE", "prepare_geometries"]


_GEOM_NAMES = np.array(
    [
        "Point",
        "LineString",
        "LinearRing",
        "Polygon",
        "MultiPoint",
        "MultiLineString",
        "MultiPolygon",
        "GeometryCollection",
    ],
    dtype=object,
)


#: Error of a parcel with a NaN or infinite coordinate.
NONFINITE = "a coordinate is not a finite number (NaN or Infinity)"


def prepare_geometries(geoms: Any, src_crs: Any, working_crs: Any) -> tuple[Any, Any, Any, Any]:
    """Check, repair and reproject parcel geometries, all at once.

    Returns
    -------
    (geoms, status, error, written) : numpy arrays
        Geometries in the working CRS (``None`` for error rows); status ``ok``,
        ``repaired`` or ``error``; the reason (repair or error) or ``""``; and the
        geometry to write in the input's CRS: the repaired one where the input was
        invalid, the input elsewhere (``None`` for error rows).
    """
    import geopandas as gpd

    geoms = np.asarray(geoms, dtype=object)
    n = geoms.size
    status = np.full(n, "ok", dtype=object)
    error = np.full(n, "", dtype=object)
    missing = shapely.is_missing(geoms)
    empty = missing.copy()
    empty[~missing] = shapely.is_empty(geoms[~missing])
    status[empty] = "error"
    error[empty] = "empty geometry"
    types = np.full(n, -1)
    types[~empty] = shapely.get_type_id(geoms[~empty])
    not_poly = ~empty & ~np.isin(types, (3, 6))
    if not_poly.any():
        status[not_poly] = "error"
        error[not_poly] = "a " + _GEOM_NAMES[types[not_poly]] + " is not a polygon"
    # A NaN or infinite vertex makes GEOS raise in is_valid/make_valid (for the whole
    # array): such a parcel is an error row before anything else looks at it.
    cand = np.flatnonzero(status == "ok")
    if cand.size:
        coords, owner = shapely.get_coordinates(geoms[cand], include_z=False, return_index=True)
        nonfinite = np.unique(owner[~np.isfinite(coords).all(axis=1)])
        if nonfinite.size:
            idx = cand[nonfinite]
            status[idx] = "error"
            error[idx] = NONFINITE
    ok = status == "ok"
    out = np.full(n, None, dtype=object)
    out[ok] = geoms[ok]
    out, status, error = _repair(out, status, error, "")
    # what the output holds, in the input's CRS: the repair, never the invalid input
    written = out.copy()
    if src_crs is None:
        raise CRSError("the parcel layer has no coordinate reference system", field="parcels")
    good = status != "error"
    if good.any() and not _same_crs(src_crs, working_crs):
        # (in the working CRS already, the coordinates do not move, and what the repair
        # above left is valid: checking every parcel again would find nothing)
        moved = gpd.GeoSeries(out[good], crs=src_crs).to_crs(working_crs).values
        out[good] = np.asarray(moved, dtype=object)
        bad = ~np.isfinite(shapely.bounds(out[good])).all(axis=1)
        if bad.any():
            idx = np.flatnonzero(good)[bad]
            status[idx], error[idx], out[idx] = "error", "coordinates do not transform", None
        out, status, error = _repair(out, status, error, " after reprojection")
    good = status != "error"
    zero = np.zeros(n, dtype=bool)
    zero[good] = shapely.area(out[good]) <= 0
    status[zero], error[zero], out[zero] = "error", "the parcel has no area", None
    written[status == "error"] = None
    return out, status, error, written


def _same_crs(src_crs: Any, working_crs: Any) -> bool:
    """Whether reprojecting from ``src_crs`` to ``working_crs`` leaves coordinates as they are.

    The test geopandas' ``to_crs`` makes before transforming (``CRS.is_exact_same``).
    """
    from pyproj import CRS

    return bool(CRS.from_user_input(src_crs).is_exact_same(CRS.from_user_input(working_crs)))


def _repair(out: Any, status: Any, error: Any, when: str) -> tuple[Any, Any, Any]:
    """Repair invalid polygons with make_valid, keeping only their polygonal part."""
    good = status != "error"
    invalid = np.zeros(out.size, dtype=bool)
    invalid[good] = ~shapely.is_valid(out[good])
    if not invalid.any():
        return out, status, error
    idx = np.flatnonzero(invalid)
    reasons = shapely.is_valid_reason(out[idx])
    fixed = shapely.make_valid(out[idx])
    parts, owner = shapely.get_parts(fixed, return_index=True)
    parts, sub = shapely.get_parts(parts, return_index=True)
    owner = owner[sub]
    keep = (shapely.get_type_id(parts) == 3) & ~shapely.is_empty(parts)
    parts, owner = parts[keep], owner[keep]
    rebuilt = np.full(idx.size, None, dtype=object)
    if parts.size:
        uniq, dense = np.unique(owner, return_inverse=True)
        rebuilt[uniq] = shapely.multipolygons(parts, indices=dense)
    lost = shapely.is_missing(rebuilt)
    rebuilt[~lost] = shapely.make_valid(rebuilt[~lost])
    out[idx] = rebuilt
    status[idx] = np.where(lost, "error", "repaired")
    error[idx] = [
        (f"invalid ({r}) and no area once repaired" if bad else f"{r}; repaired{when}")
        for r, bad in zip(reasons, lost, strict=True)
    ]
    out[idx[lost]] = None
    return out, status, error
