"""Unit conversions, all in one place.

The ordinances speak in feet, acres, inches and tons per acre per year; the
data come in metres, US survey feet and international feet. Every factor
below is exact by definition unless its comment says otherwise.
"""

from __future__ import annotations

from typing import Final

#: International foot, metres (exact, 1959 agreement).
M_PER_FT: Final = 0.3048
#: US survey foot, metres (exact: 1200/3937 m). Differs from the international foot by 2 ppm.
M_PER_US_FT: Final = 1200.0 / 3937.0
#: Square feet in an acre (exact: 66 ft x 660 ft).
SQFT_PER_ACRE: Final = 43_560.0
#: Square miles to square feet (5280 ft squared).
SQFT_PER_SQMI: Final = 5280.0**2
#: Feet in a statute mile.
FT_PER_MILE: Final = 5280.0
#: Cubic feet per cubic yard.
CUFT_PER_CUYD: Final = 27.0
#: US gallons per cubic foot (1 gal = 231 in^3 exactly; 1728 / 231).
GAL_PER_CUFT: Final = 1728.0 / 231.0
#: Seconds per day.
S_PER_DAY: Final = 86_400.0
#: 1 cfs for one day in US gallons: 86,400 x 7.48052 = 646,316.88 gal/day.
GPD_PER_CFS: Final = S_PER_DAY * GAL_PER_CUFT

#: Names accepted for linear units, mapped to metres per unit.
LINEAR_UNITS_M: Final[dict[str, float]] = {
    "m": 1.0,
    "metre": 1.0,
    "meter": 1.0,
    "ft": M_PER_FT,
    "foot": M_PER_FT,
    "us_ft": M_PER_US_FT,
    "us-ft": M_PER_US_FT,
    "us_survey_foot": M_PER_US_FT,
}


def metres_per_unit(name: str) -> float:
    """Return metres per one unit of a named linear unit.

    Parameters
    ----------
    name : str
        ``m``, ``ft`` (international foot) or ``us_ft`` (US survey foot).

    Returns
    -------
    float
        Metres in one unit.

    Raises
    ------
    georeview.errors.UnitsError
        For a unit name that is not known.
    """
    from georeview.errors import UnitsError

    try:
        return LINEAR_UNITS_M[name.strip().lower()]
    except KeyError:
        known = ", ".join(sorted({"m", "ft", "us_ft"}))
        raise UnitsError(f"unknown linear unit {name!r}; use one of {known}") from None


def m_to_ft(m: float) -> float:
    """Convert metres to international feet."""
    return m / M_PER_FT


def ft_to_m(ft: float) -> float:
    """Convert international feet to metres."""
    return ft * M_PER_FT


def sqm_to_sqft(sqm: float) -> float:
    """Convert square metres to square international feet."""
    return sqm / (M_PER_FT * M_PER_FT)


def sqft_to_acres(sqft: float) -> float:
    """Convert square feet to acres."""
    return sqft / SQFT_PER_ACRE


def acres_to_sqft(acres: float) -> float:
    """Convert acres to square feet."""
    return acres * SQFT_PER_ACRE


def miles_to_m(miles: float) -> float:
    """Convert statute miles (5,280 international feet) to metres."""
    return miles * FT_PER_MILE * M_PER_FT


def sqft_to_sqmi(sqft: float) -> float:
    """Convert square feet to square miles."""
    return sqft / SQFT_PER_SQMI


def crs_metres_per_unit(crs: object) -> float:
    """Metres in one unit of a projected CRS's horizontal axis (1.0 for metres).

    Parameters
    ----------
    crs : pyproj.CRS
        A projected CRS.
    """
    return float(crs.axis_info[0].unit_conversion_factor)  # type: ignore[attr-defined]
