"""TR-55 hydrology: runoff depth, curve numbers, time of concentration, peak discharge.

Everything here follows NRCS Technical Release 55, *Urban Hydrology for Small
Watersheds*, 2nd edition, June 1986 (TR-55):

* runoff depth by the curve-number equation (chapter 2, eqs. 2-3 and 2-4);
* curve numbers from Tables 2-2a to 2-2c and area-weighted composites;
* time of concentration as the sum of sheet, shallow concentrated and channel travel
  times (chapter 3, eqs. 3-1 to 3-4 and Appendix F's equations for figure 3-1);
* peak discharge by the graphical method (chapter 4) for the type II rainfall
  distribution, with the unit peak discharge from Appendix F Table F-1 and the
  pond-and-swamp factor from Table 4-2.

The tables live in ``georeview/data/tr55.toml``; each names its TR-55 page. The
graphical method's stated limits (CN >= 40, Tc 0.1-10 h, Ia/P 0.1-0.5, ponds and
swamps <= 5 %) are reported in :class:`PeakResult` rather than silently absorbed.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from georeview.config import package_data
from georeview.errors import InputError

logger = logging.getLogger(__name__)

#: Hydrologic soil groups in the order of the CN columns of Tables 2-2a to 2-2c.
HSG_ORDER = ("A", "B", "C", "D")
#: NRCS 24-hour rainfall distribution of the unit peak discharge (TR-55 exhibit 4-II and
#: Table F-1's type II coefficients): the one georeview's graphical method uses.
RAINFALL_DISTRIBUTION = "II"
#: Seconds per hour (travel times are in hours, velocities in ft/s).
_S_PER_HR = 3600.0
#: Manning's equation constant for US customary units (TR-55 eq. 3-4).
_MANNING_K_US = 1.49


def tr55_tables() -> dict[str, Any]:
    """Return the TR-55 tables of ``georeview/data/tr55.toml`` (read once, never mutated)."""
    return package_data("tr55.toml")


# --------------------------------------------------------------------------------------------
# Chapter 2: runoff
# --------------------------------------------------------------------------------------------
def _check_cn(cn: Any) -> np.ndarray:
    arr = np.asarray(cn, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0) or np.any(arr > 100):
        raise InputError(f"curve number must be in (0, 100], got {cn!r}", field="cn")
    return arr


def potential_retention_in(cn: float | np.ndarray) -> float | np.ndarray:
    """Return the potential maximum retention S = 1000/CN - 10, inches (TR-55 eq. 2-4)."""
    arr = _check_cn(cn)
    s = 1000.0 / arr - 10.0
    return float(s) if s.ndim == 0 else s


def initial_abstraction_in(cn: float | np.ndarray) -> float | np.ndarray:
    """Return the initial abstraction Ia = 0.2 S, inches (TR-55 eq. 2-2; Table 4-1)."""
    s = potential_retention_in(cn)
    return 0.2 * s


def runoff_depth_in(p_in: float | np.ndarray, cn: float | np.ndarray) -> float | np.ndarray:
    """Direct runoff depth Q by the SCS curve-number equation (TR-55 eq. 2-3).

    ``Q = (P - 0.2 S)^2 / (P + 0.8 S)`` for ``P > Ia = 0.2 S``, else 0, with
    ``S = 1000 / CN - 10``.

    Parameters
    ----------
    p_in : float or ndarray
        24-hour rainfall depth, inches (>= 0).
    cn : float or ndarray
        Runoff curve number, (0, 100]. Broadcast against ``p_in``.

    Returns
    -------
    float or ndarray
        Runoff depth, inches; a float when both inputs are scalars.

    Raises
    ------
    georeview.errors.InputError
        For a negative or non-finite rainfall or a curve number outside (0, 100].
    """
    p = np.asarray(p_in, dtype=float)
    if np.any(~np.isfinite(p)) or np.any(p < 0):
        raise InputError(f"rainfall must be a finite depth >= 0 in, got {p_in!r}", field="p_in")
    s = np.asarray(potential_retention_in(cn), dtype=float)
    ia = 0.2 * s
    excess = np.maximum(p - ia, 0.0)
    q = np.where(p > ia, excess**2 / np.maximum(p + 0.8 * s, 1e-300), 0.0)
    return float(q) if q.ndim == 0 else q


# --------------------------------------------------------------------------------------------
# Tables 2-2a..2-2c: curve numbers
# --------------------------------------------------------------------------------------------
def cover_keys() -> tuple[str, ...]:
    """Return every cover key known to :func:`cn_for` (see ``data/tr55.toml``)."""
    return tuple(sorted(tr55_tables()["cover"]))


def normalize_hsg(hsg: str) -> str:
    """Return the hydrologic soil group letter A-D for ``hsg``.

    Dual groups such as ``"A/D"`` (TR-55 Appendix A: drained / undrained) are
    taken as the undrained group, the second letter, because drainage is not known.

    Raises
    ------
    georeview.errors.InputError
        For anything that is not A, B, C, D or a dual group of them.
    """
    text = str(hsg).strip().upper()
    if "/" in text:
        text = text.split("/")[-1].strip()
    if text not in HSG_ORDER:
        raise InputError(f"hydrologic soil group must be A, B, C or D, got {hsg!r}", field="hsg")
    return text


def cn_for(cover: str, hsg: str) -> int:
    """Runoff curve number for a cover type and hydrologic soil group (Tables 2-2a to 2-2c).

    Parameters
    ----------
    cover : str
        A cover key of ``data/tr55.toml``, e.g. ``"open_space_good"``, ``"impervious"``,
        ``"row_crops_straight_good"``, ``"meadow"``, ``"woods_good"``, ``"newly_graded"``,
        ``"residential_1_4_acre"``; :func:`cover_keys` lists them all.
    hsg : str
        Hydrologic soil group ``A``-``D`` (dual groups use the undrained letter).

    Returns
    -------
    int
        The tabulated curve number.

    Raises
    ------
    georeview.errors.InputError
        For an unknown cover key or soil group.
    """
    covers = tr55_tables()["cover"]
    try:
        row = covers[cover]
    except KeyError:
        known = ", ".join(sorted(covers))
        raise InputError(f"unknown cover {cover!r}; use one of {known}", field="cover") from None
    return int(row["cn"][HSG_ORDER.index(normalize_hsg(hsg))])


def composite_cn(parts: Iterable[tuple[float, str, str]]) -> float:
    """Area-weighted composite curve number (TR-55 worksheet 2).

    Parameters
    ----------
    parts : iterable of (area, cover, hsg)
        Areas in any one unit, cover keys and soil groups.

    Returns
    -------
    float
        ``sum(area * CN) / sum(area)``, unrounded (TR-55 rounds to a whole number
        on the worksheet; callers may do so).

    Raises
    ------
    georeview.errors.InputError
        For negative areas, a zero total area, or unknown covers or soil groups.
    """
    total = 0.0
    weighted = 0.0
    for area, cover, hsg in parts:
        a = float(area)
        if not math.isfinite(a) or a < 0:
            raise InputError(f"area must be >= 0, got {area!r}", field="area")
        weighted += a * cn_for(cover, hsg)
        total += a
    if total <= 0:
        raise InputError("composite curve number needs a positive total area", field="area")
    return weighted / total


# --------------------------------------------------------------------------------------------
# Chapter 3: time of concentration
# --------------------------------------------------------------------------------------------
def _positive(value: float, name: str) -> float:
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise InputError(f"{name} must be > 0, got {value!r}", field=name)
    return v


@dataclass(frozen=True)
class SheetFlow:
    """Sheet flow segment (TR-55 eq. 3-3, Manning's kinematic solution).

    Attributes
    ----------
    length_ft : float
        Flow length, ft; TR-55 limits sheet flow to 300 ft.
    slope_ft_per_ft : float
        Land slope, ft/ft.
    n : float
        Manning's roughness for sheet flow (TR-55 Table 3-1).
    p2_in : float
        2-year, 24-hour rainfall, inches.
    """

    length_ft: float
    slope_ft_per_ft: float
    n: float
    p2_in: float

    def travel_time_hr(self) -> float:
        """``Tt = 0.007 (n L)^0.8 / (P2^0.5 s^0.4)``, hours."""
        length = _positive(self.length_ft, "length_ft")
        max_ft = tr55_tables()["limits"]["sheet_flow_max_ft"]
        if length > max_ft:
            raise InputError(
                f"sheet flow length {length:g} ft exceeds TR-55's {max_ft:g} ft; "
                "declare the rest as shallow concentrated flow",
                field="length_ft",
            )
        n = _positive(self.n, "n")
        p2 = _positive(self.p2_in, "p2_in")
        s = _positive(self.slope_ft_per_ft, "slope_ft_per_ft")
        return 0.007 * (n * length) ** 0.8 / (p2**0.5 * s**0.4)


def shallow_velocity_fps(slope_ft_per_ft: float, surface: Literal["paved", "unpaved"]) -> float:
    """Average shallow concentrated flow velocity (TR-55 fig. 3-1; Appendix F equations).

    ``V = 16.1345 s^0.5`` (unpaved) or ``V = 20.3282 s^0.5`` (paved), ft/s.
    """
    k_table = tr55_tables()["shallow_flow_k"]
    if surface not in k_table:
        raise InputError(f"surface must be 'paved' or 'unpaved', got {surface!r}", field="surface")
    return k_table[surface] * _positive(slope_ft_per_ft, "slope_ft_per_ft") ** 0.5


@dataclass(frozen=True)
class ShallowFlow:
    """Shallow concentrated flow segment (TR-55 eq. 3-1 with figure 3-1 velocities)."""

    length_ft: float
    slope_ft_per_ft: float
    surface: Literal["paved", "unpaved"] = "unpaved"

    def travel_time_hr(self) -> float:
        """``Tt = L / (3600 V)``, hours."""
        v = shallow_velocity_fps(self.slope_ft_per_ft, self.surface)
        return _positive(self.length_ft, "length_ft") / (_S_PER_HR * v)


def manning_velocity_fps(
    area_sqft: float, wetted_perimeter_ft: float, slope_ft_per_ft: float, n: float
) -> float:
    """Manning's velocity ``V = 1.49 r^(2/3) s^(1/2) / n`` with ``r = a / pw`` (TR-55 eq. 3-4)."""
    r = _positive(area_sqft, "area_sqft") / _positive(wetted_perimeter_ft, "wetted_perimeter_ft")
    s = _positive(slope_ft_per_ft, "slope_ft_per_ft")
    return _MANNING_K_US * r ** (2.0 / 3.0) * s**0.5 / _positive(n, "n")


@dataclass(frozen=True)
class ChannelFlow:
    """Open channel flow segment (TR-55 eqs. 3-1 and 3-4), bank-full geometry."""

    length_ft: float
    slope_ft_per_ft: float
    n: float
    area_sqft: float
    wetted_perimeter_ft: float

    def travel_time_hr(self) -> float:
        """``Tt = L / (3600 V)``, hours, with Manning's V."""
        v = manning_velocity_fps(
            self.area_sqft, self.wetted_perimeter_ft, self.slope_ft_per_ft, self.n
        )
        return _positive(self.length_ft, "length_ft") / (_S_PER_HR * v)


Segment = SheetFlow | ShallowFlow | ChannelFlow


def tc_hr(segments: Sequence[Segment]) -> float:
    """Time of concentration: the sum of the segments' travel times, hours (TR-55 eq. 3-2).

    Raises
    ------
    georeview.errors.InputError
        For an empty flow path or an invalid segment.
    """
    if not segments:
        raise InputError("a flow path needs at least one segment", field="segments")
    return float(sum(seg.travel_time_hr() for seg in segments))


# --------------------------------------------------------------------------------------------
# Chapter 4: graphical peak discharge, type II
# --------------------------------------------------------------------------------------------
def _f1_coefficients(ia_over_p: float) -> tuple[float, float, float]:
    """Table F-1 coefficients at ``ia_over_p`` (already inside the tabulated range).

    Between tabulated Ia/P values the coefficients are interpolated linearly, which is
    linear interpolation of log(qu) between the exhibit 4-II curves, as a reader of the
    exhibit does when Ia/P falls between two curves.
    """
    t = tr55_tables()["unit_peak"][RAINFALL_DISTRIBUTION]
    x = t["ia_over_p"]
    return (
        float(np.interp(ia_over_p, x, t["c0"])),
        float(np.interp(ia_over_p, x, t["c1"])),
        float(np.interp(ia_over_p, x, t["c2"])),
    )


def unit_peak_discharge_csm_per_in(tc_hr: float, ia_over_p: float) -> float:
    """Return the unit peak discharge qu, csm/in, type II (TR-55 exhibit 4-II, App. F).

    ``log10(qu) = C0 + C1 log10(Tc) + C2 (log10 Tc)^2`` with Table F-1 coefficients.
    Inputs are used as given; :func:`peak_discharge` applies TR-55's limits first.
    """
    c0, c1, c2 = _f1_coefficients(ia_over_p)
    lt = math.log10(_positive(tc_hr, "tc_hr"))
    return 10.0 ** (c0 + c1 * lt + c2 * lt * lt)


def pond_swamp_factor(pond_swamp_pct: float) -> float:
    """Return the pond and swamp adjustment factor Fp (TR-55 Table 4-2).

    Linear interpolation between the tabulated percentages 0, 0.2, 1, 3 and 5; a
    percentage above 5 returns the 5 % factor (callers must flag it: the graphical
    method does not apply there).
    """
    pct = float(pond_swamp_pct)
    if not math.isfinite(pct) or pct < 0:
        raise InputError(
            f"pond and swamp percentage must be >= 0, got {pond_swamp_pct!r}",
            field="pond_swamp_pct",
        )
    t = tr55_tables()["pond_swamp"]
    return float(np.interp(pct, t["pct"], t["fp"]))


@dataclass(frozen=True)
class PeakResult:
    """A TR-55 graphical peak discharge with the intermediate values and any caveats.

    Attributes
    ----------
    qp_cfs : float
        Peak discharge ``qp = qu Am Q Fp``, cfs (TR-55 eq. 4-1).
    qu_csm_per_in : float
        Unit peak discharge, cfs per square mile per inch of runoff.
    q_in : float
        Runoff depth, inches.
    ia_in : float
        Initial abstraction, inches.
    ia_over_p : float
        Ia/P as computed (before TR-55's limiting values are applied).
    ia_over_p_used : float
        Ia/P used with Table F-1 (clamped to 0.10-0.50 as TR-55 instructs).
    tc_hr_used : float
        Tc used with Table F-1 (clamped to 0.1-10 h when outside; see ``within_limits``).
    fp : float
        Pond and swamp adjustment factor.
    warnings : tuple of str
        Plain-language notes on every limit that was met.
    within_limits : bool
        False when an input lies outside the method's range of application
        (Tc outside 0.1-10 h, ponds and swamps over 5 %): the number is then indicative only.
    """

    qp_cfs: float
    qu_csm_per_in: float
    q_in: float
    ia_in: float
    ia_over_p: float
    ia_over_p_used: float
    tc_hr_used: float
    fp: float
    warnings: tuple[str, ...] = field(default_factory=tuple)
    within_limits: bool = True

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for report.json."""
        d = asdict(self)
        d["warnings"] = list(self.warnings)
        return d


def peak_discharge(
    area_sqmi: float,
    cn: float,
    tc_hr: float,
    p_in: float,
    pond_swamp_pct: float = 0.0,
) -> PeakResult:
    """TR-55 graphical peak discharge, type II rainfall, with its limits reported.

    Parameters
    ----------
    area_sqmi : float
        Drainage area Am, square miles (> 0).
    cn : float
        Composite runoff curve number (TR-55 requires >= 40).
    tc_hr : float
        Time of concentration, hours (method range 0.1-10 h).
    p_in : float
        24-hour rainfall, inches (> 0).
    pond_swamp_pct : float, optional
        Ponds and swamps spread throughout the watershed, percent of Am (<= 5).

    Returns
    -------
    PeakResult

    Raises
    ------
    georeview.errors.InputError
        For inputs TR-55 cannot handle at all: CN < 40 or > 100, non-positive area,
        rainfall or Tc, negative pond percentage.
    """
    limits = tr55_tables()["limits"]
    area = _positive(area_sqmi, "area_sqmi")
    p = _positive(p_in, "p_in")
    tc = _positive(tc_hr, "tc_hr")
    cn_v = float(_check_cn(cn))
    if cn_v < limits["cn_min"]:
        raise InputError(
            f"curve number {cn_v:g} is below {limits['cn_min']:g}; TR-55's graphical method "
            "does not apply (use another procedure)",
            field="cn",
        )
    warnings: list[str] = []
    within = True

    ia = float(initial_abstraction_in(cn_v))
    q = float(runoff_depth_in(p, cn_v))
    ia_p = ia / p
    x = tr55_tables()["unit_peak"][RAINFALL_DISTRIBUTION]["ia_over_p"]
    ia_p_used = min(max(ia_p, x[0]), x[-1])
    if ia_p_used != ia_p:
        warnings.append(
            f"Ia/P = {ia_p:.3f} is outside {x[0]:.2f}-{x[-1]:.2f}; the limiting value "
            f"{ia_p_used:.2f} was used as TR-55 chapter 4 instructs"
        )

    tc_used = min(max(tc, limits["tc_min_hr"]), limits["tc_max_hr"])
    if tc_used != tc:
        within = False
        warnings.append(
            f"Tc = {tc:.3f} h is outside TR-55's {limits['tc_min_hr']:g}-"
            f"{limits['tc_max_hr']:g} h range; computed with Tc = {tc_used:g} h (indicative only)"
        )

    pond = float(pond_swamp_pct)
    fp = pond_swamp_factor(pond)
    if pond > limits["pond_swamp_max_pct"]:
        within = False
        warnings.append(
            f"ponds and swamps cover {pond:g} % of the area, above Table 4-2's "
            f"{limits['pond_swamp_max_pct']:g} %; the graphical method does not apply"
        )

    qu = unit_peak_discharge_csm_per_in(tc_used, ia_p_used)
    qp = qu * area * q * fp
    for w in warnings:
        logger.info("TR-55 peak discharge: %s", w)
    return PeakResult(
        qp_cfs=qp,
        qu_csm_per_in=qu,
        q_in=q,
        ia_in=ia,
        ia_over_p=ia_p,
        ia_over_p_used=ia_p_used,
        tc_hr_used=tc_used,
        fp=fp,
        warnings=tuple(warnings),
        within_limits=within,
    )


def peak_discharge_cfs(
    area_sqmi: float,
    cn: float,
    tc_hr: float,
    p_in: float,
    pond_swamp_pct: float = 0.0,
) -> float:
    """TR-55 graphical peak discharge qp, cfs, type II rainfall (DESIGN §2.5).

    The number of :func:`peak_discharge`; use that function to see the warnings and
    whether the inputs were inside the method's range.

    Raises
    ------
    georeview.errors.InputError
        For CN < 40, non-positive area, rainfall or Tc.
    """
    return peak_discharge(area_sqmi, cn, tc_hr, p_in, pond_swamp_pct).qp_cfs
