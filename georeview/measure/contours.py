"""Contour lines from a DEM (contourpy), and the interval of a submitted contour layer."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from georeview.errors import CoverageError, InputError
from georeview.measure.dem import (
    area_in_dem_crs,
    as_float_block,
    map_strips,
    offset_transform,
    open_dem,
    read_rows,
    window_for_bounds,
)
from georeview.units import M_PER_FT, metres_per_unit

if TYPE_CHECKING:
    import geopandas as gpd
    import pyproj
    from affine import Affine
    from contourpy._contourpy import LineReturn_ChunkCombinedOffset
    from shapely.geometry.base import BaseGeometry

logger = logging.getLogger(__name__)

__all__ = ["ContourInterval", "contour_interval", "contours_ft", "measure_contour_interval_ft"]

#: Rows per strip when contouring (bounds the float64 copies contourpy makes of z, x, y).
CONTOUR_STRIP_ROWS = 128


def _contour_strip(
    block: np.ndarray,
    ft_per_unit: float,
    r0: int,
    interval_ft: float,
    transform: Affine,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Contour one strip of rows (window rows ``r0..``, NaN for nodata) every *interval_ft*.

    Elevations are turned into feet in float64, strip by strip, and only the levels the
    strip spans are traced (each level is a pass over the strip). Returns the LineStrings
    (joining cell centres, in the DEM's CRS), their levels, and whether the strip had data.
    """
    import contourpy
    import shapely

    z = block.astype(np.float64)
    z *= ft_per_unit
    finite = np.isfinite(z)
    nothing = np.empty(0, dtype=object), np.empty(0)
    if not finite.any():
        return (*nothing, False)
    lo, hi = np.min(z, where=finite, initial=np.inf), np.max(z, where=finite, initial=-np.inf)
    steps = np.arange(math.ceil(lo / interval_ft), math.floor(hi / interval_ft) + 1)
    levels = steps * interval_ft
    if levels.size == 0:
        return (*nothing, True)
    if not finite.all():
        z = np.ma.masked_array(z, mask=~finite)
    gen = contourpy.contour_generator(
        z=z, name="serial", line_type=contourpy.LineType.ChunkCombinedOffset
    )
    pts_list, line_of_list, level_list = [], [], []
    n_lines = 0
    # contourpy types multi_lines as a union over every line_type; ChunkCombinedOffset
    # (asked for above) returns (points, offsets) per level
    chunks = cast("list[LineReturn_ChunkCombinedOffset]", gen.multi_lines(levels))
    for level, (points, offsets) in zip(levels, chunks, strict=True):
        pts, off = points[0], offsets[0]  # one chunk
        if pts is None or off is None or len(off) < 2:
            continue
        counts = np.diff(off).astype(np.int64)
        pts_list.append(pts)
        line_of_list.append(np.repeat(np.arange(n_lines, n_lines + counts.size), counts))
        level_list.append(np.full(counts.size, level))
        n_lines += counts.size
    if not pts_list:
        return (*nothing, True)
    pts = np.concatenate(pts_list)
    del pts_list
    pts[:, 0] = transform.c + transform.a * (pts[:, 0] + 0.5)
    pts[:, 1] = transform.f + transform.e * (pts[:, 1] + r0 + 0.5)
    lines = shapely.linestrings(pts, indices=np.concatenate(line_of_list))
    return lines, np.concatenate(level_list), True


@dataclass(frozen=True)
class _ContourGrid:
    """The DEM window to contour: where it lies in the raster and in the DEM's CRS."""

    area: BaseGeometry  # the area, in the DEM's CRS
    crs: pyproj.CRS
    row_off: int
    col_off: int
    rows: int
    cols: int
    transform: Affine
    nodata: float | None


def _contour_grid(dem_path: object, area: BaseGeometry, area_crs: Any) -> _ContourGrid:
    """The window of the DEM covering *area*'s bounds plus one cell (at least 2 x 2 cells)."""
    with open_dem(dem_path) as src:
        info, local = area_in_dem_crs(src, dem_path, area, area_crs)
        one_cell = max(abs(src.transform.a), abs(src.transform.e))
        window = window_for_bounds(src, local.bounds, one_cell, dem_path)
        row_off, col_off = int(window.row_off), int(window.col_off)
        grid = _ContourGrid(
            area=local,
            crs=info.crs,
            row_off=row_off,
            col_off=col_off,
            rows=int(window.height),
            cols=int(window.width),
            transform=offset_transform(src.transform, row_off, col_off),
            nodata=src.nodata,
        )
    if grid.rows < 2 or grid.cols < 2:
        # A contour needs a 2 x 2 block of cells (a 1-pixel DEM has none).
        raise CoverageError(
            f"the DEM window around the area is {grid.rows} x {grid.cols} cells; contours"
            " need at least 2 x 2",
            path=dem_path,
        )
    return grid


def _contour_strips(
    dem_path: object, grid: _ContourGrid, ft_per_unit: float, interval_ft: float
) -> list[tuple[np.ndarray, np.ndarray, bool]]:
    """Contour the window strip by strip, two strips at a time (contourpy releases the GIL).

    Strips share their edge row; each thread reads its own strips with its own handle, so
    only two strips of the DEM are in memory at a time.
    """
    from rasterio.windows import Window

    rows = grid.rows
    bounds = [
        (r0, min(r0 + CONTOUR_STRIP_ROWS, rows - 1))
        for r0 in range(0, rows - 1, CONTOUR_STRIP_ROWS)
    ]

    def strip(src: Any, b: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, bool]:
        window = Window(grid.col_off, grid.row_off + b[0], grid.cols, b[1] - b[0] + 1)
        block = as_float_block(read_rows(src, window, dem_path), grid.nodata)
        return _contour_strip(block, ft_per_unit, b[0], interval_ft, grid.transform)

    return map_strips(dem_path, strip, bounds)


def _clip_to_area(gdf: gpd.GeoDataFrame, grid: _ContourGrid) -> gpd.GeoDataFrame:
    """Clip contour lines to the area, unless the area covers the whole window."""
    import shapely

    tf = grid.transform
    # every line lies between the window's cell centres, so inside this box
    frame = shapely.box(tf.c, tf.f + tf.e * grid.rows, tf.c + tf.a * grid.cols, tf.f)
    if grid.area.covers(frame):
        return gdf
    gdf = gdf.clip(grid.area).explode(index_parts=False, ignore_index=True)
    return gdf[gdf.geom_type == "LineString"].reset_index(drop=True)


def contours_ft(
    dem_path: object,
    vertical_units: str,
    area: BaseGeometry,
    area_crs: Any,
    *,
    interval_ft: float = 2.0,
    working_crs: Any = "EPSG:3071",
    clip: bool = True,
) -> gpd.GeoDataFrame:
    """Generate contour lines from the DEM around an area, with contourpy.

    The window is contoured in strips of rows (sharing their edge row, on two threads:
    contourpy releases the GIL), each strip at the levels it spans only, all in one
    ``multi_lines`` call, and the lines of a strip are built by one vectorised shapely
    call; so a line crossing a strip edge (every 128 rows) comes out as pieces that meet
    there. Clipping is skipped when the area covers the whole window.

    Parameters
    ----------
    dem_path : path-like
        DEM in a projected CRS.
    vertical_units : {"m", "ft", "us_ft"}
        Units of the elevations.
    area : shapely geometry
        Area to contour (the site); the DEM window covers its bounds plus one cell.
    area_crs : CRS-like
        CRS of *area*.
    interval_ft : float, optional
        Contour interval in international feet whatever the DEM's units (default 2).
    working_crs : CRS-like, optional
        CRS of the output (default EPSG:3071).
    clip : bool, optional
        Clip the lines to *area* (default True).

    Returns
    -------
    geopandas.GeoDataFrame
        One LineString per contour piece with ``elev_ft`` (levels are multiples of
        *interval_ft*, in feet), in *working_crs*. Lines join cell centres (the DEM's
        values are taken at cell centres, as ``gdal_contour`` does).

    Raises
    ------
    georeview.errors.InputError
        For a non-positive interval.
    georeview.errors.CoverageError
        When the DEM does not reach the area, the window is under 2 x 2 cells, or it
        holds no data.
    """
    import geopandas as gpd

    if not (interval_ft > 0 and math.isfinite(interval_ft)):
        raise InputError(f"the contour interval must be positive, got {interval_ft}")
    ft_per_unit = metres_per_unit(vertical_units) / M_PER_FT
    grid = _contour_grid(dem_path, area, area_crs)
    parts = _contour_strips(dem_path, grid, ft_per_unit, interval_ft)
    if not any(p[2] for p in parts):
        raise CoverageError("the DEM has no data around the area", path=dem_path)
    lines = np.concatenate([p[0] for p in parts])
    elev = np.concatenate([p[1] for p in parts])
    del parts
    gdf = gpd.GeoDataFrame({"elev_ft": elev.astype(np.float64)}, geometry=lines, crs=grid.crs)
    if clip and len(gdf):
        gdf = _clip_to_area(gdf, grid)
    if gdf.crs is not None and gdf.crs.equals(working_crs):
        return gdf
    return gdf.to_crs(working_crs)


#: Share of a contour layer's distinct levels that must lie on one interval's lattice
#: for that interval to be the layer's (the rest are strays: a spot elevation, a line
#: typed one foot off).
ON_INTERVAL_SHARE = 0.75
#: Share of the lattice's levels, lowest to highest line, that must have a line: a
#: finer spacing that most lines also sit on (1 ft under a 10-ft set) is not the
#: interval when nine in ten of its levels have no line.
LATTICE_FILL_SHARE = 0.5


@dataclass(frozen=True)
class ContourInterval:
    """The interval of a submitted contour layer and how regular its levels are.

    Attributes
    ----------
    interval_ft : float or None
        The spacing most levels follow, international feet; ``None`` when no one
        spacing explains at least :data:`ON_INTERVAL_SHARE` of them.
    levels : int
        Distinct levels in the layer.
    off_interval : tuple of float
        Levels not on the interval's lattice, in the layer's own units (all of them
        when ``interval_ft`` is ``None``).
    missing : int
        Lattice levels between the lowest and highest on-interval line with no line
        (gaps; not irregular in themselves).
    """

    interval_ft: float | None
    levels: int
    off_interval: tuple[float, ...]
    missing: int

    @property
    def regular(self) -> bool:
        """Every level is on the measured interval."""
        return self.interval_ft is not None and not self.off_interval


def contour_interval(gdf: gpd.GeoDataFrame, field: str, units: str = "ft") -> ContourInterval:
    """Measure the contour interval of a submitted contour layer: its dominant spacing.

    The distinct levels (rounded to 0.001 of the layer's unit) are tried against each
    spacing ``d`` their neighbours differ by, smallest first. A level is on ``d``'s
    lattice when it is a whole number of ``d`` from the most common offset (within
    0.0015 units). ``d`` is the interval when at least :data:`ON_INTERVAL_SHARE` of the
    levels are on its lattice and at least :data:`LATTICE_FILL_SHARE` of the lattice's
    levels, lowest to highest, have a line. So index contours (the same levels again)
    and a missing line do not change it; a stray level is outvoted and listed; and one
    line 1 ft off a 10-ft set does not make the interval 1 ft (nine in ten of the 1-ft
    levels have no line).

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame or pandas.DataFrame
        The contour layer.
    field : str
        Elevation attribute.
    units : {"m", "ft", "us_ft"}, optional
        Units of the elevation attribute (default international feet).

    Returns
    -------
    ContourInterval

    Raises
    ------
    georeview.errors.InputError
        When the field is missing, not numeric, or has fewer than two distinct levels.
    """
    if field not in gdf.columns:
        raise InputError("the contour layer has no elevation attribute", field=field)
    try:
        vals = np.asarray(gdf[field], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"contour elevations are not numeric: {exc}", field=field) from exc
    levels = np.unique(np.round(vals[np.isfinite(vals)], 3))
    if levels.size < 2:
        raise InputError(
            f"the contour layer has {levels.size} distinct level(s); an interval needs two",
            field=field,
        )
    to_ft = metres_per_unit(units) / M_PER_FT
    # a few dozen candidate spacings at most (the distinct neighbour differences)
    for d in np.unique(np.round(np.diff(levels), 3)):
        on, missing = _on_lattice(levels, float(d))
        if np.count_nonzero(on) >= ON_INTERVAL_SHARE * levels.size and (
            np.count_nonzero(on) >= LATTICE_FILL_SHARE * (np.count_nonzero(on) + missing)
        ):
            return ContourInterval(
                float(d) * to_ft, int(levels.size), tuple(map(float, levels[~on])), missing
            )
    return ContourInterval(None, int(levels.size), tuple(map(float, levels)), 0)


def _on_lattice(levels: np.ndarray, d: float, tol: float = 1.5e-3) -> tuple[np.ndarray, int]:
    """Which ``levels`` lie on the lattice of spacing ``d`` that most of them share.

    Also returns how many of that lattice's levels, between the lowest and highest
    level on it, have no line.
    """
    offset = np.round(levels - d * np.round(levels / d), 3)
    values, counts = np.unique(offset, return_counts=True)
    on = np.abs(offset - values[np.argmax(counts)]) <= tol
    steps = np.round(levels[on] / d)
    span = int(steps.max() - steps.min()) + 1
    return on, span - int(np.unique(steps).size)


def measure_contour_interval_ft(gdf: gpd.GeoDataFrame, field: str, units: str = "ft") -> float:
    """The interval of a submitted contour layer, international feet (:func:`contour_interval`).

    Raises
    ------
    georeview.errors.InputError
        As :func:`contour_interval`, and when no one spacing explains most levels.
    """
    got = contour_interval(gdf, field, units)
    if got.interval_ft is None:
        raise InputError(
            f"no one spacing explains most of the {got.levels} contour levels", field=field
        )
    return got.interval_ft
