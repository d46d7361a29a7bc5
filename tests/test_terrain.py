"""Tests of georeview.terrain: slope (against gdaldem), steep areas, contours, contour interval."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from _build import CENTRAL_SANDS, write_dem
from rasterio.features import geometry_mask
from shapely.geometry import box

from georeview.errors import CoverageError, CRSError, DataSourceError, InputError
from georeview.measure.contours import contour_interval, contours_ft, measure_contour_interval_ft
from georeview.measure.dem import read_dem_window
from georeview.measure.steep import steep_slopes
from georeview.terrain import slope_pct
from georeview.units import M_PER_FT, M_PER_US_FT

#: Somers 17.08(C)(3)(c) "slopes of 20% or more"; Deerfield 31.06(4) compares > 20 %.
STEEP_PCT = 20.0

# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def plainfield_dem() -> Path:
    """USGS Plainfield lakes 10 m DEM: float32 metres, custom WTM CRS (tests/data)."""
    return CENTRAL_SANDS / "plainfieldlakes_dem10m.tif"


@pytest.fixture(scope="module")
def feet_dem() -> Path:
    """The Plainfield DEM warped by GDAL to NAD83 / Wisconsin South (ftUS), EPSG:2289,
    10 m = 32.808 ftUS cells, stored as whole US survey feet in uint16 (tests/data/README.md).

    It stands in for the Muncy, PA DEM (uint16 feet in EPSG:2271), whose GPL-3.0 source
    repository keeps it out of this MIT repository.
    """
    return CENTRAL_SANDS / "plainfield_dem_ftus_2289.tif"


def _gdaldem() -> str:
    exe = shutil.which("gdaldem")
    if exe is None:
        pytest.skip("gdaldem (Debian gdal-bin) is not installed")
    return exe


def _gdaldem_slope(src: Path, tmp_path: Path) -> np.ndarray:
    """Run ``gdaldem slope -p`` (Horn, no -compute_edges) and return it with NaN for nodata."""
    out = tmp_path / f"{src.stem}_slope.tif"
    subprocess.run([_gdaldem(), "slope", "-p", "-q", str(src), str(out)], check=True)
    with rasterio.open(out) as ds:
        return ds.read(1, masked=True).astype(np.float64).filled(np.nan)


def _extent(path: Path):
    with rasterio.open(path) as ds:
        return box(*ds.bounds), ds.crs.to_wkt()


# --------------------------------------------------------------------------- slope vs gdaldem


@pytest.mark.parametrize("name", ["plainfield_dem", "feet_dem"])
def test_slope_matches_gdaldem_on_real_dems(name, request, tmp_path):
    """Interior cells agree with ``gdaldem slope -p`` (GDAL's Horn) within 1e-3 pct points.

    Plainfield: float32 metres in a metre CRS. Feet DEM: uint16 US survey feet in EPSG:2289
    (US survey feet), so gdaldem's default scale 1 is right and xres/yres are the CRS cell size.
    """
    dem = request.getfixturevalue(name)
    expected = _gdaldem_slope(dem, tmp_path)
    with rasterio.open(dem) as ds:
        z = ds.read(1)
        got = slope_pct(z, ds.transform.a, -ds.transform.e, ds.nodata)
    assert got.shape == expected.shape
    # same cells without a value (the border, nodata neighbourhoods)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    both = np.isfinite(expected)
    assert both.sum() > 0.9 * both.size
    assert np.max(np.abs(got[both] - expected[both])) <= 1e-3


def test_slope_plainfield_has_the_documented_share_of_steep_cells(plainfield_dem, tmp_path):
    """SOURCES.md (wi_central_sands): 0.7 % of the Plainfield cells have slope >= 20 %, the
    maximum is about 65 %; ``gdaldem slope -p`` on the shipped file gives 0.66 % and 63.8 %."""
    expected = _gdaldem_slope(plainfield_dem, tmp_path)
    with rasterio.open(plainfield_dem) as ds:
        got = slope_pct(ds.read(1), ds.transform.a, -ds.transform.e, ds.nodata)
    share = np.count_nonzero(got >= 20) / np.count_nonzero(np.isfinite(got))
    assert share == pytest.approx(np.count_nonzero(expected >= 20) / np.isfinite(expected).sum())
    assert 0.0065 <= share < 0.0075  # "0.7 %", rounded to one decimal
    assert np.nanmax(got) == pytest.approx(65.0, abs=2.0)


# --------------------------------------------------------------------------- synthetic planes


def _plane(gx: float, gy: float, xres: float, yres: float, shape=(9, 11)) -> np.ndarray:
    """Elevation z = gx * x + gy * y (x east, y north) sampled at cell centres."""
    rows, cols = np.indices(shape, dtype=np.float64)
    x = (cols + 0.5) * xres
    y = -(rows + 0.5) * yres
    return 250.0 + gx * x + gy * y


@pytest.mark.parametrize(
    ("gx", "gy", "xres", "yres"),
    [
        (0.20, 0.0, 1.0, 1.0),  # due east, 20 %
        (0.0, -0.35, 2.0, 2.0),  # due south
        (0.12, 0.16, 10.0, 10.0),  # NE, hypot = 0.20 exactly
        (-0.3, 0.4, 3.0, 7.5),  # non-square cells, hypot = 0.5
        (0.05, -0.02, 16.404166666666693, 16.404166666666693),  # 5 m in US survey feet
    ],
)
def test_slope_of_planes_is_exact(gx, gy, xres, yres):
    """Horn's 3x3 differences are exact on a plane: slope = 100 * hypot(gx, gy)."""
    z = _plane(gx, gy, xres, yres)
    got = slope_pct(z, xres, yres)
    inner = got[1:-1, 1:-1]
    expected = 100.0 * math.hypot(gx, gy)
    np.testing.assert_allclose(inner, expected, rtol=1e-6)
    # gdaldem without -compute_edges leaves the border as nodata
    assert np.isnan(got[0]).all()
    assert np.isnan(got[-1]).all()
    assert np.isnan(got[:, 0]).all()
    assert np.isnan(got[:, -1]).all()


def test_slope_non_square_cells_use_each_axis_resolution():
    """A slope along x only must not change when yres changes, and vice versa."""
    z = _plane(0.3, 0.0, 2.0, 5.0)
    a = slope_pct(z, 2.0, 5.0)[1:-1, 1:-1]
    np.testing.assert_allclose(a, 30.0, rtol=1e-6)
    z = _plane(0.0, 0.3, 2.0, 5.0)
    b = slope_pct(z, 2.0, 5.0)[1:-1, 1:-1]
    np.testing.assert_allclose(b, 30.0, rtol=1e-6)


def test_slope_nodata_neighbourhood_is_nan_like_gdaldem(tmp_path):
    z = _plane(0.1, 0.05, 1.0, 1.0, shape=(12, 12)).astype(np.float32)
    z[5, 6] = -9999.0
    z[9, 2] = -9999.0
    got = slope_pct(z, 1.0, 1.0, nodata=-9999.0)
    expect_nan = np.zeros(z.shape, bool)
    for r, c in [(5, 6), (9, 2)]:
        expect_nan[r - 1 : r + 2, c - 1 : c + 2] = True
    expect_nan[[0, -1], :] = True
    expect_nan[:, [0, -1]] = True
    np.testing.assert_array_equal(np.isnan(got), expect_nan)
    # float32 elevations near 250 m carry ~1.5e-5 m rounding: 1e-3 pct points, as gdaldem
    np.testing.assert_allclose(got[~expect_nan], 100 * math.hypot(0.1, 0.05), atol=1e-3)
    # and gdaldem agrees cell for cell
    dem = write_dem(tmp_path / "nd.tif", z, nodata=-9999.0)
    expected = _gdaldem_slope(dem, tmp_path)
    np.testing.assert_array_equal(np.isnan(expected), expect_nan)
    np.testing.assert_allclose(got[~expect_nan], expected[~expect_nan], atol=1e-3)


def test_infinite_heights_are_nodata_like_the_nodata_value():
    """A stray +-inf in a float DEM is no data: the slopes equal those with the nodata
    value there (NaN in each 3 x 3 neighbourhood, as the test above hand-works), not
    infinite slopes counted as steep; the integer path is untouched."""
    from georeview.measure.dem import as_float_block

    z = _plane(0.1, 0.05, 1.0, 1.0, shape=(12, 12)).astype(np.float32)
    with_nodata, with_inf = z.copy(), z.copy()
    with_nodata[5, 6] = with_nodata[9, 2] = -9999.0
    with_inf[5, 6], with_inf[9, 2] = np.inf, -np.inf
    expected = slope_pct(with_nodata, 1.0, 1.0, nodata=-9999.0)
    got = slope_pct(with_inf, 1.0, 1.0, nodata=-9999.0)
    np.testing.assert_array_equal(got, expected)
    assert not np.isinf(got).any()
    block = as_float_block(with_inf, None)
    assert np.isnan(block[5, 6])
    assert np.isnan(block[9, 2])
    assert np.isinf(with_inf[5, 6])  # the caller's array is left as it was
    ints = np.arange(12, dtype=np.int16).reshape(3, 4)
    assert np.array_equal(as_float_block(ints, None), ints.astype(np.float32))


def test_slope_rejects_bad_input():
    with pytest.raises(InputError):
        slope_pct(np.zeros((3, 3, 3)), 1.0, 1.0)
    with pytest.raises(InputError):
        slope_pct(np.zeros((5, 5)), 0.0, 1.0)


# --------------------------------------------------------------------------- units


def test_metre_elevations_in_a_us_feet_crs(tmp_path):
    """EPSG:2271 (US survey feet) grid of 10 ftUS cells, elevations in metres, true slope 25 %.

    Treating the metres as feet would give 25 % x 0.3048 / 1.0 ... = 7.6 %; the right answer
    needs xres converted with the US survey foot (1200/3937 m).
    """
    res_usft = 10.0
    cols = np.arange(30, dtype=np.float64)
    z_m = 0.25 * (cols + 0.5) * res_usft * M_PER_US_FT
    z = np.tile(z_m, (20, 1)).astype(np.float64)
    dem = write_dem(
        tmp_path / "m_in_ft.tif",
        z,
        res=(res_usft, res_usft),
        crs="EPSG:2271",
        origin=(2_220_000.0, 390_000.0),
    )
    area, crs = _extent(dem)
    res = steep_slopes(dem, "m", area, crs, polygons=False, threshold_pct=STEEP_PCT)
    assert res.max_slope_pct == pytest.approx(25.0, rel=1e-6)
    # interior cells: (20 - 2) x (30 - 2); each 10 x 10 US survey feet
    cell_sqft = (res_usft * M_PER_US_FT / M_PER_FT) ** 2
    assert res.cell_area_sqft == pytest.approx(cell_sqft, rel=1e-12)
    assert res.n_cells == 18 * 28
    assert res.steep_slope_area_sqft == pytest.approx(18 * 28 * cell_sqft, rel=1e-12)


def test_feet_elevations_in_a_metre_crs(tmp_path):
    """EPSG:3071 (metres) grid of 2 m cells, elevations in international feet, slope 15 %."""
    cols = np.arange(25, dtype=np.float64)
    z_ft = 0.15 * (cols + 0.5) * 2.0 / M_PER_FT
    z = np.tile(z_ft, (12, 1)).astype(np.float32)
    dem = write_dem(tmp_path / "ft_in_m.tif", z, res=(2.0, 2.0))
    area, crs = _extent(dem)
    res = steep_slopes(dem, "ft", area, crs, polygons=False, threshold_pct=STEEP_PCT)
    assert res.max_slope_pct == pytest.approx(15.0, rel=1e-5)
    assert res.steep_slope_area_sqft == 0.0
    # the same grid read as metres would be 15 / 0.3048 = 49.2 %: all steep
    wrong = steep_slopes(dem, "m", area, crs, polygons=False, threshold_pct=STEEP_PCT)
    assert wrong.max_slope_pct == pytest.approx(15.0 / M_PER_FT, rel=1e-5)


# --------------------------------------------------------------------------- steep slopes


def _ramp_dem(tmp_path: Path, step_m: float, xres: float) -> Path:
    """20 x 20 grid: flat for columns 0-9, then rising *step_m* per column."""
    cols = np.arange(20)
    z = np.tile(np.maximum(0, cols - 9) * step_m, (20, 1)).astype(np.float32) + 300.0
    return write_dem(tmp_path / f"ramp_{step_m}_{xres}.tif", z, res=(xres, xres))


def test_steep_area_hand_worked(tmp_path):
    """Hand-worked: 2 m cells, ramp 0.5 m per column from column 10 (25 %).

    Horn at column 9 sees (0, 0, 0.5): 0.5 x 4 / (8 x 2) = 12.5 %; columns 10-18 see 25 %.
    The disturbed area holds the centres of rows 5-14 x columns 5-14 (100 cells): 50 cells at
    25 % (columns 10-14), 10 at 12.5 % (column 9), 40 flat. Steep area 50 x 4 m^2 = 200 m^2
    = 2152.78 sq ft; mean (50 x 25 + 10 x 12.5) / 100 = 13.75 %.
    """
    dem = _ramp_dem(tmp_path, 0.5, 2.0)
    x0, y0 = 500_000.0, 300_000.0
    area = box(x0 + 5 * 2 + 0.3, y0 - 15 * 2 + 0.3, x0 + 15 * 2 - 0.3, y0 - 5 * 2 - 0.3)
    res = steep_slopes(dem, "m", area, "EPSG:3071", threshold_pct=STEEP_PCT)
    assert res.n_cells == 100
    assert res.steep_slope_area_sqft == pytest.approx(200.0 / M_PER_FT**2, rel=1e-12)
    assert res.steep_slope_area_gt_sqft == pytest.approx(200.0 / M_PER_FT**2, rel=1e-12)
    assert res.max_slope_pct == pytest.approx(25.0, rel=1e-6)
    assert res.mean_slope_pct == pytest.approx(13.75, rel=1e-6)
    # polygon of the steep patch: columns 10-14 x rows 5-14 = 10 m x 20 m, in EPSG:3071
    assert len(res.polygons) == 1
    assert res.polygons.crs.to_epsg() == 3071
    assert res.polygons.geometry.iloc[0].area == pytest.approx(200.0, rel=1e-9)
    assert res.polygons["area_sqft"].iloc[0] == pytest.approx(2152.7820, rel=1e-6)
    d = res.to_dict()
    assert d["steep_slope_area_sqft"] == res.steep_slope_area_sqft
    assert d["n_steep_polygons"] == 1


def test_steep_exactly_twenty_percent_splits_the_comparisons(tmp_path):
    """A 20 % ramp (0.5 m per 2.5 m column: 4 x 0.5 / (8 x 2.5) = 0.2 exactly in float32).

    Somers compares >= 20 % (counted), Deerfield > 20 % (not counted).
    """
    dem = _ramp_dem(tmp_path, 0.5, 2.5)
    x0, y0 = 500_000.0, 300_000.0
    # columns 12-16, rows 3-6: 20 cells, all at exactly 20 %
    area = box(x0 + 12 * 2.5 + 0.1, y0 - 7 * 2.5 + 0.1, x0 + 17 * 2.5 - 0.1, y0 - 3 * 2.5 - 0.1)
    res = steep_slopes(dem, "m", area, "EPSG:3071", polygons=False, threshold_pct=STEEP_PCT)
    assert res.n_cells == 20
    assert res.max_slope_pct == 20.0
    assert res.steep_slope_area_sqft == pytest.approx(20 * 6.25 / M_PER_FT**2, rel=1e-12)
    assert res.steep_slope_area_gt_sqft == 0.0


def test_steep_area_on_feet_dem_matches_gdaldem_cells(feet_dem, tmp_path):
    """Count of cells >= 20 % inside a polygon equals the count from gdaldem's own slope grid
    masked by rasterio's centre rule; strips of 7 rows give the same numbers as one strip."""
    expected = _gdaldem_slope(feet_dem, tmp_path)
    with rasterio.open(feet_dem) as ds:
        tf, shape = ds.transform, (ds.height, ds.width)
    # a polygon (EPSG:2289) over the steepest hills of the grid, given again in EPSG:4326
    poly = box(2_106_513.0, 808_511.0, 2_110_487.0, 812_507.0).buffer(300, quad_segs=4)
    inside = geometry_mask([poly], out_shape=shape, transform=tf, invert=True)
    ok = inside & np.isfinite(expected)
    n_ge = np.count_nonzero(expected[ok] >= 20)
    n_gt = np.count_nonzero(expected[ok] > 20)
    assert n_ge > 100  # gdaldem finds steep cells here: the comparison is not 0 == 0
    cell_sqft = (tf.a * M_PER_US_FT / M_PER_FT) ** 2
    poly_ll = gpd.GeoSeries([poly], crs="EPSG:2289").to_crs("EPSG:4326").iloc[0]
    # reprojected back into the DEM's CRS the polygon moves by far less than a cell
    poly_back = gpd.GeoSeries([poly_ll], crs="EPSG:4326").to_crs("EPSG:2289").iloc[0]
    assert poly_back.symmetric_difference(poly).area < 1.0
    res = steep_slopes(
        feet_dem, "us_ft", poly, "EPSG:2289", polygons=False, threshold_pct=STEEP_PCT
    )
    assert res.n_cells == np.count_nonzero(ok)
    assert res.steep_slope_area_sqft == pytest.approx(n_ge * cell_sqft, rel=1e-12)
    assert res.steep_slope_area_gt_sqft == pytest.approx(n_gt * cell_sqft, rel=1e-12)
    assert res.max_slope_pct == pytest.approx(np.max(expected[ok]), abs=1e-3)
    assert res.mean_slope_pct == pytest.approx(np.mean(expected[ok]), abs=1e-3)
    strips = steep_slopes(
        feet_dem, "us_ft", poly, "EPSG:2289", polygons=False, strip_rows=7, threshold_pct=STEEP_PCT
    )
    assert strips == res
    ll = steep_slopes(
        feet_dem, "us_ft", poly_ll, "EPSG:4326", polygons=False, threshold_pct=STEEP_PCT
    )
    assert ll.n_cells == pytest.approx(res.n_cells, rel=1e-3)


def test_steep_polygons_on_plainfield_custom_crs(plainfield_dem):
    """The Plainfield DEM's CRS has no EPSG code; polygons come back in EPSG:3071 with the
    same total area as the counted steep cells (the two CRSs are practically EPSG:3070)."""
    area_3071 = box(562_500.0, 413_500.0, 565_500.0, 416_500.0)  # EPSG:3071-ish metres
    res = steep_slopes(plainfield_dem, "m", area_3071, "EPSG:3071", threshold_pct=STEEP_PCT)
    assert res.polygons.crs.to_epsg() == 3071
    assert res.n_cells > 80_000
    total = res.polygons["area_sqft"].sum()
    assert total == pytest.approx(res.steep_slope_area_sqft, rel=1e-9)
    assert res.polygons.area.sum() * (1 / M_PER_FT**2) == pytest.approx(total, rel=1e-3)


# --------------------------------------------------------------------------- reading, errors


def test_window_read_is_local_and_exact(plainfield_dem, feet_dem):
    """The window holds exactly the raster's values at the same rows/columns."""
    with rasterio.open(plainfield_dem) as ds:
        full = ds.read(1)
    site = box(563_000, 414_000, 563_200, 414_150)  # in the DEM's custom WTM (≈ EPSG:3070)
    with rasterio.open(plainfield_dem) as ds:
        crs = ds.crs.to_wkt()
    win = read_dem_window(plainfield_dem, "m", site, crs, margin=3)
    rows, cols = win.elev.shape
    assert rows < 30
    assert cols < 30
    np.testing.assert_array_equal(
        win.elev, full[win.row_off : win.row_off + rows, win.col_off : win.col_off + cols]
    )
    # Feet DEM: a margin in feet is converted to US survey feet cells (32.808 ftUS = 10 m)
    with rasterio.open(feet_dem) as ds:
        fcrs = ds.crs
    site = box(2_108_000, 810_000, 2_108_100, 810_100)
    win = read_dem_window(feet_dem, "ft", site, fcrs.to_wkt(), margin=328.0, margin_units="ft")
    assert win.h_m_per_unit == pytest.approx(M_PER_US_FT, rel=1e-12)
    # 100 ftUS + 2 x 328 ft (≈ 656 ftUS) ≈ 756 ftUS ≈ 23 cells (+1 rounding each way)
    assert 22 <= win.elev.shape[0] <= 26
    assert win.elev.dtype == np.float32


def test_geographic_dem_is_refused():
    dem = CENTRAL_SANDS / "pleasant_dem40m_clip.tif"  # USGS Pleasant Lake, EPSG:4269
    with pytest.raises(CRSError, match="geographic") as info:
        steep_slopes(
            dem, "m", box(-89.56, 43.95, -89.55, 43.96), "EPSG:4269", threshold_pct=STEEP_PCT
        )
    assert str(dem) in str(info.value)


def test_area_outside_dem_raises_coverage_error(plainfield_dem):
    far = box(600_000, 300_000, 600_100, 300_100)
    with pytest.raises(CoverageError) as info:
        steep_slopes(plainfield_dem, "m", far, "EPSG:3071", threshold_pct=STEEP_PCT)
    assert str(plainfield_dem) in str(info.value)
    with pytest.raises(CoverageError):
        read_dem_window(plainfield_dem, "m", far, "EPSG:3071")


def test_all_nodata_raises_coverage_error(tmp_path):
    z = np.full((10, 10), -9999.0, np.float32)
    dem = write_dem(tmp_path / "empty.tif", z, nodata=-9999.0)
    area, crs = _extent(dem)
    with pytest.raises(CoverageError, match="no"):
        steep_slopes(dem, "m", area.buffer(-2), crs, threshold_pct=STEEP_PCT)
    with pytest.raises(CoverageError):
        read_dem_window(dem, "m", area.buffer(-2), crs)


def test_truncated_dem_raises_data_source_error(plainfield_dem, tmp_path):
    data = plainfield_dem.read_bytes()
    bad = tmp_path / "truncated.tif"
    bad.write_bytes(data[: len(data) // 3])
    with rasterio.open(plainfield_dem) as ds:
        crs = ds.crs.to_wkt()
        bounds = ds.bounds
    area = box(bounds.left + 100, bounds.bottom + 100, bounds.right - 100, bounds.top - 100)
    with pytest.raises(DataSourceError) as info:
        steep_slopes(bad, "m", area, crs, polygons=False, threshold_pct=STEEP_PCT)
    assert str(bad) in str(info.value)
    with pytest.raises(DataSourceError):
        steep_slopes(tmp_path / "missing.tif", "m", area, crs, threshold_pct=STEEP_PCT)


# --------------------------------------------------------------------------- contours


def test_contours_of_a_plane_fall_where_hand_worked(tmp_path):
    """Plane z = 100 m + 0.05 x (x metres east of the DEM's west edge): the contour at level
    L ft is the vertical line x = (L x 0.3048 - 100) / 0.05, every 2 ft."""
    shape = (30, 60)
    _rows, cols = np.indices(shape)
    x = cols + 0.5
    z = (100.0 + 0.05 * x).astype(np.float64)
    dem = write_dem(tmp_path / "plane.tif", z)
    x0, y0 = 500_000.0, 300_000.0
    area = box(x0, y0 - 30, x0 + 60, y0)
    gdf = contours_ft(dem, "m", area, "EPSG:3071", interval_ft=2.0, working_crs="EPSG:3071")
    zmin_ft, zmax_ft = (100 + 0.05 * 0.5) / M_PER_FT, (100 + 0.05 * 59.5) / M_PER_FT
    levels = np.arange(math.ceil(zmin_ft / 2) * 2, zmax_ft, 2.0)
    assert sorted(set(gdf["elev_ft"])) == pytest.approx(list(levels))
    for level, geom in zip(gdf["elev_ft"], gdf.geometry, strict=True):
        xs = np.asarray(geom.coords)[:, 0]
        expected_x = x0 + (level * M_PER_FT - 100.0) / 0.05
        np.testing.assert_allclose(xs, expected_x, atol=1e-6)
        assert geom.length == pytest.approx(29.0, abs=1e-6)  # centre of row 0 to row 29


def test_contour_pieces_meet_at_strip_edges(tmp_path):
    """A plane z = 100 m + 0.05 x over 300 rows is contoured in strips of rows: each level's
    pieces join end to end at the strip edges into one line from the centre of row 0 to
    that of row 299 (299 m, hand-worked), at x = (L x 0.3048 - 100) / 0.05."""
    import shapely

    _rows, cols = np.indices((300, 40))
    z = (100.0 + 0.05 * (cols + 0.5)).astype(np.float64)
    dem = write_dem(tmp_path / "tall.tif", z)
    x0, y0 = 500_000.0, 300_000.0
    area = box(x0, y0 - 300, x0 + 40, y0)
    gdf = contours_ft(dem, "m", area, "EPSG:3071", interval_ft=2.0, working_crs="EPSG:3071")
    assert gdf.groupby("elev_ft").size().min() > 1  # really cut into pieces
    for level, group in gdf.groupby("elev_ft"):
        merged = shapely.line_merge(shapely.union_all(group.geometry.values))
        assert merged.geom_type == "LineString"
        assert merged.length == pytest.approx(299.0, abs=1e-6)
        xs = np.asarray(merged.coords)[:, 0]
        np.testing.assert_allclose(xs, x0 + (level * M_PER_FT - 100.0) / 0.05, atol=1e-6)


def test_contours_in_feet_dem_and_clipping(feet_dem):
    """Elevations in feet: 10 ft contours are multiples of 10 and lie inside the area."""
    area = box(2_108_000, 810_000, 2_109_000, 811_000).buffer(200)
    gdf = contours_ft(
        feet_dem, "us_ft", area, "EPSG:2289", interval_ft=10.0, working_crs="EPSG:2289"
    )
    assert len(gdf) > 5
    lv = gdf["elev_ft"].to_numpy()
    np.testing.assert_allclose(lv / 10.0, np.round(lv / 10.0))
    assert gdf.union_all().difference(area.buffer(1e-6)).length == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(InputError):
        contours_ft(feet_dem, "us_ft", area, "EPSG:2289", interval_ft=0)


# --------------------------------------------------------------------------- contour interval


def _layer(levels) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"ELEV": levels}, geometry=[None] * len(levels), crs="EPSG:3071")


def test_contour_interval_regular_with_index_contours_and_gaps():
    # 2-ft contours, index contours every 10 ft repeated as separate features, one gap
    levels = [*np.arange(800, 852, 2.0), *np.arange(800, 852, 10.0)]
    levels.remove(820.0 + 4)
    assert measure_contour_interval_ft(_layer(levels), "ELEV") == pytest.approx(2.0)


def test_contour_interval_outvotes_a_stray_level():
    levels = [*np.arange(100, 140, 5.0), 101.3]
    assert measure_contour_interval_ft(_layer(levels), "ELEV") == pytest.approx(5.0)


def test_contour_interval_is_the_dominant_spacing_not_the_finest():
    # one line 1 ft off a 10-ft set: 1 ft puts every level on its lattice but only 12 of
    # its 101 levels have a line; 10 ft puts 11 of 12 on it with no gap
    got = contour_interval(_layer([*np.arange(700, 801, 10.0), 701.0]), "ELEV")
    assert got.interval_ft == pytest.approx(10.0, abs=1e-9)
    assert got.off_interval == (701.0,)
    assert got.regular is False
    assert got.levels == 12
    assert got.missing == 0


def test_contour_interval_counts_gaps_without_calling_them_irregular():
    got = contour_interval(_layer([100.0, 102.0, 106.0, 108.0]), "ELEV")  # 104 missing
    assert (got.interval_ft, got.missing, got.regular) == (2.0, 1, True)


def test_contour_interval_converts_units():
    levels = np.arange(200, 210, 0.5)  # 0.5 m contours
    got = measure_contour_interval_ft(_layer(levels), "ELEV", units="m")
    assert got == pytest.approx(0.5 / M_PER_FT, abs=1e-3)
    got = measure_contour_interval_ft(_layer(np.arange(0, 50, 5.0)), "ELEV", units="us_ft")
    assert got == pytest.approx(5.0 * M_PER_US_FT / M_PER_FT, abs=1e-3)


def test_contour_interval_errors():
    with pytest.raises(InputError, match="ELEV"):
        measure_contour_interval_ft(_layer([100.0, 100.0]), "ELEV")
    with pytest.raises(InputError, match="Z"):
        measure_contour_interval_ft(_layer([100.0, 102.0]), "Z")
    bad = gpd.GeoDataFrame({"ELEV": ["a", "b"]}, geometry=[None, None])
    with pytest.raises(InputError):
        measure_contour_interval_ft(bad, "ELEV")


def test_steep_polygons_keep_holes_and_separate_patches():
    """A 10 x 10-cell ring of steep cells (1 m cells) around a 4 x 4 hole, and a lone 2 x 3
    block beyond a gap: two polygons, the ring with one hole; areas 84 and 6 m^2
    (hand-counted cells), in square feet by the exact foot (0.3048 m)."""
    import pyproj
    from affine import Affine

    from georeview.measure.steep_polygons import steep_polygons

    mask = np.zeros((14, 20), dtype=np.uint8)
    mask[1:11, 1:11] = 1
    mask[4:8, 4:8] = 0
    mask[2:4, 14:17] = 1
    tf = Affine(1.0, 0.0, 500_000.0, 0.0, -1.0, 300_000.0)
    gdf = steep_polygons(mask, tf, pyproj.CRS(3071), 1.0, "EPSG:3071")
    gdf = gdf.sort_values("area_sqft", ascending=False).reset_index(drop=True)
    assert len(gdf) == 2
    assert len(gdf.geometry.iloc[0].interiors) == 1
    assert gdf.geometry.area.tolist() == pytest.approx([84.0, 6.0], rel=1e-12)
    assert gdf["area_sqft"].tolist() == pytest.approx([84 / 0.3048**2, 6 / 0.3048**2])


# --------------------------------------------------------------------------- shared counter, map


def test_count_steep_per_zone_hand_worked():
    """Hand-counted cells of a 3 x 4 grid in two zones (0 = none), threshold 20 %.

    Zone 1 holds 10, 20, 20, 30: 4 inside, 4 with a slope, 3 at >= 20, 1 above. Zone 2
    holds 25, NaN, 5, 19.99, 20.01, 40: 6 inside, 5 with a slope, 3 >= 20, 3 > 20. The two
    cells of zone 0 (20 and NaN) count nowhere. One zone (zone 2 alone, or no zones at all)
    goes through the single-zone branch and must count the same way.
    """
    from georeview.measure.steep import count_steep

    nan = np.nan
    slope = np.array(
        [[10, 20, 25, nan], [20, 30, 5, 20], [nan, 19.99, 20.01, 40]], dtype=np.float32
    )
    zones = np.array([[1, 1, 2, 2], [1, 1, 2, 0], [0, 2, 2, 2]], dtype=np.uint8)
    out = np.zeros(slope.shape, dtype=np.uint8)
    c = count_steep(slope, STEEP_PCT, zones, 2, steep_out=out)
    assert c.n_inside.tolist() == [4, 6]
    assert c.n_valid.tolist() == [4, 5]
    assert c.n_ge.tolist() == [3, 3]
    assert c.n_gt.tolist() == [1, 3]
    assert out.tolist() == [[0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1]]
    one = count_steep(slope, STEEP_PCT, (zones == 2).astype(np.uint8))
    assert [one.n_inside[0], one.n_valid[0], one.n_ge[0], one.n_gt[0]] == [6, 5, 3, 3]
    # no zones: every cell; 20, 25, 20, 30, 20, 20.01, 40 are >= 20, four of them > 20
    every = count_steep(slope, STEEP_PCT)
    assert [every.n_inside[0], every.n_valid[0], every.n_ge[0], every.n_gt[0]] == [12, 10, 7, 4]
    assert int(np.count_nonzero(every.valid)) == 10


def test_centre_zones_follow_cell_centres_and_the_last_area():
    """1 m cells from (0, 4) down to (4, 0): a box from x = 0 to 1.6 holds the centres of
    columns 0 and 1 (0.5, 1.5), not 2 (2.5); a second box over columns 1-3 of the top row
    takes column 1 there (the last area wins)."""
    from affine import Affine

    from georeview.measure.steep import centre_zones

    tf = Affine(1.0, 0.0, 0.0, 0.0, -1.0, 4.0)
    zones = centre_zones([box(0.0, 0.0, 1.6, 4.0), box(1.4, 3.4, 4.0, 4.0)], (4, 4), tf)
    assert zones.tolist() == [[1, 2, 2, 2], [1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]]


def test_coarsen_mask_majority_hand_worked():
    """2 x 2 blocks steep where 2 or more of their 4 cells are; a 3 x 3 mask leaves blocks
    past its edge whose missing cells count as flat."""
    from georeview.measure.steep_polygons import coarsen_mask

    mask = np.array(
        [[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0], [0, 1, 1, 1]], dtype=np.uint8
    )  # blocks: 3, 1 / 1, 3 steep cells
    assert coarsen_mask(mask, 2).tolist() == [[1, 0], [0, 1]]
    assert coarsen_mask(mask[:3, :3], 2).tolist() == [[1, 0], [0, 0]]  # 3 | 1 ; 0 | 0 of 4
    assert coarsen_mask(mask, 1) is mask


def test_steep_polygons_are_drawn_coarser_past_the_budget():
    """A 20 x 20 mask (1 m cells): a 6 x 6 block on even rows and columns and three lone
    cells. Within the budget the polygons are the cells (4 polygons, 39 m^2); past it
    (400 cells > 100, so k = ceil(sqrt(4)) = 2) the 2 x 2 blocks hold the block whole
    (3 x 3 blocks = 36 m^2) and a lone cell is 1 of 4: gone."""
    import gc

    import pyproj
    from affine import Affine

    from georeview.measure.steep_polygons import steep_polygons

    mask = np.zeros((20, 20), dtype=np.uint8)
    mask[2:8, 4:10] = 1
    mask[12, 3] = mask[15, 15] = mask[18, 9] = 1
    tf = Affine(1.0, 0.0, 500_000.0, 0.0, -1.0, 300_000.0)
    crs = pyproj.CRS(3071)
    exact = steep_polygons(mask, tf, crs, 1.0, "EPSG:3071")
    assert len(exact) == 4
    assert exact.geometry.area.sum() == pytest.approx(39.0, rel=1e-12)
    coarse = steep_polygons(mask, tf, crs, 1.0, "EPSG:3071", max_cells=100)
    assert len(coarse) == 1
    assert coarse.geometry.iloc[0].equals(box(500_004.0, 299_992.0, 500_010.0, 299_998.0))
    assert coarse["area_sqft"].iloc[0] == pytest.approx(36 / 0.3048**2, rel=1e-12)
    # the layer says how it was drawn: cell for cell (1) or on 2 x 2 blocks
    assert exact["drawn_block_cells"].tolist() == [1, 1, 1, 1]
    assert coarse["drawn_block_cells"].tolist() == [2]
    assert gc.isenabled()  # the collector paused for the conversion is back on


def test_steep_counts_do_not_depend_on_the_map_budget(tmp_path, monkeypatch):
    """The ramp of test_steep_area_hand_worked over the whole 20 x 20 grid (2 m cells):
    rows 1-18 x columns 10-18 are 25 % (162 cells, 648 m^2; the border has no slope).
    With a budget of 100 cells the map is drawn on 2 x 2 blocks (16 m^2): rows 0-19 x
    columns 10-19 hold 50 blocks, each with 2 or 4 steep cells of 4, but for the two
    corner blocks of columns 18-19 (rows 0-1 and 18-19: 1 of 4): 48 blocks, 768 m^2 in
    one polygon. The measured area stays 648 m^2."""
    from georeview.measure import steep_polygons as sp

    dem = _ramp_dem(tmp_path, 0.5, 2.0)
    with rasterio.open(dem) as ds:
        whole = box(*ds.bounds)
    exact = steep_slopes(dem, "m", whole, "EPSG:3071", threshold_pct=STEEP_PCT)
    monkeypatch.setattr(sp, "MAP_MAX_CELLS", 100)
    coarse = steep_slopes(dem, "m", whole, "EPSG:3071", threshold_pct=STEEP_PCT)
    assert exact.steep_slope_area_sqft == pytest.approx(648 / M_PER_FT**2, rel=1e-12)
    assert coarse == exact  # every number (polygons are not compared)
    assert exact.polygons.geometry.area.sum() == pytest.approx(648.0, rel=1e-12)
    assert len(coarse.polygons) == 1
    assert coarse.polygons.geometry.area.sum() == pytest.approx(768.0, rel=1e-12)
