"""Steep ground: cells at or above an ordinance's threshold, counted by the cell-centre rule.

One counter serves the review and the screening. :func:`centre_zones` draws which cells
belong to which area: a cell belongs to the area holding its centre (GDAL's default
rasterisation rule, ``all_touched=False``). :func:`count_steep` compares the slopes with the
threshold (``>=`` for Somers, ``>`` for Deerfield: both are counted) and counts the cells of
each area. The review's :func:`steep_slopes` runs the two strip by strip over one disturbed
area; the screening's :func:`georeview.measure.overlay.steep_areas` runs them once over the
DEM window of a group of parcels. Slopes come from :func:`georeview.measure.slope.horn_interior`
(the arithmetic of :func:`georeview.terrain.slope_pct`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from georeview.errors import CoverageError, InputError
from georeview.measure.dem import (
    area_in_dem_crs,
    as_float_block,
    cell_area_sqft,
    map_strips,
    offset_transform,
    open_dem,
    rasterize,
    read_rows,
    row_strips,
    window_for_bounds,
)
from georeview.measure.slope import horn_interior
from georeview.units import metres_per_unit

if TYPE_CHECKING:
    import geopandas as gpd
    import pyproj
    from affine import Affine
    from shapely.geometry.base import BaseGeometry

logger = logging.getLogger(__name__)

__all__ = ["SteepCounts", "SteepSlopeResult", "centre_zones", "count_steep", "steep_slopes"]


# --------------------------------------------------------------------------- the shared counter


def centre_zones(geoms: Any, out_shape: tuple[int, int], transform: Affine) -> np.ndarray:
    """Zone of every cell by the cell-centre rule: 0 outside, ``k`` inside ``geoms[k - 1]``.

    Parameters
    ----------
    geoms : sequence of shapely geometries
        The areas, in the grid's CRS. Where they overlap, a cell goes to the last one.
    out_shape : tuple of int
        (rows, cols) of the grid.
    transform : affine.Affine
        The grid's transform.

    Returns
    -------
    numpy.ndarray
        Unsigned zone numbers (uint8, uint16 or int32: the smallest that holds them).
    """
    n = len(geoms)
    dtype = "uint8" if n < 2**8 else "uint16" if n < 2**16 else "int32"
    return rasterize(
        zip(geoms, range(1, n + 1), strict=True),
        out_shape=out_shape,
        transform=transform,
        fill=0,
        all_touched=False,
        dtype=dtype,
    )


@dataclass(frozen=True)
class SteepCounts:
    """Cells of each zone, by :func:`count_steep`.

    Attributes
    ----------
    n_inside, n_valid, n_ge, n_gt : numpy.ndarray
        Per zone (index 0 is zone 1): cells inside, of which with a slope value, at or above
        the threshold, above it.
    valid : numpy.ndarray
        Cells with a slope value inside a zone (bool, the grid's shape).
    """

    n_inside: np.ndarray
    n_valid: np.ndarray
    n_ge: np.ndarray
    n_gt: np.ndarray
    valid: np.ndarray = field(repr=False, compare=False)


def count_steep(
    slope: np.ndarray,
    threshold_pct: float,
    zones: np.ndarray | None = None,
    n_zones: int = 1,
    *,
    steep_out: np.ndarray | None = None,
) -> SteepCounts:
    """Count the cells at or above, and above, a slope threshold in each zone.

    Parameters
    ----------
    slope : numpy.ndarray
        Percent slope, NaN where there is none (nodata, its neighbours, the DEM edge).
    threshold_pct : float
        The ordinance's steep-slope threshold, percent.
    zones : numpy.ndarray, optional
        Zone of each cell (:func:`centre_zones`; 0 = none). None: every cell is in zone 1.
    n_zones : int, optional
        Number of zones (1 when *zones* is None).
    steep_out : numpy.ndarray, optional
        Filled with the cells at or above the threshold inside a zone (the map's mask).

    Returns
    -------
    SteepCounts
    """
    if zones is None and n_zones != 1:
        raise InputError("count_steep: cells without zones make one zone")
    valid = np.isfinite(slope)
    # NaN compares False, so the comparisons need no validity mask
    ge = np.greater_equal(slope, threshold_pct)
    gt = np.greater(slope, threshold_pct)
    if zones is not None and n_zones == 1:
        inside = zones.astype(bool, copy=False)
        valid &= inside
        ge &= inside
        gt &= inside
    if zones is None or n_zones == 1:
        n_inside = slope.size if zones is None else int(np.count_nonzero(zones))
        n_in, n_valid, n_ge, n_gt = (
            np.array([v]) for v in (n_inside, *map(np.count_nonzero, (valid, ge, gt)))
        )
    else:
        m = n_zones + 1
        n_in = np.bincount(zones.ravel(), minlength=m)[1:]
        n_valid, n_ge, n_gt = (np.bincount(zones[c], minlength=m)[1:] for c in (valid, ge, gt))
        valid &= zones > 0
        ge &= zones > 0
    if steep_out is not None:
        steep_out[...] = ge
    return SteepCounts(n_inside=n_in, n_valid=n_valid, n_ge=n_ge, n_gt=n_gt, valid=valid)


# --------------------------------------------------------------------------- one area, in strips


@dataclass(frozen=True)
class SteepSlopeResult:
    """Slopes inside the disturbed area.

    Attributes
    ----------
    steep_slope_area_sqft : float
        Area of cells with slope >= the threshold (Somers 17.08(C)(3)(c) compares so).
    steep_slope_area_gt_sqft : float
        Area of cells with slope > the threshold (Deerfield 31.06(4) compares strictly).
    max_slope_pct, mean_slope_pct : float or None
        Over the cells inside with a slope value (None when there are none).
    n_cells : int
        Cells inside the area (by centre) with a slope value.
    n_nodata_cells : int
        Cells inside the area without a slope (nodata or its neighbours, DEM border).
    cell_area_sqft : float
        Area of one DEM cell.
    threshold_pct : float
        The threshold used, percent.
    polygons : geopandas.GeoDataFrame or None
        Steep (>= threshold) areas for the map, with ``area_sqft``, in the working CRS;
        None when polygons were not asked for (see
        :func:`georeview.measure.steep_polygons.steep_polygons`).
    """

    steep_slope_area_sqft: float
    steep_slope_area_gt_sqft: float
    max_slope_pct: float | None
    mean_slope_pct: float | None
    n_cells: int
    n_nodata_cells: int
    cell_area_sqft: float
    threshold_pct: float
    polygons: gpd.GeoDataFrame | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Return the numbers as a JSON-ready dict (polygons excluded: they go to the map)."""
        return {
            "steep_slope_area_sqft": self.steep_slope_area_sqft,
            "steep_slope_area_gt_sqft": self.steep_slope_area_gt_sqft,
            "max_slope_pct": self.max_slope_pct,
            "mean_slope_pct": self.mean_slope_pct,
            "n_cells": self.n_cells,
            "n_nodata_cells": self.n_nodata_cells,
            "cell_area_sqft": self.cell_area_sqft,
            "threshold_pct": self.threshold_pct,
            "n_steep_polygons": None if self.polygons is None else len(self.polygons),
        }


@dataclass(frozen=True)
class _StripJob:
    """What every strip of a steep-slope run needs (read-only, shared by the threads)."""

    path: object
    nodata: float | None
    raster_shape: tuple[int, int]
    row_off: int
    col_off: int
    n_rows: int
    n_cols: int
    transform: Affine
    area: BaseGeometry
    ewres: float
    nsres: float
    threshold_pct: float
    steep_mask: np.ndarray | None


@dataclass(frozen=True)
class _StripStats:
    """Slope statistics of one strip inside the area."""

    n_valid: int
    n_nan: int
    sum_pct: float
    max_pct: float
    n_ge: int
    n_gt: int


def _strip_slope(job: _StripJob, src: Any, r0: int, r1: int) -> np.ndarray:
    """Horn slope of window rows ``r0:r1``, read with a one-cell halo (NaN past the DEM)."""
    from rasterio.windows import Window

    height, width = job.raster_shape
    gr0, gr1 = job.row_off + r0, job.row_off + r1
    c0, c1 = job.col_off, job.col_off + job.n_cols
    # halo of one cell each side, clipped to the raster; a missing halo is NaN (DEM edge)
    hr0, hr1 = max(0, gr0 - 1), min(height, gr1 + 1)
    hc0, hc1 = max(0, c0 - 1), min(width, c1 + 1)
    raw = read_rows(src, Window(hc0, hr0, hc1 - hc0, hr1 - hr0), job.path)
    block = as_float_block(raw, job.nodata)
    pads = ((hr0 - (gr0 - 1), (gr1 + 1) - hr1), (hc0 - (c0 - 1), (c1 + 1) - hc1))
    if any(p for pair in pads for p in pair):
        block = np.pad(block, pads, constant_values=np.nan)
    return horn_interior(block, job.ewres, job.nsres)


def _strip_stats(job: _StripJob, src: Any, rows: tuple[int, int]) -> _StripStats:
    """Slope statistics of window rows ``r0:r1`` inside the area; fills the steep mask rows."""
    import shapely

    r0, r1 = rows
    slope = _strip_slope(job, src, r0, r1)
    tf = offset_transform(job.transform, r0, 0)
    n_r, n_c = slope.shape
    # the box through the strip's first and last cell centres: when the area covers it,
    # every centre is inside and the rasterisation can be skipped (the whole-DEM case)
    centres = shapely.box(
        tf.c + 0.5 * tf.a, tf.f + (n_r - 0.5) * tf.e, tf.c + (n_c - 0.5) * tf.a, tf.f + 0.5 * tf.e
    )
    zones = None if job.area.covers(centres) else centre_zones([job.area], slope.shape, tf)
    mask_rows = None if job.steep_mask is None else job.steep_mask[r0:r1]
    c = count_steep(slope, job.threshold_pct, zones, steep_out=mask_rows)
    n_valid = int(c.n_valid[0])
    return _StripStats(
        n_valid=n_valid,
        n_nan=int(c.n_inside[0]) - n_valid,
        sum_pct=float(np.sum(slope, where=c.valid, dtype=np.float64)) if n_valid else 0.0,
        max_pct=float(np.max(slope, where=c.valid, initial=-np.inf)),
        n_ge=int(c.n_ge[0]),
        n_gt=int(c.n_gt[0]),
    )


def _strip_job(
    dem_path: object,
    vertical_units: str,
    area: BaseGeometry,
    area_crs: Any,
    threshold_pct: float,
    polygons: bool,
) -> tuple[_StripJob, pyproj.CRS, float]:
    """Open the DEM, check it covers *area*, and describe the strips of its window.

    Returns the job, the DEM's CRS and its metres per horizontal unit.
    """
    v_m = metres_per_unit(vertical_units)
    if area is None or area.is_empty or area.geom_type not in {"Polygon", "MultiPolygon"}:
        raise InputError("the disturbed area must be a non-empty polygon or multipolygon")
    with open_dem(dem_path) as src:
        info, local = area_in_dem_crs(src, dem_path, area, area_crs)
        _check_covers(src, local.bounds, dem_path)
        win = window_for_bounds(src, local.bounds, 0.0, dem_path)
        h_m = info.h_m_per_unit
        n_rows, n_cols = int(win.height), int(win.width)
        job = _StripJob(
            path=dem_path,
            nodata=src.nodata,
            raster_shape=(src.height, src.width),
            row_off=int(win.row_off),
            col_off=int(win.col_off),
            n_rows=n_rows,
            n_cols=n_cols,
            transform=offset_transform(src.transform, int(win.row_off), int(win.col_off)),
            area=local,
            ewres=abs(src.transform.a) * h_m / v_m,  # cell size in elevation units
            nsres=abs(src.transform.e) * h_m / v_m,
            threshold_pct=threshold_pct,
            steep_mask=np.zeros((n_rows, n_cols), dtype=np.uint8) if polygons else None,
        )
    return job, info.crs, h_m


def _check_covers(src: Any, lb: tuple[float, ...], dem_path: object) -> None:
    """Refuse an area whose bounds *lb* reach past the DEM (its slopes could not be told)."""
    rb = src.bounds
    tol = 1e-6 * max(abs(src.transform.a), 1.0)
    if (
        lb[0] < rb.left - tol
        or lb[2] > rb.right + tol
        or lb[1] < rb.bottom - tol
        or lb[3] > rb.top + tol
    ):
        raise CoverageError(
            f"the DEM (extent {rb.left:.1f}, {rb.bottom:.1f}, {rb.right:.1f}, {rb.top:.1f})"
            f" does not cover the disturbed area ({lb[0]:.1f}, {lb[1]:.1f}, {lb[2]:.1f},"
            f" {lb[3]:.1f})",
            path=dem_path,
        )


def _summarise(stats: list[_StripStats], job: _StripJob, h_m: float) -> SteepSlopeResult:
    """Add up the strips' statistics (no cell with a slope inside: CoverageError)."""
    n_valid = sum(st.n_valid for st in stats)
    if n_valid == 0:
        raise CoverageError(
            "no DEM cell inside the disturbed area has a slope value (nodata or DEM edge)",
            path=job.path,
        )
    cell_sqft = cell_area_sqft(job.transform, h_m)
    n_ge = sum(st.n_ge for st in stats)
    result = SteepSlopeResult(
        steep_slope_area_sqft=n_ge * cell_sqft,
        steep_slope_area_gt_sqft=sum(st.n_gt for st in stats) * cell_sqft,
        max_slope_pct=max(st.max_pct for st in stats),
        mean_slope_pct=sum(st.sum_pct for st in stats) / n_valid,
        n_cells=n_valid,
        n_nodata_cells=sum(st.n_nan for st in stats),
        cell_area_sqft=cell_sqft,
        threshold_pct=job.threshold_pct,
    )
    logger.info(
        "steep slopes in %s: %d of %d cells >= %.0f %% (%.0f sq ft), max %.1f %%",
        job.path,
        n_ge,
        n_valid,
        job.threshold_pct,
        result.steep_slope_area_sqft,
        result.max_slope_pct,
    )
    return result


def steep_slopes(
    dem_path: object,
    vertical_units: str,
    area: BaseGeometry,
    area_crs: Any,
    *,
    threshold_pct: float,
    working_crs: Any = "EPSG:3071",
    polygons: bool = True,
    strip_rows: int = 128,
) -> SteepSlopeResult:
    """Measure slopes at or above ``threshold_pct`` (the ordinance's) inside a disturbed area.

    The DEM is read in row strips (each with a one-row halo) over the window of the area's
    bounds, two strips at a time, so peak memory stays near two strips plus a one-byte
    steep mask per cell. Each strip is counted by :func:`count_steep`, the counter the
    screening uses.

    Parameters
    ----------
    dem_path : path-like
        DEM in a projected CRS.
    vertical_units : {"m", "ft", "us_ft"}
        Units of the elevations (``layers.toml`` ``[dem] vertical_units``).
    area : shapely Polygon or MultiPolygon
        Disturbed area. Cells count as inside when their centre is inside.
    area_crs : CRS-like
        CRS of *area*.
    threshold_pct : float
        Steep-slope threshold, percent (the ordinance's ``steep_slope_pct`` parameter).
    working_crs : CRS-like, optional
        CRS of the returned polygons (default EPSG:3071).
    polygons : bool, optional
        Whether to polygonise the steep cells for the map (default True).
    strip_rows : int, optional
        Rows per strip.

    Returns
    -------
    SteepSlopeResult

    Raises
    ------
    georeview.errors.CoverageError
        When the DEM does not cover the area, or no cell inside has a slope.
    georeview.errors.CRSError, georeview.errors.DataSourceError
        As :func:`georeview.measure.dem.read_dem_window`.
    """
    job, crs, h_m = _strip_job(dem_path, vertical_units, area, area_crs, threshold_pct, polygons)
    stats = map_strips(
        dem_path,
        lambda src, rows: _strip_stats(job, src, rows),
        list(row_strips(job.n_rows, strip_rows)),
    )
    result = _summarise(stats, job, h_m)
    if job.steep_mask is not None:
        from georeview.measure.steep_polygons import steep_polygons

        polys = steep_polygons(job.steep_mask, job.transform, crs, h_m, working_crs)
        result = replace(result, polygons=polys)
    return result
