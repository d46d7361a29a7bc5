"""Contours traced in column tiles (issue 27): pieces meet at the seams; the file is the frame."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import shapely
from _build import write_dem
from shapely.geometry import box

from georeview.errors import CoverageError
from georeview.measure import contours
from georeview.units import M_PER_FT

X0, Y0 = 500_000.0, 300_000.0


def _wide_plane(tmp_path, rows: int = 20, cols: int = 1300):
    """Plane z = 100 m + 0.01 y (y metres north of the south edge), wider than two tiles.

    Level L ft lies on the horizontal line y = (L x 0.3048 - 100) / 0.01; each line runs
    from the centre of column 0 to that of the last column: ``cols - 1`` metres.
    """
    r, _c = np.indices((rows, cols))
    y = rows - (r + 0.5)
    z = (100.0 + 0.01 * y).astype(np.float64)
    return write_dem(tmp_path / "wide.tif", z), box(X0, Y0 - rows, X0 + cols, Y0)


def test_pieces_from_column_tiles_meet_at_the_seams(tmp_path):
    """More columns than CONTOUR_TILE_COLS: each level is cut at the tile edges, and its
    pieces join end to end into one line of the hand-worked length and height."""
    rows, cols = 20, 1300
    assert cols > 2 * contours.CONTOUR_TILE_COLS
    dem, area = _wide_plane(tmp_path, rows, cols)
    gdf = contours.contours_ft(
        dem, "m", area, "EPSG:3071", interval_ft=0.1, working_crs="EPSG:3071"
    )
    assert len(gdf) > 0
    assert gdf.groupby("elev_ft").size().min() > 1  # really cut into pieces
    for level, group in gdf.groupby("elev_ft"):
        merged = shapely.line_merge(shapely.union_all(group.geometry.values))
        assert merged.geom_type == "LineString"
        assert merged.length == pytest.approx(cols - 1, abs=1e-6)  # metres
        ys = np.asarray(merged.coords)[:, 1]
        expected_y = Y0 - rows + (level * M_PER_FT - 100.0) / 0.01
        np.testing.assert_allclose(ys, expected_y, atol=1e-6)  # metres


def test_write_contours_writes_the_frames_lines(tmp_path):
    """The GeoPackage holds contours_ft's lines, levels and order, and its count is returned."""
    dem, area = _wide_plane(tmp_path)
    frame = contours.contours_ft(
        dem, "m", area, "EPSG:3071", interval_ft=0.1, working_crs="EPSG:3071"
    )
    out = tmp_path / "contours.gpkg"
    n = contours.write_contours(dem, "m", area, "EPSG:3071", out, interval_ft=0.1)
    back = gpd.read_file(out, layer="contours")
    assert n == len(frame) == len(back)
    np.testing.assert_array_equal(back["elev_ft"].to_numpy(), frame["elev_ft"].to_numpy())
    assert shapely.equals_exact(back.geometry.values, frame.geometry.values, tolerance=0).all()
    assert back.crs.to_epsg() == 3071
    assert not list(tmp_path.glob(".*.part*"))


def test_write_contours_without_data_keeps_the_old_file(tmp_path):
    """An area the DEM has no data around raises CoverageError and leaves the file as it was."""
    dem, _area = _wide_plane(tmp_path)
    out = tmp_path / "contours.gpkg"
    out.write_bytes(b"old")
    far = box(X0 - 5000, Y0 - 5000, X0 - 4000, Y0 - 4000)
    with pytest.raises(CoverageError):
        contours.write_contours(dem, "m", far, "EPSG:3071", out, interval_ft=0.1)
    assert out.read_bytes() == b"old"
    assert not list(tmp_path.glob(".*.part*"))
