"""Map popups: which findings and measured values each layer's popup shows.

The text comes from the same report dict as report.json: a layer's popup lists
the findings of the rules that read its facts (non-passing first) and a few
measured values; a feature's popup adds its attribute columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import geopandas as gpd

from georeview.report.map_styles import LayerStyle
from georeview.report.numbers import number_text
from georeview.report.reader import determination_label, display_message, is_determination

#: Most findings listed in one popup.
MAX_POPUP_FINDINGS = 14


#: Order of findings in a popup: what needs the reviewer first.
STATUS_RANK = {"fail": 0, "needs_info": 1, "pass": 2, "determination": 2, "not_applicable": 3}


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
    chosen.sort(key=lambda f: STATUS_RANK.get(f["status"], 9))
    out = []
    for f in chosen[:limit]:
        det = is_determination(f) and f["status"] == "pass"
        out.append(
            {
                "citation": str(f["citation"]),
                "status": "determination" if det else str(f["status"]),
                "label": determination_label(f).lower() if det else "",
                # the words and numbers of report.html's row, not the judge's raw message
                "message": display_message(f, report),
            }
        )
    return out


def _fmt(value: Any, digits: int = 0, units: str = "") -> str:
    return number_text(value, digits, units=units, missing="not measured")


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
            # 0 ft is an answer (a water crossing the site), so only a missing distance is left out
            + (
                f", {_fmt(d.get('distance_ft'), 0, 'ft')}"
                " along the flow path from the site boundary"
                if d.get("distance_ft") is not None
                else ""
            ),
        ],
        "soils": [
            f"Soil loss (USLE) {_fmt(m.get('soil_loss_tons_per_acre_year'), 2, 'tons/acre/year')}"
        ],
    }
    pts = [q for q in d.get("discharge_points") or [] if q.get("distance_ft") is not None]
    if d.get("distance_ft") is not None and len(pts) > 1:
        # each point's own path has its own length; the site's number is the shortest
        lines["discharge"] = [
            f"The site's distance to {d.get('receiving_feature')} is the shortest of these"
            f" {len(pts)} flow paths: {_fmt(d.get('distance_ft'), 0, 'ft')} from the site"
            " boundary"
        ]
    elif d.get("distance_ft") is not None:
        lines["discharge"] = lines["downstream"][1:]
    lines["receiving"] = lines["downstream"]
    lines["hydrography"] = lines["downstream"][1:]
    return lines.get(key, [])


def map_title(report: Mapping[str, Any]) -> list[str]:
    """The map's title: the submission's name, then the ordinance it is reviewed against."""
    sub = report.get("submission", {})
    ordinance = report.get("ordinance", {})
    name = sub.get("name") or sub.get("folder") or "Submission"
    short, full = ordinance.get("short_name") or "", ordinance.get("title") or ""
    against = f"{short}: {full}" if short and full and short != full else short or full
    return [str(name), f"Erosion control review against {against}"]


def popup_fields(gdf: gpd.GeoDataFrame, style: LayerStyle, spec: Any) -> list[list[str]]:
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
