"""Declared against measured: every number the applicant states that georeview also measures.

A plan that estimates a 2.0-acre site on a boundary that measures 3.53 acres is wrong
somewhere, and a finding resting on either figure inherits the error. Each pair of
:data:`PAIRS` gives two facts the ordinance folders' comparison rules read:

``compare.<pair>.diff_pct``
    The declared value's difference from the measured one, in percent of the measured
    value (``|declared - measured| / measured x 100``); for a one-sided pair (the largest
    area disturbed at one time cannot exceed the whole disturbance) only an excess counts.
    100 where the measured value is 0 and the declared is not (the declared has nothing
    measured under it); unknown where either is unknown.
``compare.<pair>.values``
    Both values in words with their units, for the finding ("declared 2.00 acres; measured
    3.53 acres").

The tolerance a difference must exceed to be a finding is the Village's, in each
ordinance folder's parameters; no tolerance is set here.

The receiving water is a name, not a number: ``compare.receiving_water.matches`` is True
when the first water the downstream trace reaches is named (or, unnamed, identified) in the
plan's ``receiving_water`` words, False when that water has a name the words do not carry,
unknown when it has neither a name nor an identifier in them (an unnamed wetland the plan
need not name: the plan items ask for the *named* receiving water).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from georeview.units import SQFT_PER_ACRE

__all__ = ["PAIRS", "Pair", "declared_vs_measured", "receiving_water_matches"]


@dataclass(frozen=True)
class Pair:
    """One declared number and the measure it is compared with.

    Attributes
    ----------
    name : str
        ``compare.<name>.*``.
    declared, measured : str
        Fact names of the declared and the measured value.
    scale : float
        Multiplies the measured value into the declared value's units.
    units : str
        Units of the declared value (and of the scaled measured one).
    decimals : int
        Decimals the values are written with.
    one_sided : bool
        Only a declared value above the measured one is a difference.
    """

    name: str
    declared: str
    measured: str
    scale: float
    units: str
    decimals: int
    one_sided: bool = False


#: The declared numbers georeview can measure (the pairs the comparison rules read).
PAIRS: tuple[Pair, ...] = (
    Pair(
        "site_area",
        "plan.site_area_estimate_acres",
        "site_area_sqft",
        1 / SQFT_PER_ACRE,
        "acres",
        2,
    ),
    Pair(
        "disturbed_area",
        "plan.disturbed_area_estimate_acres",
        "disturbed_area_sqft",
        1 / SQFT_PER_ACRE,
        "acres",
        2,
    ),
    Pair("disturbed_sqft", "activity.disturbed_area_sqft", "disturbed_area_sqft", 1.0, "sq ft", 0),
    Pair(
        "disturbed_at_once",
        "activity.max_disturbed_at_once_acres",
        "disturbed_area_sqft",
        1 / SQFT_PER_ACRE,
        "acres",
        2,
        one_sided=True,
    ),
    Pair(
        "receiving_water_distance",
        "plan.receiving_water_distance_ft",
        "downstream.distance_ft",
        1.0,
        "ft",
        0,
    ),
    Pair(
        "steep_slope_area", "plan.steep_slope_area_sqft", "steep_slope_area_sqft", 1.0, "sq ft", 0
    ),
    Pair(
        "contour_interval",
        "site_map.contour_interval_declared_ft",
        "site_map.contour_interval_measured_ft",
        1.0,
        "ft",
        1,
    ),
)


def _number(facts: Mapping[str, Any], name: str) -> float | None:
    """A fact as a float, None where unknown."""
    v = facts.get(name)
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _diff_pct(declared: float, measured: float, one_sided: bool) -> float:
    """Percent of the measured value by which the declared one differs."""
    gap = declared - measured
    gap = max(gap, 0.0) if one_sided else abs(gap)
    if measured > 0:
        return gap / measured * 100.0
    return 100.0 if gap > 0 else 0.0


def declared_vs_measured(
    facts: Mapping[str, Any], *, disturbed_measured: bool = True
) -> dict[str, Any]:
    """The ``compare.*`` facts of :data:`PAIRS` for one submission's facts.

    Parameters
    ----------
    facts : mapping
        One record of facts; each pair reads its declared and measured fact, and the
        comparison is unknown (None) where either is missing.
    disturbed_measured : bool
        The disturbed area was measured from a disturbance layer. Without one it is the
        applicant's own ``activity.disturbed_area_sqft``, and the pairs that read it compare
        two declarations (their values say so) or, for that figure itself, nothing.

    Returns
    -------
    dict
        ``compare.<pair>.diff_pct`` and ``compare.<pair>.values`` for every pair, and
        ``compare.receiving_water.matches`` / ``.values``.

    Examples
    --------
    >>> out = declared_vs_measured(
    ...     {"plan.site_area_estimate_acres": 2.0, "site_area_sqft": 153923.9}
    ... )
    >>> round(out["compare.site_area.diff_pct"], 2), out["compare.site_area.values"]
    (43.4, 'declared 2.00 acres; measured 3.53 acres')
    """
    out: dict[str, Any] = {}
    for pair in PAIRS:
        declared = _number(facts, pair.declared)
        measured = _number(facts, pair.measured)
        what = "measured"
        if pair.measured == "disturbed_area_sqft" and not disturbed_measured:
            if pair.declared == "activity.disturbed_area_sqft":
                measured = None  # the figure compared with itself
            what = "the declared disturbed area (activity.disturbed_area_sqft; no disturbance file)"
        diff = values = None
        if declared is not None and measured is not None:
            m = measured * pair.scale
            diff = _diff_pct(declared, m, pair.one_sided)
            values = (
                f"declared {declared:,.{pair.decimals}f} {pair.units}; "
                f"{what} {m:,.{pair.decimals}f} {pair.units}"
            )
        out[f"compare.{pair.name}.diff_pct"] = diff
        out[f"compare.{pair.name}.values"] = values
    matches, values = receiving_water_matches(
        facts.get("plan.receiving_water"), facts.get("downstream.receiving_feature")
    )
    out["compare.receiving_water.matches"] = matches
    out["compare.receiving_water.values"] = values
    return out


#: A feature label georeview gives an unnamed feature: ``<kind> <id>``
#: (:func:`georeview.measure.flow_features._feature_label`).
_UNNAMED = re.compile(r"^(?:water|wetland) (?P<id>\S.*)$")


def _words(text: str) -> str:
    """Lower case, runs of anything but letters and digits as one space, padded."""
    return " " + re.sub(r"[^0-9a-z]+", " ", text.lower()).strip() + " "


def receiving_water_matches(declared: Any, feature: Any) -> tuple[bool | None, str | None]:
    """Whether the plan's receiving-water words name the first water the trace reaches.

    Returns
    -------
    (bool or None, str or None)
        ``compare.receiving_water.matches`` (see the module notes) and both in words.

    Examples
    --------
    >>> receiving_water_matches("Koshkonong Creek, 600 ft east", "Koshkonong Creek")[0]
    True
    >>> receiving_water_matches("Pike River", "Kilbourn Ditch")[0]
    False
    >>> receiving_water_matches("Pike River", "wetland WWI30S00002")[0] is None
    True
    """
    if not isinstance(declared, str) or not declared.strip() or not isinstance(feature, str):
        return None, None
    values = f"the plan: \u201c{declared.strip()}\u201d; the trace reaches first: {feature}"
    said = _words(declared)
    unnamed = _UNNAMED.match(feature)
    if unnamed is not None:
        # an unnamed wetland or water: its identifier, if the plan gives it, is a match;
        # its absence says nothing (the plan names the named water downstream of it)
        return (True if _words(unnamed["id"]) in said else None), values
    return _words(feature) in said, values
