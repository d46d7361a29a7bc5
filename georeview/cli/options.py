"""Options and exit codes shared by every ``georeview`` subcommand."""

from __future__ import annotations

import argparse
import gc
from pathlib import Path

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_SOME_FAILED",
    "common_parser",
    "need_web",
    "need_workspace",
    "settle_heap",
    "workspace_arguments",
]

#: The work ran (whatever it found).
EXIT_OK = 0
#: The input is unusable: one line on stderr names the file and the field.
EXIT_BAD_INPUT = 2
#: A batch or screening ran, but some records became error rows (every output is
#: written; one line on stderr says how many failed).
EXIT_SOME_FAILED = 3
#: A bug in georeview (an exception that is not a GeoReviewError): one line on stderr,
#: the traceback only with -v.
EXIT_INTERNAL = 1


def common_parser() -> argparse.ArgumentParser:
    """``-v``/``-q`` for every subcommand (they work before or after its name).

    ``SUPPRESS`` keeps a subcommand from resetting what was given before it.
    """
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS)
    common.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS)
    return common


def settle_heap(args: argparse.Namespace) -> None:
    """Leave what is alive now out of the garbage collector's later full passes.

    A one-shot command imports geopandas, pandas and, as its work needs them, folium,
    matplotlib and numba: some 150,000 tracked objects that live until the process
    ends. Each full collection walks them all again (0.05-0.2 s a pass, a few passes
    during a review), and the interpreter's exit clears the modules with more full
    passes (0.3-0.7 s measured on a review). Freezing moves the objects alive now into
    the collector's permanent generation, which those passes skip; objects are still
    freed by reference count, atexit handlers run and streams are flushed at exit, and
    only reference cycles among the frozen objects are left to the operating system
    (Python makes no finaliser promise for objects alive at exit).

    Only a command run as its own process (``args.one_shot``, set by
    :func:`georeview.cli.main.main` for the process's own command line) freezes: a
    caller running several commands in one process keeps its collector as it was.
    """
    if getattr(args, "one_shot", False):
        gc.freeze()


def workspace_arguments(parser: argparse.ArgumentParser) -> None:
    """``--workspace DIR`` and ``--database URL``: the case store a command works on."""
    import os

    parser.add_argument(
        "--workspace",
        metavar="DIR",
        default=os.environ.get("GEOREVIEW_WORKSPACE"),
        help="the workspace folder (default $GEOREVIEW_WORKSPACE)",
    )
    parser.add_argument(
        "--database", metavar="URL", help="postgresql://... (default: its SQLite file)"
    )


def need_workspace(args: argparse.Namespace) -> Path:
    """The workspace folder the command names (exit 2 with one line when none is)."""
    from georeview.errors import InputError

    if not args.workspace:
        raise InputError(
            "name the workspace: --workspace DIR (or GEOREVIEW_WORKSPACE)", field="--workspace"
        )
    return Path(args.workspace)


#: What ``georeview serve`` and ``georeview users`` import (the ``web`` extra).
WEB_MODULES = ("django", "waitress", "whitenoise", "argon2", "axes", "csp")


def need_web(command: str) -> None:
    """Exit 2 with one line when the ``web`` extra is not installed."""
    import importlib.util

    from georeview.errors import DependencyError

    missing = [m for m in WEB_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise DependencyError(
            f"georeview {command} needs the web extra (missing {', '.join(missing)}):"
            ' pip install "georeview[web]"',
            field=command,
        )
