"""Web map stage: an interactive folium map for reviewers.

EPSG:4326 exists only here: every layer is reprojected from the working CRS for
display and for nothing else. Popups are built from the same report dict as
report.json, and every string is HTML-escaped before it enters a popup.
"""

from __future__ import annotations

import html
from typing import Any

import geopandas as gpd
import shapely

#: Display style per layer: (label, stroke colour, fill colour, fill opacity).
STYLES: dict[str, tuple[str, str, str, float]] = {
    "village": ("Village limits", "#6a3d9a", "#cab2d6", 0.10),
    "extraterritorial": ("Extraterritorial area", "#ff7f00", "#fdbf6f", 0.15),
    "ceded": (
        "Neighbour's extraterritorial area (past the equidistant line)",
        "#b15928",
        "#ffff99",
        0.2,
    ),
    "floodplain": ("Floodplain (FEMA NFHL)", "#1f78b4", "#a6cee3", 0.35),
    "wetlands": ("Wetlands (WWI)", "#33a02c", "#b2df8a", 0.45),
    "hydrography": ("Surface waters (NHD)", "#08519c", "#4292c6", 0.6),
    "soils": ("Soils (SSURGO)", "#8c6d31", "#e7cb94", 0.05),
    "contours": ("Contours", "#969696", "#969696", 0.0),
    "steep_slopes": ("Slopes of 20 % or more", "#e31a1c", "#fb9a99", 0.55),
    "downstream": ("Downstream flow path (1/4 mile)", "#00bcd4", "#00bcd4", 0.0),
    "disturbance": ("Disturbed area", "#d95f02", "#fdae6b", 0.35),
    "site": ("Site boundary", "#000000", "#ffffff", 0.05),
}


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _popup_table(row: dict[str, Any], limit: int = 12) -> str:
    cells = "".join(
        f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in list(row.items())[:limit]
    )
    return f"<table>{cells}</table>"


def site_popup(report: dict[str, Any]) -> str:
    """HTML for the site's popup: classification and every non-passing finding."""
    c = report["classification"]
    verdict = (
        "cannot be determined"
        if c["regulated"] is None
        else ("regulated" if c["regulated"] else "not regulated")
    )
    head = (
        f"<b>{_esc(report['submission'].get('name') or report['submission']['folder'])}</b><br>"
        f"{_esc(report['ordinance']['short_name'])}: {_esc(verdict)}"
        + (f", {_esc(c['category'])}" if c.get("category") else "")
        + f"<br>Jurisdiction: {_esc(report['jurisdiction']['status'])}"
    )
    rows = [
        f"<li><b>{_esc(f['citation'])}</b> [{_esc(f['status'])}] {_esc(f['message'])}</li>"
        for f in report["findings"]
        if f["status"] in ("fail", "needs_info")
        or (f["kind"] in ("reach", "trigger") and f["applies"])
    ]
    return head + "<ul class='findings'>" + "".join(rows[:30]) + "</ul>"


def _add_gdf(
    fmap: Any,
    gdf: gpd.GeoDataFrame,
    key: str,
    *,
    popup_fields: list[str] | None = None,
    popup_html: str | None = None,
    show: bool = True,
) -> None:
    import folium

    label, stroke, fill, opacity = STYLES[key]
    group = folium.FeatureGroup(name=label, show=show)
    g = gdf.to_crs(4326)
    cols = [c for c in (popup_fields or []) if c in g.columns]
    for i, geom in enumerate(g.geometry.values):
        if geom is None or shapely.is_empty(geom):
            continue
        if popup_html is not None:
            content = popup_html
        else:
            row = {c: g.iloc[i][c] for c in cols}
            content = f"<b>{_esc(label)}</b>" + _popup_table(row)
        folium.GeoJson(
            shapely.to_geojson(geom),
            style_function=lambda _f, s=stroke, fc=fill, o=opacity: {
                "color": s,
                "weight": 2,
                "fillColor": fc,
                "fillOpacity": o,
            },
            popup=folium.Popup(content, max_width=420),
            tooltip=_esc(label),
        ).add_to(group)
    group.add_to(fmap)


def legend_html() -> str:
    """A fixed legend listing every layer style."""
    items = "".join(
        f"<div><span style='display:inline-block;width:14px;height:10px;"
        f"background:{fill};border:2px solid {stroke};margin-right:6px'></span>{_esc(label)}</div>"
        for label, stroke, fill, _ in STYLES.values()
    )
    return (
        "<div id='georeview-legend' style='position:fixed;bottom:24px;left:12px;z-index:9999;"
        "background:#fff;padding:8px 10px;border:1px solid #999;border-radius:6px;"
        "font:12px sans-serif;max-width:280px'><b>Legend</b>" + items + "</div>"
    )


def build_map(review: Any, report: dict[str, Any]) -> Any:
    """Build the reviewer's folium map for one review.

    Parameters
    ----------
    review : georeview.review.Review
        The review (geometries in the working CRS).
    report : dict
        ``review.to_dict()`` (the text of popups comes from it).
    """
    import folium
    from folium import plugins

    crs = review.layers.working_crs
    site = gpd.GeoDataFrame(geometry=[review.submission.site_geom], crs=crs)
    bounds = site.to_crs(4326).total_bounds
    fmap = folium.Map(tiles=None, control_scale=True, prefer_canvas=False)
    folium.TileLayer("OpenStreetMap", name="Base map (needs network)", show=False).add_to(fmap)
    j = review.jurisdictions
    if j is not None:
        _add_gdf(
            fmap,
            gpd.GeoDataFrame({"name": [j.village.name]}, geometry=[j.village.geometry], crs=crs),
            "village",
            popup_fields=["name"],
        )
        _add_gdf(
            fmap,
            gpd.GeoDataFrame(
                {"name": [f"{j.village.name} extraterritorial area"]},
                geometry=[j.extraterritorial],
                crs=crs,
            ),
            "extraterritorial",
            popup_fields=["name"],
        )
        if j.ceded:
            _add_gdf(
                fmap,
                gpd.GeoDataFrame(
                    {"neighbour": list(j.ceded)}, geometry=list(j.ceded.values()), crs=crs
                ),
                "ceded",
                popup_fields=["neighbour"],
            )
    fields = {
        "floodplain": ["FLD_ZONE", "ZONE_SUBTY", "SFHA_TF", "STATIC_BFE", "SOURCE"],
        "wetlands": ["WETCODE", "WETCLASS", "WWI_ID", "SOURCE"],
        "hydrography": ["GNIS_NAME", "FType", "FCode", "SOURCE"],
        "soils": ["MUSYM", "muname", "hydgrpdcd", "kffact", "SOURCE"],
        "contours": ["elev_ft"],
        "steep_slopes": ["slope_class"],
        "downstream": ["receiving_feature", "distance_ft"],
    }
    for key in (
        "soils",
        "floodplain",
        "wetlands",
        "hydrography",
        "contours",
        "steep_slopes",
        "downstream",
    ):
        gdf = review.map_layers.get(key)
        if gdf is not None and len(gdf):
            _add_gdf(fmap, gdf, key, popup_fields=fields.get(key), show=key != "soils")
    _add_gdf(
        fmap,
        review.submission.disturbance,
        "disturbance",
        popup_html=f"<b>Disturbed area</b><br>{report['measures']['disturbed_area_sqft']:,.0f}"
        " sq ft",
    )
    _add_gdf(fmap, site, "site", popup_html=site_popup(report))
    folium.LayerControl(collapsed=False).add_to(fmap)
    plugins.MeasureControl(primary_length_unit="feet", primary_area_unit="sqfeet").add_to(fmap)
    plugins.Fullscreen().add_to(fmap)
    fmap.get_root().html.add_child(folium.Element(legend_html()))
    fmap.fit_bounds([[bounds[1], bounds[0]], [bounds[3], bounds[2]]])
    return fmap
