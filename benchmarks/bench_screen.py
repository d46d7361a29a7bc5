"""Benchmark: screening 100,489 synthetic parcels, georeview against DuckDB spatial.

Generates (in a temp folder) a 317 x 317 grid of jittered parcels about 30 m across,
20 municipalities (Voronoi cells; one is the village, the others towns), 300 wetlands
(discs) and 31 flood zones (bands). First, whole process against whole process, runs
alternating: ``georeview screen`` file to Parquet (its start-up included) against a DuckDB
process that imports only ``duckdb``, loads the spatial extension from the
``duckdb-ext-spatial`` wheel (never downloaded), reads the same files, does the same three
areal joins and writes Parquet; ratio of medians, peak RSS of each (through
:mod:`_launch`, so a child's figure is its own), and the two outputs compared parcel by
parcel. Then, in this process:

* DuckDB spatial: the three areal joins (largest municipality, wetland area, flood area)
  as one SQL query on tables already loaded (and the loading, separately). The spatial
  extension is loaded from the ``duckdb-ext-spatial`` wheel, never downloaded.
* georeview's single-machine path: the same three joins with
  :func:`georeview.measure.overlay.largest_label` / :func:`overlap_areas` (the core), then the
  whole :func:`screen_frame` (geometry checks, jurisdiction, rules), then
  :func:`run_screen` from file to file;
* the Dask path on 2 local worker processes (start-up included and shown apart).

Prints figures, asserts nothing. Run: ``python benchmarks/bench_screen.py``.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

# Only the standard library at module level: the DuckDB child runs this file and must
# import nothing but duckdb (numpy, pandas, shapely and geopandas are imported by the
# functions that use them, in the parent).
if TYPE_CHECKING:
    import geopandas as gpd
    import numpy as np
    import pandas as pd

#: Parcels per side of the grid by default: 317**2 = 100,489 parcels (``--parcels`` changes it).
N_SIDE = 317
CELL = 30.0
X0, Y0 = 500_000.0, 300_000.0
CRS = "EPSG:3071"


def parcel_rings(jx: np.ndarray, jy: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Closed rings (n, 5, 2) of grid cells (row *j*, column *i*) on jittered vertices, metres."""
    import numpy as np

    return np.stack(
        [
            np.stack([jx[j, i], jy[j, i]], -1),
            np.stack([jx[j, i + 1], jy[j, i + 1]], -1),
            np.stack([jx[j + 1, i + 1], jy[j + 1, i + 1]], -1),
            np.stack([jx[j + 1, i], jy[j + 1, i]], -1),
            np.stack([jx[j, i], jy[j, i]], -1),
        ],
        axis=1,
    ) + np.array([X0, Y0])


def make_data(rng: np.random.Generator, side: int = N_SIDE) -> dict[str, gpd.GeoDataFrame]:
    """Parcels, municipalities, wetlands and flood zones in EPSG:3071 (metres).

    ``side`` parcels per side; wetlands and flood bands keep the density of the
    317-side grid (300 wetlands, 31 bands there), so a larger grid is a larger county.
    """
    import geopandas as gpd
    import numpy as np
    import shapely

    xs, ys = np.meshgrid(np.arange(side + 1) * CELL, np.arange(side + 1) * CELL)
    jx = xs + rng.uniform(-6, 6, xs.shape)
    jy = ys + rng.uniform(-6, 6, ys.shape)
    i, j = np.meshgrid(np.arange(side), np.arange(side))
    i, j = i.ravel(), j.ravel()
    ring = parcel_rings(jx, jy, i, j)
    parcels = shapely.polygons(ring)
    return {
        "parcels": gpd.GeoDataFrame(
            {"PARCELID": [f"P{k:06d}" for k in range(parcels.size)]}, geometry=parcels, crs=CRS
        ),
        **make_layers(rng, side),
    }


def make_layers(rng: np.random.Generator, side: int = N_SIDE) -> dict[str, gpd.GeoDataFrame]:
    """Municipalities, wetlands and flood zones over a grid of ``side`` parcels a side.

    ``rng`` as :func:`make_data` leaves it after drawing the grid's jitter (so that
    :mod:`bench_statewide` gets the same layers without building every parcel at once).
    """
    import geopandas as gpd
    import numpy as np
    import shapely

    ext = side * CELL
    grow = side / N_SIDE
    pts = rng.uniform(0, ext, (20, 2)) + np.array([X0, Y0])
    frame = shapely.box(X0 - 5000, Y0 - 5000, X0 + ext + 5000, Y0 + ext + 5000)
    cells = shapely.get_parts(
        shapely.voronoi_polygons(shapely.multipoints(pts), extend_to=frame, ordered=True)
    )
    munis = shapely.intersection(cells, frame)
    nx, ny = max(1, round(20 * grow)), max(1, round(15 * grow))
    n_wet = nx * ny
    gx, gy = np.meshgrid(np.linspace(300, ext - 300, nx), np.linspace(300, ext - 300, ny))
    centres = (
        np.stack([gx.ravel(), gy.ravel()], -1)
        + rng.uniform(-60, 60, (n_wet, 2))
        + np.array([X0, Y0])
    )
    wet = shapely.buffer(shapely.points(centres), rng.uniform(40, 150, n_wet), quad_segs=16)
    n_band = max(1, round(31 * grow))
    band_y = np.linspace(0, ext, n_band + 1)[:-1] + Y0
    flood = shapely.box(X0 - 100, band_y, X0 + ext + 100, band_y + rng.uniform(20, 120, n_band))
    return {
        "munis": gpd.GeoDataFrame(
            {"MCD_NAME": [f"M{k:02d}" for k in range(20)], "CTV": ["T"] * 20},
            geometry=munis,
            crs=CRS,
        ),
        "wetlands": gpd.GeoDataFrame({"n": range(n_wet)}, geometry=wet, crs=CRS),
        "flood": gpd.GeoDataFrame(
            {"FLD_ZONE": ["AE"] * n_band, "SFHA_TF": ["T"] * n_band, "ZONE_SUBTY": [""] * n_band},
            geometry=flood,
            crs=CRS,
        ),
    }


def write_layers(data: dict[str, gpd.GeoDataFrame], d: Path) -> Path:
    """Write a layers folder: municipality 0 is the village, the others are towns."""
    data["munis"].iloc[:1].to_file(d / "boundary.gpkg")
    data["munis"].iloc[1:].to_file(d / "neighbors.gpkg")
    data["wetlands"].to_file(d / "wetlands.gpkg")
    data["flood"].to_file(d / "floodplain.gpkg")
    (d / "layers.toml").write_text(
        'municipality = "deerfield"\nvillage_name = "M00"\nworking_crs = "EPSG:3071"\n'
        '[boundary]\npath = "boundary.gpkg"\n[neighbors]\npath = "neighbors.gpkg"\n'
        '[wetlands]\npath = "wetlands.gpkg"\n[floodplain]\npath = "floodplain.gpkg"\n'
    )
    return d


def duckdb_connect():
    """An in-memory DuckDB with the spatial extension loaded from the installed wheel."""
    import importlib.metadata as md

    import duckdb

    ext = next(
        f for f in md.files("duckdb-ext-spatial") or [] if str(f).endswith(".duckdb_extension")
    )
    con = duckdb.connect(
        config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    )
    con.execute(f"LOAD '{ext.locate()}'")
    return con


#: The three areal joins (largest municipality, wetland area, flood area) as CTEs.
JOINS = """
WITH m AS (
  SELECT p.id, m.name, ST_Area(ST_Intersection(p.geom, m.geom)) AS a
  FROM parcels p JOIN munis m ON ST_Intersects(p.geom, m.geom)),
best AS (SELECT id, arg_max(name, a) AS muni FROM m GROUP BY id),
w AS (SELECT p.id, SUM(ST_Area(ST_Intersection(p.geom, w.geom))) AS a
      FROM parcels p JOIN wetlands w ON ST_Intersects(p.geom, w.geom) GROUP BY p.id),
f AS (SELECT p.id, SUM(ST_Area(ST_Intersection(p.geom, f.geom))) AS a
      FROM parcels p JOIN flood f ON ST_Intersects(p.geom, f.geom) GROUP BY p.id)
"""

SQL = (
    JOINS
    + """SELECT p.id, best.muni, coalesce(w.a, 0) AS wet, coalesce(f.a, 0) AS flood
FROM parcels p LEFT JOIN best USING (id) LEFT JOIN w USING (id) LEFT JOIN f USING (id)
ORDER BY p.id
"""
)


def run_duckdb(data: dict[str, gpd.GeoDataFrame]) -> tuple[pd.DataFrame, float, float]:
    """Load the tables, run the query; return result, load seconds, query seconds."""
    import numpy as np
    import pandas as pd
    import shapely

    con = duckdb_connect()
    t = time.perf_counter()
    for name, gdf, label in (
        ("parcels", data["parcels"], None),
        ("munis", data["munis"], "MCD_NAME"),
        ("wetlands", data["wetlands"], None),
        ("flood", data["flood"], None),
    ):
        df = pd.DataFrame(
            {
                "id": np.arange(len(gdf)),
                "name": gdf[label].to_numpy() if label else np.arange(len(gdf)).astype(str),
                "wkb": shapely.to_wkb(gdf.geometry.values),
            }
        )
        con.register("src", df)
        con.execute(f"CREATE TABLE {name} AS SELECT id, name, ST_GeomFromWKB(wkb) AS geom FROM src")
        con.unregister("src")
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    res = con.execute(SQL).df()
    return res, load_s, time.perf_counter() - t


#: The same three joins from the same files to a GeoParquet file, in one DuckDB process.
FILE_SQL = (
    """
CREATE TABLE parcels AS SELECT row_number() OVER () AS id, PARCELID, geom
  FROM ST_Read('{d}/parcels.gpkg');
CREATE TABLE munis AS
  SELECT MCD_NAME AS name, geom FROM ST_Read('{d}/boundary.gpkg')
  UNION ALL SELECT MCD_NAME AS name, geom FROM ST_Read('{d}/neighbors.gpkg');
CREATE TABLE wetlands AS SELECT geom FROM ST_Read('{d}/wetlands.gpkg');
CREATE TABLE flood AS SELECT geom FROM ST_Read('{d}/floodplain.gpkg');
COPY (
"""
    + JOINS
    + """SELECT p.PARCELID, best.muni, coalesce(w.a, 0) AS wet, coalesce(f.a, 0) AS flood, p.geom
FROM parcels p LEFT JOIN best USING (id) LEFT JOIN w USING (id) LEFT JOIN f USING (id)
ORDER BY p.id
) TO '{out}' (FORMAT parquet);
"""
)


def duckdb_file_to_file(folder: str, out: str, threads: int = 0) -> None:
    """The DuckDB side of the whole-process comparison (run in its own process).

    ``threads`` 0 keeps DuckDB's default (every core); 1 shows its cost on one core, as
    georeview's serial path runs.
    """
    con = duckdb_connect()
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    con.execute(FILE_SQL.format(d=folder, out=out))


def timed_process(argv: list[str]) -> tuple[float, float, float]:
    """Run ``argv``; return (wall seconds, peak RSS in MB, CPU seconds) of that one process.

    Through the launcher (:mod:`_launch`): a child of this process, which holds the
    generated parcels, would report this process's RSS as its floor. The CPU seconds
    (user + system, the launcher's 20 ms or so included) are those of the waited-for
    descendants: on a machine other work keeps busy they show the work done, which the
    wall time alone hides.
    """
    import resource
    import subprocess

    from _launch import launched, peak_rss_mb

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(
        launched(list(argv)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:4]}... exited {proc.returncode}: {proc.stderr[-500:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return seconds, peak_rss_mb(proc.stderr), cpu


def whole_process(d: Path, runs: int, partition_size: int | None = None) -> None:
    """``georeview screen`` file to file (the CLI, start-up included) against DuckDB.

    Runs alternate (georeview, DuckDB, each on every core then on one thread, and again)
    so that the load of a shared machine falls on both alike; min and median of ``runs``
    each.
    """
    import statistics
    import sys

    geo = [sys.executable, "-m", "georeview", "screen", str(d / "parcels.gpkg")]
    geo += ["--layers", str(d), "--out", str(d / "cli.parquet"), "--overwrite", "-q"]
    if partition_size:
        geo += ["--partition-size", str(partition_size)]
    duck = [sys.executable, __file__, "--duckdb-process", str(d), str(d / "duck.parquet")]
    argv = {
        "georeview": geo,  # partitions on threads, one per core (the default)
        "duckdb": duck,  # every core (DuckDB's default)
        "georeview, 1 thread": [*geo, "--threads", "1"],
        "duckdb, 1 thread": [*duck, "--duckdb-threads", "1"],
    }
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in argv}
    for _ in range(runs):
        for name, command in argv.items():
            times[name].append(timed_process(command))
    med, low = {}, {}
    for name, rows in times.items():
        secs = [r[0] for r in rows]
        rss = [r[1] for r in rows]
        cpu = [r[2] for r in rows]
        med[name] = statistics.median(secs)
        low[name] = min(secs)
        print(
            f"whole process, {name}: min {min(secs):.2f} s, median {med[name]:.2f} s, "
            f"CPU median {statistics.median(cpu):.2f} s, "
            f"peak RSS median {statistics.median(rss):.0f} MB ({runs} runs: "
            + ", ".join(f"{x:.2f}" for x in secs)
            + ")"
        )
    for what, a, b in (
        ("georeview / duckdb", "georeview", "duckdb"),
        ("both on 1 thread", "georeview, 1 thread", "duckdb, 1 thread"),
    ):
        print(
            f"whole-process ratio, {what}: medians {med[a] / med[b]:.2f}, "
            f"minima {low[a] / low[b]:.2f}"
        )


def compare_outputs(ours: Path, theirs: Path) -> None:
    """Compare the two whole-process outputs parcel by parcel (printed, not asserted).

    georeview writes square feet rounded to 0.1 (its output decimals), DuckDB square
    metres unrounded; both keep the input's order and parcel ids.
    """
    import numpy as np
    import pyarrow.parquet as pq

    from georeview.units import sqm_to_sqft

    a = pq.read_table(
        ours, columns=["parcel_id", "municipality", "wetland_sqft", "floodplain_sqft"]
    )
    b = pq.read_table(theirs, columns=["PARCELID", "muni", "wet", "flood"])
    same_id = np.array_equal(a["parcel_id"].to_numpy(), b["PARCELID"].to_numpy())
    muni = np.mean(
        a["municipality"].to_numpy(zero_copy_only=False) == b["muni"].to_numpy(zero_copy_only=False)
    )
    wet = np.abs(a["wetland_sqft"].to_numpy() - sqm_to_sqft(b["wet"].to_numpy())).max()
    flood = np.abs(a["floodplain_sqft"].to_numpy() - sqm_to_sqft(b["flood"].to_numpy())).max()
    print(
        f"same answers: {a.num_rows:,} vs {b.num_rows:,} rows, ids in the same order {same_id}, "
        f"municipality agrees {muni:.4%}, max |wetland diff| {wet:.3f} sq ft, "
        f"max |flood diff| {flood:.3f} sq ft (georeview rounds to 0.1 sq ft)"
    )


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--parcels", type=int, default=N_SIDE**2, help="about this many parcels (a square grid)"
    )
    ap.add_argument("--runs", type=int, default=5, help="whole-process runs of each tool")
    ap.add_argument("--no-in-process", action="store_true", help="only the whole-process runs")
    ap.add_argument(
        "--partition-size", type=int, help="georeview's --partition-size in the whole-process runs"
    )
    ap.add_argument("--dask", action="store_true", help="also time the Dask path")
    ap.add_argument("--duckdb-process", nargs=2, metavar=("FOLDER", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--duckdb-threads", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.duckdb_process:
        duckdb_file_to_file(*args.duckdb_process, threads=args.duckdb_threads)
        return
    import numpy as np

    side = max(1, round(float(np.sqrt(args.parcels))))

    rng = np.random.default_rng(2024)
    t = time.perf_counter()
    data = make_data(rng, side)
    print(
        f"data: {len(data['parcels']):,} parcels, {len(data['munis'])} municipalities, "
        f"{len(data['wetlands'])} wetlands, {len(data['flood'])} flood zones "
        f"({time.perf_counter() - t:.2f} s to generate)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        d = write_layers(data, Path(tmp))
        parcels_file = d / "parcels.gpkg"
        data["parcels"].to_file(parcels_file)
        whole_process(d, args.runs, args.partition_size)
        compare_outputs(d / "cli.parquet", d / "duck.parquet")
        if not args.no_in_process:
            in_process(data, d, parcels_file)
        if args.dask:
            dask_path(d, parcels_file)


def in_process(data: dict[str, gpd.GeoDataFrame], d: Path, parcels_file: Path) -> None:
    """The joins, :func:`screen_frame` and :func:`run_screen` timed inside this process."""
    import numpy as np

    from georeview.load import load_layers
    from georeview.measure.overlay import largest_label, overlap_areas
    from georeview.pipeline.context import build_context
    from georeview.pipeline.run import run_screen
    from georeview.pipeline.screen import screen_frame

    duck, load_s, duck_s = run_duckdb(data)
    print(f"duckdb spatial in process: load {load_s:.2f} s, query {duck_s:.2f} s")

    layers = load_layers(d)
    t = time.perf_counter()
    ctx = build_context(layers)
    ctx_s = time.perf_counter() - t
    g = data["parcels"].geometry.values.to_numpy()
    t = time.perf_counter()
    lab, _ = largest_label(g, ctx.muni_pieces, ctx.muni_labels, len(ctx.muni_names))
    wet = overlap_areas(g, ctx.wetlands)
    flood = overlap_areas(g, ctx.floodplain)
    core_s = time.perf_counter() - t
    print(f"georeview context (dissolve, subdivide, ETJ): {ctx_s:.2f} s (once per run)")
    print(
        f"georeview core (same three joins): {core_s:.2f} s; "
        f"ratio to duckdb query {core_s / duck_s:.2f}x"
    )
    names = np.array([*ctx.muni_names, ""], dtype=object)[lab]
    same = np.mean(names == duck["muni"].to_numpy())
    print(
        f"  agreement with duckdb: municipality {same:.4%}, "
        f"max |wetland diff| {np.abs(wet - duck['wet'].to_numpy()).max():.2e} m2, "
        f"max |flood diff| {np.abs(flood - duck['flood'].to_numpy()).max():.2e} m2"
    )

    t = time.perf_counter()
    full = screen_frame(data["parcels"], ctx)
    full_s = time.perf_counter() - t
    print(
        f"georeview screen_frame (checks, jurisdiction, areas, rules): {full_s:.2f} s; "
        f"ratio to duckdb query {full_s / duck_s:.2f}x; regulated "
        f"{(full['regulated'] == 'yes').sum():,}"
    )

    t = time.perf_counter()
    run_screen(parcels_file, d, d / "out.parquet", partition_size=25_000, overwrite=True)
    run_s = time.perf_counter() - t
    print(f"georeview run_screen file -> parquet (25,000-row partitions): {run_s:.2f} s")


def dask_path(d: Path, parcels_file: Path) -> None:
    """:func:`run_screen` on 2 local Dask worker processes (start-up shown apart)."""
    from distributed import Client, LocalCluster

    from georeview.pipeline.run import run_screen

    t = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    Client(cluster).close()
    start_s = time.perf_counter() - t
    t = time.perf_counter()
    run_screen(
        parcels_file,
        d,
        d / "out_dask.parquet",
        partition_size=25_000,
        scheduler=cluster.scheduler_address,
    )
    dask_s = time.perf_counter() - t
    cluster.close()
    print(f"georeview on dask, 2 local workers: {dask_s:.2f} s plus {start_s:.2f} s start-up")


if __name__ == "__main__":
    main()
