"""Build the reference layers shipped in ``layers/deerfield`` and ``layers/somers``.

Run from anywhere::

    /work/venv/bin/python layers/make_layers.py [--data ../shared/data] [--out layers]

Real inputs (read from ``--data``, default ``../shared/data`` relative to the repository root):

- ``wi_dane/dane_county_munis.geojson``: Wisconsin LTSB municipal boundaries (January 2025).
  The Village of Deerfield limit and its 59 Dane County neighbours are copied as they are.
- ``wi_statewide/County_Boundaries_24K.shp``: WI DNR county outlines. The Kenosha (FIPS 59) and
  Racine (FIPS 101) polygons clip the APPROXIMATE Village of Somers and its neighbours.

Everything else is SYNTHETIC and says so in every file: a DEM, NHD-like hydrography, Wisconsin
Wetland Inventory-like wetlands, FEMA NFHL ``S_FLD_HAZ_AR``-like flood zones, SSURGO-like soil
map units and TIGER-like roads. They are made from fixed seeds and fixed control points, so a
re-run reproduces the files (GeoPackage timestamps are pinned with GDAL's ``OGR_CURRENT_DATE``).

The terrain is built around the creek so that water really drains to it: elevation is the creek's
longitudinal profile at the nearest point of the creek plus a valley-side rise that grows with the
distance from the creek, plus smooth noise that fades out near the creek (rolling glacial relief),
plus a drumlin with steep flanks (Deerfield), a closed kettle depression holding a pond (Deerfield)
and a lake bluff (Somers). Flood zones, wetlands and soils are derived from the same surface
(height above the creek, slope), so the layers agree with each other.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import rasterio
import rasterio.features
import shapely
from rasterio.transform import from_origin
from scipy import ndimage
from shapely.geometry import LineString, Point, box

from georeview.ordinances import municipalities

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"
WORKING_CRS = "EPSG:3071"
SYNTHETIC_NOTE = "synthetic: made by layers/make_layers.py"
APPROX_NOTE = (
    "approximate: drawn by layers/make_layers.py from the county outline and round "
    "latitude/longitude lines; not a legal limit"
)
#: GeoPackages record a "last change" timestamp; pin it so re-runs give identical bytes.
PINNED_DATE = "2025-01-17T00:00:00Z"
M_PER_FT = 0.3048  # international foot (mirrors georeview.units; this script runs stand-alone)
NAMESPACE = uuid.UUID("6f1f3c2e-4d0b-4b8e-9d7e-3a2b1c0d9e8f")


# --------------------------------------------------------------------------- helpers


@dataclass(frozen=True)
class Grid:
    """A north-up raster grid in the working CRS (cell centres in ``xs``/``ys``)."""

    xmin: float
    ymin: float
    xmax: float
    ymax: float
    res: float

    @property
    def shape(self) -> tuple[int, int]:
        """Rows, columns."""
        return (
            round((self.ymax - self.ymin) / self.res),
            round((self.xmax - self.xmin) / self.res),
        )

    @property
    def transform(self) -> rasterio.Affine:
        """Affine transform of the top-left corner."""
        return from_origin(self.xmin, self.ymax, self.res, self.res)

    def centres(self) -> tuple[np.ndarray, np.ndarray]:
        """Cell-centre coordinates as 2-D arrays."""
        rows, cols = self.shape
        xs = self.xmin + (np.arange(cols) + 0.5) * self.res
        ys = self.ymax - (np.arange(rows) + 0.5) * self.res
        return np.meshgrid(xs, ys)


def smooth_line(points: list[tuple[float, float]], iterations: int = 4) -> LineString:
    """Chaikin corner cutting: a gently curving line through the control polygon."""
    pts = np.asarray(points, dtype=float)
    for _ in range(iterations):
        q = 0.75 * pts[:-1] + 0.25 * pts[1:]
        r = 0.25 * pts[:-1] + 0.75 * pts[1:]
        mid = np.empty((2 * len(q), 2))
        mid[0::2] = q
        mid[1::2] = r
        pts = np.vstack([pts[:1], mid, pts[-1:]])
    return LineString(np.round(pts, 2))


def line_fields(line: LineString, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distance to ``line`` and the distance along it of the nearest point, for every cell."""
    pts = shapely.points(xs.ravel(), ys.ravel())
    shapely.prepare(line)
    dist = shapely.distance(line, pts).reshape(xs.shape)
    along = shapely.line_locate_point(line, pts).reshape(xs.shape)
    return dist, along


def noise(rng: np.random.Generator, shape: tuple[int, int], octaves: list[tuple[float, float]]):
    """Sum of Gaussian-smoothed white noise fields, each scaled to a standard deviation.

    ``octaves`` is a list of (sigma in cells, standard deviation in output units).
    """
    total = np.zeros(shape)
    for sigma, std in octaves:
        field = ndimage.gaussian_filter(rng.standard_normal(shape), sigma, mode="reflect")
        total += field / field.std() * std
    return total


def smoothstep(t: np.ndarray) -> np.ndarray:
    """0 below 0, 1 above 1, 3t^2 - 2t^3 between."""
    t = np.clip(t, 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def polygonize(classes: np.ndarray, grid: Grid, step: int = 1) -> gpd.GeoDataFrame:
    """Polygons of the non-zero classes of a raster (one row per connected patch)."""
    arr = classes[::step, ::step].astype(np.int32) if step > 1 else classes.astype(np.int32)
    transform = from_origin(grid.xmin, grid.ymax, grid.res * step, grid.res * step)
    geoms, values = [], []
    for geom, value in rasterio.features.shapes(arr, mask=arr > 0, transform=transform):
        geoms.append(shapely.geometry.shape(geom))
        values.append(int(value))
    return gpd.GeoDataFrame({"cls": values}, geometry=geoms, crs=WORKING_CRS)


def simplify_coverage(gdf: gpd.GeoDataFrame, tolerance: float) -> gpd.GeoDataFrame:
    """Simplify polygons that tile an area without opening gaps between them."""
    out = gdf.copy()
    out["geometry"] = shapely.coverage_simplify(np.asarray(gdf.geometry.values), tolerance)
    out = out[~out.geometry.is_empty].copy()
    out["geometry"] = shapely.make_valid(np.asarray(out.geometry.values))
    return out


def write_gpkg(gdf: gpd.GeoDataFrame, path: Path, layer: str, *, append: bool = False) -> None:
    """Write one GeoPackage layer (the file is replaced unless ``append``)."""
    if not append and path.exists():
        path.unlink()
    gdf = gdf.reset_index(drop=True)
    pyogrio.write_dataframe(gdf, path, layer=layer, driver="GPKG", append=append)
    log.info("wrote %s layer %s (%d features)", path.name, layer, len(gdf))


def write_dem(z: np.ndarray, grid: Grid, path: Path, units: str, description: str) -> None:
    """Write a float32 GeoTIFF DEM, DEFLATE + floating-point predictor, with its provenance."""
    profile = {
        "driver": "GTiff",
        "height": z.shape[0],
        "width": z.shape[1],
        "count": 1,
        "dtype": "float32",
        "crs": WORKING_CRS,
        "transform": grid.transform,
        "nodata": -9999.0,
        "compress": "deflate",
        "predictor": 3,
        "zlevel": 9,
        "tiled": True,
        "blockxsize": 256,
        "blockysize": 256,
    }
    if path.exists():
        path.unlink()
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(np.round(z, 2).astype("float32"), 1)
        dst.update_tags(
            TIFFTAG_IMAGEDESCRIPTION=description,
            SOURCE=SYNTHETIC_NOTE,
            VERTICAL_UNITS=units,
        )
        dst.units = (units,)
        dst.descriptions = ("elevation (synthetic)",)
    log.info("wrote %s %s, %.1f-%.1f %s", path.name, z.shape, z.min(), z.max(), units)


def slope_pct(z_m: np.ndarray, res: float) -> np.ndarray:
    """Slope in percent from central differences (only for classifying soils and checks)."""
    gy, gx = np.gradient(z_m, res)
    return np.hypot(gx, gy) * 100.0


def perm_id(*parts: object) -> str:
    """A stable NHD-style Permanent_Identifier (UUID 5 of the parts)."""
    return "{" + str(uuid.uuid5(NAMESPACE, "/".join(map(str, parts)))).upper() + "}"


def with_note(gdf: gpd.GeoDataFrame, note: str = SYNTHETIC_NOTE) -> gpd.GeoDataFrame:
    """Add the NOTE column every synthetic vector layer carries."""
    gdf = gdf.copy()
    gdf["NOTE"] = note
    return gdf


# --------------------------------------------------------------------------- terrain pieces


@dataclass(frozen=True)
class Stream:
    """A synthetic stream: its line, its name, NHD type and its profile (in DEM units)."""

    name: str
    line: LineString
    z_up: float
    z_down: float
    ftype: int
    fcode: int


def profile(stream: Stream, along: np.ndarray) -> np.ndarray:
    """Water-surface elevation of ``stream`` at a distance ``along`` its line."""
    frac = along / stream.line.length
    return stream.z_up + (stream.z_down - stream.z_up) * frac


def valley(dist: np.ndarray, rise: float, length: float, grade: float) -> np.ndarray:
    """Rise of a valley side above the stream at ``dist`` metres (DEM units)."""
    return rise * (1.0 - np.exp(-dist / length)) + grade * dist


def kettle(z: np.ndarray, xs, ys, centre: Point, radius: float, grade: float):
    """Cut a closed depression holding a flat pond into ``z``.

    The pond surface is 1.5 units below the lowest ground within 150 m of its shore, and the
    basin side rises at ``grade`` from the shore: every way out crosses ground at least
    1.5 units above the water, so the pond is a real closed depression.
    """
    r = np.hypot(xs - centre.x, ys - centre.y)
    ring = (r > radius) & (r < radius + 150.0)
    surface = float(np.floor(z[ring].min() - 1.5))
    z = np.minimum(z, surface + grade * np.maximum(r - radius, 0.0))
    z = np.where(r <= radius, surface, z)
    return z, surface, r <= radius


def graded_profile(z: np.ndarray, grid: Grid, line: LineString, depth: float, z_end: float):
    """A water-surface profile for ``line`` that follows the ground and never rises downstream.

    The ground under the line is sampled every cell, lowered by ``depth``, made non-increasing
    downstream and kept above a gentle grade to ``z_end`` (the receiving stream's level).
    Returns the distances along the line and the profile there.
    """
    n = max(int(line.length / grid.res), 2)
    s = np.linspace(0.0, line.length, n + 1)
    pts = shapely.line_interpolate_point(line, s)
    cols = np.clip(((shapely.get_x(pts) - grid.xmin) / grid.res).astype(int), 0, grid.shape[1] - 1)
    rows = np.clip(((grid.ymax - shapely.get_y(pts)) / grid.res).astype(int), 0, grid.shape[0] - 1)
    prof = np.minimum.accumulate(z[rows, cols] - depth)
    floor = z_end + 0.0005 * (line.length - s)
    prof = np.maximum(prof, floor)
    prof[-1] = z_end
    return s, prof


def cut_ditch(z, grid, line, xs, ys, depth, z_end, side_grade):
    """Cut a ditch along ``line`` into ``z``, graded to ``z_end``; returns the new surface."""
    s, prof = graded_profile(z, grid, line, depth, z_end)
    d_dist, d_along = line_fields(line, xs, ys)
    bed = np.interp(d_along, s, prof)
    return np.minimum(z, bed + side_grade * d_dist)


# --------------------------------------------------------------------------- schemas


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
    """SSURGO-like map units covering the whole DEM, from slope, wetness and a random field."""
    slope = slope_pct(ndimage.gaussian_filter(z_m, 2.0), grid.res)
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
    idx = ndimage.median_filter(idx, size=7, mode="nearest")
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


def flood_layer(
    grid: Grid,
    hand: np.ndarray,
    dist: np.ndarray,
    dfirm: str,
    thresholds: tuple[float, float, float],
    extra: list[dict],
) -> gpd.GeoDataFrame:
    """FEMA NFHL ``S_FLD_HAZ_AR``-like zones along the main creek (non-overlapping).

    ``thresholds`` are heights above the creek (DEM units) for the floodway, the 1 % (AE) and
    the 0.2 % (shaded X) zones; ``extra`` adds zones given as polygons (e.g. a ponding AE).
    """
    fw, ae, x02 = thresholds
    cls = np.zeros(hand.shape, dtype=np.int32)
    near = dist < 600.0
    cls[near & (hand < x02)] = 3
    cls[near & (hand < ae)] = 2
    cls[(hand < fw) & (dist < 45.0)] = 1
    polys = polygonize(cls, grid)
    polys = polys[polys.area > 2000.0]
    polys = simplify_coverage(polys, 6.0)
    attrs = {
        1: ("AE", "FLOODWAY", "T"),
        2: ("AE", None, "T"),
        3: ("X", "0.2 PCT ANNUAL CHANCE FLOOD HAZARD", "F"),
    }
    rows = []
    for geom, c in zip(polys.geometry, polys["cls"], strict=True):
        zone, subty, sfha = attrs[c]
        rows.append(
            {
                "FLD_ZONE": zone,
                "ZONE_SUBTY": subty,
                "SFHA_TF": sfha,
                "STATIC_BFE": -9999.0,
                "geometry": geom,
            }
        )
    rows.extend(extra)
    gdf = gpd.GeoDataFrame(rows, geometry="geometry", crs=WORKING_CRS)
    # later rows (extra zones) win where they overlap: NFHL zones never overlap
    for i in range(len(gdf) - len(extra), len(gdf)):
        g = gdf.geometry.iloc[i]
        gdf.loc[gdf.index[: len(gdf) - len(extra)], "geometry"] = gdf.geometry.iloc[
            : len(gdf) - len(extra)
        ].difference(g)
    gdf = gdf[~gdf.geometry.is_empty & (gdf.area > 100.0)].reset_index(drop=True)
    gdf.insert(0, "DFIRM_ID", dfirm)
    gdf.insert(1, "VERSION_ID", "1.1.1.0")
    gdf.insert(2, "FLD_AR_ID", [f"{dfirm}_{i + 1}" for i in range(len(gdf))])
    gdf.insert(3, "STUDY_TYP", "NP")
    gdf["V_DATUM"] = np.where(gdf["STATIC_BFE"] > -9999.0, "NAVD88", None)
    gdf["DEPTH"] = -9999.0
    gdf["LEN_UNIT"] = np.where(gdf["STATIC_BFE"] > -9999.0, "Feet", None)
    gdf["SOURCE_CIT"] = "SYNTHETIC"
    return with_note(gdf)


def wetland_layer(mask: np.ndarray, codes: np.ndarray, grid: Grid, county: int, prefix: str):
    """Wisconsin Wetland Inventory-like polygons from a class raster (1 = E2K, 2 = T3K, 3 = E2H)."""
    cls = np.where(mask, codes, 0)
    polys = polygonize(cls, grid)
    polys = polys[polys.area > 1500.0]
    polys = simplify_coverage(polys, 6.0)
    table = {
        1: ("E2K", "Emergent/wet meadow"),
        2: ("T3K", "Scrub/shrub"),
        3: ("E2H", "Emergent/wet meadow"),
    }
    out = gpd.GeoDataFrame(
        {
            "WWI_ID": [f"{prefix}{i + 1:05d}" for i in range(len(polys))],
            "WETCODE": [table[c][0] for c in polys["cls"]],
            "WETCLASS": [table[c][1] for c in polys["cls"]],
            "COUNTY": county,
        },
        geometry=polys.geometry.values,
        crs=WORKING_CRS,
    )
    return with_note(out)


def flowlines(streams: list[Stream], huc8: str, clip: shapely.Geometry) -> gpd.GeoDataFrame:
    """NHDFlowline-like rows for the streams, clipped to the DEM extent."""
    rows = []
    for i, s in enumerate(streams):
        rows.append(
            {
                "Permanent_Identifier": perm_id(huc8, s.name),
                "GNIS_NAME": s.name,
                "ReachCode": f"{huc8}99{i + 1:04d}",
                "FType": s.ftype,
                "FCode": s.fcode,
                "FTYPE_NAME": {460: "StreamRiver", 336: "CanalDitch"}[s.ftype],
                "geometry": s.line.intersection(clip),
            }
        )
    return with_note(gpd.GeoDataFrame(rows, geometry="geometry", crs=WORKING_CRS))


def waterbodies(rows: list[dict], huc8: str) -> gpd.GeoDataFrame:
    """NHDWaterbody-like rows (FType 390 LakePond, 466 SwampMarsh)."""
    out = []
    for i, r in enumerate(rows):
        ftype = r["FType"]
        out.append(
            {
                "Permanent_Identifier": perm_id(huc8, "wb", r["GNIS_NAME"], i),
                "GNIS_NAME": r["GNIS_NAME"],
                "ReachCode": f"{huc8}98{i + 1:04d}",
                "FType": ftype,
                "FCode": {390: 39004, 466: 46600}[ftype],
                "FTYPE_NAME": {390: "LakePond", 466: "SwampMarsh"}[ftype],
                "geometry": r["geometry"],
            }
        )
    return with_note(gpd.GeoDataFrame(out, geometry="geometry", crs=WORKING_CRS))


def roads_layer(rows: list[tuple[str, str, list[tuple[float, float]]]], prefix: str):
    """TIGER-like road centrelines (LINEARID, FULLNAME, MTFCC)."""
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


# --------------------------------------------------------------------------- Deerfield

#: Deerfield DEM: the village's bounding box (593567-596808 E, 284938-288217 N) +- ~4.5 km.
DEERFIELD_GRID = Grid(589000.0, 280400.0, 601400.0, 292800.0, 10.0)


def creek_and_ditch(
    creek_name: str,
    creek_points: list[tuple[float, float]],
    creek_z: tuple[float, float],
    joins_at: tuple[float, float],
    ditch_points: list[tuple[float, float]],
    ditch_tip: tuple[float, float],
) -> list[Stream]:
    """A smoothed creek and a ditch that ends on it, at the creek point nearest ``joins_at``.

    The ditch's smoothed line stops ``ditch_tip`` (dx, dy metres) short of the junction and
    then meets it exactly, so the flowlines are connected as NHD's are.
    """
    creek = smooth_line(creek_points)
    junction = creek.interpolate(creek.project(Point(*joins_at)))
    tip = (junction.x + ditch_tip[0], junction.y + ditch_tip[1])
    ditch = smooth_line([*ditch_points, tip], 3)
    ditch = LineString([*ditch.coords, (junction.x, junction.y)])
    return [
        Stream(creek_name, creek, creek_z[0], creek_z[1], 460, 46006),
        Stream("Synthetic Drainage Ditch", ditch, 0.0, 0.0, 336, 33600),
    ]


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


#: Deerfield's roads: name, MTFCC class, vertices (EPSG:3071 metres).
DEERFIELD_ROADS = [
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


def deerfield_terrain(
    grid: Grid, rng: np.random.Generator, creek: Stream, ditch: Stream
) -> tuple[np.ndarray, ...]:
    """The DEM (metres) with its creek valley, drumlin, ditch and kettle pond.

    Returns z, the creek's profile, the distance to and along the creek, the pond's
    level and the pond's cells.
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


def make_deerfield(data: Path, out: Path) -> None:
    """Write layers/deerfield/* (real boundaries + synthetic layers)."""
    out.mkdir(parents=True, exist_ok=True)
    munis = gpd.read_file(data / "wi_dane" / "dane_county_munis.geojson")
    munis["geometry"] = shapely.make_valid(np.asarray(munis.geometry.values))
    is_village = (munis["MCD_NAME"] == "Deerfield") & (munis["CTV"] == "V")
    write_gpkg(munis[is_village], out / "boundary.gpkg", "boundary")
    write_gpkg(munis[~is_village], out / "neighbors.gpkg", "neighbors")

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
    clip = box(grid.xmin, grid.ymin, grid.xmax, grid.ymax)
    wetlands = deerfield_wetlands(grid, creek, hand, dist, along)
    write_gpkg(wetlands, out / "wetlands.gpkg", "wetlands")

    # hydrography: NHDFlowline + NHDWaterbody layers in one GeoPackage
    pond_poly = Point(DEERFIELD_POND).buffer(95.0, 64)
    marsh = wetlands[wetlands["WETCODE"] == "T3K"].geometry.union_all()
    hydro = flowlines([creek, ditch], "07090001", clip)
    write_gpkg(hydro, out / "hydrography.gpkg", "NHDFlowline")
    wb = waterbodies(
        [
            {"GNIS_NAME": "Synthetic Kettle Pond", "FType": 390, "geometry": pond_poly},
            {"GNIS_NAME": "Synthetic Creek Marsh", "FType": 466, "geometry": marsh},
        ],
        "07090001",
    )
    write_gpkg(wb, out / "hydrography.gpkg", "NHDWaterbody", append=True)

    # floodplain: creek zones + an approximate A zone on the ditch + a ponding AE at the kettle
    ditch_a = ditch.line.buffer(30.0).intersection(clip).difference(creek.line.buffer(60.0))
    pond_ae = pond_poly.buffer(25.0)
    extra = [
        {
            "FLD_ZONE": "A",
            "ZONE_SUBTY": None,
            "SFHA_TF": "T",
            "STATIC_BFE": -9999.0,
            "geometry": ditch_a,
        },
        {
            "FLD_ZONE": "AE",
            "ZONE_SUBTY": None,
            "SFHA_TF": "T",
            "STATIC_BFE": round((pond_z + 1.0) / M_PER_FT, 1),
            "geometry": pond_ae,
        },
    ]
    flood = flood_layer(grid, hand, dist, "55025C", (0.6, 1.5, 2.4), extra)
    write_gpkg(flood, out / "floodplain.gpkg", "S_FLD_HAZ_AR")

    soils = soils_layer(
        "deerfield", grid, z, hand, pond_mask, wetlands_raster(wetlands, grid), rng, "WI025"
    )
    write_gpkg(soils, out / "soils.gpkg", "soilmu_a")

    roads = roads_layer(DEERFIELD_ROADS, "1105")
    write_gpkg(roads, out / "roads.gpkg", "roads")


def wetlands_raster(wetlands: gpd.GeoDataFrame, grid: Grid) -> np.ndarray:
    """Boolean raster of the wetland polygons on ``grid``."""
    return rasterio.features.rasterize(
        ((g, 1) for g in wetlands.geometry),
        out_shape=grid.shape,
        transform=grid.transform,
        fill=0,
        dtype="uint8",
    ).astype(bool)


# --------------------------------------------------------------------------- Somers

#: Somers DEM: the approximate village (689400-700000 E, 238450-246200 N) + ~3 km, and the lake.
SOMERS_GRID = Grid(686000.0, 235500.0, 701200.0, 249000.0, 10.0)

#: Approximate municipal layout (longitude/latitude lines, NAD83): see layers/README.md.
SOMERS_WEST_LON = -87.9333  # about I-94 (87 deg 56' W)
KENOSHA_NORTH_LAT = 42.60
KENOSHA_SOUTH_LAT = 42.53
KENOSHA_WEST_LON = -87.95
BRISTOL_NORTH_LAT = 42.58
WEST_LON = -88.06
NORTH_LAT = 42.73


def _lonlat_box(lon0: float, lat0: float, lon1: float, lat1: float) -> shapely.Geometry:
    """A lon/lat rectangle, densified, in the working CRS."""
    rect = shapely.segmentize(box(lon0, lat0, lon1, lat1), 0.002)
    return gpd.GeoSeries([rect], crs="EPSG:4326").to_crs(WORKING_CRS).iloc[0]


def somers_municipalities(
    data: Path,
) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame, shapely.Geometry]:
    """Approximate Somers (boundary) and its neighbours, clipped to Kenosha and Racine counties."""
    counties = gpd.read_file(data / "wi_statewide" / "County_Boundaries_24K.shp").to_crs(
        WORKING_CRS
    )
    kenosha = shapely.make_valid(counties.loc[counties["COUNTY_FIP"] == "59"].geometry.union_all())
    racine = shapely.make_valid(counties.loc[counties["COUNTY_FIP"] == "101"].geometry.union_all())
    east = -87.5  # well out in the lake: the county outline gives the shore
    somers = kenosha.intersection(_lonlat_box(SOMERS_WEST_LON, KENOSHA_NORTH_LAT, east, 43.0))
    city = kenosha.intersection(
        _lonlat_box(KENOSHA_WEST_LON, KENOSHA_SOUTH_LAT, east, KENOSHA_NORTH_LAT)
    )
    prairie = kenosha.intersection(_lonlat_box(KENOSHA_WEST_LON, 42.0, east, KENOSHA_SOUTH_LAT))
    bristol = kenosha.intersection(_lonlat_box(WEST_LON, 42.0, KENOSHA_WEST_LON, BRISTOL_NORTH_LAT))
    paris = kenosha.intersection(
        _lonlat_box(WEST_LON, BRISTOL_NORTH_LAT, SOMERS_WEST_LON, 43.0)
    ).difference(city)
    mount_pleasant = racine.intersection(_lonlat_box(SOMERS_WEST_LON, 42.0, east, NORTH_LAT))
    yorkville = racine.intersection(_lonlat_box(WEST_LON, 42.0, SOMERS_WEST_LON, NORTH_LAT))

    def frame(rows):
        gdf = gpd.GeoDataFrame(
            [{"MCD_NAME": n, "CTV": c, "CNTY_NAME": k, "geometry": g} for n, c, k, g in rows],
            geometry="geometry",
            crs=WORKING_CRS,
        )
        gdf["geometry"] = shapely.make_valid(np.asarray(gdf.geometry.values))
        return with_note(gdf, APPROX_NOTE)

    boundary = frame([("Somers", "V", "Kenosha", somers)])
    neighbors = frame(
        [
            ("Kenosha", "C", "Kenosha", city),
            ("Pleasant Prairie", "V", "Kenosha", prairie),
            ("Bristol", "V", "Kenosha", bristol),
            ("PARIS", "T", "Kenosha", paris),
            ("Mount Pleasant", "V", "Racine", mount_pleasant),
            ("YORKVILLE", "T", "Racine", yorkville),
        ]
    )
    return boundary, neighbors, shapely.union(kenosha, racine)


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


#: Somers' roads: name, MTFCC class, vertices (EPSG:3071 metres).
SOMERS_ROADS = [
    ("State Hwy 31", "S1200", [(692000, 235500), (691900, 249000)]),
    ("County Rd E", "S1200", [(686000, 241500), (698300, 241650)]),
    ("Lakeshore Dr", "S1400", [(697600, 237000), (697900, 241000), (698700, 246000)]),
    ("7 Mile Rd", "S1400", [(686000, 243700), (698900, 243850)]),
    ("Meadow Ln", "S1400", [(694500, 241650), (694600, 245000)]),
    ("Paris Line Rd", "S1400", [(688600, 235500), (688450, 249000)]),
]
#: Lake Michigan's level in the Somers DEM (feet).
SOMERS_LAKE_FT = 579.0


def somers_lake(
    grid: Grid, land: shapely.Geometry
) -> tuple[shapely.Geometry, shapely.Geometry, np.ndarray, np.ndarray]:
    """The grid's box, the open lake in it, the lake's cells and each cell's distance to shore."""
    xs, ys = grid.centres()
    clip = box(grid.xmin, grid.ymin, grid.xmax, grid.ymax)
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

    Returns z, the creek's profile, the distance to and along the creek, and where along
    it the creek meets the lake.
    """
    xs, ys = grid.centres()
    lake_ft = SOMERS_LAKE_FT
    # the creek's profile: 662 ft in the west to the lake at the shore (beyond: lake level)
    crossings = creek.line.intersection(lake.boundary)
    mouth = min(creek.line.project(p) for p in getattr(crossings, "geoms", [crossings]))
    dist, along = line_fields(creek.line, xs, ys)
    creek_prof = np.where(
        along < mouth, 662.0 + (lake_ft + 2.0 - 662.0) * along / mouth, lake_ft + 2.0
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
            creek.line.project(Point(ditch.line.coords[-1])), [0.0, mouth], [662.0, lake_ft + 2.0]
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


def make_somers(data: Path, out: Path) -> None:
    """Write layers/somers/* (approximate boundaries + synthetic layers; DEM in feet)."""
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
    creek = Stream(creek.name, creek.line, 662.0, SOMERS_LAKE_FT + 2.0, 460, 46006)
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

    hydro = flowlines([creek, ditch], "04040002", clip.difference(lake))
    write_gpkg(hydro, out / "hydrography.gpkg", "NHDFlowline")
    wb = waterbodies(
        [
            {"GNIS_NAME": "Lake Michigan", "FType": 390, "geometry": lake},
        ],
        "04040002",
    )
    wb["NOTE"] = SYNTHETIC_NOTE + " (shore taken from the WI DNR county outline)"
    write_gpkg(wb, out / "hydrography.gpkg", "NHDWaterbody", append=True)

    ditch_a = ditch.line.buffer(25.0).intersection(clip).difference(creek.line.buffer(60.0))
    extra = [
        {
            "FLD_ZONE": "A",
            "ZONE_SUBTY": None,
            "SFHA_TF": "T",
            "STATIC_BFE": -9999.0,
            "geometry": ditch_a,
        }
    ]
    flood = flood_layer(grid, np.where(in_lake, 99.0, hand), dist, "55059C", (1.5, 4.0, 6.0), extra)
    write_gpkg(flood, out / "floodplain.gpkg", "S_FLD_HAZ_AR")

    soils = soils_layer(
        "somers",
        grid,
        z * M_PER_FT,
        hand * M_PER_FT,
        in_lake,
        wetlands_raster(wetlands, grid),
        rng,
        "WI059",
    )
    write_gpkg(soils, out / "soils.gpkg", "soilmu_a")

    roads = roads_layer(SOMERS_ROADS, "1105")
    write_gpkg(roads, out / "roads.gpkg", "roads")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    """Build both municipalities' layers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="the shared data folder (default: ../shared/data from the repo root)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO_ROOT / "layers",
        help="where layers/<municipality>/ go (default: the repo's layers/)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    pyogrio.set_gdal_config_options({"OGR_CURRENT_DATE": PINNED_DATE})
    makers = {"deerfield": make_deerfield, "somers": make_somers}
    # every shipped municipality (its ordinance folder) needs a recipe here
    for muni in municipalities():
        if muni not in makers:
            raise SystemExit(f"no layers recipe for municipality {muni!r}: add one to {__file__}")
        makers[muni](args.data, args.out / muni)
    for cache in args.out.glob("*/*.aux.xml"):
        cache.unlink()
    shutil.rmtree(args.out / "__pycache__", ignore_errors=True)


if __name__ == "__main__":
    main()
