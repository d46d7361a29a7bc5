"""The ``georeview`` command: parser, logging and the one place errors become exit codes.

Only the CLI configures logging and prints. Bad input ends with exit code 2 and one
line on stderr naming the file and the problem, never a traceback. Subcommand modules
are imported when their command runs, so ``georeview --help`` loads no heavy library.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from georeview import notices
from georeview._version import __version__
from georeview.cli.options import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    common_parser,
    settle_heap,
)
from georeview.errors import GeoReviewError

__all__ = ["COMMANDS", "build_parser", "main"]

log = logging.getLogger("georeview")

#: Subcommand -> (module under georeview.cli, help).
COMMANDS: dict[str, tuple[str, str]] = {
    "review": ("review", "review one submission folder, or a folder of them"),
    "screen": ("screen", "screen every parcel of a file: jurisdiction, resources, applicability"),
    "sitemap": ("sitemap", "print-ready site-map sheet (PDF) at a true engineering scale"),
    "rules": ("rules", "print every rule with its citation"),
    "inspections": ("inspections", "check an inspection log against rainfall"),
    "layers": ("layers", "build a municipality's layers folder from public downloads"),
    "ordinance": ("ordinance", "start a municipality's ordinance folder from another's (new)"),
    "case": ("case", "the Village's record: cases, rounds, determinations, decisions, letters"),
    "serve": ("serve", "serve the review workspace in a browser (reviewers and applicants)"),
    "users": ("users", "the web workspace's accounts: add, list, set-password, disable"),
}


def _module(name: str) -> object:
    return importlib.import_module(f"georeview.cli.{name}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Return the argument parser; only ``command``'s arguments are loaded when given.

    ``command=None`` loads every subcommand's arguments (the whole parser, for help
    pages and tests); ``""`` loads none (a command line naming no subcommand:
    ``--version``, ``--help`` or an error, which need only the names and help lines).
    """
    parser = argparse.ArgumentParser(
        prog="georeview",
        description="Review construction-site erosion-control submissions against "
        "municipal ordinances with real GIS data.",
    )
    parser.add_argument("--version", action="version", version=f"georeview {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output")
    parser.add_argument("-q", "--quiet", action="store_true", help="only errors")
    common = common_parser()
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, parents=[common])
        if command is None or command == name:
            mod = _module(module)
            mod.add_arguments(p)  # type: ignore[attr-defined]
            p.set_defaults(func=mod.main)  # type: ignore[attr-defined]
    return parser


def _command_of(argv: Sequence[str]) -> str:
    """The subcommand named on the command line, ``""`` when none is."""
    return next((a for a in argv if a in COMMANDS), "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code.

    ``argv`` None is the process's own command line (the ``georeview`` script and
    ``python -m georeview``), which ends when this returns: the heap is then settled
    for the exit (:func:`georeview.cli.options.settle_heap`). A caller passing
    ``argv`` (tests, scripts running several commands in one process) keeps the
    collector as it was.
    """
    one_shot = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(_command_of(argv)).parse_args(argv)
    args.one_shot = one_shot
    level = (
        logging.ERROR
        if args.quiet
        else (
            logging.DEBUG if args.verbose > 1 else logging.INFO if args.verbose else logging.WARNING
        )
    )
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    # Library warnings (shapely on a NaN coordinate, GDAL on an unclosed ring) are not
    # for the reader: what they point at is refused or reported on its own. They go to
    # the log, shown with -vv only.
    logging.captureWarnings(True)
    pyw = logging.getLogger("py.warnings")
    pyw_level = pyw.level
    pyw.setLevel(logging.DEBUG if args.verbose > 1 else logging.CRITICAL)
    # one-line notices of a long wait (the first compile of the flow kernels), unless -q
    shown = None if args.quiet else notices.to_stderr()
    try:
        return int(args.func(args))
    except GeoReviewError as exc:
        print(f"georeview: error: {exc.one_line()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RecursionError:
        print("georeview: error: input nested too deeply to read", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("georeview: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        # A bug, not bad input: one line (the traceback with -v), never a raw dump.
        log.info("internal error", exc_info=True)
        text = " ".join(str(exc).split())[:200]
        print(
            f"georeview: internal error: {type(exc).__name__}: {text} (please report it;"
            " -v shows the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    finally:
        logging.captureWarnings(False)
        pyw.setLevel(pyw_level)
        if shown is not None:
            notices.restore(*shown)
        settle_heap(args)
