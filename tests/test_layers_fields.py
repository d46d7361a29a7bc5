"""layers.toml on layers as downloaded: attribute filters, field mappings, depth grids."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from _build import DANE, write_dem

from georeview.config import FloodplainSpec, HydrographySpec
from georeview.errors import ConfigError
from georeview.load import load_layers
from georeview.load.depth_grid import read_depth_grid
from georeview.load.schema import map_fields, nhd_ftype_codes
from georeview.pipeline.jurisdictions import jurisdictions_for

MUNIS = DANE / "deerfield_area_munis.gpkg"


def _toml(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    # the layer files are the shipped test data, outside the folder: trusted
    (folder / "layers.toml").write_text('municipality = "deerfield"\ntrusted = true\n' + body)
    return folder


def test_statewide_boundary_without_filter_is_refused(tmp_path: Path) -> None:
    folder = _toml(tmp_path / "l", f'[boundary]\npath = "{MUNIS}"\nname_field = "MCD_NAME"\n')
    with pytest.raises(ConfigError, match="holds 15 municipalities") as exc:
        jurisdictions_for(load_layers(folder))
    assert exc.value.field == "boundary.where"


def test_boundary_and_neighbours_from_one_file_with_filters(tmp_path: Path) -> None:
    """The LTSB file as downloaded, twice: the village by where, the rest by NOT where."""
    where = "MCD_NAME = 'Deerfield' AND CTV = 'V'"
    folder = _toml(
        tmp_path / "l",
        f'[boundary]\npath = "{MUNIS}"\nwhere = "{where}"\n'
        f'[neighbors]\npath = "{MUNIS}"\nwhere = "NOT ({where})"\n',
    )
    layers = load_layers(folder)
    assert len(layers.read("boundary")) == 1
    assert len(layers.read("neighbors")) == 14
    j = jurisdictions_for(layers)
    # the village is the filtered feature, repaired as every layer is
    g = gpd.read_file(MUNIS).to_crs(3071)
    v = g[(g.MCD_NAME == "Deerfield") & (g.CTV == "V")].geometry.make_valid().union_all()
    assert shapely.symmetric_difference(j.village.geometry, v).area == pytest.approx(0, abs=1e-6)


def test_text_ftype_becomes_codes() -> None:
    # NHD data dictionary, FType domain: 460 StreamRiver, 336 CanalDitch, 466 SwampMarsh
    s = pd.Series(["StreamRiver", "CanalDitch", "460", 336, None, "Nonsense", "SwampMarsh"])
    assert list(nhd_ftype_codes(s)) == [460, 336, 460, 336, -1, -1, 466]
    gdf = gpd.GeoDataFrame({"FTYPE": ["StreamRiver"]}, geometry=[shapely.Point(0, 0)])
    out = map_fields(gdf, "hydrography", HydrographySpec(path="h.gpkg"), "layers.toml")
    assert list(out["FType"]) == [460]


def test_nfhl_fields_any_case_and_missing_field_named() -> None:
    gdf = gpd.GeoDataFrame(
        {"fld_zone": ["AE"], "zone_subty": ["FLOODWAY"], "sfha_tf": ["T"]},
        geometry=[shapely.box(0, 0, 1, 1)],
    )
    spec = FloodplainSpec(path="fp.gpkg")
    out = map_fields(gdf, "floodplain", spec, "layers.toml")
    assert {"FLD_ZONE", "ZONE_SUBTY", "SFHA_TF"} <= set(out.columns)
    named = FloodplainSpec(path="fp.gpkg", zone_field="ZONE")
    with pytest.raises(ConfigError, match=r"field 'ZONE' is not in fp\.gpkg; its columns are") as e:
        map_fields(gdf, "floodplain", named, "layers.toml")
    assert e.value.field == "floodplain.zone_field"
    bare = gpd.GeoDataFrame({"name": ["x"]}, geometry=[shapely.box(0, 0, 1, 1)])
    with pytest.raises(ConfigError, match=r"neither 'FLD_ZONE' nor 'SFHA_TF'.*columns are name"):
        map_fields(bare, "floodplain", spec, "layers.toml")


def test_depth_grid_is_a_floodplain(tmp_path: Path) -> None:
    """Depth > 0 cells: 7 wet cells of 10 m x 10 m = 700 m² (counted by hand below)."""
    z = np.zeros((6, 8), dtype=np.float32)
    z[1, 1:4] = [0.5, 1.2, 0.01]  # 3 cells
    z[3:5, 5:7] = 2.0  # 4 cells
    z[5, 0] = -9999  # nodata, not wet
    path = write_dem(tmp_path / "depth.tif", z, res=10.0, nodata=-9999)
    from pyproj import CRS

    fp = read_depth_grid(path, CRS.from_epsg(3071))
    assert fp.geometry.area.sum() == pytest.approx(700.0, rel=1e-12)
    assert set(fp["SFHA_TF"]) == {"T"}
    folder = _toml(
        tmp_path / "l",
        f'[boundary]\npath = "{MUNIS}"\nwhere = "MCD_NAME = \'Deerfield\' AND CTV = \'V\'"\n'
        f'[floodplain]\npath = "{path}"\n',
    )
    layers = load_layers(folder)
    assert layers.read("floodplain").geometry.area.sum() == pytest.approx(700.0, rel=1e-12)
