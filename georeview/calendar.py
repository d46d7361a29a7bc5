"""Permit calendar: business days, holidays and the deadlines a permit report lists.

Periods are counted as Wis. Stat. § 990.001(4)(a) says: the first day is excluded and the last
included. A period in business (Somers 17.05(D)) or working (Deerfield 31.02(36)) days skips
weekends and the days the municipality's office is closed; a period in calendar days whose last
day is a Sunday or legal holiday may end on the next secular day (§ 990.001(4)(b)).

Every holiday, office closure and deadline is data in ``georeview/data/calendar.toml``; a third
village needs a new table there, not new code.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from georeview.config import package_data
from georeview.errors import ConfigError, InputError
from georeview.procedure.categories import for_category, only_for

__all__ = [
    "Deadline",
    "add_business_days",
    "add_calendar_days",
    "closures",
    "deadlines",
    "is_business_day",
    "is_secular_day",
    "legal_holidays",
    "next_secular_day",
    "starts_after_decision",
    "subtract_business_days",
]

logger = logging.getLogger(__name__)

_CONFIG_NAME = "calendar.toml"
#: Where the shared holiday data lives, for messages.
_DATA_PATH = f"georeview/data/{_CONFIG_NAME}"
_SATURDAY = 5
_SUNDAY = 6
_FACTS = (
    "application_date",
    "additional_info_date",
    "issue_date",
    "appeal_filed_date",
    "start_date",
    "controls_install_date",
    "citizen_appeal_filed_date",
    "stop_work_order_date",
)
_HOURS_PER_DAY = 24


def _config() -> dict[str, Any]:
    """Load ``georeview/data/calendar.toml`` once (it is read-only package data)."""
    return package_data(_CONFIG_NAME)


def _entry(table: str, key: str, what: str) -> dict[str, Any]:
    """Entry ``key`` of table ``table`` of the shared ``calendar.toml``, or a ConfigError."""
    entries = _config()[table]
    if key not in entries:
        raise ConfigError(f"unknown {what} {key!r}", path=_DATA_PATH, field=table)
    entry: dict[str, Any] = entries[key]
    return entry


def municipality_calendar(name: str) -> dict[str, Any]:
    """Return the calendar of a municipality (``ordinances/<name>/calendar.toml``).

    Raises
    ------
    georeview.errors.ConfigError
        Unknown municipality, or its folder has no calendar.
    """
    from georeview.ordinances import table

    return table(name, "calendar")


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> dt.date:
    """Return the n-th (1-based; -1 = last) given weekday (0 = Monday) of a month."""
    if n > 0:
        first = dt.date(year, month, 1)
        day = first + dt.timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
        if day.month != month:
            raise ConfigError(f"there is no weekday {weekday} number {n} in {year}-{month:02d}")
        return day
    next_month = dt.date(year + month // 12, month % 12 + 1, 1)
    last = next_month - dt.timedelta(days=1)
    return last - dt.timedelta(days=(last.weekday() - weekday) % 7)


def _holiday_date(holiday_id: str, year: int) -> dt.date | None:
    """Return the (unshifted) date of a configured holiday in a year, or None if none that year."""
    spec = _entry("holidays", holiday_id, "holiday id")
    rule = spec["rule"]
    if rule == "fixed":
        return dt.date(year, spec["month"], spec["day"])
    if rule == "nth_weekday":
        return _nth_weekday(year, spec["month"], spec["weekday"], spec["n"])
    if rule == "day_after":
        base = _holiday_date(spec["of"], year)
        return None if base is None else base + dt.timedelta(days=spec["offset_days"])
    if rule == "weekday_on_or_after":
        years = spec.get("years", "all")
        if (years == "even" and year % 2) or (years == "odd" and not year % 2):
            return None
        start = dt.date(year, spec["month"], spec["day"])
        return start + dt.timedelta(days=(spec["weekday"] - start.weekday()) % 7)
    raise ConfigError(
        f"unknown holiday rule {rule!r}",
        path=_DATA_PATH,
        field=f"holidays.{holiday_id}.rule",
    )


def _observed(
    holiday_ids: list[str], year: int, saturday_shift: int, sunday_shift: int
) -> dict[dt.date, str]:
    """Observed dates of the holidays falling in ``year`` (and shifted into it), with names."""
    table = _config()["holidays"]
    out: dict[dt.date, str] = {}
    # Look at the neighbouring years too: 1 Jan on a Saturday is observed on 31 Dec before.
    for y in (year - 1, year, year + 1):
        for hid in holiday_ids:
            day = _holiday_date(hid, y)
            if day is None:
                continue
            wd = day.weekday()
            if wd >= _SATURDAY:
                if not table[hid].get("shift_when_weekend", True):
                    continue
                shift = saturday_shift if wd == _SATURDAY else sunday_shift
                day = day + dt.timedelta(days=shift)
            if day.year == year:
                name = table[hid]["name"]
                out[day] = f"{out[day]}; {name}" if day in out else name
    return out


@functools.cache
def closures(municipality: str, year: int) -> Mapping[dt.date, str]:
    """Weekdays the municipality's office is closed in a year, as observed.

    Parameters
    ----------
    municipality : str
        ``"somers"``, ``"deerfield"`` or another entry of ``calendar.toml``.
    year : int
        Calendar year.

    Returns
    -------
    Mapping[datetime.date, str]
        Observed closure date -> holiday name (weekend dates are included only if configured
        without a shift; they are weekends anyway).
    """
    spec = municipality_calendar(municipality)
    out = _observed(
        list(spec["closures"]), year, spec["saturday_shift_days"], spec["sunday_shift_days"]
    )
    for text in spec.get("extra_closures", []):
        day = dt.date.fromisoformat(text)
        if day.year == year:
            out[day] = "office closure (extra_closures)"
    return dict(sorted(out.items()))


@functools.cache
def legal_holidays(year: int, holiday_set: str = "wisconsin_legal") -> Mapping[dt.date, str]:
    """Legal holidays of a year under a holiday set (default: Wis. Stat. § 995.20).

    Parameters
    ----------
    year : int
        Calendar year.
    holiday_set : str
        A ``[holiday_sets.*]`` entry of ``calendar.toml``.

    Returns
    -------
    Mapping[datetime.date, str]
        Both the statutory date and, where it falls on a Sunday, the succeeding Monday (the
        observed day under § 995.20), mapped to the holiday name.
    """
    spec = _entry("holiday_sets", holiday_set, "holiday set")
    ids = list(spec["holidays"])
    out = _observed(ids, year, spec["saturday_shift_days"], spec["sunday_shift_days"])
    out.update(_observed(ids, year, 0, 0))  # the statutory day itself stays a legal holiday
    return dict(sorted(out.items()))


def is_business_day(day: dt.date, municipality: str) -> bool:
    """Return True if ``day`` is a business (Somers) or working (Deerfield) day.

    Parameters
    ----------
    day : datetime.date
        The day to test.
    municipality : str
        Municipality name in ``calendar.toml``.

    Returns
    -------
    bool
        False on Saturdays, Sundays and the municipality's observed office closures.
    """
    return day.weekday() < _SATURDAY and day not in closures(municipality, day.year)


def _check_count(value: object, field: str) -> None:
    """Refuse a count of days that is not a non-negative integer (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{field} must be a non-negative integer, got {value!r}", field=field)


def _as_date(value: object, field: str) -> dt.date:
    """Check that a value is a date (a datetime is reduced to its date)."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    raise InputError(f"expected a date, got {value!r}", field=field)


def add_business_days(start: dt.date, n: int, municipality: str) -> dt.date:
    """Return the date ``n`` business days after ``start``.

    The first day (``start``) is excluded and the last included (Wis. Stat. § 990.001(4)(a));
    Saturdays, Sundays and the municipality's observed office closures are not counted.

    Parameters
    ----------
    start : datetime.date
        The day of the event the period runs from (e.g. receipt of a complete application).
    n : int
        Number of business days, ``n >= 0``. ``n = 0`` returns ``start``.
    municipality : str
        ``"somers"`` (business day, 17.05(D)) or ``"deerfield"`` (working day, 31.02(36)).

    Returns
    -------
    datetime.date
        The last day of the period: always a business day when ``n > 0``.

    Raises
    ------
    georeview.errors.ConfigError
        Unknown municipality.
    georeview.errors.InputError
        ``n`` negative or not an integer, or ``start`` not a date.
    """
    return _count_business_days(_as_date(start, "start"), n, municipality, step_days=1)


def subtract_business_days(end: dt.date, n: int, municipality: str) -> dt.date:
    """Return the day that is ``n`` business days before ``end``.

    Counting back from ``end`` (excluded), the n-th business day: a Monday start and
    ``n = 2`` give the Thursday before (Friday is one working day prior, Thursday two), which
    is the last day to act "at least two working days prior to commencing" (Deerfield
    31.12(2)(B)).

    Raises
    ------
    georeview.errors.InputError
        ``n`` negative or not an integer, or ``end`` not a date.
    """
    return _count_business_days(_as_date(end, "end"), n, municipality, step_days=-1)


def _count_business_days(start: dt.date, n: int, municipality: str, *, step_days: int) -> dt.date:
    """Step from ``start`` (excluded) a day at a time until ``n`` business days are counted."""
    municipality_calendar(municipality)
    _check_count(n, "n")
    day = start
    counted = 0
    step = dt.timedelta(days=step_days)
    while counted < n:  # days of a permit period, a few dozen: not a loop over cells
        day += step
        if is_business_day(day, municipality):
            counted += 1
    return day


def is_secular_day(day: dt.date, holiday_set: str = "wisconsin_legal") -> bool:
    """Return True unless ``day`` is a Sunday or a legal holiday (§ 990.001(4)(b)).

    Saturdays are secular days; § 990.001(4)(c) (filings with an office closed on Saturday) is a
    separate rule not applied here.
    """
    return day.weekday() != _SUNDAY and day not in legal_holidays(day.year, holiday_set)


def next_secular_day(day: dt.date, holiday_set: str = "wisconsin_legal") -> dt.date:
    """Return ``day`` if it is a secular day, else the next one (Wis. Stat. § 990.001(4)(b))."""
    while not is_secular_day(day, holiday_set):
        day += dt.timedelta(days=1)
    return day


def add_calendar_days(
    start: dt.date, n: int, *, municipality: str | None = None, extend_last_day: bool = False
) -> dt.date:
    """Return the last day of a period of ``n`` calendar days after ``start``.

    Parameters
    ----------
    start : datetime.date
        The day of the event (excluded, § 990.001(4)(a)).
    n : int
        Number of days, ``n >= 0``.
    municipality : str, optional
        Needed with ``extend_last_day``: picks the legal-holiday set of the municipality.
    extend_last_day : bool
        When True, a last day on a Sunday or legal holiday moves to the next secular day
        (§ 990.001(4)(b)).

    Returns
    -------
    datetime.date
        ``start + n`` days, extended when asked.
    """
    start = _as_date(start, "start")
    _check_count(n, "n")
    day = start + dt.timedelta(days=n)
    if extend_last_day:
        if municipality is None:
            raise InputError("extend_last_day needs a municipality", field="municipality")
        day = next_secular_day(day, municipality_calendar(municipality)["legal_holidays"])
    return day


def _add_years(start: dt.date, years: int) -> dt.date:
    """Return the same month and day ``years`` later (29 February becomes 28 February)."""
    try:
        return start.replace(year=start.year + years)
    except ValueError:
        return start.replace(year=start.year + years, day=28)


@dataclass(frozen=True)
class Deadline:
    """One deadline of a permit: what, when, under which rule, and why.

    Attributes
    ----------
    id : str
        Stable identifier from ``calendar.toml``.
    name : str
        What must happen by ``date``.
    date : datetime.date or None
        The last day; None when the fact it runs from is not known yet.
    citation : str
        Ordinance section.
    rule : str
        How the date was counted (e.g. "15 business days after 2025-11-20").
    basis : str
        The ordinance's words, and any assumption made.
    """

    id: str
    name: str
    date: dt.date | None
    citation: str
    rule: str
    basis: str

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (the date as ISO text or None)."""
        return {
            "id": self.id,
            "name": self.name,
            "date": None if self.date is None else self.date.isoformat(),
            "citation": self.citation,
            "rule": self.rule,
            "basis": self.basis,
        }


#: What a deadline computer returns: the date, how it was counted, and the basis; or
#: ``None`` for the date with, as the rule, the fact it still needs.
_Counted = tuple[dt.date | None, str, str]


def _business_days(
    spec: Mapping[str, Any], municipality: str, start: dt.date, basis: str
) -> _Counted:
    """``days`` business days after (or, with ``before``, before) the event."""
    mspec = municipality_calendar(municipality)
    before = spec.get("before", False)
    count = subtract_business_days if before else add_business_days
    date = count(start, spec["days"], municipality)
    way = "before" if before else "after"
    rule = f"{spec['days']} {mspec['day_kind']}s {way} {start.isoformat()}"
    basis = f"{basis} Counting per {mspec['definition_citation']}. {mspec['assumed']}"
    return date, rule, basis


def _hours(spec: Mapping[str, Any], municipality: str, start: dt.date, basis: str) -> _Counted:
    """``hours`` after the event, a whole number of days: by the same clock time."""
    hours = spec["hours"]
    if hours % _HOURS_PER_DAY:
        raise ConfigError(
            f"hours must be a whole number of days, got {hours}",
            path=f"georeview/ordinances/{municipality}/{_CONFIG_NAME}",
            field=f"deadlines.{spec['id']}.hours",
        )
    date = start + dt.timedelta(days=hours // _HOURS_PER_DAY)
    rule = (
        f"{hours} hours after the event on {start.isoformat()}: by the same clock time "
        f"on {date.isoformat()}"
    )
    return date, rule, basis


def _calendar_days(
    spec: Mapping[str, Any],
    municipality: str,
    start: dt.date,
    basis: str,
    facts: Mapping[str, Any],
) -> _Counted:
    """``days`` calendar days (or a longer fact's), plus extensions, the last day extended."""
    mspec = municipality_calendar(municipality)
    days = spec["days"]
    rule = f"{days} days after {start.isoformat()}"
    extra = spec.get("at_least_fact")
    if extra is not None and facts.get(extra) is not None and facts[extra] > days:
        days = int(facts[extra])
        rule = f"{days} days ({extra.replace('_', ' ')}) after {start.isoformat()}"
    elif extra is not None and facts.get(extra) is None:
        # "whichever is longer": without the other term the longer is unknown
        return (
            None,
            f"needs {extra}",
            f"{basis} Not computed: {extra.replace('_', ' ')} not given, so which "
            "term is the longer is unknown.",
        )
    days += spec.get("plus_days", 0)
    if spec.get("plus_days"):
        rule += f", plus {spec['plus_days']} days of extensions"
    extend = spec.get("extend_last_day", mspec.get("extend_last_day", False))
    nominal = add_calendar_days(start, days)
    date = add_calendar_days(start, days, municipality=municipality, extend_last_day=extend)
    if date != nominal:
        cite = mspec.get("last_day_citation")
        rule += (
            f"; {nominal.isoformat()} is a Sunday or legal holiday, so the last day is the "
            "next secular day" + (f" ({cite})" if cite else "")
        )
    return date, rule, basis


def _deadline(spec: Mapping[str, Any], municipality: str, facts: Mapping[str, Any]) -> Deadline:
    """Compute one configured deadline from the facts."""
    start = facts.get(spec["from"])
    common = {"id": spec["id"], "name": spec["name"], "citation": spec["citation"]}
    if start is None:
        return Deadline(
            **common,
            date=None,
            rule=f"needs {spec['from']}",
            basis=f"{spec['basis']} Not computed: {spec['from'].replace('_', ' ')} not given.",
        )
    kind = spec["kind"]
    basis = spec["basis"]
    if kind == "business_days":
        date, rule, basis = _business_days(spec, municipality, start, basis)
    elif kind == "hours":
        date, rule, basis = _hours(spec, municipality, start, basis)
    elif kind == "calendar_days":
        date, rule, basis = _calendar_days(spec, municipality, start, basis, facts)
    elif kind == "years":
        date = _add_years(start, spec["years"])
        rule = f"{spec['years']} year(s) from {start.isoformat()}"
    else:
        raise ConfigError(
            f"unknown deadline kind {kind!r}",
            path=_DATA_PATH,
            field=f"municipalities.{municipality}.deadlines.{spec['id']}",
        )
    return Deadline(**common, date=date, rule=rule, basis=basis)


def deadlines(
    municipality: str,
    *,
    application_date: dt.date,
    category: str | None,
    issue_date: dt.date | None = None,
    additional_info_date: dt.date | None = None,
    building_permit_days: int | None = None,
    appeal_filed_date: dt.date | None = None,
    start_date: dt.date | None = None,
    controls_install_date: dt.date | None = None,
    citizen_appeal_filed_date: dt.date | None = None,
    stop_work_order_date: dt.date | None = None,
) -> list[Deadline]:
    """List the permit deadlines of a municipality from the facts known so far.

    Parameters
    ----------
    municipality : str
        ``"somers"`` or ``"deerfield"``.
    application_date : datetime.date
        Receipt of the complete application (Somers) / completed control plan (Deerfield).
    category : {"major", "minor"} or None
        Deerfield's category; None lists the deadlines of every category.
    issue_date : datetime.date, optional
        Date the permit was issued (or the decision being appealed was made).
    additional_info_date : datetime.date, optional
        Receipt of additional information requested by the Administrator (Somers 17.09(C)(4)).
    building_permit_days : int, optional
        Length of the building permit or other construction authorization, in days.
    appeal_filed_date : datetime.date, optional
        Receipt of a written appeal and its fee (Deerfield 31.15(2)(B)).
    start_date : datetime.date, optional
        Planned start of land disturbing activity (``[activity] start_date``).
    controls_install_date : datetime.date, optional
        Installation of the temporary erosion and sediment controls (``plan.sequence``).
    citizen_appeal_filed_date : datetime.date, optional
        Filing of a citizen appeal with the Village.
    stop_work_order_date : datetime.date, optional
        Posting of a stop work order.

    Returns
    -------
    list of Deadline
        In the order of ``calendar.toml``; a deadline whose starting fact is unknown has
        ``date=None``.
    """
    spec = municipality_calendar(municipality)
    listed = for_category(spec.get("deadlines", []), category)
    if building_permit_days is not None:
        _check_count(building_permit_days, "building_permit_days")
    facts: dict[str, Any] = {"building_permit_days": building_permit_days}
    values = (
        application_date,
        additional_info_date,
        issue_date,
        appeal_filed_date,
        start_date,
        controls_install_date,
        citizen_appeal_filed_date,
        stop_work_order_date,
    )
    for name, value in zip(_FACTS, values, strict=True):
        facts[name] = None if value is None else _as_date(value, name)
    if facts["application_date"] is None:
        raise InputError("application_date is required", field="application_date")
    out = []
    for item, only in listed:
        deadline = _deadline(item, municipality, facts)
        out.append(replace(deadline, name=only_for(deadline.name, only)) if only else deadline)
    logger.debug("%d deadlines for %s", len(out), municipality)
    return out


def starts_after_decision(
    municipality: str,
    listed: list[Deadline],
    application_date: dt.date | None,
    start_date: dt.date | None,
) -> bool | None:
    """Whether the planned start leaves the Village its whole review period.

    Work may not begin before the plan is approved and the permit issued. The deadlines
    marked ``decision = true`` in ``calendar.toml`` are the latest days the Village must
    decide by.

    Returns
    -------
    bool or None
        True when ``start_date`` falls after every listed decision deadline; False when it
        falls on or before ``application_date`` (work planned before the application is even
        received); None otherwise (the start depends on when the Village approves) or when a
        date is unknown.
    """
    spec = municipality_calendar(municipality)
    ids = {d["id"] for d in spec.get("deadlines", []) if d.get("decision")}
    due = [d.date for d in listed if d.id in ids]
    if start_date is None or application_date is None:
        return None
    if start_date <= application_date:
        return False
    if not due or any(d is None for d in due):
        return None
    return True if start_date > max(d for d in due if d is not None) else None


def work_within_term(
    municipality: str,
    *,
    application_date: dt.date | None,
    start_date: dt.date | None,
    end_date: dt.date | None,
    category: str | None = None,
    building_permit_days: int | None = None,
) -> bool | None:
    """Whether the planned work ends before the permit expires, whenever it is issued.

    The deadlines marked ``term = true`` in ``calendar.toml`` count the permit's term from
    its issue date, which is not known at review. It is bounded: the permit is issued no
    earlier than the application and, since no work may begin without it, no later than
    the planned start. A ``term = true`` deadline with ``plus_days`` also counts the
    extensions the official may grant.

    Returns
    -------
    bool or None
        True when the work ends within the term counted from the application date (any
        later issue only lengthens it); False when it ends after the term counted from
        the planned start, extensions included; None when it depends on the issue date
        or an extension, or a date or the term is unknown.
    """
    if application_date is None or start_date is None or end_date is None:
        return None
    spec = municipality_calendar(municipality)
    terms = [t for t, _ in for_category(spec.get("deadlines", []), category) if t.get("term")]
    if not terms:
        return None
    base = [t for t in terms if not t.get("plus_days")]
    longest = [t for t in terms if t.get("plus_days")] or base

    def expiry(items: list[Mapping[str, Any]], issued: dt.date) -> dt.date | None:
        facts = {"issue_date": issued, "building_permit_days": building_permit_days}
        dates = [_deadline(t, municipality, facts).date for t in items]
        return None if not dates or any(d is None for d in dates) else max(dates)  # type: ignore[type-var]

    earliest = expiry(base, application_date)
    latest = expiry(longest, start_date)
    if earliest is not None and end_date <= earliest:
        return True
    if latest is not None and end_date > latest:
        return False
    return None


def controls_in_time(
    municipality: str, listed: list[Deadline], controls_install_date: dt.date | None
) -> bool | None:
    """Whether the plan's controls are complete by the deadlines marked ``controls_by = true``.

    Returns
    -------
    bool or None
        True when ``controls_install_date`` falls on or before every such deadline; False
        when after one; None when a date is unknown or no deadline is marked.
    """
    spec = municipality_calendar(municipality)
    ids = {d["id"] for d in spec.get("deadlines", []) if d.get("controls_by")}
    due = [d.date for d in listed if d.id in ids]
    if controls_install_date is None or not due or any(d is None for d in due):
        return None
    return all(controls_install_date <= d for d in due if d is not None)
