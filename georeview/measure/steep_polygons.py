"""Polygons of the steep cells, for the map (the measured areas come from the counts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from georeview.units import sqm_to_sqft

if TYPE_CHECKING:
    import geopandas as gpd
    import pyproj
    from affine import Affine

__all__ = ["steep_polygons"]

#: Polygons converted per batch (bounds the memory of GDAL's GeoJSON-like rings).
POLYGON_BATCH = 20_000


def steep_polygons(
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
    geoms = np.concatenate(batches) if batches else np.empty(0, dtype=object)
    gdf = gpd.GeoDataFrame(
        {"area_sqft": sqm_to_sqft(shapely.area(geoms) * h_m * h_m)},
        geometry=geoms,
        crs=crs,
    )
    return gdf.to_crs(working_crs)
