"""Web map stage: the reviewer's interactive map (``map.html``), readable offline.

This module assembles the folium map from the layers of :mod:`~georeview.report.map_data`
drawn with the styles of :mod:`~georeview.report.map_styles`, the popup text of
:mod:`~georeview.report.map_popups` and the inlined assets of
:mod:`~georeview.report.map_assets`, so the file opens and shows every data layer
with no network and can be e-mailed on its own.

Popups and tooltips are built in the browser from text nodes by
``georeview/static/georeview.js``. folium is imported only when a map is built, and
only its core: the legend, the assets, the fit and the measure and full-screen controls
are georeview's own elements (:mod:`~georeview.report.map_elements`), because importing
``folium.plugins`` compiles some 80 Jinja templates of plugins the map never uses.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import geopandas as gpd
import shapely

from georeview.report.map_assets import external_resources, safe_json
from georeview.report.map_data import (
    FLOOD_GROUPS,
    GROUP_NOTES,
    PRECISION,
    SIMPLIFY_M,
    contour_labels,
    display_geojson,
    display_values,
    feature_groups,
    map_frames,
)
from georeview.report.map_popups import layer_findings, layer_lines, map_title, popup_fields
from georeview.report.map_styles import (
    GROUP_PATTERNS,
    GROUP_STYLES,
    PATTERNS,
    LayerStyle,
    style_for,
)
from georeview.report.rule_reads import rule_facts

log = logging.getLogger(__name__)

#: The map opens on the site's bounding box grown by this share of its size on each side.
FIT_MARGIN = 0.35
#: Layers drawn with every vertex: the applicant's own geometry and the jurisdiction lines.
EXACT_LAYERS = frozenset({"site", "disturbance", "village", "extraterritorial", "ceded"})


# ---------------------------------------------------------------- the map
def view_bounds(review: Any, frames: dict[str, gpd.GeoDataFrame]) -> tuple[float, ...]:
    """The map's first view, (west, south, east, north) in degrees.

    The site's bounding box (with the point where its runoff reaches the receiving
    water, when there is one) grown by :data:`FIT_MARGIN` of its size on each side.
    """
    crs = review.layers.working_crs
    site = review.submission.site_geom
    if "receiving" in frames:
        site = shapely.union(site, frames["receiving"].to_crs(crs).geometry.union_all())
    x0, y0, x1, y1 = shapely.bounds(site)
    margin = FIT_MARGIN * max(x1 - x0, y1 - y0)
    view = shapely.box(x0 - margin, y0 - margin, x1 + margin, y1 + margin)
    return tuple(float(v) for v in gpd.GeoSeries([view], crs=crs).to_crs(4326).total_bounds)


def layer_data(
    key: str, gdf: gpd.GeoDataFrame, review: Any, spec: Any, simplify_m: float
) -> tuple[dict[str, Any], list[list[str]], bool]:
    """One layer's display GeoJSON, its popup fields and whether its features have groups.

    Groups (:data:`~georeview.report.map_styles.GROUP_STYLES`) are the floodplain's
    (floodway, 1 % annual chance, other zones) and the discharge points' (``_gr_group``
    of their frame): each drawn with its own symbol and legend row.
    """
    style = style_for(key)
    fields = popup_fields(gdf.drop(columns=["_gr_group"], errors="ignore"), style, spec)
    shown = display_values(gdf, [f[0] for f in fields])
    groups = feature_groups(key, gdf, spec)
    if groups is None and "_gr_group" in gdf.columns:
        # a layer whose frame says which group each feature is in (the discharge points)
        groups = gdf["_gr_group"].to_numpy(dtype=object)
    columns = [f[0] for f in fields]
    if groups is not None:
        shown["_gr_group"] = groups
        columns.append("_gr_group")
    crs = review.layers.working_crs
    data = display_geojson(
        shown.to_crs(crs) if shown.crs != crs else shown,
        columns,
        simplify_m=0.0 if key in EXACT_LAYERS else simplify_m,
    )
    return data, fields, groups is not None


def layer_info(
    key: str,
    review: Any,
    report: dict[str, Any],
    facts_by_rule: dict[str, set[str]],
    fields: list[list[str]],
    grouped: bool,
) -> dict[str, Any]:
    """What the browser shows in a layer's popups (``georeview.info[key]``)."""
    style = style_for(key)
    no_findings = f"No rule of {report['ordinance']['short_name']} reads this layer directly."
    info: dict[str, Any] = {
        "label": style.label,
        "lines": layer_lines(key, report, review.facts),
        "fields": fields,
        "findings": layer_findings(report, facts_by_rule, style),
        "no_findings": no_findings,
        "pattern": PATTERNS.get(key, ""),
    }
    if grouped and key == "floodplain":
        info["groups"] = {
            g: {
                "label": GROUP_STYLES[key][g].label,
                "findings": layer_findings(
                    report, facts_by_rule, replace(style, facts=prefixes, kinds=())
                ),
                "note": GROUP_NOTES.get(g, no_findings),
            }
            for g, prefixes in FLOOD_GROUPS.items()
        }
    elif grouped:
        # groups told apart by their symbol only: one popup text, each group's title
        info["groups"] = {
            g: {"label": s.label, "findings": info["findings"], "note": no_findings}
            for g, s in GROUP_STYLES.get(key, {}).items()
        }
    return info


def svg_style(key: str, style: LayerStyle, types: set[int]) -> dict[str, Any]:
    """Leaflet path options of a layer (``types``: the shapely type ids it holds)."""
    out: dict[str, Any] = {
        "color": style.stroke,
        "weight": style.weight,
        "fillColor": style.fill,
        "fillOpacity": style.fill_opacity,
        "opacity": 0.9,
    }
    if style.dash:
        out["dashArray"] = style.dash
    if types & {0, 4}:
        out["fill"] = True
    if key in PATTERNS:
        # An SVG pattern defined by georeview.patterns(): hatching, so that the
        # layer beneath an overlap stays readable.
        out["fillColor"] = f"url(#gr-hatch-{key})"
        out["fillOpacity"] = 1.0
    return out


def group_style(key: str, group: str, types: set[int]) -> dict[str, Any]:
    """Leaflet path options of one group of a grouped layer (:data:`GROUP_STYLES`)."""
    style = GROUP_STYLES[key][group]
    out = svg_style("", style, types)
    pattern = GROUP_PATTERNS.get((key, group))
    if pattern:
        out["fillColor"] = f"url(#gr-hatch-{key}-{group})"
        out["fillOpacity"] = 1.0
    return out


def layer_styles(
    key: str, style: LayerStyle, types: set[int], groups: list[str]
) -> dict[str, dict[str, Any]]:
    """Path options by group (``""``: the layer's own, for a feature of no group)."""
    out = {"": svg_style(key, style, types)}
    for g in groups:
        if g in GROUP_STYLES.get(key, {}):
            out[g] = group_style(key, g, types)
    return out


def legend_item(
    key: str, style: LayerStyle, types: set[int], pattern: str | None = None
) -> dict[str, Any]:
    """A layer's row of the legend (or a group's, with its style and hatching)."""
    return {
        "label": style.label,
        "stroke": style.stroke,
        "fill": style.fill,
        "line": style.line or types <= {1, 2, 5},
        "dash": style.dash or "",
        "pattern": PATTERNS.get(key, "") if pattern is None else pattern,
        "point": bool(types & {0, 4}),
        "opacity": max(style.fill_opacity, 0.2) if style.fill_opacity else 0.0,
    }


def legend_items(
    key: str, style: LayerStyle, types: set[int], groups: list[str]
) -> list[dict[str, Any]]:
    """A layer's legend rows: one per group present (in the table's order), else one."""
    table = GROUP_STYLES.get(key, {})
    present = [g for g in table if g in groups]
    if not present:
        return [legend_item(key, style, types)]
    return [legend_item(key, table[g], types, GROUP_PATTERNS.get((key, g), "")) for g in present]


def hatch_patterns() -> list[dict[str, str]]:
    """Every hatch pattern the styles name: the layers' and their groups'."""
    from georeview.report.map_styles import LAYERS

    out = [{"key": k, "kind": kind, "color": LAYERS[k].stroke} for k, kind in PATTERNS.items()]
    out += [
        {"key": f"{k}-{g}", "kind": kind, "color": GROUP_STYLES[k][g].stroke}
        for (k, g), kind in GROUP_PATTERNS.items()
    ]
    return out


def contour_label_points(gdf: gpd.GeoDataFrame, crs: Any) -> list[list[Any]]:
    """The contours' labels as ``[lat, lon, "646 ft"]`` (see :func:`contour_labels`)."""
    from georeview.report.reader import quantity

    labels = contour_labels(gdf, crs)
    if not labels:
        return []
    xs, ys, elev = zip(*labels, strict=True)
    lonlat = gpd.GeoSeries(shapely.points(xs, ys), crs=crs).to_crs(4326)
    return [
        [round(float(p.y), PRECISION), round(float(p.x), PRECISION), f"{quantity(e)} ft"]
        for p, e in zip(lonlat, elev, strict=True)
    ]


def _new_map(bounds: tuple[float, ...], base_tiles: bool) -> Any:
    """An empty folium map with no CDN assets, centred on ``bounds``."""
    import folium

    west, south, east, north = bounds
    # A valid first view (the site's centre) until georeview.fit sizes it to the site.
    fmap = folium.Map(
        location=[(south + north) / 2, (west + east) / 2],
        zoom_start=15,
        tiles=None,
        control_scale=True,
        zoom_snap=0.25,
    )
    fmap.default_js, fmap.default_css = [], []
    if base_tiles:
        folium.TileLayer(
            "OpenStreetMap",
            name="Base map: OpenStreetMap (needs network)",
            overlay=True,
            show=False,
        ).add_to(fmap)
    return fmap


def _add_controls(
    fmap: Any,
    bounds: tuple[float, ...],
    info: dict[str, Any],
    legend: list[dict[str, Any]],
    title: list[str],
) -> None:
    """Assets, title, layer control, measure, full-screen and location controls, legend, fit.

    On a narrow screen (a phone) the layer list and the legend start closed behind a
    button each (:class:`~georeview.report.map_elements.Responsive`).
    """
    import folium

    from georeview.report import map_elements as el

    west, south, east, north = bounds
    fmap.add_child(el.Assets(info, hatch_patterns()))
    fmap.add_child(el.Title(title))
    layers = folium.LayerControl(collapsed=False)
    layers.add_to(fmap)
    el.MeasureControl(
        position="topleft",
        primary_length_unit="feet",
        secondary_length_unit="miles",
        primary_area_unit="sqfeet",
        secondary_area_unit="acres",
    ).add_to(fmap)
    el.Fullscreen(
        position="topleft",
        title="Full Screen",
        title_cancel="Exit Full Screen",
        force_separate_button=False,
    ).add_to(fmap)
    fmap.add_child(el.Locate())
    fmap.add_child(el.Legend(legend))
    fmap.add_child(el.NorthArrow())
    fmap.add_child(el.Responsive(layers.get_name()))
    fmap.add_child(el.Fit([[south, west], [north, east]], (30, 30)))


def build_map(
    review: Any,
    report: dict[str, Any] | None = None,
    *,
    simplify_m: float = SIMPLIFY_M,
    base_tiles: bool = True,
) -> Any:
    """Build the reviewer's folium map for one review.

    Parameters
    ----------
    review : georeview.pipeline.result.Review
        The review (geometries in the working CRS).
    report : dict, optional
        ``review.to_dict()`` (popup text comes from it); computed when omitted.
    simplify_m : float
        Display simplification of the reference layers, metres (the site and the
        disturbance are never simplified).
    base_tiles : bool
        Offer an OpenStreetMap base layer (off by default; it needs the network).

    Returns
    -------
    folium.Map
        The map; ``map.get_root().render()`` is the complete, self-contained HTML.
    """
    import folium
    from folium.utilities import JsCode

    report = review.to_dict() if report is None else report
    frames = map_frames(review, report)
    facts_by_rule = rule_facts(review.ordinance)
    bounds = view_bounds(review, frames)
    fmap = _new_map(bounds, base_tiles)
    info: dict[str, Any] = {}
    legend: list[dict[str, Any]] = []
    for key, gdf in frames.items():
        style = style_for(key)
        spec = review.layers.spec(key) if hasattr(review.layers, "spec") else None
        data, fields, grouped = layer_data(key, gdf, review, spec, simplify_m)
        info[key] = layer_info(key, review, report, facts_by_rule, fields, grouped)
        if key == "contours":
            info[key]["labels"] = contour_label_points(gdf, review.layers.working_crs)
        types = set(shapely.get_type_id(gdf.geometry.to_numpy()).tolist())
        groups = sorted({str(f["properties"].get("_gr_group", "")) for f in data["features"]})
        styles = layer_styles(key, style, types, groups)
        folium.GeoJson(
            data,
            name=style.label,
            show=style.show,
            # each feature drawn with its group's style (a floodway apart from the
            # rest of the floodplain); folium writes one style per distinct value
            style_function=lambda f, s=styles: s.get(
                str(f["properties"].get("_gr_group", "")), s[""]
            ),
            marker=folium.CircleMarker(radius=5) if types & {0, 4} else None,
            on_each_feature=JsCode(
                f"function (feature, layer) {{ georeview.bind(layer, feature, {safe_json(key)}); }}"
            ),
        ).add_to(fmap)
        legend.extend(legend_items(key, style, types, groups))
    _add_controls(fmap, bounds, info, legend, map_title(report))
    return fmap


def render_map(fmap: Any) -> str:
    """Return the complete HTML of a map built by :func:`build_map`."""
    page = fmap.get_root().render()
    found = external_resources(page)
    if found:
        log.warning("map.html would load %d resources from the network: %s", len(found), found[:3])
    return page


def write_map(review: Any, out_html: Path, *, report: dict[str, Any] | None = None) -> Path:
    """Build the map of one review and write it (atomically) to ``out_html``."""
    from georeview.report.files import write_atomic

    return write_atomic(Path(out_html), render_map(build_map(review, report)))
