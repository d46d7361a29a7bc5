"""Run a benchmark's child process as a grandchild, so that its peak RSS is its own.

Linux carries a process's high-water RSS into a child across fork and exec: a child
started straight from a benchmark that holds a generated DEM or 400,000 parcels reports
(through ``getrusage`` in the child or ``wait4`` in the parent) at least the benchmark's
own peak. Measured here: a parent holding 500 MB saw 506 MB for a child running
``pass``. A small launcher process forks the real child, whose figure is then its own;
the launcher adds its start-up (about 20 ms) to every contender alike.
"""

from __future__ import annotations

import sys

LAUNCHER = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:])\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "sys.stderr.write(f'\\nbench-peak-rss-kb {usage.ru_maxrss}\\n')\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)

MARK = "bench-peak-rss-kb "


def launched(argv: list[object]) -> list[str]:
    """``argv`` run through the launcher (its stdout and stderr pass through)."""
    return [sys.executable, "-c", LAUNCHER, *map(str, argv)]


def peak_rss_mb(stderr: str) -> float:
    """The child's peak RSS in MB, from the launcher's last line on stderr."""
    line = next(x for x in reversed(stderr.splitlines()) if x.startswith(MARK))
    return int(line[len(MARK) :]) / 1024  # Linux: kilobytes
