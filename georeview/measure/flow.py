"""Downstream trace: does site stormwater reach a surface water or wetland within 1/4 mile.

Somers 17.10(B)(4)(h) asks the site map to show where stormwater discharges to a surface
water or wetland within 1/4 mile downstream. This module finds the discharge points (site
cells whose D8 flow leaves the site) on the DEM and follows the D8 path from each for
1,320 ft.

Flow directions come from a priority flood (Barnes, Lehman & Mulla, 2014; held to pyflwdir's
Wang & Liu fill in the tests), which fills every depression to its spill level, then
steepest descent where the filled surface falls and the shortest path over each flat to
where it drains (after Barnes et al., 2014; numba kernels in
:mod:`georeview.measure._flowkernels`), so a trace never stops in a pit or on a flat.
Before filling, mapped streams, water bodies and wetlands are *burned in as sinks*
(lowered below every other cell and seeded as outlets, as DESIGN §1 asks): a trace ends where
it meets them and a kettle lake below its basin's rim is not filled over. A path *meets* a
mapped feature when it enters a cell whose centre lies within 1.5 cells of the feature, so a
stream that the DEM's own channel misses by a cell still counts
(:mod:`georeview.measure.flow_features`; the routing is :mod:`georeview.measure.flow_routing`).

The meet cells only *detect* the meet; the distance is measured on the true geometry
(:func:`georeview.measure.flow_ends.path_lengths`): along the path's polyline through the
cell centres, from where it last leaves the site polygon to its first point on the
feature's own line or polygon, its last leg running straight from the meet cell's centre to
the feature's nearest point; so it is never shorter than the straight line from the site to
the feature it reaches.

The DEM window is the site's bounds grown by the trace length and a margin. Because the
filled surface of a depression can depend on what lies beyond the window, the window is
grown (doubling the margin) whenever a path crosses a filled depression that touches a
window side that is not the raster's edge; so results do not depend on the initial margin.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from georeview.errors import CoverageError, InputError, LimitError
from georeview.measure import flow_routing as routing
from georeview.measure.dem import DemWindow, geometry_to_crs, read_dem_window
from georeview.measure.flow_ends import path_lengths
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
        Centre of the discharge cell (a site cell whose flow leaves the site, or ends in
        it on a mapped feature), in the working CRS.
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
        MultiLineString of the traced paths of *discharge_points* through the cell centres
        (a path that reaches a feature drawn on to the point it is measured to), in the
        working CRS.
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
    end_xy: tuple[float, float] | None = None  # where a reaching path touches the feature


def _classify(
    idx0: int,
    path: np.ndarray,
    met_ft: float,
    end_xy: tuple[float, float],
    code_flat: np.ndarray,
    meet_flat: np.ndarray,
    grows_flat: np.ndarray,
    win: DemWindow,
    length_ft: float,
) -> _Trace:
    """Classify how one D8 path ends (it stops at a meet cell, a pit or the length).

    *met_ft* is the path's measured length from the site boundary to the feature it meets
    (:func:`~georeview.measure.flow_ends.path_lengths`), NaN when its last cell meets none;
    *end_xy* the point it is measured to, kept to draw the path on to the feature.
    *grows_flat* marks the filled cells of depressions touching an inner window side
    (:func:`~georeview.measure.flow_routing.filled_regions`): a path over one asks for a
    larger window.
    The kernel traced the path past *length_ft* from its start cell's centre (by the
    site's diagonal and two cells), so a feature whose measured distance is within
    *length_ft* is not cut off; a path that meets nothing is cut at *length_ft* from its
    start cell's centre.
    """
    ncol = win.elev.shape[1]
    ft_per_unit = win.h_m_per_unit / M_PER_FT
    code = int(meet_flat[path[-1]])
    tol = length_ft * 1e-9
    if code and met_ft <= length_ft + tol:
        grow = bool(grows_flat[path].any())
        return _Trace(idx0, path, True, float(met_ft), code, grow, False, end_xy)
    dist_ft = _step_lengths(path, ncol, win.xres, win.yres) * ft_per_unit
    within = dist_ft <= length_ft + tol
    path, dist_ft = path[within], dist_ft[within]
    grow = bool(grows_flat[path].any())
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
        routing.wait_for_kernels(warm)
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
    grows = routing.filled_regions(depth, win)
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
    meet_flat, grows_flat = meet.ravel(), grows.ravel()
    met, ends = path_lengths(cells, offsets, meet_flat, site_local, geoms, win)
    met_ft = met * (win.h_m_per_unit / M_PER_FT)
    traces = [
        _classify(
            int(i),
            cells[offsets[k] : offsets[k + 1]],
            float(met_ft[k]),
            (float(ends[k, 0]), float(ends[k, 1])),
            code_flat,
            meet_flat,
            grows_flat,
            win,
            length_ft,
        )
        for k, i in enumerate(starts)
    ]
    traces = _from_last_site_cell(traces, cells, offsets, starts, site_flat)
    grow = any(t.grow for t in traces)
    return traces, contrib, labels, grow


def _from_last_site_cell(
    traces: list[_Trace],
    cells: np.ndarray,
    offsets: np.ndarray,
    starts: np.ndarray,
    site_flat: np.ndarray,
) -> list[_Trace]:
    """Give a path that runs back over the site the trace of its last site cell's path.

    Where a path re-enters the site (its cells' centres lie in it again) and leaves once
    more, its last exit is that of the path from its last site cell, a discharge cell of
    its own (its next cell is off the site, or it is a pit or meet cell): from there on the
    two paths are one, traced from that cell for the full length. The path keeps its
    cells up to there, then takes that trace's cells and answer. On the bench's 1 m DEM of
    hills, flats and noise, 170 of the 374 paths that meet the stream did so, some of them
    600 m from their start.
    """
    path_of = np.repeat(np.arange(len(starts)), np.diff(offsets))
    on_site = np.flatnonzero(site_flat[cells])
    last = offsets[:-1].copy()
    np.maximum.at(last, path_of[on_site], on_site)
    moved = np.flatnonzero(last > offsets[:-1])
    if moved.size == 0:
        return traces
    # starts are sorted (a subset of the site's cells in index order); a path cut at the
    # kernel's length on a site cell has no discharge there and keeps its own answer
    owner = np.minimum(np.searchsorted(starts, cells[last[moved]]), len(starts) - 1)
    ok = starts[owner] == cells[last[moved]]
    out = list(traces)
    for k, j in zip(moved[ok].tolist(), owner[ok].tolist(), strict=True):
        t, u = traces[k], traces[j]
        out[k] = replace(
            u,
            start=t.start,
            cells=np.concatenate([cells[offsets[k] : last[k]], u.cells]),
            grow=t.grow or u.grow,
        )
    return out


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
    # numba's start-up overlaps reading the DEM and rasterising the features
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
        end = traces[k].end_xy
        if traces[k].reaches and end is not None:
            # drawn on to where it is measured to: the feature's nearest point
            xs, ys = np.r_[xs, end[0]], np.r_[ys, end[1]]
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
