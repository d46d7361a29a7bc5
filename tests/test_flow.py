"""Tests of georeview.measure.flow: the 1/4-mile downstream trace on real and synthetic DEMs."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from _build import CENTRAL_SANDS
from _build import write_dem as _write_dem
from rasterio.features import rasterize
from scipy.ndimage import distance_transform_edt
from shapely.geometry import LineString, Point, box

from georeview.errors import CRSError, InputError
from georeview.measure.flow import trace_downstream
from georeview.units import M_PER_FT

#: Somers 17.10(B)(4)(h): "within 1/4 mile downstream" = 5,280 / 4 ft.
QUARTER_MILE_FT = 1320.0

X0, Y0 = 500_000.0, 300_000.0  # upper-left corner of the synthetic DEMs (EPSG:3071)


@pytest.fixture(scope="module")
def plainfield() -> dict:
    """Plainfield 10 m DEM (custom WTM CRS without EPSG code) and its lakes (EPSG:4269)."""
    dem = CENTRAL_SANDS / "plainfieldlakes_dem10m.tif"
    lakes = gpd.read_file(CENTRAL_SANDS / "plainfieldlakes_all_lakes.gpkg")
    with rasterio.open(dem) as ds:
        crs = ds.crs.to_wkt()
        z = ds.read(1)
        tf = ds.transform
    return {"dem": dem, "lakes": lakes, "crs": crs, "z": z, "tf": tf}


def write_dem(path: Path, z: np.ndarray, res: float = 1.0, nodata=None) -> Path:
    return _write_dem(path, z, res=res, origin=(X0, Y0), nodata=nodata)


def cell_box(r0: int, r1: int, c0: int, c1: int, res: float = 1.0):
    """Polygon around rows r0..r1-1 and columns c0..c1-1 (inset so centres decide)."""
    return box(X0 + c0 * res + 0.1, Y0 - r1 * res + 0.1, X0 + c1 * res - 0.1, Y0 - r0 * res - 0.1)


def col_x(c: float, res: float = 1.0) -> float:
    return X0 + (c + 0.5) * res


# --------------------------------------------------------------------------- real DEM


def test_trace_from_above_lake_huron_reaches_it(plainfield):
    """A 40 m-radius site 150 m north of Lake Huron's northern extent drains into the lake.

    The path, measured from the site's boundary to the lake's shore, is at least as long as
    the straight gap from the site to the lake and within 1/4 mile.
    """
    lakes = plainfield["lakes"]
    lk = lakes.to_crs(plainfield["crs"])
    huron = lk.geometry[lakes["Name"] == "Lake Huron"].make_valid().iloc[0]
    c = huron.centroid
    site = Point(c.x, huron.bounds[3] + 150).buffer(40)
    res = trace_downstream(
        plainfield["dem"],
        "m",
        site,
        plainfield["crs"],
        waters=lakes,
        name_field="Name",
        length_ft=QUARTER_MILE_FT,
    )
    assert res.reaches_water_within_quarter_mile is True
    assert res.receiving_feature == "Lake Huron"
    gap_ft = site.distance(huron) / M_PER_FT
    assert gap_ft - 1e-6 <= res.distance_ft <= QUARTER_MILE_FT
    assert res.reason is None
    assert res.discharge_points
    assert res.path is not None
    # path drawn in the working CRS (EPSG:3071 ~ the DEM's WTM within metres here)
    site_3071 = gpd.GeoSeries([site], crs=plainfield["crs"]).to_crs(3071).iloc[0]
    assert res.path.distance(site_3071) < 15.0
    d = res.to_dict()
    assert d["reaches_water_within_quarter_mile"] is True
    assert d["receiving_feature"] == "Lake Huron"


def test_window_size_does_not_change_the_result(plainfield):
    lakes = plainfield["lakes"]
    lk = lakes.to_crs(plainfield["crs"])
    huron = lk.geometry[lakes["Name"] == "Lake Huron"].make_valid().iloc[0]
    site = Point(huron.centroid.x, huron.bounds[3] + 150).buffer(40)
    results = [
        trace_downstream(
            plainfield["dem"],
            "m",
            site,
            plainfield["crs"],
            waters=lakes,
            name_field="Name",
            margin_ft=m,
            length_ft=QUARTER_MILE_FT,
        )
        for m in (100.0, 3000.0)
    ]
    assert results[0] == results[1]


def test_hilltop_far_from_water_does_not_reach_it(plainfield):
    """The highest DEM cell more than 800 m from every mapped lake and 600 m inside the DEM
    (found from the data here, not hard-coded): 1/4 mile (402 m) of path cannot reach water."""
    z, tf, lakes = plainfield["z"], plainfield["tf"], plainfield["lakes"]
    lk = lakes.to_crs(plainfield["crs"]).make_valid()
    water = rasterize(lk, out_shape=z.shape, transform=tf, all_touched=True).astype(bool)
    dist_m = distance_transform_edt(~water) * abs(tf.a)
    ok = (dist_m > 800) & np.isfinite(z)
    ok[:60], ok[-60:], ok[:, :60], ok[:, -60:] = False, False, False, False
    r, c = np.unravel_index(np.argmax(np.where(ok, z, -np.inf)), z.shape)
    x, y = tf.c + tf.a * (c + 0.5), tf.f + tf.e * (r + 0.5)
    site = Point(x, y).buffer(30)
    res = trace_downstream(
        plainfield["dem"],
        "m",
        site,
        plainfield["crs"],
        waters=lakes,
        name_field="Name",
        length_ft=QUARTER_MILE_FT,
    )
    assert res.reaches_water_within_quarter_mile is False
    assert res.distance_ft is None
    assert res.receiving_feature is None
    assert res.reason is None


# --------------------------------------------------------------------------- synthetic


def _valley_dem(pit: bool = True, flat: bool = True) -> np.ndarray:
    """200 x 400 cells of 1 m sloping east at 2 %, with a 1 m deep pit and a flat plateau."""
    _rows, cols = np.indices((200, 400), dtype=np.float64)
    z = 100.0 - 0.02 * cols
    if pit:
        z[90:111, 100:111] -= 1.0  # closed depression across the path
    if flat:
        z[:, 150:200] = z[0, 150]  # 50 m flat, then the slope resumes lower down
    return z.astype(np.float32)


STREAM = LineString([(col_x(300), Y0), (col_x(300), Y0 - 200)])


def test_trace_crosses_pit_and_flat_to_the_stream(tmp_path):
    """Site at columns 20-40: the stream is 259-262 m east of its last cell, across a pit
    and a flat; the trace does not stop in either and meets Test Creek within 1/4 mile."""
    dem = write_dem(tmp_path / "valley.tif", _valley_dem())
    waters = gpd.GeoDataFrame({"GNIS_NAME": ["Test Creek"]}, geometry=[STREAM], crs=3071)
    site = cell_box(90, 110, 20, 41)
    res = trace_downstream(dem, "m", site, "EPSG:3071", waters=waters, length_ft=QUARTER_MILE_FT)
    assert res.reaches_water_within_quarter_mile is True
    assert res.receiving_feature == "Test Creek"
    # from the site's east edge (x = 40.9 m) to the stream (x = 300.5 m): at least 259.6 m
    assert site.distance(STREAM) / M_PER_FT - 1e-6 <= res.distance_ft <= QUARTER_MILE_FT
    assert res.path.intersects(cell_box(90, 111, 100, 111))  # went through the pit


def test_trace_without_filling_would_stop_in_the_pit(tmp_path):
    """Control: the synthetic pit really is a pit on the raw DEM (all neighbours higher)."""
    z = _valley_dem()
    inner = z[91:110, 101:110]
    assert (inner < z[89, 100]).all()
    assert z[100, 99] > z[100, 100]
    assert z[100, 111] > z[100, 110]


def test_wetland_is_named_by_id(tmp_path):
    dem = write_dem(tmp_path / "valley.tif", _valley_dem())
    wet = gpd.GeoDataFrame(
        {"WETCODE": ["E1K"]}, geometry=[cell_box(60, 140, 250, 270)], crs=3071, index=[17]
    )
    res = trace_downstream(
        dem, "m", cell_box(90, 110, 20, 41), "EPSG:3071", wetlands=wet, length_ft=QUARTER_MILE_FT
    )
    assert res.reaches_water_within_quarter_mile is True
    assert res.receiving_feature == "wetland 17"
    # at least the gap from the site's east edge (40.9 m) to the wetland's west edge (250.1 m)
    assert res.distance_ft >= (250.1 - 40.9) / M_PER_FT - 1e-6


def test_stream_beside_the_path_counts(tmp_path):
    """A mapped stream drawn one cell north of the DEM's own flow line (a plane sloping east)
    still receives the flow: burned as a sink and met within 1.5 cells."""
    _rows, cols = np.indices((60, 300), dtype=np.float64)
    z = (50.0 - 0.03 * cols).astype(np.float32)
    dem = write_dem(tmp_path / "plane.tif", z)
    stream = LineString([(col_x(100), Y0 - 29.5), (col_x(200), Y0 - 29.5)])  # row 29 centre
    waters = gpd.GeoDataFrame({"GNIS_NAME": [None]}, geometry=[stream], crs=3071)
    site = cell_box(30, 31, 10, 20)  # row 30, one row south of the stream
    res = trace_downstream(dem, "m", site, "EPSG:3071", waters=waters, length_ft=QUARTER_MILE_FT)
    assert res.reaches_water_within_quarter_mile is True
    assert res.receiving_feature == "water 0"
    # Hand-worked: the path runs due east along row 30 (centres y = -30.5 m) from the site's
    # east edge (x = 19.9 m) to the first meet cell, column 99 (centre (99.5, -30.5), sqrt 2 =
    # 1.414 m from the stream's west end (100.5, -29.5), within 1.5 cells), then straight to
    # that end: 99.5 - 19.9 + sqrt 2 = 81.014 m = 265.795 ft. (Measured from the start cell's
    # centre, 19.5 m, to the meet cell's centre it was 80 m, 1.4 m short of the stream.)
    assert res.distance_ft == pytest.approx((99.5 - 19.9 + 2**0.5) / M_PER_FT, abs=1e-6)


def test_dem_not_covering_the_path_gives_none_with_reason(tmp_path):
    """Flow runs east off a 400 m DEM 359 m after the site: short of 1/4 mile (402 m)."""
    dem = write_dem(tmp_path / "short.tif", _valley_dem())
    res = trace_downstream(
        dem, "m", cell_box(90, 110, 20, 41), "EPSG:3071", length_ft=QUARTER_MILE_FT
    )
    assert res.reaches_water_within_quarter_mile is None
    assert res.distance_ft is None
    assert "does not cover" in res.reason
    assert str(dem) in res.reason
    assert res.to_dict()["reason"] == res.reason


def test_site_outside_dem_gives_none_with_reason(tmp_path):
    dem = write_dem(tmp_path / "valley.tif", _valley_dem())
    far = box(X0 + 5000, Y0 - 5000, X0 + 5100, Y0 - 4900)
    res = trace_downstream(dem, "m", far, "EPSG:3071", length_ft=QUARTER_MILE_FT)
    assert res.reaches_water_within_quarter_mile is None
    assert str(dem) in res.reason


def test_geographic_dem_and_bad_input_are_errors(tmp_path):
    geo = CENTRAL_SANDS / "pleasant_dem40m_clip.tif"  # USGS, EPSG:4269 (geographic)
    with pytest.raises(CRSError):
        trace_downstream(
            geo, "m", box(-89.56, 43.95, -89.55, 43.96), "EPSG:4269", length_ft=QUARTER_MILE_FT
        )
    dem = write_dem(tmp_path / "valley.tif", _valley_dem())
    with pytest.raises(InputError):
        trace_downstream(dem, "m", Point(X0, Y0).buffer(0), "EPSG:3071", length_ft=QUARTER_MILE_FT)
    with pytest.raises(InputError):
        trace_downstream(dem, "m", cell_box(90, 110, 20, 41), "EPSG:3071", length_ft=0)


# --------------------------------------------------------------------------- routing kernels


def _follow(d8: np.ndarray, r: int, c: int, limit: int = 10_000) -> list[tuple[int, int]]:
    """Cells visited from (r, c) along D8 codes (ESRI convention) until a pit."""
    step = {1: (0, 1), 2: (1, 1), 4: (1, 0), 8: (1, -1), 16: (0, -1), 32: (-1, -1)}
    step |= {64: (-1, 0), 128: (-1, 1)}
    path = [(r, c)]
    while d8[r, c] != 0 and len(path) < limit:
        dr, dc = step[int(d8[r, c])]
        r, c = r + dr, c + dc
        path.append((r, c))
    return path


def test_flat_cells_take_the_shortest_way_to_the_spill_cell():
    """A walled flat (13 x 17 cells at 5 m) whose only way out is a notch on its east side
    (row 6, 4 m, on the grid's edge): every flat cell drains to the notch, along a path of
    octile length max(dr, dc) + (sqrt 2 - 1) min(dr, dc) (the shortest 8-neighbour path,
    hand-worked: no diagonal drift), and the cells of the notch's row flow due east."""
    from georeview.measure.flow_routing import d8_with_sinks as _d8_with_sinks

    z = np.full((15, 19), 10.0, dtype=np.float32)
    z[1:-1, 1:-1] = 5.0
    z[7, 18] = 4.0  # the notch on the east edge
    d8, depth = _d8_with_sinks(z, np.zeros(z.shape, bool), 1.0, 1.0)
    assert d8[7, 18] == 0  # the outlet stays a pit
    assert (d8[7, 1:18] == 1).all()  # due east along the notch's row
    for r in range(1, 14):
        for c in range(1, 18):
            path = _follow(d8, r, c)
            assert path[-1] == (7, 18)
            steps = np.diff(np.array(path), axis=0)
            length = np.hypot(steps[:, 0], steps[:, 1]).sum()
            dr, dc = abs(7 - r), abs(18 - c)
            assert length == pytest.approx(max(dr, dc) + (2**0.5 - 1) * min(dr, dc))
    assert (depth == 0).all()  # a flat is not a depression


def test_flat_reaching_the_data_edge_drains_off_it():
    """A flat (9 x 11 cells at 5 m) walled on three sides and open to the west edge of the
    data, where its cells are as low as it: water leaves over that edge. Every cell drains
    due west to the edge cell of its row (shortest way: c steps of 1 m), where the path ends
    (code 0 on the data's edge, as a trace expects); none is a pit inside the grid."""
    from georeview.measure.flow_routing import d8_with_sinks as _d8_with_sinks

    z = np.full((11, 12), 10.0, dtype=np.float32)
    z[1:-1, :-1] = 5.0  # rows 1-9, columns 0-10: the flat, column 0 on the data's edge
    d8, depth = _d8_with_sinks(z, np.zeros(z.shape, bool), 1.0, 1.0)
    assert (d8[1:-1, 0] == 0).all()  # the edge cells let the water out
    assert (d8[1:-1, 1:-1] == 16).all()  # west, along the shortest way
    for r in range(1, 10):
        assert _follow(d8, r, 10)[-1] == (r, 0)
    assert (depth == 0).all()


def test_flat_drains_towards_the_nearer_of_two_spill_cells():
    """A 1 x 21 flat corridor with a drop at each end: the cells west of the middle drain
    west, those east of it drain east (the middle cell, equidistant, goes either way)."""
    from georeview.measure.flow_routing import d8_with_sinks as _d8_with_sinks

    z = np.full((3, 23), 10.0, dtype=np.float32)
    z[1, 1:22] = 5.0
    z[1, 0] = z[1, 22] = 4.0
    d8, _ = _d8_with_sinks(z, np.zeros(z.shape, bool), 1.0, 1.0)
    assert (d8[1, 1:11] == 16).all()  # west
    assert (d8[1, 12:22] == 1).all()  # east
    assert d8[1, 11] in (1, 16)


def test_flat_codes_do_not_depend_on_how_many_threads_drain_them(plainfield):
    """The flats are drained one flat at a time on row bands (threads); a flat crossing a
    band's edge belongs to the band of its first cell, so 1 to 7 bands give the same codes,
    cell for cell: on the walled flat above (every cell's octile path to the notch, so
    flats cut by every band edge) and on the filled Plainfield 10 m DEM."""
    from pyflwdir.dem import fill_depressions

    from georeview.measure import _flowkernels as kernels

    z = np.full((15, 19), 10.0, dtype=np.float32)
    z[1:-1, 1:-1] = 5.0
    z[7, 18] = 4.0
    with rasterio.open(plainfield["dem"]) as ds:
        dem = ds.read(1, masked=True).filled(np.nan).astype(np.float32)
    for grid in (z, dem):
        zp = np.full((grid.shape[0] + 2, grid.shape[1] + 2), np.nan, dtype=np.float32)
        zp[1:-1, 1:-1] = grid
        outlet = np.zeros(zp.shape, dtype=bool)
        fp, _ = fill_depressions(
            zp, idxs_pit=kernels.flood_seeds(zp, outlet), nodata=np.float32(np.nan)
        )
        one = kernels.d8_flats(fp, outlet, 10.0, 10.0, threads=1)
        assert (one[1:-1, 1:-1][np.isfinite(grid)] > 0).sum() > 0.9 * np.isfinite(grid).sum()
        for threads in range(2, 8):
            assert np.array_equal(kernels.d8_flats(fp, outlet, 10.0, 10.0, threads=threads), one)


@pytest.mark.parametrize(("xres", "yres"), [(1.0, 1.0), (10.0, 1.0), (1.0, 3.0)])
def test_flat_cells_follow_a_shortest_path_found_by_scipy(xres, yres):
    """Every flat cell's step lies on a shortest way out over its flat, as scipy's Dijkstra
    finds it independently (a virtual source joined to each cell next to a drained cell of
    its height, by that step's length): on terraced noise filled by pyflwdir, with square
    and very unequal cells (where a cell next to the way out may still do better through
    its flat), on 1 and 3 threads."""
    from pyflwdir.dem import fill_depressions
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import dijkstra

    from georeview.measure import _flowkernels as kernels

    rng = np.random.default_rng(11)
    z = np.round(rng.random((60, 80)) * 3.0).astype(np.float32)  # terraces 0-3: many flats
    zp = np.full((62, 82), np.nan, dtype=np.float32)
    zp[1:-1, 1:-1] = z
    outlet = np.zeros(zp.shape, dtype=bool)
    seeds = kernels.flood_seeds(zp, outlet)
    fp, _ = fill_depressions(zp, idxs_pit=seeds, nodata=np.float32(np.nan))
    outlet.ravel()[seeds] = True  # the data's edge drains off the grid (as d8_with_sinks)
    code = kernels.d8_flats(fp, outlet, xres, yres, threads=1)
    assert np.array_equal(kernels.d8_flats(fp, outlet, xres, yres, threads=3), code)
    dr = np.array([-1, -1, -1, 0, 0, 1, 1, 1])
    dc = np.array([-1, 0, 1, -1, 1, -1, 0, 1])
    length = np.hypot(dr * yres, dc * xres)
    # the flat cells: valid, not an outlet, no lower neighbour on the filled surface
    ff = np.pad(fp, 1, constant_values=np.nan)
    nbr = np.stack(
        [
            ff[1 + a : ff.shape[0] - 1 + a, 1 + b : ff.shape[1] - 1 + b]
            for a, b in zip(dr, dc, strict=True)
        ]
    )
    flat = np.isfinite(fp) & ~outlet & ~(nbr < fp).any(axis=0)
    idx = -np.ones(fp.shape, dtype=int)
    idx[flat] = np.arange(flat.sum())
    src = int(flat.sum())
    rows, cols, w = [], [], []
    way_out = np.full(src, np.inf)  # the source's edge to each cell: its shortest step out
    for k in range(8):
        nb_flat = np.roll(np.roll(flat, -dr[k], 0), -dc[k], 1)
        nb_z = np.roll(np.roll(fp, -dr[k], 0), -dc[k], 1)
        both = flat & nb_flat  # the frame is NaN, so the roll never wraps a flat cell
        r, c = np.nonzero(both)
        rows += list(idx[r, c])
        cols += list(idx[r + dr[k], c + dc[k]])
        w += [length[k]] * r.size
        out = flat & ~nb_flat & (nb_z == fp)  # a drained cell (or outlet) of its height
        r, c = np.nonzero(out)
        np.minimum.at(way_out, idx[r, c], length[k])
    # one edge per pair: a sparse matrix would add up repeated entries
    has_way = np.flatnonzero(np.isfinite(way_out))
    rows += [src] * has_way.size
    cols += list(has_way)
    w += list(way_out[has_way])
    graph = coo_matrix((w, (rows, cols)), shape=(src + 1, src + 1)).tocsr()
    best = dijkstra(graph, indices=src)
    offsets = {int(kc): (int(a), int(b)) for kc, a, b in zip(kernels._CODE, dr, dc, strict=True)}
    assert flat.sum() > 500
    for r, c in zip(*np.nonzero(flat), strict=True):
        a, b = offsets[int(code[r, c])]
        step = np.hypot(a * yres, b * xres)
        if flat[r + a, c + b]:
            assert best[idx[r + a, c + b]] + step == pytest.approx(best[idx[r, c]], rel=1e-5)
        else:
            assert fp[r + a, c + b] == fp[r, c]
            assert step == pytest.approx(best[idx[r, c]], rel=1e-5)


@pytest.mark.parametrize("holes", [False, True])
def test_flood_seeds_are_the_data_edge_and_the_outlets(holes):
    """The flood's seeds are the valid cells with a nodata neighbour (8-connected) and the
    outlets: the same cells as scipy's edge (valid and not in the 3 x 3 erosion of valid),
    with and without nodata inside the grid (the all-data grid takes a shortcut)."""
    from scipy.ndimage import binary_erosion

    from georeview.measure import _flowkernels as kernels

    rng = np.random.default_rng(7)
    for shape in [(3, 3), (3, 9), (9, 3), (40, 57)]:
        fp = np.full(shape, np.nan, dtype=np.float32)
        fp[1:-1, 1:-1] = rng.random((shape[0] - 2, shape[1] - 2))
        if holes and min(shape) > 5:
            fp[10:14, 20:31] = np.nan
            fp[25, 5] = np.nan
        outlet = np.zeros(shape, dtype=bool)
        outlet[1:-1, 1:-1] = rng.random((shape[0] - 2, shape[1] - 2)) < 0.02
        valid = np.isfinite(fp)
        edge = valid & ~binary_erosion(valid, structure=np.ones((3, 3), bool), border_value=0)
        expected = np.flatnonzero(edge | (outlet & valid))
        assert np.array_equal(kernels.flood_seeds(fp, outlet), expected)


def test_fill_raises_nested_pits_to_their_spill_levels():
    """Hand-worked: a 5 x 7 block, rim 9 but for a notch at 4 on the west side; inside, a
    pit at 1 (next to a ridge at 6) and a pit at 2 spilling into it. Both fill to the notch's
    4, the ridge and rim stay, and nothing below the notch is left. With the pit at 1 a burned
    sink (a seed) instead, only the pit at 2 fills, to the 3 over which it spills towards
    the sink."""
    from georeview.measure import _flowkernels as kernels

    z = np.array(
        [
            [9, 9, 9, 9, 9, 9, 9],
            [4, 3, 6, 2, 3, 5, 9],
            [9, 1, 6, 3, 3, 5, 9],
            [9, 3, 3, 3, 6, 7, 9],
            [9, 9, 9, 9, 9, 9, 9],
        ],
        dtype=np.float32,
    )
    zp = np.pad(z, 1, constant_values=np.nan)
    none = np.zeros(zp.shape, dtype=bool)
    filled = kernels.fill_depressions(zp, kernels.flood_seeds(zp, none))[1:-1, 1:-1]
    expected = z.copy()
    expected[1:4, 1:5] = np.maximum(z[1:4, 1:5], 4.0)
    assert np.array_equal(filled, expected)
    sink = none.copy()
    sink[3, 2] = True  # z[2, 1] = 1, as a burned sink would be
    kept = kernels.fill_depressions(zp, kernels.flood_seeds(zp, sink))[1:-1, 1:-1]
    expected = z.copy()
    expected[1, 3] = 3.0
    assert np.array_equal(kept, expected)


@pytest.mark.parametrize("seed", range(6))
def test_fill_equals_pyflwdir_on_random_grids(seed):
    """The fill equals pyflwdir's ``fill_depressions`` (Wang & Liu 2006) cell for cell on
    random grids with ties (heights in 1/8 m steps, so both sides' float32 arithmetic is
    exact), heights below and above zero (the heap key's sign handling), nodata holes and
    burned sinks seeded as outlets."""
    from pyflwdir.dem import fill_depressions

    from georeview.measure import _flowkernels as kernels

    rng = np.random.default_rng(seed)
    rows, cols = rng.integers(3, 90, size=2)
    z = (np.round(rng.normal(0.0, 20.0, (rows, cols)) * 8) / 8).astype(np.float32)
    z[rng.random((rows, cols)) < 0.05] = np.nan
    zp = np.pad(z, 1, constant_values=np.nan)
    outlet = np.zeros(zp.shape, dtype=bool)
    outlet[1:-1, 1:-1] = (rng.random((rows, cols)) < 0.01) & np.isfinite(z)
    seeds = kernels.flood_seeds(zp, outlet)
    ref, _ = fill_depressions(zp, idxs_pit=seeds, nodata=np.float32(np.nan))
    ours = kernels.fill_depressions(zp, seeds)
    assert ours.dtype == np.float32
    assert np.array_equal(ours, ref, equal_nan=True)
    assert np.array_equal(np.isnan(ours), np.isnan(zp))
    assert (ours[np.isfinite(zp)] >= zp[np.isfinite(zp)]).all()


def test_filled_surface_matches_pyflwdir_on_plainfield(plainfield):
    """The review's depression filling equals pyflwdir's priority flood (Wang & Liu 2006)
    cell for cell on the Plainfield 10 m DEM, seeded at the same outlets (the data's edge
    and a burned sink); and every cell drains to an outlet (pyflwdir orders all valid
    cells)."""
    import pyflwdir
    from pyflwdir.dem import fill_depressions
    from scipy.ndimage import binary_erosion

    from georeview.measure.flow_routing import d8_with_sinks as _d8_with_sinks

    with rasterio.open(plainfield["dem"]) as ds:
        z = ds.read(1, masked=True).filled(np.nan).astype(np.float32)
    sink = np.zeros(z.shape, bool)
    sink[300:305, 400:410] = True
    d8, depth = _d8_with_sinks(z, sink, 10.0, 10.0)
    valid = np.isfinite(z)
    zb = z.copy()
    zb[sink & valid] = np.nanmin(z) - 1.0
    edge = valid & ~binary_erosion(valid, structure=np.ones((3, 3), bool), border_value=0)
    ref, _ = fill_depressions(
        zb, idxs_pit=np.flatnonzero(edge | (sink & valid)), nodata=np.float32(np.nan)
    )
    assert np.array_equal((zb + depth)[valid], ref[valid])
    flw = pyflwdir.from_array(d8, ftype="d8", check_ftype=False)
    assert flw.idxs_seq.size == np.count_nonzero(valid)  # no loop: every cell reaches a pit
    assert (d8[sink & valid] == 0).all()


def test_contributing_cells_on_a_plane():
    """On a plane sloping east, each cell of a 3 x 4 site drains the site cells west of it
    in its row and itself: counts 1, 2, 3, 4 by column (hand-worked)."""
    from georeview.measure.flow_routing import contributing_cells as _contributing_cells
    from georeview.measure.flow_routing import d8_with_sinks as _d8_with_sinks

    _rows, cols = np.indices((8, 10), dtype=np.float32)
    d8, _ = _d8_with_sinks(50.0 - 0.1 * cols, np.zeros((8, 10), bool), 1.0, 1.0)
    site = np.zeros((8, 10), bool)
    site[2:5, 3:7] = True
    acc = _contributing_cells(d8, site)
    assert np.array_equal(acc[2:5, 3:7], np.tile([1.0, 2.0, 3.0, 4.0], (3, 1)))
    assert (acc[~site] == 0).all()


@pytest.mark.parametrize("seed", range(3))
def test_reach8_is_the_scipy_patches_holding_a_seed(seed):
    """The cells 8-connected to the seeds are the union of the scipy.ndimage.label patches
    (3 x 3 structure) holding a seed; a seed off the mask reaches nothing."""
    from scipy.ndimage import label

    from georeview.measure import _flowkernels

    rng = np.random.default_rng(seed)
    mask = rng.random((120, 90)) > 0.55
    seeds = rng.choice(mask.size, size=12, replace=False).astype(np.int64)
    ref, _ = label(mask, structure=np.ones((3, 3), bool))
    held = np.unique(ref.ravel()[seeds])
    expected = np.isin(ref, held[held > 0])
    assert expected.any()
    assert np.array_equal(_flowkernels.reach8(mask, seeds), expected)
    off = np.flatnonzero(~mask)[:5].astype(np.int64)
    assert not _flowkernels.reach8(mask, off).any()


def test_filled_regions_are_the_depressions_touching_an_inner_window_side():
    """Hand-worked: three filled depressions in a 6 x 8 window, one touching the west side,
    one the south side, one inside. With the west side inside the raster (the window could
    grow there) only the west one counts; with every side inner, the south one too; on a
    window that is the whole raster, none."""
    from types import SimpleNamespace

    from georeview.measure.flow_routing import filled_regions

    depth = np.zeros((6, 8), dtype=np.float32)
    depth[1:3, 0:2] = 0.5  # touches the west side
    depth[3, 2] = 0.1  # diagonal neighbour of the west patch: the same depression
    depth[5, 5:7] = 0.2  # touches the south side
    depth[2, 5] = 0.3  # inside
    west = np.zeros(depth.shape, dtype=bool)
    west[1:3, 0:2] = west[3, 2] = True
    south = np.zeros(depth.shape, dtype=bool)
    south[5, 5:7] = True
    # touches_raster_edge: (top, bottom, left, right)
    only_west = SimpleNamespace(touches_raster_edge=(True, True, False, True))
    assert np.array_equal(filled_regions(depth, only_west), west)
    inner = SimpleNamespace(touches_raster_edge=(False, False, False, False))
    assert np.array_equal(filled_regions(depth, inner), west | south)
    whole = SimpleNamespace(touches_raster_edge=(True, True, True, True))
    assert not filled_regions(depth, whole).any()


def test_infinite_heights_route_as_nodata():
    """A stray +inf or -inf in a float DEM is no data: read as every DEM is
    (:func:`georeview.measure.dem.as_float_block`), the D8 codes and fill depths equal
    those of the same grid with NaN there. Left in, +inf would be a wall and -inf a pit
    to fill, where as holes in the data their neighbours drain off it. Hand-worked: the
    pit at 2 in a plateau at 5 fills to 5 either way (depth 3)."""
    from georeview.measure.dem import as_float_block
    from georeview.measure.flow_routing import d8_with_sinks as _d8_with_sinks

    z = np.full((7, 7), 9.0, dtype=np.float32)
    z[1:-1, 1:-1] = 5.0
    z[3, 3] = 2.0
    nan_grid = z.copy()
    nan_grid[1, 5] = nan_grid[5, 1] = np.nan
    inf_grid = z.copy()
    inf_grid[1, 5], inf_grid[5, 1] = np.inf, -np.inf
    none = np.zeros(z.shape, dtype=bool)
    d8_nan, depth_nan = _d8_with_sinks(nan_grid, none, 1.0, 1.0)
    d8_inf, depth_inf = _d8_with_sinks(as_float_block(inf_grid, None), none, 1.0, 1.0)
    assert np.array_equal(d8_inf, d8_nan)
    assert np.array_equal(depth_inf, depth_nan)
    assert depth_nan[3, 3] == 3.0
    assert not np.isnan(depth_nan).any()
    assert (depth_nan[np.isnan(nan_grid)] == 0).all()
