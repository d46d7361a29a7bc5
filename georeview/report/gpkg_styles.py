"""QGIS default styles for the review's layers.gpkg: the ``layer_styles`` table.

QGIS keeps a layer's style in its GeoPackage in a table ``layer_styles`` (the columns
below, as QGIS creates it when a style is saved "in the datasource database"); a row
with ``useAsDefault`` true is applied when the layer is added, so layers.gpkg opens in
QGIS drawn as map.html draws it. Each style is a QML document with a ``renderer-v2``
element (single symbol, or categories for the jurisdiction pieces), its colours and
line widths taken from :data:`georeview.report.map_styles.LAYERS` (the folium map's
table), never restated here. Symbol properties are written both as ``<Option>`` maps
(QGIS 3.26 and later) and as ``<prop>`` elements (what earlier QGIS 3 reads).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from typing import Any

from georeview.report.map_styles import LAYERS, PATTERNS, LayerStyle

__all__ = ["GPKG_STYLE_LAYERS", "STYLE_COLUMNS", "layer_qml", "styles_table"]

#: Columns of ``layer_styles`` in QGIS's order (besides its integer key ``id``).
STYLE_COLUMNS = (
    "f_table_catalog",
    "f_table_schema",
    "f_table_name",
    "f_geometry_column",
    "styleName",
    "styleQML",
    "styleSLD",
    "useAsDefault",
    "description",
    "owner",
    "ui",
    "update_time",
)

#: layers.gpkg layer -> the map layer whose style it takes (``jurisdiction``: one
#: category per piece, each drawn as the map draws that area).
GPKG_STYLE_LAYERS: dict[str, str] = {
    "site": "site",
    "disturbance": "disturbance",
    "steep_slopes": "steep_slopes",
    "downstream_paths": "downstream",
    "discharge_points": "discharge",
    "contours": "contours",
    "jurisdiction": "village",
}

#: Jurisdiction piece (the ``piece`` column of layers.gpkg) -> map layer drawn for it.
PIECE_STYLES = {
    "village": "village",
    "extraterritorial": "extraterritorial",
    "neighbour's extraterritorial": "ceded",
    "outside": None,  # outside every jurisdiction: outline only, grey
}

#: QGIS brush of each map hatching pattern (QgsSimpleFillSymbolLayer brush styles).
_BRUSH = {"diag": "b_diagonal", "anti": "f_diagonal", "cross": "diagonal_x"}
#: Millimetres per CSS pixel (96 per inch): folium's widths are pixels, QGIS's mm.
_MM_PER_PX = 25.4 / 96
#: Diameter of a discharge point, mm (the map's circle marker of radius 6 px).
_MARKER_MM = 12 * _MM_PER_PX
#: Grey of the outline of a piece outside every jurisdiction.
_OUTSIDE = LayerStyle("Outside", "#7f7f7f", "#7f7f7f", 0.0, 1.5, dash="2 4")


def _rgba(hex_colour: str, alpha: float = 1.0) -> str:
    """``#rrggbb`` as QGIS's ``r,g,b,a`` (alpha 0-255)."""
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"{r},{g},{b},{round(255 * alpha)}"


def _mm(px: float) -> str:
    return f"{px * _MM_PER_PX:.2f}"


def _props(layer: ET.Element, props: dict[str, str]) -> None:
    """Symbol-layer properties as an ``<Option type="Map">`` and as ``<prop>`` elements."""
    opts = ET.SubElement(layer, "Option", type="Map")
    for k, v in props.items():
        ET.SubElement(opts, "Option", name=k, value=v, type="QString")
    for k, v in props.items():
        ET.SubElement(layer, "prop", k=k, v=v)


def _dash(style: LayerStyle) -> dict[str, str]:
    if not style.dash:
        return {"use_custom_dash": "0"}
    return {
        "use_custom_dash": "1",
        "customdash": ";".join(style.dash.split()),
        "customdash_unit": "Pixel",
    }


def _fill(style: LayerStyle, pattern: str | None) -> dict[str, str]:
    """A SimpleFill: the map's fill and opacity, or its hatching in the stroke colour."""
    if pattern:
        brush, colour = _BRUSH[pattern], _rgba(style.stroke, 1.0)
    elif style.fill_opacity > 0:
        brush, colour = "solid", _rgba(style.fill, style.fill_opacity)
    else:
        brush, colour = "no", _rgba(style.fill, 0.0)
    return {
        "style": brush,
        "color": colour,
        "outline_color": _rgba(style.stroke),
        "outline_style": "dash" if style.dash else "solid",
        "outline_width": _mm(style.weight),
        "outline_width_unit": "MM",
        "joinstyle": "round",
    }


def _line(style: LayerStyle) -> dict[str, str]:
    return {
        "line_color": _rgba(style.stroke),
        "line_width": _mm(style.weight),
        "line_width_unit": "MM",
        "line_style": "solid",
        "capstyle": "round",
        "joinstyle": "round",
        **_dash(style),
    }


def _marker(style: LayerStyle) -> dict[str, str]:
    return {
        "name": "circle",
        "color": _rgba(style.fill, style.fill_opacity),
        "outline_color": _rgba(style.stroke),
        "outline_width": _mm(style.weight),
        "outline_width_unit": "MM",
        "size": f"{_MARKER_MM:.2f}",
        "size_unit": "MM",
    }


#: Geometry kind -> (QGIS symbol type, symbol-layer class, layerGeometryType code).
_KINDS = {
    "Point": ("marker", "SimpleMarker", "0"),
    "LineString": ("line", "SimpleLine", "1"),
    "MultiPolygon": ("fill", "SimpleFill", "2"),
}


def _symbol(parent: ET.Element, name: str, geom_type: str, style: LayerStyle, key: str) -> None:
    kind, cls, _ = _KINDS[geom_type]
    symbol = ET.SubElement(
        parent, "symbol", type=kind, name=name, alpha="1", clip_to_extent="1", force_rhr="0"
    )
    layer = ET.SubElement(symbol, "layer", {"class": cls, "enabled": "1", "locked": "0"})
    layer.set("pass", "0")
    if kind == "fill":
        props = _fill(style, PATTERNS.get(key))
    elif kind == "line":
        props = _line(style)
    else:
        props = _marker(style)
    _props(layer, props)


def layer_qml(layer: str, geom_type: str) -> str:
    """The QML document of one layers.gpkg layer (see :data:`GPKG_STYLE_LAYERS`).

    Parameters
    ----------
    layer : str
        Layer name in layers.gpkg.
    geom_type : str
        Its geometry type (``MultiPolygon``, ``LineString`` or ``Point``).
    """
    root = ET.Element("qgis", version="3.28.0", styleCategories="Symbology")
    if layer == "jurisdiction":
        renderer = ET.SubElement(
            root,
            "renderer-v2",
            type="categorizedSymbol",
            attr="piece",
            symbollevels="0",
            enableorderby="0",
            forceraster="0",
        )
        cats = ET.SubElement(renderer, "categories")
        symbols = ET.SubElement(renderer, "symbols")
        for i, (piece, key) in enumerate(PIECE_STYLES.items()):
            style = LAYERS[key] if key else _OUTSIDE
            ET.SubElement(
                cats, "category", value=piece, symbol=str(i), label=style.label, render="true"
            )
            _symbol(symbols, str(i), geom_type, style, key or "")
    else:
        key = GPKG_STYLE_LAYERS[layer]
        renderer = ET.SubElement(
            root,
            "renderer-v2",
            type="singleSymbol",
            symbollevels="0",
            enableorderby="0",
            forceraster="0",
        )
        symbols = ET.SubElement(renderer, "symbols")
        _symbol(symbols, "0", geom_type, LAYERS[key], key)
    ET.SubElement(root, "layerGeometryType").text = _KINDS[geom_type][2]
    ET.indent(root)
    return "<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>\n" + ET.tostring(
        root, encoding="unicode"
    )


def styles_table(layers: dict[str, str], geometry_column: str = "geom") -> Any:
    """The ``layer_styles`` rows: one default style per layer.

    Parameters
    ----------
    layers : dict
        Layer name -> geometry type, for the layers of :data:`GPKG_STYLE_LAYERS`.
    geometry_column : str
        The layers' geometry column (GDAL names it ``geom`` in a GeoPackage).
    """
    import pandas as pd

    names = [n for n in layers if n in GPKG_STYLE_LAYERS]
    now = datetime.now(UTC).replace(microsecond=0)
    key = {n: ("village" if n == "jurisdiction" else GPKG_STYLE_LAYERS[n]) for n in names}
    return pd.DataFrame(
        {
            "f_table_catalog": [""] * len(names),
            "f_table_schema": [""] * len(names),
            "f_table_name": names,
            "f_geometry_column": [geometry_column] * len(names),
            "styleName": names,
            "styleQML": [layer_qml(n, layers[n]) for n in names],
            "styleSLD": [""] * len(names),
            "useAsDefault": [True] * len(names),
            "description": [
                "georeview: "
                + ("Jurisdiction pieces" if n == "jurisdiction" else LAYERS[key[n]].label)
                for n in names
            ],
            "owner": [""] * len(names),
            "ui": [""] * len(names),
            "update_time": pd.to_datetime([now] * len(names), utc=True),
        },
        columns=list(STYLE_COLUMNS),
    )
