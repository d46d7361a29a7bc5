"""The screening's result columns: names, order and their text from the judge's verdicts.

Text columns are built as codes into a few distinct values (a parcel's citations are one
of a handful of combinations) and become pandas ``str`` columns through one Arrow
``take``: no Python string is made per parcel, and none is converted again on the way
into the frame or the Parquet partition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from georeview.rules import Ordinance
from georeview.rules.judge import STATUSES, Verdicts

__all__ = [
    "RESULT_COLUMNS",
    "RESULT_LABELS",
    "Coded",
    "coded",
    "input_renames",
    "joined_labels",
    "judgement_columns",
    "kinds_text",
    "parcel_ids",
    "text_column",
    "tri_codes",
]

#: A text column as ``(distinct values, code of each row)``; code -1 is null.
Coded = tuple[Sequence[str], Any]

#: The dtype pandas gives a column of Python strings (``str``, Arrow-backed, in pandas 3).
_TEXT_DTYPE = pd.Series(["text"]).dtype
#: Whether text columns are built in Arrow (else as objects, as pandas 2 keeps them).
_ARROW_TEXT = isinstance(_TEXT_DTYPE, pd.StringDtype) and _TEXT_DTYPE.storage == "pyarrow"

#: Codes of a yes / no / unknown column.
_TRI = ("no", "yes", "unknown")
#: Status code of a rule that does not apply (:data:`georeview.rules.judge.STATUSES`).
_NOT_APPLICABLE = list(STATUSES).index("not_applicable")

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
    "reason",
    "reach_citation",
    "exempt_by",
    "triggered_by",
    "classified_by",
    "rules",
    "citations",
)


def input_renames(columns: Sequence[str]) -> dict[str, str]:
    """New names for the input fields that clash with a result column or each other.

    Compared without regard to case: GeoPackage (SQLite) and most readers of GeoJSON
    and FlatGeobuf treat ``STATUS`` and ``status`` as one column, so an input
    ``STATUS`` would overwrite the result or fail the write after the whole run. A
    field clashing with a result becomes ``in_<name>``, or ``in_<name>_2``, ``_3`` ...
    when that too is taken (an input with ``status`` and ``in_status``); a field named
    as an earlier one, case aside (a GeoJSON's ``Name`` and ``NAME``), becomes
    ``<name>_2``; so every name of the output is unique, case aside. A pure function
    of the names: every partition gets the same renames.

    Parameters
    ----------
    columns : sequence of str
        The input's field names (the geometry column included or not).

    Returns
    -------
    dict
        ``{old: new}`` for the clashing fields only.
    """
    reserved = {c.lower() for c in RESULT_COLUMNS}
    used = reserved | {str(c).lower() for c in columns}
    seen: set[str] = set()
    renames: dict[str, str] = {}
    for c in map(str, columns):
        low = c.lower()
        if low in reserved:
            base = f"in_{c}"
        elif low in seen:
            base = c
        else:
            seen.add(low)
            continue
        new, k = (base, 2) if base != c else (f"{c}_2", 3)
        while new.lower() in used:
            new, k = f"{base}_{k}", k + 1
        used.add(new.lower())
        renames[c] = new
    return renames


#: Each result column's header in an .xlsx output (plain words, units) and its meaning;
#: the workbook's ``columns`` sheet lists them beside the machine names.
RESULT_LABELS: dict[str, tuple[str, str]] = {
    "row": ("Input row", "row number in the parcel file, from 0"),
    "parcel_id": ("Parcel ID", "the parcel's id, as text (leading zeros kept)"),
    "status": ("Status", "ok, repaired (invalid geometry repaired, see Error) or error"),
    "error": ("Error or repair", "why the parcel could not be screened, or what was repaired"),
    "jurisdiction": (
        "Jurisdiction",
        "village, extraterritorial, outside or undetermined (where most of the parcel lies)",
    ),
    "share_village": ("Share in village (0-1)", "share of the parcel's area in the village"),
    "share_extraterritorial": (
        "Share extraterritorial (0-1)",
        "share of the parcel's area in the village's extraterritorial area",
    ),
    "share_outside": ("Share outside (0-1)", "share of the parcel's area outside both"),
    "straddles": ("Straddles a line", "yes when the parcel lies in more than one jurisdiction"),
    "municipality": ("Municipality", "the municipality holding most of the parcel"),
    "area_sqft": ("Area (sq ft)", "the parcel's area, in the working CRS"),
    "disturbed_sqft": ("Disturbed, assumed (sq ft)", "the disturbance --assume states"),
    "floodplain_sqft": ("Floodplain (sq ft)", "area in the mapped 1 % floodplain"),
    "floodway_sqft": ("Floodway (sq ft)", "area in the mapped floodway"),
    "wetland_sqft": ("Wetland (sq ft)", "area in mapped wetlands"),
    "steep_slope_sqft": (
        "Steep slopes (sq ft)",
        "area at or above the ordinance's steep-slope threshold (DEM)",
    ),
    "steep_slope_gt_sqft": (
        "Steep slopes, over threshold (sq ft)",
        "area strictly above the steep-slope threshold (DEM)",
    ),
    "kinds": ("Activity kinds", "kinds of activity assumed or read from the parcel's class"),
    "regulated": ("Regulated", "yes, no or unknown: whether the ordinance applies"),
    "category": ("Category", "the ordinance's category of the assumed activity"),
    "larger_site": ("Larger site", "yes, no or unknown"),
    "extraordinary": ("Extraordinary", "yes, no or unknown"),
    "reason": (
        "Why unknown",
        "what is missing where regulated (or a regulated parcel's category, larger site or"
        " extraordinary) is unknown: a layer, a DEM over the parcel, a fact --assume does not"
        " state, or a decision the Village makes",
    ),
    "reach_citation": ("Reach citation", "the section that sets where the ordinance applies"),
    "exempt_by": ("Exempt by", "citations of the exemptions that apply"),
    "triggered_by": ("Triggered by", "citations of the triggers that apply"),
    "classified_by": ("Classified by", "citations of the classifying rules that apply"),
    "rules": ("Rules", "ids of the rules that apply"),
    "citations": ("Citations", "citations of the rules that apply"),
}


def text_column(coded: Coded, ok: Any | None = None) -> Any:
    """A pandas text column from codes, null where ``ok`` is false or the code is -1.

    Parameters
    ----------
    coded : (sequence of str, numpy.ndarray)
        Distinct values and each row's code (over the rows where ``ok`` is true).
    ok : numpy.ndarray of bool, optional
        Rows that have a value; the codes are spread over them.

    Returns
    -------
    pandas ExtensionArray or numpy.ndarray
        A ``str`` (Arrow) array where pandas infers strings (pandas 3), else objects.
    """
    uniques, codes = coded
    codes = np.asarray(codes, dtype=np.int64)
    if ok is not None and codes.size != ok.size:
        full = np.full(ok.size, -1, dtype=np.int64)
        full[ok] = codes
        codes = full
    if not (codes >= 0).any() or not _ARROW_TEXT:
        # (all null: an object column of None, as pandas keeps such a column)
        out = np.array([*uniques, None], dtype=object)
        return out[np.where(codes < 0, len(uniques), codes)]
    import pyarrow as pa

    values = pa.array(list(uniques), type=pa.large_string())
    taken = values.take(pa.array(codes, mask=codes < 0))
    return pd.arrays.ArrowStringArray(
        pa.chunked_array([taken], type=pa.large_string()),
        dtype=_TEXT_DTYPE,
    )


def coded(values: Any) -> Coded:
    """Codes of an array of text (None is null), one hash pass."""
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    return [str(u) for u in uniques], codes


def tri_codes(v: Any) -> Coded:
    """A three-valued :class:`~georeview.rules.evaluate.Tri` as ``no`` / ``yes`` / ``unknown``."""
    return _TRI, np.where(v.known, v.value.astype(np.int64), 2)


def joined_labels(masks: Sequence[tuple[str, Any]], n: int, sep: str) -> Coded:
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
        return [""], np.zeros(n, dtype=np.int64)
    matrix = np.column_stack(cols)
    packed = np.packbits(matrix, axis=1)
    if packed.shape[1] <= 8:
        # up to 64 labels: each row's combination is one integer, grouped by hashing
        # (pandas.factorize: 0.4 ms per 25,000 rows against numpy's sorting unique's
        # 1.6-2.4 ms, and far cheaper than numpy's row-wise unique over bytes)
        wide = np.zeros((n, 8), dtype=np.uint8)
        wide[:, : packed.shape[1]] = packed
        codes, uniques = pd.factorize(wide.view(np.uint64).reshape(-1))
        first = np.empty(len(uniques), dtype=np.int64)
        first[codes[::-1]] = np.arange(n - 1, -1, -1)  # each combination's first row
        inverse = codes.astype(np.int64, copy=False)
    else:
        _, first, inverse = np.unique(packed, axis=0, return_index=True, return_inverse=True)
    text = [sep.join(lab for lab, on in zip(labels, matrix[f], strict=True) if on) for f in first]
    return text, inverse.reshape(-1)


def kinds_text(kinds: Any) -> Coded:
    """``kind+kind`` text of each row (computed once per distinct tuple)."""
    codes, uniques = pd.factorize(pd.Series(kinds, dtype=object))
    return ["+".join(u) for u in uniques] + [""], np.where(codes < 0, len(uniques), codes)


def parcel_ids(frame: Any, id_col: str | None, start: int) -> Any:
    """The ``parcel_id`` column: the id field as text, or the input row number without one."""
    if id_col and id_col in frame.columns:
        ids = frame[id_col].astype("string").fillna("")
        if _ARROW_TEXT:
            return ids.astype("str").array  # Arrow to Arrow: no Python string per row
        return ids.to_numpy(dtype=object)
    return np.array([str(i) for i in range(start, start + len(frame))], dtype=object)


def judgement_columns(ordinance: Ordinance, v: Verdicts, where: Any) -> dict[str, Coded]:
    """Turn the judge's verdicts into the output's text columns, as codes.

    Parameters
    ----------
    ordinance : Ordinance
        The ordinance judged.
    v : georeview.rules.judge.Verdicts
        From :func:`georeview.rules.judge.verdicts` over the parcels' facts.
    where : numpy.ndarray
        Jurisdiction category of each parcel (the reach citation depends on it).
    """
    n = v.n
    rules = ordinance.rules
    reg_known = ~v.regulated.false
    ext = np.asarray(where, dtype=object) == "extraterritorial"
    r = ordinance.reach
    reach_id = f"{ordinance.municipality}.reach"
    applicable = [(reach_id, r.citation_village, v.applies[reach_id].true)]
    for rule in rules:
        moot = v.codes[rule.id] == _NOT_APPLICABLE
        if rule.kind in ("exemption", "trigger", "classify"):
            hit = v.applies[rule.id].true & ~moot
        else:
            hit = ~moot & reg_known
        applicable.append((rule.id, rule.citation, hit))
    extraordinary = v.flags.get("extraordinary")

    def by_kind(kind: str, also: Any = True) -> Coded:
        masks = [(x.citation, v.applies[x.id].true & also) for x in rules if x.kind == kind]
        return joined_labels(masks, n, "; ")

    return {
        "regulated": tri_codes(v.regulated),
        "category": coded(v.category),
        "larger_site": tri_codes(v.larger_site),
        "extraordinary": (
            tri_codes(extraordinary) if extraordinary is not None else ([], np.full(n, -1))
        ),
        "reach_citation": (
            [r.citation_village, r.citation_extraterritorial or r.citation_village],
            ext.astype(np.int64),
        ),
        "exempt_by": by_kind("exemption"),
        "triggered_by": by_kind("trigger"),
        "classified_by": by_kind("classify", reg_known),
        "rules": joined_labels([(rid, m) for rid, _, m in applicable], n, " "),
        "citations": joined_labels([(c, m) for _, c, m in applicable], n, "; "),
    }
