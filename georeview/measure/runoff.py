"""Runoff measure: TR-55 peak flows before, during and after development.

Composite curve numbers from the submission's cover tables (with the soils layer's
hydrologic soil groups for ``hsg = "from_soils"``), times of concentration declared or
computed from flow paths, the design rainfall of the municipality or the submission, then
TR-55's graphical peak discharge (:mod:`georeview.hydrology`) per storm and condition, and
the declared routed outflows where the plan describes detention.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from georeview import hydrology as hy
from georeview.errors import InputError
from georeview.measure.engineering_inputs import CoverPart, FlowSegmentSpec, HydrologySpec
from georeview.measure.erosion import SoilRow

Values = dict[str, float | None]
Reasons = dict[str, str | None]


def design_rainfall_in(municipality: str) -> tuple[dict[str, float], str, bool]:
    """Return configured 24-hour design depths ``{"2yr": in, ...}``, their source, confirmed."""
    from georeview.ordinances import table

    entry = table(municipality, "rainfall")
    confirmed = entry.get("status") == "confirmed"
    depths = {k: float(v) for k, v in entry.get("depths_in", {}).items()} if confirmed else {}
    return depths, entry.get("source", ""), confirmed


def rainfall_depths_in(
    hyd: HydrologySpec, municipality: str
) -> tuple[dict[str, float], dict[str, str | None], str, str]:
    """Design depths used: the submission's ``rainfall_in`` over the municipality's table.

    Returns ``(depths_in, source of each, the table's source, the reason a missing storm
    gets)``.
    """
    config_depths, config_source, _confirmed = design_rainfall_in(municipality)
    depths: dict[str, float] = dict(config_depths)
    depths.update({str(k): float(v) for k, v in hyd.rainfall_in.items()})
    sources = {k: (hyd.rainfall_source if k in hyd.rainfall_in else config_source) for k in depths}
    rain_reason = (
        f"24-hour design rainfall unconfirmed ({config_source}); pass hydrology.rainfall_in"
    )
    return depths, sources, config_source, rain_reason


def hsg_shares(soils: Sequence[SoilRow] | None) -> dict[str, float] | None:
    """Area share of each hydrologic soil group in *soils* (None without any group)."""
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
    detail: dict[str, Any] | None = None,
) -> tuple[float | None, str | None]:
    """The composite CN of a cover table (TR-55 worksheet 2), or None and the reason.

    ``detail``, when given, receives the worksheet's rows (cover, soil group, acres and the
    Table 2-2 CN of each) and the unrounded weighted CN, for the report's TR-55 summary.
    """
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
        weighted = hy.composite_cn(rows)
    except InputError as exc:
        return None, f"hydrology.{label}: {exc.message}"
    if detail is not None:
        detail["cn_parts"] = [
            {"cover": c, "hsg": hy.normalize_hsg(h), "acres": a, "cn": hy.cn_for(c, h)}
            for a, c, h in rows
        ]
        detail["cn_weighted"] = weighted
        detail["cn_source"] = f"hydrology.{label}" + (
            " with the soils layer's hydrologic soil groups"
            if any(p.hsg == "from_soils" for p in parts)
            else ""
        )
    return float(round(weighted)), None


def _tc(
    declared: float | None,
    path: Sequence[FlowSegmentSpec],
    p2: float | None,
    label: str,
    detail: dict[str, Any] | None = None,
) -> tuple[float | None, str | None]:
    """Tc declared, or summed from the flow path's segments (TR-55 worksheet 3).

    ``detail``, when given, receives where Tc comes from and each segment's travel time.
    """
    if declared is not None:
        if detail is not None:
            detail["tc_source"] = f"declared (tc_{label}_hr)"
            detail["tc_segments"] = []
        return declared, None
    if not path:
        return None, (
            f"no time of concentration for {label} conditions (tc_{label}_hr or flow_path_{label})"
        )
    try:
        built = [seg.segment(p2) for seg in path]
        tc = hy.tc_hr(built)
    except InputError as exc:
        return None, f"flow path ({label}): {exc.message}"
    if detail is not None:
        detail["tc_source"] = f"flow path (flow_path_{label})"
        detail["tc_segments"] = [
            {
                "kind": spec.kind,
                "length_ft": spec.length_ft,
                "slope_ft_per_ft": spec.slope_pct / 100.0,
                "surface": spec.surface,
                "n": getattr(seg, "n", None),
                "travel_time_hr": seg.travel_time_hr(),
            }
            for spec, seg in zip(path, built, strict=True)
        ]
    return tc, None


def curve_numbers_and_tc(
    hyd: HydrologySpec,
    area_acres: float,
    shares: dict[str, float] | None,
    p2_in: float | None,
    warnings: list[str],
    detail: dict[str, dict[str, Any]] | None = None,
) -> tuple[Values, Reasons, Values, Reasons]:
    """Composite curve numbers and times of concentration before, during and after development.

    Returns ``(cn, cn_reason, tc, tc_reason)`` keyed ``pre``, ``post`` and ``construction``;
    ``detail``, when given, receives per condition the worksheets behind them (cover rows,
    the unrounded CN, the Tc segments; see :func:`_composite` and :func:`_tc`).
    The construction condition has its own cover (``construction``) and flow path
    (``tc_construction_hr`` or ``flow_path_construction``) or none: the proposed cover and
    path are not it (graded bare ground runs off faster than a finished lawn, slower than
    pavement), so a peak "during development" without them is unknown, never a stand-in.
    """
    d: dict[str, dict[str, Any]] = detail if detail is not None else {}
    for cond in ("pre", "post", "construction"):
        d.setdefault(cond, {})
    cn: dict[str, float | None] = {}
    cn_reason: dict[str, str | None] = {}
    cn["pre"], cn_reason["pre"] = _composite(
        hyd.existing, area_acres, shares, "existing", warnings, d["pre"]
    )
    cn["post"], cn_reason["post"] = _composite(
        hyd.proposed, area_acres, shares, "proposed", warnings, d["post"]
    )
    if hyd.construction:
        cn["construction"], cn_reason["construction"] = _composite(
            hyd.construction, area_acres, shares, "construction", warnings, d["construction"]
        )
    else:
        cn["construction"] = None
        cn_reason["construction"] = (
            "no hydrology.construction cover table (the cover while the site is disturbed, "
            "e.g. newly_graded)"
        )
    p2 = p2_in
    tc: dict[str, float | None] = {}
    tc_reason: dict[str, str | None] = {}
    tc["pre"], tc_reason["pre"] = _tc(hyd.tc_pre_hr, hyd.flow_path_pre, p2, "pre", d["pre"])
    tc["post"], tc_reason["post"] = _tc(hyd.tc_post_hr, hyd.flow_path_post, p2, "post", d["post"])
    tc["construction"], tc_reason["construction"] = _tc(
        hyd.tc_construction_hr, hyd.flow_path_construction, p2, "construction", d["construction"]
    )

    return cn, cn_reason, tc, tc_reason


def routed_outflow(
    hyd: HydrologySpec,
    peaks: dict[str, dict[str, float | None]],
    reasons: dict[str, dict[str, str | None]],
    warnings: list[str],
    *,
    basins_declared: bool = False,
) -> None:
    """Add the declared routed outflows; with detention and no routing, the peak is unknown.

    After development that is ``post_routed``; during construction ``construction_routed``,
    unknown without ``routed_construction_peak_cfs`` where basins or detention hold the
    runoff of the disturbed site (TR-55's unrouted construction peak is not what leaves it).
    """
    routed = {str(k): float(v) for k, v in hyd.routed_peak_cfs.items()}
    for key, q in routed.items():
        if key in peaks:
            # What leaves the site after the controls: what a peak-rate standard compares.
            peaks[key]["post_routed"] = q
            reasons[key]["post_routed"] = None
    during = {str(k): float(v) for k, v in hyd.routed_construction_peak_cfs.items()}
    for key, q in during.items():
        if key in peaks:
            peaks[key]["construction_routed"] = q
            reasons[key]["construction_routed"] = None
    if hyd.detention or basins_declared:
        for key in (s for s in peaks if s not in during):
            peaks[key]["construction_routed"] = None
            reasons[key]["construction_routed"] = (
                # TR-55 does not route: what leaves a basin is the applicant's routing
                "the routed outflow of the basins or detention while the site is disturbed "
                "(routed_construction_peak_cfs)"
            )
    if hyd.detention:
        unrouted = [s for s in peaks if s not in routed]
        for key in unrouted:
            peaks[key]["post_routed"] = None
            reasons[key]["post_routed"] = (
                f"the routed outflow after development of the detention the plan describes "
                f"({hyd.detention}) (routed_peak_cfs)"
            )
        if unrouted:
            warnings.append(
                f"Detention described ({hyd.detention}) without a routed outflow for the "
                f"{', '.join(unrouted)} storm(s): TR-55's unrouted post-development peak is not "
                "compared as the peak leaving the site."
            )


@dataclass
class Peaks:
    """TR-55 peaks of one drainage area, computed per storm and condition when asked.

    Attributes
    ----------
    area_sqmi : float
        Drainage area, sq mi.
    depths_in : dict
        24-hour design depth of each storm, in.
    rain_reason : str
        Why a storm without a depth has no peak.
    cn, cn_reason, tc, tc_reason : dict
        From :func:`curve_numbers_and_tc`, keyed by condition.
    pond_swamp_pct : float
        Pond and swamp area, percent (TR-55's Fp adjustment).
    warnings : list of str
        Appended to with TR-55's warnings of each peak computed.
    details : list of dict
        One per peak computed: P, CN, Tc, area and TR-55's intermediate values.
    """

    area_sqmi: float
    depths_in: dict[str, float]
    rain_reason: str
    cn: Values
    cn_reason: Reasons
    tc: Values
    tc_reason: Reasons
    pond_swamp_pct: float
    warnings: list[str]
    details: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, storm: str, cond: str) -> tuple[float | None, str | None]:
        """Peak of *storm* under condition *cond* (cfs), or None and the reason."""
        reason = self.cn_reason[cond] or self.tc_reason[cond]
        if storm not in self.depths_in:
            reason = self.rain_reason if reason is None else f"{self.rain_reason}; {reason}"
        if reason:
            return None, reason
        c, t_hr = self.cn[cond], self.tc[cond]
        if c is None or t_hr is None:  # a reason was given above whenever either is missing
            return None, f"the {storm} {cond} peak needs a curve number and a time of concentration"
        p_in = self.depths_in[storm]
        try:
            res = hy.peak_discharge(self.area_sqmi, c, t_hr, p_in, self.pond_swamp_pct)
        except InputError as exc:
            return None, f"TR-55 cannot compute the {storm} {cond} peak: {exc.message}"
        self.details.append(
            {
                "storm": storm,
                "condition": cond,
                "p_in": p_in,
                "cn": c,
                "tc_hr": t_hr,
                "area_sqmi": self.area_sqmi,
                **res.to_dict(),
            }
        )
        self.warnings.extend(f"{storm} {cond}: {w}" for w in res.warnings)
        return res.qp_cfs, None

    def table(
        self, storms: Sequence[str]
    ) -> tuple[dict[str, dict[str, float | None]], dict[str, dict[str, str | None]]]:
        """Peaks before, after and during development of each of *storms*, and why a None."""
        peaks: dict[str, dict[str, float | None]] = {}
        reasons: dict[str, dict[str, str | None]] = {}
        for storm in dict.fromkeys(storms):
            peaks[storm], reasons[storm] = {}, {}
            for cond in ("pre", "post", "construction"):
                peaks[storm][cond], reasons[storm][cond] = self(storm, cond)
        return peaks, reasons
