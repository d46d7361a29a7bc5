"""Hostile text from a submission is shown as text in every HTML output, never run.

``<script>alert(1)</script>`` and ``"><img src=x onerror=alert(1)>`` go into the
submission name, applicant, description, the site file name, the submission folder
name and attribute values of every reference and terrain layer; the pages are opened
in Debian chromium, and no dialog may open and no injected element may exist.
"""

from __future__ import annotations

import geopandas as gpd
import pytest
import shapely
from _web_helpers import CHROMIUM, EVIL, XSS, PageWatch, make_review

from georeview.report import write_reports
from georeview.report.index import write_index

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium not installed"),
]
#: A folder name cannot hold "/", so it carries the attribute-breaking payload.
EVIL_FOLDER = "sub" + XSS[1]

INJECTED = """() => ({
  img: document.querySelectorAll('img[src="x"], img[src=x]').length,
  onerror: document.querySelectorAll('[onerror]').length,
  script: Array.from(document.scripts).filter(s => s.text.includes('<script>alert(1)')).length,
})"""


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("xss")
    rev = make_review(tmp, evil=True, folder_name=EVIL_FOLDER)
    assert rev.submission.folder.name == EVIL_FOLDER
    paths = write_reports(rev, tmp / "out")
    sq = shapely.box(570_000.0, 290_000.0, 570_100.0, 290_100.0)
    rows = gpd.GeoDataFrame(
        {"id": [EVIL], "status": [EVIL], "regulated": [True], "error": [EVIL], EVIL: [EVIL]},
        geometry=[sq],
        crs=3071,
    )
    paths["index"] = write_index(rows, tmp / "out" / "index.html", title=EVIL, working_crs=3071)
    return paths


def _open(browser, path):
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    watch = PageWatch(page)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, watch


def _assert_clean(page, watch):
    page.wait_for_timeout(200)
    assert watch.dialogs == []
    assert page.evaluate(INJECTED) == {"img": 0, "onerror": 0, "script": 0}
    for frame in page.frames:
        assert frame.evaluate(INJECTED) == {"img": 0, "onerror": 0, "script": 0}


@pytest.mark.parametrize("name", ["html", "map", "index"])
def test_payload_is_escaped_in_the_raw_html(outputs, name):
    text = outputs[name].read_text()
    for payload in XSS:
        assert payload not in text


def test_map_popups_show_the_payload_as_text(browser, outputs):
    page, watch = _open(browser, outputs["map"])
    box = page.locator(".leaflet-container").bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    popup = page.locator(".leaflet-popup-content")
    popup.wait_for()
    assert EVIL in popup.inner_text()  # the site name, shown literally
    # Open every feature's popup through Leaflet: each must render its text as text.
    n = page.evaluate(
        """() => { let n = 0; const map = Object.values(window).find(v => v instanceof L.Map);
        map.eachLayer(l => {
          if (l.feature && l.getPopup && l.getPopup()) { l.openPopup(); n++; } });
        return n; }"""
    )
    assert n >= 12
    tooltips = page.evaluate(
        """() => { const map = Object.values(window).find(v => v instanceof L.Map);
        let shown = []; map.eachLayer(l => {
          if (l.feature && l.getTooltip && l.getTooltip()) {
            l.openTooltip(); shown.push(l.getTooltip().getElement().textContent); } });
        return shown; }"""
    )
    assert tooltips
    _assert_clean(page, watch)
    page.close()


def test_layer_attribute_values_are_text_in_popups(browser, outputs):
    page, watch = _open(browser, outputs["map"])
    texts = page.evaluate(
        """() => { const map = Object.values(window).find(v => v instanceof L.Map);
        const out = [];
        map.eachLayer(l => { if (l.feature && l.getPopup && l.getPopup()) {
          l.openPopup(); out.push(l.getPopup().getElement().textContent); } });
        return out; }"""
    )
    with_payload = [t for t in texts if EVIL in t]
    # Wetlands, waters, soils, slopes and the downstream path carry it in an attribute;
    # the site and disturbance popups carry it in the submission's name.
    assert len(with_payload) >= 5
    _assert_clean(page, watch)
    page.close()


def test_report_shows_the_payload_as_text(browser, outputs):
    page, watch = _open(browser, outputs["html"])
    page.frame_locator("iframe.map").locator(".leaflet-control-layers").wait_for()
    assert EVIL in page.locator("h1").inner_text()
    assert EVIL in page.locator("#description").inner_text()
    assert EVIL_FOLDER in page.locator("header").inner_text()
    assert f"site{XSS[1]}.geojson" in page.locator("#submission + dl").inner_text()
    _assert_clean(page, watch)
    page.close()


def test_index_shows_the_payload_as_text(browser, outputs):
    page, watch = _open(browser, outputs["index"])
    assert page.title() == EVIL
    assert EVIL in page.locator("h1").inner_text()
    page.locator("#results tbody tr").first.click()
    assert EVIL in page.locator(".leaflet-popup-content").inner_text()
    assert EVIL in page.locator("#results thead").inner_text()
    _assert_clean(page, watch)
    page.close()
