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
    SIMPLIFY_M,
    display_geojson,
    display_values,
    feature_groups,
    map_frames,
)
from georeview.report.map_popups import layer_findings, layer_lines, popup_fields
from georeview.report.map_styles import PATTERNS, LayerStyle, style_for
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
    """One layer's display GeoJSON, its popup fields and whether it has flood groups."""
    style = style_for(key)
    fields = popup_fields(gdf, style, spec)
    shown = display_values(gdf, [f[0] for f in fields])
    groups = feature_groups(key, gdf, spec)
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
    if grouped:
        info["groups"] = {
            g: {
                "findings": layer_findings(
                    report, facts_by_rule, replace(style, facts=prefixes, kinds=())
                ),
                "note": GROUP_NOTES.get(g, no_findings),
            }
            for g, prefixes in FLOOD_GROUPS.items()
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


def legend_item(key: str, style: LayerStyle, types: set[int]) -> dict[str, Any]:
    """A layer's row of the legend."""
    return {
        "label": style.label,
        "stroke": style.stroke,
        "fill": style.fill,
        "line": style.line or types <= {1, 2, 5},
        "dash": style.dash or "",
        "pattern": PATTERNS.get(key, ""),
        "point": bool(types & {0, 4}),
        "opacity": max(style.fill_opacity, 0.2),
    }


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
    fmap: Any, bounds: tuple[float, ...], info: dict[str, Any], legend: list[dict[str, Any]]
) -> None:
    """Assets, layer control, measure and full-screen controls, legend and fit."""
    import folium

    from georeview.report import map_elements as el

    west, south, east, north = bounds
    fmap.add_child(el.Assets(info))
    folium.LayerControl(collapsed=False).add_to(fmap)
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
    fmap.add_child(el.Legend(legend))
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
        types = set(shapely.get_type_id(gdf.geometry.to_numpy()).tolist())
        path_style = svg_style(key, style, types)
        folium.GeoJson(
            data,
            name=style.label,
            show=style.show,
            style_function=lambda _f, s=path_style: s,
            marker=folium.CircleMarker(radius=5) if types & {0, 4} else None,
            on_each_feature=JsCode(
                f"function (feature, layer) {{ georeview.bind(layer, feature, {safe_json(key)}); }}"
            ),
        ).add_to(fmap)
        legend.append(legend_item(key, style, types))
    _add_controls(fmap, bounds, info, legend)
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
