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
    _is_window_of(built / "dem.tif", SHIPPED / "dem.tif")
    with rasterio.open(built / "dem.tif") as m:
        assert m.tags()["VERTICAL_UNITS"] == "m"


def _is_window_of(mosaic: Path, dem: Path) -> None:
    """The mosaic is a window of ``dem`` (cut to the reach), on its grid, cell for cell."""
    with rasterio.open(mosaic) as m, rasterio.open(dem) as ds:
        assert m.crs == ds.crs
        assert m.res == ds.res
        win = rasterio.windows.from_bounds(*m.bounds, transform=ds.transform)
        assert win.col_off == pytest.approx(round(win.col_off), abs=1e-6)
        assert win.row_off == pytest.approx(round(win.row_off), abs=1e-6)
        want = ds.read(1, window=win.round_offsets().round_lengths(), masked=True)
        got = m.read(1, masked=True)
        np.testing.assert_array_equal(got.mask, want.mask)
        np.testing.assert_array_equal(got.filled(0), want.filled(0))


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


def _tiles(tmp_path: Path, gap: int = 0, same_name: bool = False) -> list[Path]:
    """The Plainfield DEM cut in two tiles (no nodata value), ``gap`` columns apart."""
    dem = CENTRAL_SANDS / "plainfieldlakes_dem10m.tif"
    tiles = []
    with rasterio.open(dem) as ds:
        half = ds.width // 2
        wins = (Window(0, 0, half - gap, ds.height), Window(half, 0, ds.width - half, ds.height))
        for k, win in enumerate(wins):
            prof = ds.profile | {"width": win.width, "height": win.height, "nodata": None,
                                 "transform": ds.window_transform(win)}  # fmt: skip
            folder = tmp_path / f"folder{k}"
            folder.mkdir(exist_ok=True)
            t = folder / ("dem.tif" if same_name else f"tile{k}.tif")
            with rasterio.open(t, "w", **prof) as dst:
                dst.write(ds.read(1, window=win), 1)
            tiles.append(t)
    return tiles


def _plainfield(tmp_path: Path, tiles: list[Path], **kw: object) -> dict:
    return build_layers(
        tmp_path / "plainfield", municipality="deerfield", name="Plainfield", kind="V",
        boundaries=Download(_plainfield_boundary(tmp_path / "ltsb.gpkg")),
        dem_tiles=tuple(tiles), dem_vertical_units="m", **kw,
    )  # fmt: skip


def test_dem_mosaic_of_two_tiles_is_the_dem(tmp_path: Path) -> None:
    """Two tiles named alike in two folders: both used, the mosaic is the DEM cell for cell."""
    tiles = _tiles(tmp_path, same_name=True)
    prov = _plainfield(tmp_path, tiles)
    _is_window_of(tmp_path / "plainfield" / "dem.tif", CENTRAL_SANDS / "plainfieldlakes_dem10m.tif")
    made = prov["layers"]["dem"]["mosaic"]
    assert made["cells_without_data"] == 0
    assert len(prov["layers"]["dem"]["tiles"]) == 2


def test_dem_mosaic_gap_is_nodata_not_zero(tmp_path: Path) -> None:
    """A 5-column gap between tiles that name no nodata value: 5 x rows cells of nodata.

    The hand-written VRT had no NoDataValue when the first tile had none, so the gap read
    as 0 m: a 100 m cliff beside it, and the site "extraordinary".
    """
    tiles = _tiles(tmp_path, gap=5)
    prov = _plainfield(tmp_path, tiles)
    made = prov["layers"]["dem"]["mosaic"]
    with rasterio.open(tmp_path / "plainfield" / "dem.tif") as m:
        assert m.nodata == -9999.0
        a = m.read(1, masked=True)
        assert made["cells_without_data"] == int(a.mask.sum()) == 5 * m.height
        assert float(a.min()) > 200.0  # no 0 m anywhere: Plainfield's ground is 300 m up


def test_scaled_or_south_up_dem_refused(tmp_path: Path) -> None:
    """Decimetre int16 heights with scale 0.1, and a south-up grid: refused by name."""
    dem = CENTRAL_SANDS / "plainfieldlakes_dem10m.tif"
    with rasterio.open(dem) as ds:
        prof, z = ds.profile, ds.read(1)
        t = ds.transform
    dm = tmp_path / "dm.tif"
    with rasterio.open(dm, "w", **(prof | {"dtype": "int16", "nodata": -32768})) as dst:
        dst.write(np.round(z * 10).astype("int16"), 1)
        dst.scales, dst.offsets = (0.1,), (0.0,)
    with pytest.raises(DataSourceError, match=r"scale 0.1 .*gdal_translate -unscale"):
        _plainfield(tmp_path, [dm])
    up = tmp_path / "up.tif"
    flipped = rasterio.Affine(t.a, 0, t.c, 0, -t.e, t.f + t.e * z.shape[0])
    with rasterio.open(up, "w", **(prof | {"transform": flipped})) as dst:
        dst.write(z[::-1], 1)
    with pytest.raises(DataSourceError, match="south-up"):
        _plainfield(tmp_path, [up])


def test_plainfield_lakes_kept_within_the_reach(tmp_path: Path) -> None:
    tiles = _tiles(tmp_path)
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


# --------------------------------------------------------------------------- checks


SOMERS = ROOT / "layers" / "somers"  # 135 km from Deerfield: a download of another area

#: One download of another area for each source kind (Somers' layers, for Deerfield).
ELSEWHERE = {
    "floodplain": ["--floodplain", str(SOMERS / "floodplain.gpkg")],
    "wetlands": ["--wetlands", str(SOMERS / "wetlands.gpkg")],
    "flowlines": ["--flowlines", str(SOMERS / "hydrography.gpkg"),
                  "--flowlines-layer", "NHDFlowline"],
    "waterbodies": ["--waterbodies", str(SOMERS / "hydrography.gpkg"),
                    "--waterbodies-layer", "NHDWaterbody"],
    "soils": ["--soils", str(SOMERS / "soils.gpkg")],
    "roads": ["--roads", str(SOMERS / "roads.gpkg")],
    "dem": ["--dem", str(SOMERS / "dem.tif"), "--dem-vertical-units", "ft"],
    # a FEMA-style depth grid of the Central Sands (Waushara County), 110 km away
    "depth grid": ["--floodplain", str(CENTRAL_SANDS / "plainfieldlakes_dem10m.tif")],
}  # fmt: skip


def _deerfield_argv(out: Path, *extra: str) -> list[str]:
    return ["layers", "build", str(out), "--municipality", "deerfield", "--name", "Deerfield",
            "--kind", "V", "--boundaries", str(MUNIS), "--city-class", "Madison=2",
            *extra]  # fmt: skip


@pytest.mark.parametrize("source", list(ELSEWHERE))
def test_a_download_of_another_area_is_refused(
    source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The build used to write an empty layer and exit 0; every review then passed "no
    # disturbance in mapped wetland" (floodplain, ...). Refused, nothing written.
    out = tmp_path / "deerfield"
    assert main(_deerfield_argv(out, *ELSEWHERE[source], "-q")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    line = err[0]
    assert line.startswith("georeview: error: ")
    assert Path(ELSEWHERE[source][1]).name in line  # the source file
    field = "floodplain" if source == "depth grid" else source
    assert f": {field}: no " in line
    assert "meets the village and its reach" in line
    # both extents, in one stated CRS: the village's reach lies around Deerfield, whose
    # limits are near (588,000, 283,000) in EPSG:3071 (the shipped boundary's bounds)
    assert line.count("(") >= 3
    assert "EPSG:" in line
    assert not out.exists()
    assert not list(tmp_path.glob(".*partial*"))


def test_a_refused_overwrite_leaves_the_old_folder(built: Path, tmp_path: Path) -> None:
    import shutil

    old = tmp_path / "old"
    shutil.copytree(built, old)
    before = {p.name: p.read_bytes() for p in old.iterdir() if p.is_file()}
    argv = _deerfield_argv(old, *ELSEWHERE["wetlands"], "--overwrite", "-q")
    assert main(argv) == 2
    assert {p.name: p.read_bytes() for p in old.iterdir() if p.is_file()} == before
    assert not list(tmp_path.glob(".*partial*"))


def test_the_reach_expected_in_the_refusal_is_the_clip_area(tmp_path: Path) -> None:
    # The clip area is the village grown by 1.5 mi + 1/4 mi (2,816.352 m); its bounds,
    # computed here with shapely from the same limit, are the ones the message gives.
    with pytest.raises(DataSourceError) as err:
        build_layers(tmp_path / "o", municipality="deerfield", name="Deerfield", kind="V",
                     boundaries=Download(MUNIS), city_class={"Madison": 2},
                     wetlands=Download(SOMERS / "wetlands.gpkg"))  # fmt: skip
    g = gpd.read_file(MUNIS).to_crs(3071)
    v = g[(g.MCD_NAME == "Deerfield") & (g.CTV == "V")].geometry.make_valid().union_all()
    b = shapely.bounds(shapely.buffer(v, 1.75 * 1609.344))
    assert "(" + ", ".join(f"{x:,.0f}" for x in b) + ")" in err.value.message
    w = gpd.read_file(SOMERS / "wetlands.gpkg").to_crs(3071).total_bounds
    assert "(" + ", ".join(f"{x:,.0f}" for x in w) + ")" in err.value.message


def test_every_city_without_a_class_is_listed_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Waunakee (LTSB, Dane County): Madison and Middleton lie within 1.5 + 3 miles. The
    # review used to fail on Madison, then, after a rebuild, on Middleton.
    out = tmp_path / "waunakee"
    argv = ["layers", "build", str(out), "--municipality", "deerfield", "--name", "Waunakee",
            "--kind", "V", "--boundaries", str(DANE / "dane_county_munis.gpkg")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "--city-class Madison=N --city-class Middleton=N" in err[0]
    # what a class is (no section number in Python: tests/test_no_ordinance_in_code.py)
    assert "1 to 4, as the city has proclaimed it" in err[0]
    assert "class 1, 2 or 3 reaches 3 mi, of class 4 1.5 mi" in err[0]
    # their distances, measured here with shapely in EPSG:3071 (1 mi = 1,609.344 m)
    g = gpd.read_file(DANE / "dane_county_munis.gpkg").to_crs(3071)
    g["geometry"] = g.geometry.make_valid()
    w = g[g.MCD_NAME == "Waunakee"].geometry.union_all()
    for city in ("Madison", "Middleton"):
        d_mi = g[city == g.MCD_NAME].distance(w).iloc[0] / 1609.344
        assert f"{city} ({d_mi:.1f} mi)" in err[0]
    # the other cities are farther than 4.5 miles: not asked for
    for city in ("Fitchburg", "Sun Prairie", "Verona", "Monona", "Stoughton", "Edgerton"):
        assert g[city == g.MCD_NAME].distance(w).iloc[0] > 4.5 * 1609.344
        assert city not in err[0]
    assert not out.exists()
    # with one of the two given, the other is still asked for (and only it)
    assert main([*argv, "--city-class", "Madison=2"]) == 2
    err = capsys.readouterr().err
    assert "--city-class Middleton=N" in err
    assert "Madison=N" not in err


def test_progress_steps_and_jurisdictions_in_provenance(tmp_path: Path) -> None:
    steps: list[tuple[int, int, str]] = []
    prov = build_layers(
        tmp_path / "d", municipality="deerfield", name="Deerfield", kind="V",
        boundaries=Download(MUNIS), city_class={"Madison": 2},
        wetlands=Download(SHIPPED / "wetlands.gpkg"),
        flowlines=Download(SHIPPED / "hydrography.gpkg", "NHDFlowline"),
        waterbodies=Download(SHIPPED / "hydrography.gpkg", "NHDWaterbody"),
        on_step=lambda done, total, what: steps.append((done, total, what)),
    )  # fmt: skip
    # municipalities, wetlands, hydrography (flowlines + waterbodies), jurisdictions
    assert {t for _, t, _ in steps} == {4}
    assert steps[-1][0] == 4
    said = " ".join(w for _, _, w in steps)
    for words in ("boundaries: reading", "wetlands: reading", "wetlands: writing",
                  "flowlines: reading", "waterbodies: reading", "jurisdictions"):  # fmt: skip
        assert words in said
    # the jurisdictions the build recorded are those a review computes, in acres
    # (1 acre = 4,046.8564224 m², exact)
    from georeview.pipeline.jurisdictions import jurisdictions_for

    j = jurisdictions_for(load_layers(tmp_path / "d"))
    got = prov["jurisdictions"]
    assert got["extraterritorial_acres"] == pytest.approx(
        shapely.area(j.extraterritorial) / 4046.8564224, abs=0.05
    )
    assert set(got["ceded_acres"]) == {"Cambridge"}
    assert json.loads((tmp_path / "d" / "provenance.json").read_text())["jurisdictions"] == got


def test_layers_toml_reads_back_whatever_the_texts_hold(tmp_path: Path) -> None:
    """Before: a download whose name held DEL (U+007F) gave a layers.toml that TOML refuses
    ("Illegal character"), so the built folder could not be read; JSON's string escapes,
    which the writer borrows, leave DEL raw where TOML forbids it."""
    import shutil
    import tomllib

    from georeview.load.downloads import toml_string

    odd = 'a\x7fb\x00c\x1b"d\\e\tf\u0085g§'
    assert tomllib.loads(f"k = {toml_string(odd)}")["k"] == odd
    src = tmp_path / "dane\x7fmunis.gpkg"
    shutil.copyfile(MUNIS, src)
    out = tmp_path / "built"
    argv = ["layers", "build", str(out), "--municipality", "deerfield", "--name", "Deerfield",
            "--kind", "V", "--boundaries", str(src), "--city-class", "Madison=2",
            "--vintage", "boundaries=2025\x7f01", "-q"]  # fmt: skip
    assert main(argv) == 0
    text = tomllib.loads((out / "layers.toml").read_text(encoding="utf-8"))
    assert "dane\x7fmunis.gpkg" in json.dumps(text, ensure_ascii=False)
    assert load_layers(out).config.boundary.path == "municipalities.gpkg"


def test_a_repair_that_gives_a_collection_keeps_its_polygon(tmp_path: Path) -> None:
    """Hand-worked: a wetland polygon with a 10 m spike along its edge is invalid, and
    shapely's make_valid gives GEOMETRYCOLLECTION (the 100 x 100 m square, the spike's
    line). The build keeps the square (10,000 sq m) as the wetland; it used to drop the
    feature whole while provenance.json counted it as kept."""
    w = gpd.read_file(SHIPPED / "wetlands.gpkg").to_crs(3071)
    x, y = w.geometry.iloc[0].representative_point().coords[0]
    spiked = shapely.Polygon([(x, y), (x + 100, y), (x + 110, y), (x + 100, y),
                              (x + 100, y + 100), (x, y + 100), (x, y)])  # fmt: skip
    assert shapely.make_valid(spiked).geom_type == "GeometryCollection"
    extra = gpd.GeoDataFrame({"WETCLASS": ["spiked"]}, geometry=[spiked], crs=3071)
    src = tmp_path / "wetlands.gpkg"
    pd.concat([w[["WETCLASS", "geometry"]], extra], ignore_index=True).to_file(src)
    prov = build_layers(tmp_path / "o", municipality="deerfield", name="Deerfield", kind="V",
                        boundaries=Download(MUNIS), wetlands=Download(src),
                        city_class={"Madison": 2})  # fmt: skip
    rec = prov["layers"]["wetlands"]
    got = load_layers(tmp_path / "o").read("wetlands")
    assert rec["features_kept"] == len(got)
    assert rec["collections_cut_to_kind"] == 1
    assert rec["features_read"] == rec["features_kept"] + rec["features_outside"]
    kept = got[got["WETCLASS"] == "spiked"]
    assert len(kept) == 1
    assert kept.to_crs(3071).area.iloc[0] == pytest.approx(100.0 * 100.0, rel=1e-9)
