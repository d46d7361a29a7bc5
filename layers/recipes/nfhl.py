"""FEMA NFHL ``S_FLD_HAZ_AR``-like flood hazard zones (``FLD_ZONE``, ``ZONE_SUBTY``, BFE)."""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import numpy as np

from .common import WORKING_CRS, Grid, polygonize, simplify_coverage, with_note

#: The class raster's codes: FLD_ZONE, ZONE_SUBTY, SFHA_TF.
ZONE_CLASSES = {
    1: ("AE", "FLOODWAY", "T"),
    2: ("AE", None, "T"),
    3: ("X", "0.2 PCT ANNUAL CHANCE FLOOD HAZARD", "F"),
}


def zone(fld_zone: str, geometry: Any, *, static_bfe: float = -9999.0) -> dict[str, Any]:
    """One zone row given by its polygon (no subtype, in the SFHA; -9999: no BFE)."""
    return {
        "FLD_ZONE": fld_zone,
        "ZONE_SUBTY": None,
        "SFHA_TF": "T",
        "STATIC_BFE": static_bfe,
        "geometry": geometry,
    }


def _creek_zones(
    grid: Grid, hand: np.ndarray, dist: np.ndarray, thresholds: tuple[float, float, float]
) -> list[dict[str, Any]]:
    """The floodway, AE and shaded X rows along the creek, from the height above it."""
    fw, ae, x02 = thresholds
    cls = np.zeros(hand.shape, dtype=np.int32)
    near = dist < 600.0
    cls[near & (hand < x02)] = 3
    cls[near & (hand < ae)] = 2
    cls[(hand < fw) & (dist < 45.0)] = 1
    polys = polygonize(cls, grid)
    polys = polys[polys.area > 2000.0]
    polys = simplify_coverage(polys, 6.0)
    rows = []
    for geom, c in zip(polys.geometry, polys["cls"], strict=True):
        fld_zone, subty, sfha = ZONE_CLASSES[c]
        rows.append(
            {
                "FLD_ZONE": fld_zone,
                "ZONE_SUBTY": subty,
                "SFHA_TF": sfha,
                "STATIC_BFE": -9999.0,
                "geometry": geom,
            }
        )
    return rows


def _nfhl_columns(gdf: gpd.GeoDataFrame, dfirm: str) -> gpd.GeoDataFrame:
    """Add the NFHL identifier, datum and source columns around the zone columns."""
    gdf.insert(0, "DFIRM_ID", dfirm)
    gdf.insert(1, "VERSION_ID", "1.1.1.0")
    gdf.insert(2, "FLD_AR_ID", [f"{dfirm}_{i + 1}" for i in range(len(gdf))])
    gdf.insert(3, "STUDY_TYP", "NP")
    gdf["V_DATUM"] = np.where(gdf["STATIC_BFE"] > -9999.0, "NAVD88", None)
    gdf["DEPTH"] = -9999.0
    gdf["LEN_UNIT"] = np.where(gdf["STATIC_BFE"] > -9999.0, "Feet", None)
    gdf["SOURCE_CIT"] = "SYNTHETIC"
    return with_note(gdf)


def flood_layer(
    grid: Grid,
    hand: np.ndarray,
    dist: np.ndarray,
    dfirm: str,
    thresholds: tuple[float, float, float],
    extra: list[dict[str, Any]],
) -> gpd.GeoDataFrame:
    """FEMA NFHL ``S_FLD_HAZ_AR``-like zones along the main creek (non-overlapping).

    Parameters
    ----------
    grid : Grid
        The DEM's grid.
    hand, dist : numpy.ndarray
        Height above the creek (DEM units) and distance to it (metres), per cell.
    dfirm : str
        The DFIRM_ID (county FIPS + ``C``).
    thresholds : (float, float, float)
        Heights above the creek (DEM units) for the floodway, the 1 % (AE) and the
        0.2 % (shaded X) zones.
    extra : list of dict
        Zones given as polygons (:func:`zone`, e.g. a ponding AE); they win where they
        overlap the creek's zones.

    Returns
    -------
    geopandas.GeoDataFrame
        The NFHL columns and NOTE; rows under 100 m² dropped.
    """
    rows = _creek_zones(grid, hand, dist, thresholds)
    rows.extend(extra)
    gdf = gpd.GeoDataFrame(rows, geometry="geometry", crs=WORKING_CRS)
    # later rows (extra zones) win where they overlap: NFHL zones never overlap
    for i in range(len(gdf) - len(extra), len(gdf)):
        g = gdf.geometry.iloc[i]
        gdf.loc[gdf.index[: len(gdf) - len(extra)], "geometry"] = gdf.geometry.iloc[
            : len(gdf) - len(extra)
        ].difference(g)
    gdf = gdf[~gdf.geometry.is_empty & (gdf.area > 100.0)].reset_index(drop=True)
    return _nfhl_columns(gdf, dfirm)
