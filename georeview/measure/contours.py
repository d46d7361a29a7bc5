"""Contour lines from a DEM (contourpy), written to a file, and the interval of a contour layer."""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
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
    from collections.abc import Iterator

    import geopandas as gpd
    import pyproj
    from affine import Affine
    from contourpy._contourpy import LineReturn_ChunkCombinedOffset
    from shapely.geometry.base import BaseGeometry

logger = logging.getLogger(__name__)

__all__ = [
    "ContourInterval",
    "contour_interval",
    "contours_ft",
    "measure_contour_interval_ft",
    "write_contours",
]

#: Rows per strip when contouring (bounds the float64 copies contourpy makes of z, x, y).
CONTOUR_STRIP_ROWS = 128
#: Columns per tile of a strip: each tile is traced at the levels its own cells span only
#: (contourpy makes one pass per level; a 512-cell tile of a rough lidar DEM spans about
#: a fifth of the levels its 6000-cell strip does). Tiles share their edge column.
CONTOUR_TILE_COLS = 512


def _levels_spanned(z: np.ndarray, finite: np.ndarray, interval_ft: float) -> np.ndarray:
    """The multiples of *interval_ft* between the block's lowest and highest finite value."""
    lo = np.min(z, where=finite, initial=np.inf)
    hi = np.max(z, where=finite, initial=-np.inf)
    steps = np.arange(math.ceil(lo / interval_ft), math.floor(hi / interval_ft) + 1)
    return steps * interval_ft


def _trace_tile(
    z: np.ndarray, finite: np.ndarray, interval_ft: float
) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """Lines of one tile (z in feet, NaN for nodata): level -> (points, points per line).

    contourpy's ``threaded`` generator on one thread traces as ``serial`` does, point for
    point (tested), but releases the GIL while it marches, so the two strip threads run
    at once.
    """
    import contourpy

    out: dict[float, tuple[np.ndarray, np.ndarray]] = {}
    if not finite.any():
        return out
    levels = _levels_spanned(z, finite, interval_ft)
    if levels.size == 0:
        return out
    zz = z if finite.all() else np.ma.masked_array(z, mask=~finite)
    gen = contourpy.contour_generator(
        z=zz, name="threaded", thread_count=1, line_type=contourpy.LineType.ChunkCombinedOffset
    )
    # contourpy types multi_lines as a union over every line_type; ChunkCombinedOffset
    # (asked for above) returns (points, offsets) per level
    chunks = cast("list[LineReturn_ChunkCombinedOffset]", gen.multi_lines(levels))
    for level, (points, offsets) in zip(levels, chunks, strict=True):
        pts, off = points[0], offsets[0]  # one chunk
        if pts is None or off is None or len(off) < 2:
            continue
        out[float(level)] = (pts, np.diff(off).astype(np.int64))
    return out


def _contour_strip(
    block: np.ndarray,
    ft_per_unit: float,
    r0: int,
    interval_ft: float,
    transform: Affine,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Contour one strip of rows (window rows ``r0..``, NaN for nodata) every *interval_ft*.

    Elevations are turned into feet in float64, strip by strip; the strip is traced in
    tiles of :data:`CONTOUR_TILE_COLS` columns, each at the levels it spans. Returns the
    LineStrings (joining cell centres, in the DEM's CRS) ordered by level and, within a
    level, west to east by tile, their levels, and whether the strip had data.
    """
    import shapely

    z = block.astype(np.float64)
    z *= ft_per_unit
    finite = np.isfinite(z)
    nothing = np.empty(0, dtype=object), np.empty(0)
    if not finite.any():
        return (*nothing, False)
    cols = z.shape[1]
    tiles = [
        (c0, _trace_tile(z[:, c0 : c1 + 1], finite[:, c0 : c1 + 1], interval_ft))
        for c0, c1 in (
            (c, min(c + CONTOUR_TILE_COLS, cols - 1)) for c in range(0, cols - 1, CONTOUR_TILE_COLS)
        )
    ]
    del z, finite
    pts_list, count_list, level_list = [], [], []
    for level in sorted({lv for _, t in tiles for lv in t}):
        for c0, traced in tiles:
            if level in traced:
                pts, counts = traced[level]
                if c0:
                    pts[:, 0] += c0
                pts_list.append(pts)
                count_list.append(counts)
                level_list.append(np.full(counts.size, level))
    if not pts_list:
        return (*nothing, True)
    del tiles
    pts = np.concatenate(pts_list)
    del pts_list
    counts = np.concatenate(count_list)
    pts[:, 0] = transform.c + transform.a * (pts[:, 0] + 0.5)
    pts[:, 1] = transform.f + transform.e * (pts[:, 1] + r0 + 0.5)
    lines = shapely.linestrings(pts, indices=np.repeat(np.arange(counts.size), counts))
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


def _strip_bounds(grid: _ContourGrid) -> list[tuple[int, int]]:
    """First and last window row of each strip (strips share their edge row)."""
    rows = grid.rows
    return [
        (r0, min(r0 + CONTOUR_STRIP_ROWS, rows - 1))
        for r0 in range(0, rows - 1, CONTOUR_STRIP_ROWS)
    ]


def _contour_strips(
    dem_path: object,
    grid: _ContourGrid,
    ft_per_unit: float,
    interval_ft: float,
    bounds: list[tuple[int, int]],
) -> list[tuple[np.ndarray, np.ndarray, bool]]:
    """Contour the strips *bounds* of the window, two strips at a time (on two threads).

    Each thread reads its own strips with its own handle, so only two strips of the DEM
    are in memory at a time.
    """
    from rasterio.windows import Window

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


def _as_frame(
    parts: list[tuple[np.ndarray, np.ndarray, bool]],
    grid: _ContourGrid,
    *,
    clip: bool,
    working_crs: Any,
) -> gpd.GeoDataFrame:
    """The lines of *parts* as a frame with ``elev_ft``, clipped and in *working_crs*."""
    import geopandas as gpd

    lines = np.concatenate([p[0] for p in parts])
    elev = np.concatenate([p[1] for p in parts])
    gdf = gpd.GeoDataFrame({"elev_ft": elev.astype(np.float64)}, geometry=lines, crs=grid.crs)
    if clip and len(gdf):
        gdf = _clip_to_area(gdf, grid)
    if gdf.crs is not None and gdf.crs.equals(working_crs):
        return gdf
    return gdf.to_crs(working_crs)


def _checked_interval(interval_ft: float) -> float:
    """*interval_ft* itself, or InputError when it is not a positive finite number of feet."""
    if not (interval_ft > 0 and math.isfinite(interval_ft)):
        raise InputError(f"the contour interval must be positive, got {interval_ft}")
    return interval_ft


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

    The window is contoured in strips of :data:`CONTOUR_STRIP_ROWS` rows (sharing their
    edge row, on two threads), each strip in tiles of :data:`CONTOUR_TILE_COLS` columns
    (sharing their edge column) traced at the levels the tile spans only, all in one
    ``multi_lines`` call, and the lines of a strip are built by one vectorised shapely
    call; so a line crossing a strip or tile edge comes out as pieces that meet there.
    Clipping is skipped when the area covers the whole window.

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
    interval_ft = _checked_interval(interval_ft)
    ft_per_unit = metres_per_unit(vertical_units) / M_PER_FT
    grid = _contour_grid(dem_path, area, area_crs)
    parts = _contour_strips(dem_path, grid, ft_per_unit, interval_ft, _strip_bounds(grid))
    if not any(p[2] for p in parts):
        raise CoverageError("the DEM has no data around the area", path=dem_path)
    return _as_frame(parts, grid, clip=clip, working_crs=working_crs)


#: Strips contoured between two writes when contours are streamed to a file: bounds the
#: lines held at once (a 36M-cell lidar DEM has 10 million vertices of 5-ft contours).
STREAM_STRIPS = 2


def write_contours(
    dem_path: object,
    vertical_units: str,
    area: BaseGeometry,
    area_crs: Any,
    out_path: Path,
    *,
    interval_ft: float = 2.0,
    working_crs: Any = "EPSG:3071",
    clip: bool = True,
    layer: str = "contours",
    driver: str = "GPKG",
) -> int:
    """Write :func:`contours_ft`'s lines to a vector file, :data:`STREAM_STRIPS` at a time.

    The same lines, in the same order, with ``elev_ft``, but only a few strips'
    lines are held at once: each batch goes as WKB through one Arrow stream into one
    GDAL write (pyogrio), so the GeoPackage's spatial index is built once.

    Parameters
    ----------
    dem_path, vertical_units, area, area_crs, interval_ft, working_crs, clip
        As :func:`contours_ft`.
    out_path : path-like
        The file to write (replaced if it exists).
    layer : str, optional
        Layer name (default ``"contours"``).
    driver : str, optional
        OGR driver (default ``"GPKG"``).

    Returns
    -------
    int
        Lines written.

    Raises
    ------
    georeview.errors.InputError, georeview.errors.CoverageError
        As :func:`contours_ft` (*out_path* is then left as it was).
    """
    import pyarrow as pa
    import pyogrio
    import pyproj
    import shapely

    interval_ft = _checked_interval(interval_ft)
    ft_per_unit = metres_per_unit(vertical_units) / M_PER_FT
    grid = _contour_grid(dem_path, area, area_crs)
    bounds = _strip_bounds(grid)
    schema = pa.schema([("elev_ft", pa.float64()), ("geometry", pa.binary())])
    seen = {"data": False, "lines": 0}

    def batches() -> Iterator[pa.RecordBatch]:
        for k in range(0, len(bounds), STREAM_STRIPS):
            parts = _contour_strips(
                dem_path, grid, ft_per_unit, interval_ft, bounds[k : k + STREAM_STRIPS]
            )
            seen["data"] = seen["data"] or any(p[2] for p in parts)
            gdf = _as_frame(parts, grid, clip=clip, working_crs=working_crs)
            del parts
            seen["lines"] += len(gdf)
            wkb = shapely.to_wkb(gdf.geometry.to_numpy())
            yield pa.record_batch(
                [pa.array(gdf["elev_ft"].to_numpy()), pa.array(wkb, type=pa.binary())],
                schema=schema,
            )

    out = Path(out_path)
    # written beside the target and moved over it only when whole: a failed or
    # interrupted run leaves the old file (or none), never a half-written one
    part = out.with_name(f".{out.stem}.part{out.suffix}")  # GDAL goes by the suffix
    part.unlink(missing_ok=True)
    try:
        pyogrio.write_arrow(
            pa.RecordBatchReader.from_batches(schema, batches()),
            part,
            layer=layer,
            driver=driver,
            geometry_name="geometry",
            geometry_type="LineString",
            crs=pyproj.CRS.from_user_input(working_crs).to_wkt(),
        )
        if not seen["data"]:
            raise CoverageError("the DEM has no data around the area", path=dem_path)
        os.replace(part, out)
    finally:
        part.unlink(missing_ok=True)
    return seen["lines"]


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
