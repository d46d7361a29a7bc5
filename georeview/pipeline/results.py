"""The screening's result columns: names, order and their text from a frame judgement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from georeview.rules import FrameJudgement, Ordinance

__all__ = ["RESULT_COLUMNS", "judgement_columns", "kinds_text", "parcel_ids"]

#: Result columns added to every input row, in this order.
RESULT_COLUMNS = (
    "row",
    "parcel_id",
    "status",
    "error",
    "jurisdiction",
    "share_village",
    "share_extraterritorial",
    "share_outside",
    "straddles",
    "municipality",
    "area_sqft",
    "disturbed_sqft",
    "floodplain_sqft",
    "floodway_sqft",
    "wetland_sqft",
    "steep_slope_sqft",
    "steep_slope_gt_sqft",
    "kinds",
    "regulated",
    "category",
    "larger_site",
    "extraordinary",
    "reach_citation",
    "exempt_by",
    "triggered_by",
    "classified_by",
    "rules",
    "citations",
)



def joined_labels(masks: Sequence[tuple[str, Any]], n: int, sep: str) -> Any:
    """Join labels whose mask is true, per row.

    Rows are grouped by their combination of masks (few distinct ones), and each
    combination's text is built once.
    """
    labels: list[str] = []
    cols: list[Any] = []
    for label, mask in masks:
        m = np.asarray(mask, dtype=bool)
        if label in labels:  # the same citation from several rules: shown once
            k = labels.index(label)
            cols[k] = cols[k] | m
        else:
            labels.append(label)
            cols.append(m)
    if not cols or n == 0:
        return np.full(n, "", dtype=object)
    matrix = np.column_stack(cols)
    packed = np.packbits(matrix, axis=1)
    combos, first, inverse = np.unique(packed, axis=0, return_index=True, return_inverse=True)
    text = np.array(
        [sep.join(lab for lab, on in zip(labels, matrix[f], strict=True) if on) for f in first],
        dtype=object,
    )
    del combos
    return text[inverse.reshape(-1)]

def kinds_text(kinds: Any) -> Any:
    """``kind+kind`` text of each row (computed once per distinct tuple)."""
    codes, uniques = pd.factorize(pd.Series(kinds, dtype=object))
    text = np.array(["+".join(u) for u in uniques] + [""], dtype=object)
    return text[codes]


def parcel_ids(frame: Any, id_col: str | None, start: int) -> Any:
    """The ``parcel_id`` column: the id field as text, or the input row number without one."""
    if id_col and id_col in frame.columns:
        return frame[id_col].astype("string").fillna("").to_numpy(dtype=object)
    return np.array([str(i) for i in range(start, start + len(frame))], dtype=object)


def judgement_columns(
    ordinance: Ordinance, j: FrameJudgement, facts: pd.DataFrame
) -> dict[str, Any]:
    """Turn a frame judgement into the output's text columns."""
    n = len(facts)

    def tri_text(s: pd.Series) -> Any:
        v = s.fillna(False).to_numpy(dtype=bool)
        return np.where(s.isna().to_numpy(), "unknown", np.where(v, "yes", "no")).astype(object)

    def true(rule_id: str) -> Any:
        return (j.applies[rule_id] == True).fillna(False).to_numpy(dtype=bool)  # noqa: E712

    rules = ordinance.rules
    reg_known = ~(j.regulated == False).fillna(False).to_numpy(dtype=bool)  # noqa: E712
    ext = facts["jurisdiction.status"].to_numpy(dtype=object) == "extraterritorial"
    r = ordinance.reach
    reach_cit = np.where(ext, r.citation_extraterritorial or r.citation_village, r.citation_village)
    applicable = [
        (
            f"{ordinance.municipality}.reach",
            r.citation_village,
            true(f"{ordinance.municipality}.reach"),
        )
    ]
    for rule in rules:
        st = j.status[rule.id].to_numpy(dtype=object)
        if rule.kind in ("exemption", "trigger", "classify"):
            hit = true(rule.id) & (st != "not_applicable")
        else:
            hit = (st != "not_applicable") & reg_known
        applicable.append((rule.id, rule.citation, hit))
    extraordinary = j.flags.get("extraordinary")
    return {
        "regulated": tri_text(j.regulated),
        "category": j.category.to_numpy(dtype=object),
        "larger_site": tri_text(j.larger_site),
        "extraordinary": (
            tri_text(extraordinary) if extraordinary is not None else np.full(n, None, dtype=object)
        ),
        "reach_citation": reach_cit.astype(object),
        "exempt_by": joined_labels(
            [(x.citation, true(x.id)) for x in rules if x.kind == "exemption"], n, "; "
        ),
        "triggered_by": joined_labels(
            [(x.citation, true(x.id)) for x in rules if x.kind == "trigger"], n, "; "
        ),
        "classified_by": joined_labels(
            [(x.citation, true(x.id) & reg_known) for x in rules if x.kind == "classify"], n, "; "
        ),
        "rules": joined_labels([(rid, m) for rid, _, m in applicable], n, " "),
        "citations": joined_labels([(c, m) for _, c, m in applicable], n, "; "),
    }

