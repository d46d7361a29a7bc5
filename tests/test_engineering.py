"""Engineering stage: submission parsing and the measures, against TR-55 and hand-worked values."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from _tr55 import ACRES_250_SQFT, EXAMPLE_2_2, EXAMPLE_3_1

from georeview.errors import ConfigError
from georeview.measure import engineering as eng
from georeview.measure import engineering_inputs


def _evaluate(raw, municipality="deerfield", **kw):
    inputs = engineering_inputs.parse_sections(raw, "submission.toml")
    kw.setdefault("disturbed_area_sqft", ACRES_250_SQFT)
    kw.setdefault("site_area_sqft", ACRES_250_SQFT)
    return eng.evaluate(inputs, municipality=municipality, **kw)


def test_parse_errors_name_the_field():
    with pytest.raises(ConfigError, match=r"soil_loss\.phases\.0\.months"):
        engineering_inputs.parse_sections(
            {"soil_loss": {"phases": [{"cover": "bare", "months": -1}]}}, "s.toml"
        )
    with pytest.raises(ConfigError, match="unknown key"):
        engineering_inputs.parse_sections({"hydrology": {"tc_pre": 1.0}}, "s.toml")
    with pytest.raises(ConfigError, match="c_source"):
        engineering_inputs.parse_sections(
            {"soil_loss": {"phases": [{"c_factor": 0.2, "months": 1}]}}, "s.toml"
        )
    with pytest.raises(ConfigError, match="unknown cover"):
        engineering_inputs.parse_sections(
            {"hydrology": {"existing": [{"cover": "lawn", "hsg": "B", "acres": 1}]}}, "s.toml"
        )
    with pytest.raises(ConfigError, match="rainfall_source"):
        engineering_inputs.parse_sections({"hydrology": {"rainfall_in": {"2yr": 2.9}}}, "s.toml")
    with pytest.raises(ConfigError, match=r"basins\.0\.kind"):
        engineering_inputs.parse_sections({"basins": [{"id": "x", "kind": "pond"}]}, "s.toml")
    # Strict types: a string is not a number.
    with pytest.raises(ConfigError, match="pump_rate_gpm"):
        engineering_inputs.parse_sections({"dewatering": {"pump_rate_gpm": "300"}}, "s.toml")


def test_a_declared_r_share_needs_a_source_and_cannot_be_zero_or_exceed_the_year():
    """Issue 23: ``r_fraction = 0`` on a May-August phase needed no source and made the
    soil loss 0. A share is now > 0 (no part of the year is without erosivity: AH 537
    counts thaw and snowmelt runoff in the northern states), needs its source, and the
    shares of phases lasting a year or less cannot add up to more than the year's R."""
    summer = {"cover": "bare", "start": dt.date(2025, 5, 5), "end": dt.date(2025, 8, 15)}
    with pytest.raises(ConfigError, match=r"soil_loss\.phases\.0\.r_fraction"):
        engineering_inputs.parse_sections(
            {"soil_loss": {"phases": [{**summer, "r_fraction": 0, "r_fraction_source": "x"}]}},
            "s.toml",
        )
    with pytest.raises(ConfigError, match="r_fraction_source"):
        engineering_inputs.parse_sections(
            {"soil_loss": {"phases": [{**summer, "r_fraction": 0.6}]}}, "s.toml"
        )
    two = [
        {"cover": "bare", "months": 1, "r_fraction": 0.7, "r_fraction_source": "WDNR tool"},
        {"cover": "bare", "months": 1, "r_fraction": 0.4, "r_fraction_source": "WDNR tool"},
    ]
    with pytest.raises(ConfigError, match=r"phases 1 to 2 add up to 1\.1"):
        engineering_inputs.parse_sections({"soil_loss": {"phases": two}}, "s.toml")
    two[1]["r_fraction"] = 0.3
    got = engineering_inputs.parse_sections({"soil_loss": {"phases": two}}, "s.toml")
    assert [p.r_fraction_source for p in got.soil_loss.phases] == ["WDNR tool"] * 2


def test_example_4_1_peak_through_the_stage():
    """TR-55 Example 4-1 (p. 4-3): the Example 2-2 watershed (CN 75), Tc = 1.53 h, P = 6.0 in
    (declared here as the 100-year depth), Am = 250 ac: printed qp = 345 cfs (+/-2 %)."""
    raw = {
        "hydrology": {
            "proposed": EXAMPLE_2_2,
            "tc_post_hr": 1.53,
            "rainfall_in": {"100yr": 6.0},
            "rainfall_source": "TR-55 Example 4-1",
        }
    }
    res = _evaluate(raw)
    assert res.curve_numbers["post"] == 75  # TR-55 figure 2-6: "Use CN = 75"
    assert res.peak_flow_cfs["100yr"]["post"] == pytest.approx(345, rel=0.02)
    # No existing cover declared: the pre peak is missing with a reason, not guessed.
    assert res.peak_flow_cfs["100yr"]["pre"] is None
    assert "existing" in res.peak_flow_reasons["100yr"]["pre"]
    # Storms without a depth: unconfirmed rainfall is the reason.
    assert res.peak_flow_cfs["2yr"]["post"] is None
    assert "unconfirmed" in res.peak_flow_reasons["2yr"]["post"]


def test_tc_from_declared_flow_path_example_3_1():
    """TR-55 Example 3-1 (p. 3-5) flow path with P2 = 3.6 in gives Tc = 1.53 h (+/-0.005 h)."""
    raw = {
        "hydrology": {
            "proposed": EXAMPLE_2_2,
            "flow_path_post": EXAMPLE_3_1,
            "rainfall_in": {"2yr": 3.6, "100yr": 6.0},
            "rainfall_source": "TR-55 examples 3-1 and 4-1",
        }
    }
    res = _evaluate(raw)
    assert res.tc_hr["post"] == pytest.approx(1.53, abs=0.005)
    assert res.peak_flow_cfs["100yr"]["post"] == pytest.approx(345, rel=0.02)


def test_cn_from_soils_example_2_1():
    """TR-55 Example 2-1 (p. 2-11): pasture in good condition on 70 % group C and 30 % group B
    soils -> CN 70 (figure 2-5). Here the groups come from the soils layer."""
    raw = {"hydrology": {"existing": [{"cover": "pasture_good", "fraction": 1.0}]}}
    soils = [(0.7 * ACRES_250_SQFT, "C", None), (0.3 * ACRES_250_SQFT, "B", None)]
    res = _evaluate(raw, soils=soils)
    assert res.curve_numbers["pre"] == 70
    without = _evaluate(raw)
    assert without.curve_numbers["pre"] is None


def test_soil_loss_hand_worked_deerfield():
    """Hand-worked USLE: R = 150 (Dane County ECSM), K area-weighted from the soils
    (100 sq ft at 0.30, 300 sq ft at 0.20 -> 0.225), LS of 72.6 ft at 9 % = 0.999312
    (AH 537 equation), bare soil (C = 1, P = 1) for 3 months = 0.25 yr:
    150 x 0.225 x 0.999312 x 0.25 = 8.43169 t/ac over the period (< 12 months)."""
    raw = {
        "soil_loss": {
            "phases": [{"cover": "bare", "months": 3}],
            "slope_segments": [{"length_ft": 72.6, "slope_pct": 9}],
        }
    }
    res = _evaluate(raw, soils=[(100.0, "B", 0.30), (300.0, "C", 0.20)])
    assert res.soil_loss.k.value == pytest.approx(0.225)
    assert res.soil_loss_tons_per_acre_year == pytest.approx(8.43169, abs=1e-4)
    assert res.soil_loss.r.value == 150.0
    assert not res.soil_loss.mep_explanation_given


def test_soil_loss_from_dem_samples():
    """LS from DEM grids: every cell 9 % with 72.6 ft flow length -> LS 0.999312 (AH 537)."""
    raw = {
        "soil_loss": {
            "phases": [{"cover": "bare", "months": 12}],
            "k_factor": 0.3,
            "k_factor_source": "test",
        }
    }
    res = _evaluate(
        raw, slope_pct_samples=np.full(50, 9.0), flow_length_ft_samples=np.full(50, 72.6)
    )
    assert res.soil_loss.ls.value == pytest.approx(0.999312, abs=1e-6)
    # 150 x 0.3 x 0.999312 x 1 x 1 (12 months = one year)
    assert res.soil_loss_tons_per_acre_year == pytest.approx(44.969, abs=1e-3)


def test_soil_loss_somers_needs_r_factor():
    """usle.toml: Kenosha County R is unconfirmed, so Somers soil loss is None with a reason
    until the submission declares an R with its source."""
    raw = {
        "soil_loss": {
            "phases": [{"cover": "permanent_seeding", "months": 6}],
            "slope_segments": [{"length_ft": 100, "slope_pct": 4}],
            "k_factor": 0.3,
            "k_factor_source": "SSURGO",
            "mep_explanation": "Site is flat and small.",
        }
    }
    res = _evaluate(raw, municipality="somers")
    assert res.soil_loss_tons_per_acre_year is None
    assert "unconfirmed" in res.soil_loss.reason
    assert res.soil_loss.mep_explanation_given
    raw["soil_loss"]["r_factor"] = 140.0
    raw["soil_loss"]["r_factor_source"] = "applicant's engineer"
    res2 = _evaluate(raw, municipality="somers")
    # 140 x 0.3 x LS(100 ft, 4 %) x 0.01 x 0.5 yr; LS = 0.399807 (AH 537 equation)
    assert res2.soil_loss_tons_per_acre_year == pytest.approx(
        140 * 0.3 * 0.399807 * 0.01 * 0.5, rel=1e-5
    )


def test_soil_loss_phase_dates():
    """A phase given by dates lasts end - start days: 2025-06-01 to 2025-07-01 = 30 days."""
    raw = {
        "soil_loss": {
            "phases": [{"cover": "bare", "start": dt.date(2025, 6, 1), "end": dt.date(2025, 7, 1)}],
            "k_factor": 0.3,
            "k_factor_source": "t",
            "slope_segments": [{"length_ft": 72.6, "slope_pct": 9}],
        }
    }
    res = _evaluate(raw)
    assert res.soil_loss.period_days == 30
    assert res.soil_loss_tons_per_acre_year == pytest.approx(
        150 * 0.3 * 0.999312 * 30 / 365.25, rel=1e-5
    )


def test_missing_everything_gives_reasons_not_numbers():
    res = _evaluate({})
    assert res.soil_loss_tons_per_acre_year is None
    assert "phases" in res.soil_loss.reason
    assert res.peak_flow_cfs is None
    assert res.sediment_basin["required_area_sqft"] is None
    assert res.sediment_basin["reason"]
    assert res.dewatering["required_area_sqft"] is None
    d = res.to_dict()
    assert d["peak_flow_cfs"] is None
    assert set(d["peak_flow_reasons"]) == {"1yr", "2yr", "10yr", "100yr"}


def test_basins_and_dewatering():
    """Deerfield 31.06(3)(B): 5-yr peak during development -> area at 1,500 gal/sq ft/day;
    31.06(2)(A): 500 gpm x 1,440 / 1,500 = 480 sq ft."""
    raw = {
        "hydrology": {
            "proposed": EXAMPLE_2_2,
            "construction": [{"cover": "newly_graded", "hsg": "C", "fraction": 1.0}],
            "tc_post_hr": 1.53,
            # the construction condition's own Tc and the area draining to the basin: the
            # post-development ones do not stand in (issue 22)
            "tc_construction_hr": 1.53,
            "drainage_area_acres": 10.0,
            "rainfall_in": {"5yr": 6.0},
            "rainfall_source": "test",
        },
        "basins": [
            {
                "id": "SB-1",
                "kind": "sediment",
                "area_sqft": 1.0e6,
                "depth_ft": 3.5,
                "fence_height_ft": 4,
            },
            {
                "id": "DW-1",
                "kind": "dewatering",
                "area_sqft": 400,
                "depth_ft": 3,
                "fence_height_ft": 3,
            },
        ],
        "dewatering": {"pump_rate_gpm": 500},
    }
    res = _evaluate(raw)
    sb = res.sediment_basin
    assert res.curve_numbers["construction"] == 91  # Table 2-2a newly graded, group C
    assert sb["inflow_cfs"] > 0
    assert sb["required_area_sqft"] == pytest.approx(sb["inflow_cfs"] * 646_316.88 / 1500, rel=1e-7)
    assert sb["ok"] is True
    assert res.dewatering["required_area_sqft"] == pytest.approx(480.0)
    by_id = {c["basin_id"]: c for c in res.basin_checks}
    assert by_id["SB-1"]["ok"] is True
    assert by_id["DW-1"]["area"]["ok"] is False
    assert by_id["DW-1"]["fence"]["ok"] is False
    assert by_id["DW-1"]["citation"] == "§ 31.06(2)(A)"
