"""Benchmark: flow routing (fill + D8 + flats + trace), site window and full grid, vs whitebox.

Generates float32 DEMs of 1 m cells with rolling hills, noise pits, a valley and a mapped
stream along it, then times each contender in a fresh process (so numba's start-up is
visible) and prints wall time and peak resident memory (``ru_maxrss``) of that process:

- site scale (``--size``, default 2400 x 2400): ``georeview.measure.flow.trace_downstream``
  for a 400 m x 400 m site (a window of site + 1/4 mile + 660 ft each side, about 2.6M
  cells), first call in the process (after the imports a review has made by then: rasterio
  and the layers config) and warm (best of two more), with a breakdown; the
  anchor is whitebox-workflows on the same window (read, ``fill_depressions``,
  ``d8_pointer``, ``trace_downslope_flowpaths`` from the site centre);
- full grid (``--full``, default 6000 x 6000 = 36M cells): georeview's fill + D8 + flats
  (``flow_routing.d8_with_sinks``) and a trace from 400 cells, against the same whitebox-workflows
  pipeline on the whole file.

whitebox-workflows (MIT OR Apache-2.0) is the anchor when installed (the ``bench`` extra);
without it georeview's figures are printed alone. Runs alternate (georeview, anchor) and the
best time of ``--repeat`` runs is kept; peak RSS is the maximum over the runs.

Usage: ``python benchmarks/bench_flow.py [--size 2400] [--full 6000] [--repeat 2]``.
Prints figures only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _launch import launched

SITE_CHILD = r"""
import json, resource, sys, time

QUARTER_MILE_FT = 1320.0  # the shipped ordinances' downstream_trace_ft
t0 = time.perf_counter()
import geopandas as gpd
from shapely.geometry import Point, LineString
import georeview.measure.flow as F
t_import = time.perf_counter() - t0
from georeview.measure import flow_features as FF, flow_routing as R
# what a review has loaded before its trace (the layers config, rasterio for the slopes):
# the first call then shows the trace's own start-up (numba), not these imports
import rasterio, georeview.config
t_pre = time.perf_counter() - t0 - t_import
dem, x, y, sx0, sx1, sy = sys.argv[1], *map(float, sys.argv[2:7])
site = Point(x, y).buffer(200, cap_style="square")  # a 40-acre site
waters = gpd.GeoDataFrame({"GNIS_NAME": ["Bench Creek"]},
                          geometry=[LineString([(sx0, sy), (sx1, sy)])], crs=3071)
times = []
for _ in range(3):
    t = time.perf_counter()
    res = F.trace_downstream(dem, "m", site, "EPSG:3071", waters=waters,
                             working_crs="EPSG:3071", length_ft=QUARTER_MILE_FT)
    times.append(time.perf_counter() - t)
from georeview.measure.dem import read_dem_window
t = time.perf_counter()
win = read_dem_window(dem, "m", site, "EPSG:3071", margin=QUARTER_MILE_FT + 660.0,
                      margin_units="ft")
t_read = time.perf_counter() - t
geoms, labels = FF.features_in_dem_crs([(waters, "GNIS_NAME", None, "water")], win)
t = time.perf_counter()
sink, meet = FF.rasterize_features(geoms, win)
t_rast = time.perf_counter() - t
t = time.perf_counter()
d8, depth = R.d8_with_sinks(win.elev, sink, win.xres, win.yres)
t_d8 = time.perf_counter() - t
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"import": t_import, "pre_import": t_pre, "cold": times[0], "warm": min(times[1:]),
                  "cells": int(win.elev.size), "read": t_read, "rasterize": t_rast,
                  "fill_d8_flats": t_d8, "rss_mb": rss_mb, "result": res.to_dict(),
                  "window": [win.row_off, win.col_off, *win.elev.shape]}))
"""

FULL_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import numpy as np, rasterio
from georeview.measure import flow_routing as R
from georeview.measure import _flowkernels as K
# time the fill inside d8_with_sinks (which calls it as kernels.fill_depressions)
_fill, t_fill = K.fill_depressions, []
def _timed_fill(*a, **k):
    t = time.perf_counter()
    out = _fill(*a, **k)
    t_fill.append(time.perf_counter() - t)
    return out
K.fill_depressions = _timed_fill
dem, r0, c0 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with rasterio.open(dem) as ds:
    z = ds.read(1)
    xres, yres = abs(ds.transform.a), abs(ds.transform.e)
t_read = time.perf_counter() - t0
t = time.perf_counter()
d8, depth = R.d8_with_sinks(z, np.zeros(z.shape, bool), xres, yres)
t_d8 = time.perf_counter() - t
t = time.perf_counter()
rr, cc = np.meshgrid(np.arange(r0, r0 + 400, 20), np.arange(c0, c0 + 400, 20))
starts = (rr * z.shape[1] + cc).ravel().astype(np.int64)
cells, offsets = R.trace_paths(d8.ravel(), z.shape[1], starts, np.zeros(z.size, bool),
                               402.0, xres, yres)
t_trace = time.perf_counter() - t
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"t_call": time.perf_counter() - t0, "read": t_read, "fill_d8_flats": t_d8,
                  "fill": t_fill[0], "trace": t_trace, "rss_mb": rss_mb, "cells": int(z.size)}))
"""

WBW_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import whitebox_workflows as w
wb = w.WbEnvironment()
hyd = wb.hydrology
dem = wb.read_raster(sys.argv[1])
filled = hyd.fill_depressions(dem=dem)
pntr = hyd.d8_pointer(dem=filled)
seeds = wb.read_vector(sys.argv[2])
paths = hyd.trace_downslope_flowpaths(seed_points=seeds, d8_pntr=pntr)
t = time.perf_counter() - t0
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"t_call": t, "rss_mb": rss_mb}))
"""


def make_dem(path: Path, n: int, seed: int = 5) -> None:
    """Write an n x n float32 DEM of 1 m cells (EPSG:3071): hills, a valley, noise pits."""
    import rasterio
    from affine import Affine

    rng = np.random.default_rng(seed)
    tf = Affine(1.0, 0.0, 500_000.0, 0.0, -1.0, 300_000.0)
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        height=n,
        width=n,
        count=1,
        dtype="float32",
        crs="EPSG:3071",
        transform=tf,
        tiled=True,
        blockxsize=256,
        blockysize=256,
    ) as ds:
        x = np.arange(n, dtype=np.float32)
        for r0 in range(0, n, 512):
            r1 = min(n, r0 + 512)
            y = np.arange(r0, r1, dtype=np.float32)[:, None]
            # valley along row n * 0.62, low hills, 0.1 m noise that makes many small pits
            z = (
                250.0
                + 0.02 * np.abs(y - 0.62 * n)
                + 1.5 * np.sin(x / 83.0) * np.cos(y / 117.0)
                + 0.002 * x
            )
            z += rng.normal(0.0, 0.1, z.shape).astype(np.float32)
            ds.write(z.astype(np.float32), 1, window=((r0, r1), (0, n)))


def crop(src_path: Path, dst_path: Path, window: list[int]) -> None:
    """Write the window (row_off, col_off, rows, cols) of a DEM to its own GeoTIFF."""
    import rasterio
    from rasterio.windows import Window

    r0, c0, nr, nc = window
    with rasterio.open(src_path) as src:
        win = Window(c0, r0, nc, nr)
        z = src.read(1, window=win)
        profile = src.profile | {
            "height": nr,
            "width": nc,
            "transform": src.window_transform(win),
        }
    with rasterio.open(dst_path, "w", **profile) as dst:
        dst.write(z, 1)


def write_seed(path: Path, x: float, y: float) -> None:
    """One seed point (EPSG:3071) for whitebox's trace."""
    import geopandas as gpd
    from shapely.geometry import Point

    gpd.GeoDataFrame(geometry=[Point(x, y)], crs=3071).to_file(path)


def run(code: str, *args: object) -> dict:
    # through the launcher: the child's ru_maxrss would otherwise start at this process's
    out = subprocess.run(
        launched([sys.executable, "-c", code, *args]), check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def row(label: str, t: float, rss: float, anchor: dict | None) -> str:
    """One table line: time, peak RSS and the ratios to the anchor."""
    text = f"{label:44s}{t:9.2f}{rss:12.0f}"
    if anchor:
        text += f"{t / anchor['t_call']:9.2f}{rss / anchor['rss_mb']:9.2f}"
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=2400, help="site-scale DEM side (cells)")
    ap.add_argument("--full", type=int, default=6000, help="full-grid DEM side (0: skip)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each (best time kept)")
    args = ap.parse_args()
    has_wbw = importlib.util.find_spec("whitebox_workflows") is not None
    if not has_wbw:
        print("whitebox-workflows is not installed (pip install '.[bench]'): no anchor")
    n = args.size
    header = f"{'':44s}{'time s':>9s}{'peak MB':>12s}{'x time':>9s}{'x RSS':>9s}"
    with tempfile.TemporaryDirectory() as tmp:
        dem = Path(tmp) / "dem.tif"
        make_dem(dem, n)
        x, y = 500_000.0 + 0.5 * n, 300_000.0 - 0.45 * n  # site centre, above the valley
        sy = 300_000.0 - 0.62 * n  # the stream runs along the valley floor
        seed = Path(tmp) / "seed.shp"
        write_seed(seed, x, y)
        site, wbw = [], []
        for _ in range(args.repeat):
            site.append(run(SITE_CHILD, dem, x, y, 500_000.0, 500_000.0 + n, sy))
            if has_wbw:
                window = Path(tmp) / "window.tif"
                if not window.exists():
                    crop(dem, window, site[0]["window"])
                wbw.append(run(WBW_CHILD, window, seed))
        g = {k: min(d[k] for d in site) for k in ("cold", "warm", "read", "fill_d8_flats")}
        g_rss = max(d["rss_mb"] for d in site)
        a = None
        if wbw:
            a = {"t_call": min(d["t_call"] for d in wbw), "rss_mb": max(d["rss_mb"] for d in wbw)}
        print(f"site scale: DEM {n} x {n} float32 1 m, window {site[0]['cells'] / 1e6:.1f}M cells")
        print(header)
        if a:
            print(row("whitebox-workflows fill + D8 + trace", a["t_call"], a["rss_mb"], a))
        print(row("georeview trace_downstream, first call", g["cold"], g_rss, a))
        print(row("georeview trace_downstream, warm", g["warm"], g_rss, a))
        print(
            f"  warm breakdown: read {g['read']:.2f} s, fill + D8 + flats"
            f" {g['fill_d8_flats']:.2f} s; import (geopandas + flow) {site[0]['import']:.2f} s,"
            f" then rasterio + georeview.config {site[0]['pre_import']:.2f} s"
        )
        r = site[0]["result"]
        print(
            f"  result: reaches={r['reaches_water_within_quarter_mile']}"
            f" distance_ft={r['distance_ft']} feature={r['receiving_feature']}"
        )
        if args.full:
            full = Path(tmp) / "full.tif"
            t = time.perf_counter()
            make_dem(full, args.full)
            print(
                f"full grid {args.full} x {args.full} generated in {time.perf_counter() - t:.1f} s"
            )
            r0, c0 = int(0.45 * args.full), int(0.5 * args.full)
            fx, fy = 500_000.0 + c0 + 0.5, 300_000.0 - r0 - 0.5
            fseed = Path(tmp) / "fseed.shp"
            write_seed(fseed, fx, fy)
            mine, theirs = [], []
            for _ in range(args.repeat):
                mine.append(run(FULL_CHILD, full, r0, c0))
                if has_wbw:
                    theirs.append(run(WBW_CHILD, full, fseed))
            m = min(mine, key=lambda d: d["t_call"])
            m_rss = max(d["rss_mb"] for d in mine)
            a = None
            if theirs:
                a = {
                    "t_call": min(d["t_call"] for d in theirs),
                    "rss_mb": max(d["rss_mb"] for d in theirs),
                }
            print(header)
            if a:
                print(
                    row("whitebox-workflows read + fill + D8 + trace", a["t_call"], a["rss_mb"], a)
                )
            print(row("georeview read + fill + D8 + flats + trace", m["t_call"], m_rss, a))
            print(
                f"  breakdown: imports + read {m['read']:.2f} s, fill + D8 + flats"
                f" {m['fill_d8_flats']:.2f} s (of which the fill {m['fill']:.2f} s),"
                f" 400 traces {m['trace']:.3f} s"
            )
        print(f"(best of {args.repeat} runs, each in a fresh process; peak RSS = max over runs)")


if __name__ == "__main__":
    main()
