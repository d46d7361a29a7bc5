"""A corpus of bad input (issue 8, item 1) and the limits (item 4).

Every case is built by a fixture in a temp folder and run through the command line
(:func:`georeview.cli.main`, in process; ``test_review.py`` runs one through a real
subprocess). Each ends in one of two ways, never a traceback and never a wrong number:

* **refused**: exit code 2 and one line on stderr, ``georeview: error: FILE: FIELD: why``;
* **reviewed with needs_info**: exit code 0, the measure that cannot be made is ``null``
  in report.json, the rules that read it say ``needs_info``, and ``warnings`` says why.

=====  ==========================================  =============================================
#      Bad input                                   Behaviour
=====  ==========================================  =============================================
1      site shapefile without .prj (no CRS)        exit 2: site.shp: site: no coordinate
                                                   reference system (the .prj is missing)
2      site in projected coordinates with the      exit 2: site.geojson: site: lies outside the
       wrong declared CRS (WTM metres labelled     area covered by the layers ... is the
       UTM 16N: lands near the equator)            declared CRS right?
3      DEM in a geographic CRS (EPSG:4326, and     exit 2: dem file: geographic CRS (degrees),
       the real EPSG:4269 Pleasant Lake DEM)       reproject with gdalwarp
4      DEM without any CRS                         exit 2: dem file: declares no CRS
5      DEM in metres declared "ft" (slopes         warning (vertical_units_warnings):
       3.28 x too small)                           median elevation outside Wisconsin's
                                                   577.5-1,951 ft
6      DEM in feet declared "m" (slopes 3.28 x     warning: elevation above Wisconsin's range;
       too steep)                                  steepest slope above 300 %
7      invalid polygon that is repairable          reviewed; the repair is listed in report.json
       (bow-tie)                                   ``repairs`` (test_review.py)
8      invalid polygon with no area once           exit 2: site.geojson: site: invalid ... no
       repaired (collapsed ring)                   area once repaired
9      empty geometry                              exit 2: site: feature 0 has an empty geometry
10     point where a polygon belongs               exit 2: site: feature 0 is a Point
11     line where a polygon belongs                exit 2: site: feature 0 is a LineString
12     site outside the DEM                        exit 0: slope and downstream null, needs_info,
                                                   warnings "Slopes not measured", downstream
                                                   reason
13     all-nodata DEM                              exit 0: as 12 (no data around the area)
14     truncated GeoTIFF DEM                       exit 2: dem file: cannot read the DEM
                                                   (damaged or truncated?); the DEM is the
                                                   municipality's layer, so this is a layers
                                                   error for every review, not a needs_info
15     DEM named in layers.toml but missing        exit 2: layers.toml: dem.path: not found
16     shapefile without its .shx                  exit 2: site.shp: site: missing its .shx
17     shapefile without its .dbf                  exit 2: site.shp: site: missing its .dbf
18     submission.toml: wrong type                 exit 2: activity.fill_cubic_yards: valid number
19     submission.toml: unknown key                exit 2: activity.fil_cubic_yards: unknown key
20     submission.toml: negative area              exit 2: activity.land_division_acres: >= 0
21     submission.toml: dates out of order         exit 2: activity: end_date ... before start
22     submission.toml: absurd magnitudes          exit 2: activity.<field>: less than or equal
       (fill 1e12 cu yd, pipe 1e9 ft, 10^7 lots,   to <bound> ... sanity limit (bounds in
       land division 1e6 acres, 1:1,000,000 map)   config.py)
23     submission.toml not UTF-8                   exit 2: submission.toml: not UTF-8 text
24     submission.toml with a TOML syntax error    exit 2: submission.toml: invalid TOML (line)
25     GeoJSON with latin-1 bytes in a name        exit 2: site.geojson: site: attribute text is
                                                   not UTF-8 (RFC 7946 requires UTF-8)
26     shapefile .dbf with latin-1 text, no .cpg   reviewed: GDAL reads a .dbf without .cpg as
                                                   ISO-8859-1 (the format's old default); area
                                                   exact
27     zip whose entry escapes the folder (../)    batch error row naming the zip; nothing
                                                   written outside
28     zip expanding past the size limit           batch error row: exceeds the limit of N
                                                   bytes (GEOREVIEW_MAX_ZIP_BYTES)
29     empty site file (no features)               exit 2: site.geojson: site: contains no
                                                   features
30     3-D (Z) polygon                             reviewed; Z ignored, area exact
31     multi-layer GeoPackage as the site          exit 2: site.gpkg: site: has 2 layers
32     site of 154 square miles                    exit 2: site: covers 154.4 square miles, more
                                                   than 100 (GEOREVIEW_MAX_SITE_SQMI)
33     site file is a symlink out of the folder    exit 2: submission.toml: site: points
                                                   outside the submission folder
34     site in an unsupported format (.dxf; KML    exit 2: site: unsupported format '.dxf'
       and KMZ are read: test_site_inputs.py)
=====  ==========================================  =============================================

Limits (configurable by environment variable, :class:`georeview.config.Limits`): DEM
cells per window, features per reference layer and per submission file, bytes of a
submission file and of submission.toml, zip bytes and entries; a bad variable value is
itself refused naming the variable.

Areas are hand-worked: the site is a 100 m x 100 m square in EPSG:3071, 100^2 / 0.3048^2
= 107,639.10 sq ft (international foot, exact).
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely
from _build import CENTRAL_SANDS, write_dem, write_submission

from georeview.cli import main
from georeview.errors import LimitError
from georeview.load import read_layer
from georeview.measure.dem import read_dem_window
from georeview.measure.vertical_units import vertical_units_warnings

X0, Y0 = 500_000.0, 300_000.0  # EPSG:3071, near Wisconsin Dells (43.17 N, 90.25 W)
SITE = shapely.box(X0 + 950, Y0 + 950, X0 + 1050, Y0 + 1050)
SITE_SQFT = 100.0**2 / 0.3048**2  # 107,639.10 sq ft
M_PER_FT = 0.3048
TOML = """
municipality = "deerfield"
name = "Corpus site"
[activity]
kinds = ["building"]
fill_cubic_yards = 0
pipe_length_ft = 0
on_platted_lot = false
"""


# --------------------------------------------------------------------------- builders


def _write_dem(
    path: Path,
    z: np.ndarray,
    *,
    x0: float = X0 - 1500,
    y0: float = Y0 + 3500,
    res: float = 10.0,
    crs: str | None = "EPSG:3071",
    nodata: float | None = -9999.0,
) -> Path:
    return write_dem(path, z, res=res, origin=(x0, y0), crs=crs, nodata=nodata)


def _plane_m(n: int = 500, res: float = 10.0, grade: float = 0.03) -> np.ndarray:
    """A plane rising eastwards ``grade`` m per m from 260 m (central Wisconsin heights)."""
    x = (np.arange(n) + 0.5) * res
    return np.broadcast_to(260.0 + grade * x, (n, n)).astype("float32").copy()


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The village boundary and one DEM of each kind."""
    d = tmp_path_factory.mktemp("corpus_layers")
    gpd.GeoDataFrame(
        {"MCD_NAME": ["Testville"]}, geometry=[shapely.box(X0, Y0, X0 + 2000, Y0 + 2000)], crs=3071
    ).to_file(d / "boundary.gpkg")
    z = _plane_m()
    out = {"boundary": d / "boundary.gpkg"}
    out["dem_m"] = _write_dem(d / "dem_m.tif", z)
    out["dem_ft"] = _write_dem(d / "dem_ft.tif", (z / M_PER_FT).astype("float32"))
    # feet DEM with a 100 % slope (45 degrees): declared "m" it reads as 328 %
    steep = (260.0 + 1.0 * (np.arange(500) + 0.5) * 10.0) / M_PER_FT
    out["dem_ft_steep"] = _write_dem(
        d / "dem_ft_steep.tif", np.broadcast_to(steep, (500, 500)).astype("float32").copy()
    )
    out["dem_nocrs"] = _write_dem(d / "dem_nocrs.tif", z, crs=None)
    out["dem_4326"] = _write_dem(
        d / "dem_4326.tif", z[:50, :50].copy(), x0=-90.3, y0=43.2, res=0.001, crs="EPSG:4326"
    )
    out["dem_nodata"] = _write_dem(d / "dem_nodata.tif", np.full((500, 500), -9999.0, "float32"))
    out["dem_far"] = _write_dem(d / "dem_far.tif", z[:100, :100].copy(), x0=X0 + 20_000)
    data = out["dem_m"].read_bytes()
    (d / "dem_trunc.tif").write_bytes(data[: len(data) // 2])
    out["dem_trunc"] = d / "dem_trunc.tif"
    return out


def _layers(folder: Path, data: dict[str, Path], dem: str | None = None, units: str = "m") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = (
        'municipality = "deerfield"\nvillage_name = "Village of Testville"\n'
        "trusted = true\n"  # the layer files are shared by the fixtures, outside the folder
        f'[boundary]\npath = "{data["boundary"]}"\n'
    )
    if dem is not None:
        path = data[dem] if dem in data else folder / dem
        text += f'[dem]\npath = "{path}"\nvertical_units = "{units}"\n'
    (folder / "layers.toml").write_text(text)
    return folder


@pytest.fixture(scope="module")
def layers(data: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Layers with a correct metre DEM."""
    return _layers(tmp_path_factory.mktemp("layers_ok"), data, "dem_m")


def _run(sub: Path, layers_dir: Path, out: Path) -> int:
    return main(["review", str(sub), "--out", str(out), "--layers", str(layers_dir), "--no-map"])


def refused(sub: Path, layers_dir: Path, capsys: pytest.CaptureFixture, *words: str) -> str:
    """Run the CLI; assert exit 2, one line naming ``words``, no traceback; return it."""
    capsys.readouterr()
    rc = _run(sub, layers_dir, sub.parent / "out")
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("georeview: error: "), err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    for w in words:
        assert w in err, (w, err)
    assert not (sub.parent / "out" / "report.json").exists()
    return err


def reviewed(sub: Path, layers_dir: Path, capsys: pytest.CaptureFixture) -> dict:
    """Run the CLI; assert exit 0; return report.json."""
    out = sub.parent / "out"
    rc = _run(sub, layers_dir, out)
    assert rc == 0, capsys.readouterr().err
    return json.loads((out / "report.json").read_text("utf-8"))


def _sub(tmp_path: Path, site: shapely.Geometry = SITE, toml: str = TOML, **kw) -> Path:
    return write_submission(tmp_path / "sub", site, toml=toml, **kw)


# --------------------------------------------------------------------------- CRS


def test_01_site_without_crs(tmp_path, layers, capsys):
    sub = _sub(tmp_path, site_name="site.shp")
    (sub / "site.prj").unlink()
    refused(sub, layers, capsys, "site.shp", "site", "no coordinate reference system", ".prj")


def test_02_site_with_the_wrong_declared_crs(tmp_path, layers, capsys):
    # WTM metres labelled UTM 16N: x = 500,950 m, y = 300,950 m is at 2.7 N, 87.0 W.
    sub = _sub(tmp_path, crs=26916)
    refused(
        sub,
        layers,
        capsys,
        "site.geojson",
        ": site: ",
        "outside the area covered by the layers",
        "is the declared CRS right?",
    )


def test_03_geographic_dem(tmp_path, data, capsys):
    lay = _layers(tmp_path / "layers", data, "dem_4326")
    refused(_sub(tmp_path), lay, capsys, "dem_4326.tif", "geographic CRS", "gdalwarp")


def test_03b_real_geographic_dem(tmp_path, data, capsys):
    # A window of the USGS Pleasant Lake 40 m DEM, EPSG:4269 (NAD83 geographic): tests/data.
    real = CENTRAL_SANDS / "pleasant_dem40m_clip.tif"
    lay = _layers(tmp_path / "layers", {**data, "real": real}, "real")
    refused(_sub(tmp_path), lay, capsys, "pleasant_dem40m_clip.tif", "geographic CRS")


def test_04_dem_without_crs(tmp_path, data, capsys):
    lay = _layers(tmp_path / "layers", data, "dem_nocrs")
    refused(_sub(tmp_path), lay, capsys, "dem_nocrs.tif", "no coordinate reference system")


# --------------------------------------------------------------------------- DEM units


def test_05_06_vertical_units_heuristic(data):
    # Correct declarations: no warning. The plane at the site centre (2,500 m east of the
    # DEM's west edge): 260 + 0.03 x 2,500 = 335 m = 1,099.1 ft; slope 3 %.
    assert vertical_units_warnings(data["dem_m"], "m", SITE, 3071, max_slope_pct=3.0) == []
    assert vertical_units_warnings(data["dem_ft"], "ft", SITE, 3071, max_slope_pct=3.0) == []
    # 5: metres declared feet: 335 "ft" is below Wisconsin's lowest land (577.5 ft).
    w = vertical_units_warnings(data["dem_m"], "ft", SITE, 3071)
    assert len(w) == 1
    assert "dem_m.tif" in w[0]
    assert "vertical_units = 'ft'" in w[0]
    assert "reads as 335 ft" in w[0]
    # 6: feet declared metres: 1,099.1 "m" = 3,606 ft, above Timms Hill (1,951 ft); the
    # window (site + one cell, one column wider east) has its median 0.6 ft higher.
    w = vertical_units_warnings(data["dem_ft"], "m", SITE, 3071)
    assert len(w) == 1
    median_ft = float(re.search(r"reads as ([\d,]+) ft", w[0]).group(1).replace(",", ""))
    assert median_ft == pytest.approx(335.0 / M_PER_FT / M_PER_FT, abs=5.0)
    # 6 (slope): a 100 % slope in a feet DEM declared metres reads 328 %, above 300 %.
    w = vertical_units_warnings(data["dem_ft_steep"], "m", SITE, 3071, max_slope_pct=328.1)
    assert any("328 %" in x for x in w)


def test_05_units_warning_reaches_report_json(tmp_path, data, capsys):
    lay = _layers(tmp_path / "layers", data, "dem_m", units="ft")
    rep = reviewed(_sub(tmp_path), lay, capsys)
    assert any("are the declared vertical units right" in w for w in rep["warnings"])


# --------------------------------------------------------------------------- geometry


def test_08_invalid_polygon_without_area(tmp_path, layers, capsys):
    x, y = X0 + 1000, Y0 + 1000
    collapsed = shapely.Polygon([(x, y), (x + 10, y), (x + 20, y), (x, y)])
    refused(_sub(tmp_path, collapsed), layers, capsys, "site.geojson", "no area once repaired")


def test_09_empty_geometry(tmp_path, layers, capsys):
    refused(_sub(tmp_path, shapely.Polygon()), layers, capsys, "site.geojson", "empty geometry")


@pytest.mark.parametrize(
    ("geom", "kind"),
    [
        (shapely.Point(X0 + 1000, Y0 + 1000), "Point"),
        (shapely.LineString([(X0 + 1000, Y0 + 1000), (X0 + 1100, Y0 + 1000)]), "LineString"),
    ],
)
def test_10_11_point_or_line(tmp_path, layers, capsys, geom, kind):
    refused(_sub(tmp_path, geom), layers, capsys, "site.geojson", ": site: ", kind, "polygon")


def test_29_site_file_without_features(tmp_path, layers, capsys):
    sub = _sub(tmp_path)
    (sub / "site.geojson").write_text('{"type": "FeatureCollection", "features": []}')
    refused(sub, layers, capsys, "site.geojson", "contains no features")


def test_30_z_polygon_is_measured_in_plan(tmp_path, layers, capsys):
    ring = [(x, y, 250.0 + i) for i, (x, y) in enumerate(SITE.exterior.coords)]
    rep = reviewed(_sub(tmp_path, shapely.Polygon(ring)), layers, capsys)
    assert rep["measures"]["site_area_sqft"] == pytest.approx(SITE_SQFT, abs=0.1)


def test_31_multilayer_geopackage(tmp_path, layers, capsys):
    sub = _sub(tmp_path)
    gpkg = sub / "site.gpkg"
    gpd.GeoDataFrame(geometry=[SITE], crs=3071).to_file(gpkg, layer="site")
    gpd.GeoDataFrame(geometry=[SITE.buffer(5)], crs=3071).to_file(gpkg, layer="other")
    text = (sub / "submission.toml").read_text().replace("site.geojson", "site.gpkg")
    (sub / "submission.toml").write_text(text)
    refused(sub, layers, capsys, "site.gpkg", "has 2 layers", "must hold one")


def test_32_site_too_large_for_a_construction_site(tmp_path, layers, capsys):
    # 20 km x 20 km = 400 km^2 = 154.44 sq mi (1 sq mi = 2.589988 km^2).
    huge = shapely.box(X0 - 9000, Y0 - 9000, X0 + 11000, Y0 + 11000)
    refused(_sub(tmp_path, huge), layers, capsys, "site.geojson", "154.4 square miles", "100")


def test_33_site_symlink_out_of_the_folder(tmp_path, layers, capsys):
    sub = _sub(tmp_path)
    outside = tmp_path / "elsewhere.geojson"
    (sub / "site.geojson").rename(outside)
    (sub / "site.geojson").symlink_to(outside)
    refused(sub, layers, capsys, "submission.toml", "site", "outside the submission folder")


def test_34_unsupported_format(tmp_path, layers, capsys):
    sub = _sub(tmp_path)
    # a CAD drawing: GDAL could open it, but a DXF states no CRS and mixes layers
    (sub / "site.dxf").write_text("0\nSECTION\n2\nENTITIES\n0\nENDSEC\n0\nEOF\n")
    text = (sub / "submission.toml").read_text().replace("site.geojson", "site.dxf")
    (sub / "submission.toml").write_text(text)
    refused(sub, layers, capsys, "site.dxf", "unsupported format '.dxf'")


# --------------------------------------------------------------------------- DEM coverage


def _slope_needs_info(rep: dict) -> None:
    m = rep["measures"]
    assert m["steep_slope_area_sqft"] is None
    assert m["max_slope_pct"] is None
    assert m["downstream"]["reaches_water_within_quarter_mile"] is None
    assert m["site_area_sqft"] == pytest.approx(SITE_SQFT, abs=0.1)  # the rest is measured
    assert any(w.startswith("Slopes not measured") for w in rep["warnings"])
    assert any(w.startswith("Downstream trace") for w in rep["warnings"])
    slope = next(f for f in rep["findings"] if f["rule_id"] == "deerfield.31.06.4.slope")
    assert slope["status"] == "needs_info"  # § 31.06(4) cannot be decided without slopes
    assert rep["classification"]["extraordinary"] is None


def test_12_site_outside_the_dem(tmp_path, data, capsys):
    lay = _layers(tmp_path / "layers", data, "dem_far")
    rep = reviewed(_sub(tmp_path), lay, capsys)
    _slope_needs_info(rep)
    assert "does not cover" in " ".join(rep["warnings"])


def test_13_all_nodata_dem(tmp_path, data, capsys):
    lay = _layers(tmp_path / "layers", data, "dem_nodata")
    rep = reviewed(_sub(tmp_path), lay, capsys)
    _slope_needs_info(rep)


def test_14_truncated_geotiff(tmp_path, data, capsys):
    lay = _layers(tmp_path / "layers", data, "dem_trunc")
    refused(_sub(tmp_path), lay, capsys, "dem_trunc.tif", "truncated")


def test_15_dem_file_missing(tmp_path, data, capsys):
    lay = _layers(tmp_path / "layers", data, "no_such_dem.tif")
    refused(_sub(tmp_path), lay, capsys, "layers.toml", "dem.path", "not found")


# --------------------------------------------------------------------------- shapefiles


@pytest.mark.parametrize("side", [".shx", ".dbf"])
def test_16_17_shapefile_missing_part(tmp_path, layers, capsys, side):
    sub = _sub(tmp_path, site_name="site.shp")
    (sub / f"site{side}").unlink()
    refused(sub, layers, capsys, "site.shp", "site", f"missing its {side}")


# --------------------------------------------------------------------------- submission.toml


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("fill_cubic_yards = 0", 'fill_cubic_yards = "lots"', ["activity.fill_cubic_yards"]),
        ("fill_cubic_yards = 0", "fil_cubic_yards = 0", ["activity.fil_cubic_yards", "unknown"]),
        (
            "pipe_length_ft = 0",
            "pipe_length_ft = 0\nland_division_acres = -2.5",
            ["activity.land_division_acres", "greater than or equal to 0"],
        ),
        (
            "pipe_length_ft = 0",
            "pipe_length_ft = 0\nstart_date = 2026-05-01\nend_date = 2026-04-01",
            ["activity", "before start_date"],
        ),
    ],
    ids=["18-wrong-type", "19-unknown-key", "20-negative-area", "21-dates-out-of-order"],
)
def test_18_21_submission_toml(tmp_path, layers, capsys, old, new, words):
    refused(_sub(tmp_path, toml=TOML.replace(old, new)), layers, capsys, "submission.toml", *words)


@pytest.mark.parametrize(
    ("line", "field", "bound"),
    [
        ("fill_cubic_yards = 1e12", "activity.fill_cubic_yards", "100000000"),
        ("pipe_length_ft = 1e9", "activity.pipe_length_ft", "1000000"),
        ("lots_created = 10_000_000", "activity.lots_created", "100000"),
        ("land_division_acres = 1e6", "activity.land_division_acres", "64000"),
        ("control_cost_usd = 5e13", "activity.control_cost_usd", "10000000000"),
    ],
)
def test_22_absurd_magnitudes(tmp_path, layers, capsys, line, field, bound):
    key = line.split(" =")[0]
    toml = "\n".join(ln for ln in TOML.splitlines() if not ln.startswith(key + " ="))
    toml += "\n" + line + "\n"
    refused(_sub(tmp_path, toml=toml), layers, capsys, "submission.toml", field, bound, "sanity")


def test_22b_absurd_map_scale(tmp_path, layers, capsys):
    toml = TOML + "[site_map]\nscale_ft_per_inch = 83333.0\n"  # 1:1,000,000
    refused(_sub(tmp_path, toml=toml), layers, capsys, "site_map.scale_ft_per_inch", "10000")


def test_23_submission_toml_not_utf8(tmp_path, layers, capsys):
    sub = _sub(tmp_path)
    raw = (sub / "submission.toml").read_bytes().replace(b"Corpus site", b"Caf\xe9 site")
    (sub / "submission.toml").write_bytes(raw)
    refused(sub, layers, capsys, "submission.toml", "not UTF-8")


def test_24_submission_toml_syntax(tmp_path, layers, capsys):
    sub = _sub(tmp_path)
    with open(sub / "submission.toml", "a") as fh:
        fh.write("lots_created = = 3\n")
    refused(sub, layers, capsys, "submission.toml", "invalid TOML", "line")


# --------------------------------------------------------------------------- attribute text


def test_25_geojson_with_latin1_text(tmp_path, layers, capsys):
    sub = _sub(tmp_path)
    raw = (sub / "site.geojson").read_bytes().replace(b'"site"', b'"Caf\xe9 \xd6sterreich"')
    (sub / "site.geojson").write_bytes(raw)
    refused(sub, layers, capsys, "site.geojson", "site", "not UTF-8", "0xe9")


def test_26_shapefile_with_latin1_text_and_no_cpg(tmp_path, layers, capsys):
    sub = _sub(tmp_path)
    gpd.GeoDataFrame({"name": ["Café Österreich"]}, geometry=[SITE], crs=3071).to_file(
        sub / "site.shp", encoding="latin1"
    )
    (sub / "site.cpg").unlink(missing_ok=True)  # as older software writes it
    assert b"Caf\xe9" in (sub / "site.dbf").read_bytes()
    text = (sub / "submission.toml").read_text().replace("site.geojson", "site.shp")
    (sub / "submission.toml").write_text(text)
    rep = reviewed(sub, layers, capsys)
    assert rep["measures"]["site_area_sqft"] == pytest.approx(SITE_SQFT, abs=0.1)


# --------------------------------------------------------------------------- zip submissions


def _zip_batch(tmp_path: Path, layers: Path, capsys, member: str, payload: bytes) -> dict:
    batch = tmp_path / "batch"
    batch.mkdir()
    with zipfile.ZipFile(batch / "evil.zip", "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(member, payload)
    out = tmp_path / "out"
    # exit 3: the batch finished, but a submission became an error row (issue 15)
    assert main(["review", str(batch), "--out", str(out), "--layers", str(layers)]) == 3
    printed, err = capsys.readouterr()
    assert "1 errors" in printed
    assert err.startswith("georeview: error: 1 of 1 submissions could not be reviewed")
    import csv

    with open(out / "summary.csv", newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["status"] == "error"
    assert row["source"] == "evil.zip"
    return row


def test_27_zip_entry_escaping_the_folder(tmp_path, layers, capsys):
    row = _zip_batch(tmp_path, layers, capsys, "../../escaped.txt", b"x")
    assert "evil.zip" in row["error"]
    assert "outside the folder" in row["error"]
    assert not (tmp_path / "escaped.txt").exists()
    assert not (tmp_path.parent / "escaped.txt").exists()


def test_28_zip_expanding_past_the_limit(tmp_path, layers, capsys, monkeypatch):
    monkeypatch.setenv("GEOREVIEW_MAX_ZIP_BYTES", "1000000")
    row = _zip_batch(tmp_path, layers, capsys, "sub/zeros.bin", b"\0" * 3_000_000)
    assert "evil.zip" in row["error"]
    assert "exceeds the limit of 1,000,000 bytes" in row["error"]


# --------------------------------------------------------------------------- limits


def test_limit_raster_cells(tmp_path, layers, data, capsys, monkeypatch):
    # The site's slope window is 10 x 10 cells + margin; the downstream window is far larger.
    monkeypatch.setenv("GEOREVIEW_MAX_RASTER_CELLS", "5000")
    with pytest.raises(LimitError, match="GEOREVIEW_MAX_RASTER_CELLS"):
        read_dem_window(data["dem_m"], "m", SITE.buffer(500), 3071)
    assert read_dem_window(data["dem_m"], "m", SITE, 3071).elev.size < 5000
    refused(_sub(tmp_path), layers, capsys, "dem_m.tif", "dem", "cells", "5,000")


def test_limit_features_per_layer(tmp_path, monkeypatch):
    path = tmp_path / "three.gpkg"
    gpd.GeoDataFrame(geometry=[SITE, SITE.buffer(1), SITE.buffer(2)], crs=3071).to_file(path)
    assert len(read_layer(path, gpd.GeoSeries(crs=3071).crs)) == 3
    monkeypatch.setenv("GEOREVIEW_MAX_LAYER_FEATURES", "2")
    with pytest.raises(LimitError, match=r"3 features exceed the limit of 2"):
        read_layer(path, gpd.GeoSeries(crs=3071).crs, label="wetlands")


def test_limit_features_per_submission_file(tmp_path, layers, capsys, monkeypatch):
    monkeypatch.setenv("GEOREVIEW_MAX_SUBMISSION_FEATURES", "2")
    sub = _sub(tmp_path)
    parts = [
        shapely.box(X0 + 900 + 30 * i, Y0 + 900, X0 + 920 + 30 * i, Y0 + 920) for i in range(3)
    ]
    gpd.GeoDataFrame(geometry=parts, crs=3071).to_file(sub / "site.geojson")
    line = refused(sub, layers, capsys, "site.geojson", "site", "3 features exceed the limit of 2")
    # the variable the message names is the one that lifts the limit (it named
    # GEOREVIEW_MAX_LAYER_FEATURES, which raised as told changed nothing)
    assert "GEOREVIEW_MAX_SUBMISSION_FEATURES" in line
    assert "GEOREVIEW_MAX_LAYER_FEATURES" not in line
    monkeypatch.setenv("GEOREVIEW_MAX_SUBMISSION_FEATURES", "3")
    capsys.readouterr()
    assert _run(sub, layers, sub.parent / "out") == 0, capsys.readouterr().err


def test_limit_upload_bytes(tmp_path, layers, capsys, monkeypatch):
    sub = _sub(tmp_path)
    size = (sub / "site.geojson").stat().st_size
    monkeypatch.setenv("GEOREVIEW_MAX_UPLOAD_BYTES", str(size - 1))
    refused(sub, layers, capsys, "site.geojson", "site", f"{size:,} bytes exceed the upload limit")


def test_limit_toml_bytes(tmp_path, layers, capsys, monkeypatch):
    monkeypatch.setenv("GEOREVIEW_MAX_TOML_BYTES", "64")
    refused(_sub(tmp_path), layers, capsys, "submission.toml", "GEOREVIEW_MAX_TOML_BYTES")


def test_limit_zip_members(tmp_path, monkeypatch):
    from georeview.pipeline.zipsafe import extract_zip

    z = tmp_path / "many.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for i in range(5):
            zf.writestr(f"f{i}.txt", "x")
    monkeypatch.setenv("GEOREVIEW_MAX_ZIP_MEMBERS", "4")
    with pytest.raises(LimitError, match="5 entries exceed the limit of 4"):
        extract_zip(z, tmp_path / "d")


def test_limit_variable_that_is_not_a_number(tmp_path, layers, capsys, monkeypatch):
    monkeypatch.setenv("GEOREVIEW_MAX_UPLOAD_BYTES", "lots")
    refused(_sub(tmp_path), layers, capsys, "GEOREVIEW_MAX_UPLOAD_BYTES", "not a number")
