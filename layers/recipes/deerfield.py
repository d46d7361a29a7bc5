"""``layers/deerfield``: the real Village of Deerfield limits and synthetic layers around them.

The village and its 59 Dane County neighbours are copied from the Wisconsin LTSB
municipal boundaries (January 2025); the DEM (metres), hydrography, wetlands, flood
zones, soils and roads are synthetic: "Synthetic Creek" NW to SE through the south of
the village, a ditch joining it, a drumlin inside the village and a kettle pond in the
town north-east of it (``layers/README.md``).
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely
from shapely.geometry import Point

from .common import M_PER_FT, Grid, rasterize_mask, write_dem, write_gpkg
from .nfhl import flood_layer, zone
from .nhd import flowlines, waterbodies
from .ssurgo import soils_layer
from .terrain import (
    Stream,
    creek_and_ditch,
    cut_ditch,
    kettle,
    line_fields,
    noise,
    profile,
    smoothstep,
    valley,
)
from .tiger import Road, roads_layer
from .wwi import wetland_layer

#: The real inputs, relative to the shared data folder.
MUNICIPALITIES = Path("wi_dane") / "dane_county_munis.geojson"
INPUTS = (MUNICIPALITIES,)

#: Deerfield DEM: the village's bounding box (593567-596808 E, 284938-288217 N) +- ~4.5 km.
DEERFIELD_GRID = Grid(589000.0, 280400.0, 601400.0, 292800.0, 10.0)
#: The HUC8 of the synthetic streams (Upper Rock).
HUC8 = "07090001"

#: Deerfield's roads: name, MTFCC class, vertices (EPSG:3071 metres).
DEERFIELD_ROADS: list[Road] = [
    (
        "Main St",
        "S1200",
        [(589000, 286900), (593000, 286950), (597500, 287050), (601400, 287150)],
    ),
    (
        "Mill Rd",
        "S1400",
        [(595050, 280400), (595100, 284000), (595150, 288600), (595200, 292800)],
    ),
    ("Drumlin Dr", "S1400", [(594700, 287900), (596600, 288000)]),
    ("Creekside Ln", "S1400", [(594300, 285900), (595000, 285300), (596300, 284700)]),
    ("County Hwy O", "S1200", [(591600, 280400), (591700, 292800)]),
    ("Town Line Rd", "S1400", [(589000, 283700), (601400, 283850)]),
    ("Kettle Rd", "S1400", [(595150, 289800), (599000, 289900)]),
]
#: The kettle pond in the town north-east of the village.
DEERFIELD_POND = Point(597700.0, 290200.0)


def deerfield_streams() -> list[Stream]:
    """Synthetic Creek (NW to SE through the south of the village) and a ditch joining it."""
    return creek_and_ditch(
        "Synthetic Creek",
        [
            (587000, 290600),
            (590500, 289300),
            (592600, 288100),
            (593700, 287000),
            (594700, 286250),
            (595600, 285650),
            (596800, 284700),
            (597900, 283800),
            (598600, 282700),
            (599300, 281400),
            (600300, 280200),
            (602500, 278500),
        ],
        (277.0, 256.0),
        (597900, 283800),
        [(600500, 287600), (599600, 286600), (598700, 285200)],
        (60, 160),
    )


def deerfield_terrain(
    grid: Grid, rng: np.random.Generator, creek: Stream, ditch: Stream
) -> tuple[np.ndarray, ...]:
    """The DEM (metres) with its creek valley, drumlin, ditch and kettle pond.

    Returns
    -------
    tuple
        z, the creek's profile, the distance to and along the creek, the pond's level and
        the pond's cells.
    """
    xs, ys = grid.centres()
    dist, along = line_fields(creek.line, xs, ys)
    prof = profile(creek, along)
    fade = smoothstep((dist - 120.0) / 600.0)
    relief = noise(rng, dist.shape, [(60.0, 4.0), (25.0, 3.0), (10.0, 1.2), (4.0, 0.25)])
    z = prof + valley(dist, 14.0, 700.0, 0.0015) + fade * relief

    # a drumlin inside the village (ENE long axis) with flanks steeper than 20 %
    cx, cy, az = 595880.0, 287520.0, np.deg2rad(20.0)
    u = (xs - cx) * np.cos(az) + (ys - cy) * np.sin(az)
    v = -(xs - cx) * np.sin(az) + (ys - cy) * np.cos(az)
    z = z + fade * 14.0 * np.exp(-((u / 260.0) ** 2) - (v / 42.0) ** 2)

    # the ditch: a shallow valley cut into the slope, graded to the creek at the junction
    jz = float(profile(creek, np.array(creek.line.project(Point(ditch.line.coords[-1])))))
    z = cut_ditch(z, grid, ditch.line, xs, ys, 1.2, jz, 0.12)
    # the creek channel, about 1.5 m deep
    z = z - 1.5 * np.exp(-((dist / 12.0) ** 2))

    z, pond_z, pond_mask = kettle(z, xs, ys, DEERFIELD_POND, 95.0, 0.07)
    return z, prof, dist, along, pond_z, pond_mask


def deerfield_wetlands(
    grid: Grid, creek: Stream, hand: np.ndarray, dist: np.ndarray, along: np.ndarray
) -> gpd.GeoDataFrame:
    """Three stretches of the creek bottom (one crosses the village), the pond fringe."""
    xs, ys = grid.centres()
    s_frac = along / creek.line.length
    creek_wet = (hand < 0.9) & (dist < 250.0)
    stretch = (
        ((s_frac > 0.12) & (s_frac < 0.22)) * 1
        + ((s_frac > 0.40) & (s_frac < 0.50)) * 1
        + ((s_frac > 0.70) & (s_frac < 0.78)) * 2
    )
    pond_r = np.hypot(xs - DEERFIELD_POND.x, ys - DEERFIELD_POND.y)
    fringe = (pond_r > 95.0) & (pond_r < 135.0)
    codes = np.where(fringe, 3, stretch)
    wet_mask = (creek_wet & (stretch > 0)) | fringe
    return wetland_layer(wet_mask, codes, grid, county=13, prefix="WWI13S")


def write_boundaries(data: Path, out: Path) -> None:
    """Copy the village (boundary.gpkg) and the other Dane County municipalities (neighbors)."""
    munis = gpd.read_file(data / MUNICIPALITIES)
    munis["geometry"] = shapely.make_valid(np.asarray(munis.geometry.values))
    is_village = (munis["MCD_NAME"] == "Deerfield") & (munis["CTV"] == "V")
    write_gpkg(munis[is_village], out / "boundary.gpkg", "boundary")
    write_gpkg(munis[~is_village], out / "neighbors.gpkg", "neighbors")


def write_hydrography(
    out: Path, creek: Stream, ditch: Stream, wetlands: gpd.GeoDataFrame, pond: shapely.Geometry
) -> None:
    """hydrography.gpkg: the creek and ditch (NHDFlowline), the pond and marsh (NHDWaterbody)."""
    grid = DEERFIELD_GRID
    marsh = wetlands[wetlands["WETCODE"] == "T3K"].geometry.union_all()
    hydro = flowlines([creek, ditch], HUC8, grid.clip_box())
    write_gpkg(hydro, out / "hydrography.gpkg", "NHDFlowline")
    wb = waterbodies(
        [
            {"GNIS_NAME": "Synthetic Kettle Pond", "FType": 390, "geometry": pond},
            {"GNIS_NAME": "Synthetic Creek Marsh", "FType": 466, "geometry": marsh},
        ],
        HUC8,
    )
    write_gpkg(wb, out / "hydrography.gpkg", "NHDWaterbody", append=True)


def write_floodplain(
    out: Path,
    creek: Stream,
    ditch: Stream,
    hand: np.ndarray,
    dist: np.ndarray,
    pond: shapely.Geometry,
    pond_z: float,
) -> None:
    """floodplain.gpkg: creek zones, an approximate A zone on the ditch, a ponding AE."""
    grid = DEERFIELD_GRID
    clip = grid.clip_box()
    ditch_a = ditch.line.buffer(30.0).intersection(clip).difference(creek.line.buffer(60.0))
    # the pond's base flood elevation 1 m above its level, in feet as NFHL gives it
    pond_ae = zone("AE", pond.buffer(25.0), static_bfe=round((pond_z + 1.0) / M_PER_FT, 1))
    extra = [zone("A", ditch_a), pond_ae]
    flood = flood_layer(grid, hand, dist, "55025C", (0.6, 1.5, 2.4), extra)
    write_gpkg(flood, out / "floodplain.gpkg", "S_FLD_HAZ_AR")


def make_deerfield(data: Path, out: Path) -> None:
    """Write layers/deerfield/* (real boundaries + synthetic layers)."""
    out.mkdir(parents=True, exist_ok=True)
    write_boundaries(data, out)

    grid = DEERFIELD_GRID
    rng = np.random.default_rng(20250117)
    creek, ditch = deerfield_streams()
    z, prof, dist, along, pond_z, pond_mask = deerfield_terrain(grid, rng, creek, ditch)
    write_dem(
        z,
        grid,
        out / "dem.tif",
        "m",
        "synthetic DEM (metres, EPSG:3071) made by layers/make_layers.py; not real terrain",
    )

    hand = z - prof  # height above the creek
    wetlands = deerfield_wetlands(grid, creek, hand, dist, along)
    write_gpkg(wetlands, out / "wetlands.gpkg", "wetlands")

    pond = Point(DEERFIELD_POND).buffer(95.0, 64)
    write_hydrography(out, creek, ditch, wetlands, pond)
    write_floodplain(out, creek, ditch, hand, dist, pond, pond_z)

    # the soils draw from the generator after the terrain: keep this order
    wet = rasterize_mask(wetlands, grid)
    soils = soils_layer("deerfield", grid, z, hand, pond_mask, wet, rng, "WI025")
    write_gpkg(soils, out / "soils.gpkg", "soilmu_a")
    write_gpkg(roads_layer(DEERFIELD_ROADS, "1105"), out / "roads.gpkg", "roads")
