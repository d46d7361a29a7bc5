"""NHD-like hydrography: ``NHDFlowline`` and ``NHDWaterbody`` rows (USGS NHD schema)."""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import shapely

from .common import WORKING_CRS, perm_id, with_note
from .terrain import Stream

#: NHD FType codes and names (USGS NHD data dictionary, FType domain) with their FCodes.
FLOWLINE_TYPES = {460: "StreamRiver", 336: "CanalDitch"}
WATERBODY_TYPES = {390: ("LakePond", 39004), 466: ("SwampMarsh", 46600)}


def flowlines(streams: list[Stream], huc8: str, clip: shapely.Geometry) -> gpd.GeoDataFrame:
    """NHDFlowline-like rows for the streams, clipped to the DEM extent.

    Parameters
    ----------
    streams : list of Stream
        The streams, each with its NHD FType and FCode.
    huc8 : str
        The HUC8 their ReachCodes start with.
    clip : shapely.Geometry
        The extent kept (the DEM's box, less a lake).

    Returns
    -------
    geopandas.GeoDataFrame
        Permanent_Identifier, GNIS_NAME, ReachCode, FType, FCode, FTYPE_NAME and NOTE.
    """
    rows = []
    for i, s in enumerate(streams):
        rows.append(
            {
                "Permanent_Identifier": perm_id(huc8, s.name),
                "GNIS_NAME": s.name,
                "ReachCode": f"{huc8}99{i + 1:04d}",
                "FType": s.ftype,
                "FCode": s.fcode,
                "FTYPE_NAME": FLOWLINE_TYPES[s.ftype],
                "geometry": s.line.intersection(clip),
            }
        )
    return with_note(gpd.GeoDataFrame(rows, geometry="geometry", crs=WORKING_CRS))


def waterbodies(rows: list[dict[str, Any]], huc8: str) -> gpd.GeoDataFrame:
    """NHDWaterbody-like rows (FType 390 LakePond, 466 SwampMarsh).

    Parameters
    ----------
    rows : list of dict
        ``GNIS_NAME``, ``FType`` and ``geometry`` of each water body.
    huc8 : str
        The HUC8 their ReachCodes start with.

    Returns
    -------
    geopandas.GeoDataFrame
        Permanent_Identifier, GNIS_NAME, ReachCode, FType, FCode, FTYPE_NAME and NOTE.
    """
    out = []
    for i, r in enumerate(rows):
        ftype = r["FType"]
        name, fcode = WATERBODY_TYPES[ftype]
        out.append(
            {
                "Permanent_Identifier": perm_id(huc8, "wb", r["GNIS_NAME"], i),
                "GNIS_NAME": r["GNIS_NAME"],
                "ReachCode": f"{huc8}98{i + 1:04d}",
                "FType": ftype,
                "FCode": fcode,
                "FTYPE_NAME": name,
                "geometry": r["geometry"],
            }
        )
    return with_note(gpd.GeoDataFrame(out, geometry="geometry", crs=WORKING_CRS))
