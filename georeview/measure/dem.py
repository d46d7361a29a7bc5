"""DEM access: its CRS and units, windows around a geometry, strips read on two threads.

The DEM is never warped. Shapes are reprojected into the DEM's own CRS, and only a
window around them (plus a margin) is read. Horizontal units come from the DEM's CRS;
vertical units are stated by the caller (``layers.toml`` ``[dem] vertical_units``), because
a GeoTIFF rarely says them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from georeview.errors import CoverageError, CRSError, DataSourceError, InputError, LimitError
from georeview.units import M_PER_FT, metres_per_unit, sqm_to_sqft

if TYPE_CHECKING:
    import pyproj
    from affine import Affine
    from shapely.geometry.base import BaseGeometry

__all__ = [
    "DemCrsInfo",
    "DemWindow",
    "area_in_dem_crs",
    "as_float_block",
    "cell_area_sqft",
    "check_cells",
    "dem_crs_info",
    "geometry_mask",
    "geometry_to_crs",
    "map_strips",
    "offset_transform",
    "open_dem",
    "polygonize",
    "rasterize",
    "read_dem_window",
    "read_rows",
    "row_strips",
    "stored_as_is",
    "window_for_bounds",
]

#: Threads for the strips of a large window.
N_THREADS = 2
#: GDAL block cache (MB) while strips are read. Each block is needed once or twice, so a
#: small cache loses nothing; GDAL's default (5 % of RAM) would keep the whole file resident.
GDAL_CACHE_MB = 64

ResultT = TypeVar("ResultT")
ItemT = TypeVar("ItemT")

#: rasterio's in-memory datasets are not safe to create from two threads at once: each
#: silences a NotGeoreferencedWarning with warnings.catch_warnings, which swaps the
#: process's filters, so a second thread's can leak out. Every rasterisation, mask and
#: polygonisation of an array in the package goes through the three functions below, one
#: at a time.
_IN_MEMORY_LOCK = threading.RLock()


def rasterize(shapes: Any, **kwargs: Any) -> np.ndarray:
    """:func:`rasterio.features.rasterize`, one call at a time across threads."""
    from rasterio.features import rasterize as _rasterize

    with _IN_MEMORY_LOCK:
        return _rasterize(shapes, **kwargs)


def geometry_mask(geoms: Any, **kwargs: Any) -> np.ndarray:
    """:func:`rasterio.features.geometry_mask`, one call at a time across threads."""
    from rasterio.features import geometry_mask as _geometry_mask

    with _IN_MEMORY_LOCK:
        return _geometry_mask(geoms, **kwargs)


def polygonize(source: np.ndarray, **kwargs: Any) -> Iterator[tuple[dict[str, Any], Any]]:
    """:func:`rasterio.features.shapes`, holding the lock while its polygons are read.

    Streamed, not listed (a county's steep mask gives millions of polygons); the lock is
    re-entrant, so the reader may rasterise in the same thread meanwhile.
    """
    from rasterio.features import shapes

    with _IN_MEMORY_LOCK:
        yield from shapes(source, **kwargs)


def as_float_block(dem: np.ndarray, nodata: float | None) -> np.ndarray:
    """Return DEM values as float32/float64 with NaN for nodata (a copy when needed).

    An infinite height is no data too: a float DEM may carry a stray +-inf that its
    nodata value does not name, and left in it would make the slopes around it infinite
    (counted as steep) and the flow routing treat it as a wall or a pit.

    Parameters
    ----------
    dem : numpy.ndarray
        Elevations as read. Integers of up to 16 bits become float32 (exact below 2**24),
        float32 and float64 stay as they are, other integers become float64.
    nodata : float, optional
        The value marking cells without data.

    Returns
    -------
    numpy.ndarray
        *dem* itself when nothing had to change, else a new array.
    """
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
    if _has_infinity(work):
        work = work.copy() if work is arr else work
        work[np.isinf(work)] = np.nan
    return work


def _has_infinity(work: np.ndarray) -> bool:
    """Whether a float array holds +-inf.

    By its NaN-skipping extremes: two passes without a temporary, where a mask of a whole
    grid would cost its allocation on every read (about 0.2 s on 36M fresh cells).
    """
    if work.dtype.kind != "f" or work.size == 0:
        return False
    hi, lo = np.fmax.reduce(work, axis=None), np.fmin.reduce(work, axis=None)
    return bool(np.isinf(hi) or np.isinf(lo))


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
        return cell_area_sqft(self.transform, self.h_m_per_unit)

    def z_to_h(self) -> float:
        """Factor turning elevation units into horizontal CRS units."""
        return self.v_m_per_unit / self.h_m_per_unit


def offset_transform(tf: Affine, row_off: int, col_off: int) -> Affine:
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


def area_in_dem_crs(
    src: Any, path: object, geom: BaseGeometry, geom_crs: Any
) -> tuple[DemCrsInfo, BaseGeometry]:
    """The DEM's CRS facts and *geom* reprojected into that CRS (an empty one is refused).

    Every reader of a DEM window around an area (the window read, the steep strips, the
    contours) starts here, so each checks the DEM's CRS and the area the same way.

    Parameters
    ----------
    src : rasterio dataset
        The open DEM (:func:`open_dem`).
    path : path-like
        The DEM's path, named in errors.
    geom : shapely geometry
        The area.
    geom_crs : CRS-like
        CRS of *geom*.

    Raises
    ------
    georeview.errors.InputError
        When the area is empty in the DEM's CRS.
    """
    info = dem_crs_info(src.crs, path)
    local = geometry_to_crs(geom, geom_crs, info.crs)
    if local.is_empty:
        raise InputError("the area to read from the DEM is empty", path=path)
    return info, local


def open_dem(path: object) -> Any:
    """Open a DEM with rasterio, turning failures into one clear error.

    Parameters
    ----------
    path : path-like
        The DEM file.

    Returns
    -------
    rasterio.io.DatasetReader
        Open dataset (the caller closes it; it is a context manager).

    Raises
    ------
    georeview.errors.DataSourceError
        Missing or unreadable file, no band, a band scale or offset, a rotated or
        south-up grid (:func:`stored_as_is`).
    """
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
    problem = stored_as_is(src.transform, float(src.scales[0]), float(src.offsets[0]))
    if problem:
        src.close()
        raise DataSourceError(problem, path=p, field="dem")
    return src


def stored_as_is(transform: Any, scale: float, offset: float) -> str | None:
    """Why a DEM's cells cannot be read as heights in place, or None when they can.

    georeview reads band 1 as stored, north-up: a band scale or offset (an int16 DEM in
    decimetres has scale 0.1, and read as stored gives slopes ten times too steep) and
    a south-up or rotated grid are refused by name, with the GDAL command that fixes it,
    rather than read wrong.

    Parameters
    ----------
    transform : affine.Affine
        The grid's transform.
    scale, offset : float
        Band 1's scale and offset.
    """
    if scale != 1.0 or offset != 0.0:
        return (
            f"its band has scale {scale:g} and offset {offset:g} (heights = stored x scale"
            " + offset), which georeview does not apply; write the heights out with"
            " gdal_translate -unscale -ot Float32"
        )
    if transform.b != 0 or transform.d != 0:
        return "rotated DEM grids are not supported; make it north-up with gdalwarp"
    if transform.e > 0:
        return "the DEM is south-up (its rows run south to north); make it north-up with gdalwarp"
    return None


def read_rows(src: Any, window: Any, path: object) -> np.ndarray:
    """Read band 1 of a window of *src*, as stored.

    Raises
    ------
    georeview.errors.DataSourceError
        When GDAL cannot read it (a damaged or truncated file), naming *path*.
    """
    import rasterio

    try:
        return src.read(1, window=window)
    except rasterio.errors.RasterioError as exc:
        raise DataSourceError(
            f"cannot read the DEM (damaged or truncated?): {exc}", path=path
        ) from exc


def window_for_bounds(
    src: Any, bounds: tuple[float, float, float, float], margin: float, path: object
) -> Any:
    """Integer window of *src* covering *bounds* grown by *margin* CRS units, clipped.

    Raises
    ------
    georeview.errors.CoverageError
        When the raster does not reach *bounds*.
    georeview.errors.LimitError
        When the window holds more cells than the limit (:func:`check_cells`).
    """
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
        info, local = area_in_dem_crs(src, path, geom, geom_crs)
        if margin_units == "cells":
            margin_units_crs = margin * max(abs(src.transform.a), abs(src.transform.e))
        elif margin_units == "ft":
            margin_units_crs = margin * M_PER_FT / info.h_m_per_unit
        else:
            raise InputError(f"margin_units must be 'cells' or 'ft', not {margin_units!r}")
        window = window_for_bounds(src, local.bounds, margin_units_crs, path)
        raw = read_rows(src, window, path)
        elev = as_float_block(raw, src.nodata)
        if elev is raw:
            elev = elev.copy()
        transform = offset_transform(src.transform, int(window.row_off), int(window.col_off))
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


def cell_area_sqft(transform: Affine, h_m_per_unit: float) -> float:
    """Area of one cell of a grid with *transform*, square international feet.

    Parameters
    ----------
    transform : affine.Affine
        The grid's transform, in CRS units.
    h_m_per_unit : float
        Metres per CRS unit.
    """
    area_units = abs(transform.a * transform.e - transform.b * transform.d)
    return sqm_to_sqft(area_units * h_m_per_unit**2)


def row_strips(n_rows: int, strip_rows: int) -> Iterator[tuple[int, int]]:
    """Yield ``(r0, r1)`` row ranges of at most *strip_rows* rows covering ``range(n_rows)``."""
    for r0 in range(0, n_rows, strip_rows):
        yield r0, min(n_rows, r0 + strip_rows)


def map_strips(
    path: object, work: Callable[[Any, ItemT], ResultT], items: Sequence[ItemT]
) -> list[ResultT]:
    """Run ``work(dataset, item)`` for every item, on two threads when there are several.

    numpy, GDAL and contourpy release the GIL, so two threads use both cores of a small
    machine. Each thread opens its own dataset handle (GDAL handles are not thread-safe),
    and GDAL's block cache is kept small (:data:`GDAL_CACHE_MB`): strips are read once.

    Parameters
    ----------
    path : path-like
        The DEM.
    work : callable
        ``work(dataset, item) -> result``; *dataset* is an open rasterio dataset.
    items : sequence
        One item per strip (for example its row range).

    Returns
    -------
    list
        The results, in the order of *items*.
    """
    import rasterio

    with rasterio.Env(GDAL_CACHEMAX=GDAL_CACHE_MB):
        if len(items) < 2:
            with open_dem(path) as src:
                return [work(src, item) for item in items]
        return _map_threads(path, work, items)


def _map_threads(
    path: object, work: Callable[[Any, ItemT], ResultT], items: Sequence[ItemT]
) -> list[ResultT]:
    """Body of :func:`map_strips` for several items: a pool of threads, a handle each."""
    from concurrent.futures import ThreadPoolExecutor

    local = threading.local()
    handles: list[Any] = []
    lock = threading.Lock()

    def run(item: ItemT) -> ResultT:
        src = getattr(local, "src", None)
        if src is None:
            src = local.src = open_dem(path)
            with lock:
                handles.append(src)
        return work(src, item)

    try:
        with ThreadPoolExecutor(max_workers=N_THREADS) as pool:
            return list(pool.map(run, items))
    finally:
        for h in handles:
            h.close()
