"""Map data: every layer of the map as display GeoJSON, and the layers derived for it.

EPSG:4326 exists only here: every layer is reprojected from the working CRS for
display and for nothing else. Besides the review's layers, the map draws the
downstream trace merged into channels, its discharge points and the point where
it reaches the receiving water.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import geopandas as gpd
import numpy as np
import shapely

from georeview.report.map_styles import ALIASES, LAYERS

#: Default display simplification of reference layers, metres in the working CRS.
SIMPLIFY_M = 0.5
#: Decimal places of longitude/latitude in the HTML (1e-6 degree is about 0.1 m).
PRECISION = 6
#: Floodplain polygons by what they are (FEMA NFHL): the fact prefixes whose rules
#: read such a polygon. A 0.2 % annual chance or minimal-hazard zone X polygon is
#: read by no rule: the 100-year floodplain findings must not show on it.
FLOOD_GROUPS: dict[str, tuple[str, ...]] = {
    "floodway": ("floodplain", "floodway"),
    "sfha": ("floodplain",),
    "other": (),
}
GROUP_NOTES = {
    "other": "Outside the 1 % annual chance (100-year) floodplain: a 0.2 % annual chance or "
    "minimal flood hazard zone, which no rule of the ordinance reads.",
}


def display_geojson(
    gdf: gpd.GeoDataFrame,
    columns: Iterable[str] = (),
    *,
    simplify_m: float = SIMPLIFY_M,
    precision: int = PRECISION,
) -> dict[str, Any]:
    """Return ``gdf`` as a GeoJSON FeatureCollection in EPSG:4326 for display.

    Geometry is simplified by ``simplify_m`` (in the working CRS, before
    reprojecting; topology preserved) and coordinates are rounded to
    ``precision`` decimals. Property values become strings (missing → ``""``);
    features get sequential ``id`` values.

    Parameters
    ----------
    gdf : GeoDataFrame
        Features in a projected CRS (the working CRS).
    columns : iterable of str
        Columns to keep as properties (those absent from ``gdf`` are skipped).
    simplify_m : float
        Simplification tolerance, metres (0 keeps every vertex).
    precision : int
        Decimal places of longitude and latitude.
    """
    if gdf.crs is None:
        from georeview.errors import CRSError

        raise CRSError("a map layer has no CRS", field="map_layers")
    keep = ~(gdf.geometry.isna() | gdf.geometry.is_empty).to_numpy()
    g = gdf[keep]
    geoms = g.geometry.to_numpy()
    if simplify_m > 0 and gdf.crs.is_projected:
        unit = float(gdf.crs.axis_info[0].unit_conversion_factor or 1.0)
        geoms = shapely.simplify(geoms, simplify_m / unit, preserve_topology=True)
        geoms = np.where(shapely.is_empty(geoms), g.geometry.to_numpy(), geoms)
    lonlat = gpd.GeoSeries(geoms, crs=gdf.crs).to_crs(4326).to_numpy()
    cols = [c for c in dict.fromkeys(columns) if c in g.columns and c != g.geometry.name]
    props = g[cols].astype(object).where(g[cols].notna(), "").astype(str)
    records = json.loads(props.to_json(orient="records", force_ascii=False)) if cols else None
    # Round every coordinate in one numpy pass (not one Python round() per number, some
    # 50k for a review's map): GEOS then writes each rounded double in its shortest form,
    # so the page carries ``precision`` decimals.
    lonlat = shapely.transform(lonlat, lambda xy: np.round(xy, precision))
    geometries = json.loads("[" + ",".join(shapely.to_geojson(lonlat)) + "]")
    return {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "id": str(i),
                "properties": records[i] if records is not None else {},
                "geometry": geom,
            }
            for i, geom in enumerate(geometries)
        ],
    }


def feature_groups(key: str, gdf: gpd.GeoDataFrame, spec: Any) -> np.ndarray | None:
    """Which group of :data:`FLOOD_GROUPS` each floodplain polygon is in (else ``None``).

    Uses the same selection as the measures (:func:`georeview.measure.areas.sfha`,
    :func:`~georeview.measure.areas.floodway`), so a popup lists a finding only on
    the polygons its number was measured from.
    """
    if key != "floodplain":
        return None
    from georeview.measure.areas import floodway, sfha

    zone = getattr(spec, "zone_field", "FLD_ZONE")
    flag = getattr(spec, "sfha_field", "SFHA_TF")
    sub = getattr(spec, "subtype_field", "ZONE_SUBTY")
    frame = gdf.reset_index(drop=True)
    out = np.full(len(frame), "other", dtype=object)
    if any(c.lower() == zone.lower() for c in frame.columns) or any(
        c.lower() == flag.lower() for c in frame.columns
    ):
        out[sfha(frame, zone, flag).index.to_numpy()] = "sfha"
    out[floodway(frame, sub).index.to_numpy()] = "floodway"
    return out


def display_value(value: Any) -> str:
    """A popup value: nodata sentinels → "not given"; numbers at a sensible precision."""
    from georeview.report.reader import NOT_GIVEN, is_nodata, quantity

    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return NOT_GIVEN if is_nodata(value) else quantity(float(value))
    text = str(value)
    try:
        number = float(text)
    except ValueError:
        return text
    return NOT_GIVEN if is_nodata(number) else text


def display_values(gdf: gpd.GeoDataFrame, columns: Iterable[str]) -> gpd.GeoDataFrame:
    """A copy of ``gdf`` whose popup columns are display text (see :func:`display_value`)."""
    out = gdf.copy()
    for col in dict.fromkeys(columns):
        if col in out.columns and col != out.geometry.name:
            out[col] = out[col].map(display_value).astype(object)
    return out


def merged_paths(paths: gpd.GeoDataFrame, band_width: float | None = None) -> gpd.GeoDataFrame:
    """The downstream trace as merged flow paths: where paths join, one line.

    The trace is one flow path per discharge cell; drawn as such it is a comb of
    lines. The union nodes the paths where they meet and ``line_merge`` joins the
    pieces end to end, so each stretch of channel is one line. Paths that never
    meet but run side by side from neighbouring cells (sheet flow across a band
    of cells) are drawn as one: a piece lying, over 80 % of its length, within
    ``band_width`` of a longer piece of its band is absorbed by it, and the drawn
    piece counts the paths it stands for (``n_paths``).

    Parameters
    ----------
    paths : GeoDataFrame
        The traced flow paths (lines) in a projected CRS.
    band_width : float, optional
        Distance in CRS units (about 1.5 DEM cells) under which side-by-side
        paths are one band; ``None`` only merges paths that meet.
    """
    geoms = paths.geometry.to_numpy()
    geoms = geoms[~(shapely.is_missing(geoms) | shapely.is_empty(geoms))]
    if not len(geoms):
        return paths
    parts = shapely.get_parts(shapely.line_merge(shapely.union_all(geoms)))
    parts = parts[np.argsort(-shapely.length(parts), kind="stable")]
    kept: list[Any] = []
    count: list[int] = []
    band: list[Any] = []  # every piece of each kept piece's band (kept or absorbed)
    for piece in parts:  # a few dozen pieces, one per discharge cell at most
        owner = None
        if band_width:
            for k, members in enumerate(band):
                near = shapely.intersection(piece, shapely.buffer(members, band_width))
                if shapely.length(near) >= 0.8 * shapely.length(piece):
                    owner = k
                    break
        if owner is None:
            kept.append(piece)
            count.append(1)
            band.append(piece)
        else:
            count[owner] += 1
            band[owner] = shapely.union(band[owner], piece)
    attrs: dict[str, Any] = {}
    for col in ("receiving_feature", "distance_ft"):
        if col in paths.columns and paths[col].notna().any():
            attrs[col] = [paths[col].dropna().iloc[0]] * len(kept)
    attrs["n_paths"] = count
    return gpd.GeoDataFrame(attrs, geometry=kept, crs=paths.crs)


def band_width(downstream: Mapping[str, Any]) -> float | None:
    """1.5 times the spacing of the discharge points (DEM cell centres), CRS units."""
    pts = [p for p in downstream.get("discharge_points") or [] if p.get("x") is not None]
    if len(pts) < 2:
        return None
    xy = np.array([[p["x"], p["y"]] for p in pts], dtype=float)
    d = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
    d[d == 0] = np.inf
    spacing = float(np.min(d))
    return 1.5 * spacing if np.isfinite(spacing) else None


def discharge_points(downstream: Mapping[str, Any], crs: Any) -> gpd.GeoDataFrame | None:
    """The trace's discharge points (``measures.downstream.discharge_points``) as points."""
    pts = [p for p in downstream.get("discharge_points") or [] if p.get("x") is not None]
    if not pts:
        return None
    cols = ("contributing_area_sqft", "reaches_water", "distance_ft", "receiving_feature")
    return gpd.GeoDataFrame(
        {c: [p.get(c) for p in pts] for c in cols},
        geometry=shapely.points([p["x"] for p in pts], [p["y"] for p in pts]),
        crs=crs,
    )


def receiving_mark(
    downstream: Mapping[str, Any], frames: Mapping[str, gpd.GeoDataFrame], crs: Any
) -> gpd.GeoDataFrame | None:
    """A point where the trace reaches its receiving water, labelled with the distance.

    The point is the one of the receiving water's layer (wetland or stream named
    like the trace's ``receiving_feature``) nearest the merged flow path, or the
    water nearest the site when no path was drawn.
    """
    name = downstream.get("receiving_feature")
    if not name or not downstream.get("reaches_water_within_quarter_mile"):
        return None
    candidates = []
    for key in ("wetlands", "hydrography"):
        gdf = frames.get(key)
        if gdf is None or not len(gdf):
            continue
        text = gdf.drop(columns=gdf.geometry.name).astype(str)
        hit = np.zeros(len(gdf), dtype=bool)
        for col in text.columns:
            # An attribute value (a WWI id, a GNIS name) that the trace's name contains;
            # values of 3 characters or fewer (flags, codes) prove nothing.
            vals = text[col].to_numpy(dtype=str)
            hit |= (np.char.find(str(name), vals) >= 0) & (np.char.str_len(vals) > 3)
        candidates.extend(gdf.to_crs(crs).geometry.to_numpy()[hit].tolist())
    if not candidates:
        return None
    water = shapely.union_all(candidates)
    path = frames.get("downstream")
    ref = (
        shapely.union_all(path.to_crs(crs).geometry.to_numpy())
        if path is not None and len(path)
        else shapely.union_all(frames["site"].to_crs(crs).geometry.to_numpy())
        if "site" in frames
        else None
    )
    if ref is None:
        return None
    point = shapely.get_point(shapely.shortest_line(ref, water), 1)
    return gpd.GeoDataFrame(
        {"name": [str(name)], "distance_ft": [downstream.get("distance_ft")]},
        geometry=[point],
        crs=crs,
    )


def map_frames(review: Any, report: Mapping[str, Any] | None = None) -> dict[str, gpd.GeoDataFrame]:
    """Every layer of the map as a GeoDataFrame in the working CRS, in drawing order.

    Besides the review's layers: the downstream trace merged (:func:`merged_paths`),
    its discharge points and the point where it reaches the receiving water.
    """
    crs = review.layers.working_crs
    frames: dict[str, gpd.GeoDataFrame] = {}
    j = review.jurisdictions
    if j is not None:
        frames["village"] = gpd.GeoDataFrame(
            {"name": [j.village.name]}, geometry=[j.village.geometry], crs=crs
        )
        if j.extraterritorial is not None and not shapely.is_empty(j.extraterritorial):
            frames["extraterritorial"] = gpd.GeoDataFrame(
                {"name": [f"{j.village.name} extraterritorial area"]},
                geometry=[j.extraterritorial],
                crs=crs,
            )
        if j.ceded:
            frames["ceded"] = gpd.GeoDataFrame(
                {"neighbour": list(j.ceded)}, geometry=list(j.ceded.values()), crs=crs
            )
    for key, gdf in (review.map_layers or {}).items():
        if gdf is not None and len(gdf):
            frames[ALIASES.get(key, key)] = gdf
    report = review.to_dict() if report is None else report
    report_d = (report.get("measures") or {}).get("downstream") or {}
    if "downstream" in frames:
        frames["downstream"] = merged_paths(frames["downstream"], band_width(report_d))
    points = discharge_points(report_d, crs)
    if points is not None and "discharge" not in frames:
        frames["discharge"] = points
    mark = receiving_mark(report_d, frames, crs)
    if mark is not None and "receiving" not in frames:
        frames["receiving"] = mark
    frames["disturbance"] = review.submission.disturbance
    frames["site"] = review.submission.site
    order = {k: i for i, k in enumerate(LAYERS)}
    first_top = order["disturbance"]
    return dict(sorted(frames.items(), key=lambda kv: order.get(kv[0], first_top - 0.5)))
