"""USLE (Wischmeier & Smith 1978, Agriculture Handbook 537) against published and hand-worked
values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from georeview import soil_loss as sl
from georeview.errors import InputError

LENGTHS_FT = (25, 50, 75, 100, 150, 200, 300, 400, 500, 600, 800, 1000)
# AH 537 Table 3 (p. 12), "Values of the topographic factor, LS, for specific combinations
# of slope length and steepness". Rows as printed (two significant figures above 1).
AH537_TABLE_3 = {
    1: (0.09, 0.10, 0.12, 0.13, 0.15, 0.16, 0.18, 0.20, 0.21, 0.22, 0.24, 0.26),
    4: (0.23, 0.30, 0.36, 0.40, 0.47, 0.53, 0.62, 0.70, 0.76, 0.82, 0.92, 1.0),
    8: (0.50, 0.70, 0.86, 0.99, 1.2, 1.4, 1.7, 2.0, 2.2, 2.4, 2.8, 3.1),
    12: (0.90, 1.3, 1.6, 1.8, 2.2, 2.6, 3.1, 3.6, 4.0, 4.4, 5.1, 5.7),
}


def _half_last_digit(printed: float) -> float:
    """Half a unit of the last printed digit (the rounding of the table), plus 1e-9."""
    text = f"{printed:g}"
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10.0**-decimals + 1e-9


@pytest.mark.parametrize("slope_pct", sorted(AH537_TABLE_3))
def test_ls_matches_ah537_table_3(slope_pct):
    """AH 537 Table 3: LS within half a unit of the printed last digit."""
    for length, printed in zip(LENGTHS_FT, AH537_TABLE_3[slope_pct], strict=True):
        got = sl.ls_factor(length, slope_pct)
        assert got == pytest.approx(printed, abs=_half_last_digit(printed)), (slope_pct, length)


def test_ls_unit_plot_is_one():
    """AH 537 p. 5: LS = 1 on the unit plot, 72.6 ft long at 9 % slope (the equation gives
    0.9993; +/-0.001)."""
    assert sl.ls_factor(72.6, 9.0) == pytest.approx(1.0, abs=0.001)


def test_ls_equation_hand_worked():
    """AH 537 equation at 200 ft, 10 %: sinθ = 0.1/sqrt(1.01) = 0.099504; S term =
    65.41 x 0.0099010 + 4.56 x 0.099504 + 0.065 = 1.166361; (200/72.6)^0.5 = 1.659765;
    LS = 1.935885 (+/-1e-5)."""
    assert sl.ls_factor(200, 10) == pytest.approx(1.935885, abs=1e-5)


@pytest.mark.parametrize(
    ("slope_pct", "m"),
    [
        (0.5, 0.2),
        (0.99, 0.2),
        (1.0, 0.3),
        (3.0, 0.3),
        (3.2, 0.4),
        (3.5, 0.4),
        (4.5, 0.4),
        (4.8, 0.4),
        (5.0, 0.5),
        (30.0, 0.5),
    ],
)
def test_slope_exponent_classes_ah537(slope_pct, m):
    """AH 537 p. 16: m = 0.5 at 5 % or more, 0.4 on 3.5-4.5 %, 0.3 on 1-3 %, 0.2 below 1 %;
    the unassigned 3-3.5 % and 4.5-5 % take 0.4 (documented in slope_exponent_m)."""
    assert sl.slope_exponent_m(slope_pct) == m


def test_ls_refuses_bad_input():
    with pytest.raises(InputError):
        sl.ls_factor(0, 5)
    with pytest.raises(InputError):
        sl.ls_factor(100, -1)


def test_ls_from_grids_matches_scalar_and_keeps_nan():
    slope = np.array([[4.0, np.nan], [9.0, 20.0]])
    length = np.array([[100.0, 50.0], [72.6, 5000.0]])
    ls = sl.ls_from_grids(slope, length)
    assert ls[0, 0] == pytest.approx(sl.ls_factor(100, 4), rel=1e-12)
    assert np.isnan(ls[0, 1])
    # 5,000 ft is capped at AH 537 Table 3's longest length, 1,000 ft (usle.toml limits).
    assert ls[1, 1] == pytest.approx(sl.ls_factor(1000, 20), rel=1e-12)
    assert sl.representative_ls(ls) == pytest.approx(
        (sl.ls_factor(100, 4) + sl.ls_factor(72.6, 9) + sl.ls_factor(1000, 20)) / 3, rel=1e-12
    )


def test_ls_from_grids_shape_mismatch():
    with pytest.raises(InputError, match="shape"):
        sl.ls_from_grids(np.zeros((2, 2)), np.zeros((3, 2)))


def test_irregular_slope_single_segment_is_uniform_ls():
    """AH 537 irregular-slope procedure reduces to the uniform-slope equation for one segment."""
    assert sl.ls_from_segments([(150, 8)]) == pytest.approx(sl.ls_factor(150, 8), rel=1e-12)


def test_irregular_slope_two_segments_hand_worked():
    """Two 50-ft segments, 2 % over 8 %; mean steepness 5 % -> m = 0.5.
    S(2 %) = 65.41 x 0.00039984 + 4.56 x 0.019996 + 0.065 = 0.182335;
    S(8 %) = 65.41 x 0.0063593 + 4.56 x 0.079745 + 0.065 = 0.844600;
    LS = [0.182335 x 50^1.5 + 0.844600 x (100^1.5 - 50^1.5)] / (100 x 72.6^0.5)
       = [64.4653 + 545.9888] / 852.0563 = 0.716448 (+/-1e-5)."""
    assert sl.ls_from_segments([(50, 2), (50, 8)]) == pytest.approx(0.716448, abs=1e-5)
    # Steep part at the bottom erodes more than the same steep part at the top.
    assert sl.ls_from_segments([(50, 2), (50, 8)]) > sl.ls_from_segments([(50, 8), (50, 2)])


def test_usle_product():
    """AH 537 eq. 1: A = R K LS C P. 150 x 0.28 x 1.2 x 0.13 x 1.0 = 6.552 t/ac/yr."""
    assert sl.usle_tons_per_acre_year(150, 0.28, 1.2, 0.13, 1.0) == pytest.approx(6.552)
    with pytest.raises(InputError):
        sl.usle_tons_per_acre_year(-1, 0.3, 1, 1, 1)


def test_configured_factors_have_sources():
    """usle.toml: Deerfield (Dane County) R = 150 per the Dane County ECSM; Somers unconfirmed;
    C for bare soil 1.0 and 1.5 t/ac hay mulch 0.07 (Minnesota Stormwater Manual table)."""
    dane = sl.r_factor_for("deerfield")
    assert dane.confirmed
    assert dane.value == 150.0
    assert "Dane" in dane.source
    somers = sl.r_factor_for("somers")
    assert not somers.confirmed
    assert somers.value is None
    assert sl.c_factor("bare") == 1.0
    assert sl.c_factor("mulch_hay_1_5_tpa") == 0.07
    with pytest.raises(InputError, match="unknown cover"):
        sl.c_factor("astroturf")


def test_period_shorter_than_a_year_sums_phases():
    """Hand-worked: R 150, K 0.3, LS 1. Bare (C 1) 60 days: 150 x 0.3 x 60/365.25 =
    7.392197 t/ac; temporary seeding (C 0.1) 120 days: 1.478439 t/ac. Period 180 days
    (< 12 months): the rate compared with t/ac/yr is the total, 8.870637."""
    res = sl.soil_loss_over_period(
        150, 0.3, 1.0, [sl.Phase("bare", 1.0, 1.0, 60), sl.Phase("seed", 0.1, 1.0, 120)]
    )
    assert res.phase_tons_per_acre == pytest.approx((7.392197, 1.478439), abs=1e-6)
    assert res.tons_per_acre_year == pytest.approx(8.870637, abs=1e-6)
    assert res.total_tons_per_acre == pytest.approx(res.tons_per_acre_year)
    assert res.warnings  # uniform erosivity is reported


def test_period_longer_than_a_year_takes_worst_12_months():
    """Hand-worked: R 100, K 0.2, LS 1 -> 20 t/ac/yr at C = 1. Schedule: 200 days mulch
    (C 0.1), 200 days bare (C 1), 200 days mulch (C 0.1). The worst 365.25-day window holds
    all 200 bare days and 165.25 mulch days: 20 x (200 + 0.1 x 165.25)/365.25 = 11.856 t/ac."""
    phases = [sl.Phase("m", 0.1, 1, 200), sl.Phase("b", 1.0, 1, 200), sl.Phase("m", 0.1, 1, 200)]
    res = sl.soil_loss_over_period(100, 0.2, 1.0, phases)
    expected = 20 * (200 + 0.1 * 165.25) / 365.25
    assert res.tons_per_acre_year == pytest.approx(expected, rel=1e-9)
    assert res.total_tons_per_acre == pytest.approx(20 * (200 + 40) / 365.25, rel=1e-9)
    assert 0 <= res.window_start_day <= 600 - 365.25


def test_period_declared_r_fraction_is_used():
    """A phase's declared share of annual R replaces the time fraction:
    150 x 0.3 x 1 x 1 x 0.6 = 27 t/ac for a summer bare phase carrying 60 % of annual R."""
    res = sl.soil_loss_over_period(150, 0.3, 1.0, [sl.Phase("bare", 1, 1, 120, r_fraction=0.6)])
    assert res.tons_per_acre_year == pytest.approx(27.0)
    assert res.warnings == ()
    with pytest.raises(InputError):
        sl.soil_loss_over_period(150, 0.3, 1.0, [sl.Phase("bare", 1, 1, 120, r_fraction=1.5)])


def test_sin_identity_used_for_steepness():
    """The steepness term uses sin(atan(s)) (slope angle from percent), not s itself."""
    theta = math.atan(0.09)
    term = 65.41 * math.sin(theta) ** 2 + 4.56 * math.sin(theta) + 0.065
    assert sl.ls_factor(72.6, 9) == pytest.approx(term, rel=1e-12)
