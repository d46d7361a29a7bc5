"""Engineering stage: USLE soil loss, TR-55 peak flows, sediment and dewatering basins.

Reads the ``[soil_loss]``, ``[hydrology]``, ``[[basins]]`` and ``[dewatering]`` sections
of ``submission.toml`` (:func:`parse_sections`) and measures, for the rules:

* Somers 17.08(C)(2)(a)-(c), 17.10(B)(3)(e): soil loss, tons/acre/year, over the
  disturbance period (:mod:`georeview.soil_loss`), and whether a maximum-extent-practicable
  explanation was given;
* Deerfield 31.06(3)(C): pre- and post-development TR-55 peaks for the 1-, 2-, 10- and
  100-year 24-hour storms (:mod:`georeview.hydrology`);
* Deerfield 31.06(3)(B): the 5-year peak during development and the sediment basin area
  it requires at 1,500 gal/sq ft/day; 31.06(2)(A): the dewatering basin area at the
  highest pumping rate; declared basins' area, depth and fence (:mod:`georeview.sediment`).

A fact that is missing gives ``None`` and a reason string, never a guessed number.

Submission format (all keys optional)::

    [soil_loss]
    phases = [                      # consecutive, from initial grading to final stabilization
      { cover = "bare", months = 2 },                     # cover: a usle.toml key
      { cover = "mulch_hay_1_5_tpa", start = 2025-06-01, end = 2025-07-15 },
      { name = "blanket", c_factor = 0.05, c_source = "manufacturer", months = 3,
        r_fraction = 0.35 },        # share of annual R in the phase (e.g. WDNR tool)
    ]
    slope_segments = [ { length_ft = 120, slope_pct = 6 } ]   # profile, top down
    mep_explanation = "..."         # Somers 17.08(C)(2)(c)
    r_factor = 150                  # with r_factor_source; overrides usle.toml
    k_factor = 0.32                 # with k_factor_source; else SSURGO K

    [hydrology]
    existing = [ { cover = "row_crops_straight_good", hsg = "from_soils", fraction = 1.0 } ]
    proposed = [ { cover = "impervious", hsg = "B", acres = 2.0 },
                 { cover = "open_space_good", hsg = "from_soils", acres = 4.5 } ]
    construction = [ { cover = "newly_graded", hsg = "from_soils", fraction = 1.0 } ]
    tc_pre_hr = 0.45                # or flow_path_pre = [ {kind = "sheet", ...}, ... ]
    tc_post_hr = 0.25
    pond_swamp_pct = 0.0
    rainfall_in = { "1yr" = 2.4, "2yr" = 2.8, "5yr" = 3.5, "10yr" = 4.1, "100yr" = 6.5 }
    rainfall_source = "NOAA Atlas 14 PFDS at 43.05N 89.08W, read 2025-01-10"
    routed_peak_cfs = { "1yr" = 3.1, "2yr" = 4.0, "10yr" = 7.9 }   # outflow after detention
    routed_source = "pond routing by the applicant's engineer (HydroCAD), sheet 4"

    [[basins]]
    id = "SB-1"
    kind = "sediment"               # or "dewatering"
    area_sqft = 5000
    depth_ft = 3.5
    fence_height_ft = 4

    [dewatering]
    pump_rate_gpm = 300
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, model_validator

from georeview import hydrology as hy
from georeview import sediment as sd
from georeview import soil_loss as sl
from georeview.config import StrictModel, parse_model
from georeview.errors import InputError
from georeview.units import SQFT_PER_ACRE, sqft_to_sqmi

logger = logging.getLogger(__name__)

Positive = Annotated[float, Field(gt=0)]
NonNeg = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]
StormKey = Literal["1yr", "2yr", "5yr", "10yr", "100yr"]

#: Storms whose peaks report.json gives in ``measures.peak_flow_cfs`` (DESIGN §2.4); an
#: ordinance's ``peak_storms`` parameter adds the ones its rules compare.
REPORTED_STORMS: tuple[str, ...] = ("1yr", "2yr", "10yr", "100yr")
#: TR-55's sheet-flow travel time uses the 2-year 24-hour rainfall (TR-55 eq. 3-3).
SHEET_FLOW_STORM = "2yr"
_DAYS_PER_MONTH = sl.DAYS_PER_YEAR / 12.0


# --------------------------------------------------------------------------------------------
# Submission schema
# --------------------------------------------------------------------------------------------
class PhaseSpec(StrictModel):
    """One construction phase of ``[soil_loss] phases``."""

    cover: str | None = None
    name: str | None = None
    c_factor: Fraction | None = None
    c_source: str | None = None
    p_factor: Annotated[float, Field(gt=0, le=1)] | None = None
    months: Positive | None = None
    start: dt.date | None = None
    end: dt.date | None = None
    r_fraction: Fraction | None = None

    @model_validator(mode="after")
    def _check(self) -> PhaseSpec:
        if self.cover is None and self.c_factor is None:
            raise ValueError("give cover (a usle.toml cover) or c_factor with c_source")
        if self.c_factor is not None and not self.c_source:
            raise ValueError("c_factor needs c_source (where the value comes from)")
        if self.cover is not None and self.cover not in sl.usle_tables()["cover"]:
            known = ", ".join(sorted(sl.usle_tables()["cover"]))
            raise ValueError(f"unknown cover {self.cover!r}; use one of {known}")
        dated = self.start is not None or self.end is not None
        if self.months is not None and dated:
            raise ValueError("give months or start and end, not both")
        if self.months is None and not (self.start and self.end):
            raise ValueError("give months, or both start and end")
        if self.start and self.end and self.end <= self.start:
            raise ValueError(f"end {self.end} is not after start {self.start}")
        return self

    @property
    def days(self) -> float:
        """Duration in days (months of 365.25/12 days, or end - start)."""
        if self.months is not None:
            return self.months * _DAYS_PER_MONTH
        if self.start is None or self.end is None:  # unreachable after validation
            raise InputError("phase needs months or start and end", field="months")
        return float((self.end - self.start).days)


class SlopeSegment(StrictModel):
    """One segment of a declared slope profile, top down."""

    length_ft: Positive
    slope_pct: NonNeg


class SoilLossSpec(StrictModel):
    """``[soil_loss]``."""

    phases: Annotated[tuple[PhaseSpec, ...], Field(strict=False)] = ()
    slope_segments: Annotated[tuple[SlopeSegment, ...], Field(strict=False)] = ()
    mep_explanation: str | None = None
    r_factor: Positive | None = None
    r_factor_source: str | None = None
    k_factor: Annotated[float, Field(gt=0, le=1)] | None = None
    k_factor_source: str | None = None

    @model_validator(mode="after")
    def _sources(self) -> SoilLossSpec:
        if self.r_factor is not None and not self.r_factor_source:
            raise ValueError("r_factor needs r_factor_source")
        if self.k_factor is not None and not self.k_factor_source:
            raise ValueError("k_factor needs k_factor_source")
        return self


class CoverPart(StrictModel):
    """One row of a cover table: a TR-55 cover on a soil group over an area."""

    cover: str
    hsg: str = "from_soils"
    acres: NonNeg | None = None
    fraction: Fraction | None = None

    @model_validator(mode="after")
    def _check(self) -> CoverPart:
        if self.cover not in hy.tr55_tables()["cover"]:
            known = ", ".join(hy.cover_keys())
            raise ValueError(f"unknown cover {self.cover!r}; use one of {known}")
        if self.hsg != "from_soils":
            try:
                hy.normalize_hsg(self.hsg)
            except InputError as exc:
                raise ValueError(f"{exc.message} or 'from_soils'") from None
        if (self.acres is None) == (self.fraction is None):
            raise ValueError("give exactly one of acres or fraction")
        return self


class FlowSegmentSpec(StrictModel):
    """One segment of a declared flow path (TR-55 chapter 3)."""

    kind: Literal["sheet", "shallow", "channel"]
    length_ft: Positive
    slope_pct: Positive
    n: Positive | None = None
    surface: str | None = None
    area_sqft: Positive | None = None
    wetted_perimeter_ft: Positive | None = None

    @model_validator(mode="after")
    def _check(self) -> FlowSegmentSpec:
        if self.kind == "sheet":
            if self.n is None and self.surface not in hy.tr55_tables()["sheet_flow_n"]:
                known = ", ".join(sorted(hy.tr55_tables()["sheet_flow_n"]))
                raise ValueError(f"sheet flow needs n or a surface of TR-55 Table 3-1: {known}")
        elif self.kind == "shallow":
            if self.surface not in ("paved", "unpaved"):
                raise ValueError("shallow flow needs surface = 'paved' or 'unpaved'")
        elif None in (self.n, self.area_sqft, self.wetted_perimeter_ft):
            raise ValueError("channel flow needs n, area_sqft and wetted_perimeter_ft")
        return self

    def segment(self, p2_in: float | None) -> hy.Segment:
        """Build the hydrology segment; sheet flow needs the 2-year rainfall."""
        s = self.slope_pct / 100.0
        if self.kind == "sheet":
            if p2_in is None:
                raise InputError("sheet flow needs the 2-year 24-hour rainfall", field="2yr")
            n = self.n if self.n is not None else hy.tr55_tables()["sheet_flow_n"][self.surface]
            return hy.SheetFlow(self.length_ft, s, n, p2_in)
        if self.kind == "shallow":
            return hy.ShallowFlow(self.length_ft, s, self.surface)  # type: ignore[arg-type]
        n, area, wetted = self.n, self.area_sqft, self.wetted_perimeter_ft
        if n is None or area is None or wetted is None:  # refused by _check; narrowed here
            raise InputError(
                "channel flow needs n, area_sqft and wetted_perimeter_ft", field="flow_path"
            )
        return hy.ChannelFlow(self.length_ft, s, n, area, wetted)


class HydrologySpec(StrictModel):
    """``[hydrology]``."""

    existing: Annotated[tuple[CoverPart, ...], Field(strict=False)] = ()
    proposed: Annotated[tuple[CoverPart, ...], Field(strict=False)] = ()
    construction: Annotated[tuple[CoverPart, ...], Field(strict=False)] = ()
    tc_pre_hr: Positive | None = None
    tc_post_hr: Positive | None = None
    tc_construction_hr: Positive | None = None
    flow_path_pre: Annotated[tuple[FlowSegmentSpec, ...], Field(strict=False)] = ()
    flow_path_post: Annotated[tuple[FlowSegmentSpec, ...], Field(strict=False)] = ()
    pond_swamp_pct: NonNeg = 0.0
    drainage_area_acres: Positive | None = None
    rainfall_in: dict[StormKey, Positive] = Field(default_factory=dict)
    rainfall_source: str | None = None
    #: Peak outflow after the proposed runoff controls (detention routing by the
    #: applicant's engineer; TR-55's graphical method does not route), cfs per storm.
    routed_peak_cfs: dict[StormKey, NonNeg] = Field(default_factory=dict)
    routed_source: str | None = None
    #: Where the plan describes detention of the runoff (pond, basin, storage; e.g.
    #: "wet detention basin DB-1, sheet C-4"). The peak leaving such a site is the routed
    #: outflow: TR-55's unrouted post-development peak is not it, so a storm without
    #: ``routed_peak_cfs`` has no peak leaving the site.
    detention: Annotated[str, Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _sources(self) -> HydrologySpec:
        if self.rainfall_in and not self.rainfall_source:
            raise ValueError("rainfall_in needs rainfall_source (e.g. NOAA Atlas 14 PFDS point)")
        if self.routed_peak_cfs and not self.routed_source:
            raise ValueError(
                "routed_peak_cfs needs routed_source (e.g. the detention design and its model)"
            )
        return self


class BasinSpec(StrictModel):
    """One ``[[basins]]`` entry."""

    id: str
    #: ``runoff``: a water runoff control measure that ponds water (detention pond,
    #: infiltration basin), checked only for its depth and fence (Deerfield 31.06(3)(C)).
    kind: Literal["sediment", "dewatering", "runoff"]
    area_sqft: NonNeg | None = None
    depth_ft: NonNeg | None = None
    fence_height_ft: NonNeg | None = None


class DewateringSpec(StrictModel):
    """``[dewatering]``."""

    pump_rate_gpm: NonNeg | None = None


class EngineeringInputs(StrictModel):
    """The engineering sections of ``submission.toml``."""

    soil_loss: SoilLossSpec = SoilLossSpec()
    hydrology: HydrologySpec = HydrologySpec()
    basins: Annotated[tuple[BasinSpec, ...], Field(strict=False)] = ()
    dewatering: DewateringSpec = DewateringSpec()


def parse_sections(raw: dict[str, Any], path: Path | str) -> EngineeringInputs:
    """Validate the engineering sections of a submission.

    Parameters
    ----------
    raw : dict
        The parsed ``submission.toml`` (or any dict holding ``soil_loss``, ``hydrology``,
        ``basins`` and ``dewatering``; other keys are ignored).
    path : path-like
        The file, for error messages.

    Raises
    ------
    georeview.errors.ConfigError
        Naming the dotted field (e.g. ``soil_loss.phases.0.months``).
    """
    keys = ("soil_loss", "hydrology", "basins", "dewatering")
    data = {k: raw[k] for k in keys if k in raw and raw[k] is not None}
    return parse_model(EngineeringInputs, data, Path(path))


# --------------------------------------------------------------------------------------------
# Rainfall
# --------------------------------------------------------------------------------------------
def design_rainfall_in(municipality: str) -> tuple[dict[str, float], str, bool]:
    """Return configured 24-hour design depths ``{"2yr": in, ...}``, their source, confirmed."""
    from georeview.ordinances import table

    entry = table(municipality, "rainfall")
    confirmed = entry.get("status") == "confirmed"
    depths = {k: float(v) for k, v in entry.get("depths_in", {}).items()} if confirmed else {}
    return depths, entry.get("source", ""), confirmed


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Factor:
    """A USLE factor with where it came from; ``value`` None with ``reason`` when missing."""

    value: float | None
    source: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class SoilLossResult:
    """USLE over the disturbance period (Somers 17.08(C)(2), 17.10(B)(3)(e))."""

    tons_per_acre_year: float | None
    reason: str | None
    total_tons_per_acre: float | None
    period_days: float | None
    r: Factor
    k: Factor
    ls: Factor
    phases: tuple[dict[str, Any], ...]
    mep_explanation_given: bool
    method: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class EngineeringResult:
    """Everything the engineering stage measured; ``to_dict()`` feeds report.json.

    Attributes
    ----------
    soil_loss_tons_per_acre_year : float or None
        ``measures.soil_loss_tons_per_acre_year``; None with ``soil_loss.reason``.
    soil_loss : SoilLossResult
    peak_flow_cfs : dict or None
        ``measures.peak_flow_cfs``: ``{"1yr": {"pre": f|None, "post": f|None}, "2yr", "10yr",
        "100yr"}``; None only when no storm could be computed at all.
    peak_flow_reasons : dict
        Same keys; the reason for each None (None where a value exists).
    peak_flow_details : tuple of dict
        One per computed storm and condition: P, CN, Tc, Q, qu, Ia/P, warnings, within_limits.
    curve_numbers : dict
        ``{"pre": cn|None, "post": ..., "construction": ...}``, area-weighted and rounded to a
        whole number as on TR-55 worksheet 2.
    tc_hr : dict
        ``{"pre": h|None, "post": ..., "construction": ...}``.
    rainfall : dict
        Depths used and their source.
    sediment_basin : dict
        31.06(3)(B): ``inflow_cfs`` (5-yr peak during development), ``required_area_sqft``,
        ``declared_total_area_sqft``, ``ok``, ``reason``, ``settling_rate_gpd_per_sqft``.
    dewatering : dict
        31.06(2)(A): ``pump_rate_gpm``, ``required_area_sqft``, ``reason``.
    basin_checks : tuple of dict
        :meth:`georeview.sediment.BasinCheck.to_dict` of each declared sediment or
        dewatering basin.
    max_unfenced_depth_ft : float or None
        Deepest declared basin or pond of any kind with no fence (fence height 0), in ft;
        0.0 when every declared one is fenced or none is declared; None when a basin lacks
        its depth or fence height (Deerfield 31.06(3)(C) compares it with its limit).
    warnings : tuple of str
    """

    soil_loss_tons_per_acre_year: float | None
    soil_loss: SoilLossResult
    peak_flow_cfs: dict[str, dict[str, float | None]] | None
    peak_flow_reasons: dict[str, dict[str, str | None]]
    peak_flow_details: tuple[dict[str, Any], ...]
    curve_numbers: dict[str, float | None]
    tc_hr: dict[str, float | None]
    rainfall: dict[str, Any]
    sediment_basin: dict[str, Any]
    dewatering: dict[str, Any]
    basin_checks: tuple[dict[str, Any], ...]
    max_unfenced_depth_ft: float | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (lists for tuples)."""

        def plain(obj: Any) -> Any:
            if isinstance(obj, dict):
                return {k: plain(v) for k, v in obj.items()}
            if isinstance(obj, list | tuple):
                return [plain(v) for v in obj]
            if isinstance(obj, float) and not math.isfinite(obj):
                return None
            return obj

        return plain(asdict(self))


def _max_unfenced_depth_ft(basins: Sequence[BasinSpec]) -> float | None:
    """Deepest declared basin or pond without a fence (see ``EngineeringResult``)."""
    if any(b.depth_ft is None or b.fence_height_ft is None for b in basins):
        return None
    unfenced = [b.depth_ft for b in basins if b.fence_height_ft == 0 and b.depth_ft is not None]
    return max((float(d) for d in unfenced), default=0.0)


# --------------------------------------------------------------------------------------------
# Soil loss
# --------------------------------------------------------------------------------------------
SoilRow = tuple[float, str | None, float | None]


def _k_factor(spec: SoilLossSpec, soils: Sequence[SoilRow] | None) -> Factor:
    if spec.k_factor is not None:
        return Factor(spec.k_factor, spec.k_factor_source)
    if not soils:
        return Factor(None, reason="no soils layer and no soil_loss.k_factor")
    rows = [(float(a), float(k)) for a, _h, k in soils if k is not None and float(a) > 0]
    total = sum(float(a) for a, _h, _k in soils if float(a) > 0)
    if not rows:
        return Factor(None, reason="the soils layer has no K factor in the disturbed area")
    known = sum(a for a, _k in rows)
    k = sum(a * kk for a, kk in rows) / known
    src = (
        f"SSURGO K factor, area-weighted over {known:,.0f} sq ft "
        f"({100 * known / total:.0f} % of the soil area in the disturbed area)"
    )
    return Factor(k, src)


def _ls(
    spec: SoilLossSpec,
    slope_pct_samples: np.ndarray | None,
    flow_length_ft_samples: np.ndarray | None,
    warnings: list[str],
) -> Factor:
    dem_ls: float | None = None
    if slope_pct_samples is not None and flow_length_ft_samples is not None:
        try:
            dem_ls = sl.representative_ls(
                sl.ls_from_grids(slope_pct_samples, flow_length_ft_samples)
            )
        except InputError as exc:
            warnings.append(f"LS from the DEM unavailable: {exc.message}")
    if spec.slope_segments:
        declared = sl.ls_from_segments([(s.length_ft, s.slope_pct) for s in spec.slope_segments])
        if dem_ls is not None and dem_ls > 1.2 * declared:
            warnings.append(
                f"declared slope segments give LS = {declared:.2f}, the DEM gives "
                f"{dem_ls:.2f} over the disturbed area"
            )
        return Factor(declared, "declared slope segments (AH 537 irregular-slope procedure)")
    if dem_ls is not None:
        return Factor(
            dem_ls, "DEM slope and flow length, area-weighted mean over the disturbed area"
        )
    return Factor(None, reason="no slope_segments declared and no DEM slope/flow length")


def _soil_loss(
    spec: SoilLossSpec,
    municipality: str,
    soils: Sequence[SoilRow] | None,
    slope_pct_samples: np.ndarray | None,
    flow_length_ft_samples: np.ndarray | None,
) -> SoilLossResult:
    warnings: list[str] = []
    if spec.r_factor is not None:
        r = Factor(spec.r_factor, spec.r_factor_source)
    else:
        rf = sl.r_factor_for(municipality)
        r = Factor(
            rf.value, rf.source, None if rf.confirmed else f"R factor unconfirmed: {rf.source}"
        )
    k = _k_factor(spec, soils)
    ls = _ls(spec, slope_pct_samples, flow_length_ft_samples, warnings)
    p_default = float(sl.usle_tables()["p_factor"]["default"])
    phases_out: list[dict[str, Any]] = []
    phases: list[sl.Phase] = []
    for i, ph in enumerate(spec.phases):
        if ph.c_factor is not None:
            c, c_src = ph.c_factor, ph.c_source
        else:
            c, c_src = sl.c_factor(ph.cover or ""), sl.usle_tables()["cover_source"]["c"]
        p = ph.p_factor if ph.p_factor is not None else p_default
        name = ph.name or ph.cover or f"phase {i + 1}"
        phases.append(sl.Phase(name, c, p, ph.days, ph.r_fraction))
        phases_out.append(
            {
                "name": name,
                "c": c,
                "c_source": c_src,
                "p": p,
                "days": ph.days,
                "r_fraction": ph.r_fraction,
                "tons_per_acre": None,
            }
        )
    method = str(sl.usle_tables()["source"]["period_rule"])
    missing = [f.reason for f in (r, k, ls) if f.value is None and f.reason]
    if not spec.phases:
        missing.append("no construction phases declared (soil_loss.phases)")
    if missing:
        return SoilLossResult(
            None,
            "; ".join(missing),
            None,
            None,
            r,
            k,
            ls,
            tuple(phases_out),
            bool(spec.mep_explanation),
            method,
            tuple(warnings),
        )
    res = sl.soil_loss_over_period(r.value, k.value, ls.value, phases)  # type: ignore[arg-type]
    for d, t in zip(phases_out, res.phase_tons_per_acre, strict=True):
        d["tons_per_acre"] = t
    warnings.extend(res.warnings)
    return SoilLossResult(
        res.tons_per_acre_year,
        None,
        res.total_tons_per_acre,
        res.period_days,
        r,
        k,
        ls,
        tuple(phases_out),
        bool(spec.mep_explanation),
        method,
        tuple(warnings),
    )


# --------------------------------------------------------------------------------------------
# Peak flows
# --------------------------------------------------------------------------------------------
def _hsg_shares(soils: Sequence[SoilRow] | None) -> dict[str, float] | None:
    if not soils:
        return None
    totals: dict[str, float] = {}
    for area, hsg, _k in soils:
        if hsg is None or float(area) <= 0:
            continue
        try:
            g = hy.normalize_hsg(hsg)
        except InputError:
            continue
        totals[g] = totals.get(g, 0.0) + float(area)
    total = sum(totals.values())
    return {g: a / total for g, a in totals.items()} if total > 0 else None


def _composite(
    parts: Sequence[CoverPart],
    area_acres: float,
    shares: dict[str, float] | None,
    label: str,
    warnings: list[str],
) -> tuple[float | None, str | None]:
    if not parts:
        return None, f"no {label} cover table declared (hydrology.{label})"
    rows: list[tuple[float, str, str]] = []
    for part in parts:
        acres = part.acres if part.acres is not None else float(part.fraction or 0) * area_acres
        if part.hsg == "from_soils":
            if shares is None:
                return None, (
                    f"hydrology.{label} uses hsg = 'from_soils' but the soils layer "
                    "gives no hydrologic soil group"
                )
            rows.extend((acres * share, part.cover, g) for g, share in shares.items())
        else:
            rows.append((acres, part.cover, part.hsg))
    covered = sum(a for a, _c, _h in rows)
    if covered > 0 and abs(covered - area_acres) > 0.05 * area_acres:
        warnings.append(
            f"the {label} cover table covers {covered:.2f} ac of a {area_acres:.2f} ac "
            "drainage area"
        )
    try:
        # TR-55 worksheet 2 rounds the weighted CN to a whole number ("Use CN = ...").
        return float(round(hy.composite_cn(rows))), None
    except InputError as exc:
        return None, f"hydrology.{label}: {exc.message}"


def _tc(
    declared: float | None, path: Sequence[FlowSegmentSpec], p2: float | None, label: str
) -> tuple[float | None, str | None]:
    if declared is not None:
        return declared, None
    if not path:
        return None, f"no time of concentration for {label} conditions (tc_{label}_hr or flow path)"
    try:
        return hy.tc_hr([seg.segment(p2) for seg in path]), None
    except InputError as exc:
        return None, f"flow path ({label}): {exc.message}"


@dataclass(frozen=True)
class Criteria:
    """What a municipality's ordinance asks of runoff peaks and basins (its parameters).

    A value an ordinance does not set is ``None``: the measure it drives is not computed,
    and the report says the ordinance sets no such standard.
    """

    peak_storms: tuple[str, ...] = ()
    basin_storm: str | None = None
    basin_settling_rate_gpd_per_sqft: float | None = None
    dewatering_settling_rate_gpd_per_sqft: float | None = None
    basin_min_depth_ft: float | None = None
    basin_min_fence_height_ft: float | None = None
    basin_citation: str = ""
    dewatering_citation: str = ""

    @classmethod
    def of(cls, ordinance: Any) -> Criteria:
        """Read the criteria from an ordinance's ``[parameters]``."""
        p = ordinance.parameters

        def val(name: str) -> Any:
            return p[name].value if name in p else None

        return cls(
            peak_storms=tuple(val("peak_storms") or ()),
            basin_storm=val("basin_design_storm"),
            basin_settling_rate_gpd_per_sqft=val("basin_settling_rate_gpd_per_sqft"),
            dewatering_settling_rate_gpd_per_sqft=val("dewatering_settling_rate_gpd_per_sqft"),
            basin_min_depth_ft=val("basin_min_depth_ft"),
            basin_min_fence_height_ft=val("basin_min_fence_height_ft"),
            basin_citation=ordinance.citation_of("basin_settling_rate_gpd_per_sqft"),
            dewatering_citation=ordinance.citation_of("dewatering_settling_rate_gpd_per_sqft"),
        )


_Values = dict[str, float | None]
_Reasons = dict[str, str | None]


def _curve_numbers_and_tc(
    hyd: HydrologySpec,
    area_acres: float,
    shares: dict[str, float] | None,
    p2_in: float | None,
    crit: Criteria,
    warnings: list[str],
) -> tuple[_Values, _Reasons, _Values, _Reasons]:
    """Composite curve numbers and times of concentration before, during and after development.

    Returns ``(cn, cn_reason, tc, tc_reason)`` keyed ``pre``, ``post`` and ``construction``
    (construction takes the proposed cover and flow path when none is declared).
    """
    cn: dict[str, float | None] = {}
    cn_reason: dict[str, str | None] = {}
    cn["pre"], cn_reason["pre"] = _composite(hyd.existing, area_acres, shares, "existing", warnings)
    cn["post"], cn_reason["post"] = _composite(
        hyd.proposed, area_acres, shares, "proposed", warnings
    )
    if hyd.construction:
        cn["construction"], cn_reason["construction"] = _composite(
            hyd.construction, area_acres, shares, "construction", warnings
        )
    else:
        cn["construction"], cn_reason["construction"] = cn["post"], cn_reason["post"]
        if cn["post"] is not None and crit.basin_storm:
            warnings.append(
                f"no hydrology.construction cover table: the {crit.basin_storm} peak for "
                f"sediment basins ({crit.basin_citation}, 'during development conditions') uses "
                "the proposed cover"
            )
    p2 = p2_in
    tc: dict[str, float | None] = {}
    tc_reason: dict[str, str | None] = {}
    tc["pre"], tc_reason["pre"] = _tc(hyd.tc_pre_hr, hyd.flow_path_pre, p2, "pre")
    tc["post"], tc_reason["post"] = _tc(hyd.tc_post_hr, hyd.flow_path_post, p2, "post")
    if hyd.tc_construction_hr is not None:
        tc["construction"], tc_reason["construction"] = hyd.tc_construction_hr, None
    else:
        tc["construction"], tc_reason["construction"] = tc["post"], tc_reason["post"]

    return cn, cn_reason, tc, tc_reason


def evaluate(
    inputs: EngineeringInputs,
    *,
    municipality: str,
    disturbed_area_sqft: float,
    site_area_sqft: float,
    soils: Sequence[SoilRow] | None = None,
    slope_pct_samples: np.ndarray | None = None,
    flow_length_ft_samples: np.ndarray | None = None,
) -> EngineeringResult:
    """Run the engineering measures for one submission.

    Parameters
    ----------
    inputs : EngineeringInputs
        From :func:`parse_sections`.
    municipality : str
        ``"deerfield"`` or ``"somers"`` (picks R and design rainfall from config).
    disturbed_area_sqft, site_area_sqft : float
        Areas in the working CRS, sq ft. The drainage area for peak flows is
        ``hydrology.drainage_area_acres`` when declared, else the site area.
    soils : list of (area_sqft, hsg, kfactor), optional
        Soil map units intersected with the disturbed area (K) and the site (HSG); None
        when there is no soils layer.
    slope_pct_samples, flow_length_ft_samples : ndarray, optional
        DEM slope (percent) and overland flow length (ft) of the disturbed area's cells.

    Returns
    -------
    EngineeringResult
    """
    del disturbed_area_sqft  # soil loss is per acre; kept for the pipeline's signature
    from georeview.rules import load_ordinance

    crit = Criteria.of(load_ordinance(municipality))
    warnings: list[str] = []
    soil = _soil_loss(
        inputs.soil_loss, municipality, soils, slope_pct_samples, flow_length_ft_samples
    )
    warnings.extend(soil.warnings)

    hyd = inputs.hydrology
    area_acres = hyd.drainage_area_acres or float(site_area_sqft) / SQFT_PER_ACRE
    area_sqmi = sqft_to_sqmi(area_acres * SQFT_PER_ACRE)
    config_depths, config_source, _confirmed = design_rainfall_in(municipality)
    depths: dict[str, float] = dict(config_depths)
    depths.update({str(k): float(v) for k, v in hyd.rainfall_in.items()})
    sources = {k: (hyd.rainfall_source if k in hyd.rainfall_in else config_source) for k in depths}
    rain_reason = (
        f"24-hour design rainfall unconfirmed ({config_source}); pass hydrology.rainfall_in"
    )

    cn, cn_reason, tc, tc_reason = _curve_numbers_and_tc(
        hyd, area_acres, _hsg_shares(soils), depths.get(SHEET_FLOW_STORM), crit, warnings
    )

    details: list[dict[str, Any]] = []

    def peak(storm: str, cond: str) -> tuple[float | None, str | None]:
        reason = cn_reason[cond] or tc_reason[cond]
        if storm not in depths:
            reason = rain_reason if reason is None else f"{rain_reason}; {reason}"
        if reason:
            return None, reason
        c, t_hr = cn[cond], tc[cond]
        if c is None or t_hr is None:  # a reason was given above whenever either is missing
            return None, f"the {storm} {cond} peak needs a curve number and a time of concentration"
        try:
            res = hy.peak_discharge(area_sqmi, c, t_hr, depths[storm], hyd.pond_swamp_pct)
        except InputError as exc:
            return None, f"TR-55 cannot compute the {storm} {cond} peak: {exc.message}"
        details.append(
            {
                "storm": storm,
                "condition": cond,
                "p_in": depths[storm],
                "cn": cn[cond],
                "tc_hr": tc[cond],
                "area_sqmi": area_sqmi,
                **res.to_dict(),
            }
        )
        warnings.extend(f"{storm} {cond}: {w}" for w in res.warnings)
        return res.qp_cfs, None

    peaks: dict[str, dict[str, float | None]] = {}
    reasons: dict[str, dict[str, str | None]] = {}
    for storm in dict.fromkeys((*REPORTED_STORMS, *crit.peak_storms)):
        peaks[storm], reasons[storm] = {}, {}
        for cond in ("pre", "post"):
            peaks[storm][cond], reasons[storm][cond] = peak(storm, cond)
    _routed_outflow(hyd, peaks, reasons, warnings)
    any_peak = any(v is not None for d in peaks.values() for v in d.values())

    sediment_basin, required = _sediment_basin(crit, peak, inputs)
    dewatering = _dewatering(crit, inputs)
    checks = _basin_checks(inputs, crit, sediment_basin, required, dewatering)

    for w in warnings:
        logger.info("engineering: %s", w)
    return EngineeringResult(
        soil_loss_tons_per_acre_year=soil.tons_per_acre_year,
        soil_loss=soil,
        peak_flow_cfs=peaks if any_peak else None,
        peak_flow_reasons=reasons,
        peak_flow_details=tuple(details),
        curve_numbers=cn,
        tc_hr=tc,
        rainfall={"depths_in": depths, "sources": sources, "config_source": config_source},
        sediment_basin=sediment_basin,
        dewatering=dewatering,
        basin_checks=tuple(checks),
        max_unfenced_depth_ft=_max_unfenced_depth_ft(inputs.basins),
        warnings=tuple(warnings),
    )


def _routed_outflow(
    hyd: HydrologySpec,
    peaks: dict[str, dict[str, float | None]],
    reasons: dict[str, dict[str, str | None]],
    warnings: list[str],
) -> None:
    """Add the declared routed outflows; with detention and no routing, the peak is unknown."""
    routed = {str(k): float(v) for k, v in hyd.routed_peak_cfs.items()}
    for key, q in routed.items():
        if key in peaks:
            # What leaves the site after the controls: what a peak-rate standard compares.
            peaks[key]["post_routed"] = q
            reasons[key]["post_routed"] = None
    if hyd.detention:
        unrouted = [s for s in peaks if s not in routed]
        for key in unrouted:
            peaks[key]["post_routed"] = None
            reasons[key]["post_routed"] = (
                f"the plan describes detention ({hyd.detention}): the peak leaving the site is "
                "its routed outflow, which TR-55 does not compute; give routed_peak_cfs"
            )
        if unrouted:
            warnings.append(
                f"Detention described ({hyd.detention}) without a routed outflow for the "
                f"{', '.join(unrouted)} storm(s): TR-55's unrouted post-development peak is not "
                "compared as the peak leaving the site."
            )


def _basin_checks(
    inputs: EngineeringInputs,
    crit: Criteria,
    sediment_basin: dict[str, Any],
    required: float | None,
    dewatering: dict[str, Any],
) -> list[dict[str, Any]]:
    """Each declared sediment or dewatering basin against the ordinance's area, depth, fence."""
    sed_basins = [b for b in inputs.basins if b.kind == "sediment"]
    dw_required = dewatering["required_area_sqft"]

    checks: list[dict[str, Any]] = []
    for b in inputs.basins:
        if b.kind == "runoff":
            continue
        if b.kind == "sediment":
            if len(sed_basins) == 1:
                req, why = required, sediment_basin["reason"] if required is None else None
            else:
                req, why = (
                    None,
                    f"{crit.basin_citation} sets the total area of all sediment basins; "
                    "see sediment_basin",
                )
        else:
            req, why = dw_required, dewatering["reason"]
        checks.append(
            sd.check_basin(
                b.id,
                b.kind,
                area_sqft=b.area_sqft,
                depth_ft=b.depth_ft,
                fence_height_ft=b.fence_height_ft,
                required_area_sqft=req,
                required_area_reason=why,
                min_depth_ft=crit.basin_min_depth_ft,
                min_fence_height_ft=crit.basin_min_fence_height_ft,
                citation=crit.basin_citation if b.kind == "sediment" else crit.dewatering_citation,
            ).to_dict()
        )
    return checks


_NO_STANDARD = "the ordinance sets no such standard"


def _sediment_basin(
    crit: Criteria, peak: Any, inputs: EngineeringInputs
) -> tuple[dict[str, Any], float | None]:
    """Required sediment-basin area at the design storm's peak during development."""
    if crit.basin_storm is None or crit.basin_settling_rate_gpd_per_sqft is None:
        q5, q5_reason, required = None, _NO_STANDARD, None
    else:
        q5, q5_reason = peak(crit.basin_storm, "construction")
        required = (
            None
            if q5 is None
            else sd.basin_area_sqft(q5, crit.basin_settling_rate_gpd_per_sqft)
        )
    sed_basins = [b for b in inputs.basins if b.kind == "sediment"]
    declared_areas = [b.area_sqft for b in sed_basins]
    declared_total = (
        None
        if not sed_basins or any(a is None for a in declared_areas)
        else float(sum(a for a in declared_areas if a is not None))
    )
    sed_ok = None if required is None or declared_total is None else declared_total >= required
    return {
        "citation": crit.basin_citation,
        "storm": crit.basin_storm,
        "inflow_cfs": q5,
        "settling_rate_gpd_per_sqft": crit.basin_settling_rate_gpd_per_sqft,
        "required_area_sqft": required,
        "declared_total_area_sqft": declared_total,
        "ok": sed_ok,
        "reason": q5_reason
        if required is None
        else (None if declared_total is not None else "no sediment basin area declared"),
    }, required


def _dewatering(crit: Criteria, inputs: EngineeringInputs) -> dict[str, Any]:
    """Required dewatering-basin area at the highest declared pumping rate."""
    pump = inputs.dewatering.pump_rate_gpm
    rate = crit.dewatering_settling_rate_gpd_per_sqft
    if rate is None:
        required, reason = None, _NO_STANDARD
    elif pump is None:
        required, reason = None, "no dewatering.pump_rate_gpm declared"
    else:
        required, reason = sd.dewatering_basin_area_sqft(pump, rate), None
    return {
        "citation": crit.dewatering_citation,
        "pump_rate_gpm": pump,
        "settling_rate_gpd_per_sqft": rate,
        "required_area_sqft": required,
        "reason": reason,
    }
