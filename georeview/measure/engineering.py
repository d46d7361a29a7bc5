"""Engineering stage: USLE soil loss, TR-55 peak flows, sediment and dewatering basins.

Reads the ``[soil_loss]``, ``[hydrology]``, ``[[basins]]`` and ``[dewatering]`` sections
of ``submission.toml`` (:func:`georeview.measure.engineering_inputs.parse_sections`) and
measures, for the rules (each municipality's parameters say which apply):

* soil loss, tons/acre/year, over the disturbance period, and whether a
  maximum-extent-practicable explanation was given (:mod:`georeview.measure.erosion`);
* pre- and post-development TR-55 peaks for the reported storms and those the ordinance
  compares (:mod:`georeview.measure.runoff`);
* the design storm's peak during development and the sediment basin area it requires at
  the ordinance's settling rate, the dewatering basin area at the highest pumping rate, and
  declared basins' area, depth and fence (:mod:`georeview.measure.basins`).

A fact that is missing gives ``None`` and a reason string, never a guessed number.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from georeview.measure import basins, runoff
from georeview.measure.engineering_criteria import Criteria
from georeview.measure.engineering_inputs import EngineeringInputs, HydrologySpec
from georeview.measure.erosion import SoilLossResult, SoilRow, soil_loss_result
from georeview.units import SQFT_PER_ACRE, sqft_to_sqmi

logger = logging.getLogger(__name__)

#: Storms whose peaks report.json gives in ``measures.peak_flow_cfs`` (DESIGN §2.4); an
#: ordinance's ``peak_storms`` parameter adds the ones its rules compare.
REPORTED_STORMS: tuple[str, ...] = ("1yr", "2yr", "10yr", "100yr")
#: TR-55's sheet-flow travel time uses the 2-year 24-hour rainfall (TR-55 eq. 3-3).
SHEET_FLOW_STORM = "2yr"


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
    basins_declared : int
        How many ``[[basins]]`` of any kind the submission declares.
    warnings : tuple of str
    tr55 : dict
        The TR-55 subcatchment summary, from the numbers computed above (nothing is
        recomputed): ``drainage_area_acres`` and its source, the rainfall
        ``distribution``, and per condition the curve number with its worksheet-2 rows
        (cover, soil group, acres, CN) and unrounded weight, Tc with its source and
        worksheet-3 segments, and per storm P, Q, Ia, Ia/P, qu, Fp and the peak
        (see :func:`tr55_summary`).
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
    basins_declared: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)
    tr55: dict[str, Any] = field(default_factory=dict)

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


def evaluate(
    inputs: EngineeringInputs,
    *,
    municipality: str,
    disturbed_area_sqft: float | None,
    site_area_sqft: float,
    soils: Sequence[SoilRow] | None = None,
    slope_pct_samples: np.ndarray | None = None,
    flow_length_ft_samples: np.ndarray | None = None,
) -> EngineeringResult:
    """Run the engineering measures for one submission.

    Parameters
    ----------
    inputs : EngineeringInputs
        From :func:`georeview.measure.engineering_inputs.parse_sections`.
    municipality : str
        ``"deerfield"`` or ``"somers"`` (picks R and design rainfall from config).
    disturbed_area_sqft, site_area_sqft : float
        Areas in the working CRS, sq ft (the disturbed area ``None`` when unknown).
        The drainage area for peak flows is ``hydrology.drainage_area_acres`` when
        declared, else the site area.
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
    soil = soil_loss_result(
        inputs.soil_loss, municipality, soils, slope_pct_samples, flow_length_ft_samples
    )
    warnings.extend(soil.warnings)

    hyd = inputs.hydrology
    peak, rainfall, worksheets = _peaks(hyd, municipality, site_area_sqft, soils, warnings)
    peaks, reasons = peak.table((*REPORTED_STORMS, *crit.peak_storms))
    runoff.routed_outflow(hyd, peaks, reasons, warnings, basins_declared=bool(inputs.basins))
    any_peak = any(v is not None for d in peaks.values() for v in d.values())

    sediment_basin, required = basins.required_sediment_basin(crit, peak, inputs)
    dewatering = basins.required_dewatering_basin(crit, inputs)
    checks = basins.basin_checks(inputs, crit, sediment_basin, required, dewatering)

    for w in warnings:
        logger.info("engineering: %s", w)
    return EngineeringResult(
        soil_loss_tons_per_acre_year=soil.tons_per_acre_year,
        soil_loss=soil,
        peak_flow_cfs=peaks if any_peak else None,
        peak_flow_reasons=reasons,
        peak_flow_details=tuple(peak.details),
        curve_numbers=peak.cn,
        tc_hr=peak.tc,
        rainfall=rainfall,
        sediment_basin=sediment_basin,
        dewatering=dewatering,
        basin_checks=tuple(checks),
        max_unfenced_depth_ft=basins.max_unfenced_depth_ft(inputs.basins),
        basins_declared=len(inputs.basins),
        warnings=tuple(warnings),
        tr55=tr55_summary(peak, worksheets, hyd, site_area_sqft),
    )


def _peaks(
    hyd: HydrologySpec,
    municipality: str,
    site_area_sqft: float,
    soils: Sequence[SoilRow] | None,
    warnings: list[str],
) -> tuple[runoff.Peaks, dict[str, Any], dict[str, dict[str, Any]]]:
    """The TR-55 peak calculator of the drainage area, its rainfall and its worksheets.

    Returns the calculator, the rainfall it uses (report) and the CN and Tc worksheets
    of each condition (:func:`runoff.curve_numbers_and_tc`).
    """
    area_acres = hyd.drainage_area_acres or float(site_area_sqft) / SQFT_PER_ACRE
    depths, sources, config_source, rain_reason = runoff.rainfall_depths_in(hyd, municipality)
    worksheets: dict[str, dict[str, Any]] = {}
    cn, cn_reason, tc, tc_reason = runoff.curve_numbers_and_tc(
        hyd,
        area_acres,
        runoff.hsg_shares(soils),
        depths.get(SHEET_FLOW_STORM),
        warnings,
        worksheets,
    )
    peak = runoff.Peaks(
        area_sqmi=sqft_to_sqmi(area_acres * SQFT_PER_ACRE),
        depths_in=depths,
        rain_reason=rain_reason,
        cn=cn,
        cn_reason=cn_reason,
        tc=tc,
        tc_reason=tc_reason,
        pond_swamp_pct=hyd.pond_swamp_pct,
        warnings=warnings,
    )
    rainfall = {"depths_in": depths, "sources": sources, "config_source": config_source}
    return peak, rainfall, worksheets


#: What the summary keeps of each computed peak (:meth:`georeview.hydrology.PeakResult`).
_STORM_KEYS = (
    "p_in",
    "q_in",
    "ia_in",
    "ia_over_p",
    "ia_over_p_used",
    "qu_csm_per_in",
    "fp",
    "qp_cfs",
    "within_limits",
)


def tr55_summary(
    peak: runoff.Peaks,
    worksheets: dict[str, dict[str, Any]],
    hyd: HydrologySpec,
    site_area_sqft: float,
) -> dict[str, Any]:
    """The TR-55 subcatchment summary of report.json ``engineering.tr55``.

    Every number is one the stage computed: the worksheet rows and Tc segments recorded
    as the curve numbers and times of concentration were made, and each storm's values
    from the peaks computed (``peak.details``), in the order they were asked for.

    Parameters
    ----------
    peak : runoff.Peaks
        The peak calculator, after every peak of the review was computed.
    worksheets : dict
        Condition -> the CN and Tc worksheets (:func:`runoff.curve_numbers_and_tc`).
    hyd : HydrologySpec
        The ``[hydrology]`` section (where the drainage area comes from).
    site_area_sqft : float
        The site's area, the drainage area when none is declared.

    Returns
    -------
    dict
        ``drainage_area_acres``, ``drainage_area_source``, ``distribution``,
        ``pond_swamp_pct`` and ``conditions`` (one per condition with a CN or a Tc).
    """
    from georeview import hydrology as hy

    declared = hyd.drainage_area_acres is not None
    area_acres = hyd.drainage_area_acres or float(site_area_sqft) / SQFT_PER_ACRE
    conditions = []
    for cond in ("pre", "post", "construction"):
        sheet = worksheets.get(cond) or {}
        if peak.cn.get(cond) is None and peak.tc.get(cond) is None:
            continue
        storms: dict[str, dict[str, Any]] = {}
        for d in peak.details:
            # a peak asked for twice (the reported storms, then the basin's) is listed once
            if d["condition"] == cond and d["storm"] not in storms:
                storms[d["storm"]] = {"storm": d["storm"], **{k: d[k] for k in _STORM_KEYS}}
        conditions.append(
            {
                "condition": cond,
                "cn": peak.cn.get(cond),
                "cn_weighted": sheet.get("cn_weighted"),
                "cn_source": sheet.get("cn_source"),
                "cn_reason": peak.cn_reason.get(cond),
                "cn_parts": sheet.get("cn_parts") or [],
                "tc_hr": peak.tc.get(cond),
                "tc_source": sheet.get("tc_source"),
                "tc_reason": peak.tc_reason.get(cond),
                "tc_segments": sheet.get("tc_segments") or [],
                "storms": list(storms.values()),
            }
        )
    return {
        "method": "TR-55 graphical peak discharge (chapter 4, exhibit 4 and Table F-1)",
        "distribution": hy.RAINFALL_DISTRIBUTION,
        "drainage_area_acres": area_acres,
        "drainage_area_source": "declared (hydrology.drainage_area_acres)"
        if declared
        else "the site area",
        "pond_swamp_pct": peak.pond_swamp_pct,
        "conditions": conditions,
    }
