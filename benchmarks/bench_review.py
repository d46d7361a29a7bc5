"""Wall time of `georeview review` on sample sites, start-up included.

Prints the median of several runs of the installed command in a fresh process, with
and without the terrain stage, so the cost of start-up, terrain and reports shows.

    python benchmarks/bench_review.py [SITE ...] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def time_cli(args: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as out:
            extra = ["--out", out, "-q"] if args[0] == "review" else []
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "georeview", *args, *extra],
                check=True,
                cwd=REPO,
                stdout=subprocess.DEVNULL,
            )
            times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("sites", nargs="*")
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args()
    sites = a.sites or sorted(
        str(d.relative_to(REPO))
        for d in (REPO / "sample_sites").iterdir()
        if (d / "submission.toml").exists()
    )
    t = time_cli(["--version"], a.runs)
    print(f"{'start-up (georeview --version)':60s} median {statistics.median(t):6.2f} s")
    for site in sites:
        for label, extra in (("", []), (" --no-terrain", ["--no-terrain"])):
            t = time_cli(["review", site, *extra], a.runs)
            print(
                f"{'review ' + site + label:60s} median {statistics.median(t):6.2f} s "
                f"(min {min(t):.2f}, max {max(t):.2f}, {a.runs} runs)"
            )


if __name__ == "__main__":
    main()
