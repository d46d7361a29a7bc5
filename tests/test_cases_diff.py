"""What changed between two review rounds (georeview.cases.diff).

The geometry is worked by hand: squares of known side in a metre CRS (EPSG:32616, UTM 16N)
and in a US-survey-foot CRS (EPSG:2289, NAD83 / Wisconsin South (ftUS), whose axis unit
pyproj gives as 1200/3937 m), their symmetric difference and centroid shift computed in the
comments. 1 ft = 0.3048 m exactly (1959 agreement), so 1 sq m = 1 / 0.09290304 sq ft.
The realistic pair is sample_sites/somers_village_small (no DEM in Somers's layers, so the
reviews run without terrain and take about a second each), reviewed as sent and as a first
round with a larger disturbance and no tracking control.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import geopandas as gpd
import pyproj
import pytest
import shapely

import georeview
from georeview.cases.diff import (
    MOVED_TOLERANCE_SQFT,
    RoundSnapshot,
    diff_lines,
    diff_rounds,
)
from georeview.errors import CRSError, InputError
from georeview.report import write_reports

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_sites" / "somers_village_small"
SOMERS_LAYERS = ROOT / "layers" / "somers"

M_PER_FT = 0.3048  # international foot, exact
M_PER_US_FT = 1200 / 3937  # US survey foot, exact
SQM_TO_SQFT = 1 / M_PER_FT**2  # 10.7639104... sq ft per sq m


def _report(findings=(), measures=None, outcome="approve") -> dict:
    """A report.json reduced to what the diff reads."""
    return {
        "summary": {"outcome": {"code": outcome}},
        "findings": list(findings),
        "measures": measures or {},
    }


def _finding(rule_id: str, status: str, message: str = "", citation: str = "Sec. 9(1)") -> dict:
    return {
        "rule_id": rule_id,
        "citation": citation,
        "title": f"Rule {rule_id}",
        "status": status,
        "message": message,
        "measured": None,
        "limit": None,
        "evidence": ["declared"],
    }


def _gpkg(path: Path, crs: str, **layers: shapely.Geometry) -> Path:
    """A layers.gpkg with one polygon per named layer, in ``crs``."""
    for name, geom in layers.items():
        gpd.GeoDataFrame(geometry=[geom], crs=crs).to_file(path, layer=name, driver="GPKG")
    return path


def _round(number: int, gpkg: Path | None = None, report: dict | None = None) -> RoundSnapshot:
    return RoundSnapshot(number=number, report=report or _report(), files={}, gpkg=gpkg)


def _sha256_files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# --------------------------------------------------------------------------- geometry


def test_crs_units_of_the_test_crss():
    # the premises of the hand-worked numbers below: 32616 in metres, 2289 in US survey feet
    assert pyproj.CRS.from_epsg(32616).axis_info[0].unit_conversion_factor == 1.0
    ftus = pyproj.CRS.from_epsg(2289).axis_info[0]
    assert ftus.unit_name == "US survey foot"
    assert ftus.unit_conversion_factor == pytest.approx(M_PER_US_FT, rel=1e-15)


def test_square_moved_in_metres(tmp_path):
    # before: 10 m x 10 m; after: the same square 3 m east.
    # Each has 100 sq m = 1,076.391 sq ft. They overlap on 7 m x 10 m, so the symmetric
    # difference is two 3 m x 10 m strips: 60 sq m = 60 / 0.09290304 = 645.8346 sq ft.
    # The centroid moves 3 m = 3 / 0.3048 = 9.842520 ft.
    x0, y0 = 500_000.0, 4_700_000.0
    before = _gpkg(
        tmp_path / "a.gpkg", "EPSG:32616", disturbance=shapely.box(x0, y0, x0 + 10, y0 + 10)
    )
    after = _gpkg(
        tmp_path / "b.gpkg", "EPSG:32616", disturbance=shapely.box(x0 + 3, y0, x0 + 13, y0 + 10)
    )
    (g,) = diff_rounds(_round(1, before), _round(2, after))["geometry"]
    assert g["layer"] == "disturbance"
    assert g["area_before_sqft"] == pytest.approx(1076.391042, rel=1e-9)
    assert g["area_after_sqft"] == pytest.approx(1076.391042, rel=1e-9)
    assert g["moved_sqft"] == pytest.approx(645.834625, rel=1e-9)
    assert g["centroid_shift_ft"] == pytest.approx(9.842520, rel=1e-7)
    assert g["changed"] is True


def test_square_moved_in_us_survey_feet(tmp_path):
    # before: 100 x 100 ftUS; after: the same square 40 ftUS east and 30 ftUS north.
    # Overlap 60 x 70 = 4,200 sq ftUS, so the symmetric difference is
    # 2 x (10,000 - 4,200) = 11,600 sq ftUS. One ftUS is 1200/3937 / 0.3048 =
    # 1.000002000004 ft, so 11,600 sq ftUS = 11,600.046400 sq ft (metres assumed would give
    # 11,600 sq m = 124,861 sq ft). The centroid moves sqrt(40^2 + 30^2) = 50 ftUS =
    # 50.000100 ft.
    ft_per_ftus = M_PER_US_FT / M_PER_FT
    x0, y0 = 2_000_000.0, 500_000.0
    before = _gpkg(tmp_path / "a.gpkg", "EPSG:2289", site=shapely.box(x0, y0, x0 + 100, y0 + 100))
    after = _gpkg(
        tmp_path / "b.gpkg", "EPSG:2289", site=shapely.box(x0 + 40, y0 + 30, x0 + 140, y0 + 130)
    )
    (g,) = diff_rounds(_round(1, before), _round(2, after))["geometry"]
    assert g["layer"] == "site"
    assert g["area_before_sqft"] == pytest.approx(10_000 * ft_per_ftus**2, rel=1e-12)
    assert g["area_before_sqft"] == pytest.approx(10_000.040000, abs=1e-5)
    assert g["moved_sqft"] == pytest.approx(11_600.046400, abs=1e-5)
    assert g["centroid_shift_ft"] == pytest.approx(50.000100, abs=1e-6)
    assert g["changed"] is True


def test_reprojected_same_polygon_has_not_moved(tmp_path):
    # the same 100 x 50 ftUS rectangle, the second round's layers.gpkg in WTM metres
    # (EPSG:3070, same NAD83 datum): reprojected back to the first round's CRS it covers the
    # same ground. (With EPSG:3071, NAD83(HARN), PROJ's datum steps there and back leave
    # 0.3 mm and 0.07 sq ft, and with shift grids installed could leave more: not a test.)
    x0, y0 = 2_000_000.0, 500_000.0
    rect = shapely.box(x0, y0, x0 + 100, y0 + 50)
    before = _gpkg(tmp_path / "a.gpkg", "EPSG:2289", disturbance=rect)
    in_wtm = gpd.GeoSeries([rect], crs="EPSG:2289").to_crs("EPSG:3070").iloc[0]
    after = _gpkg(tmp_path / "b.gpkg", "EPSG:3070", disturbance=in_wtm)
    (g,) = diff_rounds(_round(1, before), _round(2, after))["geometry"]
    # 5,000 sq ftUS = 5,000.020000 sq ft on both sides, measured in the first round's CRS
    assert g["area_before_sqft"] == pytest.approx(5_000.020000, abs=1e-5)
    assert g["area_after_sqft"] == pytest.approx(5_000.020000, abs=1e-3)
    assert g["moved_sqft"] < 1e-3 < MOVED_TOLERANCE_SQFT
    assert g["centroid_shift_ft"] < 1e-6
    assert g["changed"] is False


def test_layer_missing_in_one_round_is_skipped(tmp_path):
    x0, y0 = 500_000.0, 4_700_000.0
    square = shapely.box(x0, y0, x0 + 10, y0 + 10)
    before = _gpkg(tmp_path / "a.gpkg", "EPSG:32616", site=square, disturbance=square)
    after = _gpkg(tmp_path / "b.gpkg", "EPSG:32616", disturbance=square)
    geometry = diff_rounds(_round(1, before), _round(2, after))["geometry"]
    assert [g["layer"] for g in geometry] == ["disturbance"]
    assert geometry[0]["moved_sqft"] == 0.0
    # a round without layers.gpkg compares no geometry
    assert diff_rounds(_round(1, before), _round(2, None))["geometry"] == []


def test_geographic_layer_is_refused(tmp_path):
    before = _gpkg(tmp_path / "a.gpkg", "EPSG:4326", site=shapely.box(-89, 43, -88.999, 43.001))
    with pytest.raises(CRSError, match="not a projected CRS"):
        diff_rounds(_round(1, before), _round(2, before))


# --------------------------------------------------------------------------- files


def test_files_added_removed_replaced():
    before = {"site.gpkg": "a" * 64, "submission.toml": "b" * 64, "plan.pdf": "c" * 64}
    after = {"site.gpkg": "a" * 64, "submission.toml": "d" * 64, "sheets/c-3.pdf": "e" * 64}
    diff = diff_rounds(RoundSnapshot(1, _report(), before), RoundSnapshot(2, _report(), after))
    assert diff["files"] == {
        "added": ["sheets/c-3.pdf"],
        "removed": ["plan.pdf"],
        "replaced": ["submission.toml"],
        "unchanged": 1,
    }


# --------------------------------------------------------------------------- findings


def test_finding_status_changed_new_and_gone():
    before = _report(
        [
            _finding("v.a", "pass"),
            _finding("v.b", "needs_info", "Tracking pad not shown."),
            _finding("v.c", "fail"),
        ],
        outcome="return_to_applicant",
    )
    after = _report(
        [
            _finding("v.d", "needs_info", "New rule."),
            _finding("v.b", "pass", "Shown on sheet C-3."),
            _finding("v.a", "pass", "Reworded, same status."),
        ],
        outcome="approve",
    )
    diff = diff_rounds(_round(1, report=before), _round(2, report=after))
    assert diff["outcome"] == {"before": "return_to_applicant", "after": "approve"}
    assert diff["findings"] == {
        "changed": [
            {
                "rule_id": "v.b",
                "citation": "Sec. 9(1)",
                "title": "Rule v.b",
                "before": "needs_info",
                "after": "pass",
                "message_before": "Tracking pad not shown.",
                "message_after": "Shown on sheet C-3.",
            }
        ],
        "new": [
            {
                "rule_id": "v.d",
                "citation": "Sec. 9(1)",
                "title": "Rule v.d",
                "status": "needs_info",
                "message": "New rule.",
            }
        ],
        "gone": [
            {
                "rule_id": "v.c",
                "citation": "Sec. 9(1)",
                "title": "Rule v.c",
                "status": "fail",
                "message": "",
            }
        ],
        "unchanged": 1,
    }


def test_rule_judged_twice_is_an_error():
    twice = _report([_finding("v.a", "pass"), _finding("v.a", "fail")])
    with pytest.raises(InputError, match="two findings"):
        diff_rounds(_round(1, report=twice), _round(2))


# --------------------------------------------------------------------------- measures

MEASURES_BEFORE = {
    "site_area_sqft": 32_291.7,
    "disturbed_area_sqft": 500.0,
    "disturbed_area_acres": 0.0115,
    "max_slope_pct": 12.5,
    "floodway_present": False,
    "downstream": {
        "distance_ft": 800.0,
        "receiving_feature": "Creek A",
        "discharge_points": [{"x": 1.0, "y": 2.0}, {"x": 3.0, "y": 4.0}],
    },
    "peak_flow_cfs": {"2yr": {"pre": 1.0, "post": 1.5}},
    "soil_loss_tons_per_acre_year": None,
    "slope": {"n_cells": 16},
}
MEASURES_AFTER = {
    "site_area_sqft": 32_291.7 * (1 + 1e-9),  # float noise: not a change
    "disturbed_area_sqft": 450.0,
    "disturbed_area_acres": 0.0115,
    "max_slope_pct": None,  # became null
    "floodway_present": True,  # a bool: before and after, no change number
    "downstream": {
        "distance_ft": 760.5,
        "receiving_feature": "Creek B",
        "discharge_points": [{"x": 1.0, "y": 2.0}, {"x": 3.0, "y": 4.0}, {"x": 5.0, "y": 6.0}],
    },
    "peak_flow_cfs": {"2yr": {"pre": 1.25, "post": 1.5 + 1e-12}},
    "soil_loss_tons_per_acre_year": 3.2,  # became non-null
    "slope": {"n_cells": 16.0},  # the same number written as a float
}


def test_measures_that_moved_with_units():
    diff = diff_rounds(
        _round(1, report=_report(measures=MEASURES_BEFORE)),
        _round(2, report=_report(measures=MEASURES_AFTER)),
    )
    assert diff["measures"] == [
        {
            "name": "disturbed_area_sqft",
            "before": 500.0,
            "after": 450.0,
            "change": -50.0,
            "units": "sq ft",
        },
        {
            "name": "downstream.discharge_points.count",
            "before": 2,
            "after": 3,
            "change": 1,
            "units": None,
        },
        {
            "name": "downstream.distance_ft",
            "before": 800.0,
            "after": 760.5,
            "change": -39.5,
            "units": "ft",
        },
        {
            "name": "downstream.receiving_feature",
            "before": "Creek A",
            "after": "Creek B",
            "change": None,
            "units": None,
        },
        {"name": "floodway_present", "before": False, "after": True, "change": None, "units": None},
        {"name": "max_slope_pct", "before": 12.5, "after": None, "change": None, "units": "%"},
        # the parent's name gives the units of its leaves
        {
            "name": "peak_flow_cfs.2yr.pre",
            "before": 1.0,
            "after": 1.25,
            "change": 0.25,
            "units": "cfs",
        },
        {
            "name": "soil_loss_tons_per_acre_year",
            "before": None,
            "after": 3.2,
            "change": None,
            "units": None,
        },
    ]


def test_float_noise_is_not_a_change():
    noisy = {
        "site_area_sqft": 29_061.4 * (1 + 1e-9),
        "site_area_acres": 0.6672 * (1 - 1e-9),
        "steep_slope_area_sqft": 1e-13,  # an overlay's leftover where nothing is steep
        "peak_flow_cfs": {"1yr": {"pre": 7.39 + 1e-14}},
    }
    clean = {
        "site_area_sqft": 29_061.4,
        "site_area_acres": 0.6672,
        "steep_slope_area_sqft": 0.0,
        "peak_flow_cfs": {"1yr": {"pre": 7.39}},
    }
    diff = diff_rounds(
        _round(1, report=_report(measures=clean)), _round(2, report=_report(measures=noisy))
    )
    assert diff["measures"] == []
    # a real change of one part in ten thousand still counts
    clean_moved = {**clean, "site_area_sqft": 29_061.4 * (1 + 1e-4)}
    diff = diff_rounds(
        _round(1, report=_report(measures=clean)), _round(2, report=_report(measures=clean_moved))
    )
    assert [m["name"] for m in diff["measures"]] == ["site_area_sqft"]


# --------------------------------------------------------------------------- lines


def test_lines_say_each_change_in_words():
    before = _report(
        [_finding("v.b", "needs_info", "Not shown.")],
        measures=MEASURES_BEFORE,
        outcome="return_to_applicant",
    )
    after = _report([_finding("v.b", "pass", "Shown on sheet C-3.")], measures=MEASURES_AFTER)
    diff = diff_rounds(
        RoundSnapshot(1, before, {"site.gpkg": "a" * 64}),
        RoundSnapshot(2, after, {"site.gpkg": "b" * 64, "plan.pdf": "c" * 64}),
    )
    lines = diff_lines(json.loads(json.dumps(diff)))  # as read back from JSON
    assert lines[0] == "Recommendation: return to applicant before, approve now."
    assert lines[1] == (
        "Finding Sec. 9(1) Rule v.b (v.b): needs information before, pass now. Shown on sheet C-3."
    )
    assert (
        "Disturbed area (disturbed_area_sqft): 500 sq ft before, 450 sq ft now (-50 sq ft)."
        in lines
    )
    assert (
        "Number of downstream discharge points (downstream.discharge_points.count): "
        "2 before, 3 now (+1)." in lines
    )
    assert "Max slope (max_slope_pct): 12.5 % before, none now." in lines
    assert "Floodway present (floodway_present): no before, yes now." in lines
    assert lines[-2:] == ["File added: plan.pdf", "File replaced (new contents): site.gpkg"]
    assert len(lines) == 2 + len(diff["measures"]) + 2


def test_no_change_is_one_line():
    same = RoundSnapshot(3, _report([_finding("v.a", "pass")]), {"site.gpkg": "a" * 64})
    diff = diff_rounds(same, RoundSnapshot(4, same.report, same.files))
    assert diff["findings"]["unchanged"] == 1
    assert diff_lines(diff) == ["No change from round 3 to round 4."]


# --------------------------------------------------------------------------- a real pair


def _review_round(folder: Path, out: Path, number: int) -> RoundSnapshot:
    review = georeview.review(folder, SOMERS_LAYERS, with_terrain=False)
    write_reports(review, out, with_map=False)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return RoundSnapshot(number, report, _sha256_files(folder), out / "layers.gpkg")


@pytest.fixture(scope="module")
def somers_pair(tmp_path_factory) -> tuple[RoundSnapshot, RoundSnapshot]:
    """Round 1 disturbs 40 m x 34 m and leaves out the tracking control; round 2 is the
    sample as shipped: 30 m x 34 m (x 694,985-695,015, y 244,783-244,817, EPSG:3071) with
    its tracking pad."""
    tmp = tmp_path_factory.mktemp("somers_rounds")
    first = tmp / "round1"
    shutil.copytree(SAMPLE, first)
    toml = first / "submission.toml"
    text = toml.read_text(encoding="utf-8")
    line = 'tracking = "Stone tracking pad at the single entrance (Sheet C-3)"\n'
    assert text.count(line) == 1
    toml.write_text(text.replace(line, ""), encoding="utf-8")
    disturbance = gpd.read_file(first / "disturbance.gpkg")
    # 10 m further east, to the site's east edge (695,025)
    disturbance["geometry"] = [shapely.box(694_985, 244_783, 695_025, 244_817)]
    (first / "disturbance.gpkg").unlink()
    disturbance.to_file(first / "disturbance.gpkg", driver="GPKG")
    second = tmp / "round2"
    shutil.copytree(SAMPLE, second)
    return (
        _review_round(first, tmp / "out1", 1),
        _review_round(second, tmp / "out2", 2),
    )


def test_real_resubmission(somers_pair):
    diff = diff_rounds(*somers_pair)
    assert list(diff) == [
        "from_round",
        "to_round",
        "outcome",
        "findings",
        "measures",
        "geometry",
        "files",
    ]
    assert (diff["from_round"], diff["to_round"]) == (1, 2)
    assert diff["outcome"] == {"before": "disapprove", "after": "awaiting_village"}
    changed = {f["rule_id"]: f for f in diff["findings"]["changed"]}
    tracking = changed["somers.17.07.B.1"]
    assert (tracking["before"], tracking["after"]) == ("fail", "pass")
    assert tracking["citation"] == next(
        f["citation"]
        for f in somers_pair[1].report["findings"]
        if f["rule_id"] == "somers.17.07.B.1"
    )
    assert diff["findings"]["new"] == diff["findings"]["gone"] == []
    # 1,360 sq m -> 1,020 sq m: 14,638.9 -> 10,979.2 sq ft as report.json rounds them,
    # the change exact in those decimals
    measures = {m["name"]: m for m in diff["measures"]}
    area = measures["disturbed_area_sqft"]
    assert (area["before"], area["after"], area["change"], area["units"]) == (
        14_638.9,
        10_979.2,
        -3_659.7,
        "sq ft",
    )
    assert measures["disturbed_area_acres"]["units"] == "acres"
    assert "site_area_sqft" not in measures
    site, dist = diff["geometry"]
    assert site["layer"] == "site"
    assert site["moved_sqft"] == pytest.approx(0.0, abs=1e-6)
    assert site["changed"] is False
    # the second round's 30 m x 34 m lies inside the first's 40 m x 34 m: the symmetric
    # difference is the 10 m x 34 m strip, 340 sq m = 3,659.73 sq ft; the centroid moves
    # from x 695,005 to 695,000: 5 m = 16.4042 ft
    assert dist["layer"] == "disturbance"
    assert dist["area_before_sqft"] == pytest.approx(1_360 * SQM_TO_SQFT, rel=1e-9)
    assert dist["area_after_sqft"] == pytest.approx(1_020 * SQM_TO_SQFT, rel=1e-9)
    assert dist["moved_sqft"] == pytest.approx(3_659.729, abs=1e-3)
    assert dist["centroid_shift_ft"] == pytest.approx(16.404199, abs=1e-6)
    assert dist["changed"] is True
    assert diff["files"] == {
        "added": [],
        "removed": [],
        "replaced": ["disturbance.gpkg", "submission.toml"],
        "unchanged": 1,
    }
    json.dumps(diff)  # JSON-ready
    lines = diff_lines(diff)
    assert lines[0] == "Recommendation: disapprove before, awaiting village now."
    assert (
        "Disturbed area (disturbed_area_sqft): 14,639 sq ft before, 10,979 sq ft now "
        "(-3,660 sq ft)." in lines
    )
    assert (
        "Disturbance polygon changed: 14,639 sq ft before, 10,979 sq ft now; "
        "3,660 sq ft added or taken away; its centre moved 16.4 ft." in lines
    )
