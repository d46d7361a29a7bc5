"""Tests of georeview.facts.plan: the [plan] schema, plan facts and the completeness findings.

The items checked are the ordinances' own lists: Somers § 17.10(A), (B)(3)(a)-(h) (less
(e), which the engineering part checks), (B)(5)(a)-(l), (B)(6); Deerfield § 31.09(1)(C)3-4,
(D) and § 31.09(2) (../shared/ordinances/).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyproj import CRS

from georeview.errors import ConfigError, DataSourceError
from georeview.facts.plan import BMP_ITEMS, plan_facts
from georeview.load import load_submission
from georeview.rules import judge, load_ordinance
from tests._build import box_ft, write_submission
from tests.test_sitemap import base_facts

W3071 = CRS.from_epsg(3071)
SITE = box_ft(580_000.0, 290_000.0, 400, 300)

COMPLETE = """
[activity]
kinds = ["building"]
on_platted_lot = true
start_date = 2025-05-01
end_date = 2025-10-31
[plan]
owner_name = "Prairie Homes LLC"
owner_address = "100 Main St"
consultant = { firm = "Ace Engineering", address = "1 Oak St", contact = "J. Doe" }
site_description = "2.75-acre field; one commercial building and parking"
usgs_topo_map = "Sheet C-1 inset"
schedule = "Clearing May 1; grading May; building June-Sept; seeding Oct 1"
site_area_estimate_acres = 2.8
disturbed_area_estimate_acres = 2.7
soils_description = "Silt loam over glacial till"
groundwater_depth_ft = 6.0
receiving_water = "Pike River"
bmp_summary = "Silt fence, tracking pad, inlet filters, seed and mulch"
velocity_dissipation = "Riprap apron at the outfall"
maintenance = "Weekly and after 0.5 in of rain"
control_calculations = "Sheet C-5"
uses_infiltration = false
steep_slope_minimization = true
[plan.sequence]
stripping_clearing = "May 1-7"
rough_grading = "May 8-31"
utilities_infrastructure_buildings = "June-September"
final_grading_landscaping = "October"
clearing_start_date = 2025-05-01
exposure_days = 150
clearing_area_acres = 2.7
controls_install_date = 2025-04-28
permanent_vegetation_date = 2025-10-15
[plan.bmps]
stabilization = "Seed and mulch within 7 days"
diversion = "Diversion berm on the north edge"
overland_flow = "Silt fence on the contour"
channel_sediment_trapping = "Ditch checks"
staging = "Two phases"
inlet_protection = { not_applicable = "no downslope inlets" }
tracking = "Stone tracking pad"
offsite_cleanup = "Street sweeping daily"
waste_disposal = "Dumpster"
drainage_way_stabilization = "Erosion mat in the swale"
permanent_stabilization = "Sod within 7 days of final grade"
dust = "Water truck"
"""


def _sub(tmp_path: Path, municipality: str, body: str):
    folder = write_submission(
        tmp_path / "sub", SITE, toml=f'municipality = "{municipality}"\n{body}'
    )
    return load_submission(folder, W3071)


def _findings(municipality: str, facts: dict, acres: float = 2.75) -> dict:
    j = judge(load_ordinance(municipality), {**base_facts(acres), **facts})
    return {f.rule_id: f for f in j.findings}


def _plan_rules(found: dict, prefixes: tuple[str, ...]) -> dict:
    """The plan items of ``found`` (the declared-against-measured rules are not items)."""
    return {
        k: f
        for k, f in found.items()
        if k.startswith(prefixes) and f.kind == "required" and k not in _COMPARED
    }


#: Rule ids of the compare parts (tests/test_declared_vs_measured.py).
_COMPARED = {
    r.id
    for m in ("somers", "deerfield")
    for r in load_ordinance(m).rules
    if (r.verdict_fact or "").startswith("compare.")
}


SOMERS_MAJOR = ("somers.17.10.B.3", "somers.17.10.B.5", "somers.17.10.B.6")
DEER_MAJOR = ("deerfield.31.09.1.C.3", "deerfield.31.09.1.C.4", "deerfield.31.09.1.D")


def test_complete_plan_passes_every_item(tmp_path):
    sub = _sub(tmp_path, "somers", COMPLETE)
    facts = plan_facts(sub)
    found = _plan_rules(_findings("somers", facts), SOMERS_MAJOR)
    # (3)(a) x3, (b) x2, (c) x2, (d), (f), (g), (h); (5)(a)-(l); (6).
    # (3)(e) is somers.17.10.B.3.e of the engineering part (soil loss calculated).
    mine = {k: f for k, f in found.items() if k != "somers.17.10.B.3.e"}
    assert len(mine) == 11 + 12 + 1
    # 17.10(B)(5)(f) "Protection of downslope drainage inlets where they occur": the plan's
    # "no downslope inlets" is the paragraph's own condition: not applicable, with its reason.
    inlets = mine.pop("somers.17.10.B.5.f")
    assert inlets.status == "not_applicable"
    assert "\u201cno downslope inlets\u201d" in inlets.message
    assert {f.status for f in mine.values()} == {"pass"}
    assert facts["plan.bmp.not_applicable.inlet_protection"] == "no downslope inlets"
    deer = _plan_rules(_findings("deerfield", facts), DEER_MAJOR)
    assert len(deer) == 3
    assert {f.status for f in deer.values()} == {"pass"}


def test_no_plan_table_needs_information(tmp_path):
    facts = plan_facts(_sub(tmp_path, "somers", ""))
    assert facts["plan.given"] is False
    found = _plan_rules(_findings("somers", facts), SOMERS_MAJOR)
    mine = {k: f for k, f in found.items() if k != "somers.17.10.B.3.e"}
    assert {f.status for f in mine.values()} == {"needs_info"}
    minor = _findings("somers", facts, acres=0.5)
    for rid in ("somers.17.10.A.site", "somers.17.10.A.schedule", "somers.17.10.A.bmps"):
        assert minor[rid].status == "needs_info"
    assert {f.status for f in _plan_rules(minor, SOMERS_MAJOR).values()} == {"not_applicable"}


def test_missing_items_fail_with_their_citation(tmp_path):
    body = (
        COMPLETE.replace('owner_address = "100 Main St"\n', "")
        .replace('dust = "Water truck"\n', "")
        .replace("exposure_days = 150\n", "")
        .replace('velocity_dissipation = "Riprap apron at the outfall"\n', "")
    )
    found = _findings("somers", plan_facts(_sub(tmp_path, "somers", body)))
    expect_fail = {
        "somers.17.10.B.3.a.owner": "§ 17.10(B)(3)(a)",
        "somers.17.10.B.5.l": "§ 17.10(B)(5)(l)",
        "somers.17.10.B.3.c.sequencing": "§ 17.10(B)(3)(c)",
        "somers.17.10.B.6": "§ 17.10(B)(6)",
    }
    for rid, cit in expect_fail.items():
        assert found[rid].status == "fail", rid
        assert found[rid].citation == cit
    # The sequence phases are all there; only a sequencing item is missing.
    assert found["somers.17.10.B.3.c.phases"].status == "pass"
    assert found["somers.17.10.B.3.a.consultant"].status == "pass"
    rest = _plan_rules(found, SOMERS_MAJOR)
    assert sum(f.status == "fail" for f in rest.values()) == len(expect_fail)


def test_deerfield_engineer_discretion_is_never_a_fail(tmp_path):
    body = COMPLETE.replace('control_calculations = "Sheet C-5"\n', "").replace(
        'maintenance = "Weekly and after 0.5 in of rain"\n', ""
    )
    found = _findings("deerfield", plan_facts(_sub(tmp_path, "deerfield", body)))
    assert found["deerfield.31.09.1.D"].status == "needs_info"
    assert found["deerfield.31.09.1.C.4"].status == "fail"
    assert found["deerfield.31.09.1.C.4"].citation == "§ 31.09(1)(C)4"
    assert found["deerfield.31.09.1.C.3"].status == "pass"


def test_minor_statements(tmp_path):
    body = '[plan]\nsite_description = "Garage on a platted lot"\nbmp_summary = "Silt fence"\n'
    facts = plan_facts(_sub(tmp_path, "deerfield", body))
    found = _findings("deerfield", facts, acres=0.2)
    assert found["deerfield.31.09.2.site"].status == "pass"
    assert found["deerfield.31.09.2.controls"].status == "pass"
    assert found["deerfield.31.09.2.schedule"].status == "fail"
    assert found["deerfield.31.09.2.schedule"].citation == "§ 31.09(2)"
    assert found["deerfield.31.09.1.C.4"].status == "not_applicable"
    somers = _findings("somers", facts, acres=0.2)
    assert somers["somers.17.10.A.site"].status == "pass"
    assert somers["somers.17.10.A.schedule"].status == "fail"


def test_schedule_from_dated_sequence(tmp_path):
    # No plan.schedule, but a fully dated sequence and activity dates give the schedule.
    body = COMPLETE.replace(
        'schedule = "Clearing May 1; grading May; building June-Sept; seeding Oct 1"\n', ""
    )
    facts = plan_facts(_sub(tmp_path, "somers", body))
    assert facts["plan.has.schedule"] is True


def test_documents_must_exist(tmp_path):
    body = '[plan]\n[plan.documents]\nbmps = "docs/bmps.pdf"\n'
    sub = _sub(tmp_path, "somers", body)
    with pytest.raises(DataSourceError, match=r"plan\.documents\.bmps.*not found"):
        plan_facts(sub)
    (sub.folder / "docs").mkdir()
    (sub.folder / "docs" / "bmps.pdf").write_bytes(b"%PDF-1.4\n")
    facts = plan_facts(sub)
    assert all(facts[f"plan.has.bmp.{n}"] is True for n in BMP_ITEMS)
    assert facts["plan.documents.bmps"] == "bmps.pdf"
    assert facts["plan.has.owner"] is False


def test_document_outside_the_folder_is_refused(tmp_path):
    (tmp_path / "secret.pdf").write_bytes(b"x")
    sub = _sub(tmp_path, "somers", '[plan]\ndocuments = { maintenance = "../../secret.pdf" }\n')
    with pytest.raises(DataSourceError, match="outside the submission folder"):
        plan_facts(sub)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('[plan]\nowner = "x"\n', "plan.owner"),
        ('[plan]\nowner_name = ""\n', "plan.owner_name"),
        ("[plan]\ngroundwater_depth_ft = -1.0\n", "plan.groundwater_depth_ft"),
        ('[plan]\ngroundwater_depth_ft = "6"\n', "plan.groundwater_depth_ft"),
        ("[plan.bmps]\ndust = true\n", "plan.bmps.dust"),
        ('[plan.bmps]\ndust = { not_aplicable = "x" }\n', "plan.bmps.dust.not_aplicable"),
        ('[plan.consultant]\nfirm = "A"\nphone = "1"\n', "plan.consultant.phone"),
        ('[plan.documents]\ncalcs = "a.pdf"\n', "plan.documents.calcs"),
        ('[plan.sequence]\nclearing_start_date = "May 1"\n', "plan.sequence.clearing_start_date"),
    ],
)
def test_bad_plan_keys_name_the_field(tmp_path, body, field):
    sub = _sub(tmp_path, "somers", body)
    with pytest.raises(ConfigError) as info:
        plan_facts(sub)
    assert info.value.field == field
    assert info.value.path.endswith("submission.toml")


def test_items_given_outside_the_plan_table(tmp_path):
    # No [plan] table: the dates and the description given elsewhere in submission.toml
    # still count; the rest is unknown, the owner included: the applicant is not taken for
    # the owner or developer (17.10(B)(3)(a)) unless the plan says so (applicant_is_owner).
    body = (
        'applicant = "Example Health"\napplicant_address = "1 Main St"\n'
        'description = "Office building and parking"\n'
        "[activity]\nstart_date = 2025-05-05\nend_date = 2025-10-31\n"
    )
    facts = plan_facts(_sub(tmp_path, "somers", body))
    assert facts["plan.has.dates"] is True
    assert facts["plan.has.owner"] is None
    assert facts["plan.has.site_description"] is True
    assert facts["plan.has.receiving_water"] is None
    found = _findings("somers", facts)
    assert found["somers.17.10.B.3.a.dates"].status == "pass"
    assert found["somers.17.10.B.3.h"].status == "needs_info"
