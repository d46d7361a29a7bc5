"""Benchmark: a statewide screening, 3.5 million synthetic parcels in the statewide schema.

Wisconsin's statewide parcel layer holds about 3.5 million parcels. This generates (in a
temp folder) that many jittered parcels about 30 m across on a square grid (about 56 km
a side at full size), with every field of the Wisconsin statewide parcel schema
(V-series, as in ``../shared/data/wi_vernon_parcel_schema_example``: ``STATEID``,
``PARCELID``, ... ``PROPCLASS``, ``AUXCLASS``, ``GISACRES``, ... ``SHAPE_Area``), written
strip by strip to one GeoPackage in EPSG:3071; and the layers of :mod:`bench_screen`
(20 municipalities, one of them the village; wetlands and flood bands at that
benchmark's density, so a larger grid is a larger county). Then it runs:

* ``georeview screen`` on this machine (threads, one per core), a whole process: wall
  time, peak RSS (through :mod:`_launch`, the child's own), rows in against rows out;
* ``georeview screen --workers 2``: a Dask ``LocalCluster`` of 2 worker processes (its
  start-up included; the peak RSS is the largest single process of the tree, as
  ``wait4`` reports it);
* in this process, the cost of one partition (read + screen, one thread) on a few
  partitions spread over the file, the context's build and its pickled size (what a
  cluster sends every worker), so that the scaling on a real cluster can be estimated.

Nothing lost: each output must hold every input row once (``row`` 0..n-1), with the
rows that could not be screened as ``status = error`` rows; the figures are printed,
nothing is asserted. Run: ``python benchmarks/bench_statewide.py`` (full size) or
``--parcels 200000`` while developing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from bench_screen import CELL, CRS, make_layers, parcel_rings, timed_process, write_layers

#: Parcels in Wisconsin's statewide parcel layer, about.
STATEWIDE = 3_500_000

#: Fields of the statewide parcel schema (V-series), in its order.
FIELDS = (
    "STATEID",
    "PARCELID",
    "TAXPARCELID",
    "PARCELDATE",
    "TAXROLLYEAR",
    "OWNERNME1",
    "OWNERNME2",
    "PSTLADRESS",
    "SITEADRESS",
    "ADDNUMPREFIX",
    "ADDNUM",
    "ADDNUMSUFFIX",
    "PREFIX",
    "STREETNAME",
    "STREETTYPE",
    "SUFFIX",
    "LANDMARKNAME",
    "UNITTYPE",
    "UNITID",
    "PLACENAME",
    "ZIPCODE",
    "ZIP4",
    "STATE",
    "SCHOOLDIST",
    "SCHOOLDISTNO",
    "CNTASSDVALUE",
    "LNDVALUE",
    "IMPVALUE",
    "MFLVALUE",
    "ESTFMKVALUE",
    "NETPRPTA",
    "GRSPRPTA",
    "PROPCLASS",
    "AUXCLASS",
    "ASSDACRES",
    "DEEDACRES",
    "GISACRES",
    "CONAME",
    "LOADDATE",
    "PARCELFIPS",
    "PARCELSRC",
)

#: Property classes drawn for the parcels (statewide codes; "" as the real layer has).
PROPCLASSES = np.array(["1", "2", "3", "4", "5", "5M", "6", "7", "", "1,2"], dtype=object)
#: Auxiliary classes: mostly none, some exempt (X2 is state-owned land).
AUXCLASSES = np.array([None, None, None, None, None, None, None, "X1", "X2", "X4"], dtype=object)

#: Grid rows generated and appended at once (bounded memory whatever the size).
STRIP_ROWS = 100


def text(prefix: str, values: Any) -> Any:
    """``prefix`` followed by each value, as an object array (vectorised, no loop)."""
    return np.char.add(prefix, np.asarray(values).astype(str)).astype(object)


def jitter(rng: np.random.Generator, side: int) -> tuple[Any, Any]:
    """The parcel grid's jittered vertices, drawn as :func:`bench_screen.make_data` draws them."""
    xs, ys = np.meshgrid(np.arange(side + 1) * CELL, np.arange(side + 1) * CELL)
    return xs + rng.uniform(-6, 6, xs.shape), ys + rng.uniform(-6, 6, ys.shape)


def strip_frame(
    jx: Any, jy: Any, rows: range, side: int, first_id: int, rng: np.random.Generator
) -> Any:
    """The parcels of grid rows ``rows`` as a GeoDataFrame in the statewide schema."""
    import geopandas as gpd
    import shapely

    j, i = np.meshgrid(np.arange(rows.start, rows.stop), np.arange(side), indexing="ij")
    i, j = i.ravel(), j.ravel()
    ring = parcel_rings(jx, jy, i, j)
    geom = shapely.multipolygons(shapely.polygons(ring)[:, None])  # the layer's type
    n = i.size
    k = np.arange(first_id, first_id + n)
    area_m2 = shapely.area(geom)
    number = text("", (k % 9999) + 1)
    cols: dict[str, Any] = dict.fromkeys(FIELDS, np.full(n, None, dtype=object))
    cols |= {
        "STATEID": text("55", k + 10**10),
        "PARCELID": text("", k + 10**10),
        "PARCELDATE": np.full(n, "2/28/2024", dtype=object),
        "TAXROLLYEAR": np.full(n, "2024", dtype=object),
        "OWNERNME1": text("OWNER ", k % 900_001),
        "PSTLADRESS": number + " MAIN ST, WI",
        "SITEADRESS": number + " MAIN ST",
        "ADDNUM": number,
        "STREETNAME": np.full(n, "MAIN", dtype=object),
        "STREETTYPE": np.full(n, "ST", dtype=object),
        "STATE": np.full(n, "WI", dtype=object),
        "CNTASSDVALUE": text("", rng.integers(0, 900_000, n)),
        "PROPCLASS": PROPCLASSES[rng.integers(0, PROPCLASSES.size, n)],
        "AUXCLASS": AUXCLASSES[rng.integers(0, AUXCLASSES.size, n)],
        "GISACRES": (area_m2 / 4046.8564224).round(8).astype(str).astype(object),
        "CONAME": np.full(n, "SYNTHETIC", dtype=object),
        "PARCELFIPS": np.full(n, "999", dtype=object),
        "PARCELSRC": np.full(n, "SYNTHETIC", dtype=object),
    }
    cols["SHAPE_Length"] = shapely.length(geom)
    cols["SHAPE_Area"] = area_m2
    return gpd.GeoDataFrame(cols, geometry=geom, crs=CRS)


def write_parcels(path: Path, jx: Any, jy: Any, rng: np.random.Generator) -> int:
    """Write the grid's parcels strip by strip (GeoPackage, appended); return the count."""
    side = jx.shape[0] - 1
    written = 0
    for r0 in range(0, side, STRIP_ROWS):
        frame = strip_frame(jx, jy, range(r0, min(side, r0 + STRIP_ROWS)), side, written, rng)
        frame.to_file(path, layer="parcels", engine="pyogrio", append=written > 0, use_arrow=True)
        written += len(frame)
    return written


def count_output(path: Path, n_in: int) -> str:
    """Rows out, error rows, and whether each input row is there once (``row`` 0..n-1)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["row", "status"])
    rows = t["row"].to_numpy()
    each_once = rows.size == n_in and np.array_equal(np.sort(rows), np.arange(n_in))
    errors = int(pc.sum(pc.equal(t["status"], "error")).as_py() or 0)
    return (
        f"rows in {n_in:,}, rows out {t.num_rows:,} (of which error rows {errors:,}); "
        f"every input row once: {each_once}"
    )


def per_partition(parcels: Path, layers: Path, size: int, n_rows: int, samples: int) -> None:
    """One partition's cost (read + screen, one thread), the context's build and size."""
    import pickle
    import warnings
    from dataclasses import replace

    from georeview.load import load_layers
    from georeview.pipeline.assume import WISCONSIN_COLUMNS, parse_assume
    from georeview.pipeline.context import build_context
    from georeview.pipeline.extent import layers_extent
    from georeview.pipeline.partitions import Source, partitions
    from georeview.pipeline.screen import screen_slice

    lay = load_layers(layers)
    t = time.perf_counter()
    ctx = replace(
        build_context(lay, parse_assume(None), dict(WISCONSIN_COLUMNS)), extent=layers_extent(lay)
    )
    _ = ctx.ordinance
    ctx_s = time.perf_counter() - t
    blob = len(pickle.dumps(ctx))
    source, _info = Source(str(parcels.resolve()), None, None).inspected()
    parts = partitions(n_rows, size)
    full = [p for p in parts if p[2] == size] or parts
    pick = [full[k] for k in np.linspace(0, len(full) - 1, min(samples, len(full))).astype(int)]
    secs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _i, start, count in pick:
            t = time.perf_counter()
            frame = screen_slice(source, start, count, ctx)
            secs.append(time.perf_counter() - t)
            del frame
    med = statistics.median(secs)
    print(
        f"per partition ({size:,} parcels, read + screen, one thread, {len(secs)} samples): "
        f"median {med:.2f} s (" + ", ".join(f"{s:.2f}" for s in secs) + f"), "
        f"{size / med:,.0f} parcels/s; {len(parts)} partitions in all"
    )
    print(
        f"context: built in {ctx_s:.2f} s, pickled {blob / 1e6:.1f} MB (sent once to each worker)"
    )
    print(
        f"serial estimate: {len(parts)} x {med:.2f} s = {len(parts) * med:.0f} s of partition work"
    )


def main() -> None:
    """Generate the statewide input, run both screenings, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parcels", type=int, default=STATEWIDE, help="about this many parcels")
    ap.add_argument("--partition-size", type=int, default=25_000, help="parcels per partition")
    ap.add_argument("--samples", type=int, default=5, help="partitions timed in this process")
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask LocalCluster run")
    ap.add_argument(
        "--keep", metavar="DIR", help="generate into DIR (kept) instead of a temp folder"
    )
    args = ap.parse_args()
    side = max(1, round(float(np.sqrt(args.parcels))))
    print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
    with tempfile.TemporaryDirectory(prefix="georeview-statewide-") as tmp:
        d = Path(args.keep) if args.keep else Path(tmp)
        d.mkdir(parents=True, exist_ok=True)
        parcels = d / "parcels.gpkg"
        t = time.perf_counter()
        if not parcels.exists():
            # bench_screen's parcels and layers (same draws), the parcels written a strip
            # at a time with the statewide schema's attributes
            rng = np.random.default_rng(2024)
            jx, jy = jitter(rng, side)
            write_layers(make_layers(rng, side), d)
            n_in = write_parcels(parcels, jx, jy, np.random.default_rng(7))
            del jx, jy
        else:
            import pyogrio

            n_in = int(pyogrio.read_info(parcels)["features"])
        mb = parcels.stat().st_size / 1e6
        print(
            f"data: {n_in:,} parcels in the statewide schema ({len(FIELDS) + 2} fields), "
            f"{mb:,.0f} MB GeoPackage ({time.perf_counter() - t:.0f} s to generate or open)"
        )
        base = [sys.executable, "-m", "georeview", "screen", str(parcels), "--layers", str(d)]
        base += ["--overwrite", "-q", "--partition-size", str(args.partition_size)]
        runs = [("one machine (threads, one per core)", "single.parquet", [])]
        if not args.no_dask:
            runs.append(
                ("Dask LocalCluster, 2 worker processes", "dask.parquet", ["--workers", "2"])
            )
        for name, out, extra in runs:
            load = Path("/proc/loadavg").read_text().split()[:3]
            secs, rss, cpu = timed_process([*base, "--out", str(d / out), *extra])
            print(
                f"georeview screen, {name}: {secs:.1f} s, CPU {cpu:.1f} s, peak RSS {rss:,.0f} MB "
                f"(load average before {load}); {count_output(d / out, n_in)}"
            )
        if not args.no_dask:
            import pyarrow.parquet as pq

            a = pq.read_table(d / "single.parquet").drop_columns(["geometry"])
            b = pq.read_table(d / "dask.parquet").drop_columns(["geometry"])
            print(f"Dask output equals the single-machine output (attributes): {a.equals(b)}")
        per_partition(parcels, d, args.partition_size, n_in, args.samples)


if __name__ == "__main__":
    main()
