"""The downstream trace's distance is measured from the true site boundary to the true water.

``distance_ft`` is the length of the D8 path's polyline (cell centres) from where it last
leaves the site polygon to its first point on the feature met, the last leg running from the
meet cell's centre straight to the feature's nearest point (georeview.measure.flow,
``_met_lengths``). The figures below are worked by hand on tilted planes, where the D8
direction is known: on a plane falling s per metre along one axis a step along it drops
10 s over 10 m and a diagonal step 10 s over 14.14 m, so D8 takes the axis; on a plane
falling s per metre along both axes the diagonal drops 20 s over 14.14 m (1.41 s per metre)
against 10 s over 10 m, so D8 takes the diagonal. Then a property: on random synthetic DEMs,
sites and waters, the distance is never shorter than the straight line from the site to the
feature it reaches.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely
import shapely.affinity
from _build import write_dem
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import LineString, box

from georeview.measure.flow import trace_downstream
from georeview.units import M_PER_FT

#: Somers 17.10(B)(4)(h), Deerfield 31: "within 1/4 mile downstream" = 5,280 / 4 ft.
QUARTER_MILE_FT = 1320.0
X0, Y0 = 500_000.0, 300_000.0  # upper-left corner of the DEMs (EPSG:3071)
CELL_M = 10.0
#: Float rounding of shapely's intersections and projections on coordinates of ~5e5 m.
TOL_FT = 1e-6


def _plane(tmp: Path, rows: int, cols: int, south: float, east: float) -> Path:
    """A 10 m DEM of a plane falling *south* per metre southwards and *east* eastwards."""
    r, c = np.indices((rows, cols), dtype=np.float64)
    z = 300.0 - south * CELL_M * r - east * CELL_M * c
    return write_dem(tmp / "plane.tif", z.astype(np.float32), res=CELL_M, origin=(X0, Y0))


def _waters(geom, name: str = "Test Creek") -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"GNIS_NAME": [name]}, geometry=[geom], crs=3071)


@pytest.mark.parametrize("offset_m", [0.0, 2.5, 5.0, 7.5])
def test_stream_135_m_below_the_site_edge_is_442_9_ft(tmp_path, offset_m):
    """A 100 m square site on a plane falling 5 % to the south (D8 due south), a straight
    east-west stream 135 m south of its south edge: every discharge path leaves the south
    edge at right angles and runs straight to the stream, so the distance is the gap,
    135 m / 0.3048 = 442.913 ft, wherever the edge falls on the grid (*offset_m* shifts site
    and stream together by a quarter, half and three quarters of a cell).

    At offset 5 m the site's edge runs through the centres of a row of cells and the
    stream 15 m (1.5 cells) below a row of centres; measured from the start cell's centre
    (on the edge) to the centre of the first meet cell (15 m from the stream, just inside
    the 1.5-cell meet distance), as before this test, the path was 120 m = 393.7 ft: the
    short figure of the session 3 note, 49.2 ft = 15 m short."""
    dem = _plane(tmp_path, 60, 50, south=0.05, east=0.0)
    south_y = Y0 - 200.0 - offset_m
    site = box(X0 + 200.0 + offset_m, south_y, X0 + 300.0 + offset_m, south_y + 100.0)
    stream = LineString([(X0, south_y - 135.0), (X0 + 500.0, south_y - 135.0)])
    res = trace_downstream(
        dem, "m", site, "EPSG:3071", waters=_waters(stream), length_ft=QUARTER_MILE_FT
    )
    assert res.reaches_water_within_quarter_mile is True
    assert res.receiving_feature == "Test Creek"
    assert res.distance_ft == pytest.approx(135.0 / M_PER_FT, abs=TOL_FT)  # 442.913 ft
    # the drawn paths run on to the stream, where they are measured to
    assert all(line.distance(stream) < 1e-6 for line in res.path.geoms)
    # every discharge point of the south edge measures the same gap
    assert [p.distance_ft for p in res.discharge_points] == pytest.approx(
        [135.0 / M_PER_FT] * len(res.discharge_points), abs=TOL_FT
    )


def test_diagonal_path_to_a_stream_ends_with_the_leg_to_its_nearest_point(tmp_path):
    """Plane falling 5 % south and 5 % east (D8 south-east, see the module docstring), site
    = cells 10-19 by 10-19 (edges on cell edges: x 100-200 m, y -100 to -200 m from the
    corner), a north-south stream 135 m east of the site, x = 335 m: the centre line of
    column 33.

    From a cell of the site's east column (centre x = 195 m) the path steps south-east;
    it leaves the site at x = 200 m after 5 sqrt 2 m, and stops on the first meet cell,
    column 32 (centre x = 325 m, 10 m from the stream; column 31's centre is 20 m away,
    beyond the 1.5-cell = 15 m meet distance): 13 diagonal steps from x = 195 to 325 m.
    Measured from the exit: (325 - 200) sqrt 2 = 176.777 m, then the leg due east from the
    meet centre to the stream, 10 m: 186.777 m = 612.785 ft. Paths from the south row
    leave farther west and are longer; the corner cell's path leaves through the corner
    (200, -200) and is as short. The straight line from site to stream is 135 m."""
    dem = _plane(tmp_path, 60, 60, south=0.05, east=0.05)
    site = box(X0 + 100.0, Y0 - 200.0, X0 + 200.0, Y0 - 100.0)
    stream = LineString([(X0 + 335.0, Y0), (X0 + 335.0, Y0 - 600.0)])
    res = trace_downstream(
        dem, "m", site, "EPSG:3071", waters=_waters(stream), length_ft=QUARTER_MILE_FT
    )
    want_m = 125.0 * math.sqrt(2.0) + 10.0
    assert res.reaches_water_within_quarter_mile is True
    assert res.distance_ft == pytest.approx(want_m / M_PER_FT, abs=TOL_FT)  # 612.785 ft
    assert res.distance_ft > site.distance(stream) / M_PER_FT


def test_water_body_polygon_is_measured_to_its_edge(tmp_path):
    """A pond (a 200 m x 60 m polygon) whose north shore is 87.5 m south of a 100 m site
    on the plane falling 5 % south (D8 due south): the path runs due south from the site's
    edge and its last leg reaches the shore at right angles: 87.5 m = 287.073 ft. The pond
    is a water body: the polygon counts, not a buffer of its outline."""
    dem = _plane(tmp_path, 60, 50, south=0.05, east=0.0)
    site = box(X0 + 203.0, Y0 - 203.0, X0 + 303.0, Y0 - 103.0)
    pond = box(X0 + 150.0, Y0 - 350.5, X0 + 350.0, Y0 - 290.5)
    res = trace_downstream(
        dem, "m", site, "EPSG:3071", waters=_waters(pond, "Mill Pond"), length_ft=1320.0
    )
    assert res.receiving_feature == "Mill Pond"
    assert res.distance_ft == pytest.approx(87.5 / M_PER_FT, abs=TOL_FT)


def test_wetland_within_the_meet_distance_of_the_site_is_not_at_zero_ft(tmp_path):
    """A wetland 8 m south of the site's south edge (x 200-300 m, edge at y = -200 m) on the
    plane falling 5 % south: the site's last row of centres (y = -195 m) is 13 m from it,
    within the 1.5-cell meet distance, so those site cells are meet cells and their paths
    are one cell long. Measured from centre to centre such a path was 0 ft; measured from
    the site boundary to the wetland it is the gap, 8 m = 26.247 ft."""
    dem = _plane(tmp_path, 60, 50, south=0.05, east=0.0)
    site = box(X0 + 200.0, Y0 - 200.0, X0 + 300.0, Y0 - 100.0)
    wet = gpd.GeoDataFrame(
        {"WETCODE": ["E1K"]},
        geometry=[box(X0 + 150.0, Y0 - 260.0, X0 + 350, Y0 - 208.0)],
        crs=3071,
        index=[4],
    )
    res = trace_downstream(dem, "m", site, "EPSG:3071", wetlands=wet, length_ft=1320.0)
    assert res.receiving_feature == "wetland 4"
    assert res.distance_ft == pytest.approx(8.0 / M_PER_FT, abs=TOL_FT)


def test_stream_through_the_site_is_at_zero_ft(tmp_path):
    """A stream crossing the site (the site's runoff discharges into it on the site): the
    site touches the stream, the straight-line distance is 0, and so is the trace's."""
    dem = _plane(tmp_path, 60, 50, south=0.05, east=0.0)
    site = box(X0 + 200.0, Y0 - 200.0, X0 + 300.0, Y0 - 100.0)
    stream = LineString([(X0, Y0 - 153.0), (X0 + 500.0, Y0 - 153.0)])
    res = trace_downstream(
        dem, "m", site, "EPSG:3071", waters=_waters(stream), length_ft=QUARTER_MILE_FT
    )
    assert res.reaches_water_within_quarter_mile is True
    assert res.distance_ft == 0.0


def test_feature_just_past_the_length_is_not_within_it(tmp_path):
    """A stream 1,330 ft (405.384 m) south of the site's edge (y = -200 m; plane falling 5 %
    south) is past 1,320 ft, although the path meets it: its first meet cell is row 59
    (centre y = -595 m, 10.384 m from the stream, within the 1.5-cell meet distance), whose
    centre is 400 m = 1,312.3 ft from the start cell's centre (y = -195 m): within 1,320 ft
    as the distance was measured before. From the edge to the stream it is 395 + 10.384 =
    405.384 m. A stream 1,310 ft (399.288 m) south is met at row 58 (centre -585 m, 14.288 m
    from it) and measured 385 + 14.288 = 399.288 m: within."""
    dem = _plane(tmp_path, 80, 50, south=0.05, east=0.0)
    site = box(X0 + 200.0, Y0 - 200.0, X0 + 300.0, Y0 - 100.0)
    for gap_ft, within in ((1330.0, False), (1310.0, True)):
        y = Y0 - 200.0 - gap_ft * M_PER_FT
        stream = LineString([(X0, y), (X0 + 500.0, y)])
        res = trace_downstream(
            dem, "m", site, "EPSG:3071", waters=_waters(stream), length_ft=QUARTER_MILE_FT
        )
        assert res.reaches_water_within_quarter_mile is within
        if within:
            assert res.distance_ft == pytest.approx(gap_ft, abs=TOL_FT)
        else:
            assert res.distance_ft is None


# --------------------------------------------------------------------------- property


@st.composite
def _cases(draw: st.DrawFn) -> dict:
    """A random DEM of 60 x 60 cells of 10 m, 10 m x 7.5 m or 5 m (a tilted plane, three
    hills or hollows, noise); a site, either a rotated rectangle from 3 m (smaller than a
    cell) to 150 m or a star-shaped polygon (concave: runoff can leave it and cross it
    again); 1-3 stream polylines and 0-2 rotated rectangular wetlands anywhere on it."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    res = draw(st.sampled_from([(10.0, 10.0), (10.0, 7.5), (5.0, 5.0)]))
    n = 60
    r, c = np.indices((n, n), dtype=np.float64)
    fall_s, fall_e = draw(st.floats(-0.1, 0.1)), draw(st.floats(-0.1, 0.1))
    z = 100.0 - fall_s * res[1] * r - fall_e * res[0] * c
    for _ in range(3):
        r0, c0, h = rng.uniform(0, n), rng.uniform(0, n), rng.uniform(-8.0, 8.0)
        z += h * np.exp(-((r - r0) ** 2 + (c - c0) ** 2) / (2 * rng.uniform(3, 12) ** 2))
    z += rng.uniform(0.0, draw(st.floats(0.0, 0.5)), z.shape)
    w_m, h_m = n * res[0], n * res[1]

    def point() -> tuple[float, float]:
        return X0 + rng.uniform(0.05, 0.95) * w_m, Y0 - rng.uniform(0.05, 0.95) * h_m

    def rect(w: float, h: float) -> shapely.Geometry:
        x, y = point()
        g = box(x - w / 2, y - h / 2, x + w / 2, y + h / 2)
        return shapely.affinity.rotate(g, rng.uniform(0, 180), origin=(x, y))

    if draw(st.booleans()):
        site = rect(draw(st.floats(3.0, 150.0)), draw(st.floats(3.0, 150.0)))
    else:
        k = int(rng.integers(5, 13))
        angle = np.sort(rng.uniform(0, 2 * np.pi, k))
        radius = rng.uniform(5.0, 0.2 * w_m, k)
        x, y = point()
        site = shapely.Polygon(
            np.column_stack([x + radius * np.cos(angle), y + radius * np.sin(angle)])
        )
        site = site if site.is_valid else site.convex_hull
    streams = [
        LineString([point() for _ in range(int(rng.integers(2, 5)))])
        for _ in range(draw(st.integers(1, 3)))
    ]
    wetlands = [
        rect(rng.uniform(10, 150), rng.uniform(10, 150)) for _ in range(draw(st.integers(0, 2)))
    ]
    return {
        "z": z.astype(np.float32),
        "res": res,
        "site": site,
        "streams": streams,
        "wetlands": wetlands,
    }


@settings(max_examples=80, deadline=None)
@given(case=_cases())
def test_distance_is_never_shorter_than_the_straight_line(case):
    """For every discharge point that reaches a feature, and for the site's answer, the
    trace distance is at least the straight-line distance from the site to that feature
    (shapely's ``distance``, exact for these polygons and lines) and at most 1,320 ft; the
    site's answer is the shortest of its discharge points'."""
    streams, wetlands = case["streams"], case["wetlands"]
    waters = gpd.GeoDataFrame(
        {"GNIS_NAME": [f"F{i}" for i in range(len(streams))]}, geometry=streams, crs=3071
    )
    wet = gpd.GeoDataFrame(geometry=wetlands, crs=3071) if wetlands else None
    by_label = {f"F{i}": g for i, g in enumerate(streams)}
    by_label |= {f"wetland {i}": g for i, g in enumerate(wetlands)}
    with tempfile.TemporaryDirectory() as tmp:
        dem = write_dem(Path(tmp) / "dem.tif", case["z"], res=case["res"], origin=(X0, Y0))
        res = trace_downstream(
            dem,
            "m",
            case["site"],
            "EPSG:3071",
            waters=waters,
            wetlands=wet,
            length_ft=QUARTER_MILE_FT,
            max_points=10_000,  # every discharge point
        )
    site = case["site"]
    met = [p for p in res.discharge_points if p.reaches_water]
    if res.reaches_water_within_quarter_mile:
        assert res.distance_ft == min(p.distance_ft for p in met)
        met.append(res)  # the site's answer: same fields
    for p in met:
        feature = by_label[p.receiving_feature]
        straight_ft = site.distance(feature) / M_PER_FT
        assert straight_ft - TOL_FT <= p.distance_ft <= QUARTER_MILE_FT + TOL_FT


def test_site_smaller_than_a_cell_is_measured_from_its_own_edge(tmp_path):
    """A 2 m square site inside one 10 m cell (x 201-203 m, y -203 to -201 m; the cell's
    centre (205, -205) lies outside it, so the site is that one touched cell) and a stream
    x = 204 m between the site and the centre. The path is one cell (the cell is a meet
    cell); its start leg runs from the site's nearest point to the centre, (203, -203), and
    crosses the stream at (204, -204): sqrt 2 = 1.414 m = 4.640 ft from the site. (The
    straight line is 1 m; to the end of the polyline, centre and leg to the stream, it
    would be 2 sqrt 2 + 1 = 3.83 m.)"""
    dem = _plane(tmp_path, 40, 40, south=0.0, east=0.05)
    site = box(X0 + 201.0, Y0 - 203.0, X0 + 203.0, Y0 - 201.0)
    stream = LineString([(X0 + 204.0, Y0), (X0 + 204.0, Y0 - 400.0)])
    res = trace_downstream(
        dem, "m", site, "EPSG:3071", waters=_waters(stream), length_ft=QUARTER_MILE_FT
    )
    assert res.reaches_water_within_quarter_mile is True
    assert res.distance_ft == pytest.approx(math.sqrt(2.0) / M_PER_FT, abs=TOL_FT)


def test_path_back_over_the_site_is_measured_from_its_last_exit(tmp_path):
    """A U-shaped site (two 100 m x 200 m arms at x 100-200 m and 300-400 m joined by a
    50 m bar along the north) on the plane falling 5 % east (D8 due east), a north-south
    stream 135 m east of the east arm (x = 535 m). Runoff from the west arm leaves it at
    x = 200 m, crosses the 100 m gap and runs back over the east arm, which it leaves at
    x = 400 m: measured from that last exit, every discharge point is 135 m = 442.913 ft
    from the stream (from the first exit the west arm's would be 235 m)."""
    dem = _plane(tmp_path, 60, 80, south=0.0, east=0.05)
    site = shapely.union_all(
        [
            box(X0 + 100.0, Y0 - 300.0, X0 + 200.0, Y0 - 100.0),
            box(X0 + 300.0, Y0 - 300.0, X0 + 400.0, Y0 - 100.0),
            box(X0 + 100.0, Y0 - 150.0, X0 + 400.0, Y0 - 100.0),
        ]
    )
    stream = LineString([(X0 + 535.0, Y0), (X0 + 535.0, Y0 - 600.0)])
    res = trace_downstream(
        dem,
        "m",
        site,
        "EPSG:3071",
        waters=_waters(stream),
        length_ft=QUARTER_MILE_FT,
        max_points=100,
    )
    west = [p for p in res.discharge_points if p.x < X0 + 200.0]
    assert len(west) == 15  # rows 15-29 of the west arm's east column (x = 195 m)
    assert res.distance_ft == pytest.approx(135.0 / M_PER_FT, abs=TOL_FT)
    assert [p.distance_ft for p in res.discharge_points] == pytest.approx(
        [135.0 / M_PER_FT] * len(res.discharge_points), abs=TOL_FT
    )
