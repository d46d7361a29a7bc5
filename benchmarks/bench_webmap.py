"""Benchmark: building and saving map.html against plain folium with the same layers.

A Deerfield test site (real village limit and neighbours, small reference layers)
gets 2,400 parcels and 1,100 contour lines added to its map layers. "Plain folium"
is one ``folium.GeoJson`` per layer with a ``GeoJsonPopup`` of the same fields, a
layer control, measure and full-screen controls, saved with ``Map.save`` (its CDN
assets are links, so it is smaller but blank without a network). Also prints the
size and browser load time of the batch index over the 13,116 Cambridge parcels.

Run: ``/work/venv/bin/python benchmarks/bench_webmap.py`` (prints figures only).
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from _build import CAMBRIDGE_PARCELS  # noqa: E402
from _web_helpers import CHROMIUM, CHROMIUM_ARGS, make_review  # noqa: E402

from georeview.report import map_data, map_styles, webmap, write_atomic  # noqa: E402
from georeview.report.index import write_index  # noqa: E402


def synthetic_layers(centre: shapely.Point) -> dict[str, gpd.GeoDataFrame]:
    """2,401 square parcels (49 x 49, 30 m) and 1,100 contours of 60 vertices each."""
    cx, cy = centre.x, centre.y
    i, j = np.meshgrid(np.arange(49), np.arange(49))
    x0 = cx - 735 + 30 * i.ravel()
    y0 = cy - 735 + 30 * j.ravel()
    parcels = gpd.GeoDataFrame(
        {"PARCELID": [f"P{k:05d}" for k in range(x0.size)], "ACRES": np.full(x0.size, 0.222)},
        geometry=shapely.box(x0, y0, x0 + 29, y0 + 29),
        crs=3071,
    )
    t = np.linspace(0, 1, 60)
    lines = [
        shapely.LineString(
            np.column_stack([cx - 800 + 1600 * t, cy - 800 + 1.45 * k + 8 * np.sin(20 * t + k)])
        )
        for k in range(1100)
    ]
    contours = gpd.GeoDataFrame({"elev_ft": 850.0 + 2 * np.arange(1100)}, geometry=lines, crs=3071)
    return {"parcels": parcels, "contours": contours}


def plain_folium(review, out: Path) -> None:
    """The same layers with folium's own GeoJson, popups and CDN assets."""
    import folium
    from folium import plugins

    frames = map_data.map_frames(review)
    fmap = folium.Map(tiles=None, control_scale=True)
    for key, gdf in frames.items():
        style = map_styles.style_for(key)
        g = gdf.to_crs(4326)
        fields = [c for c in g.columns if c != g.geometry.name][:4]
        folium.GeoJson(
            g,
            name=style.label,
            style_function=lambda _f, s=style: {"color": s.stroke, "fillColor": s.fill},
            popup=folium.GeoJsonPopup(fields=fields) if fields else None,
        ).add_to(fmap)
    folium.LayerControl().add_to(fmap)
    plugins.MeasureControl().add_to(fmap)
    plugins.Fullscreen().add_to(fmap)
    fmap.fit_bounds(fmap.get_bounds())
    fmap.save(out)


def best_of(fn, n: int = 3) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def load_seconds(path: Path) -> float | None:
    """Time from navigation to the load event in headless chromium (None without it).

    None too when chromium exists but playwright (the ``test`` extra) is not installed.
    """
    if not CHROMIUM.exists():
        return None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        ms = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
        browser.close()
    return ms / 1000.0


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench_webmap_"))
    rev = make_review(tmp)
    centre = shapely.centroid(rev.submission.site_geom)
    rev = dataclasses.replace(rev, map_layers={**rev.map_layers, **synthetic_layers(centre)})
    report = rev.to_dict()
    mine = tmp / "map.html"
    plain = tmp / "plain.html"
    t_mine = best_of(lambda: write_atomic(mine, webmap.render_map(webmap.build_map(rev, report))))
    t_plain = best_of(lambda: plain_folium(rev, plain))
    print("map.html: 2,401 parcels + 1,100 contours (60 vertices each) + site layers")
    print(f"  georeview build+save  {t_mine:6.2f} s  {mine.stat().st_size / 1e6:5.2f} MB")
    print(f"  plain folium          {t_plain:6.2f} s  {plain.stat().st_size / 1e6:5.2f} MB")
    print(f"  ratio                 {t_mine / t_plain:6.2f} x")
    load = load_seconds(mine)
    if load is not None:
        print(f"  browser load (file://, no network)  {load:5.2f} s")

    # The 13,116 Cambridge parcels ship in tests/data (PDDL).
    p = gpd.read_file(CAMBRIDGE_PARCELS)
    rows = gpd.GeoDataFrame(
        {
            "id": p["ML"].astype(str),
            "regulated": np.arange(len(p)) % 3 == 0,
            "category": np.where(np.arange(len(p)) % 2 == 0, "major", "minor"),
        },
        geometry=p.geometry,
        crs=p.crs,
    )
    out = tmp / "index.html"
    t = best_of(lambda: write_index(rows, out, title="Cambridge", working_crs="EPSG:26986"), n=1)
    raw = len(p.geometry.to_crs(4326).to_json()) / 1e6
    print(f"index.html: {len(p):,} Cambridge parcels (raw GeoJSON {raw:.1f} MB)")
    print(f"  write {t:5.2f} s  size {out.stat().st_size / 1e6:5.2f} MB", end="")
    load = load_seconds(out)
    print("" if load is None else f"  browser load {load:5.2f} s")


if __name__ == "__main__":
    main()
