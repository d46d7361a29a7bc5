"""Money tests: every expected figure is worked by hand from the ordinance clause quoted above it.

Sources: /work/shared/ordinances/deerfield-chapter-31-erosion-and-runoff-control.txt (31.11,
31.12(2)(A), 31.14(3), 31.15(1)) and somers-chapter-17-construction-site-erosion-control.txt
(17.09(B), 17.11, 17.13(F)).
"""

from __future__ import annotations

import json

import pytest

from georeview.errors import ConfigError, InputError
from georeview.procedure.fees import money


def _items(result):
    return {item.id: item for item in result.items}


def test_deerfield_major_fee_due():
    # 31.11(1): "The application fee for a major land disturbing activity permit shall be
    # thirty-five dollars ($35)." -> $35 when no plat/CSM review fee was paid.
    items = _items(money("deerfield", category="major", plat_fee_paid=False))
    assert items["application_fee"].amount_usd == 35.0
    assert items["application_fee"].status == "due"
    assert items["application_fee"].citation == "Deerfield 31.11(1)"
    # "... the applicant must pay the actual engineering and legal fees ..." -> no number.
    assert items["engineering_legal_fees"].amount_usd is None
    assert items["engineering_legal_fees"].status == "actual_cost"
    # Minor-only lines are not listed for a major activity.
    assert "application_fee_minor" not in items
    assert "forfeiture_minor" not in items


def test_deerfield_major_fee_waived_by_plat_fee():
    # 31.11(1): "Where plat or certified survey map review fees are paid ... for the same project
    # ... fee will be waived. Where the application fee is waived, the applicant must still pay
    # engineering and inspection fees" -> $0 waived, engineering still listed.
    items = _items(money("deerfield", category="major", plat_fee_paid=True))
    assert items["application_fee"].amount_usd == 0.0
    assert items["application_fee"].status == "waived"
    assert items["engineering_legal_fees"].status == "actual_cost"


def test_deerfield_major_fee_unknown_waiver_needs_info():
    items = _items(money("deerfield", category="major"))
    assert items["application_fee"].status == "needs_info"
    assert items["application_fee"].amount_usd == 35.0
    assert "plat fee paid" in items["application_fee"].note


@pytest.mark.parametrize(
    ("paid", "amount", "status"), [(False, 20.0, "due"), (True, 0.0, "waived")]
)
def test_deerfield_minor_fee(paid, amount, status):
    # 31.11(2): "The application fee for a minor land disturbing activity permit shall be twenty
    # dollars ($20). Where a building permit fee is applied and paid for in connection with the
    # same activity, then no additional fee need be paid" -> $20, or $0 with a building permit fee.
    items = _items(money("deerfield", category="minor", building_permit_fee_paid=paid))
    assert items["application_fee_minor"].amount_usd == amount
    assert items["application_fee_minor"].status == status
    assert "application_fee" not in items
    assert "security" not in items  # 31.12(2) lists the security for major permits only


@pytest.mark.parametrize(
    ("cost", "security"),
    [
        (10_000, 12_500.00),  # 1.25 x 10,000
        (8_437.50, 10_546.88),  # 1.25 x 8,437.50 = 10,546.875 -> half up to 10,546.88
        (0, 0.0),
    ],
)
def test_deerfield_security_125_percent(cost, security):
    # 31.12(2)(A): "an irrevocable letter of credit, certificate of deposit or certified check ...
    # in an amount equal to 125% of the estimated cost of all required control measures as
    # determined by the Village Engineer": due on the Village Engineer's estimate.
    decided = {"village.control_cost_usd": cost}
    items = _items(money("deerfield", category="major", decided=decided))
    assert items["security"].amount_usd == security  # exact to the cent
    assert items["security"].status == "due"
    assert items["security"].citation == "Deerfield 31.12(2)(A)"
    assert "the Village's estimate" in items["security"].note


def test_deerfield_security_on_the_applicants_estimate_is_provisional():
    # "... as determined by the Village Engineer": the applicant's own estimate gives the
    # amount to expect (1.25 x 10,000 = 12,500.00), never the amount due; the Village
    # Engineer's estimate, once recorded, replaces it (1.25 x 11,200 = 14,000.00).
    own = _items(money("deerfield", category="major", control_cost_usd=10_000))["security"]
    assert own.status == "needs_info"
    assert own.amount_usd == 12_500.00
    assert own.fact_value is None  # the security rule does not quote it as due
    assert "Provisional" in own.note
    assert "village.control_cost_usd" in own.note
    both = money(
        "deerfield",
        category="major",
        control_cost_usd=10_000,
        decided={"village.control_cost_usd": 11_200},
    )
    assert _items(both)["security"].amount_usd == 14_000.00
    assert _items(both)["security"].status == "due"


def test_village_activity_needs_no_permit_or_fees():
    # 31.08(2): "Before the Village of Deerfield ... commence any land disturbance ... there
    # shall be an approved control plan in place. No permit or fees are required for
    # Village activity." The Village records it; the applicant cannot claim it.
    village = {"village.village_activity": True}
    items = _items(money("deerfield", category="major", control_cost_usd=10_000, decided=village))
    for key in ("application_fee", "engineering_legal_fees", "security"):
        assert items[key].status == "waived", key
        assert items[key].amount_usd == 0.0
        assert "Deerfield 31.08(2)" in items[key].note
    assert items["forfeiture_major"].status == "range"  # violations still carry forfeitures
    private = _items(
        money("deerfield", category="major", decided={"village.village_activity": False})
    )
    assert private["application_fee"].status in ("due", "needs_info")


def test_deerfield_security_without_cost_needs_info():
    items = _items(money("deerfield", category="major"))
    assert items["security"].amount_usd is None
    assert items["security"].status == "needs_info"


def test_deerfield_appeal_fees():
    # 31.15(1)(A): "A twenty-five dollar ($25) fee must accompany any appeal or variance request
    # involving a minor land disturbing activity. A three hundred dollar ($300) fee must accompany
    # any appeal or variance request involving a major land disturbing activity."
    # 31.15(1)(B): citizens' appeal: "payment of a three hundred dollar ($300) fee".
    minor = _items(money("deerfield", category="minor"))
    major = _items(money("deerfield", category="major"))
    assert minor["appeal_fee_minor"].amount_usd == 25.0
    assert "appeal_fee_major" not in minor
    assert major["appeal_fee_major"].amount_usd == 300.0
    assert major["appeal_fee_major"].status == "if_appealed"
    assert minor["citizen_appeal_fee"].amount_usd == 300.0
    assert major["citizen_appeal_fee"].citation == "Deerfield 31.15(1)(B)"


def test_deerfield_forfeitures():
    # 31.14(3): "for major land disturbing activities, not less than $200 nor more than $2,000 ...
    # for minor land disturbing activities, not less than $50 nor more than $500 ... Each day a
    # violation exists shall constitute a separate offense."
    major = _items(money("deerfield", category="major"))["forfeiture_major"]
    minor = _items(money("deerfield", category="minor"))["forfeiture_minor"]
    assert (major.min_usd, major.max_usd) == (200.0, 2000.0)
    assert (minor.min_usd, minor.max_usd) == (50.0, 500.0)
    assert major.status == minor.status == "range"


def test_somers_fee_set_by_resolution():
    # 17.11: "The fees referred to in other sections of this ordinance shall be established by the
    # Village Board and may from time to time be modified by resolution." -> no amount in code.
    items = _items(money("somers", category="minor"))
    fee = items["application_fee"]
    assert fee.amount_usd is None
    assert fee.status == "see_schedule"
    assert "not in the ordinance" in fee.note
    # 17.13(F): "a forfeiture of not less than $50 nor more than $200 ... Each day a violation
    # exists shall constitute a separate offense."
    assert (items["forfeiture"].min_usd, items["forfeiture"].max_usd) == (50.0, 200.0)
    # 17.09(D): the Administrator "may require" a surety bond; no amount.
    assert items["surety"].amount_usd is None
    assert items["surety"].status == "discretionary"


def test_unknown_category_lists_everything_as_needs_info():
    items = _items(money("deerfield", category=None, control_cost_usd=1000))
    assert {"application_fee", "application_fee_minor", "security"} <= set(items)
    assert items["security"].status == "needs_info"
    assert items["citizen_appeal_fee"].status == "if_appealed"  # applies to every category


def test_to_dict_is_json():
    result = money("deerfield", category="major", control_cost_usd=10_000, plat_fee_paid=False)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["municipality"] == "deerfield"
    security = next(i for i in data["items"] if i["id"] == "security")
    assert security["amount_usd"] == 12_500.0
    assert {"name", "amount_usd", "citation", "note"} <= set(security)


def test_errors():
    with pytest.raises(ConfigError, match="no ordinance folder for municipality"):
        money("kenosha", category="major")
    with pytest.raises(InputError, match="category"):
        money("deerfield", category="large")
    with pytest.raises(InputError, match="control_cost_usd"):
        money("deerfield", category="major", control_cost_usd=-5)
    with pytest.raises(InputError, match="control_cost_usd"):
        money("deerfield", category="major", control_cost_usd=float("nan"))
