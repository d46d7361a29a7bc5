"""Web map stage: the reviewer's interactive map (``map.html``), readable offline.

EPSG:4326 exists only here: every layer is reprojected from the working CRS for
display and for nothing else. The map is a folium map whose JavaScript and CSS
(Leaflet, leaflet-measure, leaflet.fullscreen; see ``georeview/static/README.md``)
are inlined from the package instead of loaded from CDNs, so the file opens and
shows every data layer with no network and can be e-mailed on its own.

Popups and tooltips are built in the browser from text nodes by
``georeview/static/georeview.js``; the popup text (findings with their
citations, measures) comes from the same report dict as report.json. Data is
embedded as JSON with ``<``, ``>`` and ``&`` escaped, so nothing a submission or
a reference layer contains is ever parsed as HTML.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import shapely

log = logging.getLogger(__name__)

#: Vendored assets, in load order: (folder under georeview/static, js files, css files).
VENDORED: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("leaflet", ("leaflet.js",), ("leaflet.css",)),
    ("leaflet-measure", ("leaflet-measure.min.js",), ("leaflet-measure.css",)),
    ("leaflet.fullscreen", ("Control.FullScreen.js",), ("Control.FullScreen.css",)),
    (".", ("georeview.js",), ("georeview.css",)),
)
#: Default display simplification of reference layers, metres in the working CRS.
SIMPLIFY_M = 0.5
#: Decimal places of longitude/latitude in the HTML (1e-6 degree is about 0.1 m).
PRECISION = 6
#: The map opens on the site's bounding box grown by this share of its size on each side.
FIT_MARGIN = 0.35
#: Most findings listed in one popup.
MAX_POPUP_FINDINGS = 14

_MIME = {".png": "image/png", ".svg": "image/svg+xml", ".gif": "image/gif"}
_CSS_URL = re.compile(r"url\(\s*['\"]?(?!data:|#|https?:)([^'\")]+)['\"]?\s*\)")


@dataclass(frozen=True)
class LayerStyle:
    """How one map layer is drawn and which findings its popup lists."""

    label: str
    stroke: str
    fill: str
    fill_opacity: float
    weight: float = 2.0
    #: Attribute columns shown in a feature's popup: (column, label).
    fields: tuple[tuple[str, str], ...] = ()
    #: Fact-name prefixes: findings of rules that read such a fact go in the popup.
    facts: tuple[str, ...] = ()
    #: Rule kinds whose findings always go in the popup.
    kinds: tuple[str, ...] = ()
    show: bool = True
    dash: str | None = None
    line: bool = False


#: Every layer the map knows, in drawing order (bottom first). Keys of
#: ``Review.map_layers`` not listed here are drawn with :data:`OTHER_STYLE`.
#: Colours are the Okabe-Ito colour-blind-safe palette (Okabe & Ito 2008, "Color
#: Universal Design"), one hue per layer a reviewer compares: extraterritorial area
#: reddish purple, disturbance orange, wetland bluish green, floodplain sky blue,
#: steep slopes vermillion; area layers that overlap others are hatched or outlined
#: in the browser (``pattern``) so the layer beneath stays readable.
LAYERS: dict[str, LayerStyle] = {
    "village": LayerStyle(
        "Village limits", "#332288", "#332288", 0.04, 2.5, kinds=("reach",), facts=("jurisdiction",)
    ),
    "extraterritorial": LayerStyle(
        "Extraterritorial area",
        "#CC79A7",
        "#CC79A7",
        0.15,
        2.0,
        kinds=("reach",),
        facts=("jurisdiction",),
        dash="6 4",
    ),
    "ceded": LayerStyle(
        "Neighbour's extraterritorial area (past the equidistant line)",
        "#7a5d00",
        "#F0E442",
        0.3,
        2.0,
        fields=(("neighbour", "Neighbour"),),
        kinds=("reach",),
        facts=("jurisdiction",),
        dash="2 4",
    ),
    "soils": LayerStyle(
        "Soils (SSURGO map units)",
        "#8c6d31",
        "#e7cb94",
        0.05,
        1.0,
        fields=(
            ("MUSYM", "Map unit"),
            ("muname", "Name"),
            ("hydgrpdcd", "Hydrologic group"),
            ("kffact", "K factor"),
        ),
        facts=("soil",),
        show=False,
    ),
    "floodplain": LayerStyle(
        "Floodplain and floodway (FEMA NFHL)",
        "#0072B2",
        "#56B4E9",
        0.35,
        1.5,
        fields=(
            ("FLD_ZONE", "Flood zone"),
            ("ZONE_SUBTY", "Zone subtype"),
            ("SFHA_TF", "Special flood hazard area"),
            ("STATIC_BFE", "Base flood elevation (ft)"),
        ),
        facts=("floodplain", "floodway"),
    ),
    "wetlands": LayerStyle(
        "Wetlands (WWI)",
        "#00664a",
        "#009E73",
        0.45,
        1.5,
        fields=(("WETCODE", "Wetland code"), ("WETCLASS", "Class"), ("WWI_ID", "WWI id")),
        facts=("wetland",),
    ),
    "steep_slopes": LayerStyle(
        "Slopes of 20 % or more",
        "#D55E00",
        "#D55E00",
        0.45,
        1.0,
        fields=(("slope_class", "Slope class"),),
        facts=("steep_slope", "max_slope"),
    ),
    "disturbance": LayerStyle(
        "Disturbed area", "#E69F00", "#E69F00", 0.3, 2.5, facts=("disturbed_",)
    ),
    "site": LayerStyle(
        "Site boundary",
        "#000000",
        "#ffffff",
        0.05,
        3.0,
        kinds=("reach", "trigger", "exemption", "classify"),
    ),
    "contours": LayerStyle(
        "Contours",
        "#8d8d8d",
        "#8d8d8d",
        0.0,
        1.0,
        fields=(("elev_ft", "Elevation (ft)"), ("elevation_ft", "Elevation (ft)")),
        facts=("site_map.contour_interval",),
        line=True,
    ),
    "hydrography": LayerStyle(
        "Surface waters (NHD)",
        "#0072B2",
        "#0072B2",
        0.6,
        2.5,
        fields=(("GNIS_NAME", "Name"), ("FTYPE_NAME", "Type"), ("FType", "FType")),
        facts=("downstream", "water", "streams", "lakes", "watercourses"),
    ),
    "downstream": LayerStyle(
        "Downstream flow path (1/4 mile, merged)",
        "#000000",
        "#000000",
        0.0,
        3.5,
        fields=(
            ("receiving_feature", "Receiving feature"),
            ("distance_ft", "Distance to it (ft)"),
            ("n_paths", "Flow paths joined"),
        ),
        facts=("downstream",),
        dash="8 4",
        line=True,
    ),
    "discharge": LayerStyle(
        "Discharge points (where runoff leaves the site)",
        "#000000",
        "#F0E442",
        0.95,
        1.5,
        fields=(
            ("contributing_area_sqft", "Contributing area (sq ft)"),
            ("reaches_water", "Reaches water within 1/4 mile"),
            ("distance_ft", "Distance to water (ft)"),
            ("receiving_feature", "Receiving feature"),
        ),
        facts=("downstream",),
    ),
    "receiving": LayerStyle(
        "Receiving water (where the trace reaches it)",
        "#000000",
        "#0072B2",
        0.95,
        2.0,
        fields=(("name", "Name"), ("distance_ft", "Distance downstream (ft)")),
        facts=("downstream",),
    ),
}
#: Style of a map layer the table above does not name.
OTHER_STYLE = LayerStyle("Other layer", "#7b3294", "#c2a5cf", 0.3, 2.0)
#: Aliases: map_layers keys that mean a layer above.
ALIASES = {
    "receiving_feature": "receiving",
    "downstream_path": "downstream",
    "steep": "steep_slopes",
}


# ---------------------------------------------------------------- vendored assets
def _static() -> Any:
    return resources.files("georeview") / "static"


def _read_css(folder: Any, name: str) -> str:
    """Read a CSS file and turn every relative ``url(...)`` into a data: URI."""
    text = (folder / name).read_text(encoding="utf-8")

    def data_uri(match: re.Match[str]) -> str:
        rel = match.group(1)
        ref = folder
        for part in rel.split("/"):
            ref = ref / part
        mime = _MIME.get(Path(rel).suffix.lower(), "application/octet-stream")
        data = base64.b64encode(ref.read_bytes()).decode("ascii")
        return f'url("data:{mime};base64,{data}")'

    return _CSS_URL.sub(data_uri, text)


def _read_js(folder: Any, name: str) -> str:
    text = (folder / name).read_text(encoding="utf-8")
    text = re.sub(r"^//# sourceMappingURL=.*$", "", text, flags=re.MULTILINE)
    # A script element ends at the first "</script"; none of the vendored files has one,
    # but make sure a future update cannot break out of the element.
    return text.replace("</script", "<\\/script")


@cache
def vendored_css() -> str:
    """All vendored CSS, images inlined as data: URIs (read once per process)."""
    static = _static()
    return "\n".join(
        _read_css(static / folder if folder != "." else static, css)
        for folder, _, csss in VENDORED
        for css in csss
    )


def _data_uri(ref: Any, mime: str = "image/png") -> str:
    return f"data:{mime};base64," + base64.b64encode(ref.read_bytes()).decode("ascii")


@cache
def vendored_js() -> str:
    """All vendored JavaScript, in load order (read once per process).

    Leaflet's default marker images are set as data: URIs (Leaflet would
    otherwise look for ``marker-icon.png`` beside the HTML file).
    """
    static = _static()
    images = static / "leaflet" / "images"
    icons = (
        'L.Icon.Default.imagePath = "";\n'
        "L.Icon.Default.mergeOptions({"
        f'iconUrl: "{_data_uri(images / "marker-icon.png")}", '
        f'iconRetinaUrl: "{_data_uri(images / "marker-icon-2x.png")}", '
        f'shadowUrl: "{_data_uri(images / "marker-shadow.png")}"}});'
    )
    scripts = [
        _read_js(static / folder if folder != "." else static, js)
        for folder, jss, _ in VENDORED
        for js in jss
    ]
    return "\n;\n".join([scripts[0], icons, *scripts[1:]])


def asset_tags() -> str:
    """``<style>`` and ``<script>`` elements with every vendored asset inlined."""
    return f"<style>\n{vendored_css()}\n</style>\n<script>\n{vendored_js()}\n</script>\n"


_EXTERNAL = re.compile(
    r"""<(?:script|img|iframe)\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?//"""
    r"""|<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?//|@import\s+(?:url\()?["']?(?:https?:)?//""",
    re.IGNORECASE,
)


def external_resources(page: str) -> list[str]:
    """Return the tags of ``page`` that would load something from the network."""
    return [m.group(0) for m in _EXTERNAL.finditer(page)]


# ---------------------------------------------------------------- data for the browser
def safe_json(value: Any) -> str:
    """JSON that is safe inside a ``<script>`` element (``<``, ``>``, ``&`` escaped)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


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
    # GEOS writes up to 17 significant digits; read them back rounded so that the page
    # carries ``precision`` decimals (json then prints the shortest repr).
    geometries = json.loads(
        "[" + ",".join(shapely.to_geojson(lonlat)) + "]",
        parse_float=lambda text: round(float(text), precision),
    )
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


# ---------------------------------------------------------------- popup text
def _condition_facts(cond: Any, out: set[str]) -> None:
    if cond is None:
        return
    if cond.fact:
        out.add(cond.fact)
    for c in (cond.all or ()) + (cond.any or ()):
        _condition_facts(c, out)
    _condition_facts(cond.not_, out)


def rule_facts(ordinance: Any) -> dict[str, set[str]]:
    """Return, for every rule id of ``ordinance``, the fact names the rule reads."""
    out: dict[str, set[str]] = {}
    for rule in ordinance.rules:
        facts: set[str] = set()
        _condition_facts(rule.when, facts)
        _condition_facts(rule.applies_when, facts)
        facts.update(f for f in (rule.measure, rule.fact) if f)
        out[rule.id] = facts
    return out


_STATUS_RANK = {"fail": 0, "needs_info": 1, "pass": 2, "determination": 2, "not_applicable": 3}


#: Site-map facts measured from a reference layer: ``site_map.near.wetlands`` reads the
#: wetlands layer (``site_map.shows.*`` is the applicant's word, not the layer).
_MEASURED_SITEMAP = ("site_map.near.", "site_map.on_site.", "site_map.feature_ok.")


def reads_layer(fact: str, prefix: str) -> bool:
    """Whether a fact named ``fact`` is read from the layer whose fact prefix is ``prefix``."""
    if fact.startswith(prefix):
        return True
    return any(fact.startswith(m + prefix) for m in _MEASURED_SITEMAP)


def layer_findings(
    report: Mapping[str, Any],
    facts_by_rule: Mapping[str, set[str]],
    style: LayerStyle,
    *,
    limit: int = MAX_POPUP_FINDINGS,
) -> list[dict[str, str]]:
    """Findings of the rules that read this layer's facts, non-passing first.

    A finding belongs to a layer when its rule reads a fact whose name starts
    with one of ``style.facts`` (whatever it concluded), or when its kind is one
    of ``style.kinds`` and it applies or fails or needs information. Findings
    that are not applicable are left out.
    """
    chosen = []
    for f in report.get("findings", []):
        reads = facts_by_rule.get(f["rule_id"], set())
        by_fact = any(reads_layer(name, p) for name in reads for p in style.facts)
        by_kind = f.get("kind") in style.kinds
        if f["status"] == "not_applicable":
            continue
        unresolved = f["status"] in ("fail", "needs_info")
        if by_fact or (by_kind and (f.get("applies") or unresolved)):
            chosen.append(f)
    chosen.sort(key=lambda f: _STATUS_RANK.get(f["status"], 9))
    from georeview.report.reader import determination_label, is_determination, plain

    out = []
    for f in chosen[:limit]:
        det = is_determination(f) and f["status"] == "pass"
        out.append(
            {
                "citation": str(f["citation"]),
                "status": "determination" if det else str(f["status"]),
                "label": determination_label(f).lower() if det else "",
                "message": plain(str(f.get("message") or f.get("title") or ""))[0],
            }
        )
    return out


def _fmt(value: Any, digits: int = 0, units: str = "") -> str:
    if value is None:
        return "not measured"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value:,.{digits}f}{(' ' + units) if units else ''}"
    return str(value)


def verdict(report: Mapping[str, Any]) -> str:
    """One line: is the site regulated, and in which category."""
    c = report["classification"]
    name = report["ordinance"]["short_name"]
    if c.get("regulated") is None:
        return f"{name}: regulation cannot be determined (information missing)"
    if not c["regulated"]:
        return f"{name}: not regulated"
    cat = f", {c['category']} land disturbing activity" if c.get("category") else ""
    return f"{name}: regulated{cat}"


def layer_lines(key: str, report: Mapping[str, Any], facts: Mapping[str, Any]) -> list[str]:
    """Measured values shown at the top of a layer's popup."""
    m = report.get("measures", {})
    j = report.get("jurisdiction", {})
    shares = ", ".join(
        f"{k} {100 * v:.1f} %" for k, v in (j.get("shares") or {}).items() if v and v > 0
    )
    d = m.get("downstream") or {}
    sub = report.get("submission", {})
    lines: dict[str, list[str]] = {
        "site": [
            f"{sub.get('name') or sub.get('folder')} (folder {sub.get('folder')})",
            verdict(report),
            f"Jurisdiction: {j.get('status')} ({shares})",
            f"Site {_fmt(m.get('site_area_sqft'), 0, 'sq ft')}; disturbed "
            f"{_fmt(m.get('disturbed_area_sqft'), 0, 'sq ft')} "
            f"({_fmt(m.get('disturbed_area_acres'), 2, 'acres')})",
        ],
        "disturbance": [
            f"Disturbed {_fmt(m.get('disturbed_area_sqft'), 0, 'sq ft')} "
            f"({_fmt(m.get('disturbed_area_acres'), 2, 'acres')})"
        ],
        "village": [f"Site jurisdiction: {j.get('status')} ({shares})"],
        "extraterritorial": [f"Site jurisdiction: {j.get('status')} ({shares})"],
        "ceded": [
            "Past the equidistant line this land is in the neighbour's extraterritorial area"
        ],
        "wetlands": [
            f"Wetland in the site {_fmt(m.get('wetland_area_sqft'), 0, 'sq ft')}; in the "
            f"disturbance {_fmt(m.get('wetland_in_disturbance_sqft'), 0, 'sq ft')}"
        ],
        "floodplain": [
            f"1 % annual chance floodplain in the site "
            f"{_fmt(m.get('floodplain_area_sqft'), 0, 'sq ft')}; in the disturbance "
            f"{_fmt(m.get('floodplain_in_disturbance_sqft'), 0, 'sq ft')}",
            f"Floodway in the site: {_fmt(m.get('floodway_present'))}",
        ],
        "steep_slopes": [
            f"Slopes of 20 % or more in the disturbance "
            f"{_fmt(m.get('steep_slope_area_sqft'), 0, 'sq ft')}; "
            f"max slope {_fmt(m.get('max_slope_pct'), 1, '%')}"
        ],
        "contours": [
            f"Contour interval used by the rules "
            f"{_fmt(facts.get('site_map.contour_interval_ft'), 1, 'ft')}"
        ],
        "downstream": [
            f"Reaches water within 1/4 mile: {_fmt(d.get('reaches_water_within_quarter_mile'))}",
            f"Receiving feature: {d.get('receiving_feature') or 'none found'}"
            + (f", {_fmt(d.get('distance_ft'), 0, 'ft')}" if d.get("distance_ft") else ""),
        ],
        "soils": [
            f"Soil loss (USLE) {_fmt(m.get('soil_loss_tons_per_acre_year'), 2, 'tons/acre/year')}"
        ],
    }
    lines["receiving"] = lines["downstream"]
    lines["hydrography"] = lines["downstream"][1:]
    return lines.get(key, [])


# ---------------------------------------------------------------- per-feature popups
#: Hatching of area layers that overlap others: layer key → pattern (angle and colour
#: come from the style); drawn by ``georeview.patterns`` in the browser.
PATTERNS = {"wetlands": "diag", "floodplain": "anti", "steep_slopes": "cross"}
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


# ---------------------------------------------------------------- the map
def _folium_classes() -> tuple[Any, Any, Any]:
    """Three small folium elements (defined lazily: folium is imported only here)."""
    from branca.element import MacroElement
    from jinja2 import Template

    class Legend(MacroElement):
        _template = Template(
            "{% macro script(this, kwargs) %}"
            "georeview.legend({{ this._parent.get_name() }}, {{ this.items }});"
            "georeview.printScale({{ this._parent.get_name() }});"
            "{% endmacro %}"
        )

        def __init__(self, items: list[dict[str, Any]]) -> None:
            super().__init__()
            self._name = "GeoreviewLegend"
            self.items = safe_json(items)

    class Assets(MacroElement):
        _template = Template(
            "{% macro header(this, kwargs) %}{{ this.tags }}"
            "<script>georeview.info = {{ this.info }};"
            "georeview.patterns({{ this.patterns }});</script>{% endmacro %}"
        )

        def __init__(self, info: dict[str, Any]) -> None:
            super().__init__()
            self._name = "GeoreviewAssets"
            self.tags = asset_tags()
            self.info = safe_json(info)
            self.patterns = safe_json(
                [
                    {"key": k, "kind": kind, "color": LAYERS[k].stroke}
                    for k, kind in PATTERNS.items()
                ]
            )

    class Fit(MacroElement):
        _template = Template(
            "{% macro script(this, kwargs) %}"
            "georeview.fit({{ this._parent.get_name() }}, {{ this.bounds }}, {{ this.padding }});"
            "{% endmacro %}"
        )

        def __init__(self, bounds: list[list[float]], padding: tuple[int, int]) -> None:
            super().__init__()
            self._name = "GeoreviewFit"
            self.bounds = safe_json(bounds)
            self.padding = safe_json(list(padding))

    return Legend, Assets, Fit


def _style_for(key: str) -> LayerStyle:
    key = ALIASES.get(key, key)
    if key in LAYERS:
        return LAYERS[key]
    return replace(OTHER_STYLE, label=key.replace("_", " ").capitalize())


def _popup_fields(gdf: gpd.GeoDataFrame, style: LayerStyle, spec: Any) -> list[list[str]]:
    """Attribute columns for popups: the style's, the layers.toml name field, else a few."""
    fields = [[c, label] for c, label in style.fields if c in gdf.columns]
    name_field = getattr(spec, "name_field", None)
    if name_field and name_field in gdf.columns and all(f[0] != name_field for f in fields):
        fields.insert(0, [name_field, "Name"])
    for attr, label in (
        ("musym_field", "Map unit"),
        ("hsg_field", "Hydrologic group"),
        ("kfactor_field", "K factor"),
        ("zone_field", "Flood zone"),
        ("subtype_field", "Zone subtype"),
    ):
        col = getattr(spec, attr, None)
        if col and col in gdf.columns and all(f[0] != col for f in fields):
            fields.append([col, label])
    if not fields:
        cols = [c for c in gdf.columns if c != gdf.geometry.name]
        fields = [[c, c] for c in cols[:6]]
    return fields


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
    review : georeview.pipeline.review.Review
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
    from folium import plugins
    from folium.utilities import JsCode

    report = review.to_dict() if report is None else report
    crs = review.layers.working_crs
    frames = map_frames(review, report)
    facts_by_rule = rule_facts(review.ordinance)
    legend_cls, assets_cls, fit_cls = _folium_classes()

    site = review.submission.site_geom
    if "receiving" in frames:
        # Open on the site and the point where its runoff reaches the receiving water.
        site = shapely.union(site, frames["receiving"].to_crs(crs).geometry.union_all())
    x0, y0, x1, y1 = shapely.bounds(site)
    margin = FIT_MARGIN * max(x1 - x0, y1 - y0)
    view = shapely.box(x0 - margin, y0 - margin, x1 + margin, y1 + margin)
    west, south, east, north = gpd.GeoSeries([view], crs=crs).to_crs(4326).total_bounds
    # A valid first view (the site's centre) until georeview.fit sizes it to the site.
    fmap = folium.Map(
        location=[(south + north) / 2, (west + east) / 2],
        zoom_start=15,
        tiles=None,
        control_scale=True,
        zoom_snap=0.25,
    )
    fmap.default_js, fmap.default_css = [], []
    info: dict[str, Any] = {}
    legend: list[dict[str, Any]] = []
    if base_tiles:
        folium.TileLayer(
            "OpenStreetMap",
            name="Base map: OpenStreetMap (needs network)",
            overlay=True,
            show=False,
        ).add_to(fmap)
    for key, gdf in frames.items():
        style = _style_for(key)
        spec = review.layers.spec(key) if hasattr(review.layers, "spec") else None
        fields = _popup_fields(gdf, style, spec)
        exact = key in ("site", "disturbance", "village", "extraterritorial", "ceded")
        shown = display_values(gdf, [f[0] for f in fields])
        groups = feature_groups(key, gdf, spec)
        columns = [f[0] for f in fields]
        if groups is not None:
            shown["_gr_group"] = groups
            columns.append("_gr_group")
        data = display_geojson(
            shown.to_crs(crs) if shown.crs != crs else shown,
            columns,
            simplify_m=0.0 if exact else simplify_m,
        )
        findings = layer_findings(report, facts_by_rule, style)
        no_findings = f"No rule of {report['ordinance']['short_name']} reads this layer directly."
        info[key] = {
            "label": style.label,
            "lines": layer_lines(key, report, review.facts),
            "fields": fields,
            "findings": findings,
            "no_findings": no_findings,
            "pattern": PATTERNS.get(key, ""),
        }
        if groups is not None:
            info[key]["groups"] = {
                g: {
                    "findings": layer_findings(
                        report, facts_by_rule, replace(style, facts=prefixes, kinds=())
                    ),
                    "note": GROUP_NOTES.get(g, no_findings),
                }
                for g, prefixes in FLOOD_GROUPS.items()
            }
        types = set(shapely.get_type_id(gdf.geometry.to_numpy()).tolist())
        line = style.line or types <= {1, 2, 5}
        svg_style = {
            "color": style.stroke,
            "weight": style.weight,
            "fillColor": style.fill,
            "fillOpacity": style.fill_opacity,
            "opacity": 0.9,
        }
        if style.dash:
            svg_style["dashArray"] = style.dash
        if types & {0, 4}:
            svg_style["fill"] = True
        if key in PATTERNS:
            # An SVG pattern defined by georeview.patterns(): hatching, so that the
            # layer beneath an overlap stays readable.
            svg_style["fillColor"] = f"url(#gr-hatch-{key})"
            svg_style["fillOpacity"] = 1.0
        folium.GeoJson(
            data,
            name=style.label,
            show=style.show,
            style_function=lambda _f, s=svg_style: s,
            marker=folium.CircleMarker(radius=5) if types & {0, 4} else None,
            on_each_feature=JsCode(
                f"function (feature, layer) {{ georeview.bind(layer, feature, {safe_json(key)}); }}"
            ),
        ).add_to(fmap)
        legend.append(
            {
                "label": style.label,
                "stroke": style.stroke,
                "fill": style.fill,
                "line": line,
                "dash": style.dash or "",
                "pattern": PATTERNS.get(key, ""),
                "point": bool(types & {0, 4}),
                "opacity": max(style.fill_opacity, 0.2),
            }
        )
    fmap.add_child(assets_cls(info))
    folium.LayerControl(collapsed=False).add_to(fmap)
    measure = plugins.MeasureControl(
        position="topleft",
        primary_length_unit="feet",
        secondary_length_unit="miles",
        primary_area_unit="sqfeet",
        secondary_area_unit="acres",
    )
    full = plugins.Fullscreen(position="topleft")
    for control in (measure, full):
        control.default_js, control.default_css = [], []
        control.add_to(fmap)
    fmap.add_child(legend_cls(legend))
    fmap.add_child(fit_cls([[south, west], [north, east]], (30, 30)))
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
    from georeview.report import write_atomic

    return write_atomic(Path(out_html), render_map(build_map(review, report)))
