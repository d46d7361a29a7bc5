"""Many polygons at once against reference layers and the DEM (the screening's overlays).

Reference layers are dissolved once and cut into small pieces (like PostGIS
``ST_Subdivide``); an :class:`shapely.STRtree` pairs polygons with pieces, pieces that
contain a polygon properly give its whole area without an intersection, and the rest are
intersected pairwise in one call; areas are summed per polygon with :func:`numpy.bincount`.
Steep ground is counted per polygon on the DEM window that covers a group of them, by the
counter of the review's :func:`georeview.measure.steep.steep_slopes`
(:func:`~georeview.measure.steep.centre_zones`, :func:`~georeview.measure.steep.count_steep`).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import shapely

log = logging.getLogger(__name__)

__all__ = [
    "MAX_PIECE_VERTICES",
    "dissolve_pieces",
    "largest_label",
    "overlap_areas",
    "pair_areas",
    "steep_areas",
    "subdivide",
]

#: Pieces of a dissolved layer hold at most this many vertices (bounded intersection cost).
MAX_PIECE_VERTICES = 256
#: Largest DEM window read at once for one group of parcels, cells (lowered, never
#: raised, by ``GEOREVIEW_MAX_RASTER_CELLS``); larger groups are split in two.
MAX_DEM_CELLS = 50_000_000




def subdivide(geoms: Any, max_vertices: int = MAX_PIECE_VERTICES, max_depth: int = 30) -> Any:
    """Cut polygons into pieces of at most ``max_vertices`` vertices (like ``ST_Subdivide``).

    Pieces are halved across the longer side of their bounding box until small
    enough; the loop runs once per level (about log2 of the vertex count), over arrays.
    The pieces do not overlap and their union is the input.

    Returns
    -------
    numpy.ndarray of shapely.Polygon
    """
    todo = _polygon_parts(np.asarray(geoms, dtype=object))
    done = []
    for _ in range(max_depth):
        if todo.size == 0:
            break
        small = shapely.get_num_coordinates(todo) <= max_vertices
        done.append(todo[small])
        big = todo[~small]
        if big.size == 0:
            todo = big
            break
        b = shapely.bounds(big)
        wide = (b[:, 2] - b[:, 0]) >= (b[:, 3] - b[:, 1])
        mx = np.where(wide, (b[:, 0] + b[:, 2]) / 2, b[:, 2])
        my = np.where(wide, b[:, 3], (b[:, 1] + b[:, 3]) / 2)
        first = shapely.box(b[:, 0], b[:, 1], mx, my)
        second = shapely.box(
            np.where(wide, mx, b[:, 0]), np.where(wide, b[:, 1], my), b[:, 2], b[:, 3]
        )
        halves = np.concatenate(
            [shapely.intersection(big, first), shapely.intersection(big, second)]
        )
        todo = _polygon_parts(halves)
    done.append(todo)
    out = np.concatenate(done) if done else np.empty(0, dtype=object)
    return out[shapely.area(out) > 0]


def _polygon_parts(geoms: Any) -> Any:
    """The non-empty polygons among the parts of ``geoms`` (collections flattened)."""
    geoms = np.asarray(geoms, dtype=object)
    if geoms.size == 0:
        return np.empty(0, dtype=object)
    parts = shapely.get_parts(geoms[~shapely.is_missing(geoms)])
    parts = shapely.get_parts(parts)  # collections inside multi-geometries
    keep = (shapely.get_type_id(parts) == 3) & ~shapely.is_empty(parts)
    return parts[keep]


def dissolve_pieces(geoms: Any, max_vertices: int = MAX_PIECE_VERTICES) -> Any:
    """Union a layer's polygons (no area counted twice) and subdivide the union."""
    polys = _polygon_parts(shapely.make_valid(np.asarray(geoms, dtype=object)))
    if polys.size == 0:
        return polys
    return subdivide(np.array([shapely.union_all(polys)], dtype=object), max_vertices)


def pair_areas(parcels: Any, pieces: Any, tree: Any = None) -> tuple[Any, Any, Any]:
    """Intersection areas of every intersecting (parcel, piece) pair.

    The tree is over the parcels and the pieces are its queries: GEOS prepares each
    query geometry for its predicate, so a piece is prepared once and tested against
    all the parcels near it (a parcel-by-parcel query would test each piece unprepared).
    The preparation is GEOS's own temporary one, so the pieces shared between the
    threads of a Dask worker are never prepared in place (a prepared geometry builds its
    indexes lazily on first use, and two threads using one crash).

    Parameters
    ----------
    parcels, pieces : array of shapely geometries
        Parcels and non-overlapping (or labelled) pieces, same projected CRS.
    tree : shapely.STRtree, optional
        Tree of ``parcels`` (built when not given; pass one to share it between layers).

    Returns
    -------
    (parcel_index, piece_index, area) : tuple of numpy.ndarray
        Pairs ordered by parcel, then piece; area in CRS units squared (pairs that merely
        touch have area 0).
    """
    if len(pieces) == 0 or len(parcels) == 0:
        e = np.empty(0, dtype=np.intp)
        return e, e, np.empty(0)
    tree = tree if tree is not None else shapely.STRtree(parcels)
    j, i = tree.query(pieces, predicate="intersects")
    # a fixed pair order, so that each parcel's areas are summed in the same order
    order = np.lexsort((j, i))
    i, j = i[order], j[order]
    area = np.empty(i.size)
    if i.size:
        j_in, i_in = tree.query(pieces, predicate="contains_properly")
        n_pieces = np.int64(len(pieces))
        inside = np.isin(i.astype(np.int64) * n_pieces + j, i_in.astype(np.int64) * n_pieces + j_in)
        area[inside] = shapely.area(parcels[i[inside]])
        cut = ~inside
        area[cut] = shapely.area(shapely.intersection(parcels[i[cut]], pieces[j[cut]]))
    return i, j, area


def overlap_areas(parcels: Any, pieces: Any | None, tree: Any = None) -> Any:
    """Area of each parcel covered by a dissolved layer, CRS units squared.

    ``None`` pieces (layer absent) give NaN (unknown) for every parcel. ``tree``: an
    :class:`shapely.STRtree` of ``parcels`` shared between layers (see :func:`pair_areas`).
    """
    n = len(parcels)
    if pieces is None:
        return np.full(n, np.nan)
    i, _, area = pair_areas(parcels, pieces, tree)
    return np.bincount(i, weights=area, minlength=n).astype(float)


def largest_label(
    parcels: Any, pieces: Any, labels: Any, n_labels: int, tree: Any = None
) -> tuple[Any, Any]:
    """For each parcel, the label holding most of its area, and that area.

    Returns ``(label, area)``; label -1 and area 0 where no piece overlaps. ``tree``: an
    :class:`shapely.STRtree` of ``parcels`` (see :func:`pair_areas`).
    """
    n = len(parcels)
    best = np.full(n, -1, dtype=np.intp)
    best_area = np.zeros(n)
    i, j, area = pair_areas(parcels, pieces, tree)
    if i.size == 0:
        return best, best_area
    key = i.astype(np.int64) * n_labels + labels[j]
    uniq, inv = np.unique(key, return_inverse=True)
    sums = np.bincount(inv, weights=area)
    pi, lab = uniq // n_labels, uniq % n_labels
    order = np.lexsort((lab, -sums, pi))  # per parcel: largest area first, lowest label on ties
    first = np.ones(order.size, dtype=bool)
    first[1:] = pi[order][1:] != pi[order][:-1]
    take = order[first & (sums[order] > 0)]
    best[pi[take]] = lab[take]
    best_area[pi[take]] = sums[take]
    return best, best_area


# ------------------------------------------------------------------- steep slopes per polygon


def steep_areas(
    geoms: Any,
    *,
    dem_path: str | None,
    vertical_units: str | None,
    working_crs: Any,
    threshold_pct: float,
) -> Any:
    """Steep-slope area of each parcel from the DEM, square feet: ``(ge, gt)`` arrays.

    Parcel ids are rasterised once onto the DEM window and the cells counted per parcel by
    the review's counter (:func:`georeview.measure.steep.centre_zones`: a cell belongs to
    the parcel that holds its centre; :func:`georeview.measure.steep.count_steep`: the
    ``>=`` and ``>`` comparisons), on slopes from :func:`georeview.terrain.slope_pct`. NaN
    where the DEM does not cover the parcel or no cell inside has a slope. Overlapping
    parcels: a cell counts for the last one only.
    """
    n = len(geoms)
    ge = np.full(n, np.nan)
    gt = np.full(n, np.nan)
    if dem_path is None or n == 0:
        return ge, gt
    import geopandas as gpd

    from georeview.measure.dem import dem_crs_info, open_dem

    with open_dem(dem_path) as src:
        info = dem_crs_info(src.crs, dem_path)
        rb = src.bounds
    ok = ~shapely.is_missing(geoms)
    local = np.full(n, None, dtype=object)
    if not ok.any():
        return ge, gt
    local[ok] = np.asarray(
        gpd.GeoSeries(geoms[ok], crs=working_crs).to_crs(info.crs).values, dtype=object
    )
    b = np.full((n, 4), np.nan)
    b[ok] = shapely.bounds(local[ok])
    covered = ok & (b[:, 0] >= rb.left) & (b[:, 2] <= rb.right)
    covered &= (b[:, 1] >= rb.bottom) & (b[:, 3] <= rb.top)
    groups = [np.flatnonzero(covered)]
    from georeview.config import limits

    max_cells = min(MAX_DEM_CELLS, limits().max_raster_cells)
    while groups:
        idx = groups.pop()
        if idx.size == 0:
            continue
        cells = _window_cells(dem_path, b[idx])
        if cells > max_cells and idx.size == 1:
            # One parcel larger than the raster-cell limit: its steep area stays unknown.
            log.warning(
                "parcel %d needs a DEM window of %d cells, more than the limit of %d"
                " (GEOREVIEW_MAX_RASTER_CELLS); steep slopes not measured",
                int(idx[0]),
                cells,
                max_cells,
            )
            continue
        if cells > max_cells:
            cx = (b[idx, 0] + b[idx, 2]) / 2
            cy = (b[idx, 1] + b[idx, 3]) / 2
            axis = cx if np.ptp(cx) >= np.ptp(cy) else cy
            order = np.argsort(axis, kind="stable")
            half = idx.size // 2
            groups += [idx[order[:half]], idx[order[half:]]]
            continue
        g_ge, g_gt = _steep_group(dem_path, vertical_units, local[idx], b[idx], threshold_pct)
        ge[idx], gt[idx] = g_ge, g_gt
    return ge, gt


def _window_cells(path: str, bounds: Any) -> int:
    from georeview.measure.dem import open_dem

    with open_dem(path) as src:
        w = (bounds[:, 2].max() - bounds[:, 0].min()) / abs(src.transform.a) + 3
        h = (bounds[:, 3].max() - bounds[:, 1].min()) / abs(src.transform.e) + 3
    return int(w * h)


def _steep_group(
    dem_path: str, vertical_units: str | None, local: Any, b: Any, threshold: float
) -> tuple[Any, Any]:
    """Steep cells of one group of parcels (DEM CRS geometries) read in one window."""
    from georeview.measure.dem import read_dem_window
    from georeview.measure.slope import slope_pct
    from georeview.measure.steep import centre_zones, count_steep

    bbox = shapely.box(b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max())
    win = read_dem_window(dem_path, vertical_units or "m", bbox, _dem_crs(dem_path), margin=1)
    zf = win.h_m_per_unit / win.v_m_per_unit
    slope = slope_pct(win.elev, win.xres * zf, win.yres * zf)
    zones = centre_zones(local, slope.shape, win.transform)
    counts = count_steep(slope, threshold, zones, local.size)
    cell = win.cell_area_sqft()
    ge = np.where(counts.n_valid > 0, counts.n_ge * cell, np.nan)
    gt = np.where(counts.n_valid > 0, counts.n_gt * cell, np.nan)
    return ge, gt


def _dem_crs(path: str) -> Any:
    from georeview.measure.dem import dem_crs_info, open_dem

    with open_dem(path) as src:
        return dem_crs_info(src.crs, path).crs


