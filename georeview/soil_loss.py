"""USLE soil loss for construction sites (Wischmeier & Smith 1978, AH 537).

``A = R K LS C P`` in tons per acre per year, with

* ``LS`` from AH 537's equation ``LS = (λ/72.6)^m (65.41 sin²θ + 4.56 sinθ + 0.065)``
  (:func:`ls_factor`), from DEM grids (:func:`ls_from_grids`) or from a declared slope
  profile (:func:`ls_from_segments`, AH 537's irregular-slope procedure);
* ``R`` per municipality and ``C``/``P`` per construction-phase cover from
  ``georeview/data/usle.toml`` (each with its source, or marked unconfirmed);
* the rate over the disturbance period by :func:`soil_loss_over_period`.

Period rule (Somers 17.08(C)(2)(a): "no more than five tons per acre per year ... from
initial grading to final stabilization"). Following the Wisconsin DNR Soil Loss &
Sediment Discharge Calculation Tool as described in the Dane County Erosion Control and
Stormwater Manual, each phase contributes ``R x (share of annual R in the phase) x K x LS x
C x P`` tons/acre, and the tons/acre accumulated in the worst 12-month window of the
disturbance period (the whole period when it is 12 months or shorter) is the rate in
tons/acre/year compared with the standard. The share of annual R in a phase is the
phase's ``r_fraction`` when the submission declares it (e.g. from the WDNR tool's
monthly erosion-index table); otherwise the fraction of the year the phase lasts
(uniform erosivity), which is reported as a warning because Wisconsin's erosivity is
concentrated in late spring and summer. That figure is an estimate only: the review
(``georeview.pipeline.engineering_stage``) does not judge the standard on it, and the
finding is needs_info until every phase gives its share.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from georeview.config import package_data
from georeview.errors import InputError

logger = logging.getLogger(__name__)

#: Length of the USLE unit plot, ft (AH 537: 72.6 ft at 9 % slope gives LS = 1).
UNIT_PLOT_LENGTH_FT = 72.6
#: Days in a mean calendar year (the "per year" of the period rule).
DAYS_PER_YEAR = 365.25


def usle_tables() -> dict[str, Any]:
    """Return ``georeview/data/usle.toml`` (read once, never mutated)."""
    return package_data("usle.toml")


# --------------------------------------------------------------------------------------------
# LS
# --------------------------------------------------------------------------------------------
def slope_exponent_m(slope_pct: float | np.ndarray) -> float | np.ndarray:
    """Return AH 537's slope-length exponent m for a slope steepness.

    AH 537 (p. 16): "m is 0.5 if the percent slope is 5 or more, 0.4 on slopes of 3.5
    to 4.5 percent, 0.3 on slopes of 1 to 3 percent, and 0.2 on uniform gradients of
    less than 1 percent". The text leaves 3-3.5 % and 4.5-5 % unassigned; both gaps lie
    between the 0.3 class's upper limit and the 0.5 class's lower limit, so they take
    the one class in between: m = 0.4 for 3 % < s < 5 %.

    Parameters
    ----------
    slope_pct : float or ndarray
        Slope steepness, percent (rise/run x 100).

    Returns
    -------
    float or ndarray
    """
    s = np.asarray(slope_pct, dtype=float)
    m = np.select([s >= 5.0, s > 3.0, s >= 1.0], [0.5, 0.4, 0.3], default=0.2)
    m = np.where(np.isnan(s), np.nan, m)
    return float(m) if m.ndim == 0 else m


def _steepness_term(slope_pct: np.ndarray) -> np.ndarray:
    sin_t = np.sin(np.arctan(slope_pct / 100.0))
    return 65.41 * sin_t**2 + 4.56 * sin_t + 0.065


def _ls_array(slope_length_ft: np.ndarray, slope_pct: np.ndarray) -> np.ndarray:
    m = np.asarray(slope_exponent_m(slope_pct), dtype=float)
    return (slope_length_ft / UNIT_PLOT_LENGTH_FT) ** m * _steepness_term(slope_pct)


def ls_factor(slope_length_ft: float, slope_pct: float) -> float:
    """USLE topographic factor LS for a uniform slope (AH 537 eq. p. 16).

    ``LS = (λ/72.6)^m (65.41 sin²θ + 4.56 sinθ + 0.065)`` with ``θ = atan(slope/100)``
    and m from :func:`slope_exponent_m`. The equation was fitted to slopes up to about
    20 %; steeper slopes are extrapolation (AH 537 p. 15).

    Parameters
    ----------
    slope_length_ft : float
        Slope length λ, ft (> 0).
    slope_pct : float
        Slope steepness, percent (>= 0).

    Returns
    -------
    float

    Raises
    ------
    georeview.errors.InputError
        For a non-positive length or a negative or non-finite slope.
    """
    length = float(slope_length_ft)
    slope = float(slope_pct)
    if not math.isfinite(length) or length <= 0:
        raise InputError(f"slope length must be > 0 ft, got {slope_length_ft!r}", field="length_ft")
    if not math.isfinite(slope) or slope < 0:
        raise InputError(f"slope must be >= 0 %, got {slope_pct!r}", field="slope_pct")
    return float(_ls_array(np.asarray(length), np.asarray(slope)))


def ls_from_grids(
    slope_pct: np.ndarray,
    flow_length_ft: np.ndarray,
    *,
    max_slope_length_ft: float | None = None,
) -> np.ndarray:
    """Cell-by-cell LS from a slope grid and an overland flow-length grid.

    Parameters
    ----------
    slope_pct : ndarray
        Slope per cell, percent (e.g. :func:`georeview.terrain.slope_pct`).
    flow_length_ft : ndarray
        Overland flow length from the divide to each cell, ft (same shape). Lengths below
        one foot are raised to one foot; lengths above ``max_slope_length_ft`` (default
        ``usle.toml`` ``limits.max_slope_length_ft`` = 1,000 ft, the longest length of
        AH 537 Table 3) are capped, since longer paths are concentrated flow.

    Returns
    -------
    ndarray
        LS per cell; NaN where either input is NaN.
    """
    s = np.asarray(slope_pct, dtype=float)
    lam = np.asarray(flow_length_ft, dtype=float)
    if s.shape != lam.shape:
        raise InputError(
            f"slope grid {s.shape} and flow-length grid {lam.shape} differ in shape",
            field="flow_length_ft",
        )
    cap = (
        usle_tables()["limits"]["max_slope_length_ft"]
        if max_slope_length_ft is None
        else float(max_slope_length_ft)
    )
    with np.errstate(invalid="ignore"):
        lam_c = np.clip(lam, 1.0, cap)
        s_c = np.maximum(s, 0.0)
        out = _ls_array(lam_c, s_c)
    return np.where(np.isnan(s) | np.isnan(lam), np.nan, out)


def representative_ls(ls: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Area-weighted mean LS (NaN cells ignored); equal cells need no weights.

    Because soil loss is linear in LS, ``R K C P x mean(LS)`` is the area-average soil
    loss of the cells.

    Raises
    ------
    georeview.errors.InputError
        When no finite LS value is left.
    """
    arr = np.asarray(ls, dtype=float)
    w = np.ones_like(arr) if weights is None else np.asarray(weights, dtype=float)
    ok = np.isfinite(arr) & np.isfinite(w) & (w > 0)
    if not ok.any():
        raise InputError("no LS value inside the area", field="ls")
    return float(np.sum(arr[ok] * w[ok]) / np.sum(w[ok]))


def ls_from_segments(segments: Sequence[tuple[float, float]]) -> float:
    """Average LS of an irregular slope profile (AH 537 "Irregular slopes", p. 16-17).

    Foster and Wischmeier's procedure, given in AH 537: for segments listed from the top
    of the slope down, with λ_j the distance from the top to the lower end of segment j
    and λ_e the whole length,

    ``LS = Σ_j S_j (λ_j^(m+1) - λ_(j-1)^(m+1)) / (λ_e 72.6^m)``,

    where ``S_j = 65.41 sin²θ_j + 4.56 sinθ_j + 0.065``. One exponent m is used for the
    profile, from its length-weighted mean steepness. For one segment this is
    :func:`ls_factor`.

    Parameters
    ----------
    segments : sequence of (length_ft, slope_pct)
        The profile from the top down.

    Returns
    -------
    float
    """
    if not segments:
        raise InputError("a slope profile needs at least one segment", field="slope_segments")
    lengths = np.array([float(seg[0]) for seg in segments])
    slopes = np.array([float(seg[1]) for seg in segments])
    if np.any(~np.isfinite(lengths)) or np.any(lengths <= 0):
        raise InputError("every slope segment needs a length > 0 ft", field="slope_segments")
    if np.any(~np.isfinite(slopes)) or np.any(slopes < 0):
        raise InputError("every slope segment needs a slope >= 0 %", field="slope_segments")
    total = float(lengths.sum())
    m = float(slope_exponent_m(float(np.sum(lengths * slopes) / total)))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    s_j = _steepness_term(slopes)
    return float(np.sum(s_j * (ends ** (m + 1) - starts ** (m + 1))) / (total * 72.6**m))


# --------------------------------------------------------------------------------------------
# A = R K LS C P
# --------------------------------------------------------------------------------------------
def usle_tons_per_acre_year(r: float, k: float, ls: float, c: float, p: float = 1.0) -> float:
    """Average annual soil loss ``A = R K LS C P``, tons/acre/year (AH 537 eq. 1).

    Raises
    ------
    georeview.errors.InputError
        For a negative or non-finite factor.
    """
    factors = {"r": r, "k": k, "ls": ls, "c": c, "p": p}
    for name, value in factors.items():
        v = float(value)
        if not math.isfinite(v) or v < 0:
            raise InputError(f"USLE factor {name.upper()} must be >= 0, got {value!r}", field=name)
    return float(r) * float(k) * float(ls) * float(c) * float(p)


def c_factor(cover: str) -> float:
    """C for a construction-phase cover key of ``usle.toml`` (e.g. ``"bare"``, ``"sod"``)."""
    covers = usle_tables()["cover"]
    try:
        return float(covers[cover]["c"])
    except KeyError:
        known = ", ".join(sorted(covers))
        raise InputError(f"unknown cover {cover!r}; use one of {known}", field="cover") from None


@dataclass(frozen=True)
class RFactor:
    """An R factor with its source; ``value`` is None when unconfirmed."""

    value: float | None
    source: str
    confirmed: bool


def r_factor_for(municipality: str) -> RFactor:
    """Return the configured annual R factor of a municipality, with its source."""
    from georeview.ordinances import table

    entry = table(municipality, "usle").get("r_factor")
    if entry is None:
        return RFactor(None, f"no R factor configured for {municipality!r}", False)
    confirmed = entry.get("status") == "confirmed" and entry.get("value") is not None
    return RFactor(float(entry["value"]) if confirmed else None, entry["source"], confirmed)


@dataclass(frozen=True)
class Phase:
    """One construction phase: its C and P and how long it lasts.

    Attributes
    ----------
    name : str
        Label (usually the cover key).
    c : float
        Cover-management factor.
    p : float
        Support-practice factor.
    days : float
        Duration, days (> 0).
    r_fraction : float or None
        Share of the annual R that falls in the phase, when known (0-1).
    """

    name: str
    c: float
    p: float
    days: float
    r_fraction: float | None = None


@dataclass(frozen=True)
class PeriodSoilLoss:
    """Soil loss of a construction schedule.

    Attributes
    ----------
    tons_per_acre_year : float
        Tons/acre in the worst 12-month window of the period (whole period if shorter):
        the figure compared with a tons/acre/year standard.
    total_tons_per_acre : float
        Tons/acre over the whole period.
    period_days : float
        Length of the period, days.
    phase_tons_per_acre : tuple of float
        Tons/acre of each phase over its duration.
    window_start_day : float
        Start of the worst 12-month window, days from the start of the period.
    warnings : tuple of str
    """

    tons_per_acre_year: float
    total_tons_per_acre: float
    period_days: float
    phase_tons_per_acre: tuple[float, ...]
    window_start_day: float
    warnings: tuple[str, ...] = field(default_factory=tuple)


def _window_max(edges: np.ndarray, rates: np.ndarray, window: float) -> tuple[float, float]:
    """Largest integral of a piecewise-constant rate over a window of fixed length.

    The integral as a function of the window start is piecewise linear with kinks where
    either window edge meets a breakpoint, so its maximum is at one of those starts.
    """
    t0, t1 = float(edges[0]), float(edges[-1])
    if t1 - t0 <= window:
        return float(np.sum(rates * np.diff(edges))), t0
    cum = np.concatenate([[0.0], np.cumsum(rates * np.diff(edges))])

    def integral_to(t: np.ndarray) -> np.ndarray:
        return np.interp(t, edges, cum)

    cands = np.concatenate([edges, edges - window, [t0, t1 - window]])
    cands = np.unique(np.clip(cands, t0, t1 - window))
    vals = integral_to(cands + window) - integral_to(cands)
    i = int(np.argmax(vals))
    return float(vals[i]), float(cands[i])


def soil_loss_over_period(r: float, k: float, ls: float, phases: Sequence[Phase]) -> PeriodSoilLoss:
    """Soil loss of consecutive construction phases, per the period rule in the module doc.

    Parameters
    ----------
    r, k, ls : float
        Annual R, K and LS.
    phases : sequence of Phase
        Consecutive phases from initial grading to final stabilization.

    Returns
    -------
    PeriodSoilLoss
    """
    if not phases:
        raise InputError("the schedule needs at least one phase", field="phases")
    warnings: list[str] = []
    days = np.array([float(ph.days) for ph in phases])
    if np.any(~np.isfinite(days)) or np.any(days <= 0):
        raise InputError("every phase needs a duration > 0", field="phases")
    fractions = []
    uniform = False
    for ph, d in zip(phases, days, strict=True):
        if ph.r_fraction is None:
            fractions.append(d / DAYS_PER_YEAR)
            uniform = True
        else:
            f = float(ph.r_fraction)
            if not math.isfinite(f) or f < 0 or f > 1:
                raise InputError(
                    f"r_fraction must be within 0-1, got {ph.r_fraction!r}", field="r_fraction"
                )
            fractions.append(f)
    if uniform:
        warnings.append(
            "erosivity spread evenly over the year for phases without r_fraction; WDNR's tool "
            "weights by month (most of Wisconsin's annual R falls May-September), so a summer "
            "schedule may be underestimated"
        )
    annual = np.array([usle_tons_per_acre_year(r, k, ls, ph.c, ph.p) for ph in phases], dtype=float)
    phase_loss = annual * np.array(fractions)
    edges = np.concatenate([[0.0], np.cumsum(days)])
    rates = phase_loss / days
    worst, start = _window_max(edges, rates, DAYS_PER_YEAR)
    for w in warnings:
        logger.info("USLE period: %s", w)
    return PeriodSoilLoss(
        tons_per_acre_year=worst,
        total_tons_per_acre=float(phase_loss.sum()),
        period_days=float(edges[-1]),
        phase_tons_per_acre=tuple(float(x) for x in phase_loss),
        window_start_day=start,
        warnings=tuple(warnings),
    )
