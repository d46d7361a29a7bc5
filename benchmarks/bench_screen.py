"""Benchmark: screening 100,489 synthetic parcels, georeview against DuckDB spatial.

Generates (in a temp folder) a 317 x 317 grid of jittered parcels about 30 m across,
20 municipalities (Voronoi cells; one is the village, the others towns), 300 wetlands
(discs) and 31 flood zones (bands), then times in the same process:

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

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

N_SIDE = 317  # 317**2 = 100,489 parcels
CELL = 30.0
X0, Y0 = 500_000.0, 300_000.0
CRS = "EPSG:3071"


def make_data(rng: np.random.Generator) -> dict[str, gpd.GeoDataFrame]:
    """Parcels, municipalities, wetlands and flood zones in EPSG:3071 (metres)."""
    ext = N_SIDE * CELL
    xs, ys = np.meshgrid(np.arange(N_SIDE + 1) * CELL, np.arange(N_SIDE + 1) * CELL)
    jx = xs + rng.uniform(-6, 6, xs.shape)
    jy = ys + rng.uniform(-6, 6, ys.shape)
    i, j = np.meshgrid(np.arange(N_SIDE), np.arange(N_SIDE))
    i, j = i.ravel(), j.ravel()
    ring = np.stack(
        [
            np.stack([jx[j, i], jy[j, i]], -1),
            np.stack([jx[j, i + 1], jy[j, i + 1]], -1),
            np.stack([jx[j + 1, i + 1], jy[j + 1, i + 1]], -1),
            np.stack([jx[j + 1, i], jy[j + 1, i]], -1),
            np.stack([jx[j, i], jy[j, i]], -1),
        ],
        axis=1,
    ) + np.array([X0, Y0])
    parcels = shapely.polygons(ring)
    pts = rng.uniform(0, ext, (20, 2)) + np.array([X0, Y0])
    frame = shapely.box(X0 - 5000, Y0 - 5000, X0 + ext + 5000, Y0 + ext + 5000)
    cells = shapely.get_parts(
        shapely.voronoi_polygons(shapely.multipoints(pts), extend_to=frame, ordered=True)
    )
    munis = shapely.intersection(cells, frame)
    gx, gy = np.meshgrid(np.linspace(300, ext - 300, 20), np.linspace(300, ext - 300, 15))
    centres = (
        np.stack([gx.ravel(), gy.ravel()], -1) + rng.uniform(-60, 60, (300, 2)) + np.array([X0, Y0])
    )
    wet = shapely.buffer(shapely.points(centres), rng.uniform(40, 150, 300), quad_segs=16)
    band_y = np.linspace(0, ext, 32)[:-1] + Y0
    flood = shapely.box(X0 - 100, band_y, X0 + ext + 100, band_y + rng.uniform(20, 120, 31))
    return {
        "parcels": gpd.GeoDataFrame(
            {"PARCELID": [f"P{k:06d}" for k in range(parcels.size)]}, geometry=parcels, crs=CRS
        ),
        "munis": gpd.GeoDataFrame(
            {"MCD_NAME": [f"M{k:02d}" for k in range(20)], "CTV": ["T"] * 20},
            geometry=munis,
            crs=CRS,
        ),
        "wetlands": gpd.GeoDataFrame({"n": range(300)}, geometry=wet, crs=CRS),
        "flood": gpd.GeoDataFrame(
            {"FLD_ZONE": ["AE"] * 31, "SFHA_TF": ["T"] * 31, "ZONE_SUBTY": [""] * 31},
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


SQL = """
WITH m AS (
  SELECT p.id, m.name, ST_Area(ST_Intersection(p.geom, m.geom)) AS a
  FROM parcels p JOIN munis m ON ST_Intersects(p.geom, m.geom)),
best AS (SELECT id, arg_max(name, a) AS muni FROM m GROUP BY id),
w AS (SELECT p.id, SUM(ST_Area(ST_Intersection(p.geom, w.geom))) AS a
      FROM parcels p JOIN wetlands w ON ST_Intersects(p.geom, w.geom) GROUP BY p.id),
f AS (SELECT p.id, SUM(ST_Area(ST_Intersection(p.geom, f.geom))) AS a
      FROM parcels p JOIN flood f ON ST_Intersects(p.geom, f.geom) GROUP BY p.id)
SELECT p.id, best.muni, coalesce(w.a, 0) AS wet, coalesce(f.a, 0) AS flood
FROM parcels p LEFT JOIN best USING (id) LEFT JOIN w USING (id) LEFT JOIN f USING (id)
ORDER BY p.id
"""


def run_duckdb(data: dict[str, gpd.GeoDataFrame]) -> tuple[pd.DataFrame, float, float]:
    """Load the tables, run the query; return result, load seconds, query seconds."""
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


def main() -> None:
    from georeview.load import load_layers
    from georeview.measure.overlay import largest_label, overlap_areas
    from georeview.pipeline.screen import build_context, run_screen, screen_frame

    rng = np.random.default_rng(2024)
    t = time.perf_counter()
    data = make_data(rng)
    print(
        f"data: {len(data['parcels']):,} parcels, {len(data['munis'])} municipalities, "
        f"{len(data['wetlands'])} wetlands, {len(data['flood'])} flood zones "
        f"({time.perf_counter() - t:.2f} s to generate)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        d = write_layers(data, Path(tmp))
        parcels_file = d / "parcels.gpkg"
        data["parcels"].to_file(parcels_file)

        duck, load_s, duck_s = run_duckdb(data)
        print(f"duckdb spatial: load {load_s:.2f} s, query {duck_s:.2f} s")

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
        run_screen(parcels_file, d, d / "out.parquet", partition_size=25_000)
        print(
            f"georeview run_screen file -> parquet (4 partitions): {time.perf_counter() - t:.2f} s"
        )

        from distributed import Client, LocalCluster

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
