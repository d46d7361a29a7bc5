"""Parcel screening (issue 6): geometry against hand-worked areas and jurisdiction.locate,
rules against rules.judge row by row, steep slopes against measure.steep.steep_slopes, and the
City of Cambridge, MA parcels against their real FEMA 100-year floodplain.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from _build import CAMBRIDGE, CAMBRIDGE_PARCELS, shipped_municipalities
from _build import cambridge_layers as write_cambridge_layers

from georeview.errors import ConfigError, OutputError
from georeview.load import load_layers
from georeview.measure.jurisdiction import locate
from georeview.measure.overlay import overlap_areas, subdivide
from georeview.pipeline.assume import parse_assume, parse_columns
from georeview.pipeline.context import build_context
from georeview.pipeline.jurisdictions import jurisdictions_for
from georeview.pipeline.run import run_screen
from georeview.pipeline.screen import screen_frame
from georeview.rules import judge, judge_frame, load_ordinance
from georeview.sanitise import csv_cell

#: Somers 17.08(C)(3)(c) "slopes of 20% or more".
STEEP_PCT = 20.0

SQFT_PER_SQM = 1 / 0.3048**2  # international foot, exact
X0, Y0 = 500_000.0, 300_000.0


# --------------------------------------------------------------------------- geometry core


def test_overlap_areas_hand_worked_and_no_double_count() -> None:
    parcels = np.array(
        [shapely.box(0, 0, 10, 10), shapely.box(10, 0, 20, 10), shapely.box(100, 100, 110, 110)]
    )
    # two wetlands overlapping on 5 <= x <= 15, 5 <= y <= 10: their union is box(5, 0, 15, 10)
    from georeview.measure.overlay import dissolve_pieces

    pieces = dissolve_pieces([shapely.box(5, 0, 15, 10), shapely.box(5, 5, 15, 10)])
    got = overlap_areas(parcels, pieces)
    np.testing.assert_allclose(got, [50.0, 50.0, 0.0], atol=1e-9)
    assert np.isnan(overlap_areas(parcels, None)).all()  # absent layer: unknown


def test_subdivide_keeps_area_and_bounds_vertices() -> None:
    ring = shapely.difference(
        shapely.Point(0, 0).buffer(1000, quad_segs=2000), shapely.Point(0, 0).buffer(400)
    )
    pieces = subdivide([ring], max_vertices=64)
    assert len(pieces) > 10
    assert shapely.get_num_coordinates(pieces).max() <= 64
    # the pieces tile the ring: their areas add up to it and their union is it
    assert shapely.area(pieces).sum() == pytest.approx(ring.area, rel=1e-12)
    assert shapely.union_all(pieces).symmetric_difference(ring).area < 1e-6


# --------------------------------------------------------------------------- options


def test_parse_assume() -> None:
    a = parse_assume("disturb_acres=1.5,kinds=subdivision,road")
    assert a.disturb == "sqft"
    assert a.amount == pytest.approx(1.5 * 43_560)  # acre = 43,560 sq ft exactly
    assert a.activity.kinds == ("subdivision", "road")
    assert a.activity.fill_cubic_yards == 0  # unstated: the assumed activity has none
    assert parse_assume("disturb=whole").disturb == "whole"
    assert (
        parse_assume("disturb_fraction=0.25,fill_cubic_yards=500").activity.fill_cubic_yards == 500
    )
    with pytest.raises(ConfigError, match="unknown key"):
        parse_assume("disturb=whole,colour=red")
    with pytest.raises(ConfigError):
        parse_assume("kinds=spaceport")
    with pytest.raises(ConfigError, match="one of"):
        parse_assume("disturb=whole,disturb_acres=2")
    assert parse_columns("id=ML", None)["id"] == "ML"
    assert parse_columns(None, "PIN")["id"] == "PIN"
    assert parse_columns(None)["propclass"] == "PROPCLASS"
    with pytest.raises(ConfigError, match="unknown role"):
        parse_columns("zip=ZIP")


# --------------------------------------------------------------------------- rules


def _random_facts(rng: np.random.Generator, n: int) -> pd.DataFrame:
    def pick(values: list, size: int = n) -> list:
        return [values[i] for i in rng.integers(0, len(values), size)]

    shares = np.array(pick([(1, 0, 0), (0, 1, 0), (0, 0, 1), (0.5, 0.5, 0), (0, 0.4, 0.6)]))
    kinds = pick(
        [(), ("agricultural",), ("subdivision",), ("state_agency",), ("building",),
         ("road", "subdivision"), ("maintenance",), ("minor_landscaping",), None]
    )  # fmt: skip
    num = lambda vals: np.array(pick(vals), dtype=float)  # noqa: E731
    disturbed = num([0, 3999, 4000, 4001, 43_559, 43_560, 250_000, math.nan])
    return pd.DataFrame(
        {
            "jurisdiction.status": np.array(
                ["village", "extraterritorial", "outside"], dtype=object
            )[shares.argmax(axis=1)],
            "jurisdiction.share.village": shares[:, 0],
            "jurisdiction.share.extraterritorial": shares[:, 1],
            "jurisdiction.share.outside": shares[:, 2],
            "disturbed_area_sqft": disturbed,
            "disturbed_area_acres": disturbed / 43_560,
            "disturbed_at_once_acres": num([0.5, 5, 6, math.nan]),
            "floodplain_in_disturbance_sqft": num([0, 12, math.nan]),
            "wetland_in_disturbance_sqft": num([0, 3, math.nan]),
            "steep_slope_area_sqft": num([0, 30, math.nan]),
            "steep_slope_area_gt_sqft": num([0, 30, math.nan]),
            "activity.kinds": pd.Series(kinds, dtype=object),
            "activity.fill_cubic_yards": num([0, 400, math.nan]),
            "activity.pipe_length_ft": num([0, 300, math.nan]),
            "activity.lots_created": num([0, 5, math.nan]),
            "activity.land_division_acres": num([1, 5, math.nan]),
            "activity.on_platted_lot": pd.array(pick([True, False, None]), dtype="boolean"),
            "activity.maintains_original_grade": pd.array(
                pick([True, False, None]), dtype="boolean"
            ),
            "activity.part_of_common_plan": pd.array(pick([True, False, None]), dtype="boolean"),
            "site_map.scale_ft_per_inch": num([50, 200, math.nan]),
            "site_map.contour_interval_ft": num([2, 10, math.nan]),
            "site_map.grid": pd.array(pick([True, False, None]), dtype="boolean"),
            "steep_slopes_addressed": pd.array(pick([True, False, None]), dtype="boolean"),
        }
    )


def _row_dict(row: pd.Series) -> dict:
    out = {}
    for k, v in row.items():
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            out[k] = None
        elif isinstance(v, (np.bool_, bool)):
            out[k] = bool(v)
        elif isinstance(v, np.floating):
            out[k] = float(v)
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("municipality", shipped_municipalities())
def test_judge_frame_equals_judge_row_by_row(municipality: str) -> None:
    """The vectorised evaluator must give exactly what rules.judge gives for each record."""
    ordinance = load_ordinance(municipality)
    facts = _random_facts(np.random.default_rng(6), 600)
    fj = judge_frame(ordinance, facts)
    tri = lambda v: None if v is pd.NA else bool(v)  # noqa: E731
    for i in range(len(facts)):
        ref = judge(ordinance, _row_dict(facts.iloc[i]))
        assert tri(fj.regulated.iloc[i]) == ref.regulated, i
        assert fj.category.iloc[i] == ref.category, i
        assert tri(fj.larger_site.iloc[i]) == ref.larger_site, i
        for f in ref.findings:
            assert fj.status[f.rule_id].iloc[i] == f.status, (i, f.rule_id)
            assert tri(fj.applies[f.rule_id].iloc[i]) == f.applies, (i, f.rule_id)


# --------------------------------------------------------------------------- synthetic layers


def _write(path: Path, data: dict, geoms: list, crs: str = "EPSG:3071") -> None:
    gpd.GeoDataFrame(data, geometry=geoms, crs=crs).to_file(path)


@pytest.fixture
def village_layers(tmp_path: Path) -> Path:
    """A 2 km village inside a town, a floodplain strip with a floodway, one wetland."""
    d = tmp_path / "layers"
    d.mkdir()
    village = shapely.box(X0, Y0, X0 + 2000, Y0 + 2000)
    _write(d / "boundary.gpkg", {"n": [0]}, [village])
    town = shapely.box(X0 - 6000, Y0 - 6000, X0 + 8000, Y0 + 8000).difference(village)
    _write(d / "neighbors.gpkg", {"CTV": ["T"], "MCD_NAME": ["Town of Test"]}, [town])
    _write(
        d / "floodplain.gpkg",
        {
            "FLD_ZONE": ["AE", "AE", "X"],
            "ZONE_SUBTY": ["", "FLOODWAY", ""],
            "SFHA_TF": ["T", "T", "F"],
        },
        [
            shapely.box(X0 + 1000, Y0 - 5000, X0 + 1100, Y0 + 5000),
            shapely.box(X0 + 1040, Y0 - 5000, X0 + 1060, Y0 + 5000),
            shapely.box(X0 + 1100, Y0 - 5000, X0 + 1500, Y0 + 5000),
        ],
    )  # fmt: skip
    _write(d / "wetlands.gpkg", {"n": [0]}, [shapely.box(X0 + 200, Y0 + 200, X0 + 260, Y0 + 260)])
    (d / "layers.toml").write_text(
        'municipality = "deerfield"\nvillage_name = "Testville"\nworking_crs = "EPSG:3071"\n'
        '[boundary]\npath = "boundary.gpkg"\n[neighbors]\npath = "neighbors.gpkg"\n'
        '[floodplain]\npath = "floodplain.gpkg"\n[wetlands]\npath = "wetlands.gpkg"\n'
    )
    return d


def _grid_parcels(n_side: int, size: float, x0: float, y0: float) -> list:
    xs, ys = np.meshgrid(np.arange(n_side) * size + x0, np.arange(n_side) * size + y0)
    return list(shapely.box(xs.ravel(), ys.ravel(), xs.ravel() + size, ys.ravel() + size))


def test_screen_frame_hand_worked_areas(village_layers: Path) -> None:
    ctx = build_context(load_layers(village_layers), parse_assume("disturb=whole"))
    parcels = gpd.GeoDataFrame(
        {"PARCELID": ["in", "flood", "wet", "straddle", "far"]},
        geometry=[
            shapely.box(X0 + 500, Y0 + 500, X0 + 600, Y0 + 600),  # 100 x 100 m, village only
            shapely.box(X0 + 1050, Y0 + 500, X0 + 1150, Y0 + 600),  # half in AE, 10 m floodway
            shapely.box(X0 + 230, Y0 + 230, X0 + 330, Y0 + 330),  # 30 x 30 m of wetland
            shapely.box(X0 - 50, Y0 + 500, X0 + 50, Y0 + 600),  # half village, half town (ETJ)
            shapely.box(X0 + 20_000, Y0, X0 + 20_100, Y0 + 100),  # beyond 1.5 miles: outside
        ],
        crs="EPSG:3071",
    )
    out = screen_frame(parcels, ctx).set_index("PARCELID")
    sq = 100 * 100 * SQFT_PER_SQM
    assert out.loc["in", "area_sqft"] == pytest.approx(sq, rel=1e-12)
    assert out.loc["in", "jurisdiction"] == "village"
    assert out.loc["flood", "floodplain_sqft"] == pytest.approx(50 * 100 * SQFT_PER_SQM, rel=1e-9)
    assert out.loc["flood", "floodway_sqft"] == pytest.approx(10 * 100 * SQFT_PER_SQM, rel=1e-9)
    assert out.loc["wet", "wetland_sqft"] == pytest.approx(30 * 30 * SQFT_PER_SQM, rel=1e-9)
    assert out.loc["straddle", "share_village"] == pytest.approx(0.5, abs=1e-12)
    assert out.loc["straddle", "share_extraterritorial"] == pytest.approx(0.5, abs=1e-12)
    assert out.loc["straddle", "straddles"] == "yes"
    assert out.loc["far", "jurisdiction"] == "outside"
    # Deerfield reaches the village (31.03(1)) and, in its ETJ, subdivisions only (31.03(2))
    assert out.loc["in", "regulated"] == "yes"
    assert out.loc["in", "category"] == "major"  # 2.47 acres >= 1 acre, 31.02(16)
    assert out.loc["flood", "extraordinary"] == "yes"  # disturbance in floodplain, 31.06(4)
    assert "§ 31.06(4)" in out.loc["flood", "classified_by"]
    assert "§ 31.06(1)(C)" in out.loc["in", "triggered_by"]
    assert out.loc["far", "regulated"] == "no"
    assert out.loc["in", "municipality"] == "Testville"
    assert out.loc["far", "municipality"] == ""


def test_no_neighbours_layer_leaves_the_etj_undetermined(village_layers: Path) -> None:
    # Without the neighbours, land within the village's 1.5 miles (Wis. Stat. 236.02(5))
    # may be unincorporated (extraterritorial) or another municipality (outside): a parcel
    # there is undetermined, not "outside, not regulated"; one beyond 1.5 miles is outside.
    toml = village_layers / "layers.toml"
    toml.write_text(toml.read_text().replace('[neighbors]\npath = "neighbors.gpkg"\n', ""))
    ctx = build_context(load_layers(village_layers), parse_assume("disturb=whole"))
    parcels = gpd.GeoDataFrame(
        {"PARCELID": ["in", "near", "far"]},
        geometry=[
            shapely.box(X0 + 500, Y0 + 500, X0 + 600, Y0 + 600),  # village only
            shapely.box(X0 - 600, Y0 + 500, X0 - 500, Y0 + 600),  # 500 m outside the limit
            shapely.box(X0 + 20_000, Y0, X0 + 20_100, Y0 + 100),  # beyond 1.5 miles
        ],
        crs="EPSG:3071",
    )
    out = screen_frame(parcels, ctx).set_index("PARCELID")
    assert out.loc["in", "jurisdiction"] == "village"
    assert out.loc["near", "jurisdiction"] == "undetermined"
    assert np.isnan(out.loc["near", "share_extraterritorial"])
    assert out.loc["near", "regulated"] != "no"
    assert out.loc["far", "jurisdiction"] == "outside"
    assert out.loc["far", "regulated"] == "no"
    # the reason column says what is missing where the answer is open, and only there
    assert out.loc["near", "regulated"] == "unknown"
    assert "no neighbours layer" in out.loc["near", "reason"]
    assert out.loc["far", "reason"] == ""


def test_reason_names_what_the_assumption_leaves_open(village_layers: Path) -> None:
    # Deerfield reaches its extraterritorial area for subdivisions only: an assumed
    # activity silent on a platted lot leaves an ETJ parcel open, and the reason says
    # so (and that the connection with a subdivision is the Village's to decide); the
    # same activity stated as a subdivision decides it, and the reason goes.
    parcels = gpd.GeoDataFrame(
        {"PARCELID": ["etj", "in"]},
        geometry=[
            shapely.box(X0 - 600, Y0 + 500, X0 - 500, Y0 + 600),  # in the town, within 1.5 mi
            shapely.box(X0 + 500, Y0 + 500, X0 + 600, Y0 + 600),
        ],
        crs="EPSG:3071",
    )
    layers = load_layers(village_layers)
    out = screen_frame(parcels, build_context(layers, parse_assume("disturb=whole")))
    out = out.set_index("PARCELID")
    assert out.loc["etj", "regulated"] == "unknown"
    assert "not stated in --assume: on_platted_lot" in out.loc["etj", "reason"]
    assert "for the Village to decide" in out.loc["etj", "reason"]
    assert out.loc["in", "regulated"] == "yes"
    assert not out.loc["in", "reason"].startswith(("not stated", "for the Village"))
    sub = build_context(layers, parse_assume("disturb=whole,kinds=subdivision"))
    decided = screen_frame(parcels, sub).set_index("PARCELID")
    assert decided.loc["etj", "regulated"] == "yes"
    assert not decided.loc["etj", "reason"].startswith("not stated")


def test_jurisdiction_shares_equal_locate(village_layers: Path) -> None:
    layers = load_layers(village_layers)
    ctx = build_context(layers)
    j = jurisdictions_for(layers)
    rng = np.random.default_rng(3)
    cx = rng.uniform(X0 - 3500, X0 + 5500, 300)
    cy = rng.uniform(Y0 - 3500, Y0 + 5500, 300)
    geoms = [
        shapely.Point(x, y).buffer(r, quad_segs=4)
        for x, y, r in zip(cx, cy, rng.uniform(20, 400, 300), strict=False)
    ]
    parcels = gpd.GeoDataFrame(
        {"PARCELID": [str(i) for i in range(300)]}, geometry=geoms, crs="EPSG:3071"
    )
    out = screen_frame(parcels, ctx)
    for i, g in enumerate(geoms):
        ref = locate(g, j)
        assert out["jurisdiction"].iloc[i] == ref.status
        for s in ("village", "extraterritorial", "outside"):
            assert out[f"share_{s}"].iloc[i] == pytest.approx(ref.share(s), abs=1e-9)
        assert (out["straddles"].iloc[i] == "yes") == ref.straddles


def test_wisconsin_schema_classes_map_to_exclusions(village_layers: Path) -> None:
    ctx = build_context(load_layers(village_layers), parse_assume("disturb=whole"))
    classes = [("2", ""), ("4", ""), ("2,4", ""), ("5M", ""), ("", "X2"), ("", "X1")]
    parcels = gpd.GeoDataFrame(
        {"PARCELID": list("abcdef"), "PROPCLASS": [c for c, _ in classes],
         "AUXCLASS": [a for _, a in classes]},
        geometry=_grid_parcels(1, 100, X0 + 500, Y0 + 500) * 6,
        crs="EPSG:3071",
    )  # fmt: skip
    out = screen_frame(parcels, ctx)
    assert list(out["kinds"]) == ["", "agricultural", "agricultural", "", "state_agency", ""]
    # Deerfield 31.03(3)(B) excludes agricultural land uses, 31.03(3)(A) state activities
    assert list(out["regulated"]) == ["yes", "no", "no", "yes", "no", "yes"]
    assert out["exempt_by"].iloc[1] == "§ 31.03(3)(B)"
    assert out["exempt_by"].iloc[4] == "§ 31.03(3)(A)"


def test_bad_geometries_become_rows(village_layers: Path) -> None:
    ctx = build_context(load_layers(village_layers))
    bowtie = shapely.Polygon(
        [(X0 + 500, Y0 + 500), (X0 + 600, Y0 + 600), (X0 + 600, Y0 + 500), (X0 + 500, Y0 + 600)]
    )
    parcels = gpd.GeoDataFrame(
        {"PARCELID": ["ok", "bowtie", "empty", "line"]},
        geometry=[
            shapely.box(X0 + 500, Y0 + 500, X0 + 600, Y0 + 600),
            bowtie,
            shapely.Polygon(),
            shapely.LineString([(X0, Y0), (X0 + 1, Y0 + 1)]),
        ],
        crs="EPSG:3071",
    )
    out = screen_frame(parcels, ctx)
    assert list(out["status"]) == ["ok", "repaired", "error", "error"]
    assert "Self-intersection" in out["error"].iloc[1]
    # the bow tie repaired is two triangles of 50 x 100 / 2 = 2,500 m2 each
    assert out["area_sqft"].iloc[1] == pytest.approx(5000 * SQFT_PER_SQM, rel=1e-9)
    assert out["error"].iloc[2] == "empty geometry"
    assert out["error"].iloc[3] == "a LineString is not a polygon"
    assert pd.isna(out["regulated"].iloc[2])


def test_geometry_checks_in_the_working_crs_skip_no_parcel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Parcels already in the working CRS are not reprojected nor checked again: the same
    geometries, statuses and reasons as through the reprojection and the second check;
    parcels in another CRS still are (the bow tie's reason unchanged, its area the same
    within 0.05 %: EPSG:3070 and EPSG:3071 are both Wisconsin Transverse Mercator, 1983
    and HARN, a few metres apart)."""
    import georeview.pipeline.parcel_geometry as pg

    bowtie = shapely.Polygon(
        [(X0 + 500, Y0 + 500), (X0 + 600, Y0 + 600), (X0 + 600, Y0 + 500), (X0 + 500, Y0 + 600)]
    )
    geoms = np.array(
        [
            shapely.box(X0 + 500, Y0 + 500, X0 + 600, Y0 + 600),
            bowtie,
            shapely.Polygon(),
            shapely.Polygon([(X0, Y0), (X0 + 1, Y0 + 1), (X0 + 2, Y0 + 2), (X0, Y0)]),
            None,
        ],
        dtype=object,
    )
    short = pg.prepare_geometries(geoms.copy(), "EPSG:3071", "EPSG:3071")
    with monkeypatch.context() as m:
        m.setattr(pg, "_same_crs", lambda src, working: False)
        full = pg.prepare_geometries(geoms.copy(), "EPSG:3071", "EPSG:3071")
    assert list(short[1]) == list(full[1]) == ["ok", "repaired", "error", "error", "error"]
    assert list(short[2]) == list(full[2])
    assert list(shapely.to_wkb(short[0])) == list(shapely.to_wkb(full[0]))
    moved = pg.prepare_geometries(geoms.copy(), "EPSG:3071", "EPSG:3070")
    assert list(moved[1]) == list(short[1])
    assert list(moved[2]) == list(short[2])
    assert shapely.area(moved[0][1]) == pytest.approx(5000.0, rel=5e-4)


def test_steep_slopes_equal_terrain_per_parcel(tmp_path: Path, village_layers: Path) -> None:
    """Zonal steep-slope counts must equal measure.steep.steep_slopes run parcel by parcel."""
    import rasterio
    from affine import Affine

    from georeview.measure.steep import steep_slopes

    # a DEM of two planes: 10 % slope west of x = 1000 m, 30 % east of it, 10 m cells
    cols, rows, res = 200, 200, 10.0
    x = (np.arange(cols) + 0.5) * res
    z = np.where(x < 1000, 0.10 * x, 100 + 0.30 * (x - 1000))
    dem = np.tile(z, (rows, 1)).astype("float32")
    path = village_layers / "dem.tif"
    with rasterio.open(
        path, "w", driver="GTiff", width=cols, height=rows, count=1, dtype="float32",
        crs="EPSG:3071", transform=Affine(res, 0, X0, 0, -res, Y0 + rows * res), nodata=-9999,
    ) as dst:  # fmt: skip
        dst.write(dem, 1)
    toml = village_layers / "layers.toml"
    toml.write_text(toml.read_text() + '[dem]\npath = "dem.tif"\nvertical_units = "m"\n')
    ctx = build_context(load_layers(village_layers))
    geoms = [
        shapely.box(X0 + 300, Y0 + 300, X0 + 500, Y0 + 420),
        shapely.box(X0 + 900, Y0 + 900, X0 + 1133, Y0 + 1077),  # straddles the break
        shapely.Point(X0 + 1500, Y0 + 1500).buffer(120),
        shapely.box(X0 + 5, Y0 + 5, X0 + 95, Y0 + 95),  # at the DEM edge
        shapely.box(X0 + 3000, Y0, X0 + 3100, Y0 + 100),  # off the DEM: unknown
    ]
    out = screen_frame(
        gpd.GeoDataFrame({"PARCELID": list("abcde")}, geometry=geoms, crs="EPSG:3071"), ctx
    )
    for i, g in enumerate(geoms[:4]):
        ref = steep_slopes(
            path,
            "m",
            g,
            "EPSG:3071",
            working_crs="EPSG:3071",
            polygons=False,
            threshold_pct=STEEP_PCT,
        )
        assert out["steep_slope_sqft"].iloc[i] == pytest.approx(ref.steep_slope_area_sqft, abs=1e-6)
        assert out["steep_slope_gt_sqft"].iloc[i] == pytest.approx(
            ref.steep_slope_area_gt_sqft, abs=1e-6
        )
    assert out["steep_slope_sqft"].iloc[0] == 0.0
    assert out["steep_slope_sqft"].iloc[2] > 0
    assert math.isnan(out["steep_slope_sqft"].iloc[4])


def test_output_formats_agree_and_refuse_overwrite(tmp_path: Path, village_layers: Path) -> None:
    parcels = tmp_path / "parcels.gpkg"
    geoms = _grid_parcels(12, 150, X0 - 400, Y0 - 400)
    _write(parcels, {"PARCELID": [f"p{i}" for i in range(len(geoms))]}, geoms)
    frames = {}
    for suffix in (".csv", ".gpkg", ".parquet"):
        out = tmp_path / f"screened{suffix}"
        s = run_screen(parcels, village_layers, out, partition_size=50)
        assert s.partitions == 3
        assert not Path(str(out) + ".parts").exists()  # the work folder goes once complete
        frames[suffix] = (
            pd.read_csv(out, keep_default_na=False, na_values=[""])
            if suffix == ".csv"
            else (gpd.read_file(out) if suffix == ".gpkg" else gpd.read_parquet(out))
        )
        with pytest.raises(OutputError, match="overwrite"):
            run_screen(parcels, village_layers, out)
    base = frames[".csv"]
    for suffix in (".gpkg", ".parquet"):
        other = frames[suffix]
        assert list(other["row"]) == list(range(len(geoms)))
        if suffix == ".gpkg":  # tri-state columns are nullable booleans in a GeoPackage
            # (read back as floats 1.0 / 0.0 / NaN when the column holds nulls)
            def yes_no(v: object) -> str:
                return "unknown" if pd.isna(v) else ("yes" if bool(v) else "no")

            other = other.assign(regulated=other["regulated"].map(yes_no))
        for col in ("parcel_id", "jurisdiction", "regulated", "rules"):
            assert list(other[col].fillna("")) == list(base[col].fillna("")), (suffix, col)
        np.testing.assert_allclose(other["area_sqft"], base["area_sqft"], rtol=1e-12)


def test_threads_give_the_serial_output(
    tmp_path: Path, village_layers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Partitions on several threads: the same rows in the same order, byte for byte in CSV
    and the same Parquet / GeoPackage data as one after another, error rows included."""
    import pyarrow.parquet as pq

    import georeview.pipeline.screen as screen_stage

    geoms = _grid_parcels(12, 150, X0 - 400, Y0 - 400)  # 144 parcels across the village line
    bowtie = shapely.Polygon(
        [(X0 + 500, Y0 + 500), (X0 + 600, Y0 + 600), (X0 + 600, Y0 + 500), (X0 + 500, Y0 + 600)]
    )
    geoms[7], geoms[40], geoms[101] = bowtie, shapely.Polygon(), geoms[101]
    ids = [f"p{i}" for i in range(len(geoms))]
    ids[101] = "boom"  # screening it raises: it alone must become an error row
    parcels = tmp_path / "parcels.gpkg"
    _write(parcels, {"PARCELID": ids}, geoms)
    real = screen_stage.parcel_kinds
    seen: set[str] = set()

    def kinds(frame, columns, assumed):
        seen.add(threading.current_thread().name)
        if (frame["PARCELID"] == "boom").any():
            raise RuntimeError("boom")
        return real(frame, columns, assumed)

    monkeypatch.setattr(screen_stage, "parcel_kinds", kinds)
    for suffix in (".csv", ".parquet", ".gpkg"):
        outs = {}
        for threads in (1, 3):
            seen.clear()
            out = tmp_path / f"t{threads}{suffix}"
            s = run_screen(parcels, village_layers, out, partition_size=20, threads=threads)
            assert s.partitions == 8
            assert (threads > 1) == any(n.startswith("georeview-screen") for n in seen)
            outs[threads] = out
        if suffix == ".csv":
            assert outs[3].read_bytes() == outs[1].read_bytes()
            table = pd.read_csv(outs[3], keep_default_na=False, na_values=[""])
            assert list(table["row"]) == list(range(len(geoms)))
            by_id = table.set_index("parcel_id")
            assert by_id.loc["boom", "status"] == "error"
            assert by_id.loc["boom", "error"] == "could not be screened (RuntimeError: boom)"
            assert by_id.loc["p7", "status"] == "repaired"
            assert by_id.loc["p40", "error"] == "empty geometry"
            assert (table["status"] == "ok").sum() == len(geoms) - 3
        elif suffix == ".parquet":
            assert pq.read_table(outs[3]).equals(pq.read_table(outs[1]))
        else:
            a, b = gpd.read_file(outs[1]), gpd.read_file(outs[3])
            assert a.drop(columns="geometry").equals(b.drop(columns="geometry"))
            # (the failing parcel's geometry is dropped: None on both sides)
            wkb = [list(shapely.to_wkb(f.geometry.values)) for f in (a, b)]
            assert wkb[0] == wkb[1]


@pytest.mark.parametrize(
    "suffix", [".gpkg", ".shp", ".zip", ".fgb", ".geojson", ".parquet", ".csv"]
)
def test_inspected_source_reads_what_read_vector_reads(tmp_path: Path, suffix: str) -> None:
    """A source inspected once reads each slice as read_vector reads it, in every format:
    the same rows, columns, dtypes and coordinates, the last slice short."""
    import zipfile

    from georeview.load.vector import read_vector
    from georeview.pipeline.partitions import Source

    geoms = _grid_parcels(5, 100, X0, Y0)  # 25 parcels
    frame = gpd.GeoDataFrame(
        {"PARCELID": [f"p{i:03d}" for i in range(25)], "ACRES": np.arange(25) / 4},
        geometry=geoms,
        crs="EPSG:3071",
    )
    path, crs = tmp_path / f"parcels{suffix}", None
    if suffix == ".parquet":
        frame.to_parquet(path)
    elif suffix == ".csv":
        frame.assign(WKT=frame.geometry.to_wkt()).drop(columns="geometry").to_csv(path, index=False)
        crs = "EPSG:3071"
    elif suffix == ".zip":
        frame.to_file(tmp_path / "parcels.shp")
        with zipfile.ZipFile(path, "w") as z:
            for part in tmp_path.glob("parcels.*"):
                if part.suffix != ".zip":
                    z.write(part, part.name)
    else:
        frame.to_file(path)
    source, info = Source(str(path), None, crs).inspected()
    assert info.features == 25
    assert source.read_crs is not None
    for start, count in ((0, 10), (10, 10), (20, 10)):
        got = source.read(start, count)
        want = read_vector(path, label="parcels", crs=crs, skip=start, count=count)
        assert len(got) == min(count, 25 - start)
        assert list(got.columns) == list(want.columns)
        assert list(got.dtypes) == list(want.dtypes)
        assert got.drop(columns=got.geometry.name).equals(want.drop(columns=want.geometry.name))
        assert list(shapely.to_wkb(got.geometry.values)) == list(
            shapely.to_wkb(want.geometry.values)
        )
        assert got.crs == want.crs


def test_threads_option_refuses_zero(tmp_path: Path, village_layers: Path) -> None:
    parcels = tmp_path / "parcels.gpkg"
    _write(parcels, {"PARCELID": ["a"]}, _grid_parcels(1, 100, X0 + 500, Y0 + 500))
    with pytest.raises(ConfigError, match="at least 1") as err:
        run_screen(parcels, village_layers, tmp_path / "o.csv", threads=0)
    assert err.value.field == "--threads"
    assert not (tmp_path / "o.csv.parts").exists()  # refused before any work


# --------------------------------------------------------------------------- Cambridge, MA


@pytest.fixture(scope="module")
def cambridge_layers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cambridge_layers(tmp_path_factory.mktemp("cambridge"))


@pytest.fixture(scope="module")
def cambridge_csv(cambridge_layers: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cam_out") / "screened.csv"
    run_screen(
        CAMBRIDGE_PARCELS,
        cambridge_layers,
        out,
        columns=parse_columns(None, "ML"),
        partition_size=3000,
    )
    return out


def test_cambridge_real_parcels(cambridge_csv: Path) -> None:
    df = pd.read_csv(cambridge_csv, keep_default_na=False, na_values=[""])
    src = gpd.read_file(CAMBRIDGE_PARCELS, ignore_geometry=True)
    # every input row, in input order
    assert len(df) == 13_116
    assert list(df["row"]) == list(range(13_116))
    # CSV text cells that a spreadsheet would run as formulas get a leading "'" (the
    # Cambridge file has ids such as "---")
    assert list(df["parcel_id"].fillna("")) == [csv_cell(v) for v in src["ML"].fillna("")]
    # 37 parcels are invalid as published (checked in their own CRS) and are repaired;
    # one has an empty geometry and becomes an error row
    assert (df["status"] == "repaired").sum() == 37
    assert (df["status"] == "error").sum() == 1
    assert df.loc[df["status"] == "error", "error"].item() == "empty geometry"
    # The issue counts about 176 parcels touching the 100-year floodplain. Here a parcel
    # touches it when the overlap has positive area (parcels meeting it only along an edge
    # or at a point do not count): 176 parcels, the same count as shapely.intersects gives.
    assert (df["floodplain_sqft"] > 0).sum() == 176
    assert (df["floodplain_sqft"] > 0).sum() == (df["floodplain_sqft"] > 1.0).sum()
    assert (df["floodway_sqft"] > 0).sum() <= 176
    assert (df["jurisdiction"] == "village").sum() > 13_000


def test_cambridge_floodplain_count_independent(cambridge_csv: Path) -> None:
    """The 176 again, the plain way: intersects against the dissolved SFHA in EPSG:26986."""
    p = gpd.read_file(CAMBRIDGE_PARCELS)
    g = shapely.make_valid(p.geometry.values)
    g = gpd.GeoSeries(g, crs=p.crs).to_crs(26986).values
    f = gpd.read_file(CAMBRIDGE / "FEMA_FloodPlains100Year.geojson").to_crs(26986)
    sf = shapely.union_all(shapely.make_valid(f[f["sfha_tf"] == "T"].geometry.values))
    touching = shapely.intersects(g, sf) & ~shapely.is_empty(g)
    df = pd.read_csv(cambridge_csv, usecols=["floodplain_sqft"])
    assert int(touching.sum()) == 176
    assert np.array_equal(touching, (df["floodplain_sqft"] > 0).to_numpy())


class _StopError(Exception):
    pass


@pytest.mark.parametrize(("threads", "suffix"), [(1, ".csv"), (2, ".csv"), (2, ".parquet")])
def test_cambridge_resume_after_interruption(
    cambridge_layers: Path,
    cambridge_csv: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    threads: int,
    suffix: str,
) -> None:
    """Stopped after two partitions, then run again: only the unfinished partitions run,
    and the file is byte for byte the one an uninterrupted run writes."""
    out = tmp_path / f"resumed{suffix}"
    kw = {"columns": parse_columns(None, "ML"), "partition_size": 3000, "threads": threads}
    if suffix == ".csv":
        expected = cambridge_csv.read_bytes()
    else:
        run_screen(CAMBRIDGE_PARCELS, cambridge_layers, tmp_path / "whole.parquet", **kw)
        expected = (tmp_path / "whole.parquet").read_bytes()
    seen: list[int] = []

    def stop_after_two(done: int, total: int) -> None:
        seen.append(done)
        if done == 2:
            raise _StopError

    with pytest.raises(_StopError):
        run_screen(
            CAMBRIDGE_PARCELS,
            cambridge_layers,
            out,
            on_partition=stop_after_two,
            **kw,
        )
    assert not out.exists()  # no partial output under the final name
    assert not list(tmp_path.glob(".resumed.partial-*"))  # nor under the temporary one
    parts = sorted((tmp_path / f"resumed{suffix}.parts").glob("part-*.arrow"))
    # on threads, the partition still running when the run stopped is finished and kept
    assert len(parts) == 2 if threads == 1 else 2 <= len(parts) <= 2 + threads - 1
    assert not [t for t in threading.enumerate() if t.name.startswith("georeview-screen")]
    import georeview.pipeline.run as screen_mod

    screened: list[int] = []
    real = screen_mod.screen_slice

    def counting(source, start, count, ctx):
        screened.append(start)
        return real(source, start, count, ctx)

    monkeypatch.setattr(screen_mod, "screen_slice", counting)
    s = run_screen(CAMBRIDGE_PARCELS, cambridge_layers, out, **kw)
    assert s.resumed == len(parts)
    assert s.partitions == 5
    # only the unfinished partitions ran
    kept = {int(p.stem.split("-")[1]) for p in parts}
    assert sorted(screened) == [3000 * i for i in range(5) if i not in kept]
    assert out.read_bytes() == expected  # same file as without interruption
