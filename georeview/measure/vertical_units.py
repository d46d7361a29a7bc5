"""Plausibility of a DEM's declared vertical units (Wisconsin's land surface, slopes).

The check warns; it never changes a number.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from georeview.errors import CoverageError, LimitError
from georeview.measure.dem import read_dem_window
from georeview.units import M_PER_FT

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

logger = logging.getLogger(__name__)

__all__ = ["IMPLAUSIBLE_SLOPE_PCT", "WISCONSIN_ELEVATION_FT", "vertical_units_warnings"]

#: Lowest and highest land surface of Wisconsin, international feet: Lake Michigan's
#: low-water datum (577.5 ft IGLD 1985) and Timms Hill (1,951 ft), Wisconsin's highest point
#: (USGS, "Elevations and Distances in the United States"). In metres: 176 to 595.
WISCONSIN_ELEVATION_FT = (577.5, 1951.0)
#: Margin on the Wisconsin range before elevations are called implausible, feet.
ELEVATION_MARGIN_FT = 25.0
#: A DEM slope above this, percent (71.6 degrees), is implausible for land at DEM cell
#: sizes (cliffs of the Wisconsin Dells and the Niagara Escarpment reach it only in 1 m
#: lidar); a feet DEM declared in metres multiplies every slope by 3.28.
IMPLAUSIBLE_SLOPE_PCT = 300.0


def vertical_units_warnings(
    dem_path: object,
    vertical_units: str,
    area: BaseGeometry,
    area_crs: Any,
    *,
    max_slope_pct: float | None = None,
) -> list[str]:
    """Warn when a DEM's elevations or slopes are implausible for its declared units.

    Heuristic (Wisconsin): the median elevation of the DEM window around *area*,
    converted to feet with *vertical_units*, must lie within Wisconsin's land surface
    (:data:`WISCONSIN_ELEVATION_FT`, 577.5 to 1,951 ft, with a 25 ft margin). Wisconsin
    elevations in metres (176-595) declared as feet fall below it except above 552 m
    (1,813 ft, the highest northern hills), and elevations in feet (579-1,951) declared as
    metres fall above it (x 3.28) except below 602 ft (the Lake Michigan shore). Second, a
    steepest slope above :data:`IMPLAUSIBLE_SLOPE_PCT` (300 %) is flagged, the sign of feet
    declared as metres (slopes x 3.28). The check warns; it never changes a number.

    Parameters
    ----------
    dem_path : path-like
        The DEM.
    vertical_units : {"m", "ft", "us_ft"}
        The declared vertical units (``layers.toml [dem] vertical_units``).
    area : shapely geometry
        The site; the window is its bounds plus one cell.
    area_crs : CRS-like
        CRS of *area*.
    max_slope_pct : float, optional
        The steepest slope already measured on the site, percent.

    Returns
    -------
    list of str
        Warnings for report.json (empty when both checks pass or the DEM has no data there).
    """
    out: list[str] = []
    try:
        win = read_dem_window(dem_path, vertical_units, area, area_crs, margin=1)
    except (CoverageError, LimitError):
        return out  # the measures say why they have no value
    elev = win.elev[np.isfinite(win.elev)]
    median_ft = float(np.median(elev)) * win.v_m_per_unit / M_PER_FT
    low, high = WISCONSIN_ELEVATION_FT
    where = f"{Path(str(dem_path)).name} (vertical_units = {vertical_units!r})"
    if not (low - ELEVATION_MARGIN_FT <= median_ft <= high + ELEVATION_MARGIN_FT):
        out.append(
            f"DEM {where}: the median elevation around the site reads as {median_ft:,.0f} ft,"
            f" outside Wisconsin's land surface ({low:,.1f} to {high:,.0f} ft); are the"
            " declared vertical units right? Slopes would be off by a factor of 3.28."
        )
    if max_slope_pct is not None and max_slope_pct > IMPLAUSIBLE_SLOPE_PCT:
        out.append(
            f"DEM {where}: the steepest slope on the site is {max_slope_pct:,.0f} %, more than"
            f" the {IMPLAUSIBLE_SLOPE_PCT:.0f} % plausible for land; are the declared vertical"
            " units right (feet declared as metres make slopes 3.28 times too steep)?"
        )
    for text in out:
        logger.warning("%s", text)
    return out
