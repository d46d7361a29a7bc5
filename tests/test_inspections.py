"""Inspection-log check tests.

The fixture log and rain below are small enough to check by hand on the June 2025 calendar
(June 1 is a Sunday). Rules (georeview/data/calendar.toml): a daily rain of 0.5 in or more
(Somers 17.09(E)(7) "one-half inch or more"; Deerfield 31.12(2)(G) "0.5 inches or more") needs an
inspection on the rain day or the next calendar day; each calendar week Monday-Sunday of the
period needs at least one inspection ("at least once each week").
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json

import pytest

from georeview.cli.inspections import add_arguments, main
from georeview.errors import ConfigError, DataSourceError, InputError, OutputError
from georeview.procedure.inspections import (
    read_log,
    read_rain,
    render_csv,
    run,
)

D = dt.date

LOG = """date,inspector,phase
2025-06-02 09:00,A. Smith,rough grading
2025-06-05,A. Smith,rough grading
2025-06-10T14:30,B. Jones,utilities
2025-06-24,,paving
6/30/2025 2:30 PM,C. Lee,final stabilization
"""
# Log lines: 2 = Mon Jun 2, 3 = Thu Jun 5, 4 = Tue Jun 10, 5 = Tue Jun 24 (inspector blank),
# 6 = Mon Jun 30.

RAIN = """date,rain_in
2025-06-01,0.00
2025-06-04,0.62
2025-06-10,0.50
2025-06-12,0.49
2025-06-17,1.10
2025-06-21,0.75
2025-06-27,0.80
2025-07-01,0.30
"""
# By hand:
# - Jun 4 (0.62): inspected Jun 5, the next day -> in time.
# - Jun 10 (0.50, exactly the threshold, "or more"): inspected the same day -> in time.
# - Jun 12 (0.49): below 0.5 in -> no inspection needed.
# - Jun 17 (1.10): no inspection Jun 17 or 18 -> missed, needed by Jun 18.
# - Jun 21 (0.75): none Jun 21 or 22 -> missed, needed by Jun 22.
# - Jun 27 (0.80): the Jun 24 inspection came before the rain; none Jun 27 or 28 -> missed.
# Period: first date Sun Jun 1 (rain file) to last date Tue Jul 1 (rain file).
# Weeks: May 26-Jun 1 holds only Jun 1 of the period, no inspection -> missed, partial (1 day);
# Jun 2-8 (2, 5), Jun 9-15 (10), Jun 23-29 (24), Jun 30-Jul 6 (30) inspected;
# Jun 16-22 none -> missed, full week.
# Days missing from the rain file (23 of the 31; never taken as dry), and of each gap the days
# with no inspection on that day or the next (had it rained, an inspection was missed):
# Jun 2-3 (2 days; Jun 3 uninspected), Jun 5-9 (5; 6, 7, 8), Jun 11 (1; 11),
# Jun 13-16 (4; all), Jun 18-20 (3; all), Jun 22-26 (5; 22, 25, 26), Jun 28-30 (3; 28):
# 16 days uninspected.


@pytest.fixture
def files(tmp_path):
    log = tmp_path / "log.csv"
    rain = tmp_path / "rain.csv"
    log.write_text(LOG, encoding="utf-8")
    rain.write_text(RAIN, encoding="utf-8")
    return log, rain


def test_somers_findings(files):
    log, rain = files
    result = run(log, rain, "somers")
    assert (result.start, result.end) == (D(2025, 6, 1), D(2025, 7, 1))
    assert result.n_rain_events == 5  # Jun 4, 10, 17, 21, 27
    assert [(m.date, m.rain_in, m.window_end) for m in result.missed_rain] == [
        (D(2025, 6, 17), 1.10, D(2025, 6, 18)),
        (D(2025, 6, 21), 0.75, D(2025, 6, 22)),
        (D(2025, 6, 27), 0.80, D(2025, 6, 28)),
    ]
    assert [
        (w.week_start, w.week_end, w.days_in_period, w.partial) for w in result.missed_weeks
    ] == [
        (D(2025, 5, 26), D(2025, 6, 1), 1, True),
        (D(2025, 6, 16), D(2025, 6, 22), 7, False),
    ]
    # 17.09(E)(7): the log "includes ... the name of the person conducting the inspection".
    assert [(e.row, e.missing) for e in result.incomplete_entries] == [(5, ("inspector",))]
    assert result.status == "fail"
    assert result.rules[0]["citation"] == "Somers 17.09(E)(7)"
    assert [(g.first, g.last, g.days, g.uninspected) for g in result.rain_gaps] == [
        (D(2025, 6, 2), D(2025, 6, 3), 2, 1),
        (D(2025, 6, 5), D(2025, 6, 9), 5, 3),
        (D(2025, 6, 11), D(2025, 6, 11), 1, 1),
        (D(2025, 6, 13), D(2025, 6, 16), 4, 4),
        (D(2025, 6, 18), D(2025, 6, 20), 3, 3),
        (D(2025, 6, 22), D(2025, 6, 26), 5, 3),
        (D(2025, 6, 28), D(2025, 6, 30), 3, 1),
    ]
    assert (result.days_without_rain_data, result.unknown_rain_days_uninspected) == (23, 16)


def _weekly_log(tmp_path, rain_days):
    """Inspections every Monday and Thursday of Jun 2-29, 2025; rain on ``rain_days``."""
    log = tmp_path / "log.csv"
    rain = tmp_path / "rain.csv"
    days = [D(2025, 6, d) for d in (2, 5, 9, 12, 16, 19, 23, 26)]
    log.write_text(
        "date,inspector,phase\n" + "".join(f"{d},A,grading\n" for d in days), encoding="utf-8"
    )
    rain.write_text(
        "date,rain_in\n" + "".join(f"{d},{r}\n" for d, r in rain_days), encoding="utf-8"
    )
    return log, rain


def test_days_missing_from_the_rain_file_are_not_dry(tmp_path):
    # Issue 23: the rain file gives only Jun 2 and Jun 29 (26 of 28 days missing). Before,
    # the missing days counted as dry and the log passed. Of them, the days with no
    # inspection on that day or the next: a half-inch rain on any of them would have been
    # missed, so the log cannot pass.
    log, rain = _weekly_log(tmp_path, [(D(2025, 6, 2), 0.0), (D(2025, 6, 29), 0.0)])
    result = run(log, rain, "somers", start=D(2025, 6, 2), end=D(2025, 6, 29))
    assert result.missed_rain == result.missed_weeks == result.incomplete_entries == ()
    assert result.days_without_rain_data == 26
    # no inspection that day or the next: Jun 3, 6, 7, 10, 13, 14, 17, 20, 21, 24, 27, 28
    # (12 days); Sundays Jun 8, 15, 22 are followed by a Monday visit
    assert result.unknown_rain_days_uninspected == 12
    assert result.status == "needs_info"
    data = result.to_dict()
    assert data["status"] == "needs_info"
    assert data["rain_gaps"][0] == {"first": "2025-06-03", "last": "2025-06-28", "days": 26,
                                    "uninspected": 12}  # fmt: skip
    # every day given, all dry: the same log passes
    full = [(D(2025, 6, 2) + dt.timedelta(days=k), 0.0) for k in range(28)]
    log, rain = _weekly_log(tmp_path, full)
    assert run(log, rain, "somers").status == "pass"


def test_a_gap_day_inspected_in_time_needs_no_rain_figure(tmp_path):
    # Jun 2-8 with Jun 4 and 5 missing: Jun 5 is inspected, and Jun 4's window (4, 5) holds
    # that inspection, so a rain either day was inspected in time
    rain_days = [(D(2025, 6, d), 0.0) for d in (2, 3, 6, 7, 8)]
    log, rain = _weekly_log(tmp_path, rain_days)
    result = run(log, rain, "somers", start=D(2025, 6, 2), end=D(2025, 6, 8))
    assert result.days_without_rain_data == 2
    assert result.unknown_rain_days_uninspected == 0
    assert result.status == "pass"


def test_deerfield_does_not_require_inspector_name(files):
    log, rain = files
    result = run(log, rain, "deerfield")
    assert result.incomplete_entries == ()
    assert len(result.missed_rain) == 3
    assert "31.12(2)(G)" in result.rules[0]["citation"]


def test_given_period(files):
    log, rain = files
    # Mon Jun 2 to Sun Jun 29: no partial first week; the Jun 30 inspection falls outside.
    result = run(log, rain, "somers", start=D(2025, 6, 2), end=D(2025, 6, 29))
    assert result.n_inspections == 4
    assert [w.week_start for w in result.missed_weeks] == [D(2025, 6, 16)]
    assert [m.date for m in result.missed_rain] == [D(2025, 6, 17), D(2025, 6, 21), D(2025, 6, 27)]


def test_inspection_two_days_after_is_late(tmp_path):
    log = tmp_path / "log.csv"
    rain = tmp_path / "rain.csv"
    log.write_text("date,inspector,phase\n2025-06-06,A,grading\n", encoding="utf-8")
    rain.write_text("date,rain_in\n2025-06-04,0.9\n2025-06-05,0.5\n", encoding="utf-8")
    result = run(log, rain, "somers")
    # Jun 4 rain: window Jun 4-5, the Jun 6 inspection is late -> missed.
    # Jun 5 rain: window Jun 5-6, inspected Jun 6 -> in time.
    assert [m.date for m in result.missed_rain] == [D(2025, 6, 4)]


def test_all_pass(tmp_path):
    log = tmp_path / "log.csv"
    rain = tmp_path / "rain.csv"
    log.write_text(
        "date,inspector,phase\n2025-06-02,A,grading\n2025-06-10,A,grading\n", encoding="utf-8"
    )
    rain.write_text(
        "date,rain_in\n"
        + "".join(f"2025-06-{d:02d},{0.7 if d == 9 else 0.1}\n" for d in range(2, 16)),
        encoding="utf-8",
    )
    result = run(log, rain, "somers")
    # Period Mon Jun 2 - Sun Jun 15: weeks Jun 2-8 and 9-15 both inspected; Jun 9 rain
    # inspected Jun 10.
    assert result.status == "pass"
    assert result.missed_rain == result.missed_weeks == result.incomplete_entries == ()


def test_reports(files, tmp_path):
    log, rain = files
    result = run(log, rain, "somers", out_path=tmp_path / "report.json")
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert data == json.loads(json.dumps(result.to_dict()))
    assert data["missed_rain"][0] == {
        "date": "2025-06-17",
        "rain_in": 1.1,
        "window_end": "2025-06-18",
    }

    rows = list(csv.DictReader(io.StringIO(render_csv(result))))
    assert [r["finding"] for r in rows] == ["rain_without_inspection"] * 3 + [
        "week_without_inspection"
    ] * 2 + ["rain_data_missing"] * 7 + ["incomplete_log_entry"]
    assert rows[3]["date_start"] == "2025-05-26"
    assert rows[0]["citation"] == "Somers 17.09(E)(7)"

    run(log, rain, "somers", out_path=tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Village of Somers" in html
    assert "2025-06-21" in html
    assert "17.09(E)(7)" in html
    assert "partial week" in html
    assert "Days missing from the rain file" in html


def test_html_is_escaped(tmp_path):
    folder = tmp_path / "<b>site & co"
    folder.mkdir()
    log = folder / "log.csv"
    rain = folder / "rain.csv"
    log.write_text("date,inspector,phase\n2025-06-02,A,grading\n", encoding="utf-8")
    rain.write_text("date,rain_in\n2025-06-02,0.0\n", encoding="utf-8")
    run(log, rain, "deerfield", out_path=tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "&lt;b&gt;site &amp; co" in html
    assert "<b>site" not in html


def test_refuses_to_overwrite(files, tmp_path):
    log, rain = files
    out = tmp_path / "r.csv"
    out.write_text("keep", encoding="utf-8")
    with pytest.raises(OutputError, match="exists"):
        run(log, rain, "somers", out_path=out)
    assert out.read_text(encoding="utf-8") == "keep"
    run(log, rain, "somers", out_path=out, overwrite=True)
    assert out.read_text(encoding="utf-8").startswith("finding,")
    with pytest.raises(OutputError, match="format"):
        run(log, rain, "somers", out_path=tmp_path / "r.pdf")


# --- input errors name the file, line and column --------------------------------------------
def test_non_utf8(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes("date,inspector,phase\n2025-06-02,M\u00fcller,grading\n".encode("cp1252"))
    with pytest.raises(DataSourceError, match=r"log\.csv: not UTF-8"):
        read_log(path)


def test_missing_file(tmp_path):
    with pytest.raises(DataSourceError, match=r"nothere\.csv"):
        read_rain(tmp_path / "nothere.csv")


def test_missing_column(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("date,inspector\n2025-06-02,A\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"log\.csv: phase: missing column 'phase'"):
        read_log(path)


def test_bad_date(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("Date, Inspector ,Phase\n2025-06-02,A,x\n2025-13-01,A,x\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"log\.csv: line 3, column date: not a date"):
        read_log(path)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("-0.2", "rain must be a finite depth >= 0"),
        ("lots", "not a number"),
        ("nan", "rain must be a finite"),
    ],
)
def test_bad_rain(tmp_path, value, message):
    path = tmp_path / "rain.csv"
    path.write_text(f"date,rain_in\n2025-06-01,0.1\n2025-06-02,{value}\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"rain\.csv: line 3, column rain_in: {message}"):
        read_rain(path)


def test_duplicate_rain_date(tmp_path):
    path = tmp_path / "rain.csv"
    path.write_text("date,rain_in\n2025-06-01,0.1\n2025-06-01,0.3\n", encoding="utf-8")
    with pytest.raises(InputError, match="given twice"):
        read_rain(path)


def test_unknown_municipality(files):
    log, rain = files
    with pytest.raises(ConfigError, match="no ordinance folder for municipality"):
        run(log, rain, "kenosha")


# --- command-line wiring ----------------------------------------------------------------------
def _parser():
    parser = argparse.ArgumentParser(prog="georeview inspections")
    add_arguments(parser)
    return parser


def test_cli_main(files, tmp_path, capsys):
    log, rain = files
    out = tmp_path / "report.html"
    args = _parser().parse_args(
        [str(log), "--rain", str(rain), "--municipality", "somers", "--out", str(out)]
    )
    assert main(args) == 0
    assert out.exists()
    assert "fail:" in capsys.readouterr().out


def test_cli_bad_input_exit_2(tmp_path, capsys):
    log = tmp_path / "log.csv"
    log.write_text("when,who\n", encoding="utf-8")
    args = _parser().parse_args([str(log), "--rain", str(log), "--municipality", "deerfield"])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "missing column" in err
    assert err.count("\n") == 1


def _far_files(tmp_path, where):
    far = "9999-12-30"
    log, rain = tmp_path / "log.csv", tmp_path / "rain.csv"
    log.write_text(
        "date,inspector,phase\n2025-06-02,A. Smith,grading\n"
        + (f"{far},A. Smith,grading\n" if where == "log" else ""),
        encoding="utf-8",
    )
    rain.write_text(
        "date,rain_in\n2025-06-01,0\n" + (f"{far},0.5\n" if where == "rain" else ""),
        encoding="utf-8",
    )
    return log, rain


@pytest.mark.parametrize("where", ["log", "rain"])
def test_a_date_past_the_calendar_is_one_line_not_an_overflow(tmp_path, capsys, where):
    """Before: a log or rain date in year 9999 ended in "internal error: OverflowError: date
    value out of range" (the 24-hour and weekly windows step past dt.date.max), exit 1."""
    from georeview.cli.main import main as georeview

    log, rain = _far_files(tmp_path, where)
    argv = ["inspections", str(log), "--rain", str(rain), "--municipality", "somers"]
    assert georeview(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    named = log if where == "log" else rain
    assert err.startswith(f"georeview: error: {named}: line 3, column date:"), err
    assert "outside 1900-01-01 to 2200-12-31" in err


def test_an_end_date_past_the_calendar_is_refused_by_the_parser(tmp_path, capsys):
    from georeview.cli.main import main as georeview

    log, rain = _far_files(tmp_path, "none")
    argv = ["inspections", str(log), "--rain", str(rain), "--municipality", "somers",
            "--end", "9999-12-30"]  # fmt: skip
    with pytest.raises(SystemExit) as stop:
        georeview(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument --end: '9999-12-30' is outside 1900-01-01 to 2200-12-31" in err
    assert "internal error" not in err


def test_a_failed_report_write_leaves_no_truncated_file(files, tmp_path, monkeypatch, capsys):
    """Issue 23: the report was written straight to its final name, so a full disk left a
    truncated report.html. Now it is written beside it and renamed: a failed write leaves
    neither the report nor its temporary file, and the CLI says so in one line, exit 2."""
    import errno
    import os

    log, rain = files
    out = tmp_path / "out"
    out.mkdir()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    from georeview.cli import main as cli

    code = cli(["inspections", str(log), "--rain", str(rain), "--municipality", "somers",
                "--out", str(out / "report.html")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("georeview: error: ")
    assert "No space left on device" in err
    assert len(err.strip().splitlines()) == 1
    assert list(out.iterdir()) == []
