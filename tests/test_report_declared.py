"""A declared item shows the applicant's own words and where (issue 24, item 1).

The engineer's complaint: in somers_complete_plan most passes rest on the applicant's word
and the report said only "The plan shows it (plan.bmps.dewatering)"; what the applicant
wrote ("Silt fence along the side- and downslope edges (Sheet C-3)") appeared nowhere, and a
declared pass looked exactly as strong as a measured one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from georeview.facts.plan import sheet_of
from georeview.pipeline.review import review
from georeview.report import render_html

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sites"


@pytest.fixture(scope="module")
def complete():
    return review(SAMPLES / "somers_complete_plan", with_terrain=False).to_dict()


def _finding(report: dict, rule_id: str) -> dict:
    return next(f for f in report["findings"] if f["rule_id"] == rule_id)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("Silt fence along the side- and downslope edges (Sheet C-3)", "Sheet C-3"),
        ("Spill kit at the fuel area (Sheet C-6 note 4)", "Sheet C-6 note 4"),
        ("Sheets C-2 and C-3: protection fence", "Sheets C-2 and C-3"),
        ("See page 4 of the SWPPP", "page 4"),
        ("calcs/sizing.pdf", "calcs/sizing.pdf"),
        ("Water truck on dry, windy days", None),
    ],
)
def test_where_the_plan_set_shows_it(text, where):
    assert sheet_of(text) == where


def test_a_declared_pass_quotes_the_applicant_and_names_the_sheet(complete):
    # Somers 17.08(C)(3)(d) "Development of spill prevention and response procedures": the
    # sample's plan says "Spill kit at the fuel area; spills reported and cleaned up (Sheet
    # C-6 note 4)" (sample_sites/somers_complete_plan/submission.toml).
    spill = _finding(complete, "somers.17.08.C.3.d")
    assert spill["status"] == "pass"
    assert spill["declared"] == {
        "words": "Spill kit at the fuel area; spills reported and cleaned up (Sheet C-6 note 4)",
        "where": "Sheet C-6 note 4",
    }
    assert spill["message"].startswith("Declared: \u201cSpill kit at the fuel area")
    assert "\u201d; verify on Sheet C-6 note 4." in spill["message"]
    # A plan item whose words name no sheet: verify on the plan set.
    dust = _finding(complete, "somers.17.10.B.5.l")
    assert dust["declared"]["where"] is None
    assert "; verify on the plan set." in dust["message"]
    # A measured pass carries no declaration: 1 in = 50 ft against 100 ft per inch.
    assert _finding(complete, "somers.17.10.B.4.scale")["declared"] is None


def test_counts_keep_declared_passes_apart(complete):
    counts = complete["summary"]["counts"]
    declared = [f for f in complete["findings"] if f["declared"]]
    assert counts["pass_declared"] == len(declared) > 20
    assert all(f["status"] == "pass" for f in declared)
    assert counts["pass"] > counts["pass_declared"]


def test_the_page_shows_the_words_and_a_different_badge(complete):
    page = re.sub(r"\s+", " ", render_html(complete, map_file=None))
    # the summary's badges: measured and computed passes, and declared ones, apart; the
    # two add up to the rows of the Passes table
    shown = int(re.search(r"(\d+) pass</span>", page).group(1))
    said = int(re.search(r"(\d+) declared: verify on the sheets</span>", page).group(1))
    rows = int(re.search(r'id="findings-pass">Passes \((\d+)\)', page).group(1))
    assert shown + said == rows
    assert said == page.count('<span class="badge s-declared">Declared</span>') > 20
    row = page[page.index("Spill prevention and response procedures") :][:1600]
    assert "The plan: \u201cSpill kit at the fuel area" in row
    assert '<span class="badge s-declared">Declared</span>' in row
    assert '<span class="noprint">verify on </span>Sheet C-6 note 4' in row
