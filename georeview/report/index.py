"""Batch results page: ``index.html`` over a screening or batch run.

One self-contained HTML file: a sortable, filterable table with one row per
parcel or submission, and a map of every parcel coloured by outcome. The
parcels are simplified for display in the working CRS (a tolerance in metres)
before they are reprojected to EPSG:4326, coordinates are rounded, and the map
draws them as ONE GeoJSON layer on a canvas, so 13,000 parcels stay a file of a
few megabytes that opens in a second or two. Text from the rows reaches the
page only as escaped JSON and is put into the page as text nodes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd

from georeview.errors import CRSError, InputError
from georeview.report.decimals import display_decimals
from georeview.report.map_assets import asset_tags, safe_json
from georeview.report.map_data import PRECISION, display_geojson
from georeview.sanitise import safe_link

log = logging.getLogger(__name__)

#: Display simplification of parcels, metres in the working CRS.
INDEX_SIMPLIFY_M = 1.0
#: Outcome → colour, in legend order.
#: Okabe-Ito colour-blind-safe hues (Okabe & Ito 2008) for the outcomes a reviewer acts
#: on first; grey for what could not be reviewed.
OUTCOME_COLOURS: dict[str, str] = {
    "fails": "#D55E00",
    "disapprove": "#D55E00",
    "return to applicant": "#0072B2",
    "awaiting the Village": "#56B4E9",
    "approve with conditions": "#E69F00",
    "approve": "#F0E442",
    "incomplete": "#0072B2",
    "needs info": "#0072B2",
    "extraordinary": "#CC79A7",
    "major": "#E69F00",
    "minor": "#F0E442",
    "regulated": "#56B4E9",
    "not regulated": "#009E73",
    "error": "#525252",
    "other": "#bdbdbd",
}
#: Column order preferred in the table (others follow in the frame's order).
PREFERRED = ("id", "name", "outcome", "status", "jurisdiction", "regulated", "category", "error")


def outcome(rows: pd.DataFrame) -> pd.Series:
    """Classify each row for colouring: an ``outcome`` column wins, else it is derived.

    Derived from the columns present: a non-empty ``error`` → ``"error"``; a
    positive ``fail``/``fail_count``/``n_fail`` → ``"fails"``; ``regulated``
    true → the ``category`` (``"major"``/``"minor"``) or ``"regulated"``;
    ``regulated`` false → ``"not regulated"``; unknown → ``"needs info"``.
    """
    n = len(rows)
    if "outcome" in rows.columns:
        return rows["outcome"].astype(object).where(rows["outcome"].notna(), "other").astype(str)
    out = np.full(n, "other", dtype=object)
    if "regulated" in rows.columns:
        truth = rows["regulated"].map(_truth)
        is_true = (truth == True).to_numpy()  # noqa: E712 (object column of True/False/None)
        is_false = (truth == False).to_numpy()  # noqa: E712
        cat = (
            (
                rows["category"].astype(object).where(rows["category"].notna(), "").astype(str)
                if "category" in rows.columns
                else pd.Series([""] * n, index=rows.index)
            )
            .str.strip()
            .str.lower()
        )
        major_minor = cat.isin(("major", "minor")).to_numpy()
        out = np.where(is_true, np.where(major_minor, cat.to_numpy(), "regulated"), out)
        out = np.where(is_false, "not regulated", out)
        out = np.where(~is_true & ~is_false, "needs info", out)
    for col in ("fail", "fail_count", "n_fail", "fails"):
        if col in rows.columns:
            fails = pd.to_numeric(rows[col], errors="coerce").fillna(0).to_numpy() > 0
            out = np.where(fails, "fails", out)
            break
    if "error" in rows.columns:
        err = rows["error"].astype(object)
        has_err = (err.notna() & (err.astype(str).str.strip() != "")).to_numpy()
        # A repaired geometry keeps its reason in ``error`` but was screened: it is
        # coloured by its outcome (and flagged by :func:`repaired`), as the CLI counts it.
        has_err = has_err & ~repaired(rows).to_numpy()
        out = np.where(has_err, "error", out)
    return pd.Series(out, index=rows.index, dtype=object)


def repaired(rows: pd.DataFrame) -> pd.Series:
    """Rows whose geometry was repaired before screening (``status`` ``"repaired"``)."""
    if "status" not in rows.columns:
        return pd.Series(np.zeros(len(rows), dtype=bool), index=rows.index)
    status = rows["status"].astype(object).where(rows["status"].notna(), "").astype(str)
    return status.str.strip().str.lower() == "repaired"


def _truth(value: Any) -> bool | None:
    """Read a yes/no cell (bool, 0/1, "true"/"false", "yes"/"no"); anything else is unknown."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "t", "y"):
        return True
    if text in ("false", "no", "0", "f", "n"):
        return False
    return None


#: Decimals a quantity is shown with, by the column name's ending (case aside), and why;
#: the first rule that fits decides. One rounding per quantity, and the same as
#: report.html's (:data:`georeview.report.decimals.DISPLAY_DECIMALS`): every area in square
#: feet alike, every acreage alike, on the index pages and in the reports they link.
INDEX_DECIMALS: tuple[tuple[str, int, str], ...] = (
    ("_sqft", int(display_decimals("sq ft") or 0), "square feet, as report.html shows them"),
    ("acres", int(display_decimals("acres") or 0), "acres, as report.html shows them"),
    ("share_", 2, "a share of the parcel's area (0-1): 0.01 is 1 %"),
)
#: Counts shown with thousands separators (whole numbers).
COUNT_COLUMNS = ("fail", "needs_info", "pass")
#: Decimals of a number column no rule names (as it always was: noise trimmed, sortable).
RAW_DECIMALS = 4
#: Table columns whose value titles a row's popup, the first present wins.
TITLE_COLUMNS = ("id", "parcel_id", "name")


def quantity_decimals(columns: list[str] | tuple[str, ...]) -> dict[str, int]:
    """The shown decimals of each column that is a known quantity (others are not formatted).

    ``*_sqft`` whole square feet, ``*acres`` (``GISACRES`` of the statewide parcel schema
    too) two decimals, ``share_*`` two, the finding counts whole. A number column not named
    here (a year, an input's code) is shown as it is, without thousands separators.
    """
    out: dict[str, int] = {}
    for c in columns:
        low = str(c).lower()
        if low in COUNT_COLUMNS:
            out[c] = 0
            continue
        for rule, digits, _ in INDEX_DECIMALS:
            if low.startswith(rule) if rule.endswith("_") else low.endswith(rule):
                out[c] = digits
                break
    return out


def _column_cells(col: pd.Series, digits: int | None) -> list[Any]:
    """One column's cells for the page, vectorised: numbers stay numbers (for sorting).

    Booleans become ``yes``/``no``; numbers are rounded to ``digits`` (or
    :data:`RAW_DECIMALS`), whole ones written as integers; a non-finite number, an
    empty text and a null become ``None``; anything else is text.
    """
    dtype = col.dtype
    if pd.api.types.is_object_dtype(dtype):
        col = col.replace("", None)  # a batch's error rows leave counts and areas as ""
        kind = pd.api.types.infer_dtype(col, skipna=True)
    else:
        kind = "floating" if pd.api.types.is_numeric_dtype(dtype) else ""
    if pd.api.types.is_bool_dtype(dtype) or kind == "boolean":
        truth = col.astype("boolean")
        words = pd.Series(np.where(truth.fillna(False).to_numpy(dtype=bool), "yes", "no"))
        return words.astype(object).where(truth.notna().to_numpy(), None).tolist()
    if kind in ("integer", "floating", "mixed-integer-float", "decimal"):
        x = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        finite = np.isfinite(x)
        whole = pd.api.types.is_integer_dtype(dtype) or kind == "integer" or digits == 0
        x = np.round(np.where(finite, x, 0.0), RAW_DECIMALS if digits is None else digits) + 0.0
        if whole and bool((np.abs(x) < 2**53).all()):
            # whole numbers as JSON integers: "12345", not "12345.0" (thousands of cells)
            cells = pd.Series(x.astype(np.int64)).astype(object)
        else:
            cells = pd.Series(x).astype(object)
        return cells.where(finite, None).tolist()
    text = col.astype("string")
    return text.astype(object).where(text.notna().to_numpy(), None).tolist()


def index_data(
    rows: gpd.GeoDataFrame,
    *,
    working_crs: Any,
    simplify_m: float = INDEX_SIMPLIFY_M,
    precision: int = PRECISION,
    columns: list[str] | None = None,
    link_column: str | None = None,
    context: gpd.GeoDataFrame | None = None,
    labels: Mapping[str, str] | None = None,
    decimals: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The JSON the index page is built from: table columns and rows, and parcel shapes.

    Parameters
    ----------
    labels : mapping, optional
        Header of each column in words (a column not named keeps its own name).
    decimals : mapping, optional
        Decimals each number column is rounded to and shown with, with thousands
        separators (:func:`quantity_decimals`); other columns are shown as they are.

    Returns
    -------
    dict
        ``columns`` (names), ``labels`` (headers), ``rows`` (lists of cells, ``outcome``
        first), ``order`` (the columns' order on the page: the link column first, then
        the outcome), ``decimals`` (per column, ``None`` for no formatting), ``links``
        (safe relative links or ``None``), ``colours``, ``counts``, ``shapes`` (a
        FeatureCollection whose feature ``id`` is the row number), ``repaired`` (row
        numbers whose geometry was repaired), ``link_column`` (table column shown as a
        link, -1 for none), ``title_column`` (-1 for none) and ``context`` (village
        limits). Built column by column: no Python work per row.
    """
    if rows.crs is None:
        raise CRSError("the rows have no CRS", field="geometry")
    from georeview.load import to_crs

    crs = to_crs(working_crs)
    cols = columns or [c for c in rows.columns if c != rows.geometry.name]
    missing = [c for c in cols if c not in rows.columns]
    if missing:
        raise InputError(f"no such columns: {', '.join(missing)}", field="columns")
    if columns is None:
        cols = sorted(cols, key=lambda c: PREFERRED.index(c) if c in PREFERRED else 99)
    cols = [c for c in cols if c != "outcome"]
    digits = dict(decimals or {})
    out = outcome(rows)
    cells = [out.astype(object).tolist()]
    cells += [_column_cells(rows[c].reset_index(drop=True), digits.get(c)) for c in cols]
    table = list(map(list, zip(*cells, strict=True)))
    links = None
    if link_column is not None and link_column in rows.columns:
        vals = rows[link_column].astype(object)
        links = [safe_link(v) for v in vals]
    geo = rows.to_crs(crs) if rows.crs != crs else rows
    geo = gpd.GeoDataFrame({"row": np.arange(len(rows))}, geometry=geo.geometry.to_numpy(), crs=crs)
    shapes = display_geojson(geo, simplify_m=simplify_m, precision=precision)
    kept = np.flatnonzero(~(geo.geometry.isna() | geo.geometry.is_empty).to_numpy())
    for feat, i in zip(shapes["features"], kept.tolist(), strict=True):
        feat["id"] = i
    counts = out.value_counts().to_dict()
    fixed = repaired(rows)
    colours = dict(OUTCOME_COLOURS)
    for k in counts:
        colours.setdefault(str(k), OUTCOME_COLOURS["other"])
    names = ["outcome", *map(str, cols)]
    link = cols.index(link_column) + 1 if link_column in cols else -1
    # The report link first: on a phone, or beside the map on a desktop, it is the one
    # column a reviewer needs, and it stays in view however many columns follow.
    order = ([link] if link > 0 else []) + [j for j in range(len(names)) if j != link]
    words = {"outcome": "Outcome", **(labels or {})}
    title = next((names.index(c) for c in TITLE_COLUMNS if c in names), -1)
    return {
        "columns": names,
        "labels": [str(words.get(c, c)) for c in names],
        "rows": table,
        "order": order,
        "decimals": [digits.get(c) for c in names],
        "links": links,
        "colours": colours,
        "counts": {str(k): int(v) for k, v in counts.items()},
        "shapes": shapes,
        "repaired": np.flatnonzero(fixed.to_numpy()).tolist(),
        "link_column": link,
        "title_column": title,
        "context": context_geojson(context, crs, simplify_m=simplify_m, precision=precision),
    }


def context_geojson(
    context: gpd.GeoDataFrame | None, crs: Any, *, simplify_m: float, precision: int
) -> dict[str, Any] | None:
    """Village limits (or any context outline) for the overview map, or ``None``."""
    if context is None or not len(context):
        return None
    ctx = context.to_crs(crs) if context.crs != crs else context
    names = [c for c in ("name",) if c in ctx.columns]
    return display_geojson(ctx, names, simplify_m=simplify_m, precision=precision)


def render_index(data: dict[str, Any], *, title: str) -> str:
    """Render index.html from :func:`index_data` output (self-contained, no network)."""
    from georeview.report import template_env

    return (
        template_env()
        .get_template("index.html")
        .render(title=title, assets=asset_tags(), data=safe_json(data), counts=data["counts"])
    )


def write_index(
    rows: gpd.GeoDataFrame,
    out_html: Path,
    *,
    title: str,
    working_crs: Any,
    simplify_m: float = INDEX_SIMPLIFY_M,
    precision: int = PRECISION,
    columns: list[str] | None = None,
    link_column: str | None = None,
    context: gpd.GeoDataFrame | None = None,
    labels: Mapping[str, str] | None = None,
    decimals: Mapping[str, int] | None = None,
) -> Path:
    """Write the batch results page for a screening or batch run.

    Parameters
    ----------
    rows : GeoDataFrame
        One row per parcel or submission, any columns (``id``, ``status``,
        ``jurisdiction``, ``regulated``, ``category``, ``error``, ...). An
        ``outcome`` column sets each row's colour; without it the colour is
        derived (see :func:`outcome`). Rows without geometry (error rows) are
        listed in the table only.
    out_html : Path
        The file to write (atomically).
    title : str
        Page title (escaped).
    working_crs : CRS-like
        Projected CRS in which geometry is simplified before display.
    simplify_m : float
        Simplification tolerance, metres (topology preserved).
    precision : int
        Decimal places of longitude and latitude.
    columns : list of str, optional
        Table columns (default: every non-geometry column).
    link_column : str, optional
        Column with a relative link per row (e.g. ``"sub1/report.html"``); links
        with a URL scheme, a host, ``..`` or control characters are dropped
        (:func:`georeview.sanitise.safe_link`).
    context : GeoDataFrame, optional
        Outlines drawn under the rows for context (the village limits); the map
        opens on the rows, not on the context.
    labels : mapping, optional
        Header of each column in words; a column not named keeps its own name.
    decimals : mapping, optional
        Decimals of each quantity shown with thousands separators
        (:func:`quantity_decimals`).

    Returns
    -------
    Path
        ``out_html``.
    """
    from georeview.report.files import write_atomic

    data = index_data(
        rows,
        working_crs=working_crs,
        simplify_m=simplify_m,
        precision=precision,
        columns=columns,
        link_column=link_column,
        context=context,
        labels=labels,
        decimals=decimals,
    )
    page = render_index(data, title=title)
    log.info("index.html: %d rows, %.1f MB", len(rows), len(page.encode("utf-8")) / 1e6)
    return write_atomic(Path(out_html), page)
