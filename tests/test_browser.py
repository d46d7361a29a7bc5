"""map.html, report.html and index.html in a real headless browser (Debian chromium).

Pages are opened from file:// with no network: every layer must still be drawn.
Screenshots go to pytest's tmp folder (never committed).
"""

from __future__ import annotations

import html

import geopandas as gpd
import numpy as np
import pytest
from _build import CAMBRIDGE_PARCELS
from _web_helpers import CHROMIUM, PageWatch, make_review

from georeview.report import map_data, map_styles, write_reports
from georeview.report.index import write_index

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium not installed"),
]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    rev = make_review(tmp)
    write_reports(rev, tmp / "out")
    return tmp / "out", rev


@pytest.fixture
def page(browser):
    p = browser.new_page(viewport={"width": 1200, "height": 800})
    yield p
    p.close()


def test_map_loads_offline_with_every_layer(page, out, tmp_path):
    folder, rev = out
    watch = PageWatch(page)
    page.goto((folder / "map.html").as_uri())
    page.wait_for_selector(".leaflet-control-layers-overlays")
    assert watch.errors == []
    assert watch.network() == []
    labels = [
        t.strip() for t in page.locator(".leaflet-control-layers-overlays label").all_inner_texts()
    ]
    expected = [map_styles.LAYERS[k].label for k in map_data.map_frames(rev)]
    assert [x for x in labels if x in expected] == expected
    # Each data layer that is shown drew at least one SVG path.
    assert page.locator("path.leaflet-interactive").count() >= len(expected) - 1  # soils off
    assert page.locator("#georeview-legend").inner_text().count("\n") >= len(expected)
    assert page.locator(".leaflet-control-measure").count() == 1
    assert page.locator(".leaflet-control-zoom-fullscreen").count() == 1
    page.screenshot(path=str(tmp_path / "map.png"))
    assert (tmp_path / "map.png").stat().st_size > 10_000


def test_clicking_the_site_opens_its_popup_with_a_citation(page, out):
    folder, _ = out
    watch = PageWatch(page)
    page.goto((folder / "map.html").as_uri())
    box = page.locator(".leaflet-container").bounding_box()
    # The map is fitted on the site; its centre is the site's centre (site drawn on top).
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    popup = page.locator(".leaflet-popup-content")
    popup.wait_for()
    # The test's downstream path starts at the site's centre and is drawn above the
    # site: the popup is the path's, and lists the site (and the rest) under it.
    site_label = map_styles.LAYERS["site"].label
    others = popup.locator("details.gr-other > summary")
    if not popup.inner_text().startswith(site_label):
        others.filter(has_text=site_label).click()
    text = popup.inner_text()
    assert site_label in text
    assert "§ 31.03(1)" in text  # the reach finding of Deerfield ch. 31
    assert "regulated, minor" in text
    assert "passes" not in text.split(site_label, 1)[1].split("Also here")[0]
    assert watch.errors == []


def test_measure_control_measures_in_feet(page, out):
    folder, _ = out
    watch = PageWatch(page)
    page.goto((folder / "map.html").as_uri())
    page.locator(".leaflet-control-measure").hover()
    page.locator(".leaflet-control-measure .js-start").click()
    page.mouse.click(300, 300)
    page.mouse.click(600, 400)
    page.locator(".leaflet-control-measure .js-finish").first.click()
    assert "Feet" in page.locator(".leaflet-control-measure .js-results").inner_text()
    assert watch.errors == []


def test_report_summary_states_the_classification(page, out, tmp_path):
    folder, rev = out
    watch = PageWatch(page)
    page.goto((folder / "report.html").as_uri())
    summary = page.locator("#classification").inner_text()
    assert "Regulated by Deerfield ch. 31" in summary
    assert rev.judgement.category.upper() in summary
    frame = page.frame_locator("iframe.map")
    frame.locator(".leaflet-control-layers-overlays label").first.wait_for()
    assert frame.locator(".leaflet-control-layers-overlays label").count() >= 12
    assert watch.errors == []
    assert watch.network() == []
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    page.pdf(path=str(tmp_path / "report.pdf"))
    assert (tmp_path / "report.pdf").read_bytes()[:5] == b"%PDF-"


def test_index_with_every_cambridge_parcel(page, tmp_path):
    parcels = gpd.read_file(CAMBRIDGE_PARCELS)
    n = len(parcels)
    outcomes = np.array(["major", "minor", "not regulated", "needs info"])[np.arange(n) % 4]
    rows = gpd.GeoDataFrame(
        {"id": parcels["ML"].astype(str), "outcome": outcomes, "area_sqft": np.arange(n) * 1.5},
        geometry=parcels.geometry,
        crs=parcels.crs,
    )
    path = write_index(rows, tmp_path / "index.html", title="Cambridge", working_crs="EPSG:26986")
    watch = PageWatch(page)
    page.goto(path.as_uri())
    page.wait_for_selector("#results tbody tr")
    assert watch.errors == []
    assert page.locator("#shown").inner_text().endswith(f"of {n} rows shown")
    # One Cambridge parcel has an empty geometry: it is listed but not drawn.
    drawn = int((~(parcels.geometry.isna() | parcels.geometry.is_empty)).sum())
    assert drawn == n - 1
    assert page.evaluate("window.georeviewIndex.layer.getLayers().length") == drawn
    # Sort by area, descending: the first row is the largest value.
    header = page.locator("#results thead th", has_text="area_sqft")
    header.click()
    header.click()
    first = page.locator("#results tbody tr").first.locator("td").nth(2).inner_text()
    assert first == f"{(n - 1) * 1.5:g}"
    page.locator("#outcome-filter").select_option("major")
    assert page.locator("#shown").inner_text().endswith(f"of {(n + 3) // 4} rows shown")
    page.locator("#results tbody tr").first.click()
    assert "major" in page.locator(".leaflet-popup-content").inner_text()
    page.screenshot(path=str(tmp_path / "index.png"))


def test_map_laid_out_late_still_fits_the_site(page, out):
    # The report embeds the map in an iframe; a map whose container has no size when
    # its script runs must wait for one, not compute NaN coordinates (a flaky
    # "Invalid LatLng object: (NaN, NaN)" seen under load before georeview.fit).
    folder, _ = out
    watch = PageWatch(page)
    doc = html.escape((folder / "map.html").read_text(encoding="utf-8"), quote=True)
    page.set_content(
        '<div id="w" style="display:none">'
        f'<iframe style="width:640px;height:420px" srcdoc="{doc}"></iframe></div>'
    )
    page.wait_for_timeout(500)
    page.evaluate("document.getElementById('w').style.display = 'block'")
    frame = page.frames[1]
    frame.wait_for_function(
        "() => Object.keys(window).some(k => k.startsWith('map_') && window[k].getZoom() > 10)"
    )
    assert watch.errors == []
