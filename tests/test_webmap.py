"""map.html and index.html without a browser: geometry for display, offline assets, popups.

Expected coordinates come from pyproj transforming hand-placed corners (EPSG:3071 to
EPSG:4326), compared to the 1e-6 degree the HTML keeps; simplification is checked on a
hand-worked square whose extra vertex lies a known distance off an edge.
"""

from __future__ import annotations

import json
import re

import geopandas as gpd
import numpy as np
import pytest
import shapely
from _web_helpers import make_review
from pyproj import Transformer

from georeview.report import (
    map_assets,
    map_data,
    map_popups,
    map_styles,
    rule_reads,
    webmap,
    write_reports,
)
from georeview.report.index import index_data, outcome, write_index


@pytest.fixture(scope="module")
def rev(tmp_path_factory):
    return make_review(tmp_path_factory.mktemp("webmap"))


@pytest.fixture(scope="module")
def map_html(rev):
    return webmap.render_map(webmap.build_map(rev))


def test_display_geojson_rounds_reprojected_corners():
    # A 100 m square in Wisconsin Transverse Mercator: each corner must equal pyproj's
    # EPSG:3071 -> EPSG:4326 transform rounded to 6 decimals (1e-6 degree, about 0.1 m).
    x0, y0 = 570_000.0, 290_000.0
    sq = shapely.box(x0, y0, x0 + 100, y0 + 100)
    fc = map_data.display_geojson(gpd.GeoDataFrame(geometry=[sq], crs=3071), simplify_m=0)
    ring = np.array(fc["features"][0]["geometry"]["coordinates"][0])
    t = Transformer.from_crs(3071, 4326, always_xy=True)
    lon, lat = t.transform(*np.array(sq.exterior.coords).T)
    assert np.abs(ring[:, 0] - lon).max() <= 5e-7
    assert np.abs(ring[:, 1] - lat).max() <= 5e-7
    assert all(len(repr(float(v)).split(".")[1]) <= 6 for v in ring.ravel())


@pytest.mark.parametrize(("tolerance_m", "vertices"), [(0.5, 5), (0.1, 6)])
def test_display_simplify_in_metres(tolerance_m, vertices):
    # Square 0..100 m with an extra vertex 0.3 m off the bottom edge: Douglas-Peucker
    # drops it at a 0.5 m tolerance and keeps it at 0.1 m (5 or 6 ring coordinates,
    # the ring closed).
    x0, y0 = 570_000.0, 290_000.0
    poly = shapely.Polygon(
        [(x0, y0), (x0 + 50, y0 - 0.3), (x0 + 100, y0), (x0 + 100, y0 + 100), (x0, y0 + 100)]
    )
    fc = map_data.display_geojson(
        gpd.GeoDataFrame(geometry=[poly], crs=3071), simplify_m=tolerance_m
    )
    assert len(fc["features"][0]["geometry"]["coordinates"][0]) == vertices


def test_display_simplify_never_empties_a_feature():
    tiny = shapely.box(570_000.0, 290_000.0, 570_000.2, 290_000.2)
    fc = map_data.display_geojson(gpd.GeoDataFrame(geometry=[tiny], crs=3071), simplify_m=5.0)
    assert fc["features"][0]["geometry"]["type"] == "Polygon"


def test_safe_json_cannot_close_a_script():
    text = map_assets.safe_json({"a": "</script><script>alert(1)</script> & <!--"})
    assert "<" not in text
    assert ">" not in text
    assert "&" not in text
    assert json.loads(text) == {"a": "</script><script>alert(1)</script> & <!--"}


def test_map_needs_no_network(map_html):
    assert map_assets.external_resources(map_html) == []
    # folium's CDN defaults are gone; the vendored Leaflet and plugins are inlined.
    for cdn in ("cdn.jsdelivr.net", "code.jquery.com", "cdnjs.cloudflare.com", "bootstrapcdn"):
        assert cdn not in map_html
    assert '"1.9.4"' in map_html  # L.version of the vendored Leaflet
    assert "L.Control.Measure" in map_html
    assert "L.control.fullscreen" in map_html
    # CSS images became data: URIs (nothing is looked up beside the file).
    assert not re.search(r"url\((?!\"?data:|#)", map_assets.vendored_css())


def test_external_resources_detects_cdn_links():
    page = '<script src="https://cdn.example/x.js"></script><link href="//cdn/y.css">'
    assert len(map_assets.external_resources(page)) == 2
    assert map_assets.external_resources('<a href="https://example.com">x</a>') == []


def test_every_layer_is_on_the_map(rev, map_html):
    expected = [
        "village",
        "extraterritorial",
        "ceded",
        "soils",
        "floodplain",
        "wetlands",
        "steep_slopes",
        "disturbance",
        "site",
        "contours",
        "hydrography",
        "downstream",
    ]
    # Areas first, the site on top of them, then the lines and points over every area.
    got = [k for k in map_data.map_frames(rev) if k not in ("discharge", "receiving")]
    assert got == expected
    for key in expected:
        assert json.dumps(map_styles.LAYERS[key].label)[1:-1] in map_html


def test_popups_carry_each_layers_findings(rev):
    report = rev.to_dict()
    by_rule = rule_reads.rule_facts(rev.ordinance)
    # The rules that read the wetland fact (Deerfield ch. 31) are the wetland popup's.
    wet_rules = {
        r
        for r, facts in by_rule.items()
        if any(map_popups.reads_layer(f, "wetland") for f in facts)
    }
    assert wet_rules, "Deerfield has a rule on wetlands in the disturbance"
    cites = {f["citation"] for f in report["findings"] if f["rule_id"] in wet_rules}
    wet = map_popups.layer_findings(report, by_rule, map_styles.LAYERS["wetlands"])
    assert wet
    assert {f["citation"] for f in wet} <= cites
    site = map_popups.layer_findings(report, by_rule, map_styles.LAYERS["site"])
    assert any(f["citation"].startswith("§ 31.03") for f in site)  # the reach finding
    ranks = [map_popups.STATUS_RANK[f["status"]] for f in site]
    assert ranks == sorted(ranks)  # failures first


def test_write_reports_embeds_the_map(rev, tmp_path):
    paths = write_reports(rev, tmp_path / "out")
    assert set(paths) == {"json", "map", "html", "gpkg"}
    report_html = paths["html"].read_text()
    assert "srcdoc=" in report_html
    assert "map.html" in report_html
    assert map_assets.external_resources(report_html) == []


@pytest.mark.parametrize(
    ("regulated", "category", "error", "expected"),
    [
        (True, "major", None, "major"),
        (True, "minor", "", "minor"),
        (True, None, None, "regulated"),
        (False, None, None, "not regulated"),
        ("false", None, None, "not regulated"),
        (None, None, None, "needs info"),
        (True, "major", "GeometryError: empty", "error"),
    ],
)
def test_outcome(regulated, category, error, expected):
    rows = gpd.GeoDataFrame(
        {"regulated": [regulated], "category": [category], "error": [error]}, geometry=[None]
    )
    assert outcome(rows).tolist() == [expected]


def test_index_keeps_error_rows_and_drops_unsafe_links():
    sq = shapely.box(570_000.0, 290_000.0, 570_100.0, 290_100.0)
    rows = gpd.GeoDataFrame(
        {
            "id": ["a", "b", "c"],
            "regulated": [True, None, False],
            "category": ["major", None, None],
            "error": [None, "DataSourceError: no geometry", None],
            "report": ["a/report.html", None, "javascript:alert(1)"],
        },
        geometry=[sq, None, sq],
        crs=3071,
    )
    data = index_data(rows, working_crs="EPSG:3071", link_column="report")
    assert [r[0] for r in data["rows"]] == ["major", "error", "not regulated"]
    assert [f["id"] for f in data["shapes"]["features"]] == [0, 2]
    assert data["links"] == ["a/report.html", None, None]
    assert data["counts"] == {"major": 1, "error": 1, "not regulated": 1}


def test_index_refuses_rows_without_crs(tmp_path):
    from georeview.errors import CRSError

    rows = gpd.GeoDataFrame({"id": [1]}, geometry=[shapely.box(0, 0, 1, 1)])
    with pytest.raises(CRSError):
        write_index(rows, tmp_path / "i.html", title="t", working_crs="EPSG:3071")


def test_index_html_is_offline(tmp_path):
    sq = shapely.box(570_000.0, 290_000.0, 570_100.0, 290_100.0)
    rows = gpd.GeoDataFrame({"id": ["a"], "regulated": [True]}, geometry=[sq], crs=3071)
    page = write_index(rows, tmp_path / "i.html", title="T", working_crs="EPSG:3071").read_text()
    assert map_assets.external_resources(page) == []
    assert '<script type="application/json" id="georeview-data">' in page
