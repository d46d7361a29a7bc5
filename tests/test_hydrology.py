"""TR-55 hydrology against the published values of TR-55 (NRCS, 2nd ed., June 1986).

Every expected number below is printed in TR-55; the test names its table, example or
page. Tolerances are stated with their units.
"""

from __future__ import annotations

import numpy as np
import pytest

from georeview import hydrology as h
from georeview.errors import InputError

# TR-55 Table 2-1 (p. 2-3), "Runoff depth for selected CN's and rainfall amounts", inches.
# Columns are CN 40, 45, ..., 95, 98. A sample of the printed rows.
TABLE_2_1_CN = (40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 98)
TABLE_2_1 = {
    1.0: (0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.03, 0.08, 0.17, 0.32, 0.56, 0.79),
    1.4: (0.00, 0.00, 0.00, 0.00, 0.00, 0.02, 0.06, 0.13, 0.24, 0.39, 0.61, 0.92, 1.18),
    2.0: (0.00, 0.00, 0.00, 0.02, 0.06, 0.14, 0.24, 0.38, 0.56, 0.80, 1.09, 1.48, 1.77),
    3.0: (0.00, 0.02, 0.09, 0.19, 0.33, 0.51, 0.71, 0.96, 1.25, 1.59, 1.98, 2.45, 2.77),
    4.0: (0.06, 0.18, 0.33, 0.53, 0.76, 1.03, 1.33, 1.67, 2.04, 2.46, 2.92, 3.43, 3.77),
    5.0: (0.24, 0.44, 0.69, 0.98, 1.30, 1.65, 2.04, 2.45, 2.89, 3.37, 3.88, 4.42, 4.76),
    6.0: (0.50, 0.80, 1.14, 1.52, 1.92, 2.35, 2.81, 3.28, 3.78, None, 4.85, 5.41, 5.76),
    10.0: (2.23, 2.89, 3.56, 4.23, 4.90, 5.56, 6.22, 6.88, 7.52, 8.16, 8.78, 9.40, 9.76),
    15.0: (5.33, 6.36, 7.35, 8.29, 9.19, 10.04, 10.85, 11.63, 12.37, 13.07, 13.74, 14.39, 14.76),
}


@pytest.mark.parametrize("p_in", sorted(TABLE_2_1))
def test_runoff_depth_matches_tr55_table_2_1(p_in):
    """TR-55 Table 2-1 (p. 2-3): +/-0.006 in against the two-decimal table."""
    for cn, printed in zip(TABLE_2_1_CN, TABLE_2_1[p_in], strict=True):
        if printed is None:
            continue
        assert h.runoff_depth_in(p_in, cn) == pytest.approx(printed, abs=0.006), (p_in, cn)


def test_runoff_depth_table_2_1_cn85_column():
    """TR-55 Table 2-1, CN 85 column at P = 6-11 in: 4.31, 5.26, 6.22, 7.19, 9.14 in.

    These printed values sit 0.007-0.009 in above eq. 2-3 with S = 1000/85 - 10 =
    1.7647 in; they match S rounded to 1.76 in, which TR-55 evidently used. Tolerance
    +/-0.010 in.
    """
    for p_in, printed in ((6.0, 4.31), (7.0, 5.26), (8.0, 6.22), (9.0, 7.19), (11.0, 9.14)):
        assert h.runoff_depth_in(p_in, 85) == pytest.approx(printed, abs=0.010)


def test_runoff_depth_is_vectorised_and_zero_below_ia():
    """Eq. 2-3 with Ia = 0.2 S: Q = 0 when P <= Ia (TR-55 p. 2-1); arrays broadcast."""
    p = np.array([0.0, 0.5, 6.0])
    q = h.runoff_depth_in(p, np.array([70, 70, 70]))
    assert isinstance(q, np.ndarray)
    # CN 70: Ia = 0.857 in (Table 4-1), so 0 and 0.5 in give no runoff.
    assert q[0] == 0.0
    assert q[1] == 0.0
    assert q[2] == pytest.approx(2.81, abs=0.006)  # Table 2-1, P = 6.0, CN 70


# TR-55 Table 4-1 (p. 4-1), "Ia values for runoff curve numbers", inches (three decimals).
TABLE_4_1 = {
    40: 3.000,
    45: 2.444,
    50: 2.000,
    55: 1.636,
    60: 1.333,
    61: 1.279,
    65: 1.077,
    70: 0.857,
    74: 0.703,
    75: 0.667,
    80: 0.500,
    85: 0.353,
    90: 0.222,
    95: 0.105,
    98: 0.041,
}


@pytest.mark.parametrize(("cn", "ia_in"), sorted(TABLE_4_1.items()))
def test_initial_abstraction_matches_tr55_table_4_1(cn, ia_in):
    """TR-55 Table 4-1 (p. 4-1): +/-0.0005 in against the three-decimal table."""
    assert h.initial_abstraction_in(cn) == pytest.approx(ia_in, abs=0.0005)


@pytest.mark.parametrize(
    ("cover", "hsg", "cn"),
    [
        # TR-55 Table 2-2a (p. 2-5), urban areas.
        ("open_space_good", "A", 39),
        ("open_space_good", "C", 74),
        ("impervious", "B", 98),
        ("street_gravel", "D", 91),
        ("commercial", "B", 92),
        ("residential_1_2_acre", "B", 70),
        ("residential_1_2_acre", "C", 80),
        ("residential_1_4_acre", "A", 61),
        ("newly_graded", "C", 91),
        # Table 2-2b (p. 2-6), cultivated agricultural lands.
        ("fallow_bare", "D", 94),
        ("row_crops_straight_good", "B", 78),
        # Table 2-2c (p. 2-7), other agricultural lands.
        ("pasture_good", "B", 61),
        ("pasture_good", "C", 74),
        ("meadow", "C", 71),
        ("woods_good", "B", 55),
        ("woods_good", "A", 30),
        ("brush_good", "D", 73),
        ("farmstead", "C", 82),
    ],
)
def test_cn_lookup_matches_tr55_table_2_2(cover, hsg, cn):
    """TR-55 Tables 2-2a to 2-2c: exact integer curve numbers."""
    assert h.cn_for(cover, hsg) == cn


def test_cn_lookup_dual_group_uses_undrained_letter():
    """TR-55 Appendix A: 'A/D' is A drained, D undrained; drainage unknown -> D."""
    assert h.cn_for("open_space_good", "A/D") == h.cn_for("open_space_good", "D") == 80


def test_cn_lookup_refuses_unknown_cover_and_group():
    with pytest.raises(InputError, match="unknown cover"):
        h.cn_for("parking_garage", "B")
    with pytest.raises(InputError, match="hydrologic soil group"):
        h.cn_for("meadow", "E")


def test_example_2_1_composite_cn_and_runoff():
    """TR-55 Example 2-1 (p. 2-11, figure 2-5): 250 ac in Dyer County, TN; 175 ac Loring
    (group C) and 75 ac Memphis (group B), pasture in good condition, P = 6.0 in.
    Printed: CN = 70 (rounded), Q = 2.81 in."""
    cn = h.composite_cn([(175, "pasture_good", "C"), (75, "pasture_good", "B")])
    assert round(cn) == 70
    assert cn == pytest.approx(70.1, abs=0.05)
    assert h.runoff_depth_in(6.0, round(cn)) == pytest.approx(2.81, abs=0.006)


def test_example_2_2_composite_cn_and_runoff():
    """TR-55 Example 2-2 (p. 2-11, figure 2-6): 1/2-acre lots on 75 ac B and 100 ac C,
    open space good on 75 ac C. Printed: CN = 75, Q = 3.28 in."""
    cn = h.composite_cn(
        [
            (75, "residential_1_2_acre", "B"),
            (100, "residential_1_2_acre", "C"),
            (75, "open_space_good", "C"),
        ]
    )
    assert round(cn) == 75
    assert h.runoff_depth_in(6.0, round(cn)) == pytest.approx(3.28, abs=0.006)


def test_composite_cn_refuses_zero_area():
    with pytest.raises(InputError, match="positive total area"):
        h.composite_cn([(0, "meadow", "B")])


def test_example_3_1_time_of_concentration():
    """TR-55 Example 3-1 (p. 3-5, figure 3-3), Dyer County watershed, P2 = 3.6 in.

    Printed travel times: sheet flow AB (dense grass n = 0.24, 100 ft, s = 0.01) 0.30 h;
    shallow concentrated BC (unpaved, 1,400 ft, s = 0.01; V = 1.6 ft/s) 0.24 h; channel CD
    (a = 27 ft^2, pw = 28.2 ft, n = 0.05, s = 0.005, 7,300 ft; V = 2.05 ft/s) 0.99 h;
    Tc = 1.53 h. Tolerance: half of the printed last digit (0.005 h, 0.05 ft/s).
    """
    sheet = h.SheetFlow(length_ft=100, slope_ft_per_ft=0.01, n=0.24, p2_in=3.6)
    shallow = h.ShallowFlow(length_ft=1400, slope_ft_per_ft=0.01, surface="unpaved")
    channel = h.ChannelFlow(
        length_ft=7300, slope_ft_per_ft=0.005, n=0.05, area_sqft=27, wetted_perimeter_ft=28.2
    )
    assert sheet.travel_time_hr() == pytest.approx(0.30, abs=0.005)
    assert h.shallow_velocity_fps(0.01, "unpaved") == pytest.approx(1.6, abs=0.05)
    assert shallow.travel_time_hr() == pytest.approx(0.24, abs=0.005)
    assert h.manning_velocity_fps(27, 28.2, 0.005, 0.05) == pytest.approx(2.05, abs=0.005)
    assert channel.travel_time_hr() == pytest.approx(0.99, abs=0.005)
    assert h.tc_hr([sheet, shallow, channel]) == pytest.approx(1.53, abs=0.005)


def test_shallow_flow_velocity_equations_appendix_f():
    """TR-55 Appendix F (p. F-1): unpaved V = 16.1345 s^0.5, paved V = 20.3282 s^0.5.
    At s = 0.04 ft/ft: 3.2269 and 4.0656 ft/s (hand-worked, +/-0.0001 ft/s)."""
    assert h.shallow_velocity_fps(0.04, "unpaved") == pytest.approx(3.2269, abs=1e-4)
    assert h.shallow_velocity_fps(0.04, "paved") == pytest.approx(4.0656, abs=1e-4)


def test_sheet_flow_longer_than_300_ft_is_refused():
    """TR-55 chapter 3 (p. 3-3): sheet flow applies to at most 300 ft."""
    with pytest.raises(InputError, match="300"):
        h.SheetFlow(length_ft=350, slope_ft_per_ft=0.02, n=0.24, p2_in=3.0).travel_time_hr()


def test_example_4_1_peak_discharge():
    """TR-55 Example 4-1 (p. 4-3, figure 4-3): the 250-ac watershed of examples 2-2 and 3-1,
    25-yr storm P = 6.0 in, CN = 75, Tc = 1.53 h, Am = 0.39 mi^2, no ponds.
    Printed: Ia = 0.667 in, Ia/P = 0.11, qu = 270 csm/in, Q = 3.28 in, qp = 345 cfs.
    Tolerance: qp within 2 %, qu within 2 % (read from exhibit 4-II)."""
    r = h.peak_discharge(area_sqmi=250 / 640, cn=75, tc_hr=1.53, p_in=6.0)
    assert r.ia_in == pytest.approx(0.667, abs=0.0005)
    assert r.ia_over_p == pytest.approx(0.11, abs=0.005)
    assert r.qu_csm_per_in == pytest.approx(270, rel=0.02)
    assert r.q_in == pytest.approx(3.28, abs=0.006)
    assert r.qp_cfs == pytest.approx(345, rel=0.02)
    assert r.within_limits
    assert r.warnings == ()
    assert h.peak_discharge_cfs(250 / 640, 75, 1.53, 6.0) == r.qp_cfs


def test_unit_peak_at_tabulated_ia_over_p_uses_table_f1_directly():
    """TR-55 Table F-1 (p. F-2), type II, Ia/P = 0.10: C0 = 2.55323, C1 = -0.61512,
    C2 = -0.16403. At Tc = 1 h log10(qu) = C0, so qu = 10^2.55323 = 357.5 csm/in
    (hand-worked, +/-0.1)."""
    assert h.unit_peak_discharge_csm_per_in(1.0, 0.10) == pytest.approx(357.5, abs=0.1)
    # Ia/P = 0.50 at Tc = 1 h: 10^2.20282 = 159.5 csm/in.
    assert h.unit_peak_discharge_csm_per_in(1.0, 0.50) == pytest.approx(159.5, abs=0.1)


def test_pond_swamp_factor_table_4_2():
    """TR-55 Table 4-2 (p. 4-2): 0 % -> 1.00, 0.2 % -> 0.97, 1 % -> 0.87, 3 % -> 0.75,
    5 % -> 0.72 (exact)."""
    for pct, fp in ((0, 1.0), (0.2, 0.97), (1.0, 0.87), (3.0, 0.75), (5.0, 0.72)):
        assert h.pond_swamp_factor(pct) == pytest.approx(fp, abs=1e-12)
    # Linear between the printed rows: 2 % is halfway from 0.87 to 0.75.
    assert h.pond_swamp_factor(2.0) == pytest.approx(0.81, abs=1e-12)


def test_pond_swamp_factor_scales_peak():
    """TR-55 eq. 4-1: qp = qu Am Q Fp, so 1 % ponds give 0.87 of the no-pond peak."""
    base = h.peak_discharge_cfs(0.39, 75, 1.53, 6.0)
    assert h.peak_discharge_cfs(0.39, 75, 1.53, 6.0, pond_swamp_pct=1.0) == pytest.approx(
        0.87 * base, rel=1e-12
    )


def test_limits_cn_below_40_and_bad_area_are_refused():
    """TR-55 chapter 4 limitations (p. 4-2): CN must be 40 or more."""
    with pytest.raises(InputError, match="below 40"):
        h.peak_discharge_cfs(0.1, 39, 1.0, 5.0)
    with pytest.raises(InputError, match="area_sqmi"):
        h.peak_discharge_cfs(0.0, 70, 1.0, 5.0)
    with pytest.raises(InputError):
        h.peak_discharge_cfs(0.1, 70, 1.0, 0.0)


def test_limits_tc_outside_range_flagged_not_silent():
    """TR-55 chapter 4 limitations: Tc between 0.1 and 10 h; outside, qp is indicative."""
    short = h.peak_discharge(0.01, 80, 0.05, 3.0)
    assert not short.within_limits
    assert short.tc_hr_used == 0.1
    assert any("Tc" in w for w in short.warnings)
    at_limit = h.peak_discharge(0.01, 80, 0.1, 3.0)
    assert short.qp_cfs == pytest.approx(at_limit.qp_cfs)
    assert h.peak_discharge(0.01, 80, 12.0, 3.0).tc_hr_used == 10.0


def test_limits_ia_over_p_uses_limiting_value_with_warning():
    """TR-55 chapter 4: if Ia/P is outside the exhibit's range, use the limiting value."""
    # CN 98: Ia = 0.041 in; P = 3 in -> Ia/P = 0.014 < 0.10.
    r = h.peak_discharge(0.05, 98, 0.5, 3.0)
    assert r.ia_over_p_used == 0.10
    assert r.within_limits
    assert any("limiting value" in w for w in r.warnings)
    # P below Ia: no runoff, so no peak (Ia/P clamped to 0.50).
    dry = h.peak_discharge(0.05, 60, 0.5, 1.0)
    assert dry.q_in == 0.0
    assert dry.qp_cfs == 0.0
    assert dry.ia_over_p_used == 0.50


def test_limits_pond_swamp_over_5_pct_flagged():
    r = h.peak_discharge(0.1, 75, 1.0, 5.0, pond_swamp_pct=8.0)
    assert not r.within_limits
    assert r.fp == 0.72
    assert "to_dict" in dir(r)
    assert r.to_dict()["within_limits"] is False
