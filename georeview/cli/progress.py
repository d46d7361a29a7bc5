"""The command line's progress bar: rich, on stderr, only on a terminal.

``georeview screen`` counts partitions with it and ``georeview review FOLDER`` counts
submissions. Off a terminal (a pipe, a log file, a CI job) or with ``-q`` nothing is
drawn, so the output is the summary alone.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["progress_bar", "shows_progress"]

#: What a running command calls: ``tick(done, total)``.
Tick = Callable[[int, int], None]


def shows_progress(quiet: bool) -> bool:
    """Whether to draw a bar: not ``-q``, and stderr is a terminal."""
    return not quiet and sys.stderr.isatty()


@contextmanager
def progress_bar(description: str, *, quiet: bool) -> Iterator[Tick | None]:
    """A transient bar counting ``description`` (``None`` where none is drawn).

    Yields
    ------
    callable or None
        ``tick(done, total)`` to move the bar; ``None`` off a terminal or with ``-q``.
    """
    if not shows_progress(quiet):
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=None)

        def tick(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield tick
