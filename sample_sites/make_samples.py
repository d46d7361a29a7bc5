"""Build the sample submissions in ``sample_sites/`` and their README table.

Run after ``layers/make_layers.py``::

    /work/venv/bin/python sample_sites/make_samples.py

Every site is placed from fixed coordinates (EPSG:3071) or relative to a shipped layer (the
synthetic creek, the drumlin), then checked against the layers before it is written: its
jurisdiction is computed here independently of georeview (the village limit buffered by
1.5 miles, 3 miles for a second-class city, over towns only, with the equidistant rule for
overlaps), and sites meant to miss or touch a wetland, flood zone or steep slope are tested for
it. A check that fails stops the script, so the README never states a conclusion the layers do
not support. The README table is written from the same list.
"""

from __future__ import annotations

import argparse
import calendar
import datetime as dt
import logging
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pyogrio
import rasterio
import shapely
from shapely import affinity
from shapely.geometry import Point, Polygon, box

from georeview.config import SITE_MAP_FEATURES
from georeview.ordinances import municipalities

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_sites"
LAYERS = ROOT / "layers"
CRS = "EPSG:3071"
M_PER_MILE = 1609.344  # mirrors georeview.units (this script runs stand-alone)
SQM_PER_ACRE = 4046.8564224
SQFT_PER_SQM = 1.0 / 0.3048**2
ETJ_M = {"village": 1.5 * M_PER_MILE, "city_1_3": 3.0 * M_PER_MILE}
#: Sites keep at least this distance from a jurisdiction line unless meant to straddle it.
LINE_MARGIN_M = 150.0
PINNED_DATE = "2025-01-17T00:00:00Z"
#: Every feature a site map can show (the schema's list, so a sample can never drift from it),
#: except the infiltration areas: no sample infiltrates post-construction runoff (every plan
#: says `uses_infiltration = false`), so a map "showing" them would contradict the plan and
#: make 17.10(B)(4)(i) pass where it does not apply.
ALL_FEATURES = tuple(f for f in SITE_MAP_FEATURES if f != "infiltration_areas")


def rect(cx: float, cy: float, w: float, h: float, angle: float = 0.0) -> Polygon:
    """A ``w`` x ``h`` metre rectangle centred on (cx, cy), rotated ``angle`` degrees."""
    poly = box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
    return affinity.rotate(poly, angle, origin=(cx, cy)) if angle else poly


@dataclass
class Sample:
    """One sample submission and what a reviewer should conclude."""

    name: str
    municipality: str
    title: str
    applicant: str
    description: str
    site: Polygon
    disturbance: Polygon | None
    activity: dict[str, Any]
    site_map: dict[str, Any]
    expect: dict[str, str]
    conclude: str
    fmt: str = "geojson4326"  # geojson4326 | geojson3071 | shp | gpkg
    checks: dict[str, bool] = field(default_factory=dict)
    #: Further submission.toml tables: plan, soil_loss, hydrology (and basins, a list).
    tables: dict[str, Any] = field(default_factory=dict)
    #: The least distance from a jurisdiction line the site must keep (metres).
    line_margin_m: float = LINE_MARGIN_M
    #: What ``georeview review`` must report (checked after writing; see ``verify``):
    #: ``fail`` / ``needs_info``: citations of the compliance findings (kinds limit and
    #: required) with that status; ``soil_loss``: "<=5", ">5" or None; ``peaks``: bool.
    review: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- layers


@dataclass
class Layers:
    """The shipped layers a sample is checked against."""

    village: shapely.Geometry
    neighbors: gpd.GeoDataFrame
    city_class: dict[str, int]
    wetlands: shapely.Geometry
    sfha: shapely.Geometry
    floodway: shapely.Geometry
    streams: gpd.GeoDataFrame
    soils: gpd.GeoDataFrame
    dem: Path
    dem_units: str


def load_layers(muni: str) -> Layers:
    """Read a municipality's shipped layers into the working CRS."""
    d = LAYERS / muni
    village = gpd.read_file(d / "boundary.gpkg").to_crs(CRS).union_all()
    neighbors = gpd.read_file(d / "neighbors.gpkg").to_crs(CRS)
    flood = gpd.read_file(d / "floodplain.gpkg").to_crs(CRS)
    return Layers(
        village=village,
        neighbors=neighbors,
        city_class=city_classes(d / "layers.toml"),
        wetlands=gpd.read_file(d / "wetlands.gpkg").to_crs(CRS).union_all(),
        sfha=flood[flood["SFHA_TF"] == "T"].union_all(),
        floodway=flood[flood["ZONE_SUBTY"] == "FLOODWAY"].union_all(),
        streams=gpd.read_file(d / "hydrography.gpkg", layer="NHDFlowline").to_crs(CRS),
        soils=gpd.read_file(d / "soils.gpkg").to_crs(CRS),
        dem=d / "dem.tif",
        dem_units={"deerfield": "m", "somers": "ft"}[muni],
    )


def city_classes(layers_toml: Path) -> dict[str, int]:
    """The cities' classes as the municipality's layers.toml gives them ([neighbors])."""
    cfg = tomllib.loads(layers_toml.read_text(encoding="utf-8"))
    return {str(k): int(v) for k, v in cfg["neighbors"].get("city_class", {}).items()}


def etj_reach_m(kind: str, name: str, city_class: dict[str, int]) -> float:
    """Extraterritorial reach of a city or village (Wis. Stat. § 66.0105, § 236.02(5))."""
    if kind == "C" and city_class.get(name, 4) <= 3:
        return ETJ_M["city_1_3"]
    return ETJ_M["village"]


def jurisdiction(site: Polygon, lay: Layers) -> tuple[str, float]:
    """Where the site lies and its smallest distance to a jurisdiction line (metres).

    Checked on the site's vertices (densified to 10 m) and its centroid: all must agree.
    """
    pts = [Point(c) for c in shapely.segmentize(site, 10.0).exterior.coords]
    pts.append(site.centroid)
    towns = lay.neighbors[lay.neighbors["CTV"] == "T"].union_all()
    others = lay.neighbors[lay.neighbors["CTV"].isin(["C", "V"])]
    statuses, margins = set(), []
    own_reach = ETJ_M["village"]
    for p in pts:
        d_own = lay.village.distance(p)
        if lay.village.contains(p):
            statuses.add("village")
            margins.append(lay.village.boundary.distance(p))
            continue
        in_town = towns.contains(p)
        margins.append(abs(d_own - own_reach))
        if not in_town or d_own > own_reach:
            statuses.add("outside")
            continue
        status = "extraterritorial"
        for _, row in others.iterrows():
            reach = etj_reach_m(row["CTV"], row["MCD_NAME"], lay.city_class)
            d_other = row.geometry.distance(p)
            if d_other <= reach:
                margins.append(abs(d_other - d_own) / 2.0)
                if d_other < d_own:
                    status = "outside"
        statuses.add(status)
    if len(statuses) != 1:
        raise SystemExit(f"site straddles jurisdictions {statuses}")
    return statuses.pop(), float(min(margins))


def slope_grid(poly: Polygon, lay: Layers) -> tuple[np.ndarray, np.ndarray, float]:
    """DEM slope (percent, Horn's method) around ``poly``, the cells inside it, cell size."""
    to_m = {"m": 1.0, "ft": 0.3048}[lay.dem_units]
    with rasterio.open(lay.dem) as src:
        minx, miny, maxx, maxy = poly.buffer(30.0).bounds
        win = rasterio.windows.from_bounds(minx, miny, maxx, maxy, src.transform).round_offsets()
        win = win.round_lengths()
        z = src.read(1, window=win).astype(float) * to_m
        tr = src.window_transform(win)
        res = src.res[0]
    p = np.pad(z, 1, mode="edge")
    dzdx = (
        (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
    ) / (8 * res)
    dzdy = (
        (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
    ) / (8 * res)
    slope = np.hypot(dzdx, dzdy) * 100.0
    rows, cols = np.indices(z.shape)
    xs, ys = rasterio.transform.xy(tr, rows.ravel(), cols.ravel())
    inside = shapely.contains_xy(poly, np.asarray(xs), np.asarray(ys)).reshape(z.shape)
    return slope, inside, float(res)


def steep_area_sqm(poly: Polygon, lay: Layers, threshold_pct: float = 20.0) -> float:
    """Area of cells with slope >= threshold inside ``poly`` (Horn's method, DEM units)."""
    slope, inside, res = slope_grid(poly, lay)
    return float(((slope >= threshold_pct) & inside).sum() * res * res)


def mean_slope_pct(poly: Polygon, lay: Layers) -> float:
    """Mean DEM slope (percent) of the cells inside ``poly``."""
    slope, inside, _res = slope_grid(poly, lay)
    return float(slope[inside].mean())


def dominant_soil(poly: Polygon, lay: Layers) -> tuple[str, str, str]:
    """MUSYM, map unit name and hydrologic group covering most of ``poly``."""
    parts = lay.soils.assign(a=lay.soils.geometry.intersection(poly).area)
    top = parts.sort_values(["a", "MUSYM"], ascending=[False, True]).iloc[0]
    return str(top["MUSYM"]), str(top["muname"]), str(top["hydgrpdcd"])


def usle_segment(dist: Polygon, lay: Layers) -> dict[str, float]:
    """One declared USLE slope segment: the disturbance's longer side at its DEM mean slope.

    The longer side of the (rectangular) disturbed area is a conservative overland flow
    length; the slope is the mean of the DEM cells inside it, rounded up to 0.1 %.
    """
    rr = dist.minimum_rotated_rectangle.exterior.coords
    sides = [Point(rr[i]).distance(Point(rr[i + 1])) for i in range(2)]
    length_ft = math.ceil(max(sides) * SQFT_PER_SQM**0.5 / 10.0) * 10.0
    slope_pct = math.ceil(mean_slope_pct(dist, lay) * 10.0) / 10.0
    return {"length_ft": length_ft, "slope_pct": slope_pct}


def downstream_stream_m(site: Polygon, lay: Layers) -> float:
    """Straight-line distance from the site to the nearest mapped stream, metres."""
    return float(lay.streams.distance(site).min())


# --------------------------------------------------------------------------- writing


def toml_value(v: Any) -> str:
    """Format one TOML value (the types submissions use; dicts as inline tables)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, dict):
        inner = ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items())
        return "{ " + inner + " }"
    if isinstance(v, (list, tuple)):
        if any(isinstance(x, dict) for x in v):
            return "[\n" + "".join(f"  {toml_value(x)},\n" for x in v) + "]"
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_key(k: str) -> str:
    """A bare key, or a quoted one ("1yr" starts with a digit but is still bare-safe)."""
    return k if k.replace("_", "").replace("-", "").isalnum() else toml_value(k)


#: Sub-tables written as ``[name.sub]`` sections rather than inline.
SUB_TABLES = ("sequence", "bmps")


def write_toml(path: Path, top: dict[str, Any], tables: dict[str, Any]) -> None:
    """Write a TOML file: top-level keys, then one table per entry.

    A table's dict values named in :data:`SUB_TABLES` become ``[table.sub]`` sections,
    other dict values inline tables; a list of dicts becomes an array of tables.
    """
    lines = [f"{k} = {toml_value(v)}" for k, v in top.items() if v is not None]
    for name, table in tables.items():
        if isinstance(table, list):
            for item in table:
                lines += ["", f"[[{name}]]"]
                lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in item.items()]
            continue
        subs = {k: v for k, v in table.items() if k in SUB_TABLES and isinstance(v, dict)}
        lines += ["", f"[{name}]"]
        lines += [
            f"{toml_key(k)} = {toml_value(v)}"
            for k, v in table.items()
            if v is not None and k not in subs
        ]
        for sub, body in subs.items():
            lines += ["", f"[{name}.{sub}]"]
            lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in body.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_geometry(poly: Polygon, folder: Path, stem: str, fmt: str, label: str) -> str:
    """Write one polygon in the sample's format; returns the file name for submission.toml."""
    gdf = gpd.GeoDataFrame({"name": [label]}, geometry=[poly], crs=CRS)
    if fmt == "geojson4326":
        name = f"{stem}.geojson"
        gdf = gdf.to_crs("EPSG:4326")
        opts = {"COORDINATE_PRECISION": 7, "RFC7946": "YES"}
        driver = "GeoJSON"
    elif fmt == "geojson3071":
        name, opts, driver = f"{stem}.geojson", {"COORDINATE_PRECISION": 3}, "GeoJSON"
    elif fmt == "shp":
        name, opts, driver = f"{stem}.shp", {"DBF_DATE_LAST_UPDATE": "2025-01-17"}, "ESRI Shapefile"
    else:
        name, opts, driver = f"{stem}.gpkg", {}, "GPKG"
    pyogrio.write_dataframe(gdf, folder / name, driver=driver, layer=stem, layer_options=opts)
    return name


def write_sample(s: Sample) -> None:
    """Write one sample folder."""
    folder = SAMPLES / s.name
    if folder.exists():
        for f in folder.iterdir():
            f.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    site_file = write_geometry(s.site, folder, "site", s.fmt, s.title)
    dist_file = (
        write_geometry(s.disturbance, folder, "disturbance", s.fmt, "disturbed area")
        if s.disturbance is not None
        else None
    )
    top = {
        "municipality": s.municipality,
        "name": s.title,
        "applicant": s.applicant,
        "description": s.description,
        # Early enough that the planned May 5 start falls after every review deadline
        # (Somers 17.09(A), Deerfield 31.08(1)): 30 days after March 31 is April 30.
        "application_date": dt.date(2025, 3, 31),
        "site": site_file,
        "disturbance": dist_file,
    }
    tables: dict[str, Any] = {"activity": s.activity, "site_map": s.site_map, **s.tables}
    write_toml(folder / "submission.toml", top, tables)


# --------------------------------------------------------------------------- samples


def activity(**kw: Any) -> dict[str, Any]:
    """Every activity fact, stated (0/false unless given), so nothing becomes needs_info."""
    base: dict[str, Any] = {
        "fill_cubic_yards": 0,
        "pipe_length_ft": 0,
        "lots_created": 0,
        "kinds": [],
        "on_platted_lot": False,
        "land_division_acres": 0,
        "max_disturbed_at_once_acres": None,
        "maintains_original_grade": False,
        "part_of_common_plan": False,
        "channel_originates_in_disturbed_area": False,
        "start_date": dt.date(2025, 5, 5),
        "end_date": dt.date(2025, 10, 31),
        "building_permit_days": 0,
        "control_cost_usd": 0,
        "plat_fee_paid": False,
        "building_permit_fee_paid": False,
    }
    base.update(kw)
    return base


def site_map(shows: tuple[str, ...] = ALL_FEATURES, **kw: Any) -> dict[str, Any]:
    """A site map at 1 in = 50 ft, 2-ft contours, with a grid, unless told otherwise."""
    out: dict[str, Any] = {
        "scale_ft_per_inch": 50,
        "contour_interval_ft": 2,
        "grid": True,
        "shows": list(shows),
    }
    out.update(kw)
    return out


#: Somers' R factor is unconfirmed in georeview/data/usle.toml; the samples use Dane County's.
SOMERS_R = {
    "r_factor": 150.0,
    "r_factor_source": "Dane County Erosion Control Manual value (R = 150) used as a regional "
    "proxy; Kenosha County R unconfirmed",
}
#: Design rainfall for the Deerfield larger-site sample. NOT NOAA Atlas 14: see the README.
SAMPLE_RAINFALL_IN = {"1yr": 2.5, "2yr": 2.9, "5yr": 3.6, "10yr": 4.2, "100yr": 6.6}
SAMPLE_RAINFALL_SOURCE = (
    "illustrative applicant-declared depths for the sample, not NOAA Atlas 14; replace with "
    "Atlas 14 PFDS values at the site"
)

#: Declared area of the larger site's sediment basin, sq ft: above the area 31.06(3)(B)
#: requires for its 5-year construction peak (``verify`` checks that the basin passes).
BIG_BASIN_SQFT = 12000.0
#: A Deerfield larger site that declares no [hydrology] or basin: peaks and basin unknown,
#: and whether the Village Engineer requires a basin is the Village's to decide.
LARGER_WITHOUT_HYDROLOGY = [
    "§ 31.06(3)(B)",
    "§ 31.06(3)(B)",
    "§ 31.06(3)(C)1.a",
    "§ 31.06(3)(C)1.b",
    "§ 31.06(3)(C)1.c",
]


def acres(poly: Polygon) -> float:
    """Area in acres, two decimals."""
    return round(poly.area / SQM_PER_ACRE, 2)


def soils_text(dist: Polygon, lay: Layers) -> str:
    """Soils description from the (synthetic) soils layer's dominant map unit."""
    musym, name, hsg = dominant_soil(dist, lay)
    return f"{name} ({musym}, hydrologic group {hsg}; synthetic SSURGO-style layer)"


def somers_plan(
    site: Polygon,
    dist: Polygon,
    lay: Layers,
    *,
    owner: str,
    receiving_water: str,
    work: str,
    receiving_water_distance_ft: float | None = None,
) -> dict[str, Any]:
    """A complete Somers 17.10(B) plan table: every item of (3)(a)-(h), (5)(a)-(l) and (6).

    ``receiving_water_distance_ft`` is the plan's own figure (compared with the trace's).
    """
    dist_ac = acres(dist)
    distance = {} if receiving_water_distance_ft is None else {
        "receiving_water_distance_ft": receiving_water_distance_ft
    }
    return {
        "owner_name": owner,
        "owner_address": "4800 Example Rd, Somers WI",
        "consultant": {
            "firm": "Example Civil Engineering",
            "address": "100 Main St, Kenosha WI",
            "contact": "A. Engineer, P.E.",
        },
        "site_description": work,
        "usgs_topo_map": "Sheet C-0 inset: limits of disturbance on the USGS 7.5-minute map",
        "schedule": "Controls May 1; clearing May 5; rough grading May; utilities and building "
        "June-September; final grading and seeding by October 15",
        "site_area_estimate_acres": acres(site),
        "disturbed_area_estimate_acres": dist_ac,
        "soils_description": soils_text(dist, lay),
        "groundwater_depth_ft": 6.0,
        "receiving_water": receiving_water,
        **distance,
        "velocity_dissipation": "Riprap apron at each outfall (Sheet C-4)",
        "maintenance": "Inspected weekly and within 24 hours of 0.5 in of rain; silt fence "
        "cleaned at 1/3 height",
        "control_calculations": "Sheet C-5: USLE soil loss per phase",
        "uses_infiltration": False,
        "sequence": {
            "stripping_clearing": "May 5-9: strip topsoil to the stockpile (Sheet C-2)",
            "rough_grading": "May 12-30",
            "utilities_infrastructure_buildings": "June 2 - September 30",
            "final_grading_landscaping": "October 1-15",
            "clearing_start_date": dt.date(2025, 5, 5),
            "exposure_days": 163,
            "clearing_area_acres": dist_ac,
            "controls_install_date": dt.date(2025, 5, 1),
            "permanent_vegetation_date": dt.date(2025, 10, 15),
        },
        "bmps": {
            **CONTROL_ITEMS,
            "stabilization": "Seed and mulch within 7 days of inactivity (Sheet C-3)",
            "diversion": "Diversion berm along the upslope edge",
            "overland_flow": "Silt fence on the contour below all graded areas",
            "channel_sediment_trapping": "Stone ditch checks in the swale",
            "staging": "Two grading stages; no more than the stated area open at once",
            "inlet_protection": "Inlet filter bags on the two street inlets downslope",
            "tracking": "Stone tracking pad at the single entrance",
            "offsite_cleanup": "Street swept at the end of each work day",
            "waste_disposal": "Covered dumpster; concrete washout area",
            "drainage_way_stabilization": "Erosion mat in the swale",
            "permanent_stabilization": "Seed and erosion mat within 7 days of final grade",
            "dust": "Water truck on dry, windy days",
            "wash_water": "No vehicle washing on site; wheels scraped on the tracking pad",
            "vegetation_preservation": "Tree line and the grass strip along the swale kept "
            "(Sheet C-2, protection fence)",
            "topsoil_compaction": "Topsoil stripped to the stockpile and respread; traffic "
            "kept to the haul road (Sheet C-2)",
            "spill_response": "Spill kit at the fuel area; spills reported and cleaned up "
            "(Sheet C-6 note 4)",
        },
        "design_standards": DESIGN_STANDARDS,
        "stages": STAGES,
    }


def somers_soil_loss(
    dist: Polygon, lay: Layers, phases: list[dict[str, Any]], mep: str | None = None
) -> dict[str, Any]:
    """A Somers [soil_loss] table: dated phases, the DEM slope segment, the proxy R."""
    out: dict[str, Any] = {"phases": phases, "slope_segments": [usle_segment(dist, lay)]}
    out.update(SOMERS_R)
    if mep:
        out["mep_explanation"] = mep
    return out


#: Monthly shares of annual erosivity the sample applicants declare, January to December.
#: ILLUSTRATIVE for the samples (late-spring and summer heavy, as Wisconsin's is), not a
#: published table: a real plan takes them from the WDNR soil loss tool's EI table.
SAMPLE_EI_MONTHS = (0.01, 0.01, 0.03, 0.06, 0.11, 0.19, 0.20, 0.18, 0.12, 0.06, 0.02, 0.01)
SAMPLE_EI_SOURCE = "Illustrative monthly erosivity shares (sample_sites/README.md), by day"


def r_share(start: dt.date, end: dt.date) -> float:
    """The sample's share of annual erosivity from ``start`` to ``end`` (prorated by day)."""
    days = [start + dt.timedelta(days=i) for i in range((end - start).days)]
    month_days = {m: calendar.monthrange(2025, m)[1] for m in range(1, 13)}
    total = sum(SAMPLE_EI_MONTHS[d.month - 1] / month_days[d.month] for d in days)
    return round(total, 4)


def phase(cover: str, start: tuple[int, int], end: tuple[int, int]) -> dict[str, Any]:
    """A dated 2025 construction phase on a usle.toml cover, with its share of annual R."""
    first, last = dt.date(2025, *start), dt.date(2025, *end)
    return {
        "cover": cover,
        "start": first,
        "end": last,
        "r_fraction": r_share(first, last),
        "r_fraction_source": SAMPLE_EI_SOURCE,
    }


#: Practices every regulated sample shows (Somers 17.07(B)-(D), 17.08(C)(1), (C)(4), (D);
#: Deerfield 31.06(2)(B)-(G), 31.06(3)(A)): where the plan set shows each one.
CONTROL_ITEMS: dict[str, Any] = {
    "tracking": "Stone tracking pad at the single entrance (Sheet C-3)",
    "inlet_protection": "Inlet filter bags on the street inlets downslope (Sheet C-3)",
    "sediment_to_waters": "Silt fence between the graded area and the swale (Sheet C-3)",
    "channel_sediment_trapping": "Stone ditch checks in the swale (Sheet C-3)",
    "dewatering": {"not_applicable": "no dewatering planned"},
    "stockpiles": "Topsoil stockpile ringed with silt fence and seeded (Sheet C-2)",
    "building_materials": "Materials stored covered; concrete washout area (Sheet C-6)",
    "treatment_before_waters": "Every control is upslope of the swale outlet (Sheet C-3)",
    "bmp_removal": "Silt fence and inlet bags removed after final stabilization (Sheet C-6)",
    "tracking_pad": "Graveled entrance pad 50 ft long, 20 ft wide (Sheet C-3)",
    "street_cleaning": "Street swept, not flushed, before the end of each workday (Sheet C-6)",
    "perimeter_barriers": "Silt fence along the side- and downslope edges (Sheet C-3)",
    "channel_barriers": {"not_applicable": "no channel passes through the site"},
    "waste_disposal": "Covered dumpster; concrete washout area (Sheet C-6)",
    # 31.06(2)(D) "if practical, as determined by the Village Engineer": a not_applicable
    # would be a request for the Village; the plan describes what it does instead
    "diversion": "No channelized runoff from adjacent areas passes through the site; the "
    "upslope edge is bermed (Sheet C-3)",
    "staging": "One area graded at a time; seeded before the next opens (Sheet C-2)",
    "stabilization": "Seed and mulch within 7 days of inactivity (Sheet C-3)",
    "permanent_stabilization": "Seed and erosion mat within 7 days of final grade",
}
DESIGN_STANDARDS = (
    "WDNR Technical Standards 1057 (tracking pad), 1056 (silt fence), 1060 (inlet protection), "
    "1059 (seeding); Wisconsin Construction Site Best Management Practice Handbook"
)
#: Dated stages of land disturbance, one after another (no pause of more than 14 days).
STAGES = [
    {"name": "Clearing and rough grading", "start_date": dt.date(2025, 5, 5),
     "end_date": dt.date(2025, 5, 30)},
    {"name": "Utilities and building", "start_date": dt.date(2025, 6, 2),
     "end_date": dt.date(2025, 9, 30)},
    {"name": "Final grading and landscaping", "start_date": dt.date(2025, 10, 1),
     "end_date": dt.date(2025, 10, 15)},
]
#: Temporary controls installed before land disturbance starts (activity start_date May 5).
CONTROLS_INSTALLED = {"controls_install_date": dt.date(2025, 5, 1)}


def deerfield_major_plan(calcs: str) -> dict[str, Any]:
    """Deerfield 31.09(1)(C)3-4 and (D), and the 31.06(2)-(3) practices shown on the plan."""
    return {
        "bmps": dict(CONTROL_ITEMS),
        "design_standards": DESIGN_STANDARDS,
        "schedule": "Controls installed May 1 before any grading; clearing May 5; grading "
        "May-June; building June-September; final grading and seeding by October 15",
        "maintenance": "Inspected weekly and within 24 hours of 0.5 in of rain; sediment "
        "removed at 1/3 height; controls kept until the site is stabilized",
        "control_calculations": calcs,
        # the dated install the schedule states (31.12(2)(B): two working days before May 5)
        "sequence": dict(CONTROLS_INSTALLED),
    }


def statement_plan() -> dict[str, Any]:
    """A minor-site plan statement (Somers 17.10(A), Deerfield 31.09(2))."""
    return {
        "schedule": "Silt fence May 1; excavation May 5; building May-August; seed and mulch "
        "by September 1",
        "bmp_summary": "Silt fence downslope, stone tracking pad, seed and mulch within 7 days",
        "bmps": dict(CONTROL_ITEMS),
        "design_standards": DESIGN_STANDARDS,
        "maintenance": "Inspected weekly and after 0.5 in of rain; kept until the lot is "
        "stabilized",
        "sequence": dict(CONTROLS_INSTALLED),
        "stages": [{"name": "Excavation and building", "start_date": dt.date(2025, 5, 5),
                    "end_date": dt.date(2025, 8, 31)}],
    }


def along_stream(
    lay: Layers, name: str, near: tuple[float, float], u: float, v: float, w: float, h: float
) -> Polygon:
    """A rectangle aligned with a stream: centre ``u`` m along and ``v`` m left of ``near``."""
    line = lay.streams.loc[lay.streams["GNIS_NAME"] == name].geometry.union_all()
    line = shapely.line_merge(line)
    s0 = line.project(Point(near))
    a, b = line.interpolate(s0 - 15.0), line.interpolate(s0 + 15.0)
    ang = math.atan2(b.y - a.y, b.x - a.x)
    tx, ty = math.cos(ang), math.sin(ang)
    nx, ny = -ty, tx  # left of the flow direction
    p = line.interpolate(s0)
    cx, cy = p.x + u * tx + v * nx, p.y + u * ty + v * ny
    return rect(cx, cy, w, h, math.degrees(ang))


def deerfield_samples(lay: Layers) -> list[Sample]:
    """The Deerfield samples (village limit: real; other layers: synthetic)."""
    drumlin = (595880.0, 287520.0, 20.0)  # centre and long-axis angle in layers/make_layers.py
    dx, dy = -math.sin(math.radians(drumlin[2])), math.cos(math.radians(drumlin[2]))

    def flank(v: float, w: float, h: float) -> Polygon:
        return rect(drumlin[0] + v * dx, drumlin[1] + v * dy, w, h, drumlin[2])

    big_site, big_dist = rect(595200, 286600, 200, 180), rect(595200, 286600, 180, 157.4)
    big_slope = usle_segment(big_dist, lay)["slope_pct"]
    graded = round(big_dist.area / big_site.area, 3)
    # TR-55 inputs of the larger site: covers on the soils layer's groups, flow paths at the
    # DEM mean slope of the disturbed area, and illustrative rainfall (not Atlas 14).
    big_hydrology = {
        # the plan describes detention: its peak leaving the site is the routed outflow
        "detention": "wet detention basin (the project description)",
        "existing": [{"cover": "row_crops_straight_good", "hsg": "from_soils", "fraction": 1.0}],
        "proposed": [
            {"cover": "impervious", "hsg": "from_soils", "fraction": 0.55},
            {"cover": "open_space_good", "hsg": "from_soils", "fraction": 0.45},
        ],
        "construction": [
            {"cover": "newly_graded", "hsg": "from_soils", "fraction": graded},
            {
                "cover": "row_crops_straight_good",
                "hsg": "from_soils",
                "fraction": round(1.0 - graded, 3),
            },
        ],
        "flow_path_pre": [
            {
                "kind": "sheet",
                "length_ft": 100.0,
                "slope_pct": big_slope,
                "surface": "cultivated_high_residue",
            },
            {"kind": "shallow", "length_ft": 550.0, "slope_pct": big_slope, "surface": "unpaved"},
        ],
        "flow_path_post": [
            {"kind": "sheet", "length_ft": 50.0, "slope_pct": big_slope, "surface": "grass_short"},
            {"kind": "shallow", "length_ft": 600.0, "slope_pct": big_slope, "surface": "paved"},
        ],
        # while graded: bare ground along the pre-development route, before pavement
        "flow_path_construction": [
            {"kind": "sheet", "length_ft": 100.0, "slope_pct": big_slope, "surface": "fallow"},
            {"kind": "shallow", "length_ft": 550.0, "slope_pct": big_slope, "surface": "unpaved"},
        ],
        # the whole site (387,501 sq ft = 8.90 acres) drains to SB-1; no run-on
        "drainage_area_acres": 8.9,
        "rainfall_in": SAMPLE_RAINFALL_IN,
        "rainfall_source": SAMPLE_RAINFALL_SOURCE,
    }

    return [
        Sample(
            "deerfield_minor_home",
            "deerfield",
            "Single-family home, 112 Main St",
            "Example Homes LLC",
            "One house with driveway on an unplatted lot.",
            rect(595450, 287100, 45, 60),
            rect(595450, 287092, 32, 38),
            activity(
                kinds=["building"],
                fill_cubic_yards=120,
                max_disturbed_at_once_acres=0.3,
                control_cost_usd=2400,
                building_permit_days=365,
            ),
            site_map(),
            {
                "jurisdiction": "village",
                "regulated": "yes",
                "category": "minor",
                "larger_site": "no",
            },
            "Regulated: 0.30 acre disturbed is over 4,000 sq ft (31.06(1)(C)) and under one acre, "
            "so minor (31.02(17)); minor-site statement 31.09(2).",
            fmt="geojson4326",
            tables={"plan": statement_plan()},
            review={"fail": [], "needs_info": []},
        ),
        Sample(
            "deerfield_major_commercial",
            "deerfield",
            "Feed store and parking",
            "Deerfield Co-op",
            "Commercial building, parking lot and storm sewer.",
            rect(596200, 287400, 120, 110),
            rect(596200, 287400, 100, 101.17),
            activity(
                kinds=["building", "utility"],
                fill_cubic_yards=1800,
                pipe_length_ft=260,
                max_disturbed_at_once_acres=2.5,
                control_cost_usd=18000,
                building_permit_days=365,
            ),
            site_map(),
            {
                "jurisdiction": "village",
                "regulated": "yes",
                "category": "major",
                "larger_site": "no",
            },
            "Regulated (31.06(1)(C), (D): 2.5 acres and 1,800 cu yd); major because one acre or "
            "more is disturbed (31.02(16)); under 5 acres, so not a larger site (31.06(3)).",
            fmt="shp",
            tables={"plan": deerfield_major_plan("Sheet C-4: silt fence and inlet protection")},
            review={"fail": [], "needs_info": []},
        ),
        Sample(
            "deerfield_larger_site",
            "deerfield",
            "Warehouse and truck yard",
            "Example Logistics Inc.",
            "A warehouse, truck yard and a wet detention basin.",
            big_site,
            big_dist,
            activity(
                kinds=["building", "grading", "utility"],
                fill_cubic_yards=9500,
                pipe_length_ft=900,
                max_disturbed_at_once_acres=7.0,
                control_cost_usd=64000,
                building_permit_days=365,
            ),
            site_map(),
            {
                "jurisdiction": "village",
                "regulated": "yes",
                "category": "major",
                "larger_site": "yes",
            },
            "Regulated and major (31.06(1)(C), 31.02(16)); 7.0 acres disturbed at a time is 5 or "
            "more, so the larger-site standards of 31.06(3) apply. The plan describes a wet "
            "detention basin but declares no routed outflow, so the peak leaving the site is "
            "unknown and 31.06(3)(C)1.a-c need information (TR-55's unrouted peaks, from "
            "illustrative rainfall, not Atlas 14, rise after development); the declared 12,000 "
            "sq ft, 3.5-ft-deep fenced sediment basin meets the area required for the 5-year "
            "construction peak (31.06(3)(B)).",
            fmt="gpkg",
            tables={
                "plan": deerfield_major_plan("Sheet C-5: TR-55 peaks and sediment basin sizing"),
                "hydrology": big_hydrology,
                "basins": [
                    {
                        "id": "SB-1",
                        "kind": "sediment",
                        "area_sqft": BIG_BASIN_SQFT,
                        "depth_ft": 3.5,
                        "fence_height_ft": 4.0,
                    }
                ],
            },
            review={
                "fail": [],
                "needs_info": ["§ 31.06(3)(C)1.a", "§ 31.06(3)(C)1.b", "§ 31.06(3)(C)1.c"],
                "peaks": True,
            },
        ),
        Sample(
            "deerfield_etj_subdivision",
            "deerfield",
            "Prairie View subdivision (8 lots)",
            "Example Land Co.",
            "An 8-lot residential subdivision plat with a new town road.",
            rect(595600, 289850, 300, 250),
            rect(595600, 289850, 250, 160),
            activity(
                kinds=["subdivision", "road", "utility"],
                lots_created=8,
                land_division_acres=18.5,
                fill_cubic_yards=6000,
                pipe_length_ft=1400,
                # at most the 9.88 acres disturbed in all (250 m x 160 m)
                max_disturbed_at_once_acres=9.8,
                control_cost_usd=52000,
            ),
            site_map(),
            {
                "jurisdiction": "extraterritorial",
                "regulated": "yes",
                "category": "major",
                "larger_site": "yes",
            },
            "In Deerfield's extraterritorial area (Town of Deerfield, about 1 mile north); a "
            "subdivision, so regulated there (31.03(2)); major (31.02(16): subdivision, 9.88 "
            "acres); larger site (31.06(3): 8 lots, 18.5 acres); no [hydrology] or basin is "
            "declared, so the peaks (31.06(3)(C)1) and basin area (31.06(3)(B)) need "
            "information.",
            fmt="geojson4326",
            tables={"plan": deerfield_major_plan("Sheet C-4: silt fence and inlet protection")},
            review={"fail": [], "needs_info": LARGER_WITHOUT_HYDROLOGY},
        ),
        Sample(
            "deerfield_etj_shed",
            "deerfield",
            "Machine shed",
            "Example Farms",
            "A pole building on an existing farmstead, no land division.",
            rect(592450, 286900, 80, 70),
            rect(592450, 286900, 45, 40),
            activity(
                kinds=["building"],
                fill_cubic_yards=80,
                max_disturbed_at_once_acres=0.44,
                control_cost_usd=1500,
                building_permit_days=365,
            ),
            site_map(),
            {
                "jurisdiction": "extraterritorial",
                "regulated": "no",
                "category": "-",
                "larger_site": "no",
            },
            "In Deerfield's extraterritorial area (about 0.7 mile west) but not connected with a "
            "subdivision, so the ordinance does not apply there (31.03(2)).",
            fmt="geojson3071",
        ),
        Sample(
            "deerfield_outside",
            "deerfield",
            "Farm house north of the village",
            "Example Family",
            "A house about 2 miles north of the village.",
            rect(595600, 291700, 70, 70),
            rect(595600, 291700, 40, 40),
            activity(
                kinds=["building"],
                fill_cubic_yards=150,
                max_disturbed_at_once_acres=0.4,
                control_cost_usd=2000,
                building_permit_days=365,
            ),
            site_map(),
            {"jurisdiction": "outside", "regulated": "no", "category": "-", "larger_site": "no"},
            "More than 1.5 miles from the village limits: outside Deerfield's extraterritorial "
            "area, so chapter 31 does not apply (31.03(1)-(2)).",
        ),
        Sample(
            "deerfield_cambridge_side",
            "deerfield",
            "Subdivision near Cambridge",
            "Example Land Co.",
            "A 6-lot subdivision between Deerfield and Cambridge.",
            rect(597400, 283300, 140, 120),
            rect(597400, 283300, 110, 90),
            activity(
                kinds=["subdivision", "road"],
                lots_created=6,
                land_division_acres=4.2,
                fill_cubic_yards=2500,
                pipe_length_ft=600,
                max_disturbed_at_once_acres=2.45,
                control_cost_usd=30000,
            ),
            site_map(),
            {"jurisdiction": "outside", "regulated": "no", "category": "-", "larger_site": "no"},
            "Within 1.5 miles of both Deerfield and Cambridge (1.73 miles apart) but nearer "
            "Cambridge: across the equidistant line (Wis. Stat. § 66.0105), so outside "
            "Deerfield's jurisdiction (31.03(2)).",
        ),
        Sample(
            "deerfield_etj_deerfield_side",
            "deerfield",
            "Subdivision east of the village",
            "Example Land Co.",
            "A 6-lot subdivision between Deerfield and Cambridge.",
            rect(597550, 285450, 140, 120),
            rect(597550, 285450, 110, 90),
            activity(
                kinds=["subdivision", "road"],
                lots_created=6,
                land_division_acres=4.2,
                fill_cubic_yards=2500,
                pipe_length_ft=600,
                max_disturbed_at_once_acres=2.45,
                control_cost_usd=30000,
            ),
            site_map(),
            {
                "jurisdiction": "extraterritorial",
                "regulated": "yes",
                "category": "major",
                "larger_site": "yes",
            },
            "In the overlap of the Deerfield and Cambridge areas but nearer Deerfield: "
            "Deerfield's extraterritorial area (§ 66.0105); a subdivision, so regulated "
            "(31.03(2)) and major (31.02(16)); 6 lots make it a larger site (31.06(3)); no "
            "[hydrology] or basin is declared, so the peaks (31.06(3)(C)1) and basin area "
            "(31.06(3)(B)) need information.",
            fmt="gpkg",
            tables={"plan": deerfield_major_plan("Sheet C-4: silt fence and inlet protection")},
            review={"fail": [], "needs_info": LARGER_WITHOUT_HYDROLOGY},
        ),
        Sample(
            "deerfield_farm",
            "deerfield",
            "Field tiling and tillage",
            "Example Farms",
            "Cropland tillage and contour strips on farmland in the village.",
            rect(595550, 286900, 150, 120),
            rect(595550, 286900, 140, 110),
            activity(kinds=["agricultural"], max_disturbed_at_once_acres=3.8),
            site_map(),
            {"jurisdiction": "village", "regulated": "no", "category": "-", "larger_site": "no"},
            "Agricultural land use is excluded from chapter 31 (31.03(3)(B)) although 3.8 acres "
            "are disturbed.",
        ),
        Sample(
            "deerfield_wetland_floodplain",
            "deerfield",
            "Creekside apartments",
            "Example Builders",
            "Apartment building and parking next to Synthetic Creek.",
            along_stream(lay, "Synthetic Creek", (594950.0, 286080.0), -150.0, 80.0, 110.0, 120.0),
            along_stream(lay, "Synthetic Creek", (594950.0, 286080.0), -150.0, 70.0, 90.0, 90.0),
            activity(
                kinds=["building", "utility"],
                fill_cubic_yards=900,
                pipe_length_ft=320,
                max_disturbed_at_once_acres=2.0,
                control_cost_usd=16000,
                building_permit_days=365,
            ),
            site_map(tuple(f for f in ALL_FEATURES if f != "wetlands")),
            {
                "jurisdiction": "village",
                "regulated": "yes",
                "category": "major",
                "larger_site": "no",
            },
            "Regulated and major (31.06(1)(C), 31.02(16)); the disturbance reaches the wetland and "
            "the 1 % floodplain of Synthetic Creek, an extraordinary site (31.06(4)); the site "
            "map does not show the wetland, so 31.09(1)(A)2 fails.",
            tables={"plan": deerfield_major_plan("Sheet C-4: silt fence and inlet protection")},
            review={"fail": ["§ 31.09(1)(A)2"], "needs_info": []},
        ),
        Sample(
            "deerfield_steep",
            "deerfield",
            "House on the drumlin",
            "Example Homes LLC",
            "A walk-out house cut into the south flank of a drumlin.",
            flank(-45.0, 170.0, 110.0),
            flank(-32.0, 120.0, 60.0),
            activity(
                kinds=["building", "grading"],
                fill_cubic_yards=700,
                max_disturbed_at_once_acres=1.78,
                control_cost_usd=9000,
                building_permit_days=365,
            ),
            site_map(),
            {
                "jurisdiction": "village",
                "regulated": "yes",
                "category": "major",
                "larger_site": "no",
            },
            "Regulated and major (31.06(1)(C), (D); 31.02(16)); the disturbance covers slopes "
            "over 20 % on the drumlin flank, an extraordinary site (31.06(4)).",
            fmt="shp",
            tables={"plan": deerfield_major_plan("Sheet C-4: silt fence and slope breakers")},
            review={"fail": [], "needs_info": []},
        ),
        Sample(
            "deerfield_small_patio",
            "deerfield",
            "Backyard patio",
            "Example Homeowner",
            "A 3,000 sq ft patio and garden on an unplatted lot.",
            rect(595150, 287050, 40, 50),
            rect(595150, 287050, 16.0, 17.4192),
            activity(kinds=[], max_disturbed_at_once_acres=0.07),
            site_map(),
            {"jurisdiction": "village", "regulated": "no", "category": "-", "larger_site": "no"},
            "3,000 sq ft disturbed is under 4,000 sq ft (31.06(1)(C)); no fill, pipe, road, "
            "watercourse, land division or platted lot (31.06(1)(A)-(G)): not regulated.",
        ),
    ]


def somers_samples(lay: Layers) -> list[Sample]:
    """The Somers samples (real TIGER 2019 limits, synthetic layers)."""
    # Town land south of the creek between the village and the City of Kenosha, turned
    # 28 degrees to lie along the village limit; the pocket is a few hundred metres
    # across and the equidistant line with Kenosha halves it, hence its smaller margin.
    etj_site = rect(689130, 239490, 90, 90, 28.0)
    etj_dist = rect(689130, 239490, 78, 78, 28.0)
    cp_site, cp_dist = rect(692550, 240800, 130, 110), rect(692550, 240800, 100, 55)
    bad_site, bad_dist = rect(696000, 244000, 130, 120), rect(696000, 244000, 110, 100)
    # Complete plan: one month bare, mulched a month, then seeded (usle.toml covers).
    cp_phases = [
        phase("bare", (5, 5), (6, 2)),
        phase("mulch_hay_1_5_tpa", (6, 2), (7, 1)),
        phase("temporary_seeding_annual", (7, 1), (10, 15)),
        phase("permanent_seeding", (10, 15), (10, 31)),
    ]
    return [
        Sample(
            "somers_etj_near_kenosha",
            "somers",
            "Contractor yard west of the village",
            "Example Excavating",
            "A contractor's yard and building on town land between the village and Kenosha.",
            etj_site,
            etj_dist,
            activity(
                kinds=["building", "grading"],
                fill_cubic_yards=1500,
                max_disturbed_at_once_acres=1.5,
                control_cost_usd=12000,
                building_permit_days=365,
            ),
            site_map(),
            {
                "jurisdiction": "extraterritorial",
                "regulated": "yes",
                "category": "major",
                "larger_site": "no",
            },
            "On town land (unincorporated) just outside the Somers limit and within 3 miles "
            "of Kenosha, on Somers' side of the equidistant line: Somers' extraterritorial "
            "area, where chapter 17 applies to all land (17.04(B)); 1.5 acres, so 17.08 and "
            "a full plan (17.10(B)). "
            "The downstream trace first meets a mapped wetland (WWI30S00003) about 890 ft away, "
            "within 1/4 mile, and the map shows the discharge (17.10(B)(4)(h) passes). Soil "
            "loss is over 5 t/ac/yr because the yard stays bare May-September, so "
            "17.08(C)(2)(a) is met only \u201cto the maximum extent practicable\u201d: the "
            "written explanation is given for the Administrator to judge (17.08(C)(2)(c), "
            "17.055), so both wait on the Village (needs_info), not fail.",
            line_margin_m=30.0,
            tables={
                "plan": somers_plan(
                    etj_site,
                    etj_dist,
                    lay,
                    owner="Example Excavating",
                    receiving_water="Wetland WWI30S00003 (synthetic wetland layer), about 870 ft "
                    "downslope",
                    receiving_water_distance_ft=870.0,
                    work="2.0-acre parcel on town land south of the village; contractor "
                    "building and yard",
                ),
                # The yard stays graded bare through the season; gravel only in October.
                "soil_loss": somers_soil_loss(
                    etj_dist,
                    lay,
                    [phase("bare", (5, 5), (10, 1)), phase("gravel", (10, 1), (10, 31))],
                    mep="The equipment yard is regraded and compacted all season and can be "
                    "surfaced with gravel only after the building is closed in (October); silt "
                    "fence on the east and north edges, a stone tracking pad and a sediment trap "
                    "at the northeast corner reduce the load to the maximum extent practicable.",
                ),
            },
            review={
                "fail": [],
                # whether the explanation satisfies the Administrator: the Village's (17.055),
                # and with it whether (C)(2)(a)'s "or to the maximum extent practicable" holds
                "needs_info": ["§ 17.055", "§ 17.08(C)(2)(a)"],
                "soil_loss": ">5",
                "receiving": "wetland WWI30S00003",
            },
        ),
        Sample(
            "somers_village_small",
            "somers",
            "House addition",
            "Example Homeowner",
            "A garage and addition on an existing lot.",
            rect(695000, 244800, 50, 60),
            rect(695000, 244800, 30, 34),
            activity(
                kinds=["building"],
                fill_cubic_yards=60,
                max_disturbed_at_once_acres=0.25,
                control_cost_usd=1500,
                building_permit_days=180,
            ),
            site_map(),
            {
                "jurisdiction": "village",
                "regulated": "yes",
                "category": "minor",
                "larger_site": "no",
            },
            "Inside the Somers limits (17.04(A), (B)); 0.25 acre is under one acre: "
            "performance standards 17.07 and an erosion control plan statement (17.10(A)).",
            fmt="gpkg",
            tables={"plan": statement_plan()},
            review={"fail": [], "needs_info": []},
        ),
        Sample(
            "somers_complete_plan",
            "somers",
            "Medical office by the creek",
            "Example Health",
            "Office building, parking and a wet pond near the ditch.",
            cp_site,
            cp_dist,
            activity(
                kinds=["building", "utility"],
                fill_cubic_yards=2200,
                pipe_length_ft=450,
                max_disturbed_at_once_acres=1.36,
                control_cost_usd=21000,
                building_permit_days=365,
            ),
            site_map(scale_ft_per_inch=50, contour_interval_ft=2, grid=True),
            {
                "jurisdiction": "village",
                "regulated": "yes",
                "category": "major",
                "larger_site": "no",
            },
            "Regulated, one acre or more: 17.08 and a full plan (17.10(B)); the site map at "
            "1 in = 50 ft with 2-ft contours and a grid shows every feature, so the site-map "
            "findings 17.10(B)(4)(a)-(h) and (j) pass ((i) does not apply: the plan infiltrates "
            "no runoff); every plan item of 17.10(B)(3), (5) and (6) is "
            "given, so are the practices of 17.08(C)(1), (3), (4) and the design standards "
            "(17.06); the controls go in before clearing and no stage pause exceeds 14 days "
            "(17.08(D)(1), (4)); the May 5 start follows the Administrator's April 21 decision "
            "deadline (17.09(A), (C)(1)); the USLE soil loss is under 5 t/ac/yr "
            "(17.08(C)(2)(a), 17.10(B)(3)(e)): no compliance finding fails or needs information.",
            fmt="shp",
            tables={
                "plan": somers_plan(
                    cp_site,
                    cp_dist,
                    lay,
                    owner="Example Health",
                    receiving_water="Wetland WWI30S00002 (synthetic wetland layer), about "
                    "950 ft downslope",
                    receiving_water_distance_ft=950.0,
                    work="3.5-acre lot; medical office building, parking and a wet pond",
                ),
                "soil_loss": somers_soil_loss(cp_dist, lay, cp_phases),
            },
            review={"fail": [], "needs_info": [], "soil_loss": "<=5"},
        ),
        Sample(
            "somers_bad_map",
            "somers",
            "Retail building",
            "Example Retail",
            "A retail building and parking lot.",
            bad_site,
            bad_dist,
            activity(
                kinds=["building"],
                fill_cubic_yards=2600,
                max_disturbed_at_once_acres=2.72,
                control_cost_usd=20000,
                building_permit_days=365,
            ),
            site_map(scale_ft_per_inch=200, contour_interval_ft=10, grid=False),
            {
                "jurisdiction": "village",
                "regulated": "yes",
                "category": "major",
                "larger_site": "no",
            },
            "Regulated, full plan (17.08, 17.10(B)); the site map fails 17.10(B)(4): 1 in = "
            "200 ft is coarser than 100 ft per inch, 10-ft contours exceed 5 ft, and no grid "
            "((4)(j)); the plan and soil loss (under 5 t/ac/yr) pass, so these are its only "
            "failures.",
            tables={
                "plan": somers_plan(
                    bad_site,
                    bad_dist,
                    lay,
                    owner="Example Retail",
                    receiving_water="Storm sewer on the adjoining street (no mapped water within "
                    "1/4 mile downstream)",
                    work="3.9-acre lot; retail building and parking",
                ),
                "soil_loss": somers_soil_loss(bad_dist, lay, cp_phases),
            },
            review={
                "fail": ["§ 17.10(B)(4)", "§ 17.10(B)(4)", "§ 17.10(B)(4)(j)"],
                "needs_info": [],
                "soil_loss": "<=5",
            },
        ),
        Sample(
            "somers_agricultural",
            "somers",
            "Drain tile and tillage",
            "Example Farms",
            "Field tillage and drain tile on cropland.",
            rect(690600, 245000, 200, 150),
            rect(690600, 245000, 180, 130),
            activity(kinds=["agricultural"], max_disturbed_at_once_acres=5.78),
            site_map(),
            {"jurisdiction": "village", "regulated": "no", "category": "-", "larger_site": "no"},
            "Nonpoint discharges from agricultural facilities and practices are exempt "
            "(17.04(A)(2)(c)).",
            fmt="geojson3071",
            review={"fail": [], "needs_info": []},
        ),
        Sample(
            "somers_state_agency",
            "somers",
            "State highway shop yard",
            "Wisconsin Department of Transportation",
            "A salt shed conducted by a state agency.",
            rect(692300, 243000, 120, 100),
            rect(692300, 243000, 90, 70),
            activity(
                kinds=["state_agency", "building"],
                fill_cubic_yards=800,
                max_disturbed_at_once_acres=1.56,
                control_cost_usd=9000,
            ),
            site_map(),
            {"jurisdiction": "village", "regulated": "no", "category": "-", "larger_site": "no"},
            "An activity conducted by a state agency: chapter 17 does not apply (17.04(C)).",
            review={"fail": [], "needs_info": []},
        ),
    ]


# --------------------------------------------------------------------------- checks


def check(s: Sample, lay: Layers) -> dict[str, Any]:
    """Measure a sample against the layers and stop if it does not say what it should."""
    status, margin = jurisdiction(s.site, lay)
    dist = s.disturbance if s.disturbance is not None else s.site
    if not s.site.contains(dist):
        raise SystemExit(f"{s.name}: disturbance not inside the site")
    facts = {
        "jurisdiction": status,
        "line_margin_m": round(margin, 1),
        "disturbed_sqft": round(dist.area * SQFT_PER_SQM),
        "disturbed_acres": round(dist.area / SQM_PER_ACRE, 3),
        "wetland_sqft": round(dist.intersection(lay.wetlands).area * SQFT_PER_SQM),
        "sfha_sqft": round(dist.intersection(lay.sfha).area * SQFT_PER_SQM),
        "site_touches_wetland": bool(s.site.intersects(lay.wetlands)),
        "steep_sqft": round(steep_area_sqm(dist, lay) * SQFT_PER_SQM),
        "stream_m": round(downstream_stream_m(s.site, lay)),
    }
    errors = []
    if status != s.expect["jurisdiction"]:
        errors.append(f"jurisdiction {status} != {s.expect['jurisdiction']}")
    if margin < s.line_margin_m:
        errors.append(f"only {margin:.0f} m from a jurisdiction line")
    extraordinary = s.name in {"deerfield_wetland_floodplain", "deerfield_steep"}
    if s.name == "deerfield_wetland_floodplain" and not (
        facts["wetland_sqft"] > 0 and facts["sfha_sqft"] > 0
    ):
        errors.append("disturbance must overlap the wetland and the 1 % floodplain")
    if s.name == "deerfield_steep" and facts["steep_sqft"] < 1000:
        errors.append("disturbance must cover slopes of 20 % or more")
    if (
        not extraordinary
        and s.municipality == "deerfield"
        and status == "village"
        and (facts["wetland_sqft"] or facts["sfha_sqft"] or facts["steep_sqft"])
    ):
        errors.append("ordinary site touches a wetland, flood zone or steep slope")
    if s.name == "somers_etj_near_kenosha" and not 30 < facts["stream_m"] < 300:
        errors.append("creek must be within 1/4 mile downstream")
    if errors:
        raise SystemExit(f"{s.name}: " + "; ".join(errors) + f" ({facts})")
    return facts


COMPLIANCE_KINDS = ("limit", "required")


def verify(s: Sample) -> dict[str, Any]:
    """Review the written sample with georeview and stop if it does not report what it should.

    Checks regulated / category / larger site against the README columns, the citations of
    the failing and needs_info compliance findings (kinds limit and required) against
    ``s.review``, and whether soil loss and peaks were computed. Returns a digest for the
    README's findings section.
    """
    from georeview.pipeline.review import review

    rep = review(SAMPLES / s.name).to_dict()
    cls = rep["classification"]
    got = {
        "regulated": "yes" if cls["regulated"] else "no",
        "category": cls["category"] or "-",
        "larger_site": "yes" if cls["larger_site"] else "no",
    }
    errors = [f"{k} {v} != {s.expect[k]}" for k, v in got.items() if v != s.expect[k]]
    findings = [f for f in rep["findings"] if f["status"] in ("fail", "needs_info")]
    for status in ("fail", "needs_info"):
        cites = sorted(
            f["citation"]
            for f in findings
            if f["status"] == status and f["kind"] in COMPLIANCE_KINDS
        )
        if cites != sorted(s.review.get(status, [])):
            errors.append(f"{status}: review gives {cites}, expected {s.review.get(status, [])}")
    m = rep["measures"]
    loss = m.get("soil_loss_tons_per_acre_year")
    want_loss = s.review.get("soil_loss")
    if want_loss is None and loss is not None:
        errors.append(f"soil loss {loss} computed, none expected")
    if want_loss == "<=5" and not (loss is not None and loss <= 5.0):
        errors.append(f"soil loss {loss} is not <= 5 t/ac/yr")
    if want_loss == ">5" and not (loss is not None and loss > 5.0):
        errors.append(f"soil loss {loss} is not > 5 t/ac/yr")
    peaks = m.get("peak_flow_cfs") or {}
    have_peaks = bool(peaks) and all(
        (peaks.get(st) or {}).get(c) is not None
        for st in ("1yr", "2yr", "10yr", "100yr")
        for c in ("pre", "post")
    )
    if have_peaks != bool(s.review.get("peaks")):
        errors.append(f"peaks computed: {have_peaks}, expected {bool(s.review.get('peaks'))}")
    down = m.get("downstream") or {}
    if "receiving" in s.review and not (
        down.get("receiving_feature") == s.review["receiving"]
        and down.get("reaches_water_within_quarter_mile") is True
    ):
        errors.append(f"downstream trace meets {down.get('receiving_feature')}")
    eng = rep.get("engineering") or {}
    basin = eng.get("sediment_basin") or {}
    if s.tables.get("basins") and basin.get("ok") is not True:
        errors.append(f"declared sediment basin does not pass: {basin}")
    if errors:
        raise SystemExit(f"{s.name}: " + "; ".join(errors))
    return {
        "findings": [(f["status"], f["kind"], f["citation"], f["message"]) for f in findings],
        "soil_loss": loss,
        "peaks": peaks if have_peaks else None,
        "basin": basin if s.tables.get("basins") else None,
        "downstream": m.get("downstream") or {},
    }


def fmt_peaks(peaks: dict[str, dict[str, float]] | None) -> str:
    """``1yr 7.4 -> 11.2; ...`` (pre -> post, cfs)."""
    if not peaks:
        return "-"
    return "; ".join(
        f"{st} {peaks[st]['pre']:.1f} -> {peaks[st]['post']:.1f}"
        for st in ("1yr", "2yr", "10yr", "100yr")
    )


def findings_section(samples: list[Sample], digests: dict[str, dict[str, Any]]) -> list[str]:
    """The README section written from the review output: counts, figures, citations."""
    out = [
        "",
        "## What `georeview review` reports",
        "",
        "Written by `make_samples.py` from `georeview.pipeline.review.review()` on each sample "
        "after it "
        "is written; the script stops if a review's failing or needs_info compliance "
        "citations (finding kinds `limit` and `required`), its regulated / category / larger "
        "site, or whether it computes soil loss and peaks differ from what the sample "
        "declares it should show.",
        "",
        "| site | compliance fail | compliance needs_info | soil loss t/ac/yr (limit 5) "
        "| peak cfs, pre -> post | sediment basin sq ft, required / declared |",
        "|---|---|---|---|---|---|",
    ]
    for s in samples:
        d = digests[s.name]
        comp = [f for f in d["findings"] if f[1] in COMPLIANCE_KINDS]
        n_fail = sum(1 for f in comp if f[0] == "fail")
        n_ni = sum(1 for f in comp if f[0] == "needs_info")
        loss = "-" if d["soil_loss"] is None else f"{d['soil_loss']:.2f}"
        b = d["basin"]
        basin = (
            f"{b['required_area_sqft']:,.0f} / {b['declared_total_area_sqft']:,.0f}" if b else "-"
        )
        out.append(f"| {s.name} | {n_fail} | {n_ni} | {loss} | {fmt_peaks(d['peaks'])} | {basin} |")
    out += [
        "",
        "Key findings per sample (every `fail` and `needs_info`, all kinds; `info` findings "
        "are reminders, not compliance):",
        "",
    ]
    for s in samples:
        d = digests[s.name]
        if not d["findings"]:
            continue
        out.append(f"- **{s.name}**")
        for status, kind, cite, msg in d["findings"]:
            out.append(f"  - {status} ({kind}) {cite}: {msg}")
    return out


def readme(
    samples: list[Sample], facts: dict[str, dict[str, Any]], digests: dict[str, dict[str, Any]]
) -> str:
    """The sample README: how to run them and the machine-readable conclusions table."""
    head = """# Sample submissions

Each folder is one erosion-control submission: `submission.toml` (the schema is
`georeview/config/__init__.py`, `Submission`) and the site and disturbance polygons it names, in
GeoJSON (EPSG:4326 or EPSG:3071), shapefile or GeoPackage. Review one with

    georeview review sample_sites/deerfield_minor_home --out out/

They are made by `sample_sites/make_samples.py` (run it after `layers/make_layers.py`). The
script places each site, computes its jurisdiction from the shipped boundary layers (village
limit buffered 1.5 miles, 3 miles for the second-class Cities of Kenosha and Racine, over town
land only; the equidistant line where two areas overlap, Wis. Stat. § 66.0105), measures the
disturbed area and its overlap with the wetland, flood-zone and DEM layers, and stops if a site
does not show what its line below says. Both village limits are real (Deerfield: LTSB 2025;
Somers: Census TIGER/Line 2019); all the wetland, floodplain, stream, soil, road and DEM layers
are synthetic (layers/README.md).

Every fact in `[activity]` and `[site_map]` is stated (0 or false where it does not apply).
Regulated sites also carry a `[plan]` table (a full Somers 17.10(B) plan, the Deerfield
31.09(1)(C)-(D) items, or a minor-site statement), so plan items are not `needs_info` either,
except where a sample is meant to show a gap (below). Every regulated sample's plan also shows
the practices of the performance standards (Somers 17.07(B)-(D) under one acre, 17.08(C)(1),
(C)(3), (C)(4), (D) from one acre) and of Deerfield's minimum standards (31.06(2)(B)-(G),
31.06(3)(A)) in `[plan.bmps]` with the sheet that shows each (`dewatering` and
`channel_barriers` are `{ not_applicable = "..." }` where the site has none, which those
paragraphs allow; where a text allows no exception, or leaves it to the Village, the plan
describes the practice instead: see `allowance` in the ordinance folders), the design
standards (`design_standards`, Somers 17.06, Deerfield 31.04), the date the controls go in
(`plan.sequence.controls_install_date`, May 1, before the May 5 start) and the dated
`stages` (no pause over 14 days, 17.07(D)(4), 17.08(D)(4)). The application date, March 31,
leaves every review deadline before the May 5 start (Somers 17.09(A), Deerfield 31.08(1)). Every
Deerfield sample states `channel_originates_in_disturbed_area = false` (31.06(3)(B)). For
Somers, category `major` means one acre or more (performance standards 17.08, full plan
17.10(B)) and `minor` under one acre (17.07, plan statement 17.10(A)).

Engineering inputs, and what they are:

- Somers `[soil_loss]` (somers_complete_plan, somers_bad_map, somers_etj_near_kenosha): dated
  construction phases on the covers of `georeview/data/usle.toml`, one slope segment (the
  disturbed area's longer side at its DEM mean slope, measured by this script) and
  `r_factor = 150` with the source "Dane County Erosion Control Manual value used as a
  regional proxy; Kenosha County R unconfirmed": usle.toml has no confirmed R for Somers.
  K comes from the (synthetic) soils layer. Each phase gives its `r_fraction` (share of annual
  erosivity) from monthly shares that are **illustrative for the samples, not a published
  table** (1, 1, 3, 6, 11, 19, 20, 18, 12, 6, 2, 1 % for January to December, prorated by
  day); without them the review would not judge the rate (17.06(B): "the period of
  disturbance").
- Deerfield `[hydrology]` and `[[basins]]` (deerfield_larger_site): existing, proposed and
  construction cover tables on the soils layer's hydrologic groups, flow paths for Tc, and
  `rainfall_in` = 1-yr 2.5, 2-yr 2.9, 5-yr 3.6, 10-yr 4.2, 100-yr 6.6 in. These depths are
  **illustrative applicant-declared depths for the sample, not NOAA Atlas 14; replace with
  Atlas 14 PFDS values at the site** (`georeview/ordinances/deerfield/rainfall.toml` has
  no confirmed depths).
  The peaks shown are therefore a demonstration of the method, not design values.

Deliberate outcomes: somers_etj_near_kenosha exceeds 5 t/ac/yr (its yard stays bare from May
to October) and gives a written maximum-extent-practicable explanation, whose acceptance is the
Village Administrator's (17.055: needs_info until a determinations.toml says); deerfield_larger_site
describes a wet detention basin but declares no routed outflow, so the peak leaving the site is
unknown and 31.06(3)(C)1.a-c need information (its unrouted TR-55 peaks exceed the
pre-development peaks), while its sediment basin is sized to pass 31.06(3)(B); the two
extraterritorial Deerfield subdivisions are larger sites that declare no `[hydrology]` or basin,
so their peaks and basin area are `needs_info`, and whether the Village Engineer requires a basin
is the Village's to decide; deerfield_wetland_floodplain omits the wetland from its map and
somers_bad_map has a coarse, ungridded map. No sample carries a determinations.toml: every
Deerfield site the ordinance regulates asks whether it lies in Master Plan conservancy or
corridor areas (31.06(4)), and every regulated Somers site whether the Administrator identifies
it under 17.04(A)(3); the Somers findings that follow the one-acre split say it is a local
interpretation. No plan infiltrates post-construction runoff (`uses_infiltration = false`), so
no site map lists `infiltration_areas` and Somers 17.10(B)(4)(i) does not apply.

Six samples (somers_village_small, somers_complete_plan, somers_etj_near_kenosha,
deerfield_larger_site, deerfield_etj_subdivision, deerfield_wetland_floodplain) are checked
finding by finding against the ordinance text in `tests/test_handworked_samples.py`: every
finding's id, citation, status and value, with the geometry (shapely, EPSG:3071), USLE, fee
and calendar arithmetic worked by hand in its comments.

## What a reviewer should conclude

The test suite parses this table: keep its columns.

"""
    head += (
        "| site | municipality | jurisdiction | regulated | category | larger_site "
        "| reviewer should conclude |\n|---|---|---|---|---|---|---|\n"
    )
    rows = [
        f"| {s.name} | {s.municipality} | {s.expect['jurisdiction']} | {s.expect['regulated']} "
        f"| {s.expect['category']} | {s.expect['larger_site']} | {s.conclude} |"
        for s in samples
    ]
    meas = [
        "",
        "## Measured while building (EPSG:3071)",
        "",
        "| site | format | disturbed sq ft | disturbed acres | wetland sq ft | 1 % floodplain "
        "sq ft | slope >= 20 % sq ft | nearest stream m | nearest jurisdiction line m |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in samples:
        f = facts[s.name]
        meas.append(
            f"| {s.name} | {s.fmt} | {f['disturbed_sqft']:,} | {f['disturbed_acres']} | "
            f"{f['wetland_sqft']:,} | {f['sfha_sqft']:,} | {f['steep_sqft']:,} | "
            f"{f['stream_m']:,} | {f['line_margin_m']:,} |"
        )
    tail = [
        "",
        "Slope here is Horn's method on the shipped DEM (as `gdaldem slope -p`); the nearest "
        "stream is a straight-line distance from the site boundary, not the downstream flow "
        "path that georeview traces. The nearest jurisdiction line is the village limit, the "
        "edge of the 1.5-mile area or half the difference of the distances to two "
        "municipalities (the equidistant line), whichever is nearest.",
        "",
    ]
    return (
        head + "\n".join(rows) + "\n" + "\n".join(findings_section(samples, digests) + meas + tail)
    )


def main(argv: list[str] | None = None) -> None:
    """Build every sample and the README."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check-only", action="store_true", help="check, write nothing")
    parser.add_argument(
        "--no-review", action="store_true", help="write the samples, skip the review and README"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("georeview").setLevel(logging.WARNING)  # the reviews' own progress
    pyogrio.set_gdal_config_options({"OGR_CURRENT_DATE": PINNED_DATE})
    samples: list[Sample] = []
    facts: dict[str, dict[str, Any]] = {}
    makers = {"deerfield": deerfield_samples, "somers": somers_samples}
    for muni in municipalities():
        if muni not in makers:
            raise SystemExit(f"no sample recipe for municipality {muni!r}: add one to {__file__}")
        make = makers[muni]
        lay = load_layers(muni)
        for s in make(lay):
            facts[s.name] = check(s, lay)
            log.info("%s: %s", s.name, facts[s.name])
            samples.append(s)
    if args.check_only:
        return
    for s in samples:
        write_sample(s)
    if args.no_review:
        return
    digests = {}
    for s in samples:
        digests[s.name] = verify(s)
        log.info("%s: review as expected", s.name)
    (SAMPLES / "README.md").write_text(readme(samples, facts, digests), encoding="utf-8")


if __name__ == "__main__":
    main()
