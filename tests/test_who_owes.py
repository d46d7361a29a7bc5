"""Who owes what, and the outcome a reviewer would write (issue 24, item 3).

The engineer's complaint: submissions waiting only on the Village's own call were labelled
"incomplete" (8 of 18 samples); one "What needs information" list mixed the applicant and
the Village; a required Village Board referral (Deerfield 31.06(4)) was a "For the record"
row; there was no recommendation. Somers 17.09(C): the Administrator approves or
disapproves, "may request additional information", and states the reasons for a
disapproval in writing; Deerfield 31.10: "approve, reject or conditionally approve".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from georeview.pipeline.owes import owed_by
from georeview.pipeline.review import review
from georeview.report import render_html

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sites"


@pytest.fixture(scope="module")
def reports():
    cache: dict[tuple[str, bool], dict] = {}

    def get(name: str, terrain: bool = True) -> dict:
        if (name, terrain) not in cache:
            cache[name, terrain] = review(SAMPLES / name, with_terrain=terrain).to_dict()
        return cache[name, terrain]

    return get


def _cites(items: list[dict]) -> list[str]:
    return [i["citation"] for i in items]


def test_the_applicant_is_asked_before_the_village():
    by = {"plan.x": "applicant", "village.y": "village", "classification.z": None}
    assert owed_by(["village.y", "plan.x"], by) == "applicant"
    assert owed_by(["village.y"], by) == "village"
    assert owed_by(["classification.z"], by) is None


def test_complete_plan_is_ready_to_approve(reports):
    s = reports("somers_complete_plan")["summary"]
    assert s["outcome"]["code"] == "approve"
    assert "17.09(C)(2)" in s["outcome"]["words"]
    assert s["owes"] == {"applicant": [], "village": []}


def test_waiting_only_on_the_village_is_not_incomplete(reports):
    # Soil loss over 5 t/ac/yr with the written explanation given: whether it is the
    # maximum extent practicable is the Administrator's (17.055), nothing the applicant owes
    s = reports("somers_etj_near_kenosha")["summary"]
    assert s["outcome"]["code"] == "awaiting_village"
    assert s["owes"]["applicant"] == []
    assert set(_cites(s["owes"]["village"])) == {"§ 17.08(C)(2)(a)", "§ 17.055"}
    # the home site: the master-plan areas and the Board's referral are the Village's
    home = reports("deerfield_minor_home")["summary"]
    assert home["outcome"]["code"] == "awaiting_village"
    assert home["owes"]["applicant"] == []


def test_the_board_referral_is_the_villages_action(reports):
    r = reports("deerfield_wetland_floodplain")
    board = next(f for f in r["findings"] if f["rule_id"] == "deerfield.31.06.4.board")
    assert board["status"] == "pass"  # extraordinary: wetland and floodplain disturbed
    village = r["summary"]["owes"]["village"]
    action = next(i for i in village if i["rule_id"] == "deerfield.31.06.4.board")
    assert action["action"] is True
    assert action["what"].startswith("Refer the site to the Village Board")
    # the Village Engineer's estimate the security rests on is the Village's too
    assert "deerfield.31.12.2.A" in [i["rule_id"] for i in village]


def test_a_failing_map_is_disapproved_with_written_reasons(reports):
    # somers_bad_map: 1 in = 200 ft, 10-ft contours, no grid (17.10(B)(4), (4)(j))
    s = reports("somers_bad_map")["summary"]
    assert s["outcome"]["code"] == "disapprove"
    assert "17.09(C)(3)" in s["outcome"]["words"]
    assert len(s["outcome"]["reasons"]) == 3
    assert all(r.startswith("§ 17.10(B)(4)") for r in s["outcome"]["reasons"])
    assert [i.get("correct") for i in s["owes"]["applicant"]] == [True, True, True]


def test_information_the_applicant_owes_returns_it(reports):
    # the larger site describes detention with no routed outflow: its peaks are unknown
    # from the applicant's own inputs (31.06(3)(C)1), so it goes back to the applicant
    s = reports("deerfield_larger_site")["summary"]
    assert s["outcome"]["code"] == "return_to_applicant"
    assert "§ 31.06(3)(C)1.a" in _cites(s["owes"]["applicant"])
    assert "§ 31.12(2)(A)" not in _cites(s["owes"]["applicant"])
    assert "§ 31.12(2)(A)" in _cites(s["owes"]["village"])


def test_not_regulated(reports):
    s = reports("deerfield_farm", terrain=False)["summary"]
    assert s["outcome"]["code"] == "not_regulated"
    assert s["owes"] == {"applicant": [], "village": []}


def test_no_toml_in_what_the_applicant_reads(reports):
    for name in ("deerfield_larger_site", "somers_bad_map", "deerfield_wetland_floodplain"):
        for who in ("applicant", "village"):
            for item in reports(name)["summary"]["owes"][who]:
                assert not re.search(r"\b[a-z_]+\.[a-z_]+\b|\.toml\b|\[[a-z_]+\]", item["what"]), (
                    item
                )


def test_the_page_says_the_recommendation_and_who_owes_what(reports):
    page = render_html(reports("deerfield_wetland_floodplain"), map_file=None)
    text = re.sub(r"<[^>]+>", " ", page)
    text = re.sub(r"\s+", " ", text)
    assert "Recommendation: Reject the control plan" in text
    assert 'id="summary-village"' in page
    assert "The Village must decide or do (3)" in text
    assert "Refer the site to the Village Board" in text
    assert 'id="summary-applicant"' in page


def test_an_unknown_outcome_is_refused_naming_the_field(tmp_path):
    # a typo in an ordinance folder's [outcomes] would silently fall back to the code's name
    import shutil

    import georeview.ordinances
    from georeview.errors import ConfigError
    from georeview.rules.load import load_ordinance_folder

    folder = tmp_path / "somers"
    shutil.copytree(Path(georeview.ordinances.__file__).parent / "somers", folder)
    toml = folder / "ordinance.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace("\napprove = ", "\naprove = ", 1), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"outcomes"):
        load_ordinance_folder(folder)


def test_each_applicant_item_says_where_it_belongs(reports):
    # issue 24 item 3: "each item with its citation and the sheet or document it belongs
    # on". The map's failures belong on the site map; the larger site's unknown peaks
    # (no routed outflow for its detention) in the stormwater calculations.
    bad = reports("somers_bad_map")["summary"]["owes"]["applicant"]
    assert [i["on"] for i in bad] == [["the site map"]] * 3
    larger = reports("deerfield_larger_site")["summary"]["owes"]["applicant"]
    assert larger  # every item names its document
    assert all(i["on"] == ["the stormwater calculations (runoff peaks)"] for i in larger), larger
    page = render_html(reports("somers_bad_map"), map_file=None)
    applicant = page.split('id="summary-applicant"', 1)[1].split("</ul>", 1)[0]
    assert applicant.count("On the site map.") == 3


def test_where_a_fact_belongs_is_the_longest_prefix():
    from georeview.facts.registry import registry

    reg = registry()
    assert reg.document("site_map.shows.drainage") == "the site map"
    assert reg.document("disturbed_at_once_acres") == "the land disturbance file"
    assert reg.document("plan.has.dewatering") == "the erosion control plan"
    assert reg.document("soil_loss_tons_per_acre_year") == "the soil loss calculation"
    assert reg.document("jurisdiction.status") is None  # the Village's own measure
