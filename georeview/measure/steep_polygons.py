"""Polygons of the steep cells, for the map (the measured areas come from the counts).

GDAL's polygonize (:func:`rasterio.features.shapes`) traces the steep mask; it holds the
GIL, so it runs once over the window rather than in threads. Up to :data:`MAP_MAX_CELLS`
cells the polygons are the exact outlines of the steep cells (their areas add up to the
counted steep area). A larger window is drawn on coarser cells, ``k`` x ``k`` DEM cells
each, steep where at least half of them are: the map of a whole county-size window cannot
show one-metre cells, and GDAL would trace every speckle of them (hundreds of thousands of
polygons that a browser cannot draw either).
"""

from __future__ import annotations

import gc
import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from georeview.units import sqm_to_sqft

if TYPE_CHECKING:
    import geopandas as gpd
    import pyproj
    from affine import Affine

logger = logging.getLogger(__name__)

__all__ = ["MAP_MAX_CELLS", "POLYGON_BATCH", "coarsen_mask", "steep_polygons"]

#: Polygons converted per batch (bounds the memory of GDAL's GeoJSON-like rings).
POLYGON_BATCH = 20_000
#: Largest window polygonised cell for cell (2,000 x 2,000 cells: a 370-acre disturbed
#: area on a 2 ft lidar DEM, 990 acres on a 1 m one); larger windows are drawn coarser.
MAP_MAX_CELLS = 4_000_000


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (restored on exit).

    rasterio hands every ring over as lists of coordinate tuples: millions of new container
    objects, each allocation burst triggering a collection that scans all those still
    alive. None of them forms a cycle, so the scans find nothing; pausing them halved the
    CPU time of the conversion on a 36M-cell window.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def coarsen_mask(mask: np.ndarray, k: int) -> np.ndarray:
    """Majority of each ``k`` x ``k`` block of a 0/1 mask (1 where at least half are 1).

    Parameters
    ----------
    mask : numpy.ndarray
        uint8 mask, 1 for steep cells.
    k : int
        Block side, cells (>= 1). Blocks past the mask's last row or column count the
        missing cells as 0.

    Returns
    -------
    numpy.ndarray
        uint8 mask of ``ceil(rows / k)`` x ``ceil(cols / k)`` blocks.
    """
    if k <= 1:
        return mask
    rows, cols = mask.shape
    n_r, n_c = -(-rows // k), -(-cols // k)
    padded = np.zeros((n_r * k, n_c * k), dtype=np.uint8)
    padded[:rows, :cols] = mask
    counts = padded.reshape(n_r, k, n_c, k).sum(axis=(1, 3), dtype=np.uint32)
    return (2 * counts >= k * k).astype(np.uint8)


def _shapes_to_polygons(gen: Iterator[tuple[dict[str, Any], Any]]) -> np.ndarray:
    """Turn GDAL's GeoJSON-like polygons into shapely polygons, batch by batch.

    One ``linearrings`` and one ``polygons`` call per batch, coordinates flattened in C by
    ``itertools.chain``, instead of one ``shape()`` per polygon.
    """
    from itertools import chain, islice

    import shapely

    batches = []
    with _gc_paused():
        while True:
            batch = [g["coordinates"] for g, _ in islice(gen, POLYGON_BATCH)]
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
    return np.concatenate(batches) if batches else np.empty(0, dtype=object)


def steep_polygons(
    mask: np.ndarray,
    transform: Affine,
    crs: pyproj.CRS,
    h_m: float,
    working_crs: Any,
    max_cells: int | None = None,
) -> gpd.GeoDataFrame:
    """Polygonise a steep-cell mask (8-connected patches) into the working CRS.

    Parameters
    ----------
    mask : numpy.ndarray
        uint8, 1 for the steep cells of the window.
    transform : affine.Affine
        The window's transform (DEM CRS).
    crs : pyproj.CRS
        The DEM's CRS.
    h_m : float
        Metres per DEM CRS unit.
    working_crs : CRS-like
        CRS of the result.
    max_cells : int, optional
        Largest window traced cell for cell (default :data:`MAP_MAX_CELLS`); past it the
        mask is traced on blocks of ``k = ceil(sqrt(cells / max_cells))`` cells a side,
        steep where at least half of the block is (:func:`coarsen_mask`).

    Returns
    -------
    geopandas.GeoDataFrame
        One polygon per patch with ``area_sqft`` (of the polygon drawn) and
        ``drawn_block_cells`` (1: traced cell for cell, so the areas add up to the counted
        steep area; *k*: drawn on k x k-cell blocks), in *working_crs*.
    """
    import geopandas as gpd
    import shapely
    from affine import Affine

    from georeview.measure.dem import polygonize

    limit = MAP_MAX_CELLS if max_cells is None else max_cells
    k = max(1, math.ceil(math.sqrt(mask.size / limit))) if mask.size else 1
    if k > 1:
        logger.info(
            "steep polygons of a %d x %d-cell window drawn on %d x %d-cell blocks",
            *mask.shape,
            k,
            k,
        )
        mask = coarsen_mask(mask, k)
        transform = Affine(
            transform.a * k, transform.b, transform.c, transform.d, transform.e * k, transform.f
        )
    gen = polygonize(mask, mask=mask.view(bool), connectivity=8, transform=transform)
    geoms = _shapes_to_polygons(gen)
    gdf = gpd.GeoDataFrame(
        {
            "area_sqft": sqm_to_sqft(shapely.area(geoms) * h_m * h_m),
            # the polygons' areas add up to the counted steep area only when k is 1: a
            # reader of layers.gpkg must see when they were drawn coarser than the count
            "drawn_block_cells": np.full(len(geoms), k, dtype=np.int32),
        },
        geometry=geoms,
        crs=crs,
    )
    return gdf.to_crs(working_crs)
