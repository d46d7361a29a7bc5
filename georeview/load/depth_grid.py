"""A FEMA flood-depth raster given as the floodplain: its wet cells as NFHL-like polygons."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely
from pyproj import CRS

from georeview.errors import CRSError, DataSourceError
from georeview.load.crs import bbox_into
from georeview.load.files import check_limit

__all__ = ["RASTER_SUFFIXES", "read_depth_grid"]

#: Raster suffixes a floodplain may be given as (a FEMA flood-depth grid).
RASTER_SUFFIXES = (".tif", ".tiff", ".vrt", ".img")


def read_depth_grid(
    path: Path | str,
    working_crs: CRS,
    *,
    bbox: tuple[float, float, float, float] | None = None,
    label: str = "floodplain",
) -> gpd.GeoDataFrame:
    """The cells of a FEMA flood-depth raster with depth > 0, as 1 % floodplain polygons.

    The polygons carry NFHL fields (``FLD_ZONE = "A"``, ``SFHA_TF = "T"``,
    ``ZONE_SUBTY = None``) so the floodplain rules read them as they read
    ``S_FLD_HAZ_AR``; cells are polygonised by GDAL (``rasterio.features.shapes``),
    whole cells, in the raster's CRS, then reprojected.

    Raises
    ------
    DataSourceError
        The raster cannot be read.
    CRSError
        The raster has no CRS.
    LimitError
        The window read is larger than ``limits().max_raster_cells``.
    """
    import rasterio
    from rasterio.windows import from_bounds

    from georeview.config import limits
    from georeview.measure.dem import polygonize

    path = Path(path)
    try:
        ds = rasterio.open(path)
    except rasterio.errors.RasterioError as exc:
        raise DataSourceError(f"cannot open as a raster ({exc})", path=path, field=label) from None
    with ds:
        if ds.crs is None:
            raise CRSError("the depth grid has no CRS", path=path, field=label)
        window = None
        if bbox is not None:
            b = bbox_into(bbox, working_crs, ds.crs.to_wkt(), path)
            window = from_bounds(*b, transform=ds.transform).round_offsets().round_lengths()
            window = window.intersection(rasterio.windows.Window(0, 0, ds.width, ds.height))
        cells = (window.width * window.height) if window is not None else ds.width * ds.height
        check_limit(
            cells,
            limits().max_raster_cells,
            "cells",
            "GEOREVIEW_MAX_RASTER_CELLS",
            path=path,
            field=label,
        )
        depth = ds.read(1, window=window, masked=True)
        transform = ds.window_transform(window) if window is not None else ds.transform
        wet = (depth.filled(0) > 0).astype(np.uint8)
        drawn = polygonize(wet, mask=wet, transform=transform)
        geoms = [shapely.geometry.shape(g) for g, _ in drawn]
        crs = ds.crs
    out = gpd.GeoDataFrame(
        {
            "FLD_ZONE": ["A"] * len(geoms),
            "ZONE_SUBTY": [None] * len(geoms),
            "SFHA_TF": ["T"] * len(geoms),
        },
        geometry=geoms,
        crs=crs,
    )
    return out.to_crs(working_crs)
