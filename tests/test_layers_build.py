"""``georeview layers build``: a layers folder from the public downloads, as downloaded.

Real files: the LTSB Dane County municipalities (tests/data/wi_dane), the Cambridge, MA
FEMA NFHL zones (lower-case NFHL fields), the USGS Plainfield DEM (metres, and the
US-feet copy that states ``VERTICAL_UNITS=us_ft``) and lakes. The other Deerfield layers
are the shipped ones (NHD, NFHL, WWI, SSURGO and TIGER schemas) given as downloads.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import rasterio
import shapely
from _build import CAMBRIDGE, CENTRAL_SANDS, DANE
from rasterio.windows import Window

from georeview.cli import main
from georeview.errors import ConfigError, DataSourceError
from georeview.load import load_layers
from georeview.load.build import build_layers
from georeview.load.dem import write_vrt
from georeview.load.downloads import Download
from georeview.load.sources import soil_properties

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "layers" / "deerfield"
SAMPLES = ROOT / "sample_sites"
MUNIS = DANE / "deerfield_area_munis.gpkg"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("built") / "deerfield"
    L = SHIPPED
    argv = [
        "layers", "build", str(out), "--municipality", "deerfield", "--name", "Deerfield",
        "--kind", "V", "--boundaries", str(MUNIS), "--floodplain", str(L / "floodplain.gpkg"),
        "--wetlands", str(L / "wetlands.gpkg"),
        "--flowlines", str(L / "hydrography.gpkg"), "--flowlines-layer", "NHDFlowline",
        "--waterbodies", str(L / "hydrography.gpkg"), "--waterbodies-layer", "NHDWaterbody",
        "--soils", str(L / "soils.gpkg"), "--roads", str(L / "roads.gpkg"),
        "--dem", str(L / "dem.tif"), "--dem-vertical-units", "m",
        "--city-class", "Madison=2", "--vintage", "boundaries=2025-01", "-q",
    ]  # fmt: skip
    assert main(argv) == 0
    return out


def _review(sample: str, layers: Path, out: Path) -> dict:
    assert main(["review", str(SAMPLES / sample), "--out", str(out), "--layers", str(layers),
                 "--no-map", "-q"]) == 0  # fmt: skip
    r = json.loads((out / "report.json").read_text())
    r.pop("layers")  # where the layers came from differs, by design
    return r


@pytest.mark.parametrize(
    "sample", ["deerfield_minor_home", "deerfield_etj_subdivision", "deerfield_wetland_floodplain"]
)
def test_review_on_built_folder_matches_shipped(built: Path, sample: str, tmp_path: Path) -> None:
    assert _review(sample, built, tmp_path / "b") == _review(sample, SHIPPED, tmp_path / "s")


def test_built_folder_writes_the_filter_and_provenance(built: Path) -> None:
    toml = (built / "layers.toml").read_text()
    assert "where = \"MCD_NAME = 'Deerfield' AND CTV = 'V'\"" in toml
    assert "where = \"NOT (MCD_NAME = 'Deerfield' AND CTV = 'V')\"" in toml
    prov = json.loads((built / "provenance.json").read_text())
    src = prov["layers"]["boundary"]
    assert src["sha256"] == hashlib.sha256(MUNIS.read_bytes()).hexdigest()
    assert src["features_read"] == 15
    assert src["vintage"] == "2025-01"
    # kept: municipalities within 1.5 + 3 miles (7,242 m) of the village, checked here
    g = gpd.read_file(MUNIS).to_crs(3071)
    g["geometry"] = g.geometry.make_valid()
    v = g[(g.MCD_NAME == "Deerfield") & (g.CTV == "V")].geometry.union_all()
    assert src["features_kept"] == int((g.distance(v) <= 4.5 * 1609.344).sum())
    layers = load_layers(built)
    assert len(layers.read("boundary")) == 1
    assert prov["layers"]["dem"]["vertical_units"] == "m"
    with rasterio.open(built / "dem.vrt") as vrt, rasterio.open(SHIPPED / "dem.tif") as src_dem:
        assert vrt.crs == src_dem.crs  # the raster keeps its CRS
        np.testing.assert_array_equal(vrt.read(1), src_dem.read(1))


def test_outside_sample_same_answer(built: Path, tmp_path: Path) -> None:
    a = _review("deerfield_outside", built, tmp_path / "b")
    b = _review("deerfield_outside", SHIPPED, tmp_path / "s")
    assert a["jurisdiction"] == b["jurisdiction"]
    assert a["classification"] == b["classification"]


def test_unknown_municipality_and_unstated_units_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DataSourceError, match=r"no municipality where MCD_NAME = 'DEERFIELD'"):
        build_layers(tmp_path / "a", municipality="deerfield", name="DEERFIELD", kind="V",
                     boundaries=Download(MUNIS))  # fmt: skip
    with pytest.raises(ConfigError, match="does not state its vertical units"):
        build_layers(tmp_path / "b", municipality="deerfield", name="Deerfield", kind="V",
                     boundaries=Download(MUNIS),
                     dem_tiles=(CENTRAL_SANDS / "plainfieldlakes_dem10m.tif",))  # fmt: skip


# --------------------------------------------------------------------------- Plainfield


def _plainfield_boundary(path: Path) -> Path:
    """A stand-in village in the LTSB schema, inside the Plainfield DEM (EPSG:4326)."""
    poly = shapely.box(-89.47, 44.19, -89.45, 44.21)
    gpd.GeoDataFrame(
        {"MCD_NAME": ["Plainfield", "Oasis"], "CTV": ["V", "T"], "MCD_FIPS": ["1", "2"]},
        geometry=[poly, shapely.box(-89.60, 44.10, -89.47, 44.30)],
        crs="EPSG:4326",
    ).to_file(path)
    return path


def test_dem_tiles_mosaic_and_lakes(tmp_path: Path) -> None:
    dem = CENTRAL_SANDS / "plainfieldlakes_dem10m.tif"
    tiles = []
    with rasterio.open(dem) as ds:
        full = ds.read(1)
        half = ds.width // 2
        for k, win in enumerate((Window(0, 0, half, ds.height),
                                 Window(half, 0, ds.width - half, ds.height))):  # fmt: skip
            prof = ds.profile | {"width": win.width, "height": win.height,
                                 "transform": ds.window_transform(win)}  # fmt: skip
            t = tmp_path / f"tile{k}.tif"
            with rasterio.open(t, "w", **prof) as dst:
                dst.write(ds.read(1, window=win), 1)
            tiles.append(t)
    vrt = write_vrt(tmp_path / "m.vrt", tiles)
    with rasterio.open(vrt) as m, rasterio.open(dem) as ds:
        assert m.transform == ds.transform
        assert m.crs == ds.crs
        np.testing.assert_array_equal(m.read(1), full)  # the mosaic is the DEM, cell for cell
    lakes = CENTRAL_SANDS / "plainfieldlakes_all_lakes.gpkg"
    out = tmp_path / "plainfield"
    prov = build_layers(
        out, municipality="deerfield", name="Plainfield", kind="V",
        boundaries=Download(_plainfield_boundary(tmp_path / "ltsb.gpkg")),
        waterbodies=Download(lakes), dem_tiles=tuple(tiles), dem_vertical_units="m",
    )  # fmt: skip
    # lakes kept: those meeting the village grown by 1.5 + 0.25 miles, counted with shapely
    g = gpd.read_file(lakes).to_crs(3071)
    v = gpd.GeoSeries([shapely.box(-89.47, 44.19, -89.45, 44.21)], crs=4326).to_crs(3071)[0]
    near = shapely.buffer(v, 1.75 * 1609.344)
    expect = int(shapely.intersects(g.geometry.make_valid().values, near).sum())
    assert prov["layers"]["hydrography.NHDWaterbody"]["features_kept"] == expect > 0
    assert len(prov["layers"]["dem"]["tiles"]) == 2
    layers = load_layers(out)
    assert len(layers.read("hydrography")) == expect


def test_dem_units_read_from_the_file(tmp_path: Path) -> None:
    """The US-feet Plainfield DEM states VERTICAL_UNITS=us_ft; the build keeps it."""
    ft = CENTRAL_SANDS / "plainfield_dem_ftus_2289.tif"
    with rasterio.open(ft) as ds:
        b = gpd.GeoSeries([shapely.box(*ds.bounds)], crs=ds.crs).to_crs(4326).total_bounds
    cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    ltsb = tmp_path / "ltsb.gpkg"
    gpd.GeoDataFrame({"MCD_NAME": ["Hancock"], "CTV": ["V"]},
                     geometry=[shapely.box(cx - 0.005, cy - 0.005, cx + 0.005, cy + 0.005)],
                     crs=4326).to_file(ltsb)  # fmt: skip
    prov = build_layers(tmp_path / "o", municipality="deerfield", name="Hancock", kind="V",
                        boundaries=Download(ltsb), dem_tiles=(ft,))  # fmt: skip
    assert prov["layers"]["dem"]["vertical_units"] == "us_ft"
    assert 'vertical_units = "us_ft"' in (tmp_path / "o" / "layers.toml").read_text()


# --------------------------------------------------------------------------- NFHL, SSURGO


def test_cambridge_nfhl_lower_case_fields(tmp_path: Path) -> None:
    city = gpd.read_file(CAMBRIDGE / "BOUNDARY_CityBoundary.geojson")
    ltsb = tmp_path / "munis.gpkg"
    city.assign(MCD_NAME="Cambridge", CTV="C")[["MCD_NAME", "CTV", "geometry"]].to_file(ltsb)
    fema = CAMBRIDGE / "FEMA_FloodPlains100Year.geojson"
    build_layers(
        tmp_path / "cam", municipality="deerfield", name="Cambridge", kind="C",
        boundaries=Download(ltsb), floodplain=Download(fema), working_crs="EPSG:26986",
        city_class={"Cambridge": 2},
    )  # fmt: skip
    toml = (tmp_path / "cam" / "layers.toml").read_text()
    assert 'zone_field = "fld_zone"' in toml
    assert 'sfha_field = "sfha_tf"' in toml
    fp = load_layers(tmp_path / "cam").read("floodplain")
    # every FEMA polygon lies within the city grown by its 3-mile reach
    assert len(fp) == len(gpd.read_file(fema))


def test_ssurgo_dominant_component() -> None:
    """Hand-worked: mukey 1's dominant component (60 %) is group B, top horizon K 0.32."""
    comp = pd.DataFrame({"mukey": ["1", "1", "2"], "cokey": ["a", "b", "c"],
                         "comppct_r": [60, 40, 85], "hydgrp": ["B", "C", "A/D"]})  # fmt: skip
    hz = pd.DataFrame({"cokey": ["a", "a", "b", "c"], "hzdept_r": [20, 0, 0, 0],
                       "kffact": ["0.28", "0.32", "0.43", None]})  # fmt: skip
    out = soil_properties(comp, hz)
    assert out.loc["1", "hydgrpdcd"] == "B"
    assert out.loc["1", "kffact"] == pytest.approx(0.32)
    assert out.loc["2", "hydgrpdcd"] == "A/D"
    assert np.isnan(out.loc["2", "kffact"])


def test_cli_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["layers", "build", str(tmp_path / "o"), "--municipality", "deerfield",
            "--name", "Nowhere", "--kind", "V", "--boundaries", str(MUNIS)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("georeview: error: ")
    assert "no municipality where MCD_NAME = 'Nowhere' AND CTV = 'V'" in err[0]
    assert main([*argv[:6], "Deerfield", *argv[7:], "--city-class", "Madison=9"]) == 2
    assert "a city class is 1 to 4" in capsys.readouterr().err
