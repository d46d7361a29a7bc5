"""Where a downstream trace leaves the site and where it reaches the water: its measured length.

The D8 trace (:mod:`georeview.measure.flow`) follows cell centres from a discharge cell of the
site to the first *meet* cell of a mapped feature (a cell within 1.5 cells of it,
:mod:`georeview.measure.flow_features`). Centre to centre, that length is not a distance a
reviewer can defend: the start centre lies inside the site and the meet cell's centre up to
1.5 cells short of the feature, so it came out up to 1.5 cells (15 m = 49.2 ft on a 10 m
DEM) shorter than the straight line from the site to the water.

:func:`path_lengths` measures each path on the true geometry instead. The polyline through
the centres is extended at both ends: it begins at the site polygon's nearest point to the
start centre (the centre itself when it lies in the site, as it does unless the site is
smaller than a cell) and ends with a straight leg from the meet cell's centre to the
feature's nearest point (the stream's line, the polygon of a water body or wetland; no
buffer, which would shorten it). That leg, at most 1.5 cells, is the rule for a path that
runs beside a stream or crosses one thinner than a cell between two centres without
touching it: the least distance the flow still has to cover. The length runs from the last
point of the extended polyline in the site polygon, before its first point on the feature,
to that first point. A sub-path from a point of the site to a point of the feature is at
least as long as the straight line between them, so the length is never shorter than the
straight-line distance from the site to the feature; it is 0 where the feature crosses
the site.

The paths are few (one per discharge cell) but long (hundreds of cells on a 1 m DEM, and a
path can cross back over the site), so the work is numpy over all the vertices and shapely
only where the geometry is decided: the vertices near the site, the single-cell paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

    from georeview.measure.dem import DemWindow

__all__ = ["path_lengths"]


def path_lengths(
    cells: np.ndarray,
    offsets: np.ndarray,
    meet_flat: np.ndarray,
    site: BaseGeometry,
    geoms: list[Any],
    win: DemWindow,
) -> tuple[np.ndarray, np.ndarray]:
    """Length of each path from where it last leaves the site to the feature it meets.

    Parameters
    ----------
    cells, offsets : numpy.ndarray
        The traced paths: path k is ``cells[offsets[k]:offsets[k + 1]]`` (linear indices of
        the window), each ending on its first meet cell if it meets a feature.
    meet_flat : numpy.ndarray
        Flat meet codes: 1-based index into *geoms*, 0 = none.
    site : shapely geometry
        The site polygon in the DEM CRS.
    geoms : list of shapely geometry
        The mapped features in the DEM CRS, as rasterised.
    win : DemWindow
        The DEM window (its transform places the cell centres).

    Returns
    -------
    lengths : numpy.ndarray
        One length per path in CRS units, NaN where the path meets no feature.
    ends : numpy.ndarray
        ``(paths, 2)``: the point where each path first touches its feature (NaN where it
        meets none), for drawing the path to the water.

    Notes
    -----
    Only the legs at the two ends can touch the feature before the polyline's end: every
    centre before the meet cell is, by the meet rule, more than 1.49 cells (the 1.5-cell
    buffer drawn with 32 sides) from every feature, farther than a D8 step (at most
    1.42 cells); and the last leg meets the feature first at its end (an earlier point of
    it would be nearer). So the polyline is intersected with its feature only for paths of
    one cell, whose start leg may cross the feature. Were a touch missed, the length would
    come out longer, never shorter than the straight line.
    """
    import shapely

    out = np.full(offsets.size - 1, np.nan)
    ends = np.full((offsets.size - 1, 2), np.nan)
    code = meet_flat[cells[offsets[1:] - 1]]  # a path stops on its first meet cell
    k = np.flatnonzero(code > 0)
    if k.size == 0:
        return out, ends
    n_cells = offsets[k + 1] - offsets[k]
    first = np.cumsum(n_cells) - n_cells
    r, c = np.divmod(
        cells[np.repeat(offsets[k] - first, n_cells) + np.arange(n_cells.sum())], win.elev.shape[1]
    )
    tf = win.transform
    centres = np.column_stack([tf.c + tf.a * (c + 0.5), tf.f + tf.e * (r + 0.5)])
    feats = np.asarray(geoms, dtype=object)[code[k] - 1]
    # the end legs' outer points (shortest_line runs from its first argument to a point on
    # its second): the site's nearest point to the first centre, the feature's to the last
    start_leg = shapely.shortest_line(shapely.points(centres[first]), site)
    end_leg = shapely.shortest_line(shapely.points(centres[first + n_cells - 1]), feats)
    # one coordinate run per path: site point, centres, feature point
    m = n_cells + 2
    head = np.cumsum(m) - m
    end = head + m - 1
    xy = np.empty((int(m.sum()), 2))
    xy[head] = shapely.get_coordinates(start_leg)[1::2]
    xy[end] = shapely.get_coordinates(end_leg)[1::2]
    xy[np.arange(len(centres)) + np.repeat(head + 1 - first, n_cells)] = centres
    pid = np.repeat(np.arange(k.size), m)
    step = np.hypot(*np.diff(xy, axis=0).T)
    step[end[:-1]] = 0.0  # from one path's last point to the next path's first
    cum = np.r_[0.0, np.cumsum(step)]
    cum -= cum[head][pid]
    t_hit = cum[end].copy()
    hit_xy = xy[end].copy()
    single = np.flatnonzero(n_cells == 1)
    if single.size:
        rows = np.repeat(head[single], 3) + np.tile(np.arange(3), single.size)
        t_hit[single], hit_xy[single] = _first_on_feature(
            xy[rows].reshape(-1, 3, 2), feats[single], t_hit[single], hit_xy[single]
        )
    t_exit = _last_in_site(xy, pid, cum, head, end, site, t_hit, float(step.max(initial=0.0)))
    in_site = shapely.intersects_xy(site, hit_xy[:, 0], hit_xy[:, 1])
    # a feature reached inside the site (it crosses the site there) is reached at once
    out[k] = np.where(in_site, 0.0, np.maximum(t_hit - t_exit, 0.0))
    ends[k] = hit_xy
    return out, ends


def _first_on_feature(
    legs: np.ndarray, feats: np.ndarray, t_hit: np.ndarray, hit_xy: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Position and point of the first touch of single-cell paths ``(paths, 3, 2)``.

    Such a path is its start leg (site point to centre) and its end leg (centre to the
    feature); the start leg may cross the feature (a site smaller than a cell whose cell
    centre lies beyond a stream from it). *t_hit*, *hit_xy*: the polyline's end, kept
    where nothing touches earlier.
    """
    import shapely

    t_hit, hit_xy = t_hit.copy(), hit_xy.copy()
    line_ok = (legs[:, 0] != legs[:, 1]).any(axis=1) | (legs[:, 1] != legs[:, 2]).any(axis=1)
    rows = np.flatnonzero(line_ok)
    if rows.size == 0:
        return t_hit, hit_xy
    lines = shapely.linestrings(legs[rows])
    shapely.prepare(feats)
    touch = shapely.intersects(feats[rows], lines)
    rows, lines = rows[touch], lines[touch]
    if rows.size:
        xy, i = shapely.get_coordinates(shapely.intersection(lines, feats[rows]), return_index=True)
        t = shapely.line_locate_point(lines[i], shapely.points(xy))
        best = t_hit.copy()
        np.minimum.at(best, rows[i], t)
        moved = rows[best[rows] < t_hit[rows]]
        hit_xy[moved] = shapely.get_coordinates(
            shapely.line_interpolate_point(lines[np.searchsorted(rows, moved)], best[moved])
        )
        t_hit = best
    return t_hit, hit_xy


def _last_in_site(
    xy: np.ndarray,
    pid: np.ndarray,
    cum: np.ndarray,
    head: np.ndarray,
    end: np.ndarray,
    site: BaseGeometry,
    t_hit: np.ndarray,
    reach: float,
) -> np.ndarray:
    """Position along each path of its last point in *site* at or before *t_hit*.

    The paths begin in (or on) the site. A segment can touch the site only if one of its
    ends lies within its own length (*reach* bounds it) of the site's bounds: the vertices
    there are tested point-in-polygon, the last one inside found, and the path from it to
    the last vertex near the site (and one segment on) is intersected with the site, for
    the crossings between vertices (the edge where the path leaves, a corner it cuts).
    """
    import shapely

    x0, y0, x1, y1 = site.bounds
    near = (
        (xy[:, 0] >= x0 - reach)
        & (xy[:, 0] <= x1 + reach)
        & (xy[:, 1] >= y0 - reach)
        & (xy[:, 1] <= y1 + reach)
        & (cum <= t_hit[pid])
    )
    idx = np.flatnonzero(near)
    inside = idx[shapely.intersects_xy(site, xy[idx, 0], xy[idx, 1])]
    last = head.copy()  # the first point, on the site's edge, when no vertex is in the site
    np.maximum.at(last, pid[inside], inside)
    stop = last.copy()
    np.maximum.at(stop, pid[idx], idx)
    stop = np.minimum(stop + 1, end)
    t_exit = cum[last]
    # the stretches from the last vertex in the site to the last near it, repeats out
    n = stop - last + 1
    rows = np.repeat(last - (np.cumsum(n) - n), n) + np.arange(n.sum())
    run_id = np.repeat(np.arange(len(head)), n)
    keep = np.r_[True, (run_id[1:] != run_id[:-1]) | (xy[rows[1:]] != xy[rows[:-1]]).any(axis=1)]
    rows, run_id = rows[keep], run_id[keep]
    lengthy = np.bincount(run_id, minlength=len(head)) >= 2
    sel = lengthy[run_id]
    if sel.any():
        paths = np.flatnonzero(lengthy)
        tails = shapely.linestrings(xy[rows[sel]], indices=(np.cumsum(lengthy) - 1)[run_id[sel]])
        pts, i = shapely.get_coordinates(shapely.intersection(tails, site), return_index=True)
        p = paths[i]
        t = cum[last[p]] + shapely.line_locate_point(tails[i], shapely.points(pts))
        before = t <= t_hit[p]
        np.maximum.at(t_exit, p[before], t[before])
    return t_exit
