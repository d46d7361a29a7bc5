"""``georeview rules [MUNICIPALITY] [--coverage | --check]``: every rule with its citation.

With ``--coverage``: every paragraph of the adopted text and the rules that check it, with the
counts (georeview.rules.coverage). With ``--check``: every problem a review would trip on, one
line each, ``FILE: KEY: what is wrong`` (georeview.rules.check); exit 2 when there is an error.
"""

from __future__ import annotations

import argparse
import sys

from georeview.cli.options import EXIT_BAD_INPUT, EXIT_OK

__all__ = ["add_arguments", "main"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``georeview rules`` arguments to a (sub)parser."""
    p.add_argument("municipality", nargs="?", help="a municipality (default: all)")
    p.add_argument(
        "--coverage",
        action="store_true",
        help="print every paragraph of the adopted text with the rules that check it, and counts",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="list every problem a review would trip on (missing rules and parameters the code "
        "reads, unknown facts, values out of range, coverage map, files), FILE: KEY: problem; "
        "exit 2 when there is an error, 0 with warnings only",
    )


def main(args: argparse.Namespace) -> int:
    """Print the rules of one municipality, or of every one on the search path."""
    from georeview.ordinances import municipalities
    from georeview.rules import load_ordinance

    names = [args.municipality] if args.municipality else list(municipalities())
    if args.check:
        return _check(names, quiet=bool(getattr(args, "quiet", False)))
    if args.coverage:
        from georeview.rules.coverage import report_lines

        for name in names:
            print(f"# {load_ordinance(name).title}: coverage of the adopted text")
            print("\n".join(report_lines(name)))
            print()
        return EXIT_OK
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


def _check(names: list[str], *, quiet: bool) -> int:
    """Print every problem of each municipality; exit 2 when any is an error."""
    from georeview.rules.check import check_municipality, errors

    total = 0
    for name in names:
        found = check_municipality(name)
        bad = errors(found)
        total += len(bad)
        for p in bad if quiet else found:
            print(p.line())
        if not quiet:
            warned = len(found) - len(bad)
            print(f"# {name}: {len(bad)} error(s), {warned} warning(s)")
    if total:
        print(
            f"georeview: error: {', '.join(names)}: {total} problem(s) a review would trip on "
            "(listed above, FILE: KEY: what is wrong)",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    return EXIT_OK
