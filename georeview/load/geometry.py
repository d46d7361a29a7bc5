"""Geometry checks and repairs every reader shares, and the checks a site's polygons pass.

Empty geometries are dropped and invalid ones repaired with :func:`shapely.make_valid`;
coordinates must be finite and must stay finite once reprojected; a site must lie where
its working CRS is meant to be used and cover an area a construction site could cover.
"""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import numpy as np
import shapely
from pyproj import CRS
from pyproj.exceptions import ProjError

from georeview.errors import CRSError, GeometryError, LimitError

__all__ = [
    "check_finite_coordinates",
    "check_in_area_of_use",
    "check_site_size",
    "drop_empty",
    "polygonal",
    "repair_invalid",
    "reproject",
]

#: A site must lie within this many degrees of its working CRS's area of use.
_AREA_OF_USE_MARGIN_DEG = 0.5


def drop_empty(gdf: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """The rows whose geometry is neither missing nor empty."""
    return gdf[~(gdf.geometry.isna() | gdf.geometry.is_empty)]


def repair_invalid(gdf: gpd.GeoDataFrame) -> tuple[gpd.GeoDataFrame, int]:
    """Repair invalid geometries with :func:`shapely.make_valid`; return how many were.

    For layers that are counted and measured (reference layers, site-map layers, layers
    build): which feature was repaired is not reported, so every one is repaired at once.
    """
    invalid = ~gdf.geometry.is_valid
    n = int(invalid.sum())
    if n:
        gdf = gdf.set_geometry(gdf.geometry.make_valid())
    return gdf, n


def check_finite_coordinates(geoms: Any, *, path: object, field: str | None) -> None:
    """Refuse geometries (an array of them) holding a NaN or infinite coordinate.

    The first such feature is named by its position.

    Raises
    ------
    GeometryError
        ``feature <i> has a coordinate that is not a finite number``.
    """
    coords, owner = shapely.get_coordinates(geoms, include_z=False, return_index=True)
    bad = owner[~np.isfinite(coords).all(axis=1)]
    if bad.size:
        raise GeometryError(
            f"feature {int(bad[0])} has a coordinate that is not a finite number (NaN or Infinity)",
            path=path,
            field=field,
        )


def reproject(
    gdf: gpd.GeoDataFrame, working_crs: CRS, *, path: object, field: str | None
) -> gpd.GeoDataFrame:
    """Reproject to the working CRS, refusing coordinates that do not transform.

    Raises
    ------
    CRSError
        Non-finite bounds after the transform (a declared CRS that is not the data's).
    """
    try:
        out = gdf.to_crs(working_crs)
    except ProjError as exc:
        # a LOCAL_CS (engineering CRS) parses, but PROJ knows no way from it to the earth
        name = getattr(gdf.crs, "name", None) or "the declared CRS"
        raise CRSError(
            f"no transformation from {name!r} to the working CRS ({' '.join(str(exc).split())});"
            " a local or engineering CRS cannot place the site: export it in a real CRS",
            path=path,
            field=field,
        ) from None
    if len(out) and not np.isfinite(out.total_bounds).all():
        raise CRSError(
            "coordinates do not transform to the working CRS (is the declared CRS right?)",
            path=path,
            field=field,
        )
    return out


def polygonal(geom: shapely.Geometry) -> shapely.Geometry | None:
    """Keep the polygonal part of a make_valid result (drop stray lines and points)."""
    if geom.geom_type in ("Polygon", "MultiPolygon"):
        return geom
    parts = [g for g in getattr(geom, "geoms", []) if g.geom_type in ("Polygon", "MultiPolygon")]
    return shapely.union_all(parts) if parts else None


def check_in_area_of_use(
    gdf: gpd.GeoDataFrame, working_crs: CRS, *, path: object = None, field: str | None = None
) -> None:
    """Refuse geometries far outside the area where the working CRS is meant to be used.

    A site whose file declares the wrong CRS (Wisconsin Transverse Mercator metres
    labelled UTM 16N, state-plane feet labelled metres) lands hundreds of kilometres from
    Wisconsin once reprojected; measured there it would give wrong areas and an
    "outside the village" answer that looks plausible. The check compares the
    geometries' longitude/latitude bounds with the working CRS's EPSG area of use
    (Wisconsin for EPSG:3071) grown by half a degree. A CRS without an area of use is
    not checked.

    Raises
    ------
    CRSError
        When the geometries lie wholly outside that area.
    """
    aou = working_crs.area_of_use
    if aou is None or len(gdf) == 0:
        return
    m = _AREA_OF_USE_MARGIN_DEG
    west, south, east, north = gdf.to_crs("EPSG:4326").total_bounds
    inside = (
        np.isfinite([west, south, east, north]).all()
        and east >= aou.west - m
        and west <= aou.east + m
        and north >= aou.south - m
        and south <= aou.north + m
    )
    if not inside:
        raise CRSError(
            f"lies outside the area covered by the layers: at longitude {west:.2f} to"
            f" {east:.2f}, latitude {south:.2f} to {north:.2f}, while the working CRS"
            f" {working_crs.name} covers {aou.name.rstrip('.')} ({aou.west:.2f} to"
            f" {aou.east:.2f}, {aou.south:.2f} to {aou.north:.2f}); is the declared CRS right?",
            path=path,
            field=field,
        )


def check_site_size(
    gdf: gpd.GeoDataFrame,
    working_crs: CRS,
    max_sqmi: float,
    *,
    path: object = None,
    field: str | None = None,
) -> None:
    """Refuse a polygon file whose area is absurd for a construction site.

    Raises
    ------
    LimitError
        When the union of the polygons exceeds ``max_sqmi`` square miles.
    """
    from georeview.measure.areas import sqft_per_crs_unit2
    from georeview.units import SQFT_PER_SQMI

    area = float(shapely.area(shapely.union_all(gdf.geometry.values)))
    sqmi = area * sqft_per_crs_unit2(working_crs) / SQFT_PER_SQMI
    if sqmi > max_sqmi:
        raise LimitError(
            f"covers {sqmi:,.1f} square miles, more than the {max_sqmi:g} square miles"
            " a construction site could cover (GEOREVIEW_MAX_SITE_SQMI); is this the right"
            " file, and are its CRS and units right?",
            path=path,
            field=field,
        )
