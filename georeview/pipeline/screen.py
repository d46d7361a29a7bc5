"""Screening stage: every parcel of an area against the ordinance, vectorised and partitioned.

``georeview screen PARCELS --layers LAYERS_DIR --out FILE`` answers, for each parcel,
where it lies (village, extraterritorial area, outside; with area shares), how much
100-year floodplain, floodway, wetland and (with a DEM) steep slope it holds, and
whether an *assumed* activity on it would be regulated, how it would be classed and
which rules with which citations would apply.

Geometry work is array work: reference layers are dissolved once and cut into small
pieces (like PostGIS ``ST_Subdivide``), an :class:`shapely.STRtree` pairs parcels with
pieces, pieces that contain a parcel properly give its whole area without an
intersection, and the rest are intersected pairwise in one call; areas are summed per
parcel with :func:`numpy.bincount`. Rules are evaluated over pandas columns with the
same three-valued (Kleene) logic as :func:`georeview.rules.judge`
(:func:`judge_frame`; the tests compare the two row by row).

Input is read in partitions (``partition_size`` rows); each finished partition is
written to ``OUT.parts/`` with a manifest keyed by the input's hash and the options, so
an interrupted run resumes where it stopped and produces the same file as an
uninterrupted one. The output is written under a temporary name and renamed when
complete. ``--workers N`` and ``--scheduler ADDRESS`` run the partitions on Dask
(:mod:`georeview.pipeline._dask`).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import shapely

from georeview.errors import (
    ConfigError,
    CRSError,
    DataSourceError,
    OutputError,
)
from georeview.facts.build import activity_columns, facts_frame
from georeview.measure.jurisdiction import CATEGORIES, SLIVER_SHARE, classify_shares
from georeview.measure.overlay import (
    MAX_PIECE_VERTICES,
    dissolve_pieces,
    largest_label,
    overlap_areas,
    steep_areas,
    subdivide,
)
from georeview.pipeline.assume import (
    CLASS_KINDS,
    WISCONSIN_COLUMNS,
    Assumption,
    check_columns,
    parse_assume,
    parse_columns,
)
from georeview.pipeline.outputs import (
    OUTPUT_SUFFIXES,
    assemble,
)
from georeview.pipeline.partitions import (
    Source,
    WorkFolder,
    partitions,
    read_part,
    run_key,
)
from georeview.rules import FrameJudgement, Ordinance, judge_frame
from georeview.units import sqft_to_acres

log = logging.getLogger(__name__)

#: Rows per partition (memory stays near one partition of input plus the layers).
PARTITION_SIZE = 50_000


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


# --------------------------------------------------------------------------- options


# --------------------------------------------------------------------------- context


@dataclass(frozen=True)
class ScreenContext:
    """Everything a partition needs, computed once and shipped once to each worker.

    Plain arrays and strings only, so it pickles small and identically everywhere.
    """

    working_crs: str
    sqft_per_unit2: float
    municipality: str
    village_name: str
    village: Any
    extraterritorial: Any
    muni_pieces: Any
    muni_labels: Any
    muni_names: tuple[str, ...]
    floodplain: Any | None
    floodway: Any | None
    wetlands: Any | None
    dem_path: str | None
    dem_vertical_units: str | None
    assumption: Assumption
    columns: dict[str, str]
    #: ``(minx, miny, maxx, maxy)`` in the working CRS that the layers describe (the
    #: municipalities grown by the widest extraterritorial reach, within the working
    #: CRS's area of use); parcels beyond it become error rows, never "outside".
    extent: tuple[float, float, float, float] | None = None
    #: Land whose extraterritorial status is unknown (no neighbours layer), or None.
    undetermined: Any | None = None

    @property
    def ordinance(self) -> Ordinance:
        """The municipality's ordinance (cached by :func:`georeview.rules.load_ordinance`)."""
        from georeview.rules import load_ordinance

        return load_ordinance(self.municipality)


def build_context(
    layers: Any,
    assumption: Assumption | None = None,
    columns: Mapping[str, str] | None = None,
    *,
    max_vertices: int = MAX_PIECE_VERTICES,
) -> ScreenContext:
    """Prepare the layers of a municipality for screening: dissolve, subdivide, locate.

    Parameters
    ----------
    layers : georeview.load.Layers
        From :func:`georeview.load.load_layers`.
    assumption : Assumption, optional
        The assumed activity (default: the whole parcel disturbed).
    columns : mapping, optional
        Role -> field map of the parcel layer (default: Wisconsin statewide schema).
    """
    from georeview.measure.areas import floodway, sfha, sqft_per_crs_unit2
    from georeview.pipeline.jurisdictions import jurisdictions_for

    cfg = layers.config
    crs = layers.working_crs
    j = jurisdictions_for(layers)
    names = (j.village.name, *(m.name for m in j.neighbours))
    muni_parts, muni_labels = [], []
    for k, geom in enumerate([j.village.geometry, *(m.geometry for m in j.neighbours)]):
        # the village keeps its own limits; neighbours lose what overlaps the village
        g = geom if k == 0 else shapely.difference(geom, j.village.geometry)
        p = subdivide(np.array([shapely.make_valid(g)], dtype=object), max_vertices)
        muni_parts.append(p)
        muni_labels.append(np.full(p.size, k, dtype=np.intp))
    fp = layers.read("floodplain")
    fp_sfha = fp_way = None
    if fp is not None and cfg.floodplain is not None:
        spec = cfg.floodplain
        fp_sfha = dissolve_pieces(sfha(fp, spec.zone_field, spec.sfha_field).geometry.values)
        fp_way = dissolve_pieces(floodway(fp, spec.subtype_field).geometry.values)
    wet = layers.read("wetlands")
    dem = cfg.dem
    return ScreenContext(
        working_crs=crs.to_wkt(),
        sqft_per_unit2=sqft_per_crs_unit2(crs),
        municipality=cfg.municipality,
        village_name=j.village.name,
        village=subdivide(np.array([j.village.geometry], dtype=object), max_vertices),
        extraterritorial=subdivide(np.array([j.extraterritorial], dtype=object), max_vertices),
        undetermined=(
            None
            if shapely.is_empty(j.undetermined)
            else subdivide(np.array([j.undetermined], dtype=object), max_vertices)
        ),
        muni_pieces=np.concatenate(muni_parts),
        muni_labels=np.concatenate(muni_labels),
        muni_names=names,
        floodplain=fp_sfha,
        floodway=fp_way,
        wetlands=None if wet is None else dissolve_pieces(wet.geometry.values, max_vertices),
        dem_path=None if dem is None else str(layers.folder / dem.path),
        dem_vertical_units=None if dem is None else dem.vertical_units,
        assumption=assumption or Assumption(),
        columns=dict(columns or WISCONSIN_COLUMNS),
    )


# --------------------------------------------------------------------------- parcels


_GEOM_NAMES = np.array(
    [
        "Point",
        "LineString",
        "LinearRing",
        "Polygon",
        "MultiPoint",
        "MultiLineString",
        "MultiPolygon",
        "GeometryCollection",
    ],
    dtype=object,
)


#: Error of a parcel with a NaN or infinite coordinate.
NONFINITE = "a coordinate is not a finite number (NaN or Infinity)"


def prepare_geometries(geoms: Any, src_crs: Any, working_crs: Any) -> tuple[Any, Any, Any]:
    """Check, repair and reproject parcel geometries, all at once.

    Returns
    -------
    (geoms, status, error) : numpy arrays
        Geometries in the working CRS (``None`` for error rows); status ``ok``,
        ``repaired`` or ``error``; the reason (repair or error) or ``""``.
    """
    import geopandas as gpd

    geoms = np.asarray(geoms, dtype=object)
    n = geoms.size
    status = np.full(n, "ok", dtype=object)
    error = np.full(n, "", dtype=object)
    missing = shapely.is_missing(geoms)
    empty = missing.copy()
    empty[~missing] = shapely.is_empty(geoms[~missing])
    status[empty] = "error"
    error[empty] = "empty geometry"
    types = np.full(n, -1)
    types[~empty] = shapely.get_type_id(geoms[~empty])
    not_poly = ~empty & ~np.isin(types, (3, 6))
    if not_poly.any():
        status[not_poly] = "error"
        error[not_poly] = "a " + _GEOM_NAMES[types[not_poly]] + " is not a polygon"
    # A NaN or infinite vertex makes GEOS raise in is_valid/make_valid (for the whole
    # array): such a parcel is an error row before anything else looks at it.
    cand = np.flatnonzero(status == "ok")
    if cand.size:
        coords, owner = shapely.get_coordinates(geoms[cand], include_z=False, return_index=True)
        nonfinite = np.unique(owner[~np.isfinite(coords).all(axis=1)])
        if nonfinite.size:
            idx = cand[nonfinite]
            status[idx] = "error"
            error[idx] = NONFINITE
    ok = status == "ok"
    out = np.full(n, None, dtype=object)
    out[ok] = geoms[ok]
    out, status, error = _repair(out, status, error, "")
    if src_crs is None:
        raise CRSError("the parcel layer has no coordinate reference system", field="parcels")
    good = status != "error"
    if good.any():
        moved = gpd.GeoSeries(out[good], crs=src_crs).to_crs(working_crs).values
        out[good] = np.asarray(moved, dtype=object)
        bad = ~np.isfinite(shapely.bounds(out[good])).all(axis=1)
        if bad.any():
            idx = np.flatnonzero(good)[bad]
            status[idx], error[idx], out[idx] = "error", "coordinates do not transform", None
        out, status, error = _repair(out, status, error, " after reprojection")
    good = status != "error"
    zero = np.zeros(n, dtype=bool)
    zero[good] = shapely.area(out[good]) <= 0
    status[zero], error[zero], out[zero] = "error", "the parcel has no area", None
    return out, status, error


def _repair(out: Any, status: Any, error: Any, when: str) -> tuple[Any, Any, Any]:
    """Repair invalid polygons with make_valid, keeping only their polygonal part."""
    good = status != "error"
    invalid = np.zeros(out.size, dtype=bool)
    invalid[good] = ~shapely.is_valid(out[good])
    if not invalid.any():
        return out, status, error
    idx = np.flatnonzero(invalid)
    reasons = shapely.is_valid_reason(out[idx])
    fixed = shapely.make_valid(out[idx])
    parts, owner = shapely.get_parts(fixed, return_index=True)
    parts, sub = shapely.get_parts(parts, return_index=True)
    owner = owner[sub]
    keep = (shapely.get_type_id(parts) == 3) & ~shapely.is_empty(parts)
    parts, owner = parts[keep], owner[keep]
    rebuilt = np.full(idx.size, None, dtype=object)
    if parts.size:
        uniq, dense = np.unique(owner, return_inverse=True)
        rebuilt[uniq] = shapely.multipolygons(parts, indices=dense)
    lost = shapely.is_missing(rebuilt)
    rebuilt[~lost] = shapely.make_valid(rebuilt[~lost])
    out[idx] = rebuilt
    status[idx] = np.where(lost, "error", "repaired")
    error[idx] = [
        (f"invalid ({r}) and no area once repaired" if bad else f"{r}; repaired{when}")
        for r, bad in zip(reasons, lost, strict=True)
    ]
    out[idx[lost]] = None
    return out, status, error


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
    combos, inverse = np.unique(extra, axis=0, return_inverse=True)
    values = np.empty(len(combos), dtype=object)
    for c, combo in enumerate(combos):  # at most 2**len(CLASS_KINDS) combinations
        add = tuple(kind for kind, on in zip(CLASS_KINDS.values(), combo, strict=True) if on)
        values[c] = base + tuple(k for k in add if k not in base)
    kinds = values[inverse.reshape(-1)]
    return kinds


# --------------------------------------------------------------------------- one partition


def _facts_frame(
    ctx: ScreenContext,
    area_sqft: Any,
    shares: dict[str, Any],
    status: Any,
    resources: dict[str, Any],
    steep: tuple[Any, Any],
    kinds: Any,
) -> tuple[pd.DataFrame, Any]:
    """The facts of each parcel, as columns (what a review of the parcel would read)."""
    a = ctx.assumption
    n = area_sqft.size
    if a.disturb == "whole":
        disturbed = area_sqft.copy()
    elif a.disturb == "none":
        disturbed = np.zeros(n)
    elif a.disturb == "fraction":
        disturbed = area_sqft * float(a.amount or 0.0)
    else:
        disturbed = np.minimum(area_sqft, float(a.amount or 0.0))
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


def _joined(masks: Sequence[tuple[str, Any]], n: int, sep: str) -> Any:
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
        columns of the same name are renamed ``in_<name>``).
    """
    n = len(frame)
    geoms, status, error = prepare_geometries(frame.geometry.values, frame.crs, ctx.working_crs)
    ok = status != "error"
    g = geoms[ok]
    k = ok.sum()
    unit2 = ctx.sqft_per_unit2

    def spread(values: Any, fill: Any = np.nan, dtype: Any = float) -> Any:
        out = np.full(n, fill, dtype=dtype)
        out[ok] = values
        return out

    total = shapely.area(g)
    village = overlap_areas(g, ctx.village)
    etj = overlap_areas(g, ctx.extraterritorial)
    where, shares, straddles = (
        classify_shares(village, etj, total)
        if k
        else (np.empty(0, dtype=object), {c: np.empty(0) for c in CATEGORIES}, np.empty(0, bool))
    )
    if ctx.undetermined is not None and k:
        # no neighbours layer: extraterritorial or outside cannot be told apart there
        unknown = overlap_areas(g, ctx.undetermined) / total >= SLIVER_SHARE
        where = np.where(unknown & (where != "village"), "undetermined", where).astype(object)
        shares = {
            c: (v if c == "village" else np.where(unknown, np.nan, v)) for c, v in shares.items()
        }
    lab, _ = largest_label(g, ctx.muni_pieces, ctx.muni_labels, len(ctx.muni_names))
    names = np.array([*ctx.muni_names, ""], dtype=object)
    resources = {
        "floodplain": overlap_areas(g, ctx.floodplain) * unit2,
        "floodway": overlap_areas(g, ctx.floodway) * unit2,
        "wetland": overlap_areas(g, ctx.wetlands) * unit2,
    }
    steep = steep_areas(
        g,
        dem_path=ctx.dem_path,
        vertical_units=ctx.dem_vertical_units,
        working_crs=ctx.working_crs,
        threshold_pct=float(ctx.ordinance.param("steep_slope_pct")),
    )
    sub = frame.iloc[np.flatnonzero(ok)] if k < n else frame
    kinds = parcel_kinds(sub, ctx.columns, ctx.assumption.activity.kinds or ())
    facts, disturbed = _facts_frame(ctx, total * unit2, shares, where, resources, steep, kinds)
    ordinance = ctx.ordinance
    j = judge_frame(ordinance, facts)
    cols = _result_columns(ordinance, j, facts)

    result: dict[str, Any] = {
        "row": np.arange(start, start + n, dtype=np.int64),
        "parcel_id": _ids(frame, ctx.columns.get("id"), start),
        "status": status,
        "error": error,
        "jurisdiction": spread(where, None, object),
        "share_village": spread(shares["village"]),
        "share_extraterritorial": spread(shares["extraterritorial"]),
        "share_outside": spread(shares["outside"]),
        "straddles": spread(np.where(straddles, "yes", "no"), None, object),
        "municipality": spread(names[lab], None, object),
        "area_sqft": spread(total * unit2),
        "disturbed_sqft": spread(disturbed),
        "floodplain_sqft": spread(resources["floodplain"]),
        "floodway_sqft": spread(resources["floodway"]),
        "wetland_sqft": spread(resources["wetland"]),
        "steep_slope_sqft": spread(steep[0]),
        "steep_slope_gt_sqft": spread(steep[1]),
        "kinds": spread(_kinds_text(kinds), None, object),
        **{c: spread(v, None, object) for c, v in cols.items()},
    }
    out = frame.copy()
    if (error == NONFINITE).any():
        # A geometry with NaN/Infinity cannot be written or drawn faithfully: its row
        # keeps the attributes and the error, not the broken shape.
        import geopandas as gpd

        geo = out.geometry.to_numpy().copy()
        geo[error == NONFINITE] = None
        out = out.set_geometry(gpd.GeoSeries(geo, crs=frame.crs, index=frame.index))
    clash = [c for c in RESULT_COLUMNS if c in out.columns]
    if clash:
        out = out.rename(columns={c: f"in_{c}" for c in clash})
    for name in RESULT_COLUMNS:
        out[name] = result[name]
    return out


def _kinds_text(kinds: Any) -> Any:
    """``kind+kind`` text of each row (computed once per distinct tuple)."""
    codes, uniques = pd.factorize(pd.Series(kinds, dtype=object))
    text = np.array(["+".join(u) for u in uniques] + [""], dtype=object)
    return text[codes]


def _ids(frame: Any, id_col: str | None, start: int) -> Any:
    if id_col and id_col in frame.columns:
        return frame[id_col].astype("string").fillna("").to_numpy(dtype=object)
    return np.array([str(i) for i in range(start, start + len(frame))], dtype=object)


def _result_columns(ordinance: Ordinance, j: FrameJudgement, facts: pd.DataFrame) -> dict[str, Any]:
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
        "exempt_by": _joined(
            [(x.citation, true(x.id)) for x in rules if x.kind == "exemption"], n, "; "
        ),
        "triggered_by": _joined(
            [(x.citation, true(x.id)) for x in rules if x.kind == "trigger"], n, "; "
        ),
        "classified_by": _joined(
            [(x.citation, true(x.id) & reg_known) for x in rules if x.kind == "classify"], n, "; "
        ),
        "rules": _joined([(rid, m) for rid, _, m in applicable], n, " "),
        "citations": _joined([(c, m) for _, c, m in applicable], n, "; "),
    }


# --------------------------------------------------------------------------- partitions and output


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
    """
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return screen_frame(frame, ctx, start=start)
    except (KeyboardInterrupt, SystemExit, ConfigError, CRSError):
        raise  # a problem of the whole run (options, the layer's CRS), not of a row
    except Exception as exc:
        if len(frame) <= 1:
            log.debug("row %d: screening failed", start, exc_info=True)
            return _error_rows(frame, ctx, start, f"{type(exc).__name__}: {exc}")
    half = len(frame) // 2
    return pd.concat(
        [
            screen_isolated(frame.iloc[:half], ctx, start=start),
            screen_isolated(frame.iloc[half:], ctx, start=start + half),
        ]
    )


def _error_rows(frame: Any, ctx: ScreenContext, start: int, reason: str) -> Any:
    """Screen ``frame`` with its geometry emptied, so every row is an error row."""
    blank = frame.set_geometry(np.full(len(frame), None, dtype=object), crs=frame.crs)
    out = screen_frame(blank, ctx, start=start)
    out["error"] = " ".join(f"could not be screened ({reason})".split())[:300]
    return out


#: Result columns kept for a parcel beyond the layers' extent (the rest are emptied).
_KEPT_OUTSIDE = ("row", "parcel_id", "status", "error", "area_sqft")


def mark_outside_extent(out: Any, ctx: ScreenContext) -> Any:
    """Make parcels beyond ``ctx.extent`` error rows, with no jurisdiction or answer.

    Such a parcel is not "outside the village" as far as the layers know: they say
    nothing of it (parcels of another state, a wrong CRS). It keeps its row, id and area
    and says why it has no answer.
    """
    if ctx.extent is None or len(out) == 0 or out.crs is None:
        return out
    from pyproj import CRS, Transformer

    t = Transformer.from_crs(CRS.from_wkt(ctx.working_crs), out.crs, always_xy=True)
    box = shapely.box(*t.transform_bounds(*ctx.extent, densify_pts=21))
    geoms = out.geometry.values
    present = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    beyond = present & (out["status"].to_numpy(dtype=object) != "error")
    beyond[beyond] = ~shapely.intersects(geoms[beyond], box)
    if not beyond.any():
        return out
    out = out.copy()
    out.loc[beyond, "status"] = "error"
    out.loc[beyond, "error"] = (
        "outside the layers' extent (the municipality and its neighbours grown by the widest"
        " extraterritorial reach, within the working CRS's area of use): not screened"
    )
    for col in RESULT_COLUMNS:
        if col not in _KEPT_OUTSIDE:
            out.loc[beyond, col] = np.nan if out[col].dtype.kind == "f" else None
    return out


def layers_extent(layers: Any) -> tuple[float, float, float, float] | None:
    """The box, in the working CRS, that the layers describe (see :class:`ScreenContext`).

    The boundary layers' bounds grown by the widest extraterritorial reach the ordinance
    gives any municipality: the layers describe nothing beyond it.
    """
    from pyproj import Transformer

    from georeview.measure.areas import sqft_per_crs_unit2
    from georeview.rules import load_ordinance
    from georeview.units import FT_PER_MILE

    reach = load_ordinance(layers.config.municipality).param("etj_miles")
    widest_ft = max(float(v) for v in reach.values()) * FT_PER_MILE

    crs = layers.working_crs
    boxes = [g.total_bounds for g in (layers.read("boundary"), layers.read("neighbors"))
             if g is not None and len(g)]
    if not boxes:
        return None
    b = np.vstack(boxes)
    grow = widest_ft / float(np.sqrt(sqft_per_crs_unit2(crs)))
    ext = [b[:, 0].min() - grow, b[:, 1].min() - grow, b[:, 2].max() + grow, b[:, 3].max() + grow]
    aou = crs.area_of_use
    if aou is not None:
        t = Transformer.from_crs("EPSG:4326", crs, always_xy=True)
        a = t.transform_bounds(aou.west, aou.south, aou.east, aou.north, densify_pts=21)
        ext = [max(ext[0], a[0]), max(ext[1], a[1]), min(ext[2], a[2]), min(ext[3], a[3])]
    minx, miny, maxx, maxy = (float(v) for v in ext)
    return minx, miny, maxx, maxy


def check_parcels_within(info: Any, extent: Any, layers: Any, path: str) -> None:
    """Refuse a parcel file whose stored bounds lie wholly beyond the layers' extent."""
    from pyproj import CRS, Transformer

    if extent is None or info.bounds is None or info.crs is None:
        return
    t = Transformer.from_crs(CRS.from_user_input(info.crs), layers.working_crs, always_xy=True)
    west, south, east, north = info.bounds  # VectorInfo.bounds: (minx, miny, maxx, maxy)
    try:
        b = t.transform_bounds(west, south, east, north, densify_pts=21)
    except Exception:  # pyproj: bounds that do not transform at all
        b = (np.inf,) * 4
    finite = np.isfinite(b).all()
    if not finite or b[2] < extent[0] or b[0] > extent[2] or b[3] < extent[1] or b[1] > extent[3]:
        lon = Transformer.from_crs(CRS.from_user_input(info.crs), "EPSG:4326", always_xy=True)
        w, s, e, n = lon.transform_bounds(west, south, east, north, densify_pts=21)
        raise CRSError(
            f"lies wholly outside the area the layers describe (parcels at longitude {w:.2f}"
            f" to {e:.2f}, latitude {s:.2f} to {n:.2f}; layers of {layers.config.municipality}"
            f" in {layers.working_crs.name}): are these the right layers, and is the parcel"
            " file's CRS right?",
            path=path,
            field="parcels",
        )


@dataclass(frozen=True)
class ScreenSummary:
    """What a screening run did: counts by outcome, first errors, time."""

    out: Path
    rows: int
    partitions: int
    resumed: int
    counts: dict[str, dict[str, int]]
    errors: tuple[tuple[int, str, str], ...]
    seconds: float

    def lines(self) -> list[str]:
        """The summary as text lines (printed by the command line)."""
        c = self.counts
        fmt = lambda d: ", ".join(f"{k} {v:,}" for k, v in sorted(d.items()))  # noqa: E731
        lines = [
            f"screened {self.rows:,} parcels in {self.seconds:.1f} s "
            f"({self.partitions} partitions, {self.resumed} resumed) -> {self.out}",
            f"  status: {fmt(c.get('status', {}))}",
            f"  jurisdiction: {fmt(c.get('jurisdiction', {}))}",
            f"  regulated: {fmt(c.get('regulated', {}))}",
            f"  category: {fmt(c.get('category', {}))}",
            "  parcels with floodplain {floodplain_sqft:,}, floodway {floodway_sqft:,}, "
            "wetland {wetland_sqft:,}".format(
                **{
                    "floodplain_sqft": 0,
                    "floodway_sqft": 0,
                    "wetland_sqft": 0,
                    **c.get("parcels_with", {}),
                }
            ),
        ]
        for r, pid, e in self.errors[:5]:
            lines.append(f"  error row {r} ({pid}): {e}")
        return lines


def run_screen(
    parcels: Path | str,
    layers_dir: Path | str,
    out: Path | str,
    *,
    assume: str | None = None,
    columns: Mapping[str, str] | None = None,
    layer: str | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    partition_size: int = PARTITION_SIZE,
    overwrite: bool = False,
    on_partition: Callable[[int, int], None] | None = None,
    index: Path | str | None = None,
    crs: str | None = None,
    csv_bom: bool = True,
) -> ScreenSummary:
    """Screen every parcel of a file against a municipality's layers and ordinance.

    Parameters
    ----------
    parcels : path
        Parcel polygons, any format of :mod:`georeview.load.vector` (with a CRS).
    layers_dir : path
        Folder with layers.toml.
    out : path
        Output ``.csv``, ``.gpkg``, ``.parquet``, ``.fgb``, ``.geojson`` or ``.shp``.
    assume : str, optional
        The assumed activity (:func:`parse_assume`).
    columns : mapping, optional
        Role -> field map (:func:`parse_columns`); default the Wisconsin statewide schema.
    layer : str, optional
        Layer of a multi-layer parcel file.
    workers : int
        More than 1 runs the partitions in local processes on Dask.
    scheduler : str, optional
        Address of a running Dask distributed scheduler.
    partition_size : int
        Rows per partition.
    overwrite : bool
        Replace an existing output.
    on_partition : callable, optional
        Called with ``(finished_partitions, total_partitions)`` after each partition is saved.
    index : path, optional
        Also write this results page (index.html: table and map of every parcel).
    crs : str, optional
        CRS of a CSV parcel file (``--crs``).
    csv_bom : bool
        Start a CSV output with a UTF-8 byte-order mark (for Excel).

    Returns
    -------
    ScreenSummary
    """
    from georeview.load import load_layers

    t0 = time.perf_counter()
    out = Path(out)
    if out.suffix.lower() not in OUTPUT_SUFFIXES:
        raise OutputError(
            f"unsupported output {out.suffix!r}; use {', '.join(OUTPUT_SUFFIXES)}", path=out
        )
    if out.exists() and not overwrite:
        raise OutputError("exists; pass --overwrite to replace it", path=out)
    if not Path(parcels).exists():
        raise DataSourceError("file not found", path=parcels, field="parcels")
    assumption = parse_assume(assume)
    cols = dict(columns or WISCONSIN_COLUMNS)
    source = Source(str(Path(parcels).resolve()), layer, crs)
    info = source.info()
    n_rows = info.features
    check_columns(cols, info.fields, path=parcels)
    layers = load_layers(Path(layers_dir))
    extent = layers_extent(layers)
    check_parcels_within(info, extent, layers, str(parcels))
    parts = partitions(n_rows, partition_size)
    options = {
        "assume": assumption.text,
        "columns": cols,
        "partition_size": partition_size,
        "crs": crs,
    }
    work = WorkFolder(out, run_key(source, layers, options), len(parts))
    todo = [p for p in parts if not work.done(p[0])]
    resumed = len(parts) - len(todo)
    if resumed:
        log.info("resuming: %d of %d partitions already done", resumed, len(parts))
    finished = resumed
    if on_partition and resumed:
        on_partition(finished, len(parts))
    if todo:
        ctx = replace(build_context(layers, assumption, cols), extent=extent)

        def save(i: int, frame: Any) -> None:
            nonlocal finished
            work.write(i, frame)
            finished += 1
            if on_partition:
                on_partition(finished, len(parts))

        if workers > 1 or scheduler:
            from georeview.pipeline._dask import run_partitions

            run_partitions(
                screen_slice, source, todo, ctx, save, workers=workers, scheduler=scheduler
            )
        else:
            for i, start, count in todo:
                save(i, screen_slice(source, start, count, ctx))
    stats = assemble(work, out, len(parts), csv_bom=csv_bom)
    if index is not None:
        write_screen_index(work, len(parts), Path(index), layers, title=f"Screening: {out.name}")
    work.remove()
    return ScreenSummary(
        out=out,
        rows=n_rows,
        partitions=len(parts),
        resumed=resumed,
        counts=stats["counts"],
        errors=tuple(stats["errors"]),
        seconds=time.perf_counter() - t0,
    )


#: Parcels beyond which no index.html is drawn (a browser page is for a village or a county).
INDEX_MAX_ROWS = 250_000
#: Columns of the screening's index.html table, in this order.
INDEX_COLUMNS = (
    "parcel_id",
    "status",
    "jurisdiction",
    "regulated",
    "category",
    "larger_site",
    "extraordinary",
    "area_sqft",
    "floodplain_sqft",
    "floodway_sqft",
    "wetland_sqft",
    "steep_slope_sqft",
    "citations",
    "error",
)


def write_screen_index(
    work: WorkFolder, n_parts: int, path: Path, layers: Any, *, title: str
) -> Path | None:
    """Write index.html over a finished screening: its table and a map of every parcel.

    Reads the finished partitions one at a time, keeping only the table columns and
    the geometry. Skipped, with a warning, past :data:`INDEX_MAX_ROWS` parcels.
    """
    import geopandas as gpd

    from georeview.report.index import write_index

    frames = []
    total = 0
    for i in range(n_parts):
        part = read_part(work.part(i))
        total += len(part)
        if total > INDEX_MAX_ROWS:
            log.warning(
                "index.html not written: more than %d parcels (open the output in a GIS)",
                INDEX_MAX_ROWS,
            )
            return None
        keep = [c for c in INDEX_COLUMNS if c in part.columns]
        frames.append(part[[*keep, part.geometry.name]])
    rows = gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), crs=frames[0].crs)
    return write_index(rows, path, title=title, working_crs=layers.working_crs)


# --------------------------------------------------------------------------- command line


__all__ = [
    "Assumption",
    "ScreenContext",
    "ScreenSummary",
    "build_context",
    "parse_assume",
    "parse_columns",
    "run_screen",
    "screen_frame",
]
