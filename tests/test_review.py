"""End-to-end reviews of small submissions built in tmp folders, and bad input.

Areas are checked against hand-worked geometry: a rectangle of W x H international
feet has W*H square feet, whatever CRS the file is written in.
"""

from __future__ import annotations

import json
import subprocess
import sys

import geopandas as gpd
import pytest
import shapely
from _build import box_ft, deerfield_layers, write_submission

from georeview.cli import main
from georeview.pipeline.review import review
from georeview.units import SQFT_PER_ACRE

TOML = """
municipality = "deerfield"
name = "Test site"
[activity]
kinds = ["building"]
fill_cubic_yards = 0
pipe_length_ft = 0
on_platted_lot = false
"""


@pytest.fixture(scope="module")
def layers(tmp_path_factory):
    return deerfield_layers(tmp_path_factory.mktemp("layers") / "deerfield")


@pytest.fixture(scope="module")
def centre(layers):
    v = gpd.read_file(layers / "boundary.gpkg").to_crs(3071).geometry.iloc[0]
    return shapely.point_on_surface(v)


def run_cli(*args):
    return main([*map(str, args)])


@pytest.mark.parametrize(("w", "h"), [(50.0, 80.0), (208.71, 208.71), (300.0, 726.0)])
def test_area_hand_worked(tmp_path, layers, centre, w, h):
    box = box_ft(centre.x, centre.y, w, h)
    sub = write_submission(tmp_path / "s", box, toml=TOML, disturbance=box)
    r = review(sub, layers)
    # W x H square feet, to 1e-6 relative (float rounding of the metre coordinates).
    assert r.areas.site_area_sqft == pytest.approx(w * h, rel=1e-6)
    assert r.areas.disturbed_area_acres == pytest.approx(w * h / SQFT_PER_ACRE, rel=1e-6)


def test_area_is_the_same_from_a_geographic_file(tmp_path, layers, centre):
    # The same 200 ft x 200 ft square written in EPSG:4326 and in UTM 16N (EPSG:26916)
    # measures 40,000 sq ft after reprojection to EPSG:3071 (within 0.05 %: the
    # corners are reprojected exactly, the edges are straight in each CRS).
    sq = box_ft(centre.x, centre.y, 200.0, 200.0)
    for crs in (4326, 26916):
        geom = gpd.GeoSeries([sq], crs=3071).to_crs(crs).iloc[0]
        sub = write_submission(tmp_path / f"s{crs}", geom, toml=TOML, crs=crs)
        r = review(sub, layers)
        assert r.areas.site_area_sqft == pytest.approx(40_000.0, rel=5e-4)


@pytest.mark.parametrize(("sqft", "regulated"), [(3999.0, False), (4001.0, True)])
def test_threshold_through_geometry(tmp_path, layers, centre, sqft, regulated):
    side = sqft**0.5
    box = box_ft(centre.x, centre.y, side, side)
    sub = write_submission(tmp_path / "s", box, toml=TOML, disturbance=box)
    r = review(sub, layers)
    assert r.judgement.regulated is regulated


def test_cli_writes_three_reports(tmp_path, layers, centre):
    box = box_ft(centre.x, centre.y, 100, 100)
    sub = write_submission(tmp_path / "s", box, toml=TOML, disturbance=box)
    out = tmp_path / "out"
    assert run_cli("review", sub, "--out", out, "--layers", layers, "-q") == 0
    report = json.loads((out / "report.json").read_text())
    assert report["schema_version"] == 1
    assert report["classification"] == {
        "regulated": True,
        "category": "minor",
        "category_label": report["classification"]["category_label"],
        "larger_site": False,
        "extraordinary": None,
        "reached": True,
        "exempt": False,
    }
    assert report["measures"]["disturbed_area_sqft"] == pytest.approx(10_000.0, abs=0.1)
    for f in report["findings"]:
        assert {"rule_id", "citation", "status", "message", "measured", "limit"} <= set(f)
        assert f["status"] in ("pass", "fail", "needs_info", "not_applicable")
    assert (out / "report.html").read_text().count("Regulated by") == 1
    assert "leaflet" in (out / "map.html").read_text().lower()
    # Refuses to overwrite without --overwrite; replaces with it.
    assert run_cli("review", sub, "--out", out, "--layers", layers, "-q") == 2
    assert run_cli("review", sub, "--out", out, "--layers", layers, "-q", "--overwrite") == 0


def test_invalid_polygon_is_repaired_and_reported(tmp_path, layers, centre):
    x, y = centre.x, centre.y
    bowtie = shapely.Polygon([(x, y), (x + 40, y + 40), (x + 40, y), (x, y + 40), (x, y)])
    sub = write_submission(tmp_path / "s", bowtie, toml=TOML)
    r = review(sub, layers)
    d = r.to_dict()
    assert d["repairs"]
    assert "Self-intersection" in d["repairs"][0]["reason"]
    # The bow-tie's two triangles: 2 x (40 m x 20 m / 2) = 800 m^2.
    assert r.areas.site_area_sqft == pytest.approx(800 / 0.3048**2, rel=1e-9)


def _bad(tmp_path, layers, capsys, *, expect, **kw):
    sub = write_submission(tmp_path / "bad", **kw)
    rc = run_cli("review", sub, "--out", tmp_path / "out", "--layers", layers)
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("georeview: error: ")
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    for word in expect:
        assert word in err, err
    return err


def test_unknown_key(tmp_path, layers, centre, capsys):
    _bad(
        tmp_path,
        layers,
        capsys,
        site=box_ft(centre.x, centre.y, 99, 99),
        toml=TOML + "fil_cubic_yards = 3\n",
        expect=["submission.toml", "fil_cubic_yards"],
    )


def test_wrong_type(tmp_path, layers, centre, capsys):
    _bad(
        tmp_path,
        layers,
        capsys,
        site=box_ft(centre.x, centre.y, 99, 99),
        toml=TOML.replace("fill_cubic_yards = 0", 'fill_cubic_yards = "lots"'),
        expect=["submission.toml", "activity.fill_cubic_yards"],
    )


def test_negative_value(tmp_path, layers, centre, capsys):
    _bad(
        tmp_path,
        layers,
        capsys,
        site=box_ft(centre.x, centre.y, 99, 99),
        toml=TOML.replace("pipe_length_ft = 0", "pipe_length_ft = -10"),
        expect=["activity.pipe_length_ft", "greater than or equal to 0"],
    )


def test_point_where_polygon_belongs(tmp_path, layers, centre, capsys):
    _bad(
        tmp_path,
        layers,
        capsys,
        site=centre,
        toml=TOML,
        expect=["site.geojson", "site", "Point", "polygon"],
    )


def test_line_where_polygon_belongs(tmp_path, layers, centre, capsys):
    line = shapely.LineString([(centre.x, centre.y), (centre.x + 50, centre.y)])
    _bad(tmp_path, layers, capsys, site=line, toml=TOML, expect=["LineString", "polygon"])


def test_empty_geometry(tmp_path, layers, capsys):
    _bad(
        tmp_path,
        layers,
        capsys,
        site=shapely.Polygon(),
        toml=TOML,
        expect=["site.geojson", "empty"],
    )


def test_missing_crs(tmp_path, layers, centre, capsys):
    sub = write_submission(
        tmp_path / "bad", box_ft(centre.x, centre.y, 99, 99), toml=TOML, site_name="site.shp"
    )
    (sub / "site.prj").unlink()
    rc = run_cli("review", sub, "--out", tmp_path / "out", "--layers", layers)
    err = capsys.readouterr().err
    assert rc == 2
    assert "site.shp" in err
    assert "coordinate reference system" in err


def test_shapefile_missing_dbf(tmp_path, layers, centre, capsys):
    sub = write_submission(
        tmp_path / "bad", box_ft(centre.x, centre.y, 99, 99), toml=TOML, site_name="site.shp"
    )
    (sub / "site.dbf").unlink()
    assert run_cli("review", sub, "--out", tmp_path / "out", "--layers", layers) == 2
    assert ".dbf" in capsys.readouterr().err


def test_missing_geometry_file(tmp_path, layers, centre, capsys):
    sub = write_submission(tmp_path / "bad", box_ft(centre.x, centre.y, 99, 99), toml=TOML)
    (sub / "site.geojson").unlink()
    assert run_cli("review", sub, "--out", tmp_path / "out", "--layers", layers) == 2
    assert "not found" in capsys.readouterr().err


def test_path_escaping_the_folder(tmp_path, layers, centre, capsys):
    sub = write_submission(tmp_path / "bad", box_ft(centre.x, centre.y, 99, 99), toml=TOML)
    text = (sub / "submission.toml").read_text().replace('"site.geojson"', '"../site.geojson"')
    (sub / "submission.toml").write_text(text)
    assert run_cli("review", sub, "--out", tmp_path / "out", "--layers", layers) == 2
    assert "outside the submission folder" in capsys.readouterr().err


def test_corrupt_geojson(tmp_path, layers, centre, capsys):
    sub = write_submission(tmp_path / "bad", box_ft(centre.x, centre.y, 99, 99), toml=TOML)
    (sub / "site.geojson").write_text('{"type": "FeatureCollection", "features": [')
    assert run_cli("review", sub, "--out", tmp_path / "out", "--layers", layers) == 2
    assert "site.geojson" in capsys.readouterr().err


def test_dates_out_of_order(tmp_path, layers, centre, capsys):
    _bad(
        tmp_path,
        layers,
        capsys,
        site=box_ft(centre.x, centre.y, 99, 99),
        toml=TOML + "start_date = 2026-05-01\nend_date = 2026-04-01\n",
        expect=["activity", "before start_date"],
    )


def test_municipality_mismatch(tmp_path, layers, centre, capsys):
    _bad(
        tmp_path,
        layers,
        capsys,
        site=box_ft(centre.x, centre.y, 99, 99),
        toml=TOML.replace('"deerfield"', '"somers"'),
        expect=["municipality", "somers"],
    )


def test_bad_input_never_prints_a_traceback(tmp_path, layers, centre):
    # Through a real process: exit code 2 and one line on stderr.
    sub = write_submission(tmp_path / "bad", centre, toml=TOML)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "georeview",
            "review",
            str(sub),
            "--out",
            str(tmp_path / "o"),
            "--layers",
            str(layers),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("steep_sqft", "stated", "expected"),
    [
        (0.0, None, True),  # nothing to minimise
        (500.0, None, None),  # steep disturbance, plan silent: needs_info
        (500.0, "No grading on the 25 % bank", True),
        (500.0, False, False),
        (None, None, None),  # slopes unknown (no DEM)
    ],
)
def test_steep_slopes_addressed(steep_sqft, stated, expected):
    # Somers 17.08(C)(3)(c): "Minimization of land disturbing construction activity on
    # slopes of 20% or more."
    from georeview.facts.build import facts_frame, record_of

    frame = facts_frame(
        {"steep_slope_area_sqft": steep_sqft},
        {},
        n=1,
        extra={"plan.steep_slope_minimization": stated},
    )
    assert record_of(frame)["steep_slopes_addressed"] is expected


def test_steep_slopes_addressed_on_no_rows():
    # A screening partition whose rows are all error rows reaches the facts builder with
    # no rows: the fact is an empty boolean column, not a float one that cannot be or-ed.
    import numpy as np

    from georeview.facts.build import facts_frame

    frame = facts_frame(
        {"steep_slope_area_sqft": np.array([], dtype=float)},
        {},
        n=0,
        extra={"plan.steep_slope_minimization": None},
    )
    assert len(frame["steep_slopes_addressed"]) == 0
    assert str(frame["steep_slopes_addressed"].dtype) == "boolean"
