"""The ``georeview`` command line.

Only this module configures logging and prints. Bad input ends with exit code 2
and one line on stderr naming the file and the problem, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from georeview import __version__
from georeview.errors import GeoReviewError, OutputError

log = logging.getLogger("georeview")

EXIT_OK = 0
EXIT_BAD_INPUT = 2


def _review(args: argparse.Namespace) -> int:
    from georeview.pipeline.review import review
    from georeview.report import write_reports

    target = Path(args.submission)
    out = Path(args.out)
    from georeview.pipeline import batch

    if batch.is_batch(target):
        res = batch.review_many(
            target,
            out,
            layers_dir=Path(args.layers) if args.layers else None,
            overwrite=args.overwrite,
        )
        if not args.quiet:
            print(
                f"{target.name}: {len(res.rows)} submissions, {res.n_ok} reviewed, "
                f"{res.n_error} errors, {res.seconds:.1f} s; summary {res.summary_csv}"
            )
            for r in res.rows:
                if r["status"] == "error":
                    print(f"  error: {r.get('name')}: {r.get('error')}")
        return EXIT_OK
    if (out / "report.json").exists() and not args.overwrite:
        raise OutputError("report.json exists; pass --overwrite to replace it", path=out)
    result = review(
        target, Path(args.layers) if args.layers else None, with_terrain=not args.no_terrain
    )
    paths = write_reports(result, out, with_map=not args.no_map)
    c = result.judgement
    verdict = (
        "cannot be determined (needs information)"
        if c.regulated is None
        else ("regulated" if c.regulated else "not regulated")
    )
    counts = result.to_dict()["summary"]["counts"]
    if not args.quiet:
        print(
            f"{target.name}: {result.ordinance.short_name}: {verdict}"
            + (f", {c.category}" if c.category else "")
            + (", larger site" if c.larger_site else "")
            + f"; jurisdiction {result.jurisdiction.status}; "
            f"{counts['fail']} fail, {counts['needs_info']} need information"
        )
        for p in paths.values():
            print(f"  wrote {p}")
    return EXIT_OK


def _rules(args: argparse.Namespace) -> int:
    from georeview.ordinances import municipalities
    from georeview.rules import load_ordinance

    names = [args.municipality] if args.municipality else list(municipalities())
    for name in names:
        o = load_ordinance(name)
        print(f"# {o.title}")
        reach = o.reach
        cites = dict.fromkeys([reach.citation_village, reach.citation_extraterritorial])
        print(
            f"{', '.join(c for c in cites if c):<28} {'reach':<10} {o.municipality + '.reach':<36} "
            f"village: {reach.village}; extraterritorial: {reach.extraterritorial}; "
            f"outside: {reach.outside}"
        )
        for r in o.rules:
            print(f"{r.citation:<28} {r.kind:<10} {r.id:<36} {r.title}")
        print()
    return EXIT_OK


def _inspections(args: argparse.Namespace) -> int:
    from georeview.procedure import inspections

    return inspections.main(args)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``georeview`` command."""
    parser = argparse.ArgumentParser(
        prog="georeview",
        description="Review construction-site erosion-control submissions against "
        "Wisconsin village ordinances (Somers ch. 17, Deerfield ch. 31).",
    )
    parser.add_argument("--version", action="version", version=f"georeview {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output")
    parser.add_argument("-q", "--quiet", action="store_true", help="only errors")
    # -v/-q work before or after the subcommand; SUPPRESS keeps a subcommand from
    # resetting what was given before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS)
    common.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("review", help="review one submission folder", parents=[common])
    p.add_argument(
        "submission",
        help="submission folder (submission.toml + geometry files), or a folder of them "
        "(and zip files of them) for a batch",
    )
    p.add_argument("--out", required=True, help="output folder for report.json/html and map.html")
    p.add_argument("--layers", help="layers folder (default: layers/<municipality>)")
    p.add_argument("--overwrite", action="store_true", help="replace existing reports")
    p.add_argument("--no-map", action="store_true", help="skip map.html")
    p.add_argument(
        "--no-terrain",
        action="store_true",
        help="skip the DEM (slopes, contours, downstream trace): their findings say needs_info",
    )
    p.set_defaults(func=_review)

    p = sub.add_parser("rules", help="print every rule with its citation", parents=[common])
    p.add_argument("municipality", nargs="?", help="somers or deerfield (default: all)")
    p.set_defaults(func=_rules)

    from georeview.procedure import inspections
    from georeview.report import sheet

    p = sub.add_parser(
        "sitemap",
        help="print-ready site-map sheet (PDF) at a true engineering scale",
        parents=[common],
    )
    sheet.add_arguments(p)
    p.set_defaults(func=sheet.main)

    p = sub.add_parser(
        "inspections",
        help="check an inspection log against rainfall (17.09(E)(7), 31.12(2)(G))",
        parents=[common],
    )
    inspections.add_arguments(p)
    p.set_defaults(func=_inspections)

    from georeview.pipeline import screen

    p = sub.add_parser(
        "screen",
        help="screen every parcel of a file: jurisdiction, resources, applicability",
        parents=[common],
    )
    screen.add_arguments(p)
    p.set_defaults(func=screen.main)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    level = (
        logging.ERROR
        if args.quiet
        else (
            logging.DEBUG if args.verbose > 1 else logging.INFO if args.verbose else logging.WARNING
        )
    )
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except GeoReviewError as exc:
        print(f"georeview: error: {exc.one_line()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("georeview: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, as Unix tools do.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
