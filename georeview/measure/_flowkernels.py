"""numba kernels of the downstream trace: fill, D8 with flat routing, paths, accumulation, reach.

Kept apart from :mod:`georeview.measure.flow` so that importing the trace module does not import
numba; every kernel is compiled with ``cache=True``, so a new process loads machine code
from ``__pycache__`` instead of compiling it again (and no typed ``List`` is built: results
are flat arrays with offsets).

Where the machine code goes is numba's choice: ``$NUMBA_CACHE_DIR`` when set, else
``__pycache__`` beside this file (a checkout, or a virtualenv the user owns), else the
user's cache folder (``~/.cache/numba``: a read-only ``site-packages``). When none of them
is writable, :func:`_writable_cache` points numba at a folder of the temporary directory
instead of failing at import. :func:`cache_is_cold` says, before compiling anything,
whether the first call will compile (the command line then says so).

D8 codes follow the ESRI / pyflwdir convention (1 = east, 2 = south-east, 4 = south,
8 = south-west, 16 = west, 32 = north-west, 64 = north, 128 = north-east; 0 = outlet).
"""

from __future__ import annotations

import getpass
import itertools
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba import njit

#: numba's configuration (typed Any: its settings are set from the environment at import).
_NUMBA_CONFIG: Any = numba.config


def _probe() -> int:
    """Nothing: only decorated, to ask numba whether it can cache this file's functions."""
    return 0


def _writable_cache() -> None:
    """Make sure numba has a folder to cache this module's kernels in.

    numba looks for one when a ``cache=True`` function is decorated and raises
    ``RuntimeError`` ("no locator available") if neither ``__pycache__`` beside the file nor
    the user's cache folder is writable (a read-only installation run by a user without a
    home folder). Then the kernels are cached in ``georeview-numba-USER`` of the temporary
    directory (a new private folder if that one is not writable either).
    """
    try:
        njit(cache=True)(_probe)
        return
    except RuntimeError:
        pass
    try:
        folder = Path(tempfile.gettempdir()) / f"georeview-numba-{getpass.getuser()}"
        folder.mkdir(mode=0o700, exist_ok=True)
        _own_private(folder)
        _NUMBA_CONFIG.CACHE_DIR = str(folder)
        njit(cache=True)(_probe)
    except (OSError, RuntimeError, KeyError):  # getpass: no user name in the environment
        _NUMBA_CONFIG.CACHE_DIR = tempfile.mkdtemp(prefix="georeview-numba-")


def _own_private(folder: Path) -> None:
    """Refuse (PermissionError) a folder another user made or may write.

    numba loads the machine code it finds in its cache folder: in a shared temporary
    directory, a folder planted by someone else must not supply it.
    """
    st = folder.lstat()
    getuid = getattr(os, "getuid", None)
    if folder.is_symlink() or (getuid is not None and st.st_uid != getuid()) or st.st_mode & 0o022:
        raise PermissionError(f"{folder} is not this user's private folder")


_writable_cache()

#: Neighbour offsets in the order of the previous numpy D8 (ties keep the first listed):
#: NW, N, NE, W, E, SW, S, SE. The opposite of neighbour k is neighbour 7 - k.
_DR = np.array([-1, -1, -1, 0, 0, 1, 1, 1], dtype=np.int64)
_DC = np.array([-1, 0, 1, -1, 1, -1, 0, 1], dtype=np.int64)
_CODE = np.array([32, 64, 128, 16, 1, 8, 4, 2], dtype=np.uint8)


def code_offsets() -> tuple[np.ndarray, np.ndarray]:
    """Row and column step of each D8 code (index = code, 0 for code 0 and non-codes)."""
    dr = np.zeros(256, dtype=np.int64)
    dc = np.zeros(256, dtype=np.int64)
    dr[_CODE] = _DR
    dc[_CODE] = _DC
    return dr, dc


@njit(cache=True, nogil=True)
def _sortable(bits: np.int64) -> np.int64:
    """A float32's bit pattern turned into an integer that sorts like the float (32 bits).

    The sign bit is flipped for positives and all bits for negatives.
    """
    if bits & np.int64(0x80000000):
        return bits ^ np.int64(0xFFFFFFFF)
    return bits | np.int64(0x80000000)


@njit(cache=True, nogil=True)
def _grow(arr: np.ndarray) -> np.ndarray:
    """A copy of *arr* with twice the room."""
    out = np.empty(2 * arr.size, dtype=arr.dtype)
    out[: arr.size] = arr
    return out


@njit(cache=True, nogil=True)
def _push(heap: np.ndarray, size: int, key: np.int64) -> None:
    """Push onto a 4-ary min-heap of int64 keys holding *size* keys (room checked before)."""
    i = size
    while i > 0:
        p = (i - 1) >> 2
        if heap[p] <= key:
            break
        heap[i] = heap[p]
        i = p
    heap[i] = key


@njit(cache=True, nogil=True)
def _pop(heap: np.ndarray, size: int) -> tuple[np.int64, int]:
    """Pop the smallest key of a 4-ary min-heap; returns (key, new size)."""
    top = heap[0]
    size -= 1
    if size > 0:
        key = heap[size]
        i = 0
        while True:
            c = 4 * i + 1
            if c >= size:
                break
            m = c
            last = min(c + 4, size)
            for q in range(c + 1, last):
                if heap[q] < heap[m]:
                    m = q
            if heap[m] >= key:
                break
            heap[i] = heap[m]
            i = m
        heap[i] = key
    return top, size


@njit(cache=True, nogil=True)
def _index_bits(n: int) -> int:
    """Bits needed for a linear index below *n* (the low part of a heap key)."""
    b = 1
    while (1 << b) < n:
        b += 1
    return b


@njit(cache=True, nogil=True)
def _offsets(pcols: int) -> np.ndarray:
    """Linear-index step to each neighbour on a grid *pcols* wide."""
    off = np.empty(8, dtype=np.int64)
    for k in range(8):
        off[k] = _DR[k] * pcols + _DC[k]
    return off


@njit(cache=True, nogil=True)
def _height_key(zi: np.ndarray, idx: np.int64, index_bits: int) -> np.int64:
    """Heap key of cell *idx*: its float32 height's sortable bits above its linear index."""
    return (_sortable(np.int64(zi[idx]) & np.int64(0xFFFFFFFF)) << index_bits) | idx


@njit(cache=True, nogil=True)
def fill_depressions(zp: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Fill every depression of a framed grid to its spill level; returns a new array.

    The Improved Priority-Flood of Barnes, Lehman & Mulla (2014, "Priority-Flood: An
    optimal depression-filling and watershed-labeling algorithm for digital elevation
    models", Computers & Geosciences 62, 117-127): the flood grows from *seeds* in order
    of height on a heap; a cell it reaches that is no higher than the cell it came from is
    raised to that level and goes on a plain stack instead of the heap, so the cells of
    depressions (a quarter of a lidar grid) cost no heap work. Each cell ends at the
    lowest height over which water can leave it through a seed, the unique minimax
    surface, so the result is the same as any correct priority flood's (pyflwdir's
    ``fill_depressions``, Wang & Liu 2006, in the tests) whatever order ties take.

    Parameters
    ----------
    zp : numpy.ndarray
        2-D float32 elevations, C-contiguous, NaN for nodata, with a one-cell frame of NaN
        all round (the frame keeps every neighbour index inside the array).
    seeds : numpy.ndarray
        int64 linear indices of the flood's outlets (valid cells): the data's edge and any
        burned sinks (:func:`flood_seeds`).

    Returns
    -------
    numpy.ndarray
        float32 filled surface of the same shape; nodata stays NaN.
    """
    z = zp.copy().ravel()
    zi = z.view(np.int32)  # the same memory read as bits, for the heap keys
    closed = np.isnan(z)  # nodata and the frame are never entered
    off = _offsets(zp.shape[1])
    index_bits = _index_bits(z.size)
    index_mask = (np.int64(1) << index_bits) - 1
    heap = np.empty(max(1024, 2 * seeds.size), dtype=np.int64)
    size = 0
    for s in seeds:
        if not closed[s]:
            closed[s] = True
            if size == heap.size:
                heap = _grow(heap)
            _push(heap, size, _height_key(zi, s, index_bits))
            size += 1
    stack = np.empty(1024, dtype=np.int64)
    top = 0
    while size > 0 or top > 0:
        # a stacked cell is at the flood's current level, no higher than the heap's top
        if top > 0:
            top -= 1
            c = stack[top]
        else:
            key, size = _pop(heap, size)
            c = key & index_mask
        zc = z[c]
        for k in range(8):
            nb = c + off[k]
            if closed[nb]:
                continue
            closed[nb] = True
            if z[nb] <= zc:
                z[nb] = zc
                if top == stack.size:
                    stack = _grow(stack)
                stack[top] = nb
                top += 1
            else:
                if size == heap.size:
                    heap = _grow(heap)
                _push(heap, size, _height_key(zi, nb, index_bits))
                size += 1
    return z.reshape(zp.shape)


def d8_flats(
    fp: np.ndarray, outlet: np.ndarray, xres: float, yres: float, threads: int = 2
) -> np.ndarray:
    """D8 directions on a filled surface, flats drained towards lower terrain.

    A cell with a lower neighbour flows to the steepest one (drop / step length), on
    *threads* threads over row ranges (the kernels release the GIL). The cells of a flat
    (no lower neighbour, not an outlet) then flow along the shortest path, over the flat
    and weighted by step length, to the nearest cell of the same height that drains (has
    a direction, or is an outlet): a multi-source Dijkstra search from those cells, one
    flat at a time and on the same threads (:func:`_drain_flats`). Weighting by length,
    not by steps, keeps paths across wide flats from drifting diagonally; the distance
    falls strictly along the flat and the height along the rest, so no loop can form.

    Parameters
    ----------
    fp : numpy.ndarray
        2-D float32 depression-filled surface, C-contiguous, NaN for nodata, with a
        one-cell frame of NaN all round.
    outlet : numpy.ndarray
        2-D bool of the same shape; outlets without a lower neighbour get code 0.
    xres, yres : float
        Cell width and height (CRS units).
    threads : int, optional
        Threads (row bands) for the steepest-descent pass and for the flats; the codes
        are the same for any number.

    Returns
    -------
    numpy.ndarray
        uint8 D8 codes of the same shape (0 for outlets, nodata and the frame).
    """
    rows, cols = fp.shape
    code = np.zeros(fp.shape, dtype=np.uint8)
    flat = np.zeros(fp.shape, dtype=np.bool_)
    cuts = np.linspace(1, rows - 1, max(1, threads) + 1).astype(int)
    bands = [(int(a), int(b)) for a, b in itertools.pairwise(cuts) if b > a] or [(1, rows - 1)]
    n_flat = sum(_threaded(lambda b: _steepest(fp, outlet, xres, yres, code, flat, *b), bands))
    if n_flat:
        dist = np.full(fp.size, np.inf, dtype=np.float32)
        spans = [(r0 * cols, r1 * cols) for r0, r1 in bands]
        spans[0], spans[-1] = (0, spans[0][1]), (spans[-1][0], fp.size)
        _threaded(lambda s: _drain_flats(fp, xres, yres, code, flat, dist, *s), spans)
    return code


def _threaded(run: Callable[[tuple[int, int]], Any], parts: list[tuple[int, int]]) -> list[Any]:
    """``run(part)`` for each part, on one thread per part when there are several.

    The kernels release the GIL, so row bands of one grid run side by side.
    """
    if len(parts) == 1:
        return [run(parts[0])]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(parts)) as pool:
        return list(pool.map(run, parts))


def flood_seeds(fp: np.ndarray, outlet: np.ndarray) -> np.ndarray:
    """Linear indices of the priority flood's seeds on a framed grid.

    The valid cells with a nodata neighbour (the frame makes the data's edge one), and the
    *outlet* cells, in raster order. Four whole-array ORs dilate the nodata by one cell
    (rows, then columns), cheaper than eight neighbour reads per cell.
    """
    nodata = np.isnan(fp)
    if not nodata[1:-1, 1:-1].any():
        # the usual grid, all data inside its frame: the seeds are the data's outer ring
        rows, cols = fp.shape
        inner_r, inner_c = np.arange(1, rows - 1), np.arange(1, cols - 1)
        ring = np.concatenate(
            [
                cols + inner_c,  # first data row
                (rows - 2) * cols + inner_c,  # last data row
                inner_r * cols + 1,  # first data column
                inner_r * cols + cols - 2,  # last data column
            ]
        )
        return np.union1d(ring, np.flatnonzero(outlet))
    near = nodata.copy()
    near[1:] |= nodata[:-1]
    near[:-1] |= nodata[1:]
    seed = near.copy()
    seed[:, 1:] |= near[:, :-1]
    seed[:, :-1] |= near[:, 1:]
    seed |= outlet
    seed &= ~nodata
    return np.flatnonzero(seed)


@njit(cache=True, nogil=True)
def _steps(xres: float, yres: float) -> np.ndarray:
    """Length of the step to each neighbour (float32)."""
    step = np.empty(8, dtype=np.float32)
    for k in range(8):
        step[k] = np.float32(np.hypot(_DR[k] * yres, _DC[k] * xres))
    return step


@njit(cache=True, nogil=True)
def _steepest(
    fp: np.ndarray,
    outlet: np.ndarray,
    xres: float,
    yres: float,
    code: np.ndarray,
    flat: np.ndarray,
    r0: int,
    r1: int,
) -> int:
    """Steepest-descent codes of rows ``r0..r1 - 1`` (inside the frame); mark the flat cells.

    Returns how many flat cells (no lower neighbour, not an outlet) the rows hold.
    """
    cols = fp.shape[1]
    ff = fp.ravel()
    of = outlet.ravel()
    cf = code.ravel()
    fl = flat.ravel()
    off = _offsets(cols)
    step = _steps(xres, yres)
    inv = np.empty(8, dtype=np.float32)
    for k in range(8):
        inv[k] = np.float32(1.0) / step[k]
    n_flat = 0
    for i in range(r0 * cols + 1, (r1 - 1) * cols + cols - 1):
        e = ff[i]
        if np.isnan(e):
            continue
        best = np.float32(0.0)
        bk = -1
        for k in range(8):
            f = ff[i + off[k]]
            if f < e:  # False for NaN
                s = (e - f) * inv[k]
                if s > best:
                    best = s
                    bk = k
        if bk >= 0:
            cf[i] = _CODE[bk]
        elif not of[i]:
            fl[i] = True
            n_flat += 1
    return n_flat


@njit(cache=True, nogil=True)
def _flat_component(
    ff: np.ndarray,
    fl: np.ndarray,
    off: np.ndarray,
    step: np.ndarray,
    start: int,
    seen: np.ndarray,
    comp: np.ndarray,
    way: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The flat holding *start*: its cells breadth first (marked *seen*) and their way out.

    ``comp[q]`` is a cell of the flat and ``way[q]`` the neighbour (0-7) of its height that
    drains (not flat) at the shortest step, or -1: the search's seeds, found in the same
    pass over the neighbours. Adjacent flat cells have the same height (a higher one would
    have a lower neighbour), so the 8-connected flat cells are one flat. Returns the
    (possibly grown) buffers, how many cells the flat has and its first (lowest) index.
    """
    seen[start] = True
    comp[0] = start
    m = 1
    q = 0
    first = start
    while q < m:
        c = comp[q]
        e = ff[c]
        bd = np.float32(np.inf)
        bk = -1
        for k in range(8):
            j = c + off[k]
            if fl[j]:
                if not seen[j]:
                    seen[j] = True
                    if m == comp.size:
                        comp = _grow(comp)
                    comp[m] = j
                    m += 1
                    first = min(first, j)
            elif ff[j] == e and step[k] < bd:
                bd = step[k]
                bk = k
        if q == way.size:
            way = _grow(way)
        way[q] = bk
        q += 1
    return comp, way, m, first


@njit(cache=True, nogil=True)
def _seed_flat(
    cf: np.ndarray,
    step: np.ndarray,
    comp: np.ndarray,
    way: np.ndarray,
    m: int,
    dist: np.ndarray,
) -> bool:
    """Give one flat's seeds their step out and distance; True if that settles the flat.

    It does when every cell is a seed and no seed's distance exceeds the shortest one plus
    the shortest step: the search could then lower none of them (a relaxed distance is at
    least that sum, compared in float32 as the search does).
    """
    lo_d = np.float32(np.inf)
    hi_d = np.float32(0.0)
    n_seed = 0
    for q in range(m):
        k = way[q]
        if k >= 0:
            c = comp[q]
            dist[c] = step[k]
            cf[c] = _CODE[k]
            lo_d = min(lo_d, step[k])
            hi_d = max(hi_d, step[k])
            n_seed += 1
    return bool(n_seed == m and hi_d <= np.float32(lo_d + step.min()))


@njit(cache=True, nogil=True)
def _search_flat(
    cf: np.ndarray,
    fl: np.ndarray,
    off: np.ndarray,
    step: np.ndarray,
    bits: int,
    comp: np.ndarray,
    way: np.ndarray,
    m: int,
    dist: np.ndarray,
    heap: np.ndarray,
) -> np.ndarray:
    """Dijkstra over one flat from its seeds; each cell takes the step back along its path.

    A heap key packs the distance's float32 bits above the linear index, so ties go to
    the lower index. Returns the (possibly grown) heap.
    """
    low = (np.int64(1) << bits) - 1
    fbuf = np.empty(1, dtype=np.float32)
    ubuf = fbuf.view(np.uint32)
    size = 0
    for q in range(m):
        if way[q] >= 0:
            c = comp[q]
            fbuf[0] = dist[c]
            if size == heap.size:
                heap = _grow(heap)
            _push(heap, size, (np.int64(ubuf[0]) << bits) | c)
            size += 1
    while size > 0:
        key, size = _pop(heap, size)
        cell = key & low
        fbuf[0] = dist[cell]
        if (np.int64(ubuf[0]) << bits) | cell != key:
            continue  # an older entry: the cell's distance was lowered since
        d = dist[cell]
        for k in range(8):
            j = cell + off[k]
            if not fl[j]:
                continue
            nd = d + step[k]
            if nd < dist[j]:
                dist[j] = nd
                cf[j] = _CODE[7 - k]  # back towards cell
                fbuf[0] = nd
                if size == heap.size:
                    heap = _grow(heap)
                _push(heap, size, (np.int64(ubuf[0]) << bits) | j)
                size += 1
    return heap


@njit(cache=True, nogil=True)
def _drain_flats(
    fp: np.ndarray,
    xres: float,
    yres: float,
    code: np.ndarray,
    flat: np.ndarray,
    dist: np.ndarray,
    lo: int,
    hi: int,
) -> None:
    """Give the *flat* cells the first step of their shortest way out (in *code*).

    Flats are drained one at a time: each is collected with its seeds (cells next to a
    drained cell of their height), and searched with a Dijkstra of its own unless the
    seeds settle it (most small flats). A flat belongs to the call whose linear-index
    range ``[lo, hi)`` holds its first cell, so calls on disjoint ranges share *code* and
    *dist* (flat, float32, +inf) without touching the same cell and may run on separate
    threads. A small heap per flat, instead of one for the whole grid, keeps the search
    in cache; the result does not depend on how the grid is cut.
    """
    rows, cols = fp.shape
    n = rows * cols
    ff = fp.ravel()
    cf = code.ravel()
    fl = flat.ravel()
    off = _offsets(cols)
    step = _steps(xres, yres)
    bits = _index_bits(n)
    seen = np.zeros(n, dtype=np.bool_)
    comp = np.empty(1024, dtype=np.int64)
    way = np.empty(1024, dtype=np.int64)
    heap = np.empty(1024, dtype=np.int64)
    for i in range(max(lo, cols + 1), min(hi, n - cols - 1)):
        if not fl[i] or seen[i]:
            continue
        comp, way, m, first = _flat_component(ff, fl, off, step, i, seen, comp, way)
        if first < lo:
            continue  # its first cell is in the range below: that call drains it
        if not _seed_flat(cf, step, comp, way, m, dist):
            heap = _search_flat(cf, fl, off, step, bits, comp, way, m, dist, heap)


@njit(cache=True, nogil=True)
def _walk(
    code: np.ndarray,
    ncol: int,
    start: int,
    mask: np.ndarray,
    max_len: float,
    dr: np.ndarray,
    dc: np.ndarray,
    xres: float,
    yres: float,
    out: np.ndarray,
    pos: int,
    write: bool,
) -> int:
    """Follow D8 codes from *start*; return the number of cells (written at out[pos:])."""
    i = start
    n = 0
    length = 0.0
    while True:
        if write:
            out[pos + n] = i
        n += 1
        if mask[i]:
            break
        cd = code[i]
        if cd == 0:
            break
        step = np.hypot(dr[cd] * yres, dc[cd] * xres)
        if length + step > max_len:
            break
        length += step
        i = i + dr[cd] * ncol + dc[cd]
    return n


@njit(cache=True, nogil=True)
def trace_paths(
    code: np.ndarray,
    ncol: int,
    starts: np.ndarray,
    mask: np.ndarray,
    max_len: float,
    dr: np.ndarray,
    dc: np.ndarray,
    xres: float,
    yres: float,
) -> tuple[np.ndarray, np.ndarray]:
    """D8 paths from each start: stop at a *mask* cell (kept), an outlet, or *max_len*.

    Same stopping rules as pyflwdir's ``core.path`` (a step that would pass *max_len* is
    not taken). Returns the concatenated linear indices and offsets (path k is
    ``cells[offsets[k]:offsets[k + 1]]``).
    """
    m = starts.size
    offsets = np.zeros(m + 1, dtype=np.int64)
    dummy = np.empty(0, dtype=np.int64)
    for k in range(m):
        offsets[k + 1] = offsets[k] + _walk(
            code, ncol, starts[k], mask, max_len, dr, dc, xres, yres, dummy, 0, False
        )
    cells = np.empty(offsets[m], dtype=np.int64)
    for k in range(m):
        _walk(code, ncol, starts[k], mask, max_len, dr, dc, xres, yres, cells, offsets[k], True)
    return cells, offsets


@njit(cache=True, nogil=True)
def accumulate_inside(
    code: np.ndarray, ncol: int, inside: np.ndarray, dr: np.ndarray, dc: np.ndarray
) -> np.ndarray:
    """Count the *inside* cells draining through each inside cell, along inside cells only.

    *code* and *inside* are flat views of a grid *ncol* wide. Flow that leaves the inside
    cells (or the grid) stops counting there. Topological order by in-degree
    (each cell is added to its downstream cell once all its upstream cells are done).
    """
    n = inside.size
    nrow = n // ncol
    acc = np.zeros(n, dtype=np.float64)
    indeg = np.zeros(n, dtype=np.int32)
    ds = np.full(n, -1, dtype=np.int64)
    cells = np.flatnonzero(inside)
    for i in cells:
        acc[i] = 1.0
        cd = code[i]
        if cd != 0:
            r = i // ncol + dr[cd]
            c = i % ncol + dc[cd]
            if r < 0 or r >= nrow or c < 0 or c >= ncol:
                continue  # flows off the grid given
            j = r * ncol + c
            if inside[j]:
                ds[i] = j
                indeg[j] += 1
    queue = np.empty(cells.size, dtype=np.int64)
    head = 0
    tail = 0
    for i in cells:
        if indeg[i] == 0:
            queue[tail] = i
            tail += 1
    while head < tail:
        i = queue[head]
        head += 1
        j = ds[i]
        if j >= 0:
            acc[j] += acc[i]
            indeg[j] -= 1
            if indeg[j] == 0:
                queue[tail] = j
                tail += 1
    return acc


def cache_is_cold() -> bool | None:
    """Whether some kernel of this module has no machine code in numba's cache yet.

    Read from each kernel's cache index, compiling nothing: an index that is missing, or
    written for other source or another numba, holds nothing (numba's own test when it
    loads). None when numba does not say (its cache internals changed, caching is off).
    """
    try:
        from numba.core.registry import CPUDispatcher

        kernels: list[Any] = [v for v in globals().values() if isinstance(v, CPUDispatcher)]
        return any(not k._cache._cache_file._load_index() for k in kernels)
    except Exception:  # numba's cache index is its internal: a newer one may differ
        return None


def warm_up() -> None:
    """Run every kernel once on a tiny grid, so numba loads (or compiles) their code now."""
    filled = np.full((5, 5), np.nan, dtype=np.float32)
    # a filled pit: a flat of 2 m draining south over the edge cell at 2 m
    filled[1:-1, 1:-1] = np.array([[3, 3, 3], [3, 2, 3], [3, 2, 3]], dtype=np.float32)
    outlet = np.zeros(filled.shape, dtype=np.bool_)
    fill_depressions(filled, flood_seeds(filled, outlet))
    code = d8_flats(filled, outlet, 1.0, 1.0, threads=1)
    dr, dc = code_offsets()
    flat_code = code.ravel()
    trace_paths(flat_code, 5, np.array([12], dtype=np.int64), outlet.ravel(), 3.0, dr, dc, 1.0, 1.0)
    accumulate_inside(flat_code, 5, np.isfinite(filled).ravel(), dr, dc)
    reach8(outlet, np.array([0], dtype=np.int64))


@njit(cache=True, nogil=True)
def reach8(mask: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """The cells of *mask* 8-connected to any of *seeds* (linear indices), as a bool array.

    A search from the seeds only: its cost is the size of the patches it reaches, not of
    the grid (numbering every patch, as ``scipy.ndimage.label`` does, visits all of them).
    Seeds outside *mask* reach nothing.
    """
    rows, cols = mask.shape
    m = mask.ravel()
    out = np.zeros(rows * cols, dtype=np.bool_)
    stack = np.empty(max(1024, seeds.size), dtype=np.int64)
    top = 0
    for s in seeds:
        if m[s] and not out[s]:
            out[s] = True
            stack[top] = s
            top += 1
    while top > 0:
        top -= 1
        i = stack[top]
        r = i // cols
        c = i - r * cols
        for k in range(8):
            rr = r + _DR[k]
            cc = c + _DC[k]
            if rr < 0 or rr >= rows or cc < 0 or cc >= cols:
                continue
            j = rr * cols + cc
            if m[j] and not out[j]:
                out[j] = True
                if top == stack.size:
                    stack = _grow(stack)
                stack[top] = j
                top += 1
    return out.reshape(rows, cols)
