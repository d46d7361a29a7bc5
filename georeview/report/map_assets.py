"""Map assets: the vendored JavaScript and CSS inlined into map.html, and safe JSON.

Leaflet, leaflet-measure and leaflet.fullscreen (see ``georeview/static/README.md``)
are read from the package instead of loaded from CDNs, so the page opens with no
network; relative ``url(...)`` in CSS become data: URIs. Data is embedded as JSON
with ``<``, ``>`` and ``&`` escaped, so nothing from a submission is parsed as HTML.
"""

from __future__ import annotations

import base64
import json
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

#: Vendored assets, in load order: (folder under georeview/static, js files, css files).
VENDORED: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("leaflet", ("leaflet.js",), ("leaflet.css",)),
    ("leaflet-measure", ("leaflet-measure.min.js",), ("leaflet-measure.css",)),
    ("leaflet.fullscreen", ("Control.FullScreen.js",), ("Control.FullScreen.css",)),
    (".", ("georeview.js",), ("georeview.css",)),
)

_MIME = {".png": "image/png", ".svg": "image/svg+xml", ".gif": "image/gif"}
_CSS_URL = re.compile(r"url\(\s*['\"]?(?!data:|#|https?:)([^'\")]+)['\"]?\s*\)")


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
