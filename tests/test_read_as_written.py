"""The ordinances read as written (issue 22, item 7): ways out the text gives, triggers
that decide nothing, numbers shown as compared.

Texts quoted above each test: ../shared/ordinances/ (Somers ch. 17, Deerfield ch. 31).
"""

from __future__ import annotations

from georeview.rules import judge, load_ordinance
from tests.test_sitemap import base_facts

DEWATERING = "deerfield.31.06.2.A"


def _found(municipality: str, facts: dict, acres: float = 2.75) -> dict:
    j = judge(load_ordinance(municipality), {**base_facts(acres), **facts})
    return {f.rule_id: f for f in j.findings}


def _dewatering(**facts) -> dict:
    base = {"activity.kinds": ("building", "dewatering"), "dewatering.required_area_sqft": 412.0}
    return _found("deerfield", {**base, **facts})[DEWATERING]


def test_dewatering_basin_or_other_appropriate_control_measures():
    # Deerfield 31.06(2)(A): "Water pumped from the site shall be treated by temporary
    # sedimentation basins or other appropriate control measures." A basin that meets its
    # standards passes; another measure the plan describes passes once the Village accepts
    # it, with or without a basin, and its message does not claim a basin meets anything.
    assert _dewatering(**{"basins.dewatering.ok": True}).status == "pass"
    other = {"plan.has.bmp.dewatering": True, "village.dewatering_other_measures_accepted": True}
    for basin in (None, False):
        f = _dewatering(**{"basins.dewatering.ok": basin}, **other)
        assert f.status == "pass", basin
        assert "no dewatering basin is relied on" in f.message
        assert "meets the required" not in f.message
        assert "village" in f.evidence
    # Another measure waiting on the Village: needs_info, for the Village to decide.
    waiting = _dewatering(**{"basins.dewatering.ok": False, "plan.has.bmp.dewatering": True})
    assert waiting.status == "needs_info"
    assert "for the Village to decide" in waiting.message
    assert "\u201cor other appropriate control measures\u201d" in waiting.message
    # The Village refuses it, or the plan describes no other measure: the basin's fail.
    refused = {"plan.has.bmp.dewatering": True, "village.dewatering_other_measures_accepted": False}
    assert _dewatering(**{"basins.dewatering.ok": False}, **refused).status == "fail"
    bare = _dewatering(**{"basins.dewatering.ok": False, "plan.has.bmp.dewatering": False})
    assert bare.status == "fail"
    assert "412 sq ft" in bare.message
    # Nothing known: needs_info, never a pass; no dewatering: not applicable.
    assert _dewatering().status == "needs_info"
    assert _dewatering(**refused).status == "needs_info"
    none = _found("deerfield", {"basins.dewatering.ok": False})[DEWATERING]
    assert none.status == "not_applicable"


def test_a_village_option_is_moot_once_the_ordinance_applies():
    # Somers 17.04(A)(3): "Notwithstanding the applicability requirements in par. (a), this
    # ordinance applies to construction sites of any size that, as determined by the
    # Village Administrator, are likely to result in runoff that exceeds ...". Under
    # 17.04(A)(1) the ordinance already applies to any construction site: while the
    # Administrator has not decided, the paragraph asks nothing of a site already regulated.
    f = _found("somers", {})["somers.17.04.A.3"]
    assert f.status == "not_applicable"
    assert f.message.startswith("Not needed: the ordinance applies under another paragraph")
    # Where nothing else decides (the disturbed area unknown), it still waits on the Village.
    open_ = _found("somers", {"disturbed_area_sqft": None, "disturbed_area_acres": None})
    assert open_["somers.17.04.A.3"].status == "needs_info"
    # Once the Administrator has decided, the decision is shown as made.
    yes = _found("somers", {"village.site_identified": True})["somers.17.04.A.3"]
    assert yes.status == "pass"
    assert "has determined" in yes.message


def test_a_threshold_is_shown_as_it_was_compared():
    # Deerfield 31.05(1)(B)3: "... involving 400 cubic yards or more of ... excavation or
    # fill material". 399.6 cu yd is under 400 and must not read "400 cu yd ..., under 400".
    # The limit rule compares unrounded values; the shown value keeps the decimal it needs.
    rule = next(
        r.id
        for r in load_ordinance("deerfield").rules
        if r.measure == "activity.fill_cubic_yards"
    )
    under = _found("deerfield", {"activity.fill_cubic_yards": 399.6}, acres=0.2)[rule]
    assert under.applies is False
    assert "399.6 cu yd" in under.message
    assert "under 400 cu yd" in under.message
    at = _found("deerfield", {"activity.fill_cubic_yards": 400.0}, acres=0.2)[rule]
    assert at.applies is True
    assert "400 cu yd of excavation" in at.message
    over = _found("deerfield", {"activity.fill_cubic_yards": 400.004}, acres=0.2)[rule]
    assert over.applies is True
    assert "400.004 cu yd" in over.message


def test_village_activity_is_the_villages_record():
    # Deerfield 31.08(1): "No landowner or land user, other than the Village of Deerfield,
    # may commence ... without receiving prior Village approval of a control plan and a
    # permit"; 31.08(2): for Village activity "there shall be an approved control plan in
    # place. No permit or fees are required". Unrecorded, the private applicant's rules
    # hold (the stricter reading); recorded by the Village, 31.08(1) does not apply.
    private = _found("deerfield", {})
    assert private["deerfield.31.08.2"].status == "not_applicable"
    assert private["deerfield.31.08.1"].status != "not_applicable"
    village = _found("deerfield", {"village.village_activity": True})
    assert village["deerfield.31.08.1"].status == "not_applicable"
    assert village["deerfield.31.08.2"].status == "pass"
    assert "no permit or fees are required" in village["deerfield.31.08.2"].message
