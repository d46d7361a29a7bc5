"""Jurisdiction against the real Deerfield limit and hand-worked geometry.

Outside values: Wis. Stat. § 236.02(5) (1.5 miles for villages and fourth-class
cities, 3 miles for first- to third-class cities), § 66.0105 (equidistant line),
and SOURCES.md (Deerfield and Cambridge are 1.73 miles apart).
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import shapely
from _build import DEERFIELD, box_ft, dane_munis

from georeview.errors import ConfigError
from georeview.measure import jurisdiction as jur
from georeview.rules import load_ordinance
from georeview.units import miles_to_m

MILE_M = miles_to_m(1.0)  # 1,609.344 m exactly


#: Reach by kind and class, from the ordinance's data (checked against the statute below).
REACH = load_ordinance("deerfield").param("etj_miles")


@pytest.fixture(scope="module")
def deerfield():
    g = dane_munis()
    village = g[(g.MCD_NAME == DEERFIELD) & (g.CTV == "V")].geometry.iloc[0]
    others = g[~((g.MCD_NAME == DEERFIELD) & (g.CTV == "V"))]
    j = jur.build(
        village,
        "Deerfield",
        others,
        kind_field="CTV",
        name_field="MCD_NAME",
        city_class={"Madison": 2},
        reach_miles=REACH,
    )
    cambridge = g[(g.MCD_NAME == "Cambridge") & (g.CTV == "V")].geometry.iloc[0]
    return j, village, cambridge


def test_mile_is_exact():
    # 1 statute mile = 5,280 international feet = 1,609.344 m (exact).
    assert pytest.approx(1609.344, abs=1e-9) == MILE_M


@pytest.mark.parametrize(
    ("kind", "cls", "miles"),
    [
        ("V", None, 1.5),
        ("C", 4, 1.5),
        ("C", 3, 3.0),
        ("C", 2, 3.0),
        ("C", 1, 3.0),
        ("T", None, 0.0),
    ],
)
def test_reach_by_class(kind, cls, miles):
    # Wis. Stat. § 236.02(5): 3 miles for 1st-3rd class cities, 1.5 for 4th class and villages.
    # (the ordinances' etj_miles parameter must say what the statute says)
    assert jur.etj_miles(kind, cls, reach_miles=REACH) == miles


def test_a_city_without_a_class_is_not_taken_as_fourth_class():
    # Its reach is 1.5 or 3 miles by class (Wis. Stat. § 236.02(5)): none is assumed.
    with pytest.raises(ConfigError, match="class"):
        jur.etj_miles("C", None, reach_miles=REACH)


def test_deerfield_cambridge_distance(deerfield):
    # SOURCES.md / issue 2: the real pair is 1.73 miles apart, so their areas overlap.
    _, village, cambridge = deerfield
    assert shapely.distance(village, cambridge) / MILE_M == pytest.approx(1.73, abs=0.005)


def _point_at_distance(village, miles, direction):
    """A point `miles` from the village limit along a ray from the centroid."""
    c = shapely.centroid(village)
    d = np.asarray(direction, dtype=float) / np.hypot(*direction)
    lo, hi = 0.0, 20_000.0
    for _ in range(60):  # bisection on the distance to the limit
        mid = (lo + hi) / 2
        p = shapely.Point(c.x + d[0] * mid, c.y + d[1] * mid)
        if shapely.distance(p, village) < miles * MILE_M:
            lo = mid
        else:
            hi = mid
    return shapely.Point(c.x + d[0] * lo, c.y + d[1] * lo)


def _site_at(p, size_ft=100.0):
    return box_ft(p.x, p.y, size_ft, size_ft)


def test_inside_the_village(deerfield):
    j, village, _ = deerfield
    site = _site_at(shapely.point_on_surface(village))
    r = jur.locate(site, j)
    assert r.status == "village"
    assert r.share("village") == pytest.approx(1.0)
    assert not r.straddles


@pytest.mark.parametrize("direction", [(-1, 0), (0, 1), (0, -1)])
def test_one_mile_out_is_extraterritorial(deerfield, direction):
    # West, north and south of Deerfield lie towns (unincorporated); 1 mi < 1.5 mi.
    j, village, _ = deerfield
    p = _point_at_distance(village, 1.0, direction)
    assert shapely.distance(p, village) / MILE_M == pytest.approx(1.0, abs=1e-6)
    r = jur.locate(_site_at(p), j)
    assert r.status == "extraterritorial"
    assert r.share("extraterritorial") == pytest.approx(1.0)


@pytest.mark.parametrize("direction", [(-1, 0), (0, 1), (0, -1)])
def test_two_miles_out_is_outside(deerfield, direction):
    j, village, _ = deerfield
    p = _point_at_distance(village, 2.0, direction)
    r = jur.locate(_site_at(p), j)
    assert r.status == "outside"
    assert r.share("outside") == pytest.approx(1.0)


def test_etj_edge_at_one_and_a_half_miles(deerfield):
    # A site 20 ft inside the 1.5-mile line is in; one 20 ft outside is not.
    j, village, _ = deerfield
    d = 20 * 0.3048 / MILE_M
    inside = _point_at_distance(village, 1.5 - d - 5 * 0.3048 / MILE_M, (-1, 0))
    outside = _point_at_distance(village, 1.5 + d + 5 * 0.3048 / MILE_M, (-1, 0))
    assert jur.locate(_site_at(inside, 10), j).status == "extraterritorial"
    assert jur.locate(_site_at(outside, 10), j).status == "outside"


def test_equidistant_line_between_deerfield_and_cambridge(deerfield):
    j, village, cambridge = deerfield
    # The midpoint of the shortest line between the two limits is equidistant by
    # construction; the dividing line must pass through it (within 1 m).
    line = shapely.shortest_line(village, cambridge)
    a, b = shapely.get_coordinates(line)
    mid = shapely.Point((a + b) / 2)
    ceded = j.ceded["Cambridge"]
    assert shapely.distance(mid, shapely.boundary(ceded)) < 1.0
    u = (b - a) / np.linalg.norm(b - a)
    near_deerfield = shapely.Point(*(np.array(mid.coords[0]) - 150 * u))
    near_cambridge = shapely.Point(*(np.array(mid.coords[0]) + 150 * u))
    r1 = jur.locate(_site_at(near_deerfield, 60), j)
    r2 = jur.locate(_site_at(near_cambridge, 60), j)
    assert r1.status == "extraterritorial"
    assert r2.status == "outside"
    assert r2.ceded_to == {"Cambridge": pytest.approx(1.0)}
    # A site straddling the line reports the share on each side (about half each).
    r3 = jur.locate(_site_at(mid, 300), j)
    assert r3.straddles
    assert r3.share("extraterritorial") == pytest.approx(0.5, abs=0.1)
    assert r3.ceded_to["Cambridge"] == pytest.approx(r3.share("outside"), abs=1e-6)


def test_ceded_points_are_nearer_the_neighbour(deerfield):
    # Property of § 66.0105: every point given to Cambridge is nearer to Cambridge.
    j, village, cambridge = deerfield
    ceded = j.ceded["Cambridge"]
    rng = np.random.default_rng(1)
    minx, miny, maxx, maxy = ceded.bounds
    pts = shapely.points(rng.uniform(minx, maxx, 4000), rng.uniform(miny, maxy, 4000))
    inside = pts[shapely.contains(ceded, pts)]
    assert len(inside) > 100
    dv = shapely.distance(inside, village)
    dc = shapely.distance(inside, cambridge)
    assert np.all(dc <= dv + 0.05)  # 10 m sampling: line within a few cm


def test_two_squares_equidistant_line_is_the_midline():
    # Hand-worked: villages [0,1000]^2 and [4000,5000]x[0,1000] in metres; between
    # their facing edges the equidistant line is x = 2500.
    v = shapely.box(0, 0, 1000, 1000)
    n = shapely.box(4000, 0, 5000, 1000)
    towns = gpd.GeoDataFrame(
        {"CTV": ["T", "V"], "MCD_NAME": ["Town", "N"]},
        geometry=[
            shapely.difference(shapely.box(-9000, -9000, 14000, 10000), shapely.union(v, n)),
            n,
        ],
        crs=3071,
    )
    j = jur.build(v, "V", towns, kind_field="CTV", name_field="MCD_NAME", reach_miles=REACH)
    assert shapely.contains(j.extraterritorial, shapely.Point(2490, 500))
    assert not shapely.contains(j.extraterritorial, shapely.Point(2510, 500))
    assert shapely.contains(j.ceded["N"], shapely.Point(2510, 500))
    # On the far side from N the zone keeps its full 1.5 miles (2,414.016 m) ...
    reach = 1.5 * MILE_M
    assert shapely.contains(j.extraterritorial, shapely.Point(-reach + 1, 500))
    assert not shapely.contains(j.extraterritorial, shapely.Point(-reach - 1, 500))
    # ... and a point just inside V's reach but nearer N (587 m vs 2,413 m) is N's.
    p = shapely.Point(1000 + reach - 1, -5)
    assert shapely.contains(j.ceded["N"], p)


def test_city_of_second_class_reaches_three_miles():
    v = shapely.box(0, 0, 1000, 1000)
    city = shapely.box(20000, 0, 21000, 1000)
    others = gpd.GeoDataFrame(
        {"CTV": ["T", "C"], "MCD_NAME": ["Town", "Kenosha"]},
        geometry=[
            shapely.difference(shapely.box(-9000, -9000, 40000, 10000), shapely.union(v, city)),
            city,
        ],
        crs=3071,
    )
    j = jur.build(
        v,
        "V",
        others,
        kind_field="CTV",
        name_field="MCD_NAME",
        city_class={"Kenosha": 2},
        reach_miles=REACH,
    )
    # The village's zone does not reach the city's 3-mile zone here: nothing ceded.
    assert j.ceded == {}
    assert jur.etj_miles("C", 2, reach_miles=REACH) * MILE_M == pytest.approx(4828.032)


def test_incorporated_land_is_never_extraterritorial(deerfield):
    j, _, cambridge = deerfield
    assert shapely.area(shapely.intersection(j.extraterritorial, cambridge)) < 1.0


def test_vertex_order_and_orientation_do_not_matter(deerfield):
    j, village, _ = deerfield
    p = _point_at_distance(village, 1.0, (-1, 0))
    site = _site_at(p, 300)
    r1 = jur.locate(site, j)
    r2 = jur.locate(shapely.reverse(site), j)
    assert r1.to_dict() == r2.to_dict()


def test_overlap_touching_along_a_line_keeps_its_polygons():
    # GEOS gives the intersection of polygons that also touch along a line as a
    # collection of a polygon and that line (Waunakee's area and Windsor's zone, Dane
    # County). Here the strip x 1100..1200 and the line along its foot are both nearer
    # village a (100-300 m) than b (8,700 m), so b's part is empty; the overlay of that
    # empty part with the mixed collection raised GEOSException "Unable to determine
    # overlay result geometry dimension" before the results were cut to polygons.
    a = shapely.box(0, 0, 1000, 1000)
    b = shapely.box(10000, 0, 11000, 1000)
    strip = shapely.box(1100, 0, 1200, 1000)
    within = shapely.GeometryCollection([strip, shapely.LineString([(1200, 0), (1300, 0)])])
    theirs = jur.nearer_region(a, b, within)
    assert shapely.is_empty(theirs)
    assert shapely.get_type_id(theirs) in (3, 6)
    mine = jur.nearer_region(b, a, within)  # the other way round: all of it, polygons only
    assert shapely.get_type_id(mine) in (3, 6)
    assert shapely.area(shapely.symmetric_difference(mine, strip)) < 1e-6  # m²


def test_polygon_parts_drops_lines_and_points():
    gc = shapely.GeometryCollection(
        [
            shapely.MultiPolygon([shapely.box(0, 0, 1, 1), shapely.box(2, 0, 3, 1)]),
            shapely.LineString([(1, 0), (2, 0)]),
            shapely.Point(5, 5),
        ]
    )
    out = jur.polygon_parts(gc)
    assert out.geom_type == "MultiPolygon"
    assert shapely.area(out) == pytest.approx(2.0)  # two unit squares
    assert jur.polygon_parts(shapely.LineString([(0, 0), (1, 0)])).is_empty


def test_a_review_names_every_classless_city_at_once():
    # Waunakee (LTSB, Dane County): Madison (0.2 mi) and Middleton (1.6 mi) both lie within
    # 1.5 + 3 miles; the review used to name Madison only, then Middleton after a fix.
    from _build import DANE

    g = gpd.read_file(DANE / "dane_county_munis.gpkg").to_crs(3071)
    g["geometry"] = g.geometry.make_valid()
    is_v = (g.MCD_NAME == "Waunakee") & (g.CTV == "V")
    with pytest.raises(ConfigError) as err:
        jur.build(g[is_v].geometry.union_all(), "Waunakee", g[~is_v], kind_field="CTV",
                  name_field="MCD_NAME", reach_miles=REACH)  # fmt: skip
    assert err.value.field == "neighbors.city_class"
    msg = err.value.message
    assert 'city_class = { "Madison" = N, "Middleton" = N }' in msg
    assert "Madison (0.2 mi), Middleton (1.6 mi)" in msg
    assert "Sun Prairie" not in msg  # 4.75 mi away, past 4.5: no class of it can matter
