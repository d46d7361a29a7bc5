"""The facts of each screened parcel, as columns: what a review of the parcel would read.

The measured areas and the assumed activity become the same fact columns
:func:`georeview.facts.build.facts_frame` gives a review, so that one judge
(:func:`georeview.rules.judge_frame`) answers both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from georeview.facts.build import activity_columns, facts_frame
from georeview.pipeline.assume import CLASS_KINDS, Assumption
from georeview.units import sqft_to_acres

__all__ = ["disturbed_sqft", "parcel_facts", "parcel_kinds"]


def parcel_kinds(frame: pd.DataFrame, columns: Mapping[str, str], assumed: Sequence[str]) -> Any:
    """Activity kinds of each parcel: the assumed kinds plus those its class implies.

    ``PROPCLASS`` (or ``AUXCLASS``) tokens in :data:`CLASS_KINDS` add their kind
    (class 4 agricultural, X2 state-owned).
    """
    n = len(frame)
    extra = np.zeros((n, len(CLASS_KINDS)), dtype=bool)
    for role in ("propclass", "auxclass"):
        col = columns.get(role)
        if col and col in frame.columns:
            text = frame[col].astype("string").fillna("").str.upper()
            for k, code in enumerate(CLASS_KINDS):
                hit = text.str.contains(rf"(?:^|[,;/\s]){re.escape(code)}(?:$|[,;/\s])")
                extra[:, k] |= hit.to_numpy(dtype=bool)
    base = tuple(assumed)
    # each row's combination as one integer (bit k: class kind k): a 1-D unique, not
    # numpy's row-wise one over bytes (slower, and holding the GIL against other threads)
    bits = extra.astype(np.int64) @ (np.int64(1) << np.arange(len(CLASS_KINDS), dtype=np.int64))
    combos, inverse = np.unique(bits, return_inverse=True)
    values = np.empty(len(combos), dtype=object)
    for c, combo in enumerate(combos):  # at most 2**len(CLASS_KINDS) combinations
        add = tuple(kind for k, kind in enumerate(CLASS_KINDS.values()) if combo >> k & 1)
        values[c] = base + tuple(k for k in add if k not in base)
    kinds = values[inverse.reshape(-1)]
    return kinds


def disturbed_sqft(assumption: Assumption, area_sqft: Any) -> Any:
    """Square feet disturbed on each parcel under the assumed activity."""
    a = assumption
    if a.disturb == "whole":
        return area_sqft.copy()
    if a.disturb == "none":
        return np.zeros(area_sqft.size)
    if a.disturb == "fraction":
        return area_sqft * float(a.amount or 0.0)
    return np.minimum(area_sqft, float(a.amount or 0.0))


def parcel_facts(
    assumption: Assumption,
    area_sqft: Any,
    shares: dict[str, Any],
    status: Any,
    resources: dict[str, Any],
    steep: tuple[Any, Any],
    kinds: Any,
) -> tuple[pd.DataFrame, Any]:
    """The facts of each parcel, as columns (what a review of the parcel would read).

    Parameters
    ----------
    assumption : Assumption
        The activity assumed on every parcel.
    area_sqft : numpy.ndarray
        Parcel areas.
    shares : dict
        Area share of each jurisdiction category (village, extraterritorial, outside).
    status : numpy.ndarray
        Jurisdiction of each parcel.
    resources : dict
        ``floodplain``, ``floodway`` and ``wetland`` square feet of each parcel.
    steep : (numpy.ndarray, numpy.ndarray)
        Steep-slope square feet (at or above, and above, the threshold).
    kinds : numpy.ndarray
        Activity kinds of each parcel (:func:`parcel_kinds`).

    Returns
    -------
    (pandas.DataFrame, numpy.ndarray)
        The facts frame and the disturbed square feet of each parcel.
    """
    a = assumption
    n = area_sqft.size
    disturbed = disturbed_sqft(a, area_sqft)
    whole = disturbed >= area_sqft

    def inside(total: Any) -> Any:
        """Resource inside the disturbance: known when all or nothing is disturbed."""
        out = np.where(whole, total, np.nan)
        out = np.where((total == 0) | (disturbed == 0), 0.0, out)
        return np.where(np.isnan(total), np.nan, out)

    act = a.activity
    activity = activity_columns(act, n, kinds=kinds)
    if act.max_disturbed_at_once_acres is None:
        # A screening states the whole activity: the assumed disturbance happens at once.
        activity["activity.max_disturbed_at_once_acres"] = sqft_to_acres(disturbed)
    measured: dict[str, Any] = {
        "jurisdiction.status": status,
        **{f"jurisdiction.share.{s}": shares[s] for s in shares},
        "site_area_sqft": area_sqft,
        "disturbed_area_sqft": disturbed,
        "wetland_area_sqft": resources["wetland"],
        "wetland_in_disturbance_sqft": inside(resources["wetland"]),
        "floodplain_area_sqft": resources["floodplain"],
        "floodplain_in_disturbance_sqft": inside(resources["floodplain"]),
        "floodway_present": pd.arrays.BooleanArray(
            np.nan_to_num(resources["floodway"]) > 0, np.isnan(resources["floodway"])
        ),
        "steep_slope_area_sqft": inside(steep[0]),
        "steep_slope_area_gt_sqft": inside(steep[1]),
    }
    return facts_frame(measured, activity, n=n), disturbed
