"""Permit calendar tests.

Every expected date is hand-counted on a printed calendar (``cal 11 2025`` etc.); the counting is
written next to each case. Rules applied:
- Wis. Stat. § 990.001(4)(a): "excluding the first day and including the last".
- § 990.001(4)(b): a last day on a Sunday or legal holiday moves to the next secular day.
- § 995.20: legal holidays; a Sunday holiday is observed the succeeding Monday (no Saturday rule).
- Somers 17.05(D) business day / Deerfield 31.02(36) working day, with the office closures of
  georeview/data/calendar.toml (Somers also closes the day after Thanksgiving and Christmas Eve;
  both villages observe a Saturday holiday the Friday before: assumed, to confirm with them).
"""

from __future__ import annotations

import datetime as dt

import pytest

from georeview.calendar import (
    Deadline,
    add_business_days,
    add_calendar_days,
    closures,
    deadlines,
    is_business_day,
    is_secular_day,
    legal_holidays,
    next_secular_day,
)
from georeview.errors import ConfigError, InputError
from tests._build import shipped_municipalities

D = dt.date


# --- § 990.001(4)(a): first day excluded, last included --------------------------------------
def test_first_day_excluded():
    # Mon 2025-09-08 + 1 business day: the 8th is not counted, Tue the 9th is day 1.
    assert add_business_days(D(2025, 9, 8), 1, "somers") == D(2025, 9, 9)
    # Zero days: the period ends on the day it starts.
    assert add_business_days(D(2025, 9, 8), 0, "somers") == D(2025, 9, 8)
    # Start on Saturday 2025-09-13: Sun 14 is not a business day, Mon 15 is day 1.
    assert add_business_days(D(2025, 9, 13), 1, "deerfield") == D(2025, 9, 15)
    # Calendar days: 2025-09-08 + 5 days = Sat 2025-09-13 (the 8th excluded, 9..13 counted).
    assert add_calendar_days(D(2025, 9, 8), 5) == D(2025, 9, 13)


# --- Labor Day --------------------------------------------------------------------------------
@pytest.mark.parametrize("municipality", shipped_municipalities())
def test_labor_day_week(municipality):
    # Fri 2025-08-29 + 3: Sat 30, Sun 31 weekend; Mon Sep 1 Labor Day (1st Monday in September,
    # § 995.20) skipped; Tue 2 = 1, Wed 3 = 2, Thu 4 = 3.
    assert add_business_days(D(2025, 8, 29), 3, municipality) == D(2025, 9, 4)
    assert not is_business_day(D(2025, 9, 1), municipality)


# --- Thanksgiving -----------------------------------------------------------------------------
def test_thanksgiving_somers_15_business_days():
    # Somers 17.09(C)(1): complete application received Thu 2025-11-20.
    # Fri 21 = 1, Mon 24 = 2, Tue 25 = 3, Wed 26 = 4, Thu 27 Thanksgiving (4th Thursday) closed,
    # Fri 28 day after Thanksgiving closed (assumed office closure), Mon Dec 1 = 5, 2 = 6, 3 = 7,
    # 4 = 8, 5 = 9, Mon 8 = 10, 9 = 11, 10 = 12, 11 = 13, 12 = 14, Mon 15 = 15.
    assert add_business_days(D(2025, 11, 20), 15, "somers") == D(2025, 12, 15)


def test_thanksgiving_friday_differs_between_villages():
    # From Wed 2025-11-26, 3 days.
    # Deerfield 31.02(36): only legal holidays are excluded; Fri 28 is not a § 995.20 holiday, so
    # Thu 27 skipped, Fri 28 = 1, Mon Dec 1 = 2, Tue Dec 2 = 3.
    assert add_business_days(D(2025, 11, 26), 3, "deerfield") == D(2025, 12, 2)
    # Somers: Fri 28 office closed (assumed), so Mon 1 = 1, Tue 2 = 2, Wed 3 = 3.
    assert add_business_days(D(2025, 11, 26), 3, "somers") == D(2025, 12, 3)


# --- Christmas --------------------------------------------------------------------------------
def test_christmas_week():
    # Mon 2025-12-22 + 5. Somers: Tue 23 = 1, Wed 24 Christmas Eve closed (assumed), Thu 25
    # Christmas closed, Fri 26 = 2, Mon 29 = 3, Tue 30 = 4, Wed 31 = 5.
    assert add_business_days(D(2025, 12, 22), 5, "somers") == D(2025, 12, 31)
    # Deerfield: Tue 23 = 1, Wed 24 = 2 (not a legal holiday), Thu 25 skipped, Fri 26 = 3,
    # Mon 29 = 4, Tue 30 = 5.
    assert add_business_days(D(2025, 12, 22), 5, "deerfield") == D(2025, 12, 30)


# --- New Year across a year boundary ----------------------------------------------------------
def test_new_year_across_year_boundary():
    # Mon 2025-12-29 + 4 (Somers): Tue 30 = 1, Wed 31 = 2, Thu 2026-01-01 closed, Fri Jan 2 = 3,
    # weekend, Mon Jan 5 = 4.
    assert add_business_days(D(2025, 12, 29), 4, "somers") == D(2026, 1, 5)
    # Somers 17.09(C)(4): additional information received Mon 2025-12-22, 10 business days:
    # Tue 23 = 1, (24, 25 closed), Fri 26 = 2, Mon 29 = 3, Tue 30 = 4, Wed 31 = 5, (Jan 1 closed),
    # Fri Jan 2 = 6, Mon 5 = 7, Tue 6 = 8, Wed 7 = 9, Thu Jan 8 = 10.
    assert add_business_days(D(2025, 12, 22), 10, "somers") == D(2026, 1, 8)


@pytest.mark.parametrize("municipality", shipped_municipalities())
def test_new_year_on_saturday_observed_previous_year(municipality):
    # 2022-01-01 was a Saturday: observed (office closed) Fri 2021-12-31 under the villages'
    # assumed Saturday-to-Friday practice. Thu 2021-12-30 + 1: Fri 31 closed, Mon 2022-01-03 = 1.
    assert D(2021, 12, 31) in closures(municipality, 2021)
    assert add_business_days(D(2021, 12, 30), 1, municipality) == D(2022, 1, 3)


# --- A Saturday July 4 ------------------------------------------------------------------------
@pytest.mark.parametrize("municipality", shipped_municipalities())
def test_saturday_july_4_observed_friday(municipality):
    # 2026-07-04 is a Saturday; the village office is closed Fri 2026-07-03 (assumed practice).
    # Thu 2026-07-02 + 1: Fri 3 closed, Sat 4, Sun 5, Mon 6 = 1.
    assert not is_business_day(D(2026, 7, 3), municipality)
    assert add_business_days(D(2026, 7, 2), 1, municipality) == D(2026, 7, 6)


def test_saturday_july_4_statute_has_no_friday_rule():
    # § 995.20 moves only a Sunday holiday (to Monday): Fri 2026-07-03 stays a secular day, and
    # Sat July 4 itself is the legal holiday, so a last day on July 4 moves past Sun 5 to Mon 6
    # (§ 990.001(4)(b)).
    assert D(2026, 7, 3) not in legal_holidays(2026)
    assert is_secular_day(D(2026, 7, 3))
    assert next_secular_day(D(2026, 7, 4)) == D(2026, 7, 6)


def test_sunday_july_4_observed_monday():
    # 2027-07-04 is a Sunday: the succeeding Monday (2027-07-05) is the legal holiday (§ 995.20).
    # Deerfield, Fri 2027-07-02 + 1: Mon 5 skipped, Tue 6 = 1.
    assert D(2027, 7, 5) in legal_holidays(2027)
    assert add_business_days(D(2027, 7, 2), 1, "deerfield") == D(2027, 7, 6)


def test_legal_holidays_2025_list():
    # § 995.20 days for 2025 read off the 2025 calendar: Jan 1 (Wed), 3rd Mon Jan = Jan 20,
    # 3rd Mon Feb = Feb 17, last Mon May = May 26, Jun 19, Jul 4, 1st Mon Sep = Sep 1,
    # 2nd Mon Oct = Oct 13, Nov 11, 4th Thu Nov = Nov 27, Dec 25; no general election (odd year).
    expected = {
        D(2025, 1, 1),
        D(2025, 1, 20),
        D(2025, 2, 17),
        D(2025, 5, 26),
        D(2025, 6, 19),
        D(2025, 7, 4),
        D(2025, 9, 1),
        D(2025, 10, 13),
        D(2025, 11, 11),
        D(2025, 11, 27),
        D(2025, 12, 25),
    }
    assert set(legal_holidays(2025)) == expected
    # 2026 is even: general election Tuesday after the 1st Monday in November = Nov 3.
    assert D(2026, 11, 3) in legal_holidays(2026)


# --- § 990.001(4)(b) on calendar-day periods -------------------------------------------------
def test_calendar_days_extend_to_next_secular_day():
    # 2025-11-25 + 30 days: Nov 26..30 = 5, Dec 1..25 = 30 -> Thu 2025-12-25 Christmas, a legal
    # holiday, so the last day becomes Fri 2025-12-26.
    assert add_calendar_days(D(2025, 11, 25), 30) == D(2025, 12, 25)
    got = add_calendar_days(D(2025, 11, 25), 30, municipality="deerfield", extend_last_day=True)
    assert got == D(2025, 12, 26)
    # A Saturday last day is not extended (Saturday is a secular day): 2025-11-20 + 30 = Sat Dec 20.
    got = add_calendar_days(D(2025, 11, 20), 30, municipality="deerfield", extend_last_day=True)
    assert got == D(2025, 12, 20)


# --- deadlines() ------------------------------------------------------------------------------
def _by_id(items: list[Deadline]) -> dict[str, Deadline]:
    return {d.id: d for d in items}


def test_somers_deadlines():
    out = _by_id(
        deadlines(
            "somers",
            application_date=D(2025, 11, 20),
            category="major",
            issue_date=D(2026, 3, 2),
            additional_info_date=D(2025, 12, 22),
            building_permit_days=90,  # shorter than 180 days: 180 is the longer
        )
    )
    assert out["review_complete_application"].date == D(2025, 12, 15)  # counted above
    assert out["review_complete_application"].citation == "Somers 17.09(C)(1)"
    assert out["review_additional_information"].date == D(2026, 1, 8)  # counted above
    # 17.09(G): 180 days from issue Mon 2026-03-02: Mar 3..31 = 29, Apr = 59, May = 90, Jun = 120,
    # Jul = 151, Aug 29 = 180 -> 2026-08-29.
    assert out["permit_expiry"].date == D(2026, 8, 29)
    # Extensions "not to exceed 180 days cumulatively": Aug 30..31 = 2, Sep = 32, Oct = 63,
    # Nov = 93, Dec = 124, Jan = 155, Feb 25 = 180 -> 2027-02-25.
    assert out["permit_expiry_latest"].date == D(2027, 2, 25)
    assert out["permit_expiry_latest"].to_dict()["date"] == "2027-02-25"


def test_somers_expiry_unknown_without_the_building_permit_term():
    # 17.09(G): "180 days, or the length of the building permit ..., whichever is longer":
    # without the building permit's term the longer is unknown, not 180 days.
    out = _by_id(
        deadlines(
            "somers", application_date=D(2025, 11, 20), category="major", issue_date=D(2026, 3, 2)
        )
    )
    assert out["permit_expiry"].date is None
    assert "building permit days not given" in out["permit_expiry"].basis


def test_somers_expiry_uses_longer_building_permit():
    out = _by_id(
        deadlines(
            "somers",
            application_date=D(2026, 2, 2),
            category=None,
            issue_date=D(2026, 3, 2),
            building_permit_days=365,
        )
    )
    # 365 days from 2026-03-02 (no Feb 29 in between) = 2027-03-02; + 180: Mar 3..31 = 29,
    # Apr = 59, May = 90, Jun = 120, Jul = 151, Aug 29 = 180 -> 2027-08-29.
    assert out["permit_expiry"].date == D(2027, 3, 2)
    assert out["permit_expiry_latest"].date == D(2027, 8, 29)


def test_deerfield_deadlines_major():
    out = _by_id(
        deadlines(
            "deerfield",
            application_date=D(2025, 11, 25),
            category="major",
            issue_date=D(2026, 5, 20),
            appeal_filed_date=D(2026, 6, 1),
        )
    )
    assert "review_minor" not in out
    # 31.10(1): 30 days from 2025-11-25 lands on Christmas -> Fri 2025-12-26 (see above).
    assert out["review_major"].date == D(2025, 12, 26)
    assert "990.001(4)(b)" in out["review_major"].rule
    # 31.12(1): one year from 2026-05-20.
    assert out["permit_expiry"].date == D(2027, 5, 20)
    # 31.15(1)(C): 45 days from 2026-05-20: May 21..31 = 11, June = 41, Jul 4 = 45, a Saturday
    # legal holiday -> Sun 5 not secular -> Mon 2026-07-06.
    assert out["appeal_filing"].date == D(2026, 7, 6)
    # 31.15(2)(B): 30 days from Mon 2026-06-01: Jun 2..30 = 29, Jul 1 = 30 -> Wed 2026-07-01.
    assert out["appeal_decision"].date == D(2026, 7, 1)


def test_deerfield_deadlines_minor_and_missing_facts():
    out = _by_id(deadlines("deerfield", application_date=D(2025, 11, 26), category="minor"))
    assert "review_major" not in out
    # 31.10(2): at most 3 working days from Wed 2025-11-26 -> Tue 2025-12-02 (counted above).
    assert out["review_minor"].date == D(2025, 12, 2)
    assert out["permit_expiry"].date is None
    assert "issue date not given" in out["permit_expiry"].basis


def test_deerfield_expiry_from_leap_day():
    # Documented choice: one year from 29 Feb is 28 Feb.
    out = _by_id(
        deadlines(
            "deerfield", application_date=D(2024, 1, 2), category="minor", issue_date=D(2024, 2, 29)
        )
    )
    assert out["permit_expiry"].date == D(2025, 2, 28)


# --- errors -----------------------------------------------------------------------------------
def test_unknown_municipality():
    with pytest.raises(ConfigError, match="no ordinance folder for municipality 'kenosha'"):
        add_business_days(D(2025, 1, 2), 3, "kenosha")
    with pytest.raises(ConfigError):
        deadlines("kenosha", application_date=D(2025, 1, 2), category=None)


@pytest.mark.parametrize("n", [-1, 1.5, True])
def test_bad_day_count(n):
    with pytest.raises(InputError):
        add_business_days(D(2025, 1, 2), n, "somers")


def test_bad_category():
    with pytest.raises(InputError, match="category"):
        deadlines("deerfield", application_date=D(2025, 1, 2), category="huge")
