"""One facts builder: measures, the activity and the site map become columns the rules read.

A review builds a frame of one row, a screening a frame of many, with the same
function (:func:`facts_frame`); what differs between them is an input: a review passes
the activity the applicant declared and the facts of its plan, site map and engineering
sections (``extra``), a screening the activity it was told to assume. Facts nobody gave
are missing (``NaN``/``None``), never defaulted: the rules that read them say
needs_info.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from georeview.units import SQFT_PER_ACRE

__all__ = ["MEASURED", "activity_columns", "facts_frame", "record_of", "site_map_columns"]

#: Facts the measure stage gives every row (NaN / None where not measured).
MEASURED = (
    "jurisdiction.status",
    "jurisdiction.undetermined_reason",
    "jurisdiction.share.village",
    "jurisdiction.share.extraterritorial",
    "jurisdiction.share.outside",
    "site_area_sqft",
    "disturbed_area_sqft",
    "wetland_area_sqft",
    "wetland_in_disturbance_sqft",
    "floodplain_area_sqft",
    "floodplain_in_disturbance_sqft",
    "floodway_present",
    "steep_slope_area_sqft",
    "steep_slope_area_gt_sqft",
    "max_slope_pct",
    "downstream.reaches_water_within_quarter_mile",
    "downstream.receiving_feature",
    "downstream.distance_ft",
)


def _column(value: Any, n: int) -> Any:
    """``value`` as a column of ``n`` rows (a scalar is repeated; arrays pass through)."""
    if isinstance(value, (np.ndarray, pd.Series, pd.api.extensions.ExtensionArray)):
        return value
    if isinstance(value, bool) or value is None:
        return pd.array([value] * n, dtype="boolean") if isinstance(value, bool) else (
            np.full(n, None, dtype=object)
        )
    if isinstance(value, (int, float)):
        return np.full(n, float(value))
    out = np.empty(n, dtype=object)
    for i in range(n):
        out[i] = tuple(value) if isinstance(value, list) else value
    return out


def activity_columns(activity: Any, n: int, *, kinds: Any = None) -> dict[str, Any]:
    """``activity.<field>`` columns of a declared or assumed :class:`~georeview.config.Activity`.

    Parameters
    ----------
    activity : georeview.config.Activity
        The same activity on every row.
    n : int
        Rows.
    kinds : array of tuples, optional
        Per-row ``activity.kinds`` (a screening adds the kinds of each parcel's class).
    """
    cols = {f"activity.{k}": _column(v, n) for k, v in activity.model_dump().items()}
    if kinds is not None:
        cols["activity.kinds"] = kinds
    return cols


def site_map_columns(site_map: Any, n: int) -> dict[str, Any]:
    """The declared ``site_map`` scale, contour interval and grid as columns.

    ``georeview.facts.sitemap`` replaces the interval and the grid with what it measures
    when a contour or grid layer is submitted (a review's ``extra``).
    """
    if site_map is None:
        return {
            "site_map.scale_ft_per_inch": np.full(n, np.nan),
            "site_map.contour_interval_ft": np.full(n, np.nan),
            "site_map.grid": pd.array([None] * n, dtype="boolean"),
        }
    return {
        "site_map.scale_ft_per_inch": _column(site_map.scale_ft_per_inch, n),
        "site_map.contour_interval_ft": _column(site_map.contour_interval_ft, n),
        "site_map.grid": _column(site_map.grid, n),
    }


def _steep_slopes_addressed(steep_sqft: Any, minimization: Any, n: int) -> pd.array:
    """No disturbance on steep slopes, or the plan says how it is minimised.

    ``plan.steep_slope_minimization`` (validated by :mod:`georeview.facts.plan`): text
    describing the minimisation or ``true`` addresses it, ``false`` says it is not.
    """
    steep = np.asarray(steep_sqft, dtype=float)
    none_steep = steep == 0
    stated = np.asarray(_column(minimization, n), dtype=object)
    known_plan = np.asarray(~pd.isna(stated), dtype=bool)
    # bool() of each stated value (text or true/false), the unknown ones taken as False; an
    # object array's astype runs that in numpy, and an empty one stays bool
    plan_ok = np.where(known_plan, stated, False).astype(bool)
    value = none_steep | plan_ok
    known = none_steep | known_plan
    return pd.arrays.BooleanArray(value & known, ~known)


def facts_frame(
    measured: Mapping[str, Any],
    activity: Mapping[str, Any],
    *,
    n: int,
    site_map: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """The facts the rules read, one row per site or parcel.

    Parameters
    ----------
    measured : mapping
        The :data:`MEASURED` facts (arrays of ``n``, or scalars for one row); a fact
        left out is unknown.
    activity : mapping
        ``activity.<field>`` columns (:func:`activity_columns`).
    n : int
        Rows.
    site_map : mapping, optional
        ``site_map.*`` columns (:func:`site_map_columns`).
    extra : mapping, optional
        Further facts (plan contents, measured site-map facts, engineering, fees): they
        replace columns of the same name.

    Returns
    -------
    pandas.DataFrame
        One column per fact, including the derived ``disturbed_area_acres``,
        ``disturbed_at_once_acres`` (the declared largest area disturbed at one time;
        unknown when not declared: never the whole disturbance) and
        ``steep_slopes_addressed``.
    """
    cols: dict[str, Any] = {k: _column(measured[k], n) for k in MEASURED if k in measured}
    disturbed = np.asarray(cols.get("disturbed_area_sqft", np.full(n, np.nan)), dtype=float)
    cols["disturbed_area_acres"] = disturbed / SQFT_PER_ACRE
    cols.update(activity)
    cols["disturbed_at_once_acres"] = np.asarray(
        cols.get("activity.max_disturbed_at_once_acres", np.full(n, np.nan)), dtype=float
    )
    cols.update(site_map or site_map_columns(None, n))
    extra = dict(extra or {})
    steep = cols.get("steep_slope_area_sqft", np.full(n, np.nan))
    cols["steep_slopes_addressed"] = _steep_slopes_addressed(
        steep, extra.get("plan.steep_slope_minimization"), n
    )
    cols.update({k: _column(v, n) for k, v in extra.items()})
    return pd.DataFrame(cols, index=pd.RangeIndex(n))


def record_of(frame: pd.DataFrame, row: int = 0) -> dict[str, Any]:
    """One row of a facts frame as plain Python values (``None`` for unknown)."""
    out: dict[str, Any] = {}
    for k in frame.columns:
        v = frame[k].iloc[row]
        if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
            out[k] = None
        elif isinstance(v, np.bool_):
            out[k] = bool(v)
        elif isinstance(v, np.floating):
            out[k] = float(v)
        elif isinstance(v, np.integer):
            out[k] = int(v)
        else:
            out[k] = v
    return out
