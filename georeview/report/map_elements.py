"""georeview's own folium elements of the reviewer's map (``map.html``).

Besides the legend, the assets, the title, the north arrow, the location control,
the phone layout and the fit, the measure and full-screen controls
render the same script as ``folium.plugins.MeasureControl`` and ``Fullscreen``
(folium 0.19) without importing ``folium.plugins`` (which compiles some 80 Jinja
templates of plugins the map never uses); their JavaScript and CSS are the vendored
copies (:data:`~georeview.report.map_assets.VENDORED`).

This module imports folium (through branca): :mod:`~georeview.report.webmap` imports
it only when a map is built, so ``import georeview`` stays without folium.
"""

from __future__ import annotations

from typing import Any

from branca.element import MacroElement
from folium.template import Template

from georeview.report.map_assets import asset_tags, safe_json

__all__ = [
    "Assets",
    "Fit",
    "Fullscreen",
    "Legend",
    "Locate",
    "MeasureControl",
    "NorthArrow",
    "Responsive",
    "Title",
]


class Legend(MacroElement):
    """The legend control and the print scale bar (``georeview.legend``, ``printScale``)."""

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
    """The inlined Leaflet, georeview CSS and JavaScript, the popup text and hatch patterns."""

    _template = Template(
        "{% macro header(this, kwargs) %}{{ this.tags }}"
        "<script>georeview.info = {{ this.info }};"
        "georeview.patterns({{ this.patterns }});</script>{% endmacro %}"
    )

    def __init__(self, info: dict[str, Any], patterns: list[dict[str, str]]) -> None:
        super().__init__()
        self._name = "GeoreviewAssets"
        self.tags = asset_tags()
        self.info = safe_json(info)
        self.patterns = safe_json(patterns)


class Title(MacroElement):
    """The map's title at the top centre (``georeview.title``): the submission and ordinance.

    The text is the submission's own: it goes to the browser as JSON and is shown as
    text nodes, never parsed as HTML.
    """

    _template = Template(
        "{% macro script(this, kwargs) %}"
        "georeview.title({{ this._parent.get_name() }}, {{ this.lines }});"
        "{% endmacro %}"
    )

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self._name = "GeoreviewTitle"
        self.lines = safe_json(lines)


class NorthArrow(MacroElement):
    """A north arrow (``georeview.northArrow``): the map is always drawn north up."""

    _template = Template(
        "{% macro script(this, kwargs) %}"
        "georeview.northArrow({{ this._parent.get_name() }});"
        "{% endmacro %}"
    )

    def __init__(self) -> None:
        super().__init__()
        self._name = "GeoreviewNorthArrow"


class Locate(MacroElement):
    """A "show my location" button (``georeview.locate``): the browser's own position.

    Leaflet's ``map.locate`` asks the browser (``navigator.geolocation``), which asks the
    user; nothing is fetched and the position never leaves the page.
    """

    _template = Template(
        "{% macro script(this, kwargs) %}"
        "georeview.locate({{ this._parent.get_name() }});"
        "{% endmacro %}"
    )

    def __init__(self) -> None:
        super().__init__()
        self._name = "GeoreviewLocate"


class Responsive(MacroElement):
    """The phone layout (``georeview.responsive``): layer list and legend start closed.

    Parameters
    ----------
    layer_control : str
        The JavaScript name of folium's layer control (``LayerControl.get_name()``).
    """

    _template = Template(
        "{% macro script(this, kwargs) %}"
        "georeview.responsive({{ this._parent.get_name() }}, {{ this.layer_control }});"
        "{% endmacro %}"
    )

    def __init__(self, layer_control: str) -> None:
        super().__init__()
        self._name = "GeoreviewResponsive"
        self.layer_control = layer_control


class Fit(MacroElement):
    """Fit the first view to the site's bounds once the map has its size."""

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


class MeasureControl(MacroElement):
    """``folium.plugins.MeasureControl``'s script (distances in feet, areas in acres here)."""

    # The script of folium.plugins.MeasureControl, with its Leaflet >= 1.8 workaround
    # (https://github.com/ljagis/leaflet-measure/issues/171).
    _template = Template(
        """
        {% macro script(this, kwargs) %}
            var {{ this.get_name() }} = new L.Control.Measure(
                {{ this.options|tojavascript }});
            {{this._parent.get_name()}}.addControl({{this.get_name()}});

            // Workaround for using this plugin with Leaflet>=1.8.0
            // https://github.com/ljagis/leaflet-measure/issues/171
            L.Control.Measure.include({
                _setCaptureMarkerIcon: function () {
                    // disable autopan
                    this._captureMarker.options.autoPanOnFocus = false;
                    // default function
                    this._captureMarker.setIcon(
                        L.divIcon({
                            iconSize: this._map.getSize().multiplyBy(2)
                        })
                    );
                },
            });

        {% endmacro %}
        """
    )

    def __init__(self, **options: Any) -> None:
        super().__init__()
        self._name = "MeasureControl"
        self.options = options


class Fullscreen(MacroElement):
    """``folium.plugins.Fullscreen``'s script."""

    _template = Template(
        """
        {% macro script(this, kwargs) %}
            L.control.fullscreen(
                {{ this.options|tojavascript }}
            ).addTo({{this._parent.get_name()}});
        {% endmacro %}
        """
    )

    def __init__(self, **options: Any) -> None:
        super().__init__()
        self._name = "Fullscreen"
        self.options = options
