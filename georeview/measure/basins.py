"""Basin measures: sediment- and dewatering-basin areas required, declared basins checked.

The sediment basin's area at the ordinance's settling rate for the design storm's peak
during development, the dewatering basin's at the highest declared pumping rate
(:mod:`georeview.sediment` does the arithmetic), each declared basin's area, depth and fence
against the ordinance, and the deepest unfenced one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from georeview import sediment as sd
from georeview.measure.engineering_criteria import Criteria
from georeview.measure.engineering_inputs import BasinSpec, EngineeringInputs

#: A peak for (storm, condition): (cfs or None, the reason it is None).
PeakFn = Callable[[str, str], tuple[float | None, str | None]]


def max_unfenced_depth_ft(basins: Sequence[BasinSpec]) -> float | None:
    """Deepest declared basin or pond without a fence (see ``EngineeringResult``)."""
    if any(b.depth_ft is None or b.fence_height_ft is None for b in basins):
        return None
    unfenced = [b.depth_ft for b in basins if b.fence_height_ft == 0 and b.depth_ft is not None]
    return max((float(d) for d in unfenced), default=0.0)


def basin_checks(
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


def required_sediment_basin(
    crit: Criteria, peak: PeakFn, inputs: EngineeringInputs
) -> tuple[dict[str, Any], float | None]:
    """Required sediment-basin area at the design storm's peak during development.

    The peak is of the drainage area that discharges to the basins, declared as
    ``hydrology.drainage_area_acres``: the site's own area is not it (land beyond the site
    may drain to them), so without it the area required is unknown.
    """
    q5: float | None = None
    q5_reason: str | None = _NO_STANDARD
    required: float | None = None
    if crit.basin_storm is None or crit.basin_settling_rate_gpd_per_sqft is None:
        pass
    elif inputs.hydrology.drainage_area_acres is None:
        q5_reason = (
            "the drainage area that discharges to the sediment basins "
            "(hydrology.drainage_area_acres) is not given; the site's area is not it"
        )
    else:
        q5, q5_reason = peak(crit.basin_storm, "construction")
        required = (
            None if q5 is None else sd.basin_area_sqft(q5, crit.basin_settling_rate_gpd_per_sqft)
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


def required_dewatering_basin(crit: Criteria, inputs: EngineeringInputs) -> dict[str, Any]:
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
