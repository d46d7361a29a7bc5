"""Screening one partition of parcels: geometry, overlays, facts, judge, result columns.

For each parcel: where it lies (village, extraterritorial area, outside; with area
shares), how much 100-year floodplain, floodway, wetland and (with a DEM) steep slope it
holds, and whether an *assumed* activity on it would be regulated, how it would be
classed and which rules with which citations would apply.

Geometry work is array work: an :class:`shapely.STRtree` pairs parcels with the
context's pieces, pieces that contain a parcel properly give its whole area without an
intersection, and the rest are intersected pairwise in one call; areas are summed per
parcel with :func:`numpy.bincount`. Rules are evaluated over pandas columns by
:func:`georeview.rules.judge_frame`, the judge of a review.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
import shapely

from georeview.errors import ConfigError, CRSError
from georeview.measure.jurisdiction import CATEGORIES, SLIVER_SHARE, classify_shares
from georeview.measure.overlay import largest_label, overlap_areas, steep_areas
from georeview.pipeline.context import ScreenContext
from georeview.pipeline.extent import mark_outside_extent
from georeview.pipeline.parcel_facts import parcel_facts, parcel_kinds
from georeview.pipeline.parcel_geometry import NONFINITE, prepare_geometries
from georeview.pipeline.partitions import Source
from georeview.pipeline.results import (
    RESULT_COLUMNS,
    Coded,
    coded,
    input_renames,
    judgement_columns,
    kinds_text,
    parcel_ids,
    text_column,
)
from georeview.pipeline.screen_reasons import unknown_reasons
from georeview.rules.evaluate import Facts
from georeview.rules.judge import verdicts

__all__ = ["screen_frame", "screen_isolated", "screen_slice"]

log = logging.getLogger(__name__)

#: The result columns that come from the judge (null on an error row).
JUDGED_COLUMNS = RESULT_COLUMNS[RESULT_COLUMNS.index("regulated") :]


def screen_frame(frame: Any, ctx: ScreenContext, *, start: int = 0) -> Any:
    """Screen one partition of parcels; return it with the result columns added.

    Parameters
    ----------
    frame : geopandas.GeoDataFrame
        Parcels in any projected or geographic CRS.
    ctx : ScreenContext
        From :func:`build_context`.
    start : int
        Input row number of the first row (the ``row`` column).

    Returns
    -------
    geopandas.GeoDataFrame
        The input rows in their order, with :data:`RESULT_COLUMNS` added (input
        columns of the same name, case aside, are renamed ``in_<name>``, made unique).
    """
    n = len(frame)
    geoms, status, error, written = prepare_geometries(
        frame.geometry.values, frame.crs, ctx.working_crs
    )
    ok = status != "error"
    g = geoms[ok]
    unit2 = ctx.sqft_per_unit2

    def spread(values: Any, fill: Any = np.nan, dtype: Any = float) -> Any:
        out = np.full(n, fill, dtype=dtype)
        out[ok] = values
        return out

    total = shapely.area(g)
    tree = shapely.STRtree(g)  # one tree of the parcels for every layer's pieces
    where, shares, straddles, municipality = locate_parcels(g, total, ctx, tree)
    resources = resource_areas(g, ctx, tree)
    steep = steep_areas(
        g,
        dem_path=ctx.dem_path,
        vertical_units=ctx.dem_vertical_units,
        working_crs=ctx.working_crs,
        threshold_pct=float(ctx.ordinance.param("steep_slope_pct")),
    )
    sub = frame.iloc[np.flatnonzero(ok)] if g.size < n else frame
    kinds = parcel_kinds(sub, ctx.columns, ctx.assumption.activity.kinds or ())
    if g.size:
        facts, disturbed = parcel_facts(
            ctx.assumption, total * unit2, shares, where, resources, steep, kinds
        )
        ordinance = ctx.ordinance
        # the judge's verdicts as arrays (judge_frame's own input), read without a frame
        # of status text per rule; one Facts for the judge and the reasons, so the
        # reasons read the very columns the verdicts were reached on
        known = Facts(facts)
        v = verdicts(ordinance, known)
        cols = judgement_columns(ordinance, v, where)
        cols["reason"] = unknown_reasons(
            ordinance,
            v,
            known,
            has_dem=ctx.dem_path is not None,
            resources=resources,
            steep=steep[0],
        )
    else:
        # every row is an error row (the rows of a failing parcel, or a partition of empty
        # geometries): nothing to judge, every judgement is null (the facts builder is
        # not asked for a frame of no rows)
        disturbed = np.empty(0)
        cols = {c: ((), np.empty(0, dtype=np.int64)) for c in JUDGED_COLUMNS}
    result: dict[str, Any] = {
        "row": np.arange(start, start + n, dtype=np.int64),
        "parcel_id": parcel_ids(frame, ctx.columns.get("id"), start),
        "status": status,
        "error": error,
        "jurisdiction": text_column(coded(where), ok),
        "share_village": spread(shares["village"]),
        "share_extraterritorial": spread(shares["extraterritorial"]),
        "share_outside": spread(shares["outside"]),
        "straddles": text_column((("no", "yes"), straddles.astype(np.int64)), ok),
        "municipality": text_column(municipality, ok),
        "area_sqft": spread(total * unit2),
        "disturbed_sqft": spread(disturbed),
        "floodplain_sqft": spread(resources["floodplain"]),
        "floodway_sqft": spread(resources["floodway"]),
        "wetland_sqft": spread(resources["wetland"]),
        "steep_slope_sqft": spread(steep[0]),
        "steep_slope_gt_sqft": spread(steep[1]),
        "kinds": text_column(kinds_text(kinds), ok),
        **{c: text_column(v, ok) for c, v in cols.items()},
    }
    return with_results(frame, result, error == NONFINITE, repaired=(status == "repaired", written))


def locate_parcels(
    g: Any, total: Any, ctx: ScreenContext, tree: Any = None
) -> tuple[Any, Any, Any, Coded]:
    """Jurisdiction of each (valid) parcel: category, area shares, straddling, municipality.

    Returns
    -------
    (where, shares, straddles, municipality)
        Category of each parcel, its area share of each category (a dict of arrays),
        whether it straddles a line, and the municipality holding most of it (as codes
        into the context's municipality names; "" where none holds any).
    """
    village = overlap_areas(g, ctx.village, tree)
    etj = overlap_areas(g, ctx.extraterritorial, tree)
    names = [*ctx.muni_names, ""]
    if not g.size:
        empty = np.empty(0, dtype=object)
        nothing = np.empty(0, dtype=np.int64)
        return empty, {c: np.empty(0) for c in CATEGORIES}, np.empty(0, bool), (names, nothing)
    where, shares, straddles = classify_shares(village, etj, total)
    if ctx.undetermined is not None:
        # no neighbours layer: extraterritorial or outside cannot be told apart there
        unknown = overlap_areas(g, ctx.undetermined, tree) / total >= SLIVER_SHARE
        where = np.where(unknown & (where != "village"), "undetermined", where).astype(object)
        shares = {
            c: (v if c == "village" else np.where(unknown, np.nan, v)) for c, v in shares.items()
        }
    lab, _ = largest_label(g, ctx.muni_pieces, ctx.muni_labels, len(ctx.muni_names), tree)
    return where, shares, straddles, (names, np.where(lab < 0, len(names) - 1, lab))


def resource_areas(g: Any, ctx: ScreenContext, tree: Any = None) -> dict[str, Any]:
    """Square feet of floodplain, floodway and wetland in each (valid) parcel.

    ``tree``: an :class:`shapely.STRtree` of ``g`` shared between the layers.
    """
    unit2 = ctx.sqft_per_unit2
    return {
        "floodplain": overlap_areas(g, ctx.floodplain, tree) * unit2,
        "floodway": overlap_areas(g, ctx.floodway, tree) * unit2,
        "wetland": overlap_areas(g, ctx.wetlands, tree) * unit2,
    }


def with_results(
    frame: Any,
    result: dict[str, Any],
    drop_geometry: Any,
    *,
    repaired: tuple[Any, Any] | None = None,
) -> Any:
    """The input rows with the result columns appended (clashing inputs renamed).

    Renamed by :func:`~georeview.pipeline.results.input_renames`.

    ``repaired``: (which rows, their geometries in the input's CRS): a repaired parcel
    is written with the geometry it was screened with, not its invalid input.
    """
    import geopandas as gpd

    out = frame
    fix = repaired is not None and bool(np.any(repaired[0]))
    if drop_geometry.any() or fix:
        geo = out.geometry.to_numpy().copy()
        # A geometry with NaN/Infinity cannot be written or drawn faithfully: its row
        # keeps the attributes and the error, not the broken shape.
        geo[drop_geometry] = None
        if repaired is not None and fix:
            geo[repaired[0]] = repaired[1][repaired[0]]
        out = out.set_geometry(gpd.GeoSeries(geo, crs=frame.crs, index=frame.index))
    renames = input_renames([c for c in out.columns if c != out.geometry.name])
    if renames:
        out = out.rename(columns=renames)
    # one concat, not 28 column insertions (each would copy the block manager)
    # (on a fresh range index: the input's may repeat labels, which concat cannot align)
    table = pd.DataFrame({c: result[c] for c in RESULT_COLUMNS})
    joined = pd.concat([pd.DataFrame(out).reset_index(drop=True), table], axis=1)
    joined.index = frame.index
    return gpd.GeoDataFrame(joined, geometry=out.geometry.name, crs=frame.crs)


def screen_slice(source: Source, start: int, count: int, ctx: ScreenContext) -> Any:
    """Read one partition of the input and screen it (the unit of work of every scheduler)."""
    frame = screen_isolated(source.read(start, count), ctx, start=start)
    return mark_outside_extent(frame, ctx)


def screen_isolated(frame: Any, ctx: ScreenContext, *, start: int = 0) -> Any:
    """:func:`screen_frame`, with a failure confined to the rows that cause it.

    The partition is screened at once. If that raises (a geometry GEOS cannot handle,
    a bug on one strange row), it is split in halves, each screened the same way, down
    to the single parcels that fail: those become error rows naming the exception and
    the rest keep their results. Only failing partitions pay for the splitting.
    Warnings are the caller's to filter (:func:`georeview.pipeline.run.screen_partitions`
    sets the filter once around all its threads: ``warnings.catch_warnings`` here would
    swap the process's filters under the other threads).
    """
    try:
        return screen_frame(frame, ctx, start=start)
    except (KeyboardInterrupt, SystemExit, ConfigError, CRSError):
        raise  # a problem of the whole run (options, the layer's CRS), not of a row
    except Exception as exc:
        if len(frame) <= 1:
            log.debug("row %d: screening failed", start, exc_info=True)
            return error_rows(frame, ctx, start, f"{type(exc).__name__}: {exc}")
    half = len(frame) // 2
    return pd.concat(
        [
            screen_isolated(frame.iloc[:half], ctx, start=start),
            screen_isolated(frame.iloc[half:], ctx, start=start + half),
        ]
    )


def error_rows(frame: Any, ctx: ScreenContext, start: int, reason: str) -> Any:
    """Screen ``frame`` with its geometry emptied, so every row is an error row."""
    blank = frame.set_geometry(np.full(len(frame), None, dtype=object), crs=frame.crs)
    out = screen_frame(blank, ctx, start=start)
    out["error"] = " ".join(f"could not be screened ({reason})".split())[:300]
    return out
