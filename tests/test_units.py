"""Unit conversions against their published definitions.

Sources: NIST Special Publication 811 (2008), Appendix B; NIST Handbook 44 (2024),
Appendix C; the 1959 international yard and pound agreement; Federal Register 85 FR
62698 (2020) on the US survey foot.
"""

from __future__ import annotations

import pytest

from georeview import units
from georeview.errors import UnitsError


def test_feet_and_survey_feet():
    assert units.M_PER_FT == 0.3048  # international foot, exact (1959)
    # US survey foot = 1200/3937 m = 0.304 800 609 6 m (NIST SP 811 B.8; 85 FR 62698)
    us_ft = units.M_PER_US_FT
    assert us_ft == pytest.approx(0.3048006096, abs=1e-10)
    # The two differ by 2 parts per million: 1 mile of survey feet is 3.2 mm longer.
    ppm = us_ft / units.M_PER_FT - 1
    assert ppm == pytest.approx(2e-6, rel=1e-3)


def test_areas_and_lengths():
    assert units.SQFT_PER_ACRE == 43_560.0  # 1 acre = 43,560 sq ft (NIST HB 44, App. C)
    assert units.acres_to_sqft(1.0) == 43_560.0
    assert units.miles_to_m(1.0) == pytest.approx(1609.344, abs=1e-9)  # exact
    assert units.sqm_to_sqft(1.0) == pytest.approx(10.763_910_42, rel=1e-9)  # SP 811 B.8
    assert units.sqft_to_sqmi(27_878_400.0) == pytest.approx(1.0)  # 5,280 ft squared


def test_flow_to_daily_volume():
    # 1 US gallon = 231 cubic inches exactly, so 1 cubic foot = 7.480 519 gal;
    # 1 cfs for a day = 86,400 x 7.480 519 = 646,316.88 gal/day (the figure).
    gal_per_cuft, gpd_per_cfs = units.GAL_PER_CUFT, units.GPD_PER_CFS
    assert gal_per_cuft == pytest.approx(7.480_519_48, rel=1e-9)
    assert gpd_per_cfs == pytest.approx(646_316.88, abs=0.01)


@pytest.mark.parametrize(("name", "m"), [("m", 1.0), ("ft", 0.3048), ("us_ft", 1200 / 3937)])
def test_named_linear_units(name, m):
    assert units.metres_per_unit(name) == m


def test_unknown_unit_is_refused():
    with pytest.raises(UnitsError, match="unknown linear unit 'yd'"):
        units.metres_per_unit("yd")


def test_crs_metres_per_unit_from_the_crs_itself() -> None:
    """Metres per unit: 1 for Wisconsin TM (EPSG:3071); the US survey foot is 1200/3937 m
    exactly (NIST Handbook 44, Appendix C) for NAD83 / Washington South (ftUS), EPSG:2286."""
    from pyproj import CRS

    from georeview.units import crs_metres_per_unit

    assert crs_metres_per_unit(CRS.from_epsg(3071)) == 1.0
    assert abs(crs_metres_per_unit(CRS.from_epsg(2286)) - 1200 / 3937) < 1e-12
