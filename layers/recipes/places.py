"""Census TIGER/Line places: a village's real limits, its incorporated neighbours, town land.

TIGER/Line PLACE files hold Wisconsin's cities (LSAD 25) and villages (LSAD 47) with their
legal limits as reported to the Census Bureau (and census-designated places, LSAD 57,
which are statistical, not municipalities). Towns are minor civil divisions, not places, so
they are not in the file: the town land around a village is derived here as the county
land (the WI DNR county outlines) that no city or village holds. In Wisconsin all land
lies in a city, a village or a town, so that remainder is town land; its towns' names are
not known from these files.
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely

from .common import WORKING_CRS, with_note

#: TIGER's legal/statistical area description codes of Wisconsin's municipalities.
LSAD_KIND = {"25": "C", "47": "V"}
#: The columns kept from the TIGER file (all but the MAF/TIGER feature class and flags).
TIGER_COLUMNS = ["GEOID", "NAME", "NAMELSAD", "LSAD", "CLASSFP", "FUNCSTAT", "ALAND", "AWATER"]
#: Town land narrower than twice this (metres) is dropped: the DNR 24K county outline and
#: TIGER's lines (the lake shore above all) differ by a few tens of metres, which leaves
#: strips of "town" between a place and the shore that no town holds.
SLIVER_HALF_WIDTH_M = 20.0


def place_note(vintage: str) -> str:
    """The NOTE column of a row copied from TIGER."""
    return (
        f"real: Census TIGER/Line {vintage} place (legal limits reported to the Census as of "
        f"January 1, {vintage}); public domain"
    )


TOWN_NOTE = (
    "derived: county land (WI DNR County Boundaries 24K) outside every TIGER/Line 2019 city "
    "and village, strips under 40 m wide dropped; towns are not TIGER places, names unknown"
)


def read_places(path: str) -> gpd.GeoDataFrame:
    """Wisconsin's cities and villages from a TIGER/Line PLACE file, in the working CRS.

    Parameters
    ----------
    path : str
        The shapefile or its zip as GDAL opens it (``/vsizip/...``).

    Returns
    -------
    geopandas.GeoDataFrame
        :data:`TIGER_COLUMNS`, ``MCD_NAME`` (TIGER's ``NAME``) and ``CTV`` (C or V), sorted
        by GEOID; census-designated places are left out.
    """
    gdf = pyogrio.read_dataframe(path, columns=TIGER_COLUMNS)
    gdf = gdf[gdf["LSAD"].isin(list(LSAD_KIND))].to_crs(WORKING_CRS)
    gdf = gdf.sort_values("GEOID").reset_index(drop=True)
    gdf.insert(0, "CTV", gdf["LSAD"].map(LSAD_KIND))
    gdf.insert(0, "MCD_NAME", gdf["NAME"])
    gdf["geometry"] = shapely.make_valid(np.asarray(gdf.geometry.values))
    return gdf


def drop_slivers(geom: shapely.Geometry, half_width_m: float) -> shapely.Geometry:
    """``geom`` without the parts narrower than ``2 * half_width_m`` (a mitred opening)."""
    inner = shapely.buffer(geom, -half_width_m, join_style="mitre")
    opened = shapely.buffer(inner, half_width_m, join_style="mitre")
    return shapely.make_valid(shapely.intersection(opened, geom))


def village_and_neighbours(
    places: gpd.GeoDataFrame,
    geoid: str,
    land: shapely.Geometry,
    within_m: float,
    vintage: str,
) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame]:
    """The village ``geoid``, the cities and villages within ``within_m`` and the town land.

    Parameters
    ----------
    places : geopandas.GeoDataFrame
        :func:`read_places`' cities and villages.
    geoid : str
        The village's GEOID (state FIPS + place FIPS).
    land : shapely.Geometry
        The county land around it (working CRS); what no place holds is town land.
    within_m : float
        Neighbours and town land are kept this far from the village (metres).
    vintage : str
        The TIGER/Line year, for the notes.

    Returns
    -------
    tuple
        The boundary frame (one row) and the neighbours: every other city and village
        within reach, whole, then one ``CTV = "T"`` row of town land clipped to the reach.
    """
    is_village = places["GEOID"] == geoid
    if int(is_village.sum()) != 1:
        raise ValueError(f"GEOID {geoid}: {int(is_village.sum())} places, expected one")
    village = places[is_village].reset_index(drop=True)
    limits = village.geometry.iloc[0]
    others = places[~is_village]
    near = others[others.distance(limits) <= within_m].reset_index(drop=True)
    reach = shapely.buffer(limits, within_m, quad_segs=32)
    towns = shapely.difference(shapely.intersection(land, reach), places.geometry.union_all())
    towns = drop_slivers(towns, SLIVER_HALF_WIDTH_M)
    town_row = gpd.GeoDataFrame(
        [{"MCD_NAME": "town land", "CTV": "T", "NAMELSAD": "town land (unincorporated)"}],
        geometry=[towns],
        crs=WORKING_CRS,
    )
    neighbours = gpd.GeoDataFrame(
        pd.concat(
            [with_note(near, place_note(vintage)), with_note(town_row, TOWN_NOTE)],
            ignore_index=True,
        ),
        geometry="geometry",
        crs=WORKING_CRS,
    )
    # TIGER's areas stay integers (square metres); the town row has none
    neighbours[["ALAND", "AWATER"]] = neighbours[["ALAND", "AWATER"]].astype("Int64")
    return with_note(village, place_note(vintage)), neighbours
