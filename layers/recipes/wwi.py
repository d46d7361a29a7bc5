"""Wisconsin Wetland Inventory-like polygons (``WWI_ID``, ``WETCODE``, ``WETCLASS``)."""

from __future__ import annotations

import geopandas as gpd
import numpy as np

from .common import WORKING_CRS, Grid, polygonize, simplify_coverage, with_note

#: The class raster's codes: WWI wetland code and class.
WETLAND_CLASSES = {
    1: ("E2K", "Emergent/wet meadow"),
    2: ("T3K", "Scrub/shrub"),
    3: ("E2H", "Emergent/wet meadow"),
}


def wetland_layer(
    mask: np.ndarray, codes: np.ndarray, grid: Grid, county: int, prefix: str
) -> gpd.GeoDataFrame:
    """Wisconsin Wetland Inventory-like polygons from a class raster (1 = E2K, 2 = T3K, 3 = E2H).

    Parameters
    ----------
    mask : numpy.ndarray of bool
        The wetland cells on ``grid``.
    codes : numpy.ndarray of int
        Each cell's class (:data:`WETLAND_CLASSES`) where ``mask`` holds.
    grid : Grid
        The DEM's grid.
    county : int
        The county number written in ``COUNTY``.
    prefix : str
        ``WWI_ID`` is this prefix and a serial number.

    Returns
    -------
    geopandas.GeoDataFrame
        Patches over 1500 m², simplified at 6 m, with the WWI columns and NOTE.
    """
    cls = np.where(mask, codes, 0)
    polys = polygonize(cls, grid)
    polys = polys[polys.area > 1500.0]
    polys = simplify_coverage(polys, 6.0)
    out = gpd.GeoDataFrame(
        {
            "WWI_ID": [f"{prefix}{i + 1:05d}" for i in range(len(polys))],
            "WETCODE": [WETLAND_CLASSES[c][0] for c in polys["cls"]],
            "WETCLASS": [WETLAND_CLASSES[c][1] for c in polys["cls"]],
            "COUNTY": county,
        },
        geometry=polys.geometry.values,
        crs=WORKING_CRS,
    )
    return with_note(out)
