"""``layers/somers``: the real Village of Somers limits and synthetic layers (DEM in feet).

The village (GEOID 5574625) and the cities and villages around it are copied from the
Census TIGER/Line 2019 places; the town land between them is the Kenosha and Racine county
land (WI DNR outlines) that no city or village holds (:mod:`.places`). The DEM
(international feet), hydrography,
wetlands, flood zones, soils and roads are synthetic: a lake plain above a bluff to
Lake Michigan, "Synthetic Pike River tributary" through a ravine to the lake and a
ditch joining it from the north (``layers/README.md``).
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely
from shapely.geometry import Point

from .common import (
    M_PER_FT,
    SYNTHETIC_NOTE,
    WORKING_CRS,
    Grid,
    rasterize_mask,
    write_dem,
    write_gpkg,
)
from .nfhl import flood_layer, zone
from .nhd import flowlines, waterbodies
from .places import read_places, village_and_neighbours
from .ssurgo import soils_layer
from .terrain import Stream, creek_and_ditch, cut_ditch, line_fields, noise, smoothstep, valley
from .tiger import Road, roads_layer
from .wwi import wetland_layer

#: The real inputs, relative to the shared data folder.
COUNTIES = Path("wi_statewide") / "County_Boundaries_24K.shp"
PLACES = Path("wi_places") / "tl_2019_55_place.zip"
INPUTS = (COUNTIES, PLACES)

#: Somers DEM: placed around the approximate village once drawn (689400-700000 E, 238450-246200 N)
#: + ~3 km and the lake; it holds the real village (687708-699828 E, 237532-246270 N) and all
#: its 1.5-mile reach on land but a strip west of 686000 E (layers/README.md).
SOMERS_GRID = Grid(686000.0, 235500.0, 701200.0, 249000.0, 10.0)
#: The HUC8 of the synthetic streams (Pike-Root).
HUC8 = "04040002"

#: The Village of Somers in TIGER/Line (state 55, place 74625) and the file's vintage.
SOMERS_GEOID = "5574625"
TIGER_VINTAGE = "2019"
#: Neighbours and town land are kept this far from the village: its reach (1.5 mi) plus the
#: largest a city can have (3 mi, Wis. Stat. 236.02(5)), as far as the code asks a city's class.
NEIGHBOUR_REACH_M = 4.5 * 1609.344

#: Somers' roads: name, MTFCC class, vertices (EPSG:3071 metres).
SOMERS_ROADS: list[Road] = [
    ("State Hwy 31", "S1200", [(692000, 235500), (691900, 249000)]),
    ("County Rd E", "S1200", [(686000, 241500), (698300, 241650)]),
    ("Lakeshore Dr", "S1400", [(697600, 237000), (697900, 241000), (698700, 246000)]),
    ("7 Mile Rd", "S1400", [(686000, 243700), (698900, 243850)]),
    ("Meadow Ln", "S1400", [(694500, 241650), (694600, 245000)]),
    ("Paris Line Rd", "S1400", [(688600, 235500), (688450, 249000)]),
]
#: Lake Michigan's level in the Somers DEM (feet).
SOMERS_LAKE_FT = 579.0
#: The creek's water surface where it enters the DEM (feet).
CREEK_TOP_FT = 662.0


def somers_municipalities(
    data: Path,
) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame, shapely.Geometry]:
    """The real Village of Somers (TIGER 2019), its neighbours and the two counties' land.

    Returns
    -------
    tuple
        The boundary frame, the neighbours frame (cities, villages, town land) and the
        Kenosha and Racine county land (WI DNR outlines, which also give the lake shore).
    """
    counties = gpd.read_file(data / COUNTIES).to_crs(WORKING_CRS)
    kenosha = shapely.make_valid(counties.loc[counties["COUNTY_FIP"] == "59"].geometry.union_all())
    racine = shapely.make_valid(counties.loc[counties["COUNTY_FIP"] == "101"].geometry.union_all())
    # this union is the shore of the synthetic lake: keep it as the DEM was built on it
    land = shapely.union(kenosha, racine)
    places = read_places(f"/vsizip/{data / PLACES}")
    boundary, neighbors = village_and_neighbours(
        places, SOMERS_GEOID, land, NEIGHBOUR_REACH_M, TIGER_VINTAGE
    )
    return boundary, neighbors, land


def somers_streams() -> list[Stream]:
    """Synthetic Pike River tributary (west to east, into Lake Michigan) and a ditch."""
    return creek_and_ditch(
        "Synthetic Pike River tributary",
        [
            (684000, 239700),
            (686500, 239650),
            (688400, 239780),
            (689700, 239900),
            (691500, 240250),
            (693200, 240500),
            (695000, 240300),
            (697000, 240450),
            (698300, 240600),
            (699300, 240650),
            (701500, 240700),
        ],
        (0.0, 0.0),
        (693200, 240500),
        [(693600, 245200), (693500, 243600), (693250, 241800)],
        (20, 200),
    )


def somers_lake(
    grid: Grid, land: shapely.Geometry
) -> tuple[shapely.Geometry, shapely.Geometry, np.ndarray, np.ndarray]:
    """The grid's box, the open lake in it, the lake's cells and each cell's distance to shore."""
    xs, ys = grid.centres()
    clip = grid.clip_box()
    lake = clip.difference(land)
    lake = max(getattr(lake, "geoms", [lake]), key=lambda g: g.area)  # the open lake
    pts = shapely.points(xs.ravel(), ys.ravel())
    shapely.prepare(lake)
    in_lake = shapely.contains_xy(lake, xs.ravel(), ys.ravel()).reshape(xs.shape)
    d_shore = shapely.distance(lake.boundary, pts).reshape(xs.shape)
    return clip, lake, in_lake, d_shore


def somers_terrain(
    grid: Grid,
    rng: np.random.Generator,
    lake: shapely.Geometry,
    in_lake: np.ndarray,
    d_shore: np.ndarray,
    creek: Stream,
    ditch: Stream,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """The DEM (feet): a plain above a lake bluff, the creek valley and the ditch.

    Returns
    -------
    tuple
        z, the creek's profile, the distance to and along the creek, and where along it
        the creek meets the lake.
    """
    xs, ys = grid.centres()
    lake_ft = SOMERS_LAKE_FT
    # the creek's profile: 662 ft in the west to the lake at the shore (beyond: lake level)
    crossings = creek.line.intersection(lake.boundary)
    mouth = min(creek.line.project(p) for p in getattr(crossings, "geoms", [crossings]))
    dist, along = line_fields(creek.line, xs, ys)
    creek_prof = np.where(
        along < mouth, CREEK_TOP_FT + (lake_ft + 2.0 - CREEK_TOP_FT) * along / mouth, lake_ft + 2.0
    )

    relief = noise(rng, dist.shape, [(80.0, 6.0), (25.0, 2.5), (6.0, 0.6)])
    plain = (
        646.0
        + 56.0 * (1.0 - np.exp(-d_shore / 6000.0))
        + relief * smoothstep((d_shore - 150.0) / 400.0)
    )
    bluff = smoothstep(d_shore / 95.0)
    surface = lake_ft + 2.0 + (plain - lake_ft - 2.0) * bluff
    z = np.minimum(surface, creek_prof + valley(dist, 20.0, 250.0, 0.03))

    jz = float(
        np.interp(
            creek.line.project(Point(ditch.line.coords[-1])),
            [0.0, mouth],
            [CREEK_TOP_FT, lake_ft + 2.0],
        )
    )
    z = cut_ditch(z, grid, ditch.line, xs, ys, 4.0, jz, 0.4)
    z = z - 4.0 * np.exp(-((dist / 12.0) ** 2)) * (~in_lake)
    z = np.where(in_lake, lake_ft, z)
    return z, creek_prof, dist, along, mouth


def somers_wetlands(
    grid: Grid,
    ditch: Stream,
    hand: np.ndarray,
    dist: np.ndarray,
    s_frac: np.ndarray,
    in_lake: np.ndarray,
) -> gpd.GeoDataFrame:
    """Two stretches of the creek bottom and a stretch along the ditch."""
    xs, ys = grid.centres()
    d_dist, d_along = line_fields(ditch.line, xs, ys)
    creek_wet = (hand < 3.0) & (dist < 250.0) & ~in_lake
    stretch = ((s_frac > 0.30) & (s_frac < 0.42)) * 1 + ((s_frac > 0.55) & (s_frac < 0.62)) * 2
    dd_wet = (
        (d_dist < 60.0)
        & (d_along > 0.25 * ditch.line.length)
        & (d_along < 0.55 * ditch.line.length)
    )
    codes = np.where(dd_wet, 1, stretch)
    wet_mask = (creek_wet & (stretch > 0)) | dd_wet
    return wetland_layer(wet_mask, codes, grid, county=30, prefix="WWI30S")


def write_water(
    out: Path, creek: Stream, ditch: Stream, clip: shapely.Geometry, lake: shapely.Geometry
) -> None:
    """hydrography.gpkg: creek and ditch (NHDFlowline), Lake Michigan (NHDWaterbody)."""
    hydro = flowlines([creek, ditch], HUC8, clip.difference(lake))
    write_gpkg(hydro, out / "hydrography.gpkg", "NHDFlowline")
    wb = waterbodies([{"GNIS_NAME": "Lake Michigan", "FType": 390, "geometry": lake}], HUC8)
    wb["NOTE"] = SYNTHETIC_NOTE + " (shore taken from the WI DNR county outline)"
    write_gpkg(wb, out / "hydrography.gpkg", "NHDWaterbody", append=True)


def write_floodplain(
    out: Path,
    creek: Stream,
    ditch: Stream,
    clip: shapely.Geometry,
    hand: np.ndarray,
    dist: np.ndarray,
    in_lake: np.ndarray,
) -> None:
    """floodplain.gpkg: creek zones (none in the lake) and an approximate A zone on the ditch."""
    ditch_a = ditch.line.buffer(25.0).intersection(clip).difference(creek.line.buffer(60.0))
    hand_land = np.where(in_lake, 99.0, hand)
    flood = flood_layer(
        SOMERS_GRID, hand_land, dist, "55059C", (1.5, 4.0, 6.0), [zone("A", ditch_a)]
    )
    write_gpkg(flood, out / "floodplain.gpkg", "S_FLD_HAZ_AR")


def make_somers(data: Path, out: Path) -> None:
    """Write layers/somers/* (TIGER 2019 boundaries + synthetic layers; DEM in feet)."""
    out.mkdir(parents=True, exist_ok=True)
    boundary, neighbors, land = somers_municipalities(data)
    write_gpkg(boundary, out / "boundary.gpkg", "boundary")
    write_gpkg(neighbors, out / "neighbors.gpkg", "neighbors")

    grid = SOMERS_GRID
    rng = np.random.default_rng(20250118)
    clip, lake, in_lake, d_shore = somers_lake(grid, land)
    creek, ditch = somers_streams()
    z, creek_prof, dist, along, mouth = somers_terrain(
        grid, rng, lake, in_lake, d_shore, creek, ditch
    )
    creek = Stream(creek.name, creek.line, CREEK_TOP_FT, SOMERS_LAKE_FT + 2.0, 460, 46006)
    write_dem(
        z,
        grid,
        out / "dem.tif",
        "ft",
        "synthetic DEM (international feet, EPSG:3071) made by layers/make_layers.py; "
        "not real terrain",
    )

    hand = np.where(in_lake, 0.0, z - creek_prof)
    wetlands = somers_wetlands(grid, ditch, hand, dist, along / mouth, in_lake)
    write_gpkg(wetlands, out / "wetlands.gpkg", "wetlands")
    write_water(out, creek, ditch, clip, lake)
    write_floodplain(out, creek, ditch, clip, hand, dist, in_lake)

    # the soils draw from the generator after the terrain: keep this order
    wet = rasterize_mask(wetlands, grid)
    z_m, hand_m = z * M_PER_FT, hand * M_PER_FT
    soils = soils_layer("somers", grid, z_m, hand_m, in_lake, wet, rng, "WI059")
    write_gpkg(soils, out / "soils.gpkg", "soilmu_a")
    write_gpkg(roads_layer(SOMERS_ROADS, "1105"), out / "roads.gpkg", "roads")
