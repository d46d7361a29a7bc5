"""report.html from the report dict: summary first, findings by status, units, money, print CSS."""

from __future__ import annotations

import copy
import re
from html.parser import HTMLParser

import pytest
from _web_helpers import make_review

from georeview.report import render_html


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    r = make_review(tmp_path_factory.mktemp("rep")).to_dict()
    r["deadlines"] = [
        {
            "name": "Decision on the control plan",
            "date": "2025-07-18",
            "citation": "§ 31.10(1)(A)",
            "basis": "10 working days after the completed plan",
        }
    ]
    r["fees"] = {
        "items": [
            {"name": "Application fee", "amount_usd": 35.0, "citation": "§ 31.11", "note": ""},
            {
                "name": "Forfeiture",
                "amount_usd": None,
                "min_usd": 50.0,
                "max_usd": 500.0,
                "citation": "§ 31.14(3)",
                "note": "per offence",
            },
        ]
    }
    return r


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []

    def handle_starttag(self, tag, attrs):
        ident = dict(attrs).get("id")
        if ident:
            self.ids.append(ident)


def _ids(page: str) -> list[str]:
    p = _Ids()
    p.feed(page)
    return p.ids


def test_summary_comes_first_and_states_the_classification(report):
    page = render_html(report, map_file=None)
    ids = _ids(page)
    assert ids.index("summary") < ids.index("findings") < ids.index("measures")
    c = report["classification"]
    assert c["regulated"] is True  # 17,063 sq ft disturbed >= 4,000 sq ft (§ 31.06(1)(C))
    text = re.sub(r"\s+", " ", page[page.index('id="classification"') :][:400])
    assert f"<strong>{c['category'].upper()}</strong>" in text
    assert "Regulated by Deerfield ch. 31" in text


def test_findings_grouped_in_status_order_with_the_ordinance_words(report):
    page = render_html(report, map_file=None)
    order = [
        page.index(f'id="findings-{s}"')
        for s in ("fail", "needs_info", "pass", "not_applicable")
        if any(f["status"] == s for f in report["findings"])
    ]
    assert order == sorted(order)
    f = next(f for f in report["findings"] if f["text"])
    from html import escape

    assert escape(f["text"], quote=False) in page
    assert escape(f["citation"], quote=False) in page


def test_measures_have_units_and_money_is_listed(report):
    page = render_html(report, map_file=None)
    measures = page[page.index('id="measures"') :]
    disturbed = f"{report['measures']['disturbed_area_sqft']:,.0f} sq ft"
    assert disturbed in measures
    assert "tons/acre/year" in measures
    assert "2025-07-18" in page
    assert "$35.00" in page
    assert "$50.00 to $500.00" in page  # a forfeiture range, not one amount


def test_print_stylesheet_and_embedded_map(report):
    page = render_html(report, map_file="map.html", map_html="<p>map & more</p>")
    assert "@media print" in page
    assert 'srcdoc="&lt;p&gt;map &amp; more&lt;/p&gt;"' in page
    assert 'href="map.html"' in page


def test_unknown_regulation_says_so(report):
    r = copy.deepcopy(report)
    r["classification"].update(regulated=None, category=None, category_label=None)
    page = render_html(r, map_file=None)
    assert "Regulation cannot be determined" in page


# ------------------------------------------------------------------ the Village's determinations


class _Rows(HTMLParser):
    """The text of each row (cells joined by " | ") of the table with a given id."""

    def __init__(self, ident: str) -> None:
        super().__init__()
        self.ident, self.depth, self.rows, self.cells = ident, 0, [], []

    def handle_starttag(self, tag, attrs):
        if self.depth == 0 and dict(attrs).get("id") == self.ident:
            self.depth = 1
        elif self.depth and tag == "table":
            self.depth += 1
        if self.depth and tag in ("td", "th"):
            self.cells.append("")

    def handle_endtag(self, tag):
        if self.depth and tag == "tr" and self.cells:
            self.rows.append(" | ".join(" ".join(c.split()) for c in self.cells))
            self.cells = []
        if self.depth and tag == "table":
            self.depth -= 1

    def handle_data(self, data):
        if self.depth and self.cells:
            self.cells[-1] += data


def _rows(page: str, ident: str) -> list[str]:
    p = _Rows(ident)
    p.feed(page)
    return p.rows[1:]  # the header row left out


DECIDED = """municipality = "deerfield"

[determinations.master_plan_area]
value = true
by = "A. Reviewer, Village Engineer"
date = 2025-05-02
reason = "Master Plan map 4 <b>corridor</b>."
"""


@pytest.fixture(scope="module")
def larger_site(tmp_path_factory):
    """deerfield_larger_site reviewed without and with a determinations file."""
    import shutil
    from pathlib import Path

    from georeview.pipeline.review import review

    sub = tmp_path_factory.mktemp("village") / "deerfield_larger_site"
    shutil.copytree(Path(__file__).resolve().parents[1] / "sample_sites" / sub.name, sub)
    without = review(sub, with_terrain=False)
    decided = sub.parent / "determinations.toml"  # the reviewer's, outside the submission
    decided.write_text(DECIDED, encoding="utf-8")
    with_file = review(sub, with_terrain=False, determinations=decided)
    return without, with_file


def test_village_section_without_a_determinations_file(larger_site):
    # Deerfield 31.06(4): conservancy or corridor areas "identified in the Village Master
    # Plan" are the Village's to say; the sample gives no file, so that question is open
    # and 31.06(4) waits for it. The sample declares a basin, so the Engineer's basin
    # decision (31.06(3)(B)) is open but no result rests on it.
    rev, _ = larger_site
    page = render_html(rev.to_dict(), map_file=None, review=rev)
    assert _ids(page).index("village-determinations") > _ids(page).index("determinations")
    assert "no determinations file was given" in page
    assert "village-given" not in _ids(page)
    pending = _rows(page, "village-pending")
    master = [r for r in pending if "Village Master Plan" in r]
    assert len(master) == 1
    assert "§ 31.06(4)" in master[0]
    assert master[0].endswith("| Yes")
    basin = [r for r in pending if "requires sedimentation basins" in r]
    assert len(basin) == 1
    assert basin[0].endswith("no result rests on it")
    # A citation several rules share is listed once.
    assert basin[0].count("§ 31.06(3)(B)") == 1
    # The questions still needed come first.
    assert pending.index(master[0]) < pending.index(basin[0])


def test_village_section_with_a_determinations_file(larger_site):
    _, rev = larger_site
    report = rev.to_dict()
    assert report["determinations"]["file"] == "determinations.toml"
    page = render_html(report, map_file=None, review=rev)
    assert '<strong id="village-file">determinations.toml</strong>' in page
    given = _rows(page, "village-given")
    assert len(given) == 1
    cells = given[0].split(" | ")
    assert "Village Master Plan" in cells[0]
    assert "master_plan_area" in cells[0]
    assert cells[1:4] == [
        "Decided: Yes",
        "A. Reviewer, Village Engineer, 2025-05-02",
        "Master Plan map 4 <b>corridor</b>.",
    ]
    assert "§ 31.06(4)" in cells[4]
    # The reviewer's text is escaped, never markup.
    assert "&lt;b&gt;corridor&lt;/b&gt;" in page
    # Given, it is no longer for the Village to decide.
    assert not any("Village Master Plan" in r for r in _rows(page, "village-pending"))


def test_village_section_from_report_json_alone(larger_site):
    # Without the review (report.json rendered on its own) the given determinations are
    # still described from the fact registry, and each needs-information finding resting
    # on the Village's word stands for a question still open.
    without, with_file = larger_site
    given = _rows(render_html(with_file.to_dict(), map_file=None), "village-given")
    assert len(given) == 1
    assert "Village Master Plan" in given[0]
    pending = _rows(render_html(without.to_dict(), map_file=None), "village-pending")
    waiting = [
        f
        for f in without.to_dict()["findings"]
        if f["status"] == "needs_info" and "village" in f["evidence"]
    ]
    assert waiting
    assert len(pending) == len(waiting)
    assert all(r.endswith("| Yes") for r in pending)
