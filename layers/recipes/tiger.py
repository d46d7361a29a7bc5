"""TIGER-like road centrelines (Census TIGER/Line ``LINEARID``, ``FULLNAME``, ``MTFCC``)."""

from __future__ import annotations

import geopandas as gpd
from shapely.geometry import LineString

from .common import WORKING_CRS, with_note

#: A road: its name, its MTFCC class (S1200 secondary, S1400 local) and its vertices (metres).
Road = tuple[str, str, list[tuple[float, float]]]


def roads_layer(rows: list[Road], prefix: str) -> gpd.GeoDataFrame:
    """TIGER-like road centrelines; ``LINEARID`` is ``prefix`` and a serial number."""
    out = gpd.GeoDataFrame(
        {
            "LINEARID": [f"{prefix}{i + 1:06d}" for i in range(len(rows))],
            "FULLNAME": [r[0] for r in rows],
            "MTFCC": [r[1] for r in rows],
        },
        geometry=[LineString(r[2]) for r in rows],
        crs=WORKING_CRS,
    )
    return with_note(out)
