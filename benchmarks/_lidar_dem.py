"""A generated DEM that looks like a county's lidar bare-earth tile, for the benchmarks.

Real 1 m lidar DEMs are not smooth: they carry decimetre-to-metre roughness at the cell
scale (ploughed fields, brush, interpolation noise), many small pits (each a depression a
fill has to raise), flat areas (parking lots, building pads, hydro-flattened water), ponds
and lakes flattened to one water-surface elevation, and nodata where the survey stops or a
void was left. Each of these is what makes fill, flats, contours and slope work harder than
on a smooth synthetic surface, so the benchmarks time every tool on this one.

The surface, in metres on EPSG:3071 (Wisconsin Transverse Mercator) with 1 m cells:

- rolling hills: smoothed noise (Gaussian, sigma ~ 300 m) scaled to about 40 m of relief,
  plus a valley running west to east through the middle with a mapped stream along it
  (returned, so the flow benchmarks can burn it as a review does);
- roughness: white noise (sd 0.05 m, QL2 lidar's vertical accuracy) plus noise smoothed at 3 m
  (sd 0.3 m after smoothing: furrows and hummocks), which makes many small pits and steep
  cells here and there as real tiles do;
- pits: 1 in 2,000 cells lowered by 0.2-1.5 m (single-cell pits as lidar returns leave);
- flats: rectangles 20-120 m across set to their mean elevation (pads and lots);
- ponds: discs 15-80 m across, hydro-flattened to the lowest elevation of their shoreline
  minus 0.1 m, as the USGS Lidar Base Specification asks of water bodies;
- nodata (``-9999``): a ragged strip along the east edge (the survey's limit) and a few
  voids inside.

``python benchmarks/_lidar_dem.py OUT.tif [--size 6000]`` writes one (asserting nothing).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

#: Origin (south-west corner, metres, EPSG:3071) of every generated DEM: Kenosha County.
X0, Y0 = 680_000.0, 250_000.0
CELL_M = 1.0
NODATA = -9999.0
CRS = "EPSG:3071"


def _smooth_noise(rng: np.random.Generator, n: int, sigma: float, sd: float) -> np.ndarray:
    """Gaussian-smoothed white noise of standard deviation *sd*, float32 (n x n)."""
    from scipy import ndimage

    if sigma > 16:
        # smooth a coarser grid and zoom: the same spectrum at a fraction of the work
        k = int(sigma // 8)
        m = n // k + 2
        coarse = ndimage.gaussian_filter(rng.standard_normal((m, m), dtype=np.float32), sigma / k)
        out = ndimage.zoom(coarse, k, order=1)[:n, :n]
    else:
        out = ndimage.gaussian_filter(rng.standard_normal((n, n), dtype=np.float32), sigma)
    out *= np.float32(sd / max(float(out.std()), 1e-12))
    return out.astype(np.float32, copy=False)


def lidar_like(n: int, seed: int = 27) -> tuple[np.ndarray, dict[str, Any]]:
    """The DEM (float32, ``NODATA`` where void) and what was put in it.

    Returns the array and a dict with ``stream`` (the mapped stream's vertices in EPSG:3071
    metres), ``ponds`` (centre x, y and radius in metres), ``site`` (a site centre on the
    valley's north slope) and the counts of pits, flats and nodata cells.
    """
    rng = np.random.default_rng(seed)
    z = _smooth_noise(rng, n, sigma=max(n / 20, 8.0), sd=10.0)
    rows = np.arange(n, dtype=np.float32)[:, None]
    cols = np.arange(n, dtype=np.float32)[None, :]
    # a valley west to east, meandering, 8 m deep, and a regional fall to the east
    centre = n / 2 + (n / 12) * np.sin(cols / max(n / 6, 1.0))
    z += np.float32(8.0) * (np.abs(rows - centre) / (n / 2)) ** 0.7
    z -= np.float32(4.0) * cols / n
    z += np.float32(230.0)
    z += _smooth_noise(rng, n, sigma=3.0, sd=0.3)
    z += rng.normal(0.0, 0.05, size=(n, n)).astype(np.float32)

    pits = rng.random((n, n), dtype=np.float32) < 1 / 2000
    z[pits] -= rng.uniform(0.2, 1.5, size=int(pits.sum())).astype(np.float32)

    n_flats = max(1, n * n // 400_000)
    for _ in range(n_flats):
        w, h = rng.integers(20, 121, size=2)
        r0, c0 = rng.integers(0, max(n - h, 1)), rng.integers(0, max(n - w, 1))
        block = z[r0 : r0 + h, c0 : c0 + w]
        block[...] = np.float32(block.mean())

    ponds = []
    n_ponds = max(1, n * n // 600_000)
    for _ in range(n_ponds):
        rad = float(rng.uniform(7.5, 40.0))
        cr, cc = rng.uniform(rad + 1, n - rad - 1, size=2)
        r0, r1 = int(cr - rad - 1), int(cr + rad + 2)
        c0, c1 = int(cc - rad - 1), int(cc + rad + 2)
        rr, ccs = np.ogrid[r0:r1, c0:c1]
        d = np.hypot(rr - cr, ccs - cc)
        inside, rim = d <= rad, (d > rad) & (d <= rad + 1.5)
        sub = z[r0:r1, c0:c1]
        sub[inside] = np.float32(sub[rim].min() - 0.1)
        ponds.append((X0 + cc * CELL_M, Y0 + (n - cr) * CELL_M, rad * CELL_M))

    # nodata: a ragged east edge (the survey limit) and a few voids
    edge = n - 1 - (n // 100) * (1 + np.abs(_smooth_noise(rng, n, 1.0, 1.0)[:, 0]))
    void = cols >= edge[:, None].astype(np.float32)
    for _ in range(max(1, n // 1500)):
        rad = float(rng.uniform(3, 12))
        cr, cc = rng.uniform(rad, n - rad, size=2)
        void |= np.hypot(rows - np.float32(cr), cols - np.float32(cc)) <= rad
    z[void] = np.float32(NODATA)

    stream_cols = np.linspace(0, n - 1, 64)
    stream_rows = n / 2 + (n / 12) * np.sin(stream_cols / max(n / 6, 1.0))
    stream = [
        (X0 + (c + 0.5) * CELL_M, Y0 + (n - r - 0.5) * CELL_M)
        for r, c in zip(stream_rows, stream_cols, strict=True)
    ]
    site_c = n / 3
    site_r = n / 2 + (n / 12) * np.sin(site_c / max(n / 6, 1.0)) - n / 10
    info = {
        "n": n,
        "stream": stream,
        "ponds": ponds,
        "site": (X0 + site_c * CELL_M, Y0 + (n - site_r) * CELL_M),
        "pits": int(pits.sum()),
        "flats": n_flats,
        "nodata_cells": int(void.sum()),
    }
    return z, info


def write_lidar_dem(path: Path, n: int, seed: int = 27) -> dict[str, Any]:
    """Write the DEM as a tiled, compressed float32 GeoTIFF; return :func:`lidar_like`'s info.

    Tiled and compressed as county lidar tiles are delivered, with ``-9999`` declared as
    nodata and the vertical unit left in metres (the CRS's unit; the benchmarks say so).
    """
    import rasterio
    from rasterio.transform import from_origin

    z, info = lidar_like(n, seed)
    profile = {
        "driver": "GTiff",
        "width": n,
        "height": n,
        "count": 1,
        "dtype": "float32",
        "crs": CRS,
        "transform": from_origin(X0, Y0 + n * CELL_M, CELL_M, CELL_M),
        "nodata": NODATA,
        "tiled": True,
        "blockxsize": 256,
        "blockysize": 256,
        "compress": "deflate",
        "predictor": 3,
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(z, 1)
    return info


def main(argv: list[str] | None = None) -> int:
    """Write one DEM and print what is in it as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--size", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=27)
    a = ap.parse_args(argv)
    info = write_lidar_dem(a.out, a.size, a.seed)
    info.pop("stream")
    info.pop("ponds")
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
