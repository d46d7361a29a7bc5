"""Engineering sections of ``submission.toml``: their schema and validation.

The ``[soil_loss]``, ``[hydrology]``, ``[[basins]]`` and ``[dewatering]`` sections
(:func:`parse_sections`); every value an applicant declares is checked here, with its source
where the value is not ours, so the measures in :mod:`georeview.measure.erosion`,
:mod:`georeview.measure.runoff` and :mod:`georeview.measure.basins` read validated models.

Submission format (all keys optional)::

    [soil_loss]
    phases = [                      # consecutive, from initial grading to final stabilization
      { cover = "bare", months = 2 },                     # cover: a usle.toml key
      { cover = "mulch_hay_1_5_tpa", start = 2025-06-01, end = 2025-07-15 },
      { name = "blanket", c_factor = 0.05, c_source = "manufacturer", months = 3,
        r_fraction = 0.35,          # share of annual R in the phase, > 0, with its source
        r_fraction_source = "WDNR soil loss tool, Kenosha, weeks 23-35" },
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
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from georeview import hydrology as hy
from georeview import soil_loss as sl
from georeview.config import StrictModel, parse_model
from georeview.errors import InputError

Positive = Annotated[float, Field(gt=0)]
NonNeg = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]
StormKey = Literal["1yr", "2yr", "5yr", "10yr", "100yr"]

_DAYS_PER_MONTH = sl.DAYS_PER_YEAR / 12.0


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
    #: Share of the annual R in the phase: more than 0 (no period of the year is without
    #: erosivity: AH 537 counts thaw and snowmelt runoff in the northern states), with
    #: where it comes from, like every factor the applicant gives.
    r_fraction: Annotated[float, Field(gt=0, le=1)] | None = None
    r_fraction_source: str | None = None

    @model_validator(mode="after")
    def _check(self) -> PhaseSpec:
        if self.cover is None and self.c_factor is None:
            raise ValueError("give cover (a usle.toml cover) or c_factor with c_source")
        if self.c_factor is not None and not self.c_source:
            raise ValueError("c_factor needs c_source (where the value comes from)")
        if self.r_fraction is not None and not (self.r_fraction_source or "").strip():
            raise ValueError("r_fraction needs r_fraction_source (where the share comes from)")
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
        _check_r_shares(self.phases)
        return self


def _check_r_shares(phases: tuple[PhaseSpec, ...]) -> None:
    """Refuse declared R shares that add up to more than a year's R within a year.

    Consecutive phases that together last a year or less cannot hold more than the
    whole annual R (a share of 0.9 for June and 0.9 for July would double the year).
    """
    days = [ph.days for ph in phases]
    for i in range(len(phases)):  # a schedule's few phases
        total = span = 0.0
        for j in range(i, len(phases)):
            span += days[j]
            if span > sl.DAYS_PER_YEAR + 1e-9:
                break
            total += phases[j].r_fraction or 0.0
            if total > 1.0 + 1e-9:
                raise ValueError(
                    f"the r_fraction of phases {i + 1} to {j + 1} add up to {total:g}, more "
                    f"than the whole annual R, within {span:.0f} days"
                )


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
    #: The flow path while the site is disturbed (graded ground, before pavement and pipes).
    flow_path_construction: Annotated[tuple[FlowSegmentSpec, ...], Field(strict=False)] = ()
    pond_swamp_pct: NonNeg = 0.0
    drainage_area_acres: Positive | None = None
    rainfall_in: dict[StormKey, Positive] = Field(default_factory=dict)
    rainfall_source: str | None = None
    #: Peak outflow after the proposed runoff controls (detention routing by the
    #: applicant's engineer; TR-55's graphical method does not route), cfs per storm.
    routed_peak_cfs: dict[StormKey, NonNeg] = Field(default_factory=dict)
    #: Peak outflow while the site is disturbed, after its sediment basins or detention
    #: (the applicant's routing), cfs per storm.
    routed_construction_peak_cfs: dict[StormKey, NonNeg] = Field(default_factory=dict)
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
        if (self.routed_peak_cfs or self.routed_construction_peak_cfs) and not self.routed_source:
            raise ValueError(
                "routed_peak_cfs and routed_construction_peak_cfs need routed_source (e.g. the "
                "detention design and its model)"
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
