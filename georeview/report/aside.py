"""One drawing made in a forked child process while this one writes the other reports.

A one-shot review spends about half a second importing matplotlib and drawing the
printed report's exhibit (:mod:`georeview.report.exhibit`), and about as long on the
interactive map, report.json and layers.gpkg, none of which the exhibit needs. On a
machine with a second core the two can run at once: the child is a fork, so it has
the review in memory already and sends back only its result (the exhibit's PNG and
what it states), pickled through a pipe.

Whatever goes wrong in the child (no ``fork`` on the platform, an exception, a child
that dies), the function is called again in this process when its result is asked
for, so the answer, and any error, is what the serial run gives.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

log = logging.getLogger(__name__)

__all__ = ["aside"]

T = TypeVar("T")


def aside(fn: Callable[[], T]) -> Callable[[], T]:
    """Start ``fn()`` in a forked child; return a function that waits for its result.

    Parameters
    ----------
    fn : callable
        Takes no argument; its result must pickle.

    Returns
    -------
    callable
        Call it once: ``fn``'s result from the child, or from ``fn()`` called here when
        the child could not give it.
    """
    import multiprocessing

    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # no fork (Windows): drawn here when asked for
        return fn
    recv, send = ctx.Pipe(duplex=False)

    def child() -> None:
        try:
            send.send((True, fn()))
        except BaseException:  # said again by the serial call in the parent
            send.send((False, None))
        finally:
            send.close()

    proc = ctx.Process(target=child, name="georeview-aside", daemon=True)
    proc.start()
    send.close()  # the child's end: EOF here if the child dies without sending

    def wait() -> T:
        try:
            ok, value = recv.recv()
        except (EOFError, OSError):
            ok, value = False, None
        finally:
            recv.close()
            proc.join()
        if ok:
            return value
        log.debug("the forked child gave no result (exit code %s): run here", proc.exitcode)
        return fn()

    return wait
