"""Soil-loss measure: USLE over the disturbance period, with where each factor came from.

Somers asks for the soil loss of the construction period, tons/acre/year, and whether a
maximum-extent-practicable explanation was given. R comes from the submission or the
municipality's USLE table, K from the submission or the SSURGO K of the disturbed area, LS
from declared slope segments or the DEM's slope and flow length (:mod:`georeview.soil_loss`
does the arithmetic). A factor that is missing gives ``None`` and a reason, never a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from georeview import soil_loss as sl
from georeview.errors import InputError
from georeview.measure.engineering_inputs import SoilLossSpec

#: A soil map unit in the area: (area_sqft, hydrologic soil group, K factor).
SoilRow = tuple[float, str | None, float | None]


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


def soil_loss_result(
    spec: SoilLossSpec,
    municipality: str,
    soils: Sequence[SoilRow] | None,
    slope_pct_samples: np.ndarray | None,
    flow_length_ft_samples: np.ndarray | None,
) -> SoilLossResult:
    """USLE soil loss over the declared construction phases, or None and the reasons.

    Parameters
    ----------
    spec : SoilLossSpec
        The submission's ``[soil_loss]``.
    municipality : str
        Picks the R factor of the municipality's USLE table when none is declared.
    soils : list of (area_sqft, hsg, kfactor), optional
        Soil map units in the disturbed area (K); None when there is no soils layer.
    slope_pct_samples, flow_length_ft_samples : ndarray, optional
        DEM slope (percent) and overland flow length (ft) of the disturbed area's cells.

    Returns
    -------
    SoilLossResult
    """
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
    phases, phases_out = _phases(spec)
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


def _phases(spec: SoilLossSpec) -> tuple[list[sl.Phase], list[dict[str, Any]]]:
    """The declared phases with their C and P factors, and the rows the report shows."""
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
                "r_fraction_source": ph.r_fraction_source,
                "tons_per_acre": None,
            }
        )
    return phases, phases_out
