"""What every recipe shares: the working CRS, the notes, the grid and the writers.

The writers pin what would otherwise change from run to run (GeoPackage timestamps are
pinned by ``make_layers.main`` through GDAL's ``OGR_CURRENT_DATE``; the DEM's profile
and tags are fixed here), so a re-run reproduces every file byte for byte.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import rasterio
import rasterio.features
import shapely
from rasterio.transform import from_origin
from shapely.geometry import box

log = logging.getLogger("make_layers")

WORKING_CRS = "EPSG:3071"
SYNTHETIC_NOTE = "synthetic: made by layers/make_layers.py"
#: GeoPackages record a "last change" timestamp; pin it so re-runs give identical bytes.
PINNED_DATE = "2025-01-17T00:00:00Z"
M_PER_FT = 0.3048  # international foot (mirrors georeview.units; this script runs stand-alone)
NAMESPACE = uuid.UUID("6f1f3c2e-4d0b-4b8e-9d7e-3a2b1c0d9e8f")


@dataclass(frozen=True)
class Grid:
    """A north-up raster grid in the working CRS (cell centres in ``xs``/``ys``)."""

    xmin: float
    ymin: float
    xmax: float
    ymax: float
    res: float

    @property
    def shape(self) -> tuple[int, int]:
        """Rows, columns."""
        return (
            round((self.ymax - self.ymin) / self.res),
            round((self.xmax - self.xmin) / self.res),
        )

    @property
    def transform(self) -> rasterio.Affine:
        """Affine transform of the top-left corner."""
        return from_origin(self.xmin, self.ymax, self.res, self.res)

    def centres(self) -> tuple[np.ndarray, np.ndarray]:
        """Cell-centre coordinates as 2-D arrays."""
        rows, cols = self.shape
        xs = self.xmin + (np.arange(cols) + 0.5) * self.res
        ys = self.ymax - (np.arange(rows) + 0.5) * self.res
        return np.meshgrid(xs, ys)

    def clip_box(self) -> shapely.Geometry:
        """The grid's extent as a polygon."""
        return box(self.xmin, self.ymin, self.xmax, self.ymax)


def pin_gpkg_dates() -> None:
    """Make GDAL write :data:`PINNED_DATE` as every GeoPackage's last-change timestamp."""
    pyogrio.set_gdal_config_options({"OGR_CURRENT_DATE": PINNED_DATE})


def polygonize(classes: np.ndarray, grid: Grid, step: int = 1) -> gpd.GeoDataFrame:
    """Polygons of the non-zero classes of a raster (one row per connected patch).

    Parameters
    ----------
    classes : numpy.ndarray
        Integer classes on ``grid``; 0 is left out.
    grid : Grid
        The grid ``classes`` lies on.
    step : int
        Take every ``step``-th row and column first (coarser, fewer vertices).

    Returns
    -------
    geopandas.GeoDataFrame
        Column ``cls`` and the patch polygons, in the working CRS.
    """
    arr = classes[::step, ::step].astype(np.int32) if step > 1 else classes.astype(np.int32)
    transform = from_origin(grid.xmin, grid.ymax, grid.res * step, grid.res * step)
    geoms, values = [], []
    for geom, value in rasterio.features.shapes(arr, mask=arr > 0, transform=transform):
        geoms.append(shapely.geometry.shape(geom))
        values.append(int(value))
    return gpd.GeoDataFrame({"cls": values}, geometry=geoms, crs=WORKING_CRS)


def simplify_coverage(gdf: gpd.GeoDataFrame, tolerance: float) -> gpd.GeoDataFrame:
    """Simplify polygons that tile an area without opening gaps between them.

    Parameters
    ----------
    gdf : geopandas.GeoDataFrame
        Polygons that share edges (a coverage).
    tolerance : float
        The simplification tolerance, in CRS units (metres).

    Returns
    -------
    geopandas.GeoDataFrame
        The simplified, valid, non-empty polygons with their attributes.
    """
    out = gdf.copy()
    out["geometry"] = shapely.coverage_simplify(np.asarray(gdf.geometry.values), tolerance)
    out = out[~out.geometry.is_empty].copy()
    out["geometry"] = shapely.make_valid(np.asarray(out.geometry.values))
    return out


def rasterize_mask(polygons: gpd.GeoDataFrame, grid: Grid) -> np.ndarray:
    """Boolean raster, on ``grid``, of the cells whose centre lies in one of ``polygons``."""
    return rasterio.features.rasterize(
        ((g, 1) for g in polygons.geometry),
        out_shape=grid.shape,
        transform=grid.transform,
        fill=0,
        dtype="uint8",
    ).astype(bool)


def write_gpkg(gdf: gpd.GeoDataFrame, path: Path, layer: str, *, append: bool = False) -> None:
    """Write one GeoPackage layer (the file is replaced unless ``append``)."""
    if not append and path.exists():
        path.unlink()
    gdf = gdf.reset_index(drop=True)
    # GeoPackage 1.3, as every GeoPackage georeview writes (georeview.geopackage.GPKG_VERSION;
    # this script runs stand-alone)
    options = None if append else {"VERSION": "1.3"}
    pyogrio.write_dataframe(
        gdf, path, layer=layer, driver="GPKG", append=append, dataset_options=options
    )
    log.info("wrote %s layer %s (%d features)", path.name, layer, len(gdf))


def write_dem(z: np.ndarray, grid: Grid, path: Path, units: str, description: str) -> None:
    """Write a float32 GeoTIFF DEM, DEFLATE + floating-point predictor, with its provenance.

    Parameters
    ----------
    z : numpy.ndarray
        Elevations on ``grid`` (rounded to 0.01 ``units`` on writing).
    grid : Grid
        The DEM's grid.
    path : pathlib.Path
        The GeoTIFF to (re)write.
    units : str
        Vertical units, ``"m"`` or ``"ft"`` (the ``VERTICAL_UNITS`` tag and band units).
    description : str
        The TIFF image description (says the DEM is synthetic).
    """
    profile = {
        "driver": "GTiff",
        "height": z.shape[0],
        "width": z.shape[1],
        "count": 1,
        "dtype": "float32",
        "crs": WORKING_CRS,
        "transform": grid.transform,
        "nodata": -9999.0,
        "compress": "deflate",
        "predictor": 3,
        "zlevel": 9,
        "tiled": True,
        "blockxsize": 256,
        "blockysize": 256,
    }
    if path.exists():
        path.unlink()
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(np.round(z, 2).astype("float32"), 1)
        dst.update_tags(
            TIFFTAG_IMAGEDESCRIPTION=description,
            SOURCE=SYNTHETIC_NOTE,
            VERTICAL_UNITS=units,
        )
        dst.units = (units,)
        dst.descriptions = ("elevation (synthetic)",)
    log.info("wrote %s %s, %.1f-%.1f %s", path.name, z.shape, z.min(), z.max(), units)


def perm_id(*parts: object) -> str:
    """A stable NHD-style Permanent_Identifier (UUID 5 of the parts)."""
    return "{" + str(uuid.uuid5(NAMESPACE, "/".join(map(str, parts)))).upper() + "}"


def with_note(gdf: gpd.GeoDataFrame, note: str = SYNTHETIC_NOTE) -> gpd.GeoDataFrame:
    """Add the NOTE column every synthetic vector layer carries."""
    gdf = gdf.copy()
    gdf["NOTE"] = note
    return gdf
