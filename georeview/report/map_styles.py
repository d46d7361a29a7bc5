"""Map styles: how each layer of the reviewer's map is drawn, in which order, with what hatching.

One table (:data:`LAYERS`) names every layer the map knows, its colours, the popup
attribute columns and the facts and rule kinds whose findings its popup lists; the
browser (``georeview/static/georeview.js``) and the legend read the same entries.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


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
    "roads": LayerStyle(
        "Roads",
        "#5a5a5a",
        "#5a5a5a",
        0.0,
        3.0,
        fields=(("FULLNAME", "Name"), ("MTFCC", "Road class (MTFCC)")),
        facts=("roads",),
        line=True,
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
            ("distance_ft", "Shortest flow path through here, from the site boundary (ft)"),
            ("n_paths", "Flow paths joined"),
        ),
        facts=("downstream",),
        dash="8 4",
        line=True,
    ),
    "discharge": LayerStyle(
        "Discharge points (on the site boundary, or at water in the site)",
        "#000000",
        "#F0E442",
        0.95,
        1.5,
        fields=(
            ("contributing_area_sqft", "Contributing area (sq ft)"),
            ("reaches_water", "Reaches water within 1/4 mile"),
            ("distance_ft", "This point's flow path to the water (ft)"),
            ("shortest", "The shortest, the site's distance"),
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
        fields=(("name", "Name"), ("distance_ft", "Flow path from the site boundary (ft)")),
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
#: Layers drawn with one symbol (and legend row) per group of their features: key →
#: group → style (label, colours, hatching). The groups are those of
#: :func:`georeview.report.map_data.feature_groups`; the layer keeps one entry in the
#: layer list, its popups say which group a feature is in. A floodway is the channel
#: and the land that carries the 1 % annual chance flood, where the rules ask more than
#: on the rest of the floodplain, so the reviewer must tell the two apart at a glance.
GROUP_STYLES: dict[str, dict[str, LayerStyle]] = {
    "floodplain": {
        "floodway": LayerStyle("Floodway (FEMA NFHL)", "#003C71", "#003C71", 0.35, 2.0),
        "sfha": LayerStyle(
            "1 % annual chance (100-year) floodplain (FEMA NFHL)", "#0072B2", "#56B4E9", 0.35, 1.5
        ),
        "other": LayerStyle(
            "0.2 % annual chance or minimal flood hazard zone (FEMA NFHL)",
            "#56B4E9",
            "#56B4E9",
            # faint, but a fill: an unfilled area cannot be clicked inside
            0.08,
            1.5,
            dash="4 3",
        ),
    },
    "discharge": {
        "boundary": LayerStyle(
            "Discharge points (where runoff crosses the site boundary)",
            "#000000",
            "#F0E442",
            0.95,
            1.5,
        ),
        "inside": LayerStyle(
            "Where runoff meets a water or wetland inside the site",
            "#000000",
            "#009E73",
            0.95,
            1.5,
        ),
        "ends": LayerStyle(
            "Where runoff ends inside the site (a low point)", "#000000", "#999999", 0.95, 1.5
        ),
    },
}
#: Hatching of area layers that overlap others: layer key → pattern (angle and colour
#: come from the style); drawn by ``georeview.patterns`` in the browser.
PATTERNS = {"wetlands": "diag", "floodplain": "anti", "steep_slopes": "cross"}
#: Hatching of the groups of :data:`GROUP_STYLES` (pattern id ``<key>-<group>``): the
#: floodway cross-hatched over the floodplain's single hatching; a group not named here
#: is outlined only.
GROUP_PATTERNS = {("floodplain", "floodway"): "cross", ("floodplain", "sfha"): "anti"}


def style_for(key: str) -> LayerStyle:
    """The style of a map layer key (aliases resolved; unknown keys get :data:`OTHER_STYLE`)."""
    key = ALIASES.get(key, key)
    if key in LAYERS:
        return LAYERS[key]
    return replace(OTHER_STYLE, label=key.replace("_", " ").capitalize())
