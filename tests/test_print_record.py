"""report.html as a record that files (issue 24 item 4), printed in Debian's chromium.

Every sample's report is printed to Letter PDF. Each page carries the review's name,
the case number and "Page k of n" (CSS ``@page`` margin boxes, read back from the
PDF's text); no element runs past the printable width (8.5 in less two 11 mm
margins: 733 CSS px); the print carries the sign-off block and the static site
exhibit in place of the interactive map, at the scale it states. The exhibit's scale
is checked by hand: its frame is :data:`~georeview.report.exhibit.FRAME_IN` inches on
paper and its map extent, in the working CRS's metres, must be that many inches times
the stated feet per inch.
"""

from __future__ import annotations

import io
import re
import unicodedata
from pathlib import Path

import pytest
import shapely
from _web_helpers import CHROMIUM

from georeview.report import css_string, render_html, write_reports
from georeview.report.exhibit import FIGURE_IN, FRAME_IN, contour_interval_for, exhibit_scale
from georeview.units import M_PER_FT

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium not installed"),
]

REPO = Path(__file__).resolve().parents[1]
SAMPLES = tuple(
    sorted(p.name for p in (REPO / "sample_sites").iterdir() if (p / "submission.toml").exists())
)
#: Letter's width less the report's 11 mm side margins, CSS px (96 px to the inch).
PRINTABLE_PX = round((8.5 - 2 * 11 / 25.4) * 96)
#: Pages a sample's print may take: the longest (larger sites, subdivisions, a full
#: plan with every declared item) fill seven.
MAX_PAGES = 7
CASE = "DF-2026-0042"

OVERFLOW_JS = """(limit) => {
  const bad = [];
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && r.right > limit + 1) {
      bad.push(e.tagName + '.' + e.className + ' ' + Math.round(r.right));
    }
  }
  return bad;
}"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    from georeview.pipeline.review import review

    base = tmp_path_factory.mktemp("print")
    out = {}
    for name in SAMPLES:
        rev = review(REPO / "sample_sites" / name)
        record = {"case_number": CASE, "reviewer": "A. Reviewer, Village Engineer"}
        out[name] = (rev, write_reports(rev, base / name, record=record))
    return out


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_prints_as_a_record(browser, reports, name, tmp_path):
    from pypdf import PdfReader

    rev, paths = reports[name]
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    try:
        page.goto(paths["html"].as_uri())
        pdf = page.pdf(format="Letter")
        (tmp_path / f"{name}.pdf").write_bytes(pdf)
        page.emulate_media(media="print")
        page.set_viewport_size({"width": PRINTABLE_PX, "height": 1000})
        overflow = page.evaluate(OVERFLOW_JS, PRINTABLE_PX)
        signoff = page.locator("#signoff")
        assert signoff.is_visible()
        assert "A. Reviewer, Village Engineer" in signoff.inner_text()
        assert "Signature" in signoff.inner_text()
        # the interactive map is screen-only; the exhibit prints in its place
        assert not page.locator("iframe.map").is_visible()
        exhibit = page.locator("#exhibit img")
        assert exhibit.is_visible()
        box = exhibit.bounding_box()
        assert box is not None
        assert box["width"] == pytest.approx(FIGURE_IN[0] * 96, abs=0.5)  # true size, px
        # reasons print: the "why" of every determination is on paper
        assert page.locator("#determinations-table .why").first.is_visible()
    finally:
        page.close()
    assert overflow == [], f"{name}: runs past the printable width: {overflow[:5]}"

    pages = PdfReader(io.BytesIO(pdf)).pages
    n = len(pages)
    assert 1 <= n <= MAX_PAGES, f"{name}: {n} Letter pages"
    title = rev.submission.config.name or rev.submission.folder.name
    for k, pg in enumerate(pages, start=1):
        # NFKC undoes the PDF's ligatures ("ﬃ" → "ffi")
        text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", pg.extract_text()))
        assert f"Page {k} of {n}" in text, (name, k)
        assert f"Case {CASE}" in text, (name, k)
        assert title[:20] in text, (name, k)


def test_exhibit_is_true_to_its_stated_scale(reports):
    rev, _ = reports["deerfield_wetland_floodplain"]
    from georeview.report.exhibit import draw_exhibit

    ex = draw_exhibit(rev)
    assert ex is not None
    x0, y0, x1, y1 = ex.map_extent
    # EPSG:3071 is in metres: the frame's 5.3 x 4.2 in are 5.3 * scale ft of ground
    assert rev.layers.working_crs.axis_info[0].unit_name == "metre"
    assert (x1 - x0) / M_PER_FT == pytest.approx(FRAME_IN[0] * ex.scale_ft_per_inch, rel=1e-9)
    assert (y1 - y0) / M_PER_FT == pytest.approx(FRAME_IN[1] * ex.scale_ft_per_inch, rel=1e-9)
    # the site and its 100-ft adjacent band lie inside the frame
    site = shapely.buffer(rev.submission.site_geom, 100 * M_PER_FT)
    assert shapely.contains(shapely.box(*ex.map_extent), site)
    assert {"site", "disturbance", "wetlands", "floodplain", "floodway"} <= set(ex.layers_drawn)
    assert ex.png[:8] == b"\x89PNG\r\n\x1a\n"


def test_exhibit_scale_is_the_finest_that_fits():
    # 500 x 400 ft fits 5.3 x 4.2 in at 1 in = 100 ft (530 x 420 ft), not at 60 (318 x 252)
    assert exhibit_scale(500, 400) == 100
    assert exhibit_scale(530, 420) == 100
    assert exhibit_scale(531, 100) == 200
    assert exhibit_scale(100, 80) == 20
    assert exhibit_scale(5.3 * 2000 + 1, 10) is None
    assert contour_interval_for(100) == 2.0
    assert contour_interval_for(200) == 5.0
    assert contour_interval_for(1000) == 10.0


def test_running_header_text_cannot_leave_the_stylesheet(reports):
    hostile = '"; } body { display: none } </style><script>alert(1)</script>'
    quoted = str(css_string(hostile))
    assert quoted.startswith('"')
    assert quoted.endswith('"')
    inner = quoted[1:-1]
    assert not re.search(r'[<>"{};]', inner)
    assert "\\3c " in inner  # "<" as a CSS hex escape
    rev, _ = reports["deerfield_minor_home"]
    report = rev.to_dict()
    report["submission"]["name"] = hostile
    html = render_html(report, map_file=None, record={"case_number": hostile, "reviewer": hostile})
    style = html.split("</style>", 1)[0]
    assert "<script>" not in style
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html.split("</style>", 1)[1]


def test_without_case_number_the_print_leaves_a_line_to_fill(reports):
    rev, _ = reports["deerfield_minor_home"]
    html = render_html(rev.to_dict(), map_file=None)
    assert str(css_string("Case no. ______________")) in html


def test_a_missing_item_is_said_once_in_its_row(reports):
    # deerfield_etj_subdivision: six of its nine needs-information findings say nothing
    # beyond what is missing; the row gave the same sentence twice (text and "What is
    # missing"), a third of the printed findings' length.
    _rev, paths = reports["deerfield_etj_subdivision"]
    html = paths["html"].read_text(encoding="utf-8")
    table = html.split('id="findings-needs_info"', 1)[1].split("</table>", 1)[0]
    said = "whether the Village Engineer requires sedimentation basins; none is declared"
    assert table.count(said) == 1
    # a row whose message says more than its missing facts keeps both
    assert "peak leaving the site during or after disturbance is unknown" in table


def test_an_unusable_dem_draws_the_exhibit_without_contours(reports, monkeypatch):
    # the exhibit is a print aid: a DEM the contouring refuses must not stop the report
    import georeview.measure.contours as contour_module
    from georeview.errors import InputError
    from georeview.report.exhibit import draw_exhibit

    def refuse(*_a, **_k):
        raise InputError("vertical units unknown", path="dem.tif", field="vertical_units")

    monkeypatch.setattr(contour_module, "contours_ft", refuse)
    rev, _ = reports["somers_complete_plan"]
    ex = draw_exhibit(rev)
    assert ex is not None
    assert ex.contour_interval_ft is None
    assert "contours" not in ex.layers_drawn
    assert "site" in ex.layers_drawn
