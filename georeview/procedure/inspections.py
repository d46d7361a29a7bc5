"""Inspection-log check: rains of 0.5 in or more and weeks without an inspection.

Somers 17.09(E)(7) and Deerfield 31.12(2)(G)/(3)(E) require an inspection after each rain of
one-half inch or more and at least once each week. From an inspection log (``date, inspector,
phase``) and daily rainfall (``date, rain_in``) this module lists every such rain with no
inspection in time and every calendar week without one, and renders a report a reviewer can file
(HTML, CSV or JSON from the same ``to_dict()``).

How "within 24 hours" and "each week" are applied to daily data is set in
``georeview/data/calendar.toml`` (``[municipalities.<name>.inspections]``) and printed in the
report.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from georeview.calendar import municipality_calendar
from georeview.config import MAX_DATE, MIN_DATE
from georeview.errors import ConfigError, DataSourceError, InputError, OutputError
from georeview.sanitise import SafeWriter

__all__ = [
    "IncompleteEntry",
    "Inspection",
    "InspectionResult",
    "MissedRain",
    "MissedWeek",
    "RainGap",
    "check",
    "read_log",
    "read_rain",
    "render_csv",
    "render_html",
    "run",
    "write",
]

logger = logging.getLogger(__name__)

LOG_COLUMNS = ("date", "inspector", "phase")
RAIN_COLUMNS = ("date", "rain_in")
_US_FORMATS = ("%m/%d/%Y", "%m/%d/%Y %H:%M", "%m/%d/%Y %H:%M:%S", "%m/%d/%Y %I:%M %p")


@dataclass(frozen=True)
class Inspection:
    """One row of the inspection log."""

    row: int
    when: dt.datetime | dt.date
    inspector: str
    phase: str

    @property
    def date(self) -> dt.date:
        """Calendar date of the inspection."""
        return self.when.date() if isinstance(self.when, dt.datetime) else self.when


@dataclass(frozen=True)
class MissedRain:
    """A rain of the threshold or more with no inspection by ``window_end``."""

    date: dt.date
    rain_in: float
    window_end: dt.date

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "date": self.date.isoformat(),
            "rain_in": self.rain_in,
            "window_end": self.window_end.isoformat(),
        }


@dataclass(frozen=True)
class MissedWeek:
    """A calendar week (Monday to Sunday) of the period without an inspection."""

    week_start: dt.date
    week_end: dt.date
    days_in_period: int
    partial: bool

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "week_start": self.week_start.isoformat(),
            "week_end": self.week_end.isoformat(),
            "days_in_period": self.days_in_period,
            "partial": self.partial,
        }


@dataclass(frozen=True)
class RainGap:
    """Consecutive days of the period the rain file does not give.

    ``uninspected`` counts the days of the gap with no inspection on them or in the
    days after that a rain on them would allow: whether those needed an inspection is
    unknown. A gap day with an inspection in its window needs no rain figure.
    """

    first: dt.date
    last: dt.date
    days: int
    uninspected: int

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "first": self.first.isoformat(),
            "last": self.last.isoformat(),
            "days": self.days,
            "uninspected": self.uninspected,
        }


@dataclass(frozen=True)
class IncompleteEntry:
    """A log row that leaves a required field blank."""

    row: int
    date: dt.date
    missing: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {"row": self.row, "date": self.date.isoformat(), "missing": list(self.missing)}


@dataclass(frozen=True)
class InspectionResult:
    """Outcome of the inspection-log check.

    Attributes
    ----------
    municipality : str
        Ordinance applied.
    log_path, rain_path : str
        Input files.
    start, end : datetime.date
        The active construction period checked (both included).
    rain_threshold_in : float
        Daily rain, inches, at or above which an inspection is required.
    rain_days_after : int
        Calendar days after the rain day in which an inspection still counts.
    n_inspections : int
        Log rows inside the period.
    n_rain_events : int
        Rain days at or above the threshold inside the period.
    missed_rain, missed_weeks, incomplete_entries : tuple
        The findings.
    rain_gaps : tuple of RainGap
        Days of the period missing from the rain file (never taken as dry).
    rules : tuple of dict
        Each rule checked: ``{"rule", "citation", "quote"}``.
    notes : tuple of str
        How the rules were applied to daily data.
    """

    municipality: str
    log_path: str
    rain_path: str
    start: dt.date
    end: dt.date
    rain_threshold_in: float
    rain_days_after: int
    n_inspections: int
    n_rain_events: int
    missed_rain: tuple[MissedRain, ...]
    missed_weeks: tuple[MissedWeek, ...]
    incomplete_entries: tuple[IncompleteEntry, ...]
    rules: tuple[dict[str, str], ...]
    notes: tuple[str, ...]
    rain_gaps: tuple[RainGap, ...] = ()

    @property
    def days_without_rain_data(self) -> int:
        """Days of the period the rain file does not give."""
        return sum(g.days for g in self.rain_gaps)

    @property
    def unknown_rain_days_uninspected(self) -> int:
        """Days without rain data and with no inspection in time had it rained."""
        return sum(g.uninspected for g in self.rain_gaps)

    @property
    def status(self) -> str:
        """The outcome: ``pass``, ``fail`` or ``needs_info``.

        ``fail`` when something was missed; ``needs_info`` when nothing was but a day
        without rain data has no inspection in time (a rain then is unknown, not ruled
        out); else ``pass``.
        """
        missed = self.missed_rain or self.missed_weeks or self.incomplete_entries
        if missed:
            return "fail"
        return "needs_info" if self.unknown_rain_days_uninspected else "pass"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (the one source of the HTML and CSV reports)."""
        return {
            "municipality": self.municipality,
            "log_path": self.log_path,
            "rain_path": self.rain_path,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "rain_threshold_in": self.rain_threshold_in,
            "rain_days_after": self.rain_days_after,
            "n_inspections": self.n_inspections,
            "n_rain_events": self.n_rain_events,
            "status": self.status,
            "missed_rain": [m.to_dict() for m in self.missed_rain],
            "missed_weeks": [m.to_dict() for m in self.missed_weeks],
            "incomplete_entries": [e.to_dict() for e in self.incomplete_entries],
            "days_without_rain_data": self.days_without_rain_data,
            "unknown_rain_days_uninspected": self.unknown_rain_days_uninspected,
            "rain_gaps": [g.to_dict() for g in self.rain_gaps],
            "rules": [dict(r) for r in self.rules],
            "notes": list(self.notes),
        }


# --- reading ----------------------------------------------------------------------------------
def _read_table(path: Path, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """Read a UTF-8 CSV; return (line number, row) with lower-case, stripped column names."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise DataSourceError(f"cannot read the file: {exc.strerror or exc}", path=path) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataSourceError(
            f"not UTF-8 text (bad byte at offset {exc.start}); save the file as UTF-8 CSV",
            path=path,
        ) from exc
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError("empty file: expected a header row", path=path) from None
    except csv.Error as exc:
        raise DataSourceError(f"not a readable CSV file: {exc}", path=path) from exc
    names = [h.strip().lower() for h in header]
    for col in required:
        if col not in names:
            raise InputError(
                f"missing column {col!r} (found: {', '.join(names) or 'none'})",
                path=path,
                field=col,
            )
    rows = []
    try:
        for values in reader:
            if not any(v.strip() for v in values):
                continue
            row = {
                name: (values[i].strip() if i < len(values) else "") for i, name in enumerate(names)
            }
            rows.append((reader.line_num, row))
    except csv.Error as exc:
        raise DataSourceError(
            f"not a readable CSV file at line {reader.line_num}: {exc}", path=path
        ) from exc
    return rows


def _parse_when(text: str, *, path: Path, line: int) -> dt.datetime | dt.date:
    """Parse a date, optionally with a time, held to the dates a submission may give."""
    when = _parse_date_text(text, path=path, field=f"line {line}, column date")
    day = when.date() if isinstance(when, dt.datetime) else when
    if not MIN_DATE <= day <= MAX_DATE:
        # the weekly and 24-hour windows are date arithmetic: past year 9999 it overflows
        raise InputError(
            f"date {text!r} is outside {MIN_DATE.isoformat()} to {MAX_DATE.isoformat()}",
            path=path,
            field=f"line {line}, column date",
        )
    return when


def _parse_date_text(text: str, *, path: Path, field: str) -> dt.datetime | dt.date:
    """Parse a date, optionally with a time (ISO 8601 or US month/day/year)."""
    if not text:
        raise InputError("blank date", path=path, field=field)
    try:
        if len(text) == 10 and text[4] == "-":
            return dt.date.fromisoformat(text)
        return dt.datetime.fromisoformat(text)
    except ValueError:
        pass
    for fmt in _US_FORMATS:
        try:
            parsed = dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
        return parsed.date() if fmt == "%m/%d/%Y" else parsed
    raise InputError(
        f"not a date: {text!r} (use YYYY-MM-DD, optionally with HH:MM)", path=path, field=field
    )


def read_log(path: str | Path) -> list[Inspection]:
    """Read an inspection log CSV with columns ``date, inspector, phase``.

    Parameters
    ----------
    path : str or Path
        UTF-8 CSV; ``date`` may carry a time (``2025-06-02 14:30``).

    Returns
    -------
    list of Inspection
        Sorted by time.

    Raises
    ------
    georeview.errors.DataSourceError
        Missing, unreadable or non-UTF-8 file.
    georeview.errors.InputError
        Missing column or a bad date (the message names the file, line and column).
    """
    path = Path(path)
    out = []
    for line, row in _read_table(path, LOG_COLUMNS):
        when = _parse_when(row["date"], path=path, line=line)
        out.append(Inspection(line, when, row["inspector"], row["phase"]))
    return sorted(out, key=lambda i: (i.date, i.row))


def read_rain(path: str | Path) -> dict[dt.date, float]:
    """Read daily rainfall CSV with columns ``date, rain_in`` (inches per day).

    Parameters
    ----------
    path : str or Path
        UTF-8 CSV, one row per day.

    Returns
    -------
    dict of datetime.date to float
        Daily rain in inches.

    Raises
    ------
    georeview.errors.DataSourceError
        Missing, unreadable or non-UTF-8 file.
    georeview.errors.InputError
        Missing column, bad date, a date given twice, or a rain value that is not a finite
        number >= 0.
    """
    path = Path(path)
    out: dict[dt.date, float] = {}
    for line, row in _read_table(path, RAIN_COLUMNS):
        when = _parse_when(row["date"], path=path, line=line)
        day = when.date() if isinstance(when, dt.datetime) else when
        field = f"line {line}, column rain_in"
        try:
            rain_in = float(row["rain_in"])
        except ValueError:
            raise InputError(f"not a number: {row['rain_in']!r}", path=path, field=field) from None
        if not math.isfinite(rain_in) or rain_in < 0:
            raise InputError(
                f"rain must be a finite depth >= 0 inches, got {row['rain_in']!r}",
                path=path,
                field=field,
            )
        if day in out:
            raise InputError(
                f"{day.isoformat()} is given twice; give one daily total per date",
                path=path,
                field=field,
            )
        out[day] = rain_in
    return out


# --- checking ---------------------------------------------------------------------------------
def _rules(municipality: str) -> dict[str, Any]:
    """Return the inspection rules of a municipality from ``calendar.toml``."""
    spec = municipality_calendar(municipality).get("inspections")
    if spec is None:
        raise ConfigError(
            f"no inspection rules for {municipality!r}",
            path="georeview/data/calendar.toml",
            field=f"municipalities.{municipality}.inspections",
        )
    if spec.get("week", "iso") != "iso":
        raise ConfigError(
            f"unknown week definition {spec['week']!r} (only 'iso')",
            path="georeview/data/calendar.toml",
            field=f"municipalities.{municipality}.inspections.week",
        )
    return spec


def check(
    inspections: Sequence[Inspection],
    rain: dict[dt.date, float],
    municipality: str,
    *,
    start: dt.date | None = None,
    end: dt.date | None = None,
    log_path: str = "",
    rain_path: str = "",
) -> InspectionResult:
    """Check an inspection log against daily rain and the weekly rule.

    Parameters
    ----------
    inspections : sequence of Inspection
        The log (see :func:`read_log`).
    rain : dict of datetime.date to float
        Daily rain in inches (see :func:`read_rain`).
    municipality : str
        ``"somers"`` or ``"deerfield"``.
    start, end : datetime.date, optional
        Active construction period (both included); default: first and last date found in the
        log and rain data.
    log_path, rain_path : str
        Names shown in the report.

    Returns
    -------
    InspectionResult
    """
    key = str(municipality).strip().lower()
    spec = _rules(key)
    start, end = _period(inspections, rain, start, end)
    threshold = float(spec["rain_threshold_in"])
    after = int(spec["rain_days_after"])
    inside = [i for i in inspections if start <= i.date <= end]
    inspected = {i.date for i in inside}
    storms = sorted(d for d, r in rain.items() if r >= threshold and start <= d <= end)
    missed_rain = _missed_rains(storms, rain, inspected, after)
    gaps = _rain_gaps(start, end, rain, inspected, after)
    missed_weeks = _missed_weeks(start, end, inspected)
    required = [c for c in spec.get("log_fields_required", []) if c != "date"]
    incomplete = [
        IncompleteEntry(item.row, item.date, missing)
        for item in inside
        if (missing := tuple(c for c in required if not getattr(item, c)))
    ]
    logger.info(
        "%s: %d inspections, %d rains >= %s in, %d missed rains, %d missed weeks, "
        "%d days without rain data",
        key,
        len(inside),
        len(storms),
        threshold,
        len(missed_rain),
        len(missed_weeks),
        sum(g.days for g in gaps),
    )
    return InspectionResult(
        municipality=key,
        log_path=str(log_path),
        rain_path=str(rain_path),
        start=start,
        end=end,
        rain_threshold_in=threshold,
        rain_days_after=after,
        n_inspections=len(inside),
        n_rain_events=len(storms),
        missed_rain=missed_rain,
        missed_weeks=missed_weeks,
        incomplete_entries=tuple(incomplete),
        rules=_rules_checked(spec, threshold, after),
        notes=tuple(spec.get("notes", [])),
        rain_gaps=gaps,
    )


def _period(
    inspections: Sequence[Inspection],
    rain: dict[dt.date, float],
    start: dt.date | None,
    end: dt.date | None,
) -> tuple[dt.date, dt.date]:
    """The period checked: ``start`` and ``end``, else the first and last date of the data."""
    dates = [i.date for i in inspections] + list(rain)
    if start is None or end is None:
        if not dates:
            raise InputError("no dates in the log or rain file: give start and end")
        start = min(dates) if start is None else start
        end = max(dates) if end is None else end
    if end < start:
        raise InputError(f"end {end} is before start {start}", field="end")
    return start, end


def _missed_rains(
    storms: list[dt.date], rain: dict[dt.date, float], inspected: set[dt.date], after: int
) -> tuple[MissedRain, ...]:
    """The rain days with no inspection on that day or the ``after`` days that follow."""
    missed = []
    for day in storms:  # rain days of one site's season: tens, not cells
        window = [day + dt.timedelta(days=k) for k in range(after + 1)]
        if not inspected.intersection(window):
            missed.append(MissedRain(day, rain[day], window[-1]))
    return tuple(missed)


def _rain_gaps(
    start: dt.date, end: dt.date, rain: dict[dt.date, float], inspected: set[dt.date], after: int
) -> tuple[RainGap, ...]:
    """The runs of days of the period missing from the rain file (see :class:`RainGap`)."""
    gaps: list[RainGap] = []
    first: dt.date | None = None
    uninspected = 0
    day = start
    # one pass over the days of one site's season (hundreds at most)
    while day <= end + dt.timedelta(days=1):
        missing = day <= end and day not in rain
        if missing:
            first = day if first is None else first
            window = {day + dt.timedelta(days=k) for k in range(after + 1)}
            uninspected += not inspected.intersection(window)
        elif first is not None:
            last = day - dt.timedelta(days=1)
            gaps.append(RainGap(first, last, (last - first).days + 1, uninspected))
            first, uninspected = None, 0
        day += dt.timedelta(days=1)
    return tuple(gaps)


def _missed_weeks(start: dt.date, end: dt.date, inspected: set[dt.date]) -> tuple[MissedWeek, ...]:
    """The calendar weeks (Monday to Sunday) with no inspection in their part of the period."""
    missed = []
    monday = start - dt.timedelta(days=start.weekday())
    while monday <= end:
        sunday = monday + dt.timedelta(days=6)
        lo, hi = max(monday, start), min(sunday, end)
        if not any(lo <= d <= hi for d in inspected):
            days = (hi - lo).days + 1
            missed.append(MissedWeek(monday, sunday, days, days < 7))
        monday += dt.timedelta(days=7)
    return tuple(missed)


def _rules_checked(
    spec: dict[str, Any], threshold: float, after: int
) -> tuple[dict[str, str], ...]:
    """The three rules the report names, with their citations and the ordinance's words."""
    return (
        {
            "rule": f"inspection within {after} day(s) after each day with rain >= {threshold} in",
            "citation": spec["rain_citation"],
            "quote": spec["rain_quote"],
        },
        {
            "rule": "at least one inspection each calendar week (Monday to Sunday)",
            "citation": spec["week_citation"],
            "quote": spec["week_quote"],
        },
        {
            "rule": f"log entries give: {', '.join(spec.get('log_fields_required', ['date']))}",
            "citation": spec["log_citation"],
            "quote": spec["log_quote"],
        },
    )


# --- rendering --------------------------------------------------------------------------------
def render_html(result: InspectionResult) -> str:
    """Render the result as a printable HTML report (Jinja2, autoescaped).

    Parameters
    ----------
    result : InspectionResult

    Returns
    -------
    str
        A complete HTML document.
    """
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("georeview", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    label = municipality_calendar(result.municipality).get("label", result.municipality)
    return env.get_template("inspections.html").render(r=result.to_dict(), label=label)


def render_csv(result: InspectionResult) -> str:
    """Render the findings as CSV: one row per finding.

    Columns: ``finding, date_start, date_end, rain_in, detail, citation``.
    """
    data = result.to_dict()
    buf = io.StringIO()
    writer = SafeWriter(buf, lineterminator="\n")  # log text may hold formulas
    writer.writerow(["finding", "date_start", "date_end", "rain_in", "detail", "citation"])
    rain_cit, week_cit, log_cit = (r["citation"] for r in data["rules"])
    for m in data["missed_rain"]:
        writer.writerow(
            [
                "rain_without_inspection",
                m["date"],
                m["window_end"],
                m["rain_in"],
                f"no inspection from {m['date']} to {m['window_end']}",
                rain_cit,
            ]
        )
    for w in data["missed_weeks"]:
        detail = f"no inspection in {w['days_in_period']} day(s) of the period"
        detail += " (partial week)" if w["partial"] else ""
        writer.writerow(
            ["week_without_inspection", w["week_start"], w["week_end"], "", detail, week_cit]
        )
    for g in data["rain_gaps"]:
        writer.writerow(
            [
                "rain_data_missing",
                g["first"],
                g["last"],
                "",
                f"{g['days']} day(s) not in the rain file, {g['uninspected']} of them with "
                "no inspection in time had it rained",
                rain_cit,
            ]
        )
    for e in data["incomplete_entries"]:
        writer.writerow(
            [
                "incomplete_log_entry",
                e["date"],
                e["date"],
                "",
                f"line {e['row']}: blank {', '.join(e['missing'])}",
                log_cit,
            ]
        )
    return buf.getvalue()


def write(result: InspectionResult, out_path: str | Path, *, overwrite: bool = False) -> Path:
    """Write the report; the format follows the suffix (``.html``, ``.csv`` or ``.json``).

    Raises
    ------
    georeview.errors.OutputError
        The file exists and ``overwrite`` is False, the suffix is unknown, or writing fails.
    """
    out = Path(out_path)
    suffix = out.suffix.lower()
    renderers = {
        ".html": render_html,
        ".htm": render_html,
        ".csv": render_csv,
        ".json": lambda r: json.dumps(r.to_dict(), indent=2) + "\n",
    }
    if suffix not in renderers:
        raise OutputError("unknown report format: use .html, .csv or .json", path=out)
    if out.exists() and not overwrite:
        raise OutputError("exists; pass --overwrite to replace it", path=out)
    from georeview.report.files import write_atomic

    # whole or not at all, with a normal file's mode (as every other output)
    write_atomic(out, renderers[suffix](result))
    logger.info("wrote %s", out)
    return out


def run(
    log_path: str | Path,
    rain_path: str | Path,
    municipality: str,
    out_path: str | Path | None = None,
    start: dt.date | None = None,
    end: dt.date | None = None,
    *,
    overwrite: bool = False,
) -> InspectionResult:
    """Read the log and the rain, check them, and write the report if ``out_path`` is given.

    Parameters
    ----------
    log_path : str or Path
        Inspection log CSV (``date, inspector, phase``).
    rain_path : str or Path
        Daily rainfall CSV (``date, rain_in``).
    municipality : str
        ``"somers"`` or ``"deerfield"``.
    out_path : str or Path, optional
        Report file: ``.html``, ``.csv`` or ``.json``.
    start, end : datetime.date, optional
        Active construction period; default: first and last date in the inputs.
    overwrite : bool
        Replace an existing report.

    Returns
    -------
    InspectionResult
    """
    _rules(str(municipality).strip().lower())  # unknown municipality fails before reading
    result = check(
        read_log(log_path),
        read_rain(rain_path),
        municipality,
        start=start,
        end=end,
        log_path=str(log_path),
        rain_path=str(rain_path),
    )
    if out_path is not None:
        write(result, out_path, overwrite=overwrite)
    return result
