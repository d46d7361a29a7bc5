"""Map data: every layer of the map as display GeoJSON, and the layers derived for it.

EPSG:4326 exists only here: every layer is reprojected from the working CRS for
display and for nothing else. Besides the review's layers, the map draws the
municipality's roads, the downstream trace merged into channels, its discharge
points where each flow path crosses the site boundary, the point where it reaches
the receiving water and the elevation labels of the contours.
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
#: Roads are read this far (metres) around the site: the 1/4-mile trace and the view's
#: margin, so the roads a reviewer pans to near the site are drawn.
ROADS_MARGIN_M = 600.0
#: Contour labels: about one per this many metres along a contour, at least one per
#: contour line, none within :data:`CONTOUR_LABEL_GAP_M` of another (where contours
#: bunch up on a steep bank their labels would overlap); at most
#: :data:`MAX_CONTOUR_LABELS` on the map (a dense DEM's contours would bury the site
#: under numbers).
CONTOUR_LABEL_SPACING_M = 200.0
CONTOUR_LABEL_GAP_M = 30.0
MAX_CONTOUR_LABELS = 80
#: Within this distance (metres) of the site polygon a flow path's end counts as inside it.
INSIDE_TOL_M = 0.01
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


def merged_paths(
    paths: gpd.GeoDataFrame,
    band_width: float | None = None,
    traces: gpd.GeoDataFrame | None = None,
) -> gpd.GeoDataFrame:
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
    traces : GeoDataFrame, optional
        One row per traced path (:func:`trace_lines`) with its ``distance_ft`` and
        ``receiving_feature``. A drawn piece then gets the shortest distance of the
        paths that run along it (its band), so the pieces of the path that gives the
        report's ``distance_ft`` carry that very number, and a piece no path through
        reaches water carries none. Without it every piece gets the first value of
        ``paths`` (the report's, one row for the whole trace).
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
    if traces is not None and len(traces):
        attrs.update(_piece_distances(band, traces))
    else:
        for col in ("receiving_feature", "distance_ft"):
            if col in paths.columns and paths[col].notna().any():
                attrs[col] = [paths[col].dropna().iloc[0]] * len(kept)
    attrs["n_paths"] = count
    return gpd.GeoDataFrame(attrs, geometry=kept, crs=paths.crs)


def _piece_distances(band: list[Any], traces: gpd.GeoDataFrame) -> dict[str, list[Any]]:
    """Each drawn piece's shortest distance and its feature, over the paths along its band.

    A path runs along a piece when a stretch of it (not a junction point: more than
    a tenth of the shorter of the two, at most half a unit) lies on the band's lines.
    """
    lines = traces.geometry.to_numpy()
    dist = traces["distance_ft"].to_numpy(dtype=object)
    feat = traces["receiving_feature"].to_numpy(dtype=object)
    out_d: list[Any] = []
    out_f: list[Any] = []
    for members in band:
        near = shapely.buffer(members, 1e-3)
        shared = shapely.length(shapely.intersection(lines, near))
        need = np.minimum(0.1 * np.minimum(shapely.length(lines), shapely.length(members)), 0.5)
        along = [
            k for k in np.flatnonzero(shared > need) if dist[k] is not None and dist[k] == dist[k]
        ]
        best = min(along, key=lambda k: float(dist[k])) if along else None
        out_d.append(None if best is None else float(dist[best]))
        out_f.append("none within 1/4 mile" if best is None else feat[best])
    return {"receiving_feature": out_f, "distance_ft": out_d}


def trace_lines(
    downstream: Mapping[str, Any], paths: gpd.GeoDataFrame | None, crs: Any
) -> gpd.GeoDataFrame | None:
    """The traced flow paths one per discharge point, with that point's answer.

    The terrain stage's path layer is one MultiLineString of the shown paths, each
    starting at its discharge cell's centre (``measures.downstream.discharge_points``
    x, y, in the same order); a path of a single cell (a pit) has no line. Each line
    is matched to its point by that first vertex.

    Returns
    -------
    GeoDataFrame or None
        Columns ``point`` (index into the discharge points), ``distance_ft``,
        ``receiving_feature``; ``None`` when there is no path or no point.
    """
    pts = [p for p in downstream.get("discharge_points") or [] if p.get("x") is not None]
    if paths is None or not len(paths) or not pts:
        return None
    lines = shapely.get_parts(paths.to_crs(crs).geometry.to_numpy())
    lines = lines[shapely.get_type_id(lines) == 1]
    if not len(lines):
        return None
    starts = shapely.get_coordinates(shapely.get_point(lines, 0))
    xy = np.array([[p["x"], p["y"]] for p in pts], dtype=float)
    rows: list[tuple[int, int]] = []
    used: set[int] = set()
    for i, (x, y) in enumerate(xy):
        d = np.hypot(starts[:, 0] - x, starts[:, 1] - y)
        d[list(used)] = np.inf
        k = int(np.argmin(d))
        # the point and its line's first vertex are one coordinate pair reprojected the
        # same way: anything but (near) equality is another point's line
        if d[k] <= 1e-6 * max(1.0, abs(x), abs(y)):
            used.add(k)
            rows.append((i, k))
    if not rows:
        return None
    return gpd.GeoDataFrame(
        {
            "point": [i for i, _ in rows],
            "distance_ft": [pts[i].get("distance_ft") for i, _ in rows],
            "receiving_feature": [pts[i].get("receiving_feature") for i, _ in rows],
        },
        geometry=[lines[k] for _, k in rows],
        crs=crs,
    )


def exit_point(line: Any, site: Any, tol: float, reaches: bool) -> tuple[Any, str]:
    """Where a flow path last crosses the site boundary, and the point's group.

    The trace measures each path from where it last leaves the site polygon
    (:func:`georeview.measure.flow_ends.path_lengths`); this is that point, on the
    drawn line: the last point of the line in the site, on the boundary since the
    line ends outside it. A line that ends in the site (within ``tol``) met a water
    or wetland inside it (group ``inside``, at the line's end) or stopped in a low
    point (``ends``). A line wholly outside the site (a site smaller than a cell)
    leaves it at the site's point nearest the line's start.

    Returns
    -------
    tuple
        (shapely Point, group: ``boundary``, ``inside`` or ``ends``).
    """
    end = shapely.get_point(line, -1)
    if shapely.distance(end, site) <= tol:
        return end, "inside" if reaches else "ends"
    inner = shapely.get_parts(shapely.intersection(line, site))
    coords = shapely.get_coordinates(inner)
    if not len(coords):
        return shapely.get_point(shapely.shortest_line(site, shapely.get_point(line, 0)), 0), (
            "boundary"
        )
    along = shapely.line_locate_point(line, shapely.points(coords))
    return shapely.line_interpolate_point(line, float(np.max(along))), "boundary"


def boundary_discharge(
    downstream: Mapping[str, Any],
    traces: gpd.GeoDataFrame | None,
    site: Any,
    crs: Any,
) -> gpd.GeoDataFrame | None:
    """The discharge points where their flow paths cross the site boundary.

    ``measures.downstream.discharge_points`` are the centres of the discharge cells,
    inside the site by up to a cell or more; drawn there, "where runoff leaves the
    site" would be drawn inside it. Each point moves to its path's :func:`exit_point`
    (the point the path's ``distance_ft`` is measured from); a point without a line
    (a single-cell path: flow stops in the cell) stays at its cell, group ``ends``.
    Column ``_gr_group`` is the group (:data:`~georeview.report.map_styles.GROUP_STYLES`).
    """
    points = discharge_points(downstream, crs)
    if points is None:
        return None
    geoms = points.geometry.to_numpy().copy()
    groups = np.full(len(points), "ends", dtype=object)
    unit = float(crs.axis_info[0].unit_conversion_factor or 1.0) if crs.is_projected else 1.0
    if traces is not None:
        for i, line, dist in zip(
            traces["point"], traces.geometry, traces["distance_ft"], strict=True
        ):
            reaches = dist is not None and dist == dist
            geoms[i], groups[i] = exit_point(line, site, INSIDE_TOL_M / unit, reaches)
    out = points.set_geometry(list(geoms))
    out["_gr_group"] = groups
    # the point whose path gives the report's distance_ft, so the one number the site is
    # judged on can be found among the points' own
    best = downstream.get("distance_ft")
    dist = out["distance_ft"].to_numpy(dtype=object)
    hits = [i for i, v in enumerate(dist) if best is not None and v is not None and v == best]
    out["shortest"] = ["yes" if hits and i == hits[0] else "" for i in range(len(out))]
    return out


def contour_labels(contours: gpd.GeoDataFrame, crs: Any) -> list[tuple[float, float, float]]:
    """Sparse label points of the contours: ``(x, y, elevation ft)`` in ``crs``.

    About one every :data:`CONTOUR_LABEL_SPACING_M` along each line (at least one, at
    its middle), at most :data:`MAX_CONTOUR_LABELS`: when there would be more, only
    every fifth contour (the index contours) is labelled, then the spacing widens.
    """
    g = contours.to_crs(crs).reset_index(drop=True)
    col = next((c for c in ("elev_ft", "elevation_ft") if c in g.columns), None)
    if col is None or not len(g):
        return []
    unit = float(crs.axis_info[0].unit_conversion_factor or 1.0) if crs.is_projected else 1.0
    elev = g[col].to_numpy(dtype=float)
    lines = g.geometry.to_numpy()
    keep = np.isfinite(elev) & ~(shapely.is_missing(lines) | shapely.is_empty(lines))
    levels = np.unique(elev[keep])
    if len(levels) > 2:
        # the index contours: every fifth level of the interval the layer was drawn at
        step = 5 * float(np.min(np.diff(levels)))
        index = keep & np.isclose(np.mod(elev + step / 2, step), step / 2, atol=1e-6 * step)
    else:
        index = keep
    if not keep.any():
        return []
    spacing = CONTOUR_LABEL_SPACING_M / unit

    def counts(chosen: np.ndarray) -> np.ndarray:
        return np.maximum(1, np.floor(shapely.length(lines[chosen]) / spacing)).astype(int)

    chosen = keep
    n = counts(chosen)
    if n.sum() > MAX_CONTOUR_LABELS and index.any():
        chosen = index
        n = counts(chosen)
    while n.sum() > MAX_CONTOUR_LABELS and n.max() > 1:
        spacing *= 2
        n = counts(chosen)
    out: list[tuple[float, float, float]] = []
    gap = CONTOUR_LABEL_GAP_M / unit
    ks = np.flatnonzero(chosen)
    # the longest lines first: a short piece is the one to go unlabelled in a bunch
    for i in np.argsort(-shapely.length(lines[ks]), kind="stable"):
        k, count = ks[i], int(n[i])
        for j in range(count):
            pt = shapely.line_interpolate_point(lines[k], (j + 0.5) / count, normalized=True)
            x, y = float(pt.x), float(pt.y)
            if all(np.hypot(x - a, y - b) >= gap for a, b, _ in out):
                out.append((x, y, float(elev[k])))
    return out[:MAX_CONTOUR_LABELS]


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


def read_roads(review: Any) -> gpd.GeoDataFrame | None:
    """The municipality's roads within :data:`ROADS_MARGIN_M` of the site, if it has any.

    The review reads its roads only for the rules (whether one lies near the site)
    and does not hand them to the map, so the map reads them from the layers folder.
    """
    layers = review.layers
    if not (hasattr(layers, "has") and layers.has("roads")):
        return None
    crs = layers.working_crs
    unit = float(crs.axis_info[0].unit_conversion_factor or 1.0) if crs.is_projected else 1.0
    margin = ROADS_MARGIN_M / unit
    x0, y0, x1, y1 = (float(v) for v in shapely.bounds(review.submission.site_geom))
    roads = layers.read("roads", bbox=(x0 - margin, y0 - margin, x1 + margin, y1 + margin))
    return roads if roads is not None and len(roads) else None


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
    roads = read_roads(review)
    if roads is not None and "roads" not in frames:
        frames["roads"] = roads
    report = review.to_dict() if report is None else report
    report_d = (report.get("measures") or {}).get("downstream") or {}
    traces = trace_lines(report_d, frames.get("downstream"), crs)
    if "downstream" in frames:
        frames["downstream"] = merged_paths(frames["downstream"], band_width(report_d), traces)
    points = boundary_discharge(report_d, traces, review.submission.site_geom, crs)
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
