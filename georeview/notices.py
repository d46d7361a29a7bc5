"""One-line notices for the person running a command: a wait they would otherwise sit through.

Library code logs them to :data:`logger` at INFO (the first compile of the flow kernels, say);
the command line shows them on stderr as ``georeview: ...`` unless ``--quiet``
(:func:`to_stderr`), and a program using the API sees them through :mod:`logging` as any
other record, or not at all at the default WARNING level.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["StderrNotices", "logger", "restore", "to_stderr"]

#: The logger notices go to.
logger = logging.getLogger("georeview.notice")


class StderrNotices(logging.Handler):
    """Print each notice as ``georeview: MESSAGE`` on the *current* ``sys.stderr``.

    The stream is looked up at each record, not kept: a test that captures stderr, or a
    caller that redirects it, gets the line where it expects it.
    """

    def emit(self, record: logging.LogRecord) -> None:
        """Print the record's message on stderr."""
        try:
            print(f"georeview: {record.getMessage()}", file=sys.stderr, flush=True)
        except Exception:  # a closed stream must not break the command
            self.handleError(record)


def to_stderr() -> tuple[StderrNotices, int, bool]:
    """Show notices on stderr; return the handler and the logger's settings to restore.

    The notices do not propagate to the root logger, so ``-v`` does not print them twice.
    """
    handler = StderrNotices(logging.INFO)
    saved = (logger.level, logger.propagate)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return handler, *saved


def restore(handler: StderrNotices, level: int, propagate: bool) -> None:
    """Undo :func:`to_stderr` (the command line calls it when a command ends)."""
    logger.removeHandler(handler)
    logger.setLevel(level)
    logger.propagate = propagate
