"""Benchmark: georeview slope + steep area vs ``gdaldem slope -p`` on the same generated DEM.

Generates an N x N float32 DEM of 1 m cells (default 6000 x 6000 = 36M cells) in a temporary
folder, then runs each contender in its own process and prints wall time and peak resident
memory (``ru_maxrss``) of that process:

- ``gdaldem slope -p`` (the anchor: GDAL's Horn slope, written to a GeoTIFF);
- ``georeview.measure.steep.steep_slopes`` over the whole DEM without polygons (slope +
  >= 20 % / > 20 % areas + max/mean), and with the steep polygons for the map (a window of
  more than ``MAP_MAX_CELLS`` = 4M cells, as this one, is drawn on k x k-cell blocks:
  ``georeview.measure.steep_polygons``; the measured areas are the same);
- the same two slope runs with the other core kept busy by a spinning process (the
  review's case on a shared 2-core machine);
- 5 ft contours written to a GeoPackage: ``gdal_contour -i 1.524`` (the anchor; 1.524 m =
  5 ft, the DEM is in metres) against ``georeview.measure.contours.contours_ft`` written with
  pyogrio's Arrow path in batches of 20,000 lines;
- the Python interpreter with georeview's imports only (the floor under georeview's figure).

The anchors come from Debian's gdal-bin. Usage: ``python benchmarks/bench_terrain.py
[--size 6000] [--repeat 2]``. Prints figures; asserts nothing.
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
from _launch import launched

CHILD = r"""
import json, resource, sys, time
STEEP_PCT = 20.0  # the shipped ordinances' steep_slope_pct
t0 = time.perf_counter()
mode, dem = sys.argv[1], sys.argv[2]
import geopandas, rasterio
from shapely.geometry import box
from georeview.measure.contours import contours_ft
from georeview.measure.steep import steep_slopes
t_import = time.perf_counter() - t0
with rasterio.open(dem) as ds:
    area, crs = box(*ds.bounds), ds.crs.to_wkt()
t1 = time.perf_counter()
if mode == "imports":
    out = {}
elif mode == "contours":
    import pyogrio
    gdf = contours_ft(dem, "m", area, crs, interval_ft=5.0, working_crs=crs)
    # Arrow batches of 20,000 lines: one call would hold the WKB of every line at once
    for k in range(0, max(len(gdf), 1), 20_000):
        pyogrio.write_dataframe(gdf.iloc[k : k + 20_000], sys.argv[3], driver="GPKG",
                                use_arrow=True, append=k > 0)
    out = {"n_lines": len(gdf)}
else:
    res = steep_slopes(dem, "m", area, crs, polygons=(mode == "polygons"), threshold_pct=STEEP_PCT)
    out = res.to_dict()
t_call = time.perf_counter() - t1
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"t_call": t_call, "t_import": t_import, "rss_mb": rss_mb, **out}))
"""

GDAL_CHILD = r"""
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
subprocess.run(sys.argv[1:], check=True)
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
    # through the launcher: the child's ru_maxrss would otherwise start at this process's
    out = subprocess.run(launched(list(cmd)), check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def spinner() -> subprocess.Popen:
    """A process keeping one core busy (stopped by the caller)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=6000, help="cells per side (default 6000)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each (best time kept)")
    args = ap.parse_args()
    if shutil.which("gdaldem") is None or shutil.which("gdal_contour") is None:
        sys.exit("gdaldem / gdal_contour (Debian gdal-bin) are not installed")
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        dem = Path(tmp) / "dem.tif"
        t0 = time.perf_counter()
        make_dem(dem, args.size)
        print(
            f"DEM {args.size} x {args.size} float32 1 m ({args.size**2 / 1e6:.1f}M cells)"
            f" generated in {time.perf_counter() - t0:.1f} s"
        )
        keys = ("gdaldem", "steep", "polygons", "gdaldem_busy", "steep_busy", "polygons_busy")
        keys += ("gdal_contour", "contours", "imports")
        results: dict[str, list[dict]] = {k: [] for k in keys}
        py = [sys.executable, "-c"]
        slope_tif = Path(tmp) / "slope.tif"
        gpkg = Path(tmp) / "contours.gpkg"

        def gdaldem() -> dict:
            res = run([*py, GDAL_CHILD, "gdaldem", "slope", "-p", "-q", str(dem), str(slope_tif)])
            slope_tif.unlink()
            return res

        def gdal_contour() -> dict:
            cmd = ["gdal_contour", "-q", "-i", "1.524", "-a", "elev", str(dem), str(gpkg)]
            res = run([*py, GDAL_CHILD, *cmd])
            gpkg.unlink()
            return res

        def mine(mode: str) -> dict:
            res = run([*py, CHILD, mode, str(dem), str(gpkg)])
            gpkg.unlink(missing_ok=True)
            return res

        for _ in range(args.repeat):
            # alternate anchor and georeview, one pair at a time
            results["gdaldem"].append(gdaldem())
            results["steep"].append(mine("steep"))
            results["polygons"].append(mine("polygons"))
            busy = spinner()
            try:
                results["gdaldem_busy"].append(gdaldem())
                results["steep_busy"].append(mine("steep"))
                results["polygons_busy"].append(mine("polygons"))
            finally:
                busy.kill()
                busy.wait()
            results["gdal_contour"].append(gdal_contour())
            results["contours"].append(mine("contours"))
            results["imports"].append(mine("imports"))
        best = {k: min(v, key=lambda d: d["t_call"]) for k, v in results.items()}
        peak = {k: max(d["rss_mb"] for d in v) for k, v in results.items()}
        print(f"{'':40s}{'time s':>9s}{'peak MB':>10s}{'x time':>9s}{'x RSS':>8s}")

        def line(key: str, label: str, anchor: str) -> None:
            b, a = best[key], best[anchor]
            print(
                f"{label:40s}{b['t_call']:9.2f}{peak[key]:10.0f}"
                f"{b['t_call'] / a['t_call']:9.2f}{peak[key] / peak[anchor]:8.2f}"
            )

        line("gdaldem", "gdaldem slope -p", "gdaldem")
        line("steep", "georeview slope + steep area", "gdaldem")
        line("polygons", "  + steep polygons", "gdaldem")
        line("gdaldem_busy", "gdaldem slope -p, a core busy", "gdaldem_busy")
        line("steep_busy", "georeview steep_slopes, a core busy", "gdaldem_busy")
        line("polygons_busy", "  + steep polygons, a core busy", "gdaldem_busy")
        line("gdal_contour", "gdal_contour -i 5 ft -> GeoPackage", "gdal_contour")
        line("contours", "georeview contours_ft 5 ft -> GeoPackage", "gdal_contour")
        imp = best["imports"]
        print(
            f"{'python + georeview imports only':40s}{imp['t_import']:9.2f}{peak['imports']:10.0f}"
        )
        s = best["steep"]
        print(
            f"steep >= 20 %: {s['steep_slope_area_sqft']:.0f} sq ft of {s['n_cells']} cells;"
            f" max {s['max_slope_pct']:.1f} %; polygons: {best['polygons']['n_steep_polygons']};"
            f" contour lines: {best['contours']['n_lines']}"
        )
        print(
            f"(repo {repo}; best of {args.repeat} runs, alternating with the anchor; gdaldem"
            " also writes its GeoTIFF; peak RSS = max over runs, interpreter included)"
        )


if __name__ == "__main__":
    main()
