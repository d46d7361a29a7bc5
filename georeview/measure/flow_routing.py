"""Flow routing on a DEM window: depression fill, D8 with flats drained, and grid walks.

The fill (the Improved Priority-Flood of Barnes, Lehman & Mulla 2014, seeded at the data's
edge and at the burned sinks), D8 directions, flats (after Barnes et al. 2014), path
tracing, accumulation and labelling are numba kernels in
:mod:`georeview.measure._flowkernels`; the tests hold the fill to pyflwdir's
(:func:`pyflwdir.dem.fill_depressions`, Wang & Liu 2006) cell for cell. Codes follow
pyflwdir's (ESRI) D8 convention. numba is imported inside the functions that use it, so
importing this module does not cost its start-up.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

import numpy as np

from georeview import notices
from georeview.measure.dem import DemWindow

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

logger = logging.getLogger(__name__)


def d8_with_sinks(
    elev: np.ndarray, sink: np.ndarray, xres: float, yres: float
) -> tuple[np.ndarray, np.ndarray]:
    """Burn sinks, fill depressions and return (D8 array, fill depth).

    A priority flood (:func:`georeview.measure._flowkernels.fill_depressions`, Barnes et
    al. 2014), seeded at the data's edge and the burned sinks, fills every depression to
    its spill level; then cells with a lower neighbour on the filled surface take the
    steepest-descent direction (drop / distance), and the cells of flats and filled
    depressions flow along the shortest path over their flat to the nearest cell of the
    same height that drains (:func:`georeview.measure._flowkernels.d8_flats`, after Barnes
    et al. 2014). Outlets without a lower neighbour (the burned sinks, low cells of the
    data's edge) stay pits (code 0), and a flat reaching one drains into it. Codes follow
    pyflwdir's (ESRI) D8 convention. *elev* is as a DEM read gives it
    (:func:`georeview.measure.dem.as_float_block`: NaN for nodata and for infinities).
    """
    from georeview.measure import _flowkernels as kernels

    rows, cols = elev.shape
    # One float32 copy, framed by a cell of nodata all round: the fill leaves nodata as it is,
    # so its output is the framed surface the kernels want (no bounds checks), and the
    # flood's seeds are simply the valid cells next to nodata (the data's edge included).
    zp = np.empty((rows + 2, cols + 2), dtype=np.float32)
    zp[0, :] = zp[-1, :] = zp[:, 0] = zp[:, -1] = np.nan  # the frame; the data fills the rest
    z = zp[1:-1, 1:-1]
    z[...] = elev
    valid = np.isfinite(z)
    burn = sink & valid
    if burn.any():
        z[burn] = np.float32(np.nanmin(z) - 1.0)
    outlet = np.zeros(zp.shape, dtype=bool)
    outlet[1:-1, 1:-1] = burn
    seeds = kernels.flood_seeds(zp, outlet)
    # a new array: the filled surface (elevation + fill depth)
    fp = kernels.fill_depressions(zp, seeds)
    # two threads pay for their start only past about a million cells (a site window is
    # a few million; the Plainfield test DEM under one)
    threads = 2 if zp.size > 1_000_000 else 1
    # the flood's seeds are outlets for the D8 too: a cell of the data's edge with no lower
    # neighbour drains off the data, so a flat reaching the edge flows out there instead of
    # leaving every cell of it a pit inside the window
    outlet.ravel()[seeds] = True
    code = kernels.d8_flats(fp, outlet, float(xres), float(yres), threads=threads)
    # the filled surface is not needed past the D8: its memory takes the fill depth
    fp -= zp
    depth = fp[1:-1, 1:-1]
    depth[~valid] = 0.0  # NaN - NaN
    return np.ascontiguousarray(code[1:-1, 1:-1]), depth


def downstream(code_flat: np.ndarray, idx: np.ndarray, ncol: int) -> np.ndarray:
    """Linear index of the cell each of *idx* flows to (itself for a pit)."""
    from georeview.measure import _flowkernels as kernels

    dr, dc = kernels.code_offsets()
    c = code_flat[idx]
    return idx + dr[c] * ncol + dc[c]


_warm_lock = threading.Lock()
_warm_thread: threading.Thread | None = None
#: Set by the warm-up once it knows whether numba must compile (before it compiles).
_cold_known = threading.Event()
_cold: bool | None = None
_told = False

#: The notice a first compile gives (once per process, on stderr from the command line).
COMPILE_NOTICE = "compiling the flow kernels, once for this installation (10 to 60 s)"


def start_warm_up() -> threading.Thread:
    """Start :func:`warm_kernels` on a background thread, once per process; return the thread.

    A caller that will trace later (a review, before it reads its layers) may start it
    early so that the start-up overlaps its own work; :func:`trace_downstream
    <georeview.measure.flow.trace_downstream>` joins it before routing.
    """
    global _warm_thread
    with _warm_lock:
        if _warm_thread is None:
            _warm_thread = threading.Thread(
                target=warm_kernels, name="georeview-numba-warm-up", daemon=True
            )
            _warm_thread.start()
        return _warm_thread


def warm_kernels() -> None:
    """Load numba and the flow kernels while the DEM is being read.

    numba's import and the first call of each compiled function (numba loads its machine
    code from the cache) are most of a first trace's start-up; a tiny grid with the
    argument types of a real call loads the same code.
    """
    global _cold
    try:
        from georeview.measure import _flowkernels as kernels

        _cold = kernels.cache_is_cold()
        _cold_known.set()
        elev = np.array([[3, 3, 3], [3, 2, 3], [3, 2, 3]], dtype=np.float32)
        d8_with_sinks(elev, np.zeros(elev.shape, dtype=bool), 1.0, 1.0)
        kernels.warm_up()
    except Exception:  # the main thread imports the kernels again and reports it
        logger.debug("numba warm-up failed", exc_info=True)
    finally:
        _cold_known.set()


def wait_for_kernels(warm: threading.Thread) -> None:
    """Wait for the warm-up *warm*; first say so, once, if numba is compiling the kernels.

    The notice rests on numba's cache index read before compiling
    (:func:`~georeview.measure._flowkernels.cache_is_cold`), not on how long the wait is,
    and is given only here, where a trace is about to wait: a review stopped by bad input
    before its trace says nothing about compiling.
    """
    global _told
    _cold_known.wait()
    with _warm_lock:
        tell = _cold is True and not _told
        _told = _told or tell
    if tell:
        notices.logger.info(COMPILE_NOTICE)
    warm.join()


def filled_regions(depth: np.ndarray, win: DemWindow) -> np.ndarray:
    """The filled cells whose depression touches a window side that is not the raster's edge.

    Such a depression may be filled differently with what lies beyond the window, so a path
    crossing it asks for a larger window. Returns a bool array of the window's shape.
    """
    from georeview.measure import _flowkernels as kernels

    filled = depth > 0
    rows, cols = filled.shape
    top, bottom, left, right = win.touches_raster_edge
    sides = []
    if not top:
        sides.append(np.arange(cols))
    if not bottom:
        sides.append((rows - 1) * cols + np.arange(cols))
    if not left:
        sides.append(np.arange(rows) * cols)
    if not right:
        sides.append(np.arange(rows) * cols + cols - 1)
    if not sides:
        return np.zeros(filled.shape, dtype=bool)
    return kernels.reach8(filled, np.concatenate(sides).astype(np.int64))


def site_cells(site_local: BaseGeometry, win: DemWindow) -> np.ndarray:
    """Cells of the site: centres inside, or every touched cell for a tiny site."""
    from georeview.measure.dem import geometry_mask

    shape = win.elev.shape
    inside = geometry_mask([site_local], out_shape=shape, transform=win.transform, invert=True)
    if not inside.any():
        inside = geometry_mask(
            [site_local], out_shape=shape, transform=win.transform, invert=True, all_touched=True
        )
    return inside & np.isfinite(win.elev)


def contributing_cells(d8: np.ndarray, site: np.ndarray) -> np.ndarray:
    """Count the site cells draining through each site cell (on the site's bounding box)."""
    from georeview.measure import _flowkernels as kernels

    rows = np.flatnonzero(site.any(axis=1))
    cols = np.flatnonzero(site.any(axis=0))
    r0, r1, c0, c1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    sub_site = np.ascontiguousarray(site[r0:r1, c0:c1])
    sub_code = np.ascontiguousarray(d8[r0:r1, c0:c1])
    dr, dc = kernels.code_offsets()
    acc = kernels.accumulate_inside(sub_code.ravel(), c1 - c0, sub_site.ravel(), dr, dc)
    out = np.zeros(site.shape, dtype=np.float64)
    out[r0:r1, c0:c1] = acc.reshape(sub_site.shape)
    return out


def trace_paths(
    code_flat: np.ndarray,
    ncol: int,
    starts: np.ndarray,
    stop: np.ndarray,
    max_len: float,
    xres: float,
    yres: float,
) -> tuple[np.ndarray, np.ndarray]:
    """D8 paths from each of *starts* (linear indices on a grid *ncol* wide).

    A path stops at a *stop* cell (kept), at a pit, or before a step that would take it past
    *max_len* (CRS units). Returns the concatenated linear indices and offsets: path k is
    ``cells[offsets[k]:offsets[k + 1]]``.
    """
    from georeview.measure import _flowkernels as kernels

    dr, dc = kernels.code_offsets()
    return kernels.trace_paths(
        code_flat,
        ncol,
        starts.astype(np.int64),
        stop.ravel(),
        float(max_len),
        dr,
        dc,
        float(xres),
        float(yres),
    )
