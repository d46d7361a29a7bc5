"""Benchmark: the 1/4-mile downstream trace at site scale, and pyflwdir's own full-grid run.

Generates an N x N float32 DEM of 1 m cells (default 2400 x 2400) with rolling hills, noise
pits, a valley and a mapped stream along it, then times, each in a
fresh process so numba's start-up is visible:

- ``georeview.measure.flow.trace_downstream`` for a 400 m x 400 m site (default margins: a window of
  site + 1/4 mile + 660 ft each side, about 2.6M cells): cold (first call in
  the process: numba compiles or loads pyflwdir's cached machine code) and warm (second
  call), with a breakdown of the warm call (depression filling + D8, flats, trace);
- pyflwdir's own run on the same DEM: ``pyflwdir.from_dem`` (priority-flood filling + D8)
  and a 402 m ``path`` from the site centre.

``--full 6000`` also runs pyflwdir's full-grid ``from_dem`` on a 6000 x 6000 DEM (the issue's
reference: whitebox-workflows 9.7 s, pyflwdir 15.6 s on this kind of machine).

Usage: ``python benchmarks/bench_flow.py [--size 2400] [--full 6000]``. Prints figures only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

GEOREVIEW_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import geopandas as gpd
from shapely.geometry import Point, LineString
import georeview.measure.flow as F
t_import = time.perf_counter() - t0
dem, x, y, sx0, sx1, sy = sys.argv[1], *map(float, sys.argv[2:7])
site = Point(x, y).buffer(200, cap_style="square")  # a 40-acre site
waters = gpd.GeoDataFrame({"GNIS_NAME": ["Bench Creek"]},
                          geometry=[LineString([(sx0, sy), (sx1, sy)])], crs=3071)
times = []
for _ in range(3):
    t = time.perf_counter()
    res = F.trace_downstream(dem, "m", site, "EPSG:3071", waters=waters,
                             working_crs="EPSG:3071")
    times.append(time.perf_counter() - t)
# breakdown of a warm call
import rasterio
from georeview.terrain import read_dem_window
t = time.perf_counter()
win = read_dem_window(dem, "m", site, "EPSG:3071", margin=F.QUARTER_MILE_FT + 660.0,
                      margin_units="ft")
t_read = time.perf_counter() - t
geoms, labels = F._features_in_dem_crs([(waters, "GNIS_NAME", None, "water")], win)
t = time.perf_counter()
sink, meet = F._rasterize_features(geoms, win)
t_rast = time.perf_counter() - t
t = time.perf_counter()
d8, depth = F._d8_with_sinks(win.elev, sink, win.xres, win.yres)
t_d8 = time.perf_counter() - t
print(json.dumps({"import": t_import, "cold": times[0], "warm": min(times[1:]),
                  "cells": int(win.elev.size), "read": t_read, "rasterize": t_rast,
                  "fill_d8_flats": t_d8, "result": res.to_dict()}))
"""

PYFLWDIR_CHILD = r"""
import json, sys, time
import numpy as np, rasterio, pyflwdir
import pyflwdir.core
dem, x, y = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
with rasterio.open(dem) as ds:
    z = ds.read(1)
    tf = ds.transform
out = {}
for k in range(2):
    t = time.perf_counter()
    flw = pyflwdir.from_dem(z, nodata=-9999.0)
    t_fill = time.perf_counter() - t
    t = time.perf_counter()
    r, c = int((tf.f - y) / -tf.e), int((x - tf.c) / tf.a)
    # FlwdirRaster.path hands its affine.Affine to numba, which cannot type affine>=3:
    # call the numba core with the transform as a tuple (as georeview.measure.flow does)
    paths, dist = pyflwdir.core.path(np.array([r * z.shape[1] + c], dtype=flw.idxs_ds.dtype),
        flw.idxs_ds, ncol=z.shape[1], max_length=402.0, real_length=True,
        transform=tuple(tf)[:6], mv=flw._mv)
    t_path = time.perf_counter() - t
    out["cold" if k == 0 else "warm"] = {"from_dem": t_fill, "path": t_path}
out["cells"] = int(z.size)
print(json.dumps(out))
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


def run(code: str, *args: object) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=2400, help="site-scale DEM side (cells)")
    ap.add_argument("--full", type=int, default=0, help="also run pyflwdir on an NxN DEM")
    args = ap.parse_args()
    n = args.size
    with tempfile.TemporaryDirectory() as tmp:
        dem = Path(tmp) / "dem.tif"
        make_dem(dem, n)
        x, y = 500_000.0 + 0.5 * n, 300_000.0 - 0.45 * n  # site centre, above the valley
        sy = 300_000.0 - 0.62 * n  # the stream runs along the valley floor
        g = run(GEOREVIEW_CHILD, dem, x, y, 500_000.0, 500_000.0 + n, sy)
        p = run(PYFLWDIR_CHILD, dem, x, y)
        print(f"DEM {n} x {n} float32 1 m; georeview window {g['cells'] / 1e6:.1f}M cells")
        print(f"georeview import (geopandas + flow): {g['import']:.2f} s")
        print(f"georeview trace_downstream  cold {g['cold']:.2f} s   warm {g['warm']:.2f} s")
        print(
            f"  warm breakdown: read {g['read']:.2f} s, rasterize features {g['rasterize']:.2f}"
            f" s, fill + D8 + flats {g['fill_d8_flats']:.2f} s"
        )
        r = g["result"]
        print(
            f"  result: reaches={r['reaches_water_within_quarter_mile']}"
            f" distance_ft={r['distance_ft']} feature={r['receiving_feature']}"
        )
        c, w = p["cold"], p["warm"]
        print(
            f"pyflwdir from_dem on {p['cells'] / 1e6:.1f}M cells: cold {c['from_dem']:.2f} s,"
            f" warm {w['from_dem']:.2f} s; 402 m path {w['path'] * 1e3:.1f} ms"
        )
        print(f"ratio georeview warm / pyflwdir warm from_dem: {g['warm'] / w['from_dem']:.2f}")
        if args.full:
            full = Path(tmp) / "full.tif"
            t = time.perf_counter()
            make_dem(full, args.full)
            print(
                f"full grid {args.full} x {args.full} generated in {time.perf_counter() - t:.1f} s"
            )
            f = run(PYFLWDIR_CHILD, full, x, y)
            print(
                f"pyflwdir from_dem full grid: cold {f['cold']['from_dem']:.1f} s,"
                f" warm {f['warm']['from_dem']:.1f} s"
            )


if __name__ == "__main__":
    main()
