"""SSURGO-like soil map units (``soilmu_a`` with the map unit's ``muname``, ``hydgrpdcd``, K)."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
from scipy import ndimage

from .common import WORKING_CRS, Grid, polygonize, simplify_coverage, with_note
from .terrain import noise, slope_pct

SOILS = {
    # code: (MUSYM, muname, hydgrpdcd, kffact)  -- plausible SSURGO map units, placed synthetically
    "deerfield": {
        "wet": ("Co", "Colwood silt loam, 0 to 2 percent slopes", "B/D", 0.28),
        "marsh": ("Wa", "Wacousta silty clay loam, 0 to 2 percent slopes", "C/D", 0.28),
        "flat_a": ("PnA", "Plano silt loam, 0 to 2 percent slopes", "B", 0.37),
        "flat_b": ("DnB", "Dodge silt loam, 2 to 6 percent slopes", "B", 0.43),
        "gentle": ("PnB", "Plano silt loam, 2 to 6 percent slopes", "B", 0.37),
        "moderate": ("KdC2", "Kidder loam, 6 to 12 percent slopes, eroded", "B", 0.28),
        "strong": ("KdD2", "Kidder loam, 12 to 20 percent slopes, eroded", "B", 0.28),
        "steep": ("KdE", "Kidder loam, 20 to 30 percent slopes", "C", 0.28),
        "water": ("W", "Water", None, None),
    },
    "somers": {
        "wet": ("AsA", "Ashkum silty clay loam, 0 to 2 percent slopes", "C/D", 0.28),
        "marsh": ("Ot", "Orthents, loamy, wet", "B/D", 0.32),
        "flat_a": ("BlA", "Blount silt loam, 1 to 3 percent slopes", "C/D", 0.43),
        "flat_b": ("MzdB", "Morley silt loam, 2 to 6 percent slopes", "C", 0.43),
        "gentle": ("MzdB2", "Morley silt loam, 2 to 6 percent slopes, eroded", "C", 0.43),
        "moderate": ("MzdC2", "Morley silt loam, 6 to 12 percent slopes, eroded", "C", 0.43),
        "strong": ("MzdD2", "Morley silt loam, 12 to 20 percent slopes, eroded", "C", 0.43),
        "steep": ("CtE", "Clayey land, 20 to 45 percent slopes", "D", 0.37),
        "water": ("W", "Water", None, None),
    },
}
SOIL_ORDER = ["wet", "marsh", "flat_a", "flat_b", "gentle", "moderate", "strong", "steep", "water"]


def soil_classes(
    z_m: np.ndarray,
    res: float,
    hand_m: np.ndarray,
    water: np.ndarray,
    wetland: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Each cell's index in :data:`SOIL_ORDER`, from slope, wetness and a random texture.

    Parameters
    ----------
    z_m : numpy.ndarray
        Elevation, metres.
    res : float
        Cell size, metres.
    hand_m : numpy.ndarray
        Height above the creek, metres (under 1.2 m: the wet bottom soil).
    water, wetland : numpy.ndarray of bool
        Open water and mapped wetland cells.
    rng : numpy.random.Generator
        The recipe's generator (draws one noise field).

    Returns
    -------
    numpy.ndarray of int32
        Indexes into :data:`SOIL_ORDER`, median-filtered (7 x 7) into map-unit patches.
    """
    slope = slope_pct(ndimage.gaussian_filter(z_m, 2.0), res)
    texture = noise(rng, z_m.shape, [(40.0, 1.0)])
    idx = np.full(z_m.shape, SOIL_ORDER.index("gentle"), dtype=np.int32)
    idx[slope < 2.0] = np.where(texture[slope < 2.0] > 0, 2, 3)
    idx[(slope >= 2.0) & (texture > 0.8)] = 3
    idx[slope >= 6.0] = 5
    idx[slope >= 12.0] = 6
    idx[slope >= 20.0] = 7
    idx[hand_m < 1.2] = 0
    idx[wetland] = 1
    idx[water] = 8
    return ndimage.median_filter(idx, size=7, mode="nearest")


def soils_layer(
    muni: str,
    grid: Grid,
    z_m: np.ndarray,
    hand_m: np.ndarray,
    water: np.ndarray,
    wetland: np.ndarray,
    rng: np.random.Generator,
    areasymbol: str,
) -> gpd.GeoDataFrame:
    """SSURGO-like map units covering the whole DEM, from slope, wetness and a random field.

    Parameters
    ----------
    muni : str
        The municipality whose map units (:data:`SOILS`) are placed.
    grid : Grid
        The DEM's grid.
    z_m, hand_m, water, wetland, rng
        As :func:`soil_classes` takes them.
    areasymbol : str
        The SSURGO survey area (``WI025`` Dane, ``WI059`` Kenosha).

    Returns
    -------
    geopandas.GeoDataFrame
        AREASYMBOL, SPATIALVER, MUSYM, MUKEY, muname, hydgrpdcd, kffact and NOTE.
    """
    idx = soil_classes(z_m, grid.res, hand_m, water, wetland, rng)
    polys = polygonize(idx + 1, grid, step=3)
    polys = simplify_coverage(polys, 12.0)
    table = SOILS[muni]
    rows = [table[SOIL_ORDER[c - 1]] for c in polys["cls"]]
    base = 990100 if muni == "somers" else 990000  # synthetic MUKEY range
    mukeys = {key: str(base + i) for i, key in enumerate(SOIL_ORDER)}
    out = gpd.GeoDataFrame(
        {
            "AREASYMBOL": areasymbol,
            "SPATIALVER": 1,
            "MUSYM": [r[0] for r in rows],
            "MUKEY": [mukeys[SOIL_ORDER[c - 1]] for c in polys["cls"]],
            "muname": [r[1] for r in rows],
            "hydgrpdcd": [r[2] for r in rows],
            "kffact": [r[3] for r in rows],
        },
        geometry=polys.geometry.values,
        crs=WORKING_CRS,
    )
    return with_note(out)
