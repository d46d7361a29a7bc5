"""The pieces a synthetic surface is made of: smoothed lines, noise, valleys, ditches, a kettle.

Elevation is built around a creek so that water really drains to it (see
``layers/README.md``, "How the synthetic terrain is made"); every function here works on
whole arrays of cell centres, in the DEM's vertical units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely
from scipy import ndimage
from shapely.geometry import LineString, Point

from .common import Grid


@dataclass(frozen=True)
class Stream:
    """A synthetic stream: its line, its name, NHD type and its profile (in DEM units)."""

    name: str
    line: LineString
    z_up: float
    z_down: float
    ftype: int
    fcode: int


def smooth_line(points: list[tuple[float, float]], iterations: int = 4) -> LineString:
    """Chaikin corner cutting: a gently curving line through the control polygon."""
    pts = np.asarray(points, dtype=float)
    for _ in range(iterations):
        q = 0.75 * pts[:-1] + 0.25 * pts[1:]
        r = 0.25 * pts[:-1] + 0.75 * pts[1:]
        mid = np.empty((2 * len(q), 2))
        mid[0::2] = q
        mid[1::2] = r
        pts = np.vstack([pts[:1], mid, pts[-1:]])
    return LineString(np.round(pts, 2))


def creek_and_ditch(
    creek_name: str,
    creek_points: list[tuple[float, float]],
    creek_z: tuple[float, float],
    joins_at: tuple[float, float],
    ditch_points: list[tuple[float, float]],
    ditch_tip: tuple[float, float],
) -> list[Stream]:
    """A smoothed creek and a ditch that ends on it, at the creek point nearest ``joins_at``.

    The ditch's smoothed line stops ``ditch_tip`` (dx, dy metres) short of the junction and
    then meets it exactly, so the flowlines are connected as NHD's are.

    Parameters
    ----------
    creek_name : str
        The creek's GNIS_NAME.
    creek_points, ditch_points : list of (x, y)
        Control polygons (EPSG:3071 metres), upstream first.
    creek_z : (float, float)
        The creek's water surface upstream and downstream, DEM units.
    joins_at : (x, y)
        Where the ditch meets the creek (moved onto the creek's smoothed line).
    ditch_tip : (dx, dy)
        The offset from the junction where the ditch's smoothed part ends.

    Returns
    -------
    list of Stream
        The creek (StreamRiver) and the ditch (CanalDitch, profile set by its cut).
    """
    creek = smooth_line(creek_points)
    junction = creek.interpolate(creek.project(Point(*joins_at)))
    tip = (junction.x + ditch_tip[0], junction.y + ditch_tip[1])
    ditch = smooth_line([*ditch_points, tip], 3)
    ditch = LineString([*ditch.coords, (junction.x, junction.y)])
    return [
        Stream(creek_name, creek, creek_z[0], creek_z[1], 460, 46006),
        Stream("Synthetic Drainage Ditch", ditch, 0.0, 0.0, 336, 33600),
    ]


def line_fields(line: LineString, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distance to ``line`` and the distance along it of the nearest point, for every cell."""
    pts = shapely.points(xs.ravel(), ys.ravel())
    shapely.prepare(line)
    dist = shapely.distance(line, pts).reshape(xs.shape)
    along = shapely.line_locate_point(line, pts).reshape(xs.shape)
    return dist, along


def noise(
    rng: np.random.Generator, shape: tuple[int, int], octaves: list[tuple[float, float]]
) -> np.ndarray:
    """Sum of Gaussian-smoothed white noise fields, each scaled to a standard deviation.

    ``octaves`` is a list of (sigma in cells, standard deviation in output units).
    """
    total = np.zeros(shape)
    for sigma, std in octaves:
        field = ndimage.gaussian_filter(rng.standard_normal(shape), sigma, mode="reflect")
        total += field / field.std() * std
    return total


def smoothstep(t: np.ndarray) -> np.ndarray:
    """0 below 0, 1 above 1, 3t^2 - 2t^3 between."""
    t = np.clip(t, 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def slope_pct(z_m: np.ndarray, res: float) -> np.ndarray:
    """Slope in percent from central differences (only for classifying soils and checks)."""
    gy, gx = np.gradient(z_m, res)
    return np.hypot(gx, gy) * 100.0


def profile(stream: Stream, along: np.ndarray) -> np.ndarray:
    """Water-surface elevation of ``stream`` at a distance ``along`` its line."""
    frac = along / stream.line.length
    return stream.z_up + (stream.z_down - stream.z_up) * frac


def valley(dist: np.ndarray, rise: float, length: float, grade: float) -> np.ndarray:
    """Rise of a valley side above the stream at ``dist`` metres (DEM units)."""
    return rise * (1.0 - np.exp(-dist / length)) + grade * dist


def kettle(
    z: np.ndarray, xs: np.ndarray, ys: np.ndarray, centre: Point, radius: float, grade: float
) -> tuple[np.ndarray, float, np.ndarray]:
    """Cut a closed depression holding a flat pond into ``z``.

    The pond surface is 1.5 units below the lowest ground within 150 m of its shore, and the
    basin side rises at ``grade`` from the shore: every way out crosses ground at least
    1.5 units above the water, so the pond is a real closed depression.

    Returns
    -------
    tuple
        The new surface, the pond's level and the pond's cells.
    """
    r = np.hypot(xs - centre.x, ys - centre.y)
    ring = (r > radius) & (r < radius + 150.0)
    surface = float(np.floor(z[ring].min() - 1.5))
    z = np.minimum(z, surface + grade * np.maximum(r - radius, 0.0))
    z = np.where(r <= radius, surface, z)
    return z, surface, r <= radius


def graded_profile(
    z: np.ndarray, grid: Grid, line: LineString, depth: float, z_end: float
) -> tuple[np.ndarray, np.ndarray]:
    """A water-surface profile for ``line`` that follows the ground and never rises downstream.

    The ground under the line is sampled every cell, lowered by ``depth``, made non-increasing
    downstream and kept above a gentle grade to ``z_end`` (the receiving stream's level).

    Returns
    -------
    tuple of numpy.ndarray
        The distances along the line and the profile there.
    """
    n = max(int(line.length / grid.res), 2)
    s = np.linspace(0.0, line.length, n + 1)
    pts = shapely.line_interpolate_point(line, s)
    cols = np.clip(((shapely.get_x(pts) - grid.xmin) / grid.res).astype(int), 0, grid.shape[1] - 1)
    rows = np.clip(((grid.ymax - shapely.get_y(pts)) / grid.res).astype(int), 0, grid.shape[0] - 1)
    prof = np.minimum.accumulate(z[rows, cols] - depth)
    floor = z_end + 0.0005 * (line.length - s)
    prof = np.maximum(prof, floor)
    prof[-1] = z_end
    return s, prof


def cut_ditch(
    z: np.ndarray,
    grid: Grid,
    line: LineString,
    xs: np.ndarray,
    ys: np.ndarray,
    depth: float,
    z_end: float,
    side_grade: float,
) -> np.ndarray:
    """Cut a ditch along ``line`` into ``z``, graded to ``z_end``; returns the new surface.

    Parameters
    ----------
    z : numpy.ndarray
        The surface on ``grid`` (cell centres ``xs``, ``ys``).
    grid : Grid
        The DEM's grid.
    line : shapely.LineString
        The ditch, upstream first.
    xs, ys : numpy.ndarray
        Cell-centre coordinates (:meth:`Grid.centres`).
    depth : float
        How far below the ground the ditch's water runs, DEM units.
    z_end : float
        The receiving stream's level at the junction.
    side_grade : float
        Rise of the ditch's sides per metre away from its line.
    """
    s, prof = graded_profile(z, grid, line, depth, z_end)
    d_dist, d_along = line_fields(line, xs, ys)
    bed = np.interp(d_along, s, prof)
    return np.minimum(z, bed + side_grade * d_dist)
