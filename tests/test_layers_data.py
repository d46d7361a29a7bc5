"""The shipped reference layers and sample sites: valid configs, real CRSs, honest provenance.

Sources of expected values:
- Village of Deerfield area about 5.6 km²: ../shared/data/SOURCES.md (wi_dane,
  dane_county_munis.geojson, "Deerfield V (COUSUBFP 19250, about 5.6 km²)"); tolerance 2 %.
- Downstream reach of 1/4 mile: Somers 17.10(B)(4)(h); 1/4 mile = 402.336 m.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import geopandas as gpd
import pyogrio
import pytest
import rasterio
from shapely.geometry import box

from georeview.config import load_layers_config, load_submission_config
from tests._build import shipped_municipalities

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ROOT / "layers"
SAMPLES = ROOT / "sample_sites"
MUNIS = tuple(shipped_municipalities())
WORKING_CRS = "EPSG:3071"
QUARTER_MILE_M = 402.336  # 1/4 mile of 1,609.344 m (international mile)
DEM_MARGIN_M = QUARTER_MILE_M + 200.0
SPEC_NAMES = (
    "boundary",
    "neighbors",
    "dem",
    "wetlands",
    "floodplain",
    "hydrography",
    "soils",
    "roads",
)


def _specs(muni: str):
    cfg = load_layers_config(LAYERS / muni / "layers.toml")
    return cfg, {n: getattr(cfg, n) for n in SPEC_NAMES if getattr(cfg, n) is not None}


def _samples(muni: str) -> list[Path]:
    return sorted(p for p in SAMPLES.glob(f"{muni}_*") if (p / "submission.toml").exists())


@pytest.mark.parametrize("muni", MUNIS)
def test_layers_toml_validates_and_names_itself(muni):
    cfg, specs = _specs(muni)
    assert cfg.municipality == muni
    assert set(specs) == set(SPEC_NAMES)


@pytest.mark.parametrize("muni", MUNIS)
def test_every_layer_exists_and_has_a_crs(muni):
    _, specs = _specs(muni)
    for name, spec in specs.items():
        path = LAYERS / muni / spec.path
        assert path.is_file(), f"{name}: {path} missing"
        if name == "dem":
            with rasterio.open(path) as src:
                assert src.crs is not None, path
                assert src.crs.to_epsg() == 3071
        else:
            names = [spec.layer] if isinstance(spec.layer, str | None) else list(spec.layer)
            for layer in names:
                info = pyogrio.read_info(path, layer=layer)
                assert info["crs"], f"{path} layer {layer} has no CRS"
                assert info["features"] > 0, f"{path} layer {layer} is empty"


@pytest.mark.parametrize("muni", MUNIS)
def test_synthetic_layers_say_so_in_their_own_metadata(muni):
    _, specs = _specs(muni)
    synthetic = [n for n, s in specs.items() if s.synthetic]
    assert {"dem", "wetlands", "floodplain", "hydrography", "soils", "roads"} <= set(synthetic)
    for name in synthetic:
        spec = specs[name]
        assert "synthetic" in (spec.source or "").lower(), name
        path = LAYERS / muni / spec.path
        if name == "dem":
            with rasterio.open(path) as src:
                tags = src.tags()
            assert "synthetic" in tags["TIFFTAG_IMAGEDESCRIPTION"].lower()
            assert "synthetic" in tags["SOURCE"].lower()
            continue
        layers = [spec.layer]
        if name == "hydrography":
            layers = [lyr for lyr, _ in pyogrio.list_layers(path)]
        for layer in layers:
            notes = gpd.read_file(path, layer=layer, ignore_geometry=True)["NOTE"]
            assert notes.str.lower().str.contains("synthetic").all(), f"{path}:{layer}"


#: TIGER/Line 2019 PLACE, Wisconsin, GEOID 5574625 (Somers village): ALAND and AWATER, m²,
#: as the Census publishes them (../shared/data/SOURCES.md, wi_places; the file's own DBF).
SOMERS_ALAND_M2 = 65_472_946
SOMERS_AWATER_M2 = 43_631


def test_somers_boundary_is_the_tiger_2019_village():
    # The Census computes ALAND + AWATER on its own equal-area projection; the geodesic area
    # of the shipped polygon on the GRS80 ellipsoid (pyproj.Geod) must agree within 0.5 %.
    # (measured: 65.5166 km² against 65.5166 km²). The approximate limit once drawn here
    # was 73.72 km², 12.5 % more: it fails.
    from pyproj import Geod

    gdf = gpd.read_file(LAYERS / "somers" / "boundary.gpkg")
    assert gdf.crs.to_epsg() == 3071
    assert list(gdf["GEOID"]) == ["5574625"]
    assert list(gdf["NAMELSAD"]) == ["Somers village"]
    assert (list(gdf["MCD_NAME"]), list(gdf["CTV"]), list(gdf["LSAD"])) == (
        ["Somers"],
        ["V"],
        ["47"],
    )
    geom = gdf.to_crs(4269).union_all()
    area_m2 = abs(Geod(ellps="GRS80").geometry_area_perimeter(geom)[0])
    assert area_m2 == pytest.approx(SOMERS_ALAND_M2 + SOMERS_AWATER_M2, rel=0.005)
    assert gdf["NOTE"].str.startswith("real: Census TIGER/Line 2019").all()


def test_somers_neighbours_are_tiger_places_and_town_land():
    # Every city and village within 4.5 miles (the village's 1.5 + a city's 3, Wis. Stat.
    # 236.02(5)) of Somers in TIGER/Line 2019 (SOURCES.md lists these places within 3 miles:
    # Kenosha, Pleasant Prairie, Bristol, Mount Pleasant, Sturtevant, Elmwood Park,
    # Yorkville, Racine), CTV from TIGER's LSAD (25 city, 47 village), and one row of town
    # land: towns are not TIGER places.
    cfg, specs = _specs("somers")
    nb = gpd.read_file(LAYERS / "somers" / "neighbors.gpkg")
    places = nb[nb["CTV"] != "T"]
    assert {
        "Kenosha",
        "Pleasant Prairie",
        "Bristol",
        "Mount Pleasant",
        "Sturtevant",
        "Elmwood Park",
        "Yorkville",
        "Racine",
    } <= set(places["MCD_NAME"])
    assert (places["CTV"] == places["LSAD"].map({"25": "C", "47": "V"})).all()
    assert set(places.loc[places["CTV"] == "C", "MCD_NAME"]) == {"Kenosha", "Racine"}
    assert places["GEOID"].str.fullmatch(r"55\d{5}").all()
    assert places["NOTE"].str.startswith("real: Census TIGER/Line 2019").all()
    towns = nb[nb["CTV"] == "T"]
    assert len(towns) == 1
    assert towns["NOTE"].str.startswith("derived").all()
    # a city within reach must have a class (georeview.measure.jurisdiction): both do
    assert set(specs["neighbors"].city_class) == {"Kenosha", "Racine"}
    for name in ("boundary", "neighbors"):
        assert (specs[name].source or "").startswith("real: Census TIGER/Line 2019")
        assert "approximate" not in (specs[name].source or "").lower()
    assert "approximate" not in cfg.village_name.lower()


def test_deerfield_boundary_is_the_real_village():
    # SOURCES.md: Deerfield V, COUSUBFP 19250, about 5.6 km²; 2 % tolerance.
    gdf = gpd.read_file(LAYERS / "deerfield" / "boundary.gpkg")
    assert gdf.crs.to_epsg() == 4326
    assert list(gdf["MCD_NAME"]) == ["Deerfield"]
    assert list(gdf["CTV"]) == ["V"]
    assert list(gdf["COUSUBFP"].astype(str)) == ["19250"]
    area_km2 = gdf.to_crs(WORKING_CRS).area.sum() / 1e6
    assert area_km2 == pytest.approx(5.6, rel=0.02)


def test_deerfield_neighbors_are_the_other_59_dane_municipalities():
    gdf = gpd.read_file(LAYERS / "deerfield" / "neighbors.gpkg")
    assert len(gdf) == 59
    assert set(gdf["CTV"]) == {"C", "V", "T"}
    assert ("Cambridge", "V") in set(zip(gdf["MCD_NAME"], gdf["CTV"], strict=True))
    assert not ((gdf["MCD_NAME"] == "Deerfield") & (gdf["CTV"] == "V")).any()


def test_somers_layout_lets_the_kenosha_and_somers_areas_overlap():
    # Somers reaches 1.5 mi, the second-class City of Kenosha 3 mi, over towns only.
    village = gpd.read_file(LAYERS / "somers" / "boundary.gpkg").to_crs(WORKING_CRS).union_all()
    nb = gpd.read_file(LAYERS / "somers" / "neighbors.gpkg").to_crs(WORKING_CRS)
    towns = nb[nb["CTV"] == "T"].union_all()
    kenosha = nb[(nb["MCD_NAME"] == "Kenosha") & (nb["CTV"] == "C")].union_all()
    overlap = village.buffer(1.5 * 1609.344).intersection(kenosha.buffer(3 * 1609.344))
    assert overlap.intersection(towns).area > 1e6  # over a square kilometre of shared town land


@pytest.mark.parametrize("muni", MUNIS)
def test_dem_covers_every_sample_site_with_a_quarter_mile_margin(muni):
    samples = _samples(muni)
    assert samples, f"no {muni} samples"
    with rasterio.open(LAYERS / muni / "dem.tif") as src:
        dem_box = box(*src.bounds)
    for folder in samples:
        sub = load_submission_config(folder / "submission.toml")
        assert sub.municipality == muni
        site = gpd.read_file(folder / sub.site).to_crs(WORKING_CRS).union_all()
        needed = site.buffer(DEM_MARGIN_M)
        assert dem_box.contains(needed), f"{folder.name}: DEM does not cover site + margin"


def test_dem_units_and_ranges_match_layers_toml():
    # Deerfield: metres, about 255-310 m; Somers: feet, Lake Michigan about 579 ft.
    ranges = {"deerfield": (250.0, 320.0), "somers": (570.0, 720.0)}
    for muni, (lo, hi) in ranges.items():
        cfg, _ = _specs(muni)
        with rasterio.open(LAYERS / muni / cfg.dem.path) as src:
            z = src.read(1)
            assert src.tags()["VERTICAL_UNITS"] == cfg.dem.vertical_units
            assert abs(src.res[0] - 10.0) < 1e-9
        assert lo <= float(z.min())
        assert float(z.max()) <= hi


def test_sample_readme_lists_every_sample_folder():
    text = (SAMPLES / "README.md").read_text(encoding="utf-8")
    header = (
        "| site | municipality | jurisdiction | regulated | category | larger_site "
        "| reviewer should conclude |"
    )
    assert header in text
    rows = [
        ln for ln in text.splitlines()[text.splitlines().index(header) + 2 :] if ln.startswith("| ")
    ]
    table = {}
    for ln in rows:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if len(cells) != 7:
            break
        table[cells[0]] = cells
    folders = {p.name for p in SAMPLES.iterdir() if (p / "submission.toml").exists()}
    assert set(table) == folders
    for cells in table.values():
        assert cells[2] in {"village", "extraterritorial", "outside"}
        assert cells[3] in {"yes", "no"}
        assert cells[4] in {"major", "minor", "-"}
        assert cells[5] in {"yes", "no"}
        assert (cells[3] == "no") == (cells[4] == "-")
        with open(SAMPLES / cells[0] / "submission.toml", "rb") as fh:
            assert tomllib.load(fh)["municipality"] == cells[1]


def test_sample_formats_are_mixed():
    suffixes = set()
    for folder in SAMPLES.iterdir():
        if (folder / "submission.toml").exists():
            sub = load_submission_config(folder / "submission.toml")
            suffixes.add(Path(sub.site).suffix)
            assert (folder / sub.site).exists()
            assert sub.disturbance is None or (folder / sub.disturbance).exists()
    assert {".geojson", ".shp", ".gpkg"} <= suffixes
