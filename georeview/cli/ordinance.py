"""``georeview ordinance new NAME --from M [--out DIR] [--overwrite]``: a municipality from another.

Copies M's ordinance folder to ``DIR/NAME`` (default: the first ``$GEOREVIEW_ORDINANCES``
folder, else ``./ordinances``), renaming its ids, keys and citation prefixes
(:mod:`georeview.ordinances.scaffold`), and says plainly what is still M's.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from georeview.cli.options import EXIT_OK, common_parser

__all__ = ["add_arguments", "main"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``georeview ordinance`` arguments to a (sub)parser."""
    sub = p.add_subparsers(dest="action", required=True)
    new = sub.add_parser(
        "new",
        parents=[common_parser()],
        help="copy a municipality's ordinance folder under a new name, ids renamed",
        description="Copy municipality M's ordinance folder to DIR/NAME, renaming rule ids, "
        "municipality keys, citation prefixes and labels. Thresholds, fees, calendar, rainfall, "
        "the quoted words and ordinance.txt stay M's until edited.",
    )
    new.add_argument("name", metavar="NAME", help="the new municipality (lower case: waunakee)")
    new.add_argument(
        "--from", dest="source", required=True, metavar="M", help="municipality to copy"
    )
    new.add_argument(
        "--out",
        metavar="DIR",
        help="parent folder (default: the first $GEOREVIEW_ORDINANCES folder, else ./ordinances)",
    )
    new.add_argument("--overwrite", action="store_true", help="replace an existing DIR/NAME")


def main(args: argparse.Namespace) -> int:
    """Run ``georeview ordinance new``; print what was renamed and what is still the source's."""
    from georeview.ordinances import ENV_VAR, search_path
    from georeview.ordinances.scaffold import KEPT, new_ordinance

    out = Path(args.out) if args.out else None
    copied = new_ordinance(args.name, args.source, out, overwrite=args.overwrite)
    source = args.source.strip().lower()
    if getattr(args, "quiet", False):
        return EXIT_OK
    counts = ", ".join(f"{n} {what}" for what, n in copied.counts.items())
    print(f"created {copied.folder} from {source}: {copied.files} files; renamed {counts}")
    print(f"STILL {source.upper()}'S until you edit them:")
    for k in KEPT:
        print(f"  - {k}")
    on_path = {p.resolve() for p in search_path()}
    parent = copied.folder.parent.resolve()
    if parent not in on_path:
        print(f"not on the search path: export {ENV_VAR}={parent}{os.pathsep}${ENV_VAR}")
    print(f"then: georeview rules {args.name} --check")
    return EXIT_OK
