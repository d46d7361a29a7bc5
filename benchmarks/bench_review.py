"""Wall time, import time, work time and peak memory of `georeview review`, one process each.

Each run is a fresh ``python -c CHILD review SITE ...`` process: :data:`CHILD` runs the
command as ``python -m georeview`` does and reports, on its stderr, the seconds spent
in imports (every module loaded for the first time, counted once at the outermost
import, wherever in the run it happens: georeview imports folium, matplotlib and
numba only when the map, exhibit or trace is made), the seconds of the command's own
run (the rest of ``main``), and the wall-clock moments it started and finished, so the
parent splits the whole-process wall into

- start-up (interpreter start until the child's first line),
- imports and work (inside ``main``),
- exit (``main`` returned until the process is reaped: the interpreter's clean-up).

The cases (issue 27's figures): the minor-home review with its map and without the
terrain stage, and the larger site with terrain and map; ``--version`` for the bare
start-up. The median of each figure over ``--runs`` runs is printed, and the largest
peak resident memory (RSS, from ``wait4``; the parent is small, so a child's figure is
its own).

With ``--baseline DIR`` (another checkout of georeview, e.g. ``/tmp/base`` or a
``git worktree add`` of an older commit) each run of this checkout alternates with one
of that checkout on the same input, and the median of the ratios of the alternating
pairs' walls is printed with the ratio of the medians: on a shared machine,
alternating keeps a busy moment from favouring either side. ``cat /proc/loadavg`` is
printed with every case. Nothing is asserted.

The jurisdictions cache (:mod:`georeview.pipeline.jurisdictions`) is warm after the
first run of a layers folder; ``--cold`` gives every run an empty cache folder
(``GEOREVIEW_CACHE_DIR``), as the first review of a layers folder sees.

    python benchmarks/bench_review.py [--runs 7] [--baseline /tmp/base] [--cold] [--quick]
    python benchmarks/bench_review.py --site sample_sites/deerfield_steep --terrain
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: The timed child: the seconds of first-time imports are summed at the outermost
#: ``_find_and_load`` (the import system's entry for a module not yet in
#: ``sys.modules``, looked up by name on every miss), so nested imports count once.
CHILD = """\
import time
t_start = time.time()
import importlib._bootstrap as b, runpy, sys
real, depth, spent = b._find_and_load, [0], [0.0]
def timed(name, import_):
    if depth[0]:
        return real(name, import_)
    depth[0] += 1
    t = time.perf_counter()
    try:
        return real(name, import_)
    finally:
        spent[0] += time.perf_counter() - t
        depth[0] -= 1
b._find_and_load = timed
sys.argv = ["georeview", *sys.argv[1:]]
t0 = time.perf_counter()
code = 0
try:
    runpy.run_module("georeview", run_name="__main__", alter_sys=True)
except SystemExit as e:
    code = e.code
main = time.perf_counter() - t0
sys.stderr.write(
    f"\\nbench-review {t_start:.6f} {time.time():.6f} {spent[0]:.6f} {main:.6f}\\n"
)
sys.exit(code)
"""
MARK = "bench-review "


@dataclass(frozen=True)
class Run:
    """One whole-process run: seconds of each part, and peak RSS in MB."""

    wall: float
    startup: float
    imports: float
    work: float
    exit: float
    rss_mb: float


def run_once(root: Path, args: list[str], cold: bool) -> Run:
    """One fresh-process run of the command ``args`` from checkout ``root``.

    The checkout is the working folder and ``PYTHONPATH``, so its ``georeview`` package
    and ``layers/`` are the ones used.
    """
    with tempfile.TemporaryDirectory() as out:
        extra = ["--out", out, "-q"] if args[0] == "review" else []
        env = dict(os.environ, PYTHONPATH=str(root))
        if cold:
            env["GEOREVIEW_CACHE_DIR"] = str(Path(out) / "cache")
        t0 = time.time()
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, *args, *extra],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        # wait4 reaps the child at its real end (communicate() would return at EOF on
        # stderr, which the interpreter's exit may still be running after)
        err = proc.stderr.read() if proc.stderr else ""
        _, status, usage = os.wait4(proc.pid, 0)
        t1 = time.time()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"georeview {' '.join(args)} exited {proc.returncode} in {root}")
        line = next(x for x in reversed(err.splitlines()) if x.startswith(MARK))
        started, ended, imports, main = (float(v) for v in line[len(MARK) :].split())
        return Run(
            wall=t1 - t0,
            startup=started - t0,
            imports=imports,
            work=main - imports,
            exit=t1 - ended,
            rss_mb=usage.ru_maxrss / 1024.0,  # ru_maxrss is in KiB on Linux
        )


def measure(
    args: list[str], runs: int, cold: bool, baseline: Path | None
) -> tuple[list[Run], list[Run]]:
    """``runs`` runs of this checkout and, alternating with them, of ``baseline``."""
    ours: list[Run] = []
    theirs: list[Run] = []
    for _ in range(runs):
        ours.append(run_once(REPO, args, cold))
        if baseline is not None:
            theirs.append(run_once(baseline, args, cold))
    return ours, theirs


def median(runs: list[Run], field: str) -> float:
    """The median of one figure over the runs."""
    return statistics.median(getattr(r, field) for r in runs)


def line(label: str, runs: list[Run]) -> str:
    """The medians of a side's runs: wall, its parts, and the largest peak RSS."""
    walls = [r.wall for r in runs]
    return (
        f"  {label:9s} wall {median(runs, 'wall'):5.2f} s (min {min(walls):.2f}, max"
        f" {max(walls):.2f}, {len(runs)} runs) = start-up {median(runs, 'startup'):.2f}"
        f" + imports {median(runs, 'imports'):.2f} + work {median(runs, 'work'):.2f}"
        f" + exit {median(runs, 'exit'):.2f} s; peak RSS {max(r.rss_mb for r in runs):4.0f} MB"
    )


def loadavg() -> str:
    """The 1-, 5- and 15-minute load averages, as the kernel reports them."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="3 runs (development)")
    p.add_argument("--baseline", type=Path, help="another georeview checkout to compare")
    p.add_argument("--cold", action="store_true", help="an empty jurisdictions cache each run")
    p.add_argument("--site", type=Path, action="append", help="instead of the two cases")
    p.add_argument("--terrain", action="store_true", help="with --site: keep the terrain stage")
    a = p.parse_args()
    runs = 3 if a.quick else a.runs
    samples = REPO / "sample_sites"
    if a.site:
        extra = [] if a.terrain else ["--no-terrain"]
        cases = [["review", str(s.resolve()), *extra] for s in a.site]
    else:
        cases = [
            ["review", str(samples / "deerfield_minor_home"), "--no-terrain"],
            ["review", str(samples / "deerfield_larger_site")],
        ]
    cases.insert(0, ["--version"])
    baseline = a.baseline.resolve() if a.baseline else None
    # one unmeasured run each, so that neither side pays for writing its bytecode or
    # filling the jurisdictions cache (a warm installation is what a reviewer runs)
    for args in cases:
        measure(args, 1, a.cold, baseline)
    for args in cases:
        label = " ".join(Path(x).name if "/" in x else x for x in args)
        what = ", with map" if args[0] == "review" else ""
        print(f"{label}{what} (load average {loadavg()})")
        ours, theirs = measure(args, runs, a.cold, baseline)
        print(line("this", ours))
        if theirs:
            print(line("baseline", theirs))
            pairs = [o.wall / t.wall for o, t in zip(ours, theirs, strict=True)]
            print(
                f"  ratio this / baseline: {statistics.median(pairs):.2f} (median of"
                f" alternating pairs), {median(ours, 'wall') / median(theirs, 'wall'):.2f}"
                " (ratio of median walls)"
            )
        print(f"  (load average after: {loadavg()})", flush=True)


if __name__ == "__main__":
    main()
