"""Sediment and dewatering basin sizing by surface settling rate (Deerfield 31.06).

Deerfield 31.06(3)(B): "The total sedimentation basin surface area shall provide a
surface settling rate of not more than 1500 gallons per square foot per day for a five
(5) year, 24 hour storm ... Sedimentation basin depth shall be at least 3 feet and all
sedimentation basins shall be surrounded by a 4 foot high snow fence or equivalent
barrier." 31.06(2)(A) asks the same of dewatering basins "at the highest dewatering
pumping rate".

The required surface area is ``inflow (gal/day) / settling rate (gal/sq ft/day)``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

from georeview.errors import InputError
from georeview.units import GPD_PER_CFS, S_PER_DAY

#: Maximum surface settling rate, gallons per square foot per day (Deerfield 31.06(2)(A), (3)(B)).
SETTLING_RATE_GPD_PER_SQFT = 1500.0
#: Gallons per day in one gallon per minute (minutes in a day: seconds per day / 60).
_GPD_PER_GPM = S_PER_DAY / 60.0


def _nonneg(value: float, name: str) -> float:
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise InputError(f"{name} must be >= 0, got {value!r}", field=name)
    return v


def _rate(settling_rate_gpd_per_sqft: float) -> float:
    r = float(settling_rate_gpd_per_sqft)
    if not math.isfinite(r) or r <= 0:
        raise InputError(
            f"settling rate must be > 0 gal/sq ft/day, got {settling_rate_gpd_per_sqft!r}",
            field="settling_rate_gpd_per_sqft",
        )
    return r


def basin_area_sqft(
    inflow_cfs: float, settling_rate_gpd_per_sqft: float = SETTLING_RATE_GPD_PER_SQFT
) -> float:
    """Return the basin surface area giving the settling rate at a peak inflow.

    Parameters
    ----------
    inflow_cfs : float
        Peak inflow, cubic feet per second (for Deerfield 31.06(3)(B): the 5-year,
        24-hour TR-55 peak from the drainage area during development).
    settling_rate_gpd_per_sqft : float, optional
        Surface settling rate, gallons per square foot per day (default 1,500).

    Returns
    -------
    float
        Surface area, square feet: ``inflow_cfs x 646,316.88 / rate``.
    """
    return _nonneg(inflow_cfs, "inflow_cfs") * GPD_PER_CFS / _rate(settling_rate_gpd_per_sqft)


def dewatering_basin_area_sqft(
    pump_rate_gpm: float, settling_rate_gpd_per_sqft: float = SETTLING_RATE_GPD_PER_SQFT
) -> float:
    """Return the dewatering basin surface area for the highest pumping rate (31.06(2)(A)).

    ``pump_rate_gpm x 1,440 / rate``, square feet.
    """
    gpd = _nonneg(pump_rate_gpm, "pump_rate_gpm") * _GPD_PER_GPM
    return gpd / _rate(settling_rate_gpd_per_sqft)


@dataclass(frozen=True)
class Measure:
    """One measured quantity against its limit.

    ``ok`` is None (and ``reason`` says why) when the measured value is not known.
    ``kind`` is ``"min"`` (measured must be >= limit).
    """

    name: str
    measured: float | None
    limit: float | None
    kind: Literal["min"]
    ok: bool | None
    reason: str | None = None


def _at_least(name: str, measured: float | None, limit: float | None, what: str) -> Measure:
    if limit is None:
        return Measure(name, measured, None, "min", None, f"the ordinance sets no {what}")
    if measured is None:
        return Measure(name, None, limit, "min", None, f"{what} not declared")
    return Measure(name, float(measured), float(limit), "min", float(measured) >= limit)


@dataclass(frozen=True)
class BasinCheck:
    """A declared basin checked against the ordinance's basin standards.

    Attributes
    ----------
    basin_id : str
    kind : {"sediment", "dewatering"}
    citation : str
        The ordinance paragraph.
    area : Measure
        Declared surface area vs required area, sq ft.
    depth : Measure
        Declared depth vs the ordinance's minimum.
    fence : Measure
        Declared fence or barrier height vs the ordinance's minimum.
    """

    basin_id: str
    kind: Literal["sediment", "dewatering"]
    citation: str
    area: Measure
    depth: Measure
    fence: Measure

    @property
    def ok(self) -> bool | None:
        """True when every check passes, False when one fails, else None (unknown)."""
        oks = [self.area.ok, self.depth.ok, self.fence.ok]
        if any(v is False for v in oks):
            return False
        return None if any(v is None for v in oks) else True

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for report.json."""
        d = asdict(self)
        d["ok"] = self.ok
        return d


def check_basin(
    basin_id: str,
    kind: Literal["sediment", "dewatering"],
    *,
    area_sqft: float | None,
    depth_ft: float | None,
    fence_height_ft: float | None,
    required_area_sqft: float | None,
    required_area_reason: str | None = None,
    min_depth_ft: float | None,
    min_fence_height_ft: float | None,
    citation: str,
) -> BasinCheck:
    """Check one declared basin's area, depth and fence against the ordinance's minimums.

    Parameters
    ----------
    basin_id, kind : str
        Identifier and kind of the basin.
    area_sqft, depth_ft, fence_height_ft : float or None
        Declared values; None means not declared.
    required_area_sqft : float or None
        Area the basin must provide; None when it cannot be computed.
    required_area_reason : str, optional
        Why the required area is unknown.
    min_depth_ft, min_fence_height_ft : float or None
        The ordinance's minimum depth and fence height (``None``: it sets none).
    citation : str
        Where the ordinance sets them.
    """
    if required_area_sqft is None:
        area = Measure(
            "surface_area_sqft",
            None if area_sqft is None else float(area_sqft),
            None,
            "min",
            None,
            required_area_reason or "required area unknown",
        )
    else:
        area = _at_least("surface_area_sqft", area_sqft, required_area_sqft, "surface area")
    return BasinCheck(
        basin_id=basin_id,
        kind=kind,
        citation=citation,
        area=area,
        depth=_at_least("depth_ft", depth_ft, min_depth_ft, "depth"),
        fence=_at_least("fence_height_ft", fence_height_ft, min_fence_height_ft, "fence height"),
    )
