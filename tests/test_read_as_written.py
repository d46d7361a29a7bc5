"""The ordinances read as written (issue 22, item 7): ways out the text gives, triggers
that decide nothing, numbers shown as compared.

Texts quoted above each test: ../shared/ordinances/ (Somers ch. 17, Deerfield ch. 31).
"""

from __future__ import annotations

import datetime as dt

from georeview.ordinances import folder
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
        r.id for r in load_ordinance("deerfield").rules if r.measure == "activity.fill_cubic_yards"
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


def _marked(item: str, reason: str) -> dict:
    """Facts of a plan that marks ``plan.bmps.<item>`` not applicable with ``reason``."""
    return {f"plan.has.bmp.{item}": True, f"plan.bmp.not_applicable.{item}": reason}


def test_no_exception_where_the_text_makes_none():
    # Deerfield 31.06(2)(C): "Each site shall have a graveled entrance pad"; Somers
    # 17.08(C)(3): "The erosion and sediment control plan shall incorporate all of the
    # following: ... (d) Development of spill prevention and response procedures."
    # Before: { not_applicable = "any text" } passed as "The plan shows it".
    pad = _found("deerfield", _marked("tracking_pad", "small site"))["deerfield.31.06.2.C.pad"]
    assert pad.status == "fail"
    assert "\u201csmall site\u201d" in pad.message
    assert "\u201cEach site shall have a graveled entrance pad\u201d" in pad.message
    assert "The plan shows it" not in pad.message
    assert pad.evidence == ("declared",)
    spill = _found("somers", _marked("spill_response", "no fuel on site"))["somers.17.08.C.3.d"]
    assert spill.status == "fail"
    assert "\u201cno fuel on site\u201d" in spill.message
    # Shown on the plan, it passes as before.
    shown = _found("deerfield", {"plan.has.bmp.tracking_pad": True})["deerfield.31.06.2.C.pad"]
    assert shown.status == "pass"


def test_an_exception_the_village_decides_waits_on_the_village():
    # Deerfield 31.06(2)(D): "Channelized runoff from adjacent areas passing through the
    # site shall be diverted around disturbed areas, if practical, as determined by the
    # Village Engineer": the applicant's not_applicable is a request.
    rid, reason = "deerfield.31.06.2.D", "no channelized runoff enters from adjacent areas"
    asked = _marked("diversion", reason)
    waiting = _found("deerfield", asked)[rid]
    assert waiting.status == "needs_info"
    assert "For the Village to decide (village.accepts_not_applicable_diversion)" in (
        waiting.message
    )
    assert f"\u201c{reason}\u201d" in waiting.message
    decided = "village.accepts_not_applicable_diversion"
    yes = _found("deerfield", {**asked, decided: True})[rid]
    assert yes.status == "not_applicable"
    assert yes.message.startswith("Not applicable: the Village accepts")
    assert yes.evidence == ("declared", "village")
    no = _found("deerfield", {**asked, decided: False})[rid]
    assert no.status == "fail"
    assert "does not accept" in no.message


def test_a_conditional_item_stands_unless_the_project_shows_its_condition():
    # Somers 17.08(C)(1): practices "shall be used to prevent or reduce all of the
    # following: ... (e) The discharge of sediment by dewatering activities"; (c) "... into
    # adjacent waters of the state". No dewatering: not applicable, with the plan's reason.
    # A declared dewatering activity, or waters the maps show next to the site, contradict it.
    dew = _marked("dewatering", "no dewatering planned")
    none = _found("somers", dew)["somers.17.08.C.1.e"]
    assert none.status == "not_applicable"
    assert none.message.startswith("Not applicable, as the plan says: \u201cno dewatering")
    pumped = _found("somers", {**dew, "activity.kinds": ("building", "dewatering")})
    assert pumped["somers.17.08.C.1.e"].status == "fail"
    assert "declared activity" in pumped["somers.17.08.C.1.e"].message
    waters = _marked("sediment_to_waters", "no waters nearby")
    far = _found("somers", {**waters, "site_map.near.streams": False})["somers.17.08.C.1.c"]
    assert far.status == "not_applicable"
    near = _found("somers", {**waters, "site_map.near.streams": True})["somers.17.08.C.1.c"]
    assert near.status == "fail"
    assert near.evidence == ("measured", "declared")


def test_every_plan_item_rule_says_what_its_not_applicable_is_worth():
    # Which items allow what lives in the ordinance folders, with the words that justify it:
    # every rule that reads a [plan.bmps] item has an allowance whose words are the text's.
    for m in ("somers", "deerfield"):
        ordinance = load_ordinance(m)
        text = (folder(m) / "ordinance.txt").read_text(encoding="utf-8")
        flat = " ".join(text.split())
        for rule in ordinance.rules:
            if not (rule.fact or "").startswith("plan.has.bmp."):
                continue
            a = rule.allowance
            assert a is not None, rule.id
            assert a.fact == rule.fact.replace("plan.has.bmp.", "plan.bmp.not_applicable."), rule.id
            for piece in a.words.split(" ... "):
                assert piece.strip(". ") in flat, (rule.id, piece)


def test_work_past_the_permit_term_needs_a_reapplication():
    # Deerfield 31.12(1): "valid for a period of one year from the date of issuance. All work
    # must be completed prior to expiration of the permit. If land disturbing activity ... is
    # to continue beyond the expiration of the permit, then reapplication and review pursuant
    # to this ordinance, is required." The issue date lies between the application (March 31,
    # 2025) and the planned start (no work before the permit): an end by March 31, 2026 fits
    # any issue; an end after start + 1 year fits none; in between it depends on the issue.
    from georeview.calendar import work_within_term

    def within(end: dt.date, start: dt.date = dt.date(2025, 5, 5)) -> bool | None:
        return work_within_term(
            "deerfield",
            application_date=dt.date(2025, 3, 31),
            start_date=start,
            end_date=end,
            category="major",
        )

    assert within(dt.date(2025, 10, 31)) is True
    assert within(dt.date(2026, 3, 31)) is True  # one year from the application
    assert within(dt.date(2026, 4, 1)) is None  # fits if issued on or after April 1, 2025
    assert within(dt.date(2026, 5, 5)) is None  # issued on the start day, expires May 5
    assert within(dt.date(2026, 5, 6)) is False
    rid = "deerfield.31.12.1.term"
    late = {"schedule.ends_within_permit_term": False}
    assert _found("deerfield", late)[rid].status == "needs_info"
    assert "reapplied" in _found("deerfield", late)[rid].message
    planned = _found("deerfield", {**late, "activity.reapplication_planned": True})[rid]
    assert planned.status == "pass"
    refused = _found("deerfield", {**late, "activity.reapplication_planned": False})[rid]
    assert refused.status == "fail"
    assert _found("deerfield", {"schedule.ends_within_permit_term": True})[rid].status == "pass"


def test_controls_complete_two_working_days_before_disturbance():
    # Deerfield 31.12(2)(B): major permits "require the permittee to ... Contact the Village
    # Clerk upon completion of any control measures at least two working days prior to
    # commencing any land disturbing activity". Start Monday May 5, 2025: two working days
    # before is Thursday May 1 (Friday May 2 is one, the weekend none). Controls in on May 1
    # are in time; on May 2 they are not.
    from georeview.calendar import controls_in_time, deadlines

    listed = deadlines(
        "deerfield",
        application_date=dt.date(2025, 3, 31),
        category="major",
        start_date=dt.date(2025, 5, 5),
    )
    by = {d.id: d.date for d in listed}
    assert by["contact_clerk_before_start"] == dt.date(2025, 5, 1)
    assert controls_in_time("deerfield", listed, dt.date(2025, 5, 1)) is True
    assert controls_in_time("deerfield", listed, dt.date(2025, 5, 2)) is False
    assert controls_in_time("deerfield", listed, None) is None
    rid = "deerfield.31.12.2.B"
    assert _found("deerfield", {"schedule.controls_in_time": False})[rid].status == "fail"
    assert _found("deerfield", {"schedule.controls_in_time": True})[rid].status == "pass"
    minor = _found("deerfield", {"schedule.controls_in_time": False}, acres=0.2)[rid]
    assert minor.status == "not_applicable"  # 31.12(2) is the major permit's
