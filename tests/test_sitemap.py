"""Tests of georeview.facts.sitemap: features near the site, what the map shows, and the rules.

Distances are hand-worked: the site is a rectangle in EPSG:3071 (metres); a feature placed
``d`` metres from its edge is ``d / 0.3048`` ft away (international foot, exact). The
"immediately adjacent" distance is 100 ft (the ordinance part files).
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pytest
import shapely
from pyproj import CRS
from shapely.geometry import LineString

import georeview.ordinances
from georeview.config import SITE_MAP_FEATURES, parse_model, read_toml
from georeview.errors import ConfigError, DataSourceError
from georeview.facts.plan import plan_facts
from georeview.facts.sitemap import (
    NEAR_FEATURES,
    adjacent_distance_ft,
    features_near,
    sitemap_facts,
)
from georeview.load import load_submission
from georeview.rules import RulePart, judge, load_ordinance
from georeview.units import M_PER_FT, M_PER_US_FT, SQFT_PER_ACRE
from tests._build import box_ft, shipped_municipalities, write_submission

CX, CY = 580_000.0, 290_000.0
W3071 = CRS.from_epsg(3071)
#: Site: 400 ft x 300 ft (2.75 acres: a major site in both villages).
SITE = box_ft(CX, CY, 400, 300)
EAST_M = float(SITE.bounds[2])


def _gdf(geoms, crs=3071, **cols) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(cols, geometry=list(geoms), crs=crs)


def _east_box(gap_m: float, size_m: float = 20.0) -> shapely.Polygon:
    """A square whose west edge is ``gap_m`` metres east of the site's east edge."""
    return shapely.box(EAST_M + gap_m, CY - size_m / 2, EAST_M + gap_m + size_m, CY + size_m / 2)


def _sub(tmp_path: Path, municipality: str = "somers", extra: str = "", **kw):
    folder = write_submission(
        tmp_path / "sub", SITE, toml=f'municipality = "{municipality}"\n{extra}', **kw
    )
    return load_submission(folder, W3071)


def base_facts(acres: float = SITE.area / M_PER_FT**2 / SQFT_PER_ACRE) -> dict:
    """Facts the judge needs to classify a site: in the village, building, ``acres``."""
    sqft = acres * SQFT_PER_ACRE
    return {
        "jurisdiction.status": "village",
        "jurisdiction.share.village": 1.0,
        "jurisdiction.share.extraterritorial": 0.0,
        "jurisdiction.share.outside": 0.0,
        "disturbed_area_sqft": sqft,
        "disturbed_area_acres": acres,
        "disturbed_at_once_acres": acres,
        "activity.kinds": ("building",),
        "activity.on_platted_lot": True,
        "activity.fill_cubic_yards": 0.0,
        "activity.pipe_length_ft": 0.0,
    }


def by_id(judgement) -> dict:
    return {f.rule_id: f for f in judgement.findings}


# --------------------------------------------------------------------------- distances


def test_adjacent_distance_is_ordinance_data():
    # Both part files state 100 ft (one inch at the coarsest allowed scale, 1 in = 100 ft).
    assert adjacent_distance_ft("somers") == 100.0
    assert adjacent_distance_ft("deerfield") == 100.0


@pytest.mark.parametrize(
    ("gap_ft", "near"),
    [(99.9, True), (100.1, False), (0.0, True), (-5.0, True), (300.0, False)],
)
def test_wetland_near_by_distance_in_feet(gap_ft, near):
    # A wetland 99.9 ft (30.45 m) from the edge is adjacent; 100.1 ft (30.51 m) is not;
    # one touching (0) or overlapping (-5 ft) the site is on it.
    wet = _east_box(gap_ft * M_PER_FT)
    got = features_near(SITE, {"wetlands": _gdf([wet])}, adjacent_ft=100.0, working_crs=W3071)
    assert got["wetlands"] is near


def test_distance_in_a_us_survey_foot_crs():
    # NAD83 / Wisconsin South (ftUS), EPSG:2289: 1 unit = 1200/3937 m. 100 intl ft =
    # 99.9998 US ft, so a feature 99.9997 US ft away is near and one 100.0005 US ft is not.
    crs = CRS.from_epsg(2289)
    site = shapely.box(0, 0, 400, 300)
    unit_ft = M_PER_US_FT / M_PER_FT  # ft per US ft
    assert 100.0 / unit_ft == pytest.approx(99.9998, abs=1e-4)
    near = LineString([(400 + 99.9997, 0), (400 + 99.9997, 300)])
    far = LineString([(400 + 100.0005, 0), (400 + 100.0005, 300)])
    for line, expect in ((near, True), (far, False)):
        roads = gpd.GeoDataFrame(geometry=[line], crs=crs)
        assert (
            features_near(site, {"roads": roads}, adjacent_ft=100.0, working_crs=crs)["roads"]
            is expect
        )


def test_hydrography_split_by_nhd_ftype():
    # NHD FType: 336 CanalDitch -> watercourses, 460 StreamRiver -> streams,
    # 390 LakePond -> lakes, 466 SwampMarsh -> wetlands.
    ditch = LineString([(EAST_M + 10, CY - 50), (EAST_M + 10, CY + 50)])
    stream = LineString([(EAST_M + 500, CY - 50), (EAST_M + 500, CY + 50)])
    marsh = _east_box(15.0)
    lake = _east_box(400.0)
    hydro = _gdf([ditch, stream, marsh, lake], FType=[336, 460, 466, 390])
    got = features_near(SITE, {"hydrography": hydro}, adjacent_ft=100.0, working_crs=W3071)
    assert got["watercourses"] is True
    assert got["streams"] is False
    assert got["lakes"] is False
    assert got["wetlands"] is True  # the marsh, although no wetland layer is given
    assert got["floodplain"] is None  # layer absent: unknown
    assert got["roads"] is None


# --------------------------------------------------------------------------- shows


def test_shows_declared_synonyms_and_feature_ok(tmp_path):
    sub = _sub(tmp_path, extra='[site_map]\nshows = ["surface_waters", "site_boundary"]\n')
    stream = LineString([(EAST_M + 5, CY - 50), (EAST_M + 5, CY + 50)])
    layers = {
        "wetlands": _gdf([_east_box(10.0)]),
        "hydrography": _gdf([stream], FType=[460]),
        "floodplain": _gdf([_east_box(500.0)]),
        "floodway": None,
        "roads": gpd.GeoDataFrame(geometry=[], crs=3071),
    }
    f = sitemap_facts(sub, layers_near=layers, working_crs=W3071)
    # The stream is near and "surface_waters" shows it.
    assert f["site_map.near.streams"] is True
    assert f["site_map.shows.streams"] is True
    assert f["site_map.feature_ok.streams"] is True
    # The wetland is near and not shown.
    assert f["site_map.near.wetlands"] is True
    assert f["site_map.shows.wetlands"] is False
    assert f["site_map.feature_ok.wetlands"] is False
    # The floodplain is 500 m away: not near, so fine either way.
    assert f["site_map.near.floodplain"] is False
    assert f["site_map.feature_ok.floodplain"] is True
    # No floodway layer: unknown; an empty roads layer: none near.
    assert f["site_map.near.floodway"] is None
    assert f["site_map.feature_ok.floodway"] is None
    assert f["site_map.near.roads"] is False
    assert f["site_map.on_site.wetlands"] is False
    assert f["site_map.shows.site_boundary"] is True
    assert f["site_map.shows.controls"] is False
    assert f["site_map.provided"] is True
    assert f["site_map.adjacent_ft"] == 100.0


def test_shows_unknown_without_declaration(tmp_path):
    sub = _sub(tmp_path)
    f = sitemap_facts(sub, layers_near={"wetlands": _gdf([_east_box(10.0)])}, working_crs=W3071)
    assert f["site_map.near.wetlands"] is True
    assert f["site_map.shows.wetlands"] is None
    assert f["site_map.feature_ok.wetlands"] is None
    assert all(f[f"site_map.shows.{x}"] is None for x in SITE_MAP_FEATURES)
    assert f["site_map.provided"] is None


def test_sitemap_folder_layers_count_as_shown(tmp_path):
    sub_dir = write_submission(tmp_path / "sub", SITE, toml='municipality = "deerfield"')
    (sub_dir / "sitemap").mkdir()
    _gdf([_east_box(10.0)], crs=3071).to_file(sub_dir / "sitemap" / "wetlands.geojson")
    # Another CRS is fine: layers are reprojected on reading.
    _gdf([SITE]).to_crs(4326).to_file(sub_dir / "sitemap" / "site_boundary.geojson")
    (sub_dir / "sitemap" / "notes.txt").write_text("ignored: not a vector file")
    sub = load_submission(sub_dir, W3071)
    f = sitemap_facts(sub, layers_near={"wetlands": _gdf([_east_box(10.0)])}, working_crs=W3071)
    assert f["site_map.shows.wetlands"] is True
    assert f["site_map.shows.site_boundary"] is True
    assert f["site_map.shows.controls"] is False  # the folder says what the map shows
    assert f["site_map.layers"] == ("site_boundary", "wetlands")
    assert f["site_map.feature_ok.wetlands"] is True


def test_sitemap_layer_with_unknown_name_is_refused(tmp_path):
    sub_dir = write_submission(tmp_path / "sub", SITE, toml='municipality = "somers"')
    (sub_dir / "sitemap").mkdir()
    _gdf([SITE]).to_file(sub_dir / "sitemap" / "wetland.geojson")  # singular: a typo
    sub = load_submission(sub_dir, W3071)
    with pytest.raises(ConfigError, match=r"wetland\.geojson.*not a site-map feature"):
        sitemap_facts(sub, layers_near={}, working_crs=W3071)


# --------------------------------------------------------------------------- contours, grid


def _contours(levels_ft, crs=3071) -> gpd.GeoDataFrame:
    lines = [
        LineString([(CX - 80, CY - 40 + i * 8), (CX + 80, CY - 40 + i * 8)])
        for i in range(len(levels_ft))
    ]
    return _gdf(lines, crs=crs, ELEV=list(levels_ft))


def test_submitted_contours_are_measured(tmp_path):
    # Levels 800, 810, ..., 850 ft: a 10-ft interval (the sample "coarse" map), though the
    # submission declares 2 ft. The measured value is what the rule reads.
    sub_dir = write_submission(
        tmp_path / "sub",
        SITE,
        toml='municipality = "somers"\n[site_map]\ncontour_interval_ft = 2\n'
        'contours = "contours.geojson"\n',
    )
    _contours([800, 810, 820, 830, 840, 850]).to_file(sub_dir / "contours.geojson")
    sub = load_submission(sub_dir, W3071)
    f = sitemap_facts(sub, layers_near={}, working_crs=W3071)
    assert f["site_map.contour_interval_ft"] == pytest.approx(10.0, abs=1e-9)
    assert f["site_map.contour_interval_source"] == "measured"
    assert f["site_map.shows.topography"] is True
    facts = {**base_facts(), **f}
    found = by_id(judge(load_ordinance("somers"), facts))["somers.17.10.B.4.contour"]
    assert found.status == "fail"
    assert found.citation == "§ 17.10(B)(4)"
    assert found.measured == pytest.approx(10.0)


def _contour_finding(tmp_path, levels):
    sub_dir = write_submission(
        tmp_path / "sub",
        SITE,
        toml='municipality = "somers"\n[site_map]\ncontour_interval_ft = 2\n'
        'contours = "contours.geojson"\n',
    )
    _contours(levels).to_file(sub_dir / "contours.geojson")
    f = sitemap_facts(load_submission(sub_dir, W3071), layers_near={}, working_crs=W3071)
    found = by_id(judge(load_ordinance("somers"), {**base_facts(), **f}))
    return f, found["somers.17.10.B.4.contour"]


def test_one_line_off_a_10_ft_set_does_not_make_it_1_ft(tmp_path):
    # Issue 23: levels 800, 810, ..., 850 plus one line at 801. Every difference is a
    # whole number of feet, so the old "smallest spacing half the differences are
    # multiples of" measured 1 ft and the 5-ft rule passed. The dominant spacing is
    # 10 ft (6 of 7 levels on it, all six 10-ft levels present; 1 ft: 7 of 51 levels).
    f, found = _contour_finding(tmp_path, [800, 801, 810, 820, 830, 840, 850])
    assert f["site_map.contour_interval_ft"] == pytest.approx(10.0, abs=1e-9)
    assert f["site_map.contour_interval_regular"] is False
    assert f["site_map.contour_levels_off_interval"] == 1
    assert found.status == "fail"
    assert "off the interval most of its lines follow" in found.message


def test_a_contour_layer_with_no_regular_interval_is_needs_info(tmp_path):
    # 800, 802.7, 803.1, 808.9, 813: no spacing puts 3/4 of the levels on one lattice
    # with half its levels filled. The declared 2 ft does not stand in for the layer.
    f, found = _contour_finding(tmp_path, [800, 802.7, 803.1, 808.9, 813])
    assert f["site_map.contour_interval_ft"] is None
    assert f["site_map.contour_levels_off_interval"] == 5
    assert found.status == "needs_info"
    assert "no regular interval" in found.message


def test_a_regular_contour_layer_carries_no_caveat(tmp_path):
    f, found = _contour_finding(tmp_path, [800, 802, 804, 806, 810])  # 808 missing: a gap
    assert f["site_map.contour_interval_ft"] == pytest.approx(2.0, abs=1e-9)
    assert f["site_map.contour_interval_regular"] is True
    assert found.status == "pass"
    assert "Caveat" not in found.message


def test_contour_layer_without_elevation_field(tmp_path):
    sub_dir = write_submission(
        tmp_path / "sub",
        SITE,
        toml='municipality = "somers"\n[site_map]\ncontours = "c.geojson"\n',
    )
    _gdf([LineString([(CX, CY), (CX + 1, CY)])], name=["x"]).to_file(sub_dir / "c.geojson")
    sub = load_submission(sub_dir, W3071)
    with pytest.raises(ConfigError, match=r"site_map\.contour_field"):
        sitemap_facts(sub, layers_near={}, working_crs=W3071)


def test_missing_contour_file(tmp_path):
    sub = _sub(tmp_path, extra='[site_map]\ncontours = "nope.geojson"\n')
    with pytest.raises(DataSourceError, match=r"site_map\.contours"):
        sitemap_facts(sub, layers_near={}, working_crs=W3071)


@pytest.mark.parametrize(("grow_m", "covers"), [(10.0, True), (-5.0, False)])
def test_grid_layer_must_cover_the_site(tmp_path, grow_m, covers):
    # A grid of four cells over the site grown by 10 m covers it; shrunk by 5 m it does not.
    x0, y0, x1, y1 = SITE.buffer(grow_m, join_style="mitre").bounds
    xm, ym = (x0 + x1) / 2, (y0 + y1) / 2
    cells = [
        shapely.box(x0, y0, xm, ym),
        shapely.box(xm, y0, x1, ym),
        shapely.box(x0, ym, xm, y1),
        shapely.box(xm, ym, x1, y1),
    ]
    sub_dir = write_submission(
        tmp_path / "sub",
        SITE,
        toml='municipality = "somers"\n[site_map]\ngrid_layer = "grid.geojson"\n',
    )
    _gdf(cells, label=["A1", "B1", "A2", "B2"]).to_file(sub_dir / "grid.geojson")
    f = sitemap_facts(load_submission(sub_dir, W3071), layers_near={}, working_crs=W3071)
    assert f["site_map.grid"] is covers
    assert f["site_map.grid_covers_site"] is covers


# --------------------------------------------------------------------------- rules


def test_wetland_touching_site_not_shown_fails_with_citation(tmp_path):
    sub = _sub(
        tmp_path,
        extra="[site_map]\nscale_ft_per_inch = 50\ncontour_interval_ft = 2\ngrid = true\n"
        'shows = ["site_boundary", "roads"]\n',
    )
    layers = {
        "wetlands": _gdf([_east_box(-3.0)]),  # overlaps the site by 3 m
        "floodplain": _gdf([_east_box(800.0)]),
        "floodway": _gdf([_east_box(800.0)]),
        "hydrography": gpd.GeoDataFrame({"FType": []}, geometry=[], crs=3071),
        "roads": None,
    }
    f = sitemap_facts(sub, layers_near=layers, working_crs=W3071, downstream=None)
    assert f["site_map.on_site.wetlands"] is True
    for m, rid, cit in (
        ("somers", "somers.17.10.B.4.a.wetlands", "§ 17.10(B)(4)(a)"),
        ("somers", "somers.17.10.B.4.h.wetland", "§ 17.10(B)(4)(h)"),
        ("deerfield", "deerfield.31.09.1.A.2.wetlands", "§ 31.09(1)(A)2"),
    ):
        found = by_id(judge(load_ordinance(m), {**base_facts(), **f}))
        assert found[rid].status == "fail", rid
        assert found[rid].citation == cit
    found = by_id(judge(load_ordinance("somers"), {**base_facts(), **f}))
    assert found["somers.17.10.B.4.a.floodplain"].status == "not_applicable"
    assert found["somers.17.10.B.4.a.streams"].status == "not_applicable"
    assert found["somers.17.10.B.4.a.roads"].status == "needs_info"  # no roads layer
    assert found["somers.17.10.B.4.b"].status == "pass"
    assert found["somers.17.10.B.4.d"].status == "fail"
    assert found["somers.17.10.B.4.h.discharge"].status == "needs_info"  # not traced
    assert found["somers.sitemap.adjacent"].measured == 100.0


def test_downstream_discharge_rule(tmp_path):
    sub = _sub(tmp_path, extra='[site_map]\nshows = ["downstream_discharge"]\n')
    o = load_ordinance("somers")
    for reaches, status in ((True, "pass"), (False, "not_applicable"), (None, "needs_info")):
        f = sitemap_facts(
            sub,
            layers_near={},
            working_crs=W3071,
            downstream={"reaches_water_within_quarter_mile": reaches},
        )
        got = by_id(judge(o, {**base_facts(), **f}))["somers.17.10.B.4.h.discharge"]
        assert got.status == status, reaches
    sub2 = _sub(tmp_path / "b", extra='[site_map]\nshows = ["site_boundary"]\n')
    f = sitemap_facts(
        sub2,
        layers_near={},
        working_crs=W3071,
        downstream={"reaches_water_within_quarter_mile": True},
    )
    assert by_id(judge(o, {**base_facts(), **f}))["somers.17.10.B.4.h.discharge"].status == "fail"


def test_minor_site_needs_only_a_site_map(tmp_path):
    sub = _sub(tmp_path, extra="[site_map]\nscale_ft_per_inch = 200\n")
    f = sitemap_facts(sub, layers_near={"wetlands": _gdf([_east_box(1.0)])}, working_crs=W3071)
    for m, rid in (("somers", "somers.17.10.A.map"), ("deerfield", "deerfield.31.09.2.map")):
        found = by_id(judge(load_ordinance(m), {**base_facts(acres=0.5), **f}))
        assert found[rid].status == "pass"
        # The full-map items do not apply to a minor site.
        full = [
            x for x in found.values() if x.rule_id.startswith((f"{m}.17.10.B.4", f"{m}.31.09.1"))
        ]
        assert full
        assert all(x.status == "not_applicable" for x in full)


def test_every_sitemap_rule_reads_facts_that_exist(tmp_path):
    # A typo in a fact name would leave a rule needs_info for ever: every fact a rule of
    # the sitemap and plan parts reads must be produced by sitemap_facts / plan_facts.
    sub = _sub(tmp_path, extra="[plan]\nowner_name = 'x'\n")
    facts = {
        **base_facts(),
        **sitemap_facts(sub, layers_near={}, working_crs=W3071),
        **plan_facts(sub),
    }
    # Classification facts are set by the judge itself.
    known = set(facts) | {"classification.category", "classification.larger_site"}

    def names(cond):
        if cond is None:
            return set()
        out = {cond.fact} if cond.fact else set()
        for c in (cond.all or ()) + (cond.any or ()):
            out |= names(c)
        return out | names(cond.not_)

    folder = Path(georeview.ordinances.__file__).parent
    for m in shipped_municipalities():
        for part in ("sitemap", "plan"):
            path = folder / m / f"{part}.toml"
            rules = parse_model(RulePart, read_toml(path), path).rules
            assert len(rules) >= 6
            for r in rules:
                used = names(r.applies_when) | {r.fact, r.measure}
                missing = {u for u in used if u and u not in known}
                assert not missing, (r.id, missing)


def test_near_features_are_site_map_features():
    assert set(NEAR_FEATURES) <= set(SITE_MAP_FEATURES)


@pytest.mark.parametrize(
    ("shows", "plan", "status"),
    [
        ('["infiltration_areas"]', "", "pass"),
        ('["site_boundary"]', "[plan]\nuses_infiltration = false\n", "not_applicable"),
        ('["site_boundary"]', "[plan]\nuses_infiltration = true\n", "fail"),
        ('["site_boundary"]', "", "needs_info"),
    ],
)
def test_infiltration_areas_rule(tmp_path, shows, plan, status):
    sub = _sub(tmp_path, extra=f"[site_map]\nshows = {shows}\n{plan}")
    facts = {
        **base_facts(),
        **sitemap_facts(sub, layers_near={}, working_crs=W3071),
        **plan_facts(sub),
    }
    assert by_id(judge(load_ordinance("somers"), facts))["somers.17.10.B.4.i"].status == status
