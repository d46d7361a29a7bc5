"""Why a screened parcel's answer is unknown: the ``reason`` column, in plain words.

A parcel's ``regulated`` is unknown when a rule that decides it (the reach, an exemption,
a trigger) reads a fact the screening does not have; ``category``, ``larger_site`` and
``extraordinary`` of a regulated parcel likewise. The reason is derived from the judge's
own verdicts, never guessed: for each undecided rule, the facts of its condition that
are unknown on that row *and* leave the condition undecided (an unknown fact beside a
decisive one is not blamed), and for each such fact why the screening lacks it (a layer
missing from the layers folder, a DEM that does not cover the parcel, a disturbance that
covers part of the parcel, a fact ``--assume`` does not state, a decision left to the
Village).

Everything is array work over the rows: one pass per rule and condition node, and the
row texts are built once per distinct combination of reasons
(:func:`georeview.pipeline.results.joined_labels`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from georeview.pipeline.results import Coded, joined_labels
from georeview.rules import Ordinance
from georeview.rules.evaluate import Facts, Tri, evaluate_frame, kleene_or
from georeview.rules.judge import DEFAULT_SUBDIVISION, Verdicts
from georeview.rules.model import Condition

__all__ = ["GROUP_SEPARATOR", "REASON_SEPARATOR", "blame", "unknown_reasons"]

#: Between the reasons of one answer.
REASON_SEPARATOR = "; "
#: Between the answers of one row (regulated, then a regulated parcel's category ...).
GROUP_SEPARATOR = " | "
#: The classification flags a regulated parcel may still lack, and their words.
_FLAG_WORDS = {"major": "category", "larger_site": "larger site", "extraordinary": "extraordinary"}
#: Measured facts of a resource inside the assumed disturbance -> (resource key, words).
_INSIDE = {
    "wetland_in_disturbance_sqft": ("wetland", "wetland"),
    "floodplain_in_disturbance_sqft": ("floodplain", "floodplain"),
    "steep_slope_area_sqft": ("steep", "steep slope"),
    "steep_slope_area_gt_sqft": ("steep", "steep slope"),
}
#: Measured facts of a resource on the whole parcel -> the resource key.
_WHOLE = {
    "wetland_area_sqft": "wetland",
    "floodplain_area_sqft": "floodplain",
    "floodway_present": "floodway",
}
#: Resource key -> the words for "the layers folder has none".
_NO_LAYER = {
    "wetland": "no wetland layer in the layers folder",
    "floodplain": "no floodplain layer in the layers folder",
    "floodway": "no floodplain layer (floodway) in the layers folder",
}


def blame(cond: Condition | None, facts: Facts, rows: Any) -> dict[str, Any]:
    """The facts that leave ``cond`` undecided, each with the rows where they do.

    Parameters
    ----------
    cond : Condition or None
        A rule's condition (``None`` always holds: nothing to blame).
    facts : Facts
        The facts the judge read.
    rows : numpy.ndarray of bool
        Rows where ``cond`` is unknown (the caller's rows of interest among them).

    Returns
    -------
    dict
        ``{fact name: rows}``; where ``all``/``any`` is unknown no child is decisive,
        so every unknown child is to blame, and below it the same.
    """
    out: dict[str, Any] = {}
    if cond is None or not rows.any():
        return out
    children = [*(cond.all or ()), *(cond.any or ())]
    if cond.not_ is not None:
        children = [cond.not_]
    if not children:
        if cond.fact:
            out[cond.fact] = rows.copy()
        return out
    for child in children:
        undecided = rows & ~evaluate_frame(child, facts).known
        for fact, mask in blame(child, facts, undecided).items():
            out[fact] = out[fact] | mask if fact in out else mask
    return out


def _merge(into: dict[str, Any], more: Mapping[str, Any]) -> None:
    for fact, mask in more.items():
        into[fact] = into[fact] | mask if fact in into else mask


def _regulated_blame(ordinance: Ordinance, v: Verdicts, facts: Facts) -> dict[str, Any]:
    """Facts to blame where ``regulated`` is unknown (reach, exemptions, triggers)."""
    open_ = ~v.regulated.known
    out: dict[str, Any] = {}
    reach = ordinance.reach
    unreached = open_ & ~v.reached.known
    for where, term in v.reach_terms.items():
        rows = unreached & ~term.known
        name = f"jurisdiction.share.{where}"
        if name in facts:
            _merge(out, {name: rows & ~facts.column(name)[2]})
        if getattr(reach, where) == "subdivision":
            sub = reach.subdivision_when or DEFAULT_SUBDIVISION
            _merge(out, blame(sub, facts, rows & ~evaluate_frame(sub, facts).known))
    for kind, total in (("exemption", v.exempt), ("trigger", None)):
        rules = [r for r in ordinance.rules if r.kind == kind]
        if total is None:
            total = kleene_or((v.applies[r.id] for r in rules), v.n)
        rows = open_ & ~total.known
        for rule in rules:
            _merge(out, blame(rule.when, facts, rows & ~v.applies[rule.id].known))
    return out


def _flag_blame(ordinance: Ordinance, v: Verdicts, facts: Facts) -> dict[str, dict[str, Any]]:
    """Per classification flag of :data:`_FLAG_WORDS`: facts to blame on regulated rows."""
    out: dict[str, dict[str, Any]] = {}
    for key in _FLAG_WORDS:
        flag: Tri | None = v.flags.get(key)
        if flag is None:
            continue
        rows = v.regulated.true & ~flag.known
        found: dict[str, Any] = {}
        for rule in ordinance.rules:
            if rule.kind == "classify" and (rule.sets or rule.id) == key:
                _merge(found, blame(rule.when, facts, rows & ~v.applies[rule.id].known))
        out[key] = found
    return out


def _fact_words(
    fact: str,
    rows: Any,
    *,
    has_dem: bool,
    resources: Mapping[str, Any],
    steep: Any,
    registry: Any,
) -> list[tuple[str, Any]]:
    """Plain words for why ``fact`` is unknown on ``rows`` (split where the cause differs)."""
    if fact.startswith("jurisdiction.share."):
        return [("jurisdiction undetermined: no neighbours layer in the layers folder", rows)]
    if fact in _INSIDE:
        key, noun = _INSIDE[fact]
        measured = resources[key] if key != "steep" else steep
        absent = rows & np.isnan(measured)
        if key == "steep":
            none = (
                "no DEM in the layers folder" if not has_dem else "no DEM covers the whole parcel"
            )
        else:
            none = _NO_LAYER[key]
        part = (
            f"the assumed disturbance covers part of the parcel: how much {noun} it takes in"
            " is not known"
        )
        return [(none, absent), (part, rows & ~absent)]
    if fact in _WHOLE:
        return [(_NO_LAYER[_WHOLE[fact]], rows)]
    entry = registry.get(fact)
    described = (entry.description if entry is not None else "") or fact
    if fact.startswith("activity."):
        key = fact.split(".", 1)[1]
        return [(f"not stated in --assume: {key}", rows)]
    if fact.startswith("village."):
        return [(f"for the Village to decide: {described[:1].lower()}{described[1:]}", rows)]
    return [(f"not known: {described[:1].lower()}{described[1:]}", rows)]


def unknown_reasons(
    ordinance: Ordinance,
    v: Verdicts,
    facts: Facts,
    *,
    has_dem: bool,
    resources: Mapping[str, Any],
    steep: Any,
) -> Coded:
    """The ``reason`` column, as codes into its few distinct texts.

    Parameters
    ----------
    ordinance : Ordinance
        The ordinance judged.
    v : Verdicts
        The judge's verdicts over the parcels (:func:`georeview.rules.judge.verdicts`).
    facts : Facts
        The facts the verdicts were reached on (the same object, classification added).
    has_dem : bool
        Whether the layers folder has a DEM (else steep slopes are never measured).
    resources : mapping
        ``wetland``, ``floodplain`` and ``floodway`` square feet per parcel (NaN: no layer).
    steep : numpy.ndarray
        Steep-slope square feet per parcel (NaN: not measured).

    Returns
    -------
    (list of str, numpy.ndarray)
        For ``regulated`` where it is unknown, what is missing; for a regulated parcel's
        category, larger site or extraordinary where that is unknown, the same after its
        name (``extraordinary: no DEM in the layers folder``). Empty where every answer
        is known.
    """
    from georeview.facts.registry import registry

    words = {"has_dem": has_dem, "resources": resources, "steep": steep, "registry": registry()}
    n = v.n
    groups: list[tuple[str, Coded]] = []
    found = [("", _regulated_blame(ordinance, v, facts))]
    found += [(f"{_FLAG_WORDS[k]}: ", b) for k, b in _flag_blame(ordinance, v, facts).items()]
    for prefix, blamed in found:
        masks = [wm for fact, rows in blamed.items() for wm in _fact_words(fact, rows, **words)]
        masks = [(w, m) for w, m in masks if m.any()]
        if masks:
            groups.append((prefix, joined_labels(masks, n, REASON_SEPARATOR)))
    if not groups:
        return [""], np.zeros(n, dtype=np.int64)
    # each row's combination of group texts, grouped (a handful of distinct ones): the
    # text of each combination is built once, each group's name written once
    matrix = np.column_stack([np.asarray(codes, dtype=np.int64) for _, (_, codes) in groups])
    combos, inverse = np.unique(matrix, axis=0, return_inverse=True)
    texts = [
        GROUP_SEPARATOR.join(
            prefix + labels[c]
            for (prefix, (labels, _)), c in zip(groups, combo.tolist(), strict=True)
            if labels[c]
        )
        for combo in combos  # one per distinct combination, not per row
    ]
    return texts, inverse.reshape(-1)
