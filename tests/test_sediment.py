"""Basin sizing by surface settling rate: unit conversion and hand-worked areas."""

from __future__ import annotations

import pytest

from georeview import sediment as sd
from georeview.errors import InputError
from georeview.rules import load_ordinance
from georeview.units import GPD_PER_CFS


def test_cfs_to_gallons_per_day():
    """1 cfs = 86,400 s x 7.480519 gal/ft^3 = 646,316.88 gal/day (issue 4; units.py)."""
    assert pytest.approx(646_316.88, abs=0.005) == GPD_PER_CFS


def test_basin_area_hand_worked():
    """Deerfield 31.06(3)(B): 1,500 gal/sq ft/day. 10 cfs -> 6,463,168.8 gal/day / 1,500
    = 4,308.78 sq ft (+/-0.01 sq ft)."""
    assert sd.basin_area_sqft(10.0) == pytest.approx(4308.7792, abs=0.01)
    # Linear in inflow and inverse in rate.
    assert sd.basin_area_sqft(1.0, settling_rate_gpd_per_sqft=1000) == pytest.approx(646.31688)
    assert sd.basin_area_sqft(0.0) == 0.0


def test_dewatering_area_hand_worked():
    """Deerfield 31.06(2)(A): 500 gpm x 1,440 min/day = 720,000 gal/day; / 1,500 = 480 sq ft."""
    assert sd.dewatering_basin_area_sqft(500) == pytest.approx(480.0, abs=1e-9)


def test_bad_inputs_refused():
    with pytest.raises(InputError):
        sd.basin_area_sqft(-1)
    with pytest.raises(InputError):
        sd.basin_area_sqft(1, settling_rate_gpd_per_sqft=0)
    with pytest.raises(InputError):
        sd.dewatering_basin_area_sqft(float("nan"))


#: Deerfield 31.06(2)(A), (3)(B): "a depth of at least 3 feet, ... a 4 foot high snow fence".
MINIMUMS = {"min_depth_ft": 3.0, "min_fence_height_ft": 4.0}


def test_deerfield_parameters_are_the_ordinance_numbers():
    o = load_ordinance("deerfield")
    assert o.param("basin_min_depth_ft") == MINIMUMS["min_depth_ft"]
    assert o.param("basin_min_fence_height_ft") == MINIMUMS["min_fence_height_ft"]
    assert o.param("basin_settling_rate_gpd_per_sqft") == 1500.0
    assert o.param("dewatering_settling_rate_gpd_per_sqft") == 1500.0
    assert o.param("basin_design_storm") == "5yr"


def test_check_basin_pass_fail_unknown():
    """31.06(3)(B): depth >= 3 ft, fence >= 4 ft, area >= required."""
    good = sd.check_basin(
        "B1",
        "sediment",
        area_sqft=5000,
        depth_ft=3.0,
        fence_height_ft=4.0,
        required_area_sqft=4308.78,
        citation="§ 31.06(3)(B)",
        **MINIMUMS,
    )
    assert good.ok is True
    assert good.citation == "§ 31.06(3)(B)"
    shallow = sd.check_basin(
        "B2",
        "sediment",
        area_sqft=5000,
        depth_ft=2.5,
        fence_height_ft=4.0,
        required_area_sqft=4308.78,
        citation="§ 31.06(3)(B)",
        **MINIMUMS,
    )
    assert shallow.ok is False
    assert shallow.depth.measured == 2.5
    assert shallow.depth.limit == 3.0
    unknown = sd.check_basin(
        "D1",
        "dewatering",
        area_sqft=None,
        depth_ft=4,
        fence_height_ft=None,
        required_area_sqft=480.0,
        citation="§ 31.06(2)(A)",
        **MINIMUMS,
    )
    assert unknown.ok is None
    assert unknown.citation == "§ 31.06(2)(A)"
    assert unknown.fence.reason == "fence height not declared"
    d = unknown.to_dict()
    assert d["ok"] is None
    assert d["area"]["limit"] == 480.0
