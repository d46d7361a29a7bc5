"""Benchmark: georeview slope + steep area vs ``gdaldem slope -p`` on the same generated DEM.

Generates an N x N float32 DEM of 1 m cells (default 6000 x 6000 = 36M cells) in a temporary
folder, then runs each contender in its own process and prints wall time and peak resident
memory (``ru_maxrss``) of that process:

- ``gdaldem slope -p`` (the anchor: GDAL's Horn slope, written to a GeoTIFF);
- ``georeview.terrain.steep_slopes`` over the whole DEM without polygons (slope + >= 20 % /
  > 20 % areas + max/mean), and with the steep polygons for the map;
- the Python interpreter with georeview's imports only (the floor under georeview's figure).

Usage: ``python benchmarks/bench_terrain.py [--size 6000] [--repeat 2]``.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
mode, dem = sys.argv[1], sys.argv[2]
import geopandas, rasterio
from shapely.geometry import box
from georeview.terrain import steep_slopes
t_import = time.perf_counter() - t0
with rasterio.open(dem) as ds:
    area, crs = box(*ds.bounds), ds.crs.to_wkt()
t1 = time.perf_counter()
if mode == "imports":
    out = {}
else:
    res = steep_slopes(dem, "m", area, crs, polygons=(mode == "polygons"))
    out = res.to_dict()
t_call = time.perf_counter() - t1
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"t_call": t_call, "t_import": t_import, "rss_mb": rss_mb, **out}))
"""

GDAL_CHILD = r"""
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
subprocess.run(["gdaldem", "slope", "-p", "-q", sys.argv[1], sys.argv[2]], check=True)
t = time.perf_counter() - t0
rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"t_call": t, "rss_mb": rss_mb}))
"""


def make_dem(path: Path, n: int, seed: int = 3) -> None:
    """Write an n x n float32 DEM (1 m cells, EPSG:3071) of rolling hills with steep flanks."""
    import rasterio
    from affine import Affine

    rng = np.random.default_rng(seed)
    tf = Affine(1.0, 0.0, 500_000.0, 0.0, -1.0, 300_000.0)
    profile = {
        "driver": "GTiff",
        "height": n,
        "width": n,
        "count": 1,
        "dtype": "float32",
        "crs": "EPSG:3071",
        "transform": tf,
        "tiled": True,
        "blockxsize": 256,
        "blockysize": 256,
    }
    x = np.arange(n, dtype=np.float32)
    phases = rng.uniform(0, 2 * np.pi, 6)
    with rasterio.open(path, "w", **profile) as ds:
        for r0 in range(0, n, 512):
            r1 = min(n, r0 + 512)
            y = np.arange(r0, r1, dtype=np.float32)[:, None]
            z = (
                250.0
                + 12.0 * np.sin(x / 97.0 + phases[0]) * np.cos(y / 131.0 + phases[1])
                + 5.0 * np.sin((x + y) / 41.0 + phases[2])
                + 0.02 * y
            )
            z += rng.normal(0.0, 0.05, z.shape).astype(np.float32)
            ds.write(z.astype(np.float32), 1, window=((r0, r1), (0, n)))


def run(cmd: list[str]) -> dict:
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=6000, help="cells per side (default 6000)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each (best time kept)")
    args = ap.parse_args()
    if shutil.which("gdaldem") is None:
        sys.exit("gdaldem (gdal-bin) is not installed")
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        dem = Path(tmp) / "dem.tif"
        t0 = time.perf_counter()
        make_dem(dem, args.size)
        print(
            f"DEM {args.size} x {args.size} float32 1 m ({args.size**2 / 1e6:.1f}M cells)"
            f" generated in {time.perf_counter() - t0:.1f} s"
        )
        results: dict[str, list[dict]] = {"gdaldem": [], "steep": [], "polygons": [], "imports": []}
        py = [sys.executable, "-c"]
        for k in range(args.repeat):
            out = Path(tmp) / "slope.tif"
            results["gdaldem"].append(run([*py, GDAL_CHILD, str(dem), str(out)]))
            out.unlink()
            # polygonising a whole noisy 36M-cell grid is slow: once is enough
            for mode in ("steep", "imports") if k else ("steep", "polygons", "imports"):
                results[mode].append(run([*py, CHILD, mode, str(dem)]))
        best = {k: min(v, key=lambda d: d["t_call"]) for k, v in results.items()}
        peak = {k: max(d["rss_mb"] for d in v) for k, v in results.items()}
        g = best["gdaldem"]
        print(f"{'':34s}{'time s':>9s}{'peak RSS MB':>13s}{'x gdaldem':>11s}")
        print(f"{'gdaldem slope -p':34s}{g['t_call']:9.2f}{peak['gdaldem']:13.0f}{1.0:11.2f}")
        for key, label in (
            ("steep", "georeview slope + steep area"),
            ("polygons", "  + steep polygons"),
        ):
            b = best[key]
            print(
                f"{label:34s}{b['t_call']:9.2f}{peak[key]:13.0f}{b['t_call'] / g['t_call']:11.2f}"
            )
        imp = best["imports"]
        print(
            f"{'python + georeview imports only':34s}{imp['t_import']:9.2f}{peak['imports']:13.0f}"
        )
        s = best["steep"]
        print(
            f"memory ratio (RSS, incl. interpreter): {peak['steep'] / peak['gdaldem']:.2f};"
            f" above the import floor: {peak['steep'] - peak['imports']:.0f} MB"
        )
        print(
            f"steep >= 20 %: {s['steep_slope_area_sqft']:.0f} sq ft of {s['n_cells']} cells;"
            f" max {s['max_slope_pct']:.1f} %; polygons: {best['polygons']['n_steep_polygons']}"
        )
        print(
            f"(repo {repo}; best of {args.repeat} runs, polygons once;"
            " gdaldem also writes its GeoTIFF; peak RSS = max over runs)"
        )


if __name__ == "__main__":
    main()
