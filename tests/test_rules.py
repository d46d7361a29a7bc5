"""Ordinance thresholds at their edges, and the rule engine's three-valued logic.

Expected outcomes come from the ordinance text: Deerfield 31.06(1)(C) "4,000 square
feet or more", 31.02(16) "one or more acres", 31.06(3) "five (5) or more acres";
Somers 17.04(A)(2)(e) "less than five acres".
"""

from __future__ import annotations

import pytest

from georeview.rules import Condition, evaluate, judge, load_ordinance
from georeview.units import SQFT_PER_ACRE


def facts(**kw):
    base = {
        "jurisdiction.status": "village",
        "jurisdiction.share.village": 1.0,
        "jurisdiction.share.extraterritorial": 0.0,
        "jurisdiction.share.outside": 0.0,
        "activity.kinds": (),
        "activity.fill_cubic_yards": 0.0,
        "activity.pipe_length_ft": 0.0,
        "activity.on_platted_lot": False,
        "activity.lots_created": 0,
        "activity.land_division_acres": None,
        "activity.maintains_original_grade": None,
        "activity.part_of_common_plan": None,
        "steep_slope_area_sqft": 0.0,
        "steep_slope_area_gt_sqft": 0.0,
        "floodplain_in_disturbance_sqft": 0.0,
        "wetland_in_disturbance_sqft": 0.0,
    }
    base.update(kw)
    sqft = base.setdefault("disturbed_area_sqft", 0.0)
    base.setdefault("disturbed_area_acres", sqft / SQFT_PER_ACRE)
    base.setdefault("disturbed_at_once_acres", base["disturbed_area_acres"])
    return base


def finding(j, rule_id):
    return next(f for f in j.findings if f.rule_id == rule_id)


DEER = load_ordinance("deerfield")
SOM = load_ordinance("somers")


@pytest.mark.parametrize(("sqft", "regulated"), [(3999.0, False), (4000.0, True)])
def test_deerfield_4000_sqft_edge(sqft, regulated):
    j = judge(DEER, facts(disturbed_area_sqft=sqft))
    assert j.regulated is regulated
    assert finding(j, "deerfield.31.06.1.C").applies is regulated


@pytest.mark.parametrize(("acres", "category"), [(0.99, "minor"), (1.0, "major")])
def test_deerfield_one_acre_edge(acres, category):
    j = judge(DEER, facts(disturbed_area_sqft=acres * SQFT_PER_ACRE, disturbed_area_acres=acres))
    assert j.regulated is True
    assert j.category == category


@pytest.mark.parametrize(("acres", "larger"), [(4.9, False), (5.0, True)])
def test_deerfield_five_acre_edge(acres, larger):
    j = judge(DEER, facts(disturbed_area_sqft=acres * SQFT_PER_ACRE, disturbed_area_acres=acres))
    assert j.larger_site is larger
    assert j.category == "major"


@pytest.mark.parametrize(("lots", "larger"), [(4, False), (5, True)])
def test_deerfield_five_lots(lots, larger):
    j = judge(
        DEER,
        facts(
            disturbed_area_sqft=20_000.0,
            **{
                "activity.kinds": ("subdivision",),
                "activity.lots_created": lots,
                "activity.land_division_acres": 3.0,
            },
        ),
    )
    assert j.larger_site is larger
    assert j.category == "major"  # a subdivision is major whatever its size (31.02(16))


@pytest.mark.parametrize(("cy", "regulated"), [(399.0, False), (400.0, True)])
def test_deerfield_400_cubic_yards(cy, regulated):
    j = judge(DEER, facts(disturbed_area_sqft=1000.0, **{"activity.fill_cubic_yards": cy}))
    assert j.regulated is regulated


@pytest.mark.parametrize(("ft", "regulated"), [(299.0, False), (300.0, True)])
def test_deerfield_300_ft_pipe(ft, regulated):
    j = judge(DEER, facts(disturbed_area_sqft=1000.0, **{"activity.pipe_length_ft": ft}))
    assert j.regulated is regulated


def test_deerfield_extraterritorial_only_subdivisions():
    etj = {
        "jurisdiction.status": "extraterritorial",
        "jurisdiction.share.village": 0.0,
        "jurisdiction.share.extraterritorial": 1.0,
    }
    sub = judge(
        DEER, facts(disturbed_area_sqft=50_000.0, **etj, **{"activity.kinds": ("subdivision",)})
    )
    shed = judge(
        DEER, facts(disturbed_area_sqft=50_000.0, **etj, **{"activity.kinds": ("building",)})
    )
    assert sub.regulated is True
    assert shed.regulated is False
    assert all(
        f.status == "not_applicable" for f in shed.findings if f.kind in ("limit", "required")
    )


def test_somers_reaches_extraterritorial_for_any_activity():
    etj = {
        "jurisdiction.status": "extraterritorial",
        "jurisdiction.share.village": 0.0,
        "jurisdiction.share.extraterritorial": 1.0,
    }
    j = judge(SOM, facts(disturbed_area_sqft=500.0, **etj, **{"activity.kinds": ("building",)}))
    assert j.regulated is True  # 17.04(B): "even if plat approval is not involved"
    assert j.category == "minor"


def test_outside_is_never_regulated():
    out = {
        "jurisdiction.status": "outside",
        "jurisdiction.share.village": 0.0,
        "jurisdiction.share.outside": 1.0,
    }
    for o in (DEER, SOM):
        assert judge(o, facts(disturbed_area_sqft=1e6, **out)).regulated is False


@pytest.mark.parametrize(("acres", "exempt"), [(4.9, True), (5.0, False)])
def test_somers_routine_maintenance_five_acres(acres, exempt):
    j = judge(
        SOM,
        facts(
            disturbed_area_sqft=acres * SQFT_PER_ACRE,
            disturbed_area_acres=acres,
            **{"activity.kinds": ("maintenance",), "activity.maintains_original_grade": True},
        ),
    )
    assert j.exempt is exempt
    assert j.regulated is (not exempt)


@pytest.mark.parametrize(("acres", "category"), [(0.99, "minor"), (1.0, "major")])
def test_somers_one_acre_split(acres, category):
    j = judge(SOM, facts(disturbed_area_sqft=acres * SQFT_PER_ACRE, disturbed_area_acres=acres))
    assert j.category == category


@pytest.mark.parametrize("kind", ["agricultural", "silviculture", "state_agency", "federal_exempt"])
def test_somers_exemptions(kind):
    j = judge(SOM, facts(disturbed_area_sqft=80_000.0, **{"activity.kinds": (kind,)}))
    assert j.regulated is False


def test_deerfield_agricultural_excluded():
    j = judge(DEER, facts(disturbed_area_sqft=80_000.0, **{"activity.kinds": ("agricultural",)}))
    assert j.exempt is True
    assert j.regulated is False


def test_missing_fact_is_needs_info_not_a_guess():
    # 1,000 sq ft disturbed, fill volume not given: (D) cannot be decided, so neither can
    # regulation; the finding says needs_info and names the field.
    j = judge(DEER, facts(disturbed_area_sqft=1000.0, **{"activity.fill_cubic_yards": None}))
    assert j.regulated is None
    f = finding(j, "deerfield.31.06.1.D")
    assert f.status == "needs_info"
    assert "fill_cubic_yards" in f.message


def test_missing_fact_does_not_matter_when_another_trigger_holds():
    j = judge(DEER, facts(disturbed_area_sqft=5000.0, **{"activity.fill_cubic_yards": None}))
    assert j.regulated is True


def test_somers_slope_finding_uses_20_percent_or_more():
    # Somers 17.08(C)(3)(c) "20% or more" reads the >= area; Deerfield 31.06(4) "more than
    # 20 percent" reads the > area. A disturbance exactly at 20 % differs between them.
    f = facts(
        disturbed_area_sqft=2 * SQFT_PER_ACRE,
        disturbed_area_acres=2.0,
        steep_slope_area_sqft=500.0,
        steep_slope_area_gt_sqft=0.0,
    )
    som = judge(SOM, f)
    # 31.06(4) master-plan conservancy areas are the Village's to say: here none
    deer = judge(DEER, {**f, "village.master_plan_area": False})
    assert som.flags["steep"] is True
    assert deer.flags["extraordinary"] is False


def test_kleene_logic():
    t = Condition(fact="a", op="is_true")
    u = Condition(fact="missing", op="is_true")
    ff = Condition(fact="b", op="is_true")
    fx = {"a": True, "b": False}
    assert evaluate(Condition(all=(t, u)), fx) is None
    assert evaluate(Condition(all=(ff, u)), fx) is False
    assert evaluate(Condition(any=(t, u)), fx) is True
    assert evaluate(Condition(any=(ff, u)), fx) is None
    assert evaluate(Condition.model_validate({"not": {"fact": "a", "op": "is_true"}}), fx) is False


def test_every_rule_has_a_citation_and_words():
    for o in (DEER, SOM):
        ids = [r.id for r in o.rules]
        assert len(ids) == len(set(ids))
        for r in o.rules:
            assert r.citation.startswith("§")
            assert r.title
