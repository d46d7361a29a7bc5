"""Terrain measures from a DEM: slope, steep-slope areas and contours.

The DEM is never warped. Shapes are reprojected into the DEM's own CRS, and only a
window around them (plus a margin) is read. Horizontal units come from the DEM's CRS;
vertical units are stated by the caller (``layers.toml`` ``[dem] vertical_units``), because
a GeoTIFF rarely says them. Slopes are computed with Horn's (1981) 3x3 method, the same
arithmetic as ``gdaldem slope -p``.

Cells count as *inside* a polygon when their centre is inside it (GDAL's default
rasterisation rule, :func:`rasterio.features.geometry_mask` with ``all_touched=False``).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from georeview.errors import CoverageError, CRSError, DataSourceError, InputError, LimitError
from georeview.units import M_PER_FT, metres_per_unit, sqm_to_sqft

if TYPE_CHECKING:
    import geopandas as gpd
    import pyproj
    from affine import Affine
    from contourpy._contourpy import LineReturn_ChunkCombinedOffset
    from shapely.geometry.base import BaseGeometry

logger = logging.getLogger(__name__)

__all__ = [
    "WISCONSIN_ELEVATION_FT",
    "DemWindow",
    "SteepSlopeResult",
    "contours_ft",
    "dem_crs_info",
    "geometry_to_crs",
    "measure_contour_interval_ft",
    "read_dem_window",
    "slope_pct",
    "steep_slopes",
    "vertical_units_warnings",
]


#: Lowest and highest land surface of Wisconsin, international feet: Lake Michigan's
#: low-water datum (577.5 ft IGLD 1985) and Timms Hill (1,951 ft), Wisconsin's highest point
#: (USGS, "Elevations and Distances in the United States"). In metres: 176 to 595.
WISCONSIN_ELEVATION_FT = (577.5, 1951.0)
#: Margin on the Wisconsin range before elevations are called implausible, feet.
_ELEVATION_MARGIN_FT = 25.0
#: A DEM slope above this, percent (71.6 degrees), is implausible for land at DEM cell
#: sizes (cliffs of the Wisconsin Dells and the Niagara Escarpment reach it only in 1 m
#: lidar); a feet DEM declared in metres multiplies every slope by 3.28.
IMPLAUSIBLE_SLOPE_PCT = 300.0

#: Rows per strip when slope is computed over a large window (bounds peak memory).
_STRIP_ROWS = 256
#: Threads for the strips of a large window.
_N_THREADS = 2
#: GDAL block cache (MB) while strips are read. Each block is needed once or twice, so a
#: small cache loses nothing; GDAL's default (5 % of RAM) would keep the whole file resident.
_GDAL_CACHE_MB = 64
#: rasterio's in-memory rasterisation is not safe to run from two threads at once (it can
#: emit a spurious NotGeoreferencedWarning), so masks are drawn one at a time.
_RASTERIZE_LOCK = threading.Lock()


# --------------------------------------------------------------------------- slope


def _horn_interior(z: np.ndarray, ewres: float, nsres: float) -> np.ndarray:
    """Horn percent slope of the interior cells of a block (``gdaldem slope -p`` arithmetic).

    The 3x3 sums are formed in the block's dtype and in GDAL's order
    (``(z0 + z3 + z3 + z6) - (z2 + z5 + z5 + z8)``), as GDAL's ``GDALSlopeHornAlg`` does, so a
    float32 block gives gdaldem's sums bit for bit. The rest is computed in the block's dtype
    too (GDAL uses double there): for float32 that changes the result by about 1e-7
    relative, far below the 1e-3 percentage-point tolerance, and halves memory traffic.

    Parameters
    ----------
    z : numpy.ndarray
        2-D block, float32 or float64, NaN where there is no data.
    ewres, nsres : float
        Cell width and height in elevation units (both positive).

    Returns
    -------
    numpy.ndarray
        Percent slope of shape ``(rows - 2, cols - 2)``, in the block's dtype.
    """
    a, b, c = z[:-2, :-2], z[:-2, 1:-1], z[:-2, 2:]
    d, f = z[1:-1, :-2], z[1:-1, 2:]
    g, h, i = z[2:, :-2], z[2:, 1:-1], z[2:, 2:]
    dx = a + d
    dx += d
    dx += g
    tmp = c + f
    tmp += f
    tmp += i
    dx -= tmp  # west minus east
    dy = g + h
    dy += h
    dy += i
    np.add(a, b, out=tmp)
    tmp += b
    tmp += c
    dy -= tmp  # south minus north
    del tmp
    # 100 * sqrt((dx / ewres)^2 + (dy / nsres)^2) / 8
    dx *= z.dtype.type(1.0 / ewres)
    dy *= z.dtype.type(1.0 / nsres)
    dx *= dx
    dy *= dy
    dx += dy
    del dy
    np.sqrt(dx, out=dx)
    dx *= z.dtype.type(100.0 / 8.0)
    # gdaldem writes nodata where any of the nine cells (centre included) has none.
    centre_nan = np.isnan(z[1:-1, 1:-1])
    if centre_nan.any():
        dx[centre_nan] = np.nan
    return dx


def _as_float_block(dem: np.ndarray, nodata: float | None) -> np.ndarray:
    """Return *dem* as float32/float64 with NaN for nodata (a copy when needed)."""
    arr = np.asarray(dem)
    if arr.dtype == np.float32 or arr.dtype == np.float64:
        work = arr
    elif np.issubdtype(arr.dtype, np.integer) and arr.dtype.itemsize <= 2:
        work = arr.astype(np.float32)  # exact: |values| < 2**24
    else:
        work = arr.astype(np.float64)
    if nodata is not None and not (isinstance(nodata, float) and math.isnan(nodata)):
        hit = arr == nodata
        if hit.any():
            work = work.copy() if work is arr else work
            work[hit] = np.nan
    return work


def slope_pct(dem: np.ndarray, xres: float, yres: float, nodata: float | None = None) -> np.ndarray:
    """Percent slope by Horn's method, as ``gdaldem slope -p`` computes it.

    Parameters
    ----------
    dem : numpy.ndarray
        2-D elevations (rows north to south). Integer grids are converted to float32
        (exact below 2**24), float32 stays float32 (GDAL's own arithmetic), anything else
        becomes float64.
    xres, yres : float
        Cell width and height in the *same units as the elevations* (positive). When the
        vertical units differ from the horizontal ones, convert the resolution first:
        ``xres_in_z_units = xres_in_crs_units * metres_per_unit(h) / metres_per_unit(v)``.
    nodata : float, optional
        Value marking cells without data; NaN cells are always treated as nodata.

    Returns
    -------
    numpy.ndarray
        float32 percent slope, same shape as *dem*. The one-cell border is NaN (gdaldem
        without ``-compute_edges`` writes nodata there), and so are nodata cells and
        their eight neighbours.

    Raises
    ------
    georeview.errors.InputError
        For a non 2-D array or a non-positive resolution.
    """
    arr = np.asarray(dem)
    if arr.ndim != 2:
        raise InputError(f"slope needs a 2-D DEM array, got {arr.ndim} dimensions")
    if not (xres > 0 and yres > 0 and math.isfinite(xres) and math.isfinite(yres)):
        raise InputError(f"cell size must be positive and finite, got {xres} x {yres}")
    out = np.full(arr.shape, np.nan, dtype=np.float32)
    if arr.shape[0] < 3 or arr.shape[1] < 3:
        return out
    work = _as_float_block(arr, nodata)
    for r0 in range(1, arr.shape[0] - 1, _STRIP_ROWS):
        r1 = min(r0 + _STRIP_ROWS, arr.shape[0] - 1)
        out[r0:r1, 1:-1] = _horn_interior(work[r0 - 1 : r1 + 1], float(xres), float(yres))
    return out


# --------------------------------------------------------------------------- CRS and reading


@dataclass(frozen=True)
class DemCrsInfo:
    """The DEM's CRS and its horizontal unit.

    Attributes
    ----------
    crs : pyproj.CRS
        The DEM's CRS (may have no EPSG code).
    h_m_per_unit : float
        Metres per horizontal CRS unit (0.3048006096 for US survey feet).
    """

    crs: pyproj.CRS
    h_m_per_unit: float


def dem_crs_info(src_crs: Any, path: object) -> DemCrsInfo:
    """Check a DEM's CRS and return it as pyproj with its linear unit.

    Parameters
    ----------
    src_crs : rasterio.crs.CRS or None
        The CRS the raster declares.
    path : path-like
        The file, for error messages.

    Returns
    -------
    DemCrsInfo

    Raises
    ------
    georeview.errors.CRSError
        When the DEM has no CRS or a geographic one (slope in degree units is meaningless;
        reproject the DEM to a projected CRS before use).
    """
    import pyproj

    if src_crs is None:
        raise CRSError("the DEM declares no coordinate reference system", path=path)
    crs = pyproj.CRS.from_wkt(src_crs.to_wkt())
    if not crs.is_projected:
        raise CRSError(
            "the DEM is in a geographic CRS (degrees); slopes and areas need a projected CRS"
            " - reproject the DEM (e.g. gdalwarp -t_srs EPSG:3071) before use",
            path=path,
        )
    factor = crs.axis_info[0].unit_conversion_factor
    if not factor or not math.isfinite(factor):
        raise CRSError("the DEM's CRS has no linear unit", path=path)
    return DemCrsInfo(crs=crs, h_m_per_unit=float(factor))


def geometry_to_crs(geom: BaseGeometry, src_crs: Any, dst_crs: Any) -> BaseGeometry:
    """Reproject one shapely geometry between CRSs (vertices only, no densification).

    Parameters
    ----------
    geom : shapely geometry
    src_crs, dst_crs : anything :class:`pyproj.CRS` accepts

    Returns
    -------
    shapely geometry
        In *dst_crs*.

    Raises
    ------
    georeview.errors.CRSError
        When *src_crs* is missing.
    """
    import geopandas as gpd

    if src_crs is None:
        raise CRSError("a geometry was given without its CRS")
    return gpd.GeoSeries([geom], crs=src_crs).to_crs(dst_crs).iloc[0]


@dataclass(frozen=True)
class DemWindow:
    """A window of a DEM, read as float with NaN for nodata.

    Attributes
    ----------
    path : str
        The DEM file.
    elev : numpy.ndarray
        Elevations (float32 for float32/16-bit DEMs, else float64), NaN for nodata, in the
        DEM's vertical units.
    transform : affine.Affine
        Transform of the window.
    crs : pyproj.CRS
        The DEM's CRS.
    h_m_per_unit, v_m_per_unit : float
        Metres per horizontal (CRS) unit and per vertical unit.
    row_off, col_off : int
        Offset of the window in the full raster.
    raster_shape : tuple of int
        (rows, cols) of the full raster.
    """

    path: str
    elev: np.ndarray
    transform: Affine
    crs: pyproj.CRS
    h_m_per_unit: float
    v_m_per_unit: float
    row_off: int
    col_off: int
    raster_shape: tuple[int, int]

    @property
    def xres(self) -> float:
        """Cell width in CRS units."""
        return abs(self.transform.a)

    @property
    def yres(self) -> float:
        """Cell height in CRS units."""
        return abs(self.transform.e)

    @property
    def touches_raster_edge(self) -> tuple[bool, bool, bool, bool]:
        """Whether the window reaches the raster's (top, bottom, left, right) edge."""
        rows, cols = self.elev.shape
        return (
            self.row_off == 0,
            self.row_off + rows == self.raster_shape[0],
            self.col_off == 0,
            self.col_off + cols == self.raster_shape[1],
        )

    def cell_area_sqft(self) -> float:
        """Area of one cell in square international feet."""
        area_units = abs(self.transform.a * self.transform.e - self.transform.b * self.transform.d)
        return sqm_to_sqft(area_units * self.h_m_per_unit**2)

    def z_to_h(self) -> float:
        """Factor turning elevation units into horizontal CRS units."""
        return self.v_m_per_unit / self.h_m_per_unit


def _offset_transform(tf: Affine, row_off: int, col_off: int) -> Affine:
    """Transform of a window starting at (row_off, col_off) of a grid with transform *tf*.

    Written out instead of ``src.window_transform``: that multiplies Affine objects with
    ``*``, which affine >= 3 flags with a PendingDeprecationWarning.
    """
    from affine import Affine

    return Affine(
        tf.a,
        tf.b,
        tf.c + tf.a * col_off + tf.b * row_off,
        tf.d,
        tf.e,
        tf.f + tf.d * col_off + tf.e * row_off,
    )


def open_dem(path: object) -> Any:
    """Open a DEM with rasterio, turning failures into DataSourceError."""
    import rasterio

    p = Path(str(path))
    if not p.exists():
        raise DataSourceError("the DEM file does not exist", path=p)
    try:
        src = rasterio.open(p)
    except rasterio.errors.RasterioError as exc:
        raise DataSourceError(f"cannot open the DEM: {exc}", path=p) from exc
    if src.count < 1:
        src.close()
        raise DataSourceError("the DEM has no band", path=p)
    if src.transform.b != 0 or src.transform.d != 0:
        src.close()
        raise DataSourceError("rotated DEM grids are not supported", path=p)
    return src


def _read_rows(src: Any, window: Any, path: object) -> np.ndarray:
    """Read band 1 of a window, turning read failures (truncated files) into DataSourceError."""
    import rasterio

    try:
        return src.read(1, window=window)
    except rasterio.errors.RasterioError as exc:
        raise DataSourceError(
            f"cannot read the DEM (damaged or truncated?): {exc}", path=path
        ) from exc


def _window_for_bounds(
    src: Any, bounds: tuple[float, float, float, float], margin: float, path: object
) -> Any:
    """Integer window of *src* covering *bounds* grown by *margin* CRS units, clipped."""
    from rasterio.windows import Window, from_bounds

    left, bottom, right, top = bounds
    rb = src.bounds
    if right < rb.left or left > rb.right or top < rb.bottom or bottom > rb.top:
        raise CoverageError(
            f"the DEM (extent {rb.left:.1f}, {rb.bottom:.1f}, {rb.right:.1f}, {rb.top:.1f})"
            f" does not cover the area ({left:.1f}, {bottom:.1f}, {right:.1f}, {top:.1f})",
            path=path,
        )
    win = from_bounds(left - margin, bottom - margin, right + margin, top + margin, src.transform)
    win = win.round_offsets(op="floor").round_lengths(op="ceil")
    row0 = max(0, int(win.row_off))
    col0 = max(0, int(win.col_off))
    row1 = min(src.height, int(win.row_off + win.height) + 1)
    col1 = min(src.width, int(win.col_off + win.width) + 1)
    if row1 <= row0 or col1 <= col0:
        raise CoverageError("the DEM does not cover the area", path=path)
    check_cells((row1 - row0) * (col1 - col0), path)
    return Window(col0, row0, col1 - col0, row1 - row0)


def check_cells(n_cells: int, path: object, max_cells: int | None = None) -> None:
    """Refuse a DEM window of more than ``max_cells`` cells before it is read.

    Parameters
    ----------
    n_cells : int
        Cells the window would hold.
    path : path-like
        The DEM, for the message.
    max_cells : int, optional
        The limit (default ``georeview.config.limits().max_raster_cells``,
        environment variable ``GEOREVIEW_MAX_RASTER_CELLS``).

    Raises
    ------
    georeview.errors.LimitError
        When the window is larger than the limit.
    """
    if max_cells is None:
        from georeview.config import limits

        max_cells = limits().max_raster_cells
    if n_cells > max_cells:
        raise LimitError(
            f"the area needs a DEM window of {n_cells:,} cells, more than the limit of"
            f" {max_cells:,} (GEOREVIEW_MAX_RASTER_CELLS); is the site this large?",
            path=path,
            field="dem",
        )


def read_dem_window(
    path: object,
    vertical_units: str,
    geom: BaseGeometry,
    geom_crs: Any,
    *,
    margin: float = 0.0,
    margin_units: str = "cells",
) -> DemWindow:
    """Read the part of a DEM around a geometry, without warping the raster.

    Parameters
    ----------
    path : path-like
        DEM readable by rasterio, in a projected CRS.
    vertical_units : {"m", "ft", "us_ft"}
        Units of the elevations.
    geom : shapely geometry
        The area needed; reprojected into the DEM's CRS.
    geom_crs : CRS-like
        CRS of *geom*.
    margin : float, optional
        Extra border around the geometry's bounds.
    margin_units : {"cells", "ft"}, optional
        Units of *margin*.

    Returns
    -------
    DemWindow

    Raises
    ------
    georeview.errors.DataSourceError
        Missing, unreadable or truncated file.
    georeview.errors.CRSError
        DEM without CRS or in a geographic CRS.
    georeview.errors.CoverageError
        When the DEM does not reach the geometry, or the window holds no data.
    """
    v_m = metres_per_unit(vertical_units)
    with open_dem(path) as src:
        info = dem_crs_info(src.crs, path)
        local = geometry_to_crs(geom, geom_crs, info.crs)
        if local.is_empty:
            raise InputError("the area to read from the DEM is empty", path=path)
        if margin_units == "cells":
            margin_units_crs = margin * max(abs(src.transform.a), abs(src.transform.e))
        elif margin_units == "ft":
            margin_units_crs = margin * M_PER_FT / info.h_m_per_unit
        else:
            raise InputError(f"margin_units must be 'cells' or 'ft', not {margin_units!r}")
        window = _window_for_bounds(src, local.bounds, margin_units_crs, path)
        raw = _read_rows(src, window, path)
        elev = _as_float_block(raw, src.nodata)
        if elev is raw:
            elev = elev.copy()
        transform = _offset_transform(src.transform, int(window.row_off), int(window.col_off))
        raster_shape = (src.height, src.width)
    if not np.isfinite(elev).any():
        raise CoverageError("the DEM has no data around the area", path=path)
    return DemWindow(
        path=str(path),
        elev=elev,
        transform=transform,
        crs=info.crs,
        h_m_per_unit=info.h_m_per_unit,
        v_m_per_unit=v_m,
        row_off=int(window.row_off),
        col_off=int(window.col_off),
        raster_shape=raster_shape,
    )


def vertical_units_warnings(
    dem_path: object,
    vertical_units: str,
    area: BaseGeometry,
    area_crs: Any,
    *,
    max_slope_pct: float | None = None,
) -> list[str]:
    """Warn when a DEM's elevations or slopes are implausible for its declared units.

    Heuristic (Wisconsin): the median elevation of the DEM window around *area*,
    converted to feet with *vertical_units*, must lie within Wisconsin's land surface
    (:data:`WISCONSIN_ELEVATION_FT`, 577.5 to 1,951 ft, with a 25 ft margin). Wisconsin
    elevations in metres (176-595) declared as feet fall below it except above 552 m
    (1,813 ft, the highest northern hills), and elevations in feet (579-1,951) declared as
    metres fall above it (x 3.28) except below 602 ft (the Lake Michigan shore). Second, a
    steepest slope above :data:`IMPLAUSIBLE_SLOPE_PCT` (300 %) is flagged, the sign of feet
    declared as metres (slopes x 3.28). The check warns; it never changes a number.

    Parameters
    ----------
    dem_path : path-like
        The DEM.
    vertical_units : {"m", "ft", "us_ft"}
        The declared vertical units (``layers.toml [dem] vertical_units``).
    area : shapely geometry
        The site; the window is its bounds plus one cell.
    area_crs : CRS-like
        CRS of *area*.
    max_slope_pct : float, optional
        The steepest slope already measured on the site, percent.

    Returns
    -------
    list of str
        Warnings for report.json (empty when both checks pass or the DEM has no data there).
    """
    out: list[str] = []
    try:
        win = read_dem_window(dem_path, vertical_units, area, area_crs, margin=1)
    except (CoverageError, LimitError):
        return out  # the measures say why they have no value
    elev = win.elev[np.isfinite(win.elev)]
    median_ft = float(np.median(elev)) * win.v_m_per_unit / M_PER_FT
    low, high = WISCONSIN_ELEVATION_FT
    where = f"{Path(str(dem_path)).name} (vertical_units = {vertical_units!r})"
    if not (low - _ELEVATION_MARGIN_FT <= median_ft <= high + _ELEVATION_MARGIN_FT):
        out.append(
            f"DEM {where}: the median elevation around the site reads as {median_ft:,.0f} ft,"
            f" outside Wisconsin's land surface ({low:,.1f} to {high:,.0f} ft); are the"
            " declared vertical units right? Slopes would be off by a factor of 3.28."
        )
    if max_slope_pct is not None and max_slope_pct > IMPLAUSIBLE_SLOPE_PCT:
        out.append(
            f"DEM {where}: the steepest slope on the site is {max_slope_pct:,.0f} %, more than"
            f" the {IMPLAUSIBLE_SLOPE_PCT:.0f} % plausible for land; are the declared vertical"
            " units right (feet declared as metres make slopes 3.28 times too steep)?"
        )
    for text in out:
        logger.warning("%s", text)
    return out


# --------------------------------------------------------------------------- steep slopes


@dataclass(frozen=True)
class SteepSlopeResult:
    """Slopes inside the disturbed area.

    Attributes
    ----------
    steep_slope_area_sqft : float
        Area of cells with slope >= 20 % (Somers 17.08(C)(3)(c)).
    steep_slope_area_gt_sqft : float
        Area of cells with slope > 20 % (Deerfield 31.06(4) compares strictly).
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
        Steep (>= threshold) areas, one polygon per connected patch, with ``area_sqft``,
        in the working CRS; None when polygons were not asked for.
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


def _strips(n_rows: int, strip_rows: int) -> Iterator[tuple[int, int]]:
    """Yield ``(r0, r1)`` row ranges covering ``range(n_rows)``."""
    for r0 in range(0, n_rows, strip_rows):
        yield r0, min(n_rows, r0 + strip_rows)


@dataclass(frozen=True)
class _StripJob:
    """What every strip of a steep-slope run needs (read-only, shared by the threads)."""

    path: object
    nodata: float | None
    raster_shape: tuple[int, int]
    row_off: int
    col_off: int
    n_cols: int
    transform: Affine
    area: BaseGeometry
    ewres: float
    nsres: float
    threshold_pct: float
    steep_mask: np.ndarray | None


def _strip_stats(
    job: _StripJob, src: Any, r0: int, r1: int
) -> tuple[int, int, float, float, int, int]:
    """Slope statistics of window rows ``r0:r1`` inside the area; fills the steep mask rows.

    Returns ``(n_valid, n_nan, sum_pct, max_pct, n_ge, n_gt)``.
    """
    import shapely
    from rasterio.features import geometry_mask
    from rasterio.windows import Window

    height, width = job.raster_shape
    gr0, gr1 = job.row_off + r0, job.row_off + r1
    c0, c1 = job.col_off, job.col_off + job.n_cols
    # halo of one cell each side, clipped to the raster; a missing halo is NaN (DEM edge)
    hr0, hr1 = max(0, gr0 - 1), min(height, gr1 + 1)
    hc0, hc1 = max(0, c0 - 1), min(width, c1 + 1)
    raw = _read_rows(src, Window(hc0, hr0, hc1 - hc0, hr1 - hr0), job.path)
    block = _as_float_block(raw, job.nodata)
    pads = ((hr0 - (gr0 - 1), (gr1 + 1) - hr1), (hc0 - (c0 - 1), (c1 + 1) - hc1))
    if any(p for pair in pads for p in pair):
        block = np.pad(block, pads, constant_values=np.nan)
    slope = _horn_interior(block, job.ewres, job.nsres)
    del block, raw
    tf = _offset_transform(job.transform, r0, 0)
    rows, cols = slope.shape
    # the box through the strip's first and last cell centres: when the area covers it,
    # every centre is inside and the rasterisation can be skipped (the whole-DEM case)
    centres = shapely.box(
        tf.c + 0.5 * tf.a,
        tf.f + (rows - 0.5) * tf.e,
        tf.c + (cols - 0.5) * tf.a,
        tf.f + 0.5 * tf.e,
    )
    if job.area.covers(centres):
        return _strip_counts(job, slope, None, r0, r1)
    with _RASTERIZE_LOCK:
        inside = geometry_mask([job.area], out_shape=slope.shape, transform=tf, invert=True)
    return _strip_counts(job, slope, inside, r0, r1)


def _strip_counts(
    job: _StripJob, slope: np.ndarray, inside: np.ndarray | None, r0: int, r1: int
) -> tuple[int, int, float, float, int, int]:
    """Counts and sums of one strip's slopes (*inside* None: every cell is inside)."""
    n_inside = slope.size if inside is None else int(np.count_nonzero(inside))
    valid = np.isfinite(slope)
    if inside is not None:
        valid &= inside
    n_valid = int(np.count_nonzero(valid))
    if n_valid == 0:
        return 0, n_inside, 0.0, -np.inf, 0, 0
    total = float(np.sum(slope, where=valid, dtype=np.float64))
    vmax = float(np.max(slope, where=valid, initial=-np.inf))
    # NaN compares False, so the comparisons need no validity mask
    steep = np.greater(slope, job.threshold_pct, out=valid)  # reuse the buffer
    if inside is not None:
        steep &= inside
    n_gt = int(np.count_nonzero(steep))
    np.greater_equal(slope, job.threshold_pct, out=steep)
    if inside is not None:
        steep &= inside
    n_ge = int(np.count_nonzero(steep))
    if job.steep_mask is not None:
        job.steep_mask[r0:r1] = steep
    return n_valid, n_inside - n_valid, total, vmax, n_ge, n_gt


def _run_strips(
    job: _StripJob, strips: list[tuple[int, int]]
) -> list[tuple[int, int, float, float, int, int]]:
    """Run :func:`_strip_stats` over the strips, on two threads when there are several.

    numpy and GDAL release the GIL, so two threads use both cores of a small machine. Each
    thread opens its own dataset handle (GDAL handles are not thread-safe).
    """
    import rasterio

    with rasterio.Env(GDAL_CACHEMAX=_GDAL_CACHE_MB):
        return _run_strips_in_env(job, strips)


def _run_strips_in_env(
    job: _StripJob, strips: list[tuple[int, int]]
) -> list[tuple[int, int, float, float, int, int]]:
    """Body of :func:`_run_strips`, inside its GDAL environment."""
    from concurrent.futures import ThreadPoolExecutor

    if len(strips) < 2:
        with open_dem(job.path) as src:
            return [_strip_stats(job, src, r0, r1) for r0, r1 in strips]
    local = threading.local()
    handles: list[Any] = []
    lock = threading.Lock()

    def work(bounds: tuple[int, int]) -> tuple[int, int, float, float, int, int]:
        src = getattr(local, "src", None)
        if src is None:
            src = local.src = open_dem(job.path)
            with lock:
                handles.append(src)
        return _strip_stats(job, src, *bounds)

    try:
        with ThreadPoolExecutor(max_workers=_N_THREADS) as pool:
            return list(pool.map(work, strips))
    finally:
        for h in handles:
            h.close()


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
    bounds, so peak memory stays near one strip plus a one-byte steep mask per cell.

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
    working_crs : CRS-like, optional
        CRS of the returned polygons (default EPSG:3071).
    threshold_pct : float
        Steep-slope threshold, percent (the ordinance's ``steep_slope_pct`` parameter).
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
        As :func:`read_dem_window`.
    """
    v_m = metres_per_unit(vertical_units)
    if area is None or area.is_empty or area.geom_type not in {"Polygon", "MultiPolygon"}:
        raise InputError("the disturbed area must be a non-empty polygon or multipolygon")
    with open_dem(dem_path) as src:
        info = dem_crs_info(src.crs, dem_path)
        local = geometry_to_crs(area, area_crs, info.crs)
        rb = src.bounds
        lb = local.bounds
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
        win = _window_for_bounds(src, lb, 0.0, dem_path)
        h_m = info.h_m_per_unit
        ewres = abs(src.transform.a) * h_m / v_m  # cell size in elevation units
        nsres = abs(src.transform.e) * h_m / v_m
        cell_area_sqft = sqm_to_sqft(abs(src.transform.a * src.transform.e) * h_m * h_m)
        wt = _offset_transform(src.transform, int(win.row_off), int(win.col_off))
        raster_shape = (src.height, src.width)
        nodata = src.nodata
    n_rows, n_cols = int(win.height), int(win.width)
    steep_mask = np.zeros((n_rows, n_cols), dtype=np.uint8) if polygons else None
    job = _StripJob(
        path=dem_path,
        nodata=nodata,
        raster_shape=raster_shape,
        row_off=int(win.row_off),
        col_off=int(win.col_off),
        n_cols=n_cols,
        transform=wt,
        area=local,
        ewres=ewres,
        nsres=nsres,
        threshold_pct=threshold_pct,
        steep_mask=steep_mask,
    )
    strips = list(_strips(n_rows, strip_rows))
    stats = _run_strips(job, strips)
    n_valid = sum(st[0] for st in stats)
    n_nan = sum(st[1] for st in stats)
    total = sum(st[2] for st in stats)
    vmax = max(st[3] for st in stats)
    n_ge = sum(st[4] for st in stats)
    n_gt = sum(st[5] for st in stats)
    if n_valid == 0:
        raise CoverageError(
            "no DEM cell inside the disturbed area has a slope value (nodata or DEM edge)",
            path=dem_path,
        )
    polys = None
    if steep_mask is not None:
        polys = _steep_polygons(steep_mask, wt, info.crs, h_m, working_crs)
    result = SteepSlopeResult(
        steep_slope_area_sqft=n_ge * cell_area_sqft,
        steep_slope_area_gt_sqft=n_gt * cell_area_sqft,
        max_slope_pct=vmax,
        mean_slope_pct=total / n_valid,
        n_cells=n_valid,
        n_nodata_cells=n_nan,
        cell_area_sqft=cell_area_sqft,
        threshold_pct=threshold_pct,
        polygons=polys,
    )
    logger.info(
        "steep slopes in %s: %d of %d cells >= %.0f %% (%.0f sq ft), max %.1f %%",
        dem_path,
        n_ge,
        n_valid,
        threshold_pct,
        result.steep_slope_area_sqft,
        vmax,
    )
    return result


#: Polygons converted per batch (bounds the memory of GDAL's GeoJSON-like rings).
_POLYGON_BATCH = 20_000


def _steep_polygons(
    mask: np.ndarray, transform: Affine, crs: pyproj.CRS, h_m: float, working_crs: Any
) -> gpd.GeoDataFrame:
    """Polygonise a steep-cell mask (8-connected patches) into the working CRS.

    GDAL's polygonize (:func:`rasterio.features.shapes`) yields GeoJSON-like rings; they
    are turned into shapely polygons batch by batch with vectorised calls (one
    ``linearrings`` and one ``polygons`` call per batch, coordinates flattened in C by
    ``itertools.chain``), instead of one ``shape()`` per polygon, and the areas come from
    one ``shapely.area`` call.
    """
    from itertools import chain, islice

    import geopandas as gpd
    import shapely
    from rasterio.features import shapes

    gen = shapes(mask, mask=mask.view(bool), connectivity=8, transform=transform)
    batches = []
    while True:
        batch = [g["coordinates"] for g, _ in islice(gen, _POLYGON_BATCH)]
        if not batch:
            break
        rings_per_poly = np.fromiter(map(len, batch), dtype=np.int64, count=len(batch))
        rings = list(chain.from_iterable(batch))
        del batch
        pts_per_ring = np.fromiter(map(len, rings), dtype=np.int64, count=len(rings))
        n_pts = int(pts_per_ring.sum())
        xy = np.fromiter(
            chain.from_iterable(chain.from_iterable(rings)), dtype=np.float64, count=2 * n_pts
        ).reshape(n_pts, 2)
        del rings
        ring_geoms = shapely.linearrings(
            xy, indices=np.repeat(np.arange(pts_per_ring.size), pts_per_ring)
        )
        batches.append(
            shapely.polygons(
                ring_geoms, indices=np.repeat(np.arange(rings_per_poly.size), rings_per_poly)
            )
        )
    geoms = np.concatenate(batches) if batches else np.empty(0, dtype=object)
    gdf = gpd.GeoDataFrame(
        {"area_sqft": sqm_to_sqft(shapely.area(geoms) * h_m * h_m)},
        geometry=geoms,
        crs=crs,
    )
    return gdf.to_crs(working_crs)


# --------------------------------------------------------------------------- contours


#: Rows per strip when contouring (bounds the float64 copies contourpy makes of z, x, y).
_CONTOUR_STRIP_ROWS = 128


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
    """
    from concurrent.futures import ThreadPoolExecutor

    import geopandas as gpd
    import shapely

    if not (interval_ft > 0 and math.isfinite(interval_ft)):
        raise InputError(f"the contour interval must be positive, got {interval_ft}")
    v_m = metres_per_unit(vertical_units)
    with open_dem(dem_path) as src:
        info = dem_crs_info(src.crs, dem_path)
        local = geometry_to_crs(area, area_crs, info.crs)
        if local.is_empty:
            raise InputError("the area to read from the DEM is empty", path=dem_path)
        one_cell = max(abs(src.transform.a), abs(src.transform.e))
        window = _window_for_bounds(src, local.bounds, one_cell, dem_path)
        row_off, col_off = int(window.row_off), int(window.col_off)
        rows, cols = int(window.height), int(window.width)
        tf = _offset_transform(src.transform, row_off, col_off)
        nodata = src.nodata
    crs = info.crs
    if rows < 2 or cols < 2:
        # A contour needs a 2 x 2 block of cells (a 1-pixel DEM has none).
        raise CoverageError(
            f"the DEM window around the area is {rows} x {cols} cells; contours need at"
            " least 2 x 2",
            path=dem_path,
        )
    ft_per_unit = v_m / M_PER_FT
    # strips share their edge row; each thread reads its own strips with its own handle,
    # so only two strips of the DEM are in memory at a time
    bounds = [
        (r0, min(r0 + _CONTOUR_STRIP_ROWS, rows - 1))
        for r0 in range(0, rows - 1, _CONTOUR_STRIP_ROWS)
    ]
    local_handles = threading.local()
    handles: list[Any] = []
    lock = threading.Lock()

    def strip(b: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, bool]:
        from rasterio.windows import Window

        src = getattr(local_handles, "src", None)
        if src is None:
            src = local_handles.src = open_dem(dem_path)
            with lock:
                handles.append(src)
        raw = _read_rows(src, Window(col_off, row_off + b[0], cols, b[1] - b[0] + 1), dem_path)
        block = _as_float_block(raw, nodata)
        del raw
        return _contour_strip(block, ft_per_unit, b[0], interval_ft, tf)

    import rasterio

    try:
        with (
            rasterio.Env(GDAL_CACHEMAX=_GDAL_CACHE_MB),
            ThreadPoolExecutor(max_workers=_N_THREADS) as pool,
        ):
            parts = list(pool.map(strip, bounds))
    finally:
        for h in handles:
            h.close()
    if not any(p[2] for p in parts):
        raise CoverageError("the DEM has no data around the area", path=dem_path)
    lines = np.concatenate([p[0] for p in parts])
    elev = np.concatenate([p[1] for p in parts])
    del parts
    gdf = gpd.GeoDataFrame({"elev_ft": elev.astype(np.float64)}, geometry=lines, crs=crs)
    if clip and len(gdf):
        # every line lies between the window's cell centres, so inside this box
        frame = shapely.box(tf.c, tf.f + tf.e * rows, tf.c + tf.a * cols, tf.f)
        if not local.covers(frame):
            gdf = gdf.clip(local).explode(index_parts=False, ignore_index=True)
            gdf = gdf[gdf.geom_type == "LineString"].reset_index(drop=True)
    if gdf.crs is not None and gdf.crs.equals(working_crs):
        return gdf
    return gdf.to_crs(working_crs)


def measure_contour_interval_ft(gdf: gpd.GeoDataFrame, field: str, units: str = "ft") -> float:
    """Measure the contour interval of a submitted contour layer from its elevations.

    The distinct levels (rounded to 0.001 ft) are sorted and differenced. The interval is
    the smallest difference ``d`` such that at least half of all the differences are whole
    multiples of ``d`` (within 0.001 ft): gaps (a missing line) and index contours (every
    fifth line, often in the same layer) do not change it, and a few stray levels (a
    spot elevation typed into the same field) are outvoted instead of producing a tiny
    false interval.

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
    float
        Contour interval in international feet.

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
    vals = vals[np.isfinite(vals)] * (metres_per_unit(units) / M_PER_FT)
    levels = np.unique(np.round(vals, 3))
    if levels.size < 2:
        raise InputError(
            f"the contour layer has {levels.size} distinct level(s); an interval needs two",
            field=field,
        )
    diffs = np.diff(levels)
    tol = 1.5e-3
    for d in np.unique(np.round(diffs, 3)):
        ratio = diffs / d
        multiples = np.abs(ratio - np.round(ratio)) * d <= tol
        if np.count_nonzero(multiples) * 2 >= diffs.size:
            return float(d)
    logger.warning("contour levels of %r are irregular; using the median spacing", field)
    return float(np.median(diffs))
