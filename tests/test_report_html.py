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
