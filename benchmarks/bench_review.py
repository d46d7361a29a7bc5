"""Wall time and peak memory of `georeview review` on sample sites, start-up included.

Prints the median of several runs of the command in a fresh process, with and without
the terrain stage, so the cost of start-up, terrain and reports shows, and the largest
peak resident memory (RSS) of those runs. Issue 16's goals for one review: 0.8 s
without terrain, 1.5 s with it.

With ``--baseline DIR`` (another checkout of georeview, e.g. ``git worktree add`` of
an older commit) each run of this checkout alternates with one of that checkout on the
same input, and the median ratio is printed: on a shared machine, alternating keeps a
busy moment from favouring either side.

The jurisdictions cache (:mod:`georeview.pipeline.jurisdictions`) is warm after the
first run of a layers folder; ``--cold`` gives every run an empty cache folder
(``GEOREVIEW_CACHE_DIR``), as the first review of a layers folder sees.

    python benchmarks/bench_review.py [SITE ...] [--runs 5] [--baseline DIR] [--cold]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_once(root: Path, args: list[str], cold: bool) -> tuple[float, float]:
    """One fresh-process run of ``python -m georeview ARGS`` from checkout ``root``.

    Returns (seconds, peak RSS in MB). The checkout is the working folder, so its
    ``georeview`` package and ``layers/`` are the ones used.
    """
    with tempfile.TemporaryDirectory() as out:
        extra = ["--out", out, "-q"] if args[0] == "review" else []
        env = dict(os.environ, PYTHONPATH=str(root))
        if cold:
            env["GEOREVIEW_CACHE_DIR"] = str(Path(out) / "cache")
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "georeview", *args, *extra],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"georeview {' '.join(args)} exited {proc.returncode} in {root}")
        return seconds, usage.ru_maxrss / 1024.0  # ru_maxrss is in KiB on Linux


def measure(
    args: list[str], runs: int, cold: bool, baseline: Path | None
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """``runs`` runs of this checkout and, alternating with them, of ``baseline``."""
    ours: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    for _ in range(runs):
        ours.append(run_once(REPO, args, cold))
        if baseline is not None:
            theirs.append(run_once(baseline, args, cold))
    return ours, theirs


def line(label: str, runs: list[tuple[float, float]]) -> str:
    t = [r[0] for r in runs]
    rss = max(r[1] for r in runs)
    return (
        f"{label:58s} median {statistics.median(t):6.2f} s "
        f"(min {min(t):.2f}, max {max(t):.2f}, {len(t)} runs), peak RSS {rss:5.0f} MB"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("sites", nargs="*")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--baseline", type=Path, help="another georeview checkout to compare")
    p.add_argument("--cold", action="store_true", help="an empty jurisdictions cache each run")
    a = p.parse_args()
    sites = [str(Path(s).resolve()) for s in a.sites] or sorted(
        str(d) for d in (REPO / "sample_sites").iterdir() if (d / "submission.toml").exists()
    )
    baseline = a.baseline.resolve() if a.baseline else None
    cases = [["--version"]] + [
        ["review", site, *extra] for site in sites for extra in ([], ["--no-terrain"])
    ]
    for args in cases:
        label = " ".join(Path(x).name if "/" in x else x for x in args)
        ours, theirs = measure(args, a.runs, a.cold, baseline)
        print(line(label, ours))
        if theirs:
            ratios = [o[0] / t[0] for o, t in zip(ours, theirs, strict=True)]
            print(line("  baseline", theirs))
            print(
                f"  {'ratio this / baseline (median of alternating pairs)':56s} "
                f"{statistics.median(ratios):.2f}"
            )


if __name__ == "__main__":
    main()
