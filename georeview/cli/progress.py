"""The progress bar every long command shows on a terminal (rich, on stderr, transient)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

__all__ = ["Tick", "progress_bar", "show_progress"]

class Tick(Protocol):
    """Told ``(done, total, what)`` as work goes on."""

    def __call__(self, done: int, total: int | None, what: str = "") -> None:
        """Report steps done, steps in all (``None``: not known yet), what is being done.

        An empty ``what`` keeps the words last given.
        """


def show_progress(quiet: bool) -> bool:
    """Whether to draw a bar: not with ``-q``, and only when stderr is a terminal."""
    return not quiet and sys.stderr.isatty()


@contextmanager
def progress_bar(label: str, *, show: bool) -> Iterator[Tick | None]:
    """A rich bar labelled ``label``, or ``None`` when ``show`` is false.

    The bar goes to stderr and disappears when the work ends, so what the command
    prints on stdout (its summary) is the same with or without it.
    """
    if not show:
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[what]}"),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None, what="")

        def tick(done: int, total: int | None, what: str = "") -> None:
            if what:
                bar.update(task, completed=done, total=total, what=what)
            else:
                bar.update(task, completed=done, total=total)

        yield tick
