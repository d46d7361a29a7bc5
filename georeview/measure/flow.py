"""Downstream trace: does site stormwater reach a surface water or wetland within 1/4 mile.

Somers 17.10(B)(4)(h) asks the site map to show where stormwater discharges to a surface
water or wetland within 1/4 mile downstream. This module finds the discharge points (site
cells whose D8 flow leaves the site) on the DEM and follows the D8 path from each for
1,320 ft.

Flow directions come from pyflwdir's priority flood (Wang & Liu, 2006), which fills every
depression to its spill level, then steepest descent where the filled surface falls and the
shortest path over each flat to where it drains (after Barnes et al., 2014; numba kernels in
:mod:`georeview.measure._flowkernels`), so a trace never stops in a pit or on a flat.
Before filling, mapped streams, water bodies and wetlands are *burned in as sinks*
(lowered below every other cell and seeded as outlets, as DESIGN §1 asks): a trace ends where
it meets them and a kettle lake below its basin's rim is not filled over. A path *meets* a
mapped feature when it enters a cell whose centre lies within 1.5 cells of the feature, so a
stream that the DEM's own channel misses by a cell still counts
(:mod:`georeview.measure.flow_features`; the routing is :mod:`georeview.measure.flow_routing`).

The meet cells only *detect* the meet; the distance is measured on the true geometry
(:func:`_met_lengths`): along the path's polyline through the cell centres, from where it
last leaves the site polygon to its first point on the feature's own geometry (the line of a
stream, the polygon of a water body or wetland; no buffer, which would shorten it). The path
ends at its meet cell's centre, up to 1.5 cells short of the feature, so its last leg is
the straight line from that centre to the feature's nearest point: the length of the leg a
flow path must at least cover, and the rule when the path runs beside a stream, or crosses
a stream thinner than a cell between two centres, without touching it. A path's length is
therefore never shorter than the straight line from the site to the feature it reaches.
(Measured from the start cell's centre to the meet cell's centre, as it was before, it
came out up to 1.5 cells short, 15 m = 49.2 ft on a 10 m DEM: the meet distance, when
the start centre lies on the site's edge; a site cell within 1.5 cells of a water outside the
site gave 0 ft, and a site smaller than a cell, whose start cell's centre may lie outside it,
up to half a diagonal more.)

The DEM window is the site's bounds grown by the trace length and a margin. Because the
filled surface of a depression can depend on what lies beyond the window, the window is
grown (doubling the margin) whenever a path crosses a filled depression that touches a
window side that is not the raster's edge; so results do not depend on the initial margin.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from georeview.errors import CoverageError, InputError, LimitError
from georeview.measure import flow_routing as routing
from georeview.measure.dem import DemWindow, geometry_to_crs, read_dem_window
from georeview.measure.flow_features import FeatureLayer, features_in_dem_crs, rasterize_features
from georeview.units import M_PER_FT

if TYPE_CHECKING:
    import geopandas as gpd
    from shapely.geometry.base import BaseGeometry

logger = logging.getLogger(__name__)

__all__ = ["DischargePoint", "DownstreamResult", "trace_downstream"]


#: How many times the window may be doubled before giving up on window independence.
_MAX_GROWTH = 3


@dataclass(frozen=True)
class DischargePoint:
    """One place where D8 flow leaves the site, and where its path goes.

    Attributes
    ----------
    x, y : float
        Centre of the last site cell on the path, in the working CRS.
    contributing_area_sqft : float
        Site area that drains through this cell.
    reaches_water : bool or None
        Whether the path meets a mapped water or wetland within the trace length
        (None when the DEM does not cover the path).
    distance_ft : float or None
        Flow path length from where the path last leaves the site boundary to the first
        point of the feature met (None unless it is met within the trace length).
    receiving_feature : str or None
        Name (or ``water <id>`` / ``wetland <id>``) of the feature met.
    """

    x: float
    y: float
    contributing_area_sqft: float
    reaches_water: bool | None
    distance_ft: float | None
    receiving_feature: str | None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "x": self.x,
            "y": self.y,
            "contributing_area_sqft": self.contributing_area_sqft,
            "reaches_water": self.reaches_water,
            "distance_ft": self.distance_ft,
            "receiving_feature": self.receiving_feature,
        }


@dataclass(frozen=True)
class DownstreamResult:
    """Result of the 1/4-mile downstream trace (report.json ``measures.downstream``).

    Attributes
    ----------
    reaches_water_within_quarter_mile : bool or None
        True when the path from any discharge point meets a mapped surface water or
        wetland within *length_ft*; None when that cannot be told (see *reason*).
    distance_ft : float or None
        Shortest flow path length from the site boundary to the receiving feature, over the
        discharge points (see :class:`DischargePoint`).
    receiving_feature : str or None
        The feature met at *distance_ft*.
    discharge_points : tuple of DischargePoint
        The discharge points, largest contributing area first (at most ``max_points``,
        always including the one that gives *distance_ft*).
    path : shapely geometry or None
        MultiLineString of the traced paths of *discharge_points*, in the working CRS.
    reason : str or None
        Why *reaches_water_within_quarter_mile* is None.
    length_ft : float
        Trace length (1,320 ft).
    """

    reaches_water_within_quarter_mile: bool | None
    distance_ft: float | None
    receiving_feature: str | None
    discharge_points: tuple[DischargePoint, ...] = ()
    path: BaseGeometry | None = field(default=None, compare=False, repr=False)
    reason: str | None = None
    #: The traced distance, ft (the ordinance's trace length).
    length_ft: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (the path geometry goes to the map, not here)."""
        return {
            "reaches_water_within_quarter_mile": self.reaches_water_within_quarter_mile,
            "distance_ft": self.distance_ft,
            "receiving_feature": self.receiving_feature,
            "discharge_points": [p.to_dict() for p in self.discharge_points],
            "reason": self.reason,
            "length_ft": self.length_ft,
        }


def _step_lengths(path: np.ndarray, ncol: int, xres: float, yres: float) -> np.ndarray:
    """Cumulative path length (CRS units) at each cell of a linear-index path."""
    r, c = np.divmod(path.astype(np.int64), ncol)
    steps = np.hypot(np.diff(c) * xres, np.diff(r) * yres)
    return np.concatenate([[0.0], np.cumsum(steps)])


@dataclass(frozen=True)
class _Trace:
    start: int
    cells: np.ndarray  # linear indices, truncated at the meet cell or the length
    reaches: bool | None
    distance_ft: float | None
    feature_code: int
    grow: bool  # the window must grow for a trustworthy answer
    uncovered: bool  # left the DEM / entered nodata before the length


def _classify(
    idx0: int,
    path: np.ndarray,
    met_ft: float,
    code_flat: np.ndarray,
    meet_flat: np.ndarray,
    filled_flat: np.ndarray,
    edge_touch: set[int],
    win: DemWindow,
    length_ft: float,
) -> _Trace:
    """Classify how one D8 path ends (it stops at a meet cell, a pit or the length).

    *met_ft* is the path's measured length from the site boundary to the feature it meets
    (:func:`_met_lengths`), NaN when its last cell meets none. The kernel traced the path
    past *length_ft* from its start cell's centre (by the site's diagonal and two cells),
    so a feature whose measured distance is within *length_ft* is not cut off; a path that
    meets nothing is cut at *length_ft* from its start cell's centre.
    """
    ncol = win.elev.shape[1]
    ft_per_unit = win.h_m_per_unit / M_PER_FT
    code = int(meet_flat[path[-1]])
    tol = length_ft * 1e-9
    if code and met_ft <= length_ft + tol:
        labs = filled_flat[path]
        grow = bool(edge_touch.intersection(np.unique(labs[labs > 0]).tolist()))
        return _Trace(idx0, path, True, float(met_ft), code, grow, False)
    dist_ft = _step_lengths(path, ncol, win.xres, win.yres) * ft_per_unit
    within = dist_ft <= length_ft + tol
    path, dist_ft = path[within], dist_ft[within]
    labs = filled_flat[path]
    grow = bool(edge_touch.intersection(np.unique(labs[labs > 0]).tolist()))
    if code:
        # it meets a feature, but farther than the length once measured to the feature itself
        return _Trace(idx0, path, False, None, 0, grow, False)
    end = int(path[-1])
    cell_ft = max(win.xres, win.yres) * ft_per_unit
    if code_flat[end] == 0 and dist_ft[-1] < length_ft - 1.5 * cell_ft:
        # a pit that is not a mapped feature: the window's edge or the data's edge
        r, c = divmod(end, ncol)
        rows = win.elev.shape[0]
        on_side = (r == 0, r == rows - 1, c == 0, c == ncol - 1)
        at_raster = win.touches_raster_edge
        inner_side = any(s and not a for s, a in zip(on_side, at_raster, strict=True))
        return _Trace(idx0, path, None, None, 0, grow or inner_side, not inner_side)
    return _Trace(idx0, path, False, None, 0, grow, False)


def _met_lengths(
    cells: np.ndarray,
    offsets: np.ndarray,
    meet_flat: np.ndarray,
    site_local: BaseGeometry,
    geoms: list[Any],
    win: DemWindow,
) -> np.ndarray:
    """Length (CRS units) of each path from where it last leaves the site to its feature.

    A path that ends on a meet cell is measured along its polyline through the cell
    centres, extended at each end to the true geometry: it begins at the nearest point of
    the site polygon to its start cell's centre (that centre itself when it lies in the
    site, as it does unless the site is smaller than a cell) and ends with a straight leg
    from the meet cell's centre to the nearest point of the feature met (at most 1.5 cells:
    a stream the DEM's channel runs beside, or crosses between two centres, is reached
    there). The length runs from the last point of the polyline in the site polygon before
    its first point on the feature to that first point, so it is never shorter than the
    straight line from the site to the feature; it is 0 when the feature touches the
    site there. Paths that meet nothing are NaN. Vectorised over paths (shapely).

    Parameters
    ----------
    cells, offsets : numpy.ndarray
        The kernel's paths: path k is ``cells[offsets[k]:offsets[k + 1]]`` (linear indices).
    meet_flat : numpy.ndarray
        Flat meet codes (1-based index into *geoms*, 0 = none).
    site_local : shapely geometry
        The site in the DEM CRS.
    geoms : list of shapely geometry
        The mapped features in the DEM CRS (as rasterised).
    win : DemWindow
        The DEM window (its transform places the cell centres).

    Returns
    -------
    numpy.ndarray
        One length per path, CRS units (NaN where the path meets no feature).
    """
    import shapely

    n_paths = offsets.size - 1
    out = np.full(n_paths, np.nan)
    code = meet_flat[cells[offsets[1:] - 1]]  # a path stops on its first meet cell
    k = np.flatnonzero(code > 0)
    if k.size == 0:
        return out
    n_cells = offsets[k + 1] - offsets[k]
    first = np.cumsum(n_cells) - n_cells
    pos = np.arange(n_cells.sum()) - np.repeat(first, n_cells)
    r, c = np.divmod(cells[np.repeat(offsets[k], n_cells) + pos], win.elev.shape[1])
    tf = win.transform
    centres = np.column_stack([tf.c + tf.a * (c + 0.5), tf.f + tf.e * (r + 0.5)])
    feats = np.asarray(geoms, dtype=object)[code[k] - 1]
    # the two end legs: nearest point of the site to the first centre, of the feature to
    # the last (shortest_line runs from its first argument to a point on its second)
    start_leg = shapely.shortest_line(shapely.points(centres[first]), site_local)
    end_leg = shapely.shortest_line(shapely.points(centres[first + n_cells - 1]), feats)
    on_site = shapely.get_coordinates(start_leg)[1::2]
    on_feat = shapely.get_coordinates(end_leg)[1::2]
    # one coordinate run per path: site point, centres, feature point; repeated points out
    m = n_cells + 2
    head = np.cumsum(m) - m
    xy = np.empty((int(m.sum()), 2))
    xy[head], xy[head + m - 1] = on_site, on_feat
    xy[np.arange(len(centres)) + np.repeat(head + 1 - first, n_cells)] = centres
    pid = np.repeat(np.arange(k.size), m)
    keep = np.r_[True, (pid[1:] != pid[:-1]) | (xy[1:] != xy[:-1]).any(axis=1)]
    # the line without its end leg (unless the feature point is the last centre itself)
    pre = keep.copy()
    pre[head + m - 1] = False
    out[k] = 0.0
    # a path reduced to one point is a centre in the site and on the feature: length 0
    lines_ok = np.bincount(pid[keep], minlength=k.size) >= 2
    if lines_ok.any():
        lines = _geoms(xy[keep], pid[keep])[lines_ok]
        prefix = _geoms(xy[pre], pid[pre])[lines_ok]
        out[k[lines_ok]] = _clipped_lengths(lines, prefix, feats[lines_ok], site_local)
    return out


def _geoms(xy: np.ndarray, pid: np.ndarray) -> np.ndarray:
    """One geometry per path id: a LineString, or a Point for a run of one coordinate."""
    import shapely

    count = np.bincount(pid)
    first = np.cumsum(count) - count
    out = shapely.points(xy[first])
    long = count >= 2
    if long.any():
        sel = long[pid]
        out[long] = shapely.linestrings(xy[sel], indices=(np.cumsum(long) - 1)[pid[sel]])
    return out


def _clipped_lengths(
    lines: np.ndarray, prefix: np.ndarray, feats: np.ndarray, site: BaseGeometry
) -> np.ndarray:
    """Length of each line from its last point in *site* before its first on its feature.

    *lines* begin in the site and end at the nearest point of their feature (of *feats*)
    to their last cell centre; *prefix* is each line without that last leg. No point of
    the leg before its end is on the feature (it would be nearer), so only a line whose
    prefix touches its feature is intersected with it (GEOS overlay costs the feature's
    vertex count per line: a lake or wetland outline can have thousands).
    """
    import shapely

    t_hit = shapely.length(lines)
    shapely.prepare(feats)
    early = np.flatnonzero(shapely.intersects(feats, prefix))
    if early.size:
        parts = shapely.intersection(lines[early], feats[early])
        xy, i = shapely.get_coordinates(parts, return_index=True)
        t = shapely.line_locate_point(lines[early][i], shapely.points(xy))
        np.minimum.at(t_hit, early[i], t)
    t_exit = _last_in_site(lines, site, t_hit)
    # a feature reached inside the site (it crosses the site there) is reached at once
    in_site = shapely.intersects(site, shapely.line_interpolate_point(lines, t_hit))
    return np.where(in_site, 0.0, t_hit - t_exit)


def _last_in_site(lines: np.ndarray, site: BaseGeometry, t_hit: np.ndarray) -> np.ndarray:
    """Position along each line of its last point in *site* at or before *t_hit*.

    The lines begin in (or on) the site. Their vertices in the site are found by one
    point-in-polygon test (a path can run back across the site for hundreds of cells);
    only each line's tail from its last such vertex is intersected with the site, for a
    crossing between vertices (the edge leaving it, a corner cut), and only as far as a
    segment can reach the site: one ending within a step of the site's bounds.
    """
    import shapely

    xy, li = shapely.get_coordinates(lines, return_index=True)
    new_line = np.r_[True, li[1:] != li[:-1]]
    head = np.flatnonzero(new_line)
    step = np.where(new_line[1:], 0.0, np.hypot(*np.diff(xy, axis=0).T))
    cum = np.cumsum(np.r_[0.0, step])
    cum -= cum[head][li]
    inside = shapely.intersects_xy(site, xy[:, 0], xy[:, 1]) & (cum <= t_hit[li])
    last = head.copy()  # the first vertex, the line's start on the site, when none is in it
    np.maximum.at(last, li[inside], np.flatnonzero(inside))
    t_exit = cum[last]
    # a segment touching the site has an end within its own length of the site's bounds
    x0, y0, x1, y1 = site.bounds
    reach = step.max(initial=0.0)
    near = (
        (xy[:, 0] >= x0 - reach)
        & (xy[:, 0] <= x1 + reach)
        & (xy[:, 1] >= y0 - reach)
        & (xy[:, 1] <= y1 + reach)
        & (cum <= t_hit[li])
    )
    end = last.copy()
    np.maximum.at(end, li[near], np.flatnonzero(near))
    end = np.minimum(end + 1, np.r_[head[1:], len(xy)] - 1)  # and the segment after it
    index = np.arange(len(xy))
    tail = (index >= last[li]) & (index <= end[li])
    lengthy = np.bincount(li[tail], minlength=len(lines)) >= 2
    sel = tail & lengthy[li]
    if sel.any():
        rows = np.flatnonzero(lengthy)
        tails = shapely.linestrings(xy[sel], indices=(np.cumsum(lengthy) - 1)[li[sel]])
        pts, i = shapely.get_coordinates(shapely.intersection(tails, site), return_index=True)
        t = t_exit[rows[i]] + shapely.line_locate_point(tails[i], shapely.points(pts))
        before = t <= t_hit[rows[i]]
        np.maximum.at(t_exit, rows[i][before], t[before])
    return t_exit


def _route(
    win: DemWindow,
    site_local: BaseGeometry,
    layers: list[FeatureLayer],
    length_ft: float,
    warm: threading.Thread | None = None,
) -> tuple[list[_Trace], np.ndarray, list[str], bool]:
    """Route flow on one window; return traces, contributing cells, feature labels, grow."""
    geoms, labels = features_in_dem_crs(layers, win)
    sink, meet = rasterize_features(geoms, win)
    if warm is not None:
        warm.join()
    d8, depth = routing.d8_with_sinks(win.elev, sink, win.xres, win.yres)
    ncol = win.elev.shape[1]
    code_flat = d8.ravel()
    site = routing.site_cells(site_local, win)
    if not site.any():
        raise CoverageError("the DEM has no data inside the site", path=win.path)
    site_flat = site.ravel()
    site_idx = np.flatnonzero(site_flat)
    ds = routing.downstream(code_flat, site_idx, ncol)
    # discharge: flow leaves the site, or ends inside it on a mapped feature
    leaves = ~site_flat[ds] | (ds == site_idx)
    starts = site_idx[leaves | (meet.ravel()[site_idx] > 0)]
    contrib = routing.contributing_cells(d8, site)
    filled_labels, edge_touch = routing.filled_regions(depth, win)
    # numba trace: stops at a meet cell, a pit, or before passing max_len (CRS units). The
    # distance is measured from where a path last leaves the site, which can lie past its
    # start cell (a path that crosses a corner of a concave site again): the trace runs on
    # for the site's diagonal and two cells, and the path is cut at length_ft afterwards.
    x0, y0, x1, y1 = site_local.bounds
    max_len = (
        length_ft * M_PER_FT / win.h_m_per_unit
        + math.hypot(x1 - x0, y1 - y0)
        + 2 * max(win.xres, win.yres)
    )
    cells, offsets = routing.trace_paths(
        code_flat, ncol, starts, meet > 0, max_len, win.xres, win.yres
    )
    meet_flat, filled_flat = meet.ravel(), filled_labels.ravel()
    met_ft = _met_lengths(cells, offsets, meet_flat, site_local, geoms, win) * (
        win.h_m_per_unit / M_PER_FT
    )
    traces = [
        _classify(
            int(i),
            cells[offsets[k] : offsets[k + 1]],
            float(met_ft[k]),
            code_flat,
            meet_flat,
            filled_flat,
            edge_touch,
            win,
            length_ft,
        )
        for k, i in enumerate(starts)
    ]
    grow = any(t.grow for t in traces)
    return traces, contrib, labels, grow


def trace_downstream(
    dem_path: object,
    vertical_units: str,
    site_geom: BaseGeometry,
    site_crs: Any,
    *,
    waters: gpd.GeoDataFrame | None = None,
    wetlands: gpd.GeoDataFrame | None = None,
    name_field: str = "GNIS_NAME",
    water_id_field: str | None = None,
    wetland_id_field: str | None = None,
    length_ft: float,
    working_crs: Any = "EPSG:3071",
    margin_ft: float = 660.0,
    max_points: int = 10,
) -> DownstreamResult:
    """Trace stormwater downstream from the site's discharge points for 1/4 mile.

    Parameters
    ----------
    dem_path : path-like
        DEM in a projected CRS (never warped).
    vertical_units : {"m", "ft", "us_ft"}
        Units of the elevations.
    site_geom : shapely Polygon or MultiPolygon
        Site boundary.
    site_crs : CRS-like
        CRS of *site_geom*.
    waters : geopandas.GeoDataFrame, optional
        Mapped streams (lines) and water bodies (polygons), any CRS.
    wetlands : geopandas.GeoDataFrame, optional
        Mapped wetlands (polygons), any CRS.
    name_field : str, optional
        Name attribute of *waters* (``GNIS_NAME``); features without a name are
        reported as ``water <id>``.
    water_id_field, wetland_id_field : str, optional
        Id attributes (default: the row index); wetlands are reported as ``wetland <id>``.
    length_ft : float
        Trace length along the path, ft (the ordinance's ``downstream_trace_ft``).
    working_crs : CRS-like, optional
        CRS of the returned coordinates and path (default EPSG:3071).
    margin_ft : float, optional
        Initial margin added to the site bounds beyond *length_ft* when reading the DEM.
    max_points : int, optional
        How many discharge points (largest contributing area first) to report and draw.

    Returns
    -------
    DownstreamResult
        *reaches_water_within_quarter_mile* is None, with a *reason*, when the DEM does
        not cover the site or the path (for the ``needs_info`` finding).

    Raises
    ------
    georeview.errors.DataSourceError, georeview.errors.CRSError
        Unreadable DEM, or a DEM in a geographic CRS.
    georeview.errors.InputError
        Empty site geometry, a feature layer without CRS, a non-positive length.
    georeview.errors.LimitError
        When even the first window passes ``GEOREVIEW_MAX_RASTER_CELLS`` (a grown window
        that would pass it is not read: the trace of the last window stands).
    """
    if site_geom is None or site_geom.is_empty:
        raise InputError("the site geometry is empty")
    if not (length_ft > 0 and math.isfinite(length_ft)):
        raise InputError(f"the trace length must be positive, got {length_ft}")
    layers = [
        (waters, name_field, water_id_field, "water"),
        (wetlands, None, wetland_id_field, "wetland"),
    ]
    margin = float(margin_ft)
    # pyflwdir's and numba's start-up overlaps reading the DEM and rasterising the features
    # (GDAL and shapely release the GIL); the kernels are needed only once the window is ready
    warm = routing.start_warm_up()
    for attempt in range(_MAX_GROWTH + 1):
        try:
            grown = read_dem_window(
                dem_path,
                vertical_units,
                site_geom,
                site_crs,
                margin=length_ft + margin,
                margin_units="ft",
            )
        except LimitError as exc:
            if attempt == 0:
                raise
            # A larger window would pass the raster-cell limit: keep the last trace.
            logger.warning("downstream trace: window not grown further (%s)", exc.one_line())
            break
        except CoverageError as exc:
            logger.info("downstream trace needs more data: %s", exc)
            return DownstreamResult(None, None, None, reason=str(exc), length_ft=length_ft)
        win = grown
        if min(win.elev.shape) < 2:
            # a path needs a grid of at least 2 x 2 cells to run over
            reason = f"the DEM window is {win.elev.shape[0]} x {win.elev.shape[1]} cells"
            return DownstreamResult(None, None, None, reason=reason, length_ft=length_ft)
        try:
            site_local = geometry_to_crs(site_geom, site_crs, win.crs)
            traces, contrib, labels, grow = _route(win, site_local, layers, length_ft, warm)
        except CoverageError as exc:
            logger.info("downstream trace needs more data: %s", exc)
            return DownstreamResult(None, None, None, reason=str(exc), length_ft=length_ft)
        if not grow or all(win.touches_raster_edge):
            break
        logger.info(
            "downstream trace: window grown (attempt %d), margin %.0f ft", attempt + 1, margin
        )
        margin = 2.0 * margin + length_ft
    return _summarise(traces, contrib, labels, win, length_ft, working_crs, max_points)


def _summarise(
    traces: list[_Trace],
    contrib: np.ndarray,
    labels: list[str],
    win: DemWindow,
    length_ft: float,
    working_crs: Any,
    max_points: int,
) -> DownstreamResult:
    """Turn the traces into the reported result."""
    if not traces:
        return DownstreamResult(
            None, None, None, reason="no discharge point found on the DEM", length_ft=length_ft
        )
    flat_contrib = contrib.ravel()
    order = sorted(
        range(len(traces)), key=lambda k: (-flat_contrib[traces[k].start], traces[k].start)
    )
    best, reaches, dist, feature, reason = _answer(traces, order, labels, win, length_ft)
    shown = order[:max_points]
    if best is not None and best not in shown:
        shown.append(best)
    points, path = _discharge_geometry(traces, shown, flat_contrib, labels, win, working_crs)
    logger.info(
        "downstream trace from %d discharge cells: reaches=%s distance_ft=%s feature=%s",
        len(traces),
        reaches,
        dist,
        feature,
    )
    return DownstreamResult(
        reaches_water_within_quarter_mile=reaches,
        distance_ft=dist,
        receiving_feature=feature,
        discharge_points=points,
        path=path,
        reason=reason,
        length_ft=length_ft,
    )


def _answer(
    traces: list[_Trace], order: list[int], labels: list[str], win: DemWindow, length_ft: float
) -> tuple[int | None, bool | None, float | None, str | None, str | None]:
    """The site's answer: (trace giving it, reaches, distance_ft, feature, reason).

    The shortest path that meets a feature answers yes; failing that, a path that leaves
    the data before the length leaves the answer unknown; otherwise no.
    """
    reach_ft = {
        k: d for k in order if traces[k].reaches and (d := traces[k].distance_ft) is not None
    }
    best = min(reach_ft, key=reach_ft.__getitem__) if reach_ft else None
    if best is not None:
        t = traces[best]
        return best, True, t.distance_ft, labels[t.feature_code - 1], None
    uncovered = [k for k in order if traces[k].uncovered]
    if uncovered:
        r, c = divmod(int(traces[uncovered[0]].cells[-1]), win.elev.shape[1])
        reason = (
            f"the DEM {win.path} does not cover the flow path: it leaves the DEM or its data"
            f" at row {win.row_off + r}, column {win.col_off + c}, before {length_ft:.0f} ft"
        )
        return None, None, None, None, reason
    return None, False, None, None, None


def _discharge_geometry(
    traces: list[_Trace],
    shown: list[int],
    flat_contrib: np.ndarray,
    labels: list[str],
    win: DemWindow,
    working_crs: Any,
) -> tuple[tuple[DischargePoint, ...], BaseGeometry | None]:
    """The *shown* traces' discharge points and paths (a MultiLineString) in *working_crs*."""
    import geopandas as gpd
    from shapely import LineString, MultiLineString, Point

    cell_sqft = win.cell_area_sqft()
    ncol = win.elev.shape[1]
    tf = win.transform
    pts, lines = [], []
    for k in shown:
        r, c = np.divmod(traces[k].cells.astype(np.int64), ncol)
        xs = tf.c + tf.a * (c + 0.5)
        ys = tf.f + tf.e * (r + 0.5)
        pts.append(Point(xs[0], ys[0]))
        if len(xs) >= 2:
            lines.append(LineString(np.column_stack([xs, ys])))
    pts_w = gpd.GeoSeries(pts, crs=win.crs).to_crs(working_crs)
    points = tuple(
        DischargePoint(
            x=float(p.x),
            y=float(p.y),
            contributing_area_sqft=float(flat_contrib[traces[k].start] * cell_sqft),
            reaches_water=traces[k].reaches,
            distance_ft=traces[k].distance_ft,
            receiving_feature=(
                labels[traces[k].feature_code - 1] if traces[k].feature_code else None
            ),
        )
        for p, k in zip(pts_w, shown, strict=True)
    )
    path = None
    if lines:
        path = gpd.GeoSeries([MultiLineString(lines)], crs=win.crs).to_crs(working_crs).iloc[0]
    return points, path
