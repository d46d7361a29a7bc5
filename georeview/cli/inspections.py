"""``georeview inspections LOG.csv --rain RAIN.csv --municipality M``: the inspection check."""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from georeview.config import MAX_DATE, MIN_DATE
from georeview.errors import GeoReviewError
from georeview.procedure.inspections import run

__all__ = ["add_arguments", "main"]


def _date_arg(text: str) -> dt.date:
    """Argparse type for YYYY-MM-DD, within the dates a submission may give."""
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None
    if not MIN_DATE <= day <= MAX_DATE:
        raise argparse.ArgumentTypeError(
            f"{text!r} is outside {MIN_DATE.isoformat()} to {MAX_DATE.isoformat()}"
        )
    return day


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``georeview inspections`` options to a (sub)parser.

    Usage: ``georeview inspections LOG.csv --rain RAIN.csv --municipality somers
    [--out report.html] [--start YYYY-MM-DD] [--end YYYY-MM-DD] [--overwrite]``.
    """
    parser.add_argument("log", metavar="LOG.csv", help="inspection log: date, inspector, phase")
    parser.add_argument(
        "--rain", required=True, metavar="RAIN.csv", help="daily rainfall: date, rain_in"
    )
    parser.add_argument(
        "--municipality", required=True, help="ordinance to apply: somers | deerfield"
    )
    parser.add_argument("--out", metavar="FILE", help="report file: .html, .csv or .json")
    parser.add_argument("--start", type=_date_arg, help="first day of active construction")
    parser.add_argument("--end", type=_date_arg, help="last day of active construction")
    if "--overwrite" not in parser._option_string_actions:
        parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")


def main(args: argparse.Namespace) -> int:
    """Run the subcommand from parsed arguments; return the exit code.

    0 when the check ran (whatever it found), 2 with a one-line message on bad input.
    """
    try:
        result = run(
            args.log,
            args.rain,
            args.municipality,
            out_path=args.out,
            start=args.start,
            end=args.end,
            overwrite=bool(getattr(args, "overwrite", False)),
        )
    except GeoReviewError as exc:
        # the one-line form every command uses (DESIGN §2.1)
        sys.stderr.write(f"georeview: error: {exc.one_line()}\n")
        return 2
    sys.stdout.write(
        f"{result.status}: {result.start} to {result.end}, {result.n_inspections} inspections, "
        f"{len(result.missed_rain)} of {result.n_rain_events} rains >= "
        f"{result.rain_threshold_in} in without an inspection in time, "
        f"{len(result.missed_weeks)} weeks without an inspection, "
        f"{len(result.incomplete_entries)} incomplete log entries, "
        f"{result.days_without_rain_data} days without rain data "
        f"({result.unknown_rain_days_uninspected} with no inspection in time)\n"
    )
    return 0
