"""Measure stage: areas of the site, the disturbance and the resources inside them.

All areas are computed in the working CRS (projected), then converted to square
feet with the CRS's own linear unit, so a working CRS in US survey feet gives
the same square feet as one in metres.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
import shapely
from pyproj import CRS

from georeview.errors import CRSError
from georeview.units import sqft_to_acres, sqm_to_sqft

#: FEMA NFHL zones of the 1 %-annual-chance (100-year) special flood hazard area.
SFHA_ZONES = frozenset({"A", "AE", "AH", "AO", "AR", "A99", "V", "VE"})


def sqft_per_crs_unit2(crs: CRS) -> float:
    """Square feet in one square unit of a projected CRS."""
    if crs is None or not crs.is_projected:
        raise CRSError("area needs a projected CRS")
    m = float(crs.axis_info[0].unit_conversion_factor)
    return sqm_to_sqft(m * m)


def area_sqft(geom: shapely.Geometry, crs: CRS) -> float:
    """Area of a geometry in square feet (``crs`` projected)."""
    return float(shapely.area(geom)) * sqft_per_crs_unit2(crs)


def overlap_sqft(geom: shapely.Geometry, layer: gpd.GeoDataFrame | None) -> float | None:
    """Area of ``geom`` covered by the union of ``layer``'s polygons, square feet.

    Returns ``None`` when the layer is absent (unknown), 0.0 when nothing overlaps.
    Overlapping features are unioned first so no area is counted twice.
    """
    if layer is None:
        return None
    polys = layer.geometry.values
    polys = polys[np.isin(shapely.get_type_id(polys), (3, 6, 7))]
    if len(polys) == 0:
        return 0.0
    hits = polys[shapely.intersects(polys, geom)]
    if len(hits) == 0:
        return 0.0
    covered = shapely.intersection(shapely.union_all(hits), geom)
    return area_sqft(covered, layer.crs)


def sfha(floodplain: gpd.GeoDataFrame, zone_field: str, sfha_field: str) -> gpd.GeoDataFrame:
    """The 100-year floodplain polygons of an NFHL ``S_FLD_HAZ_AR`` layer.

    A polygon is in the special flood hazard area when ``SFHA_TF`` is ``"T"``
    or, when that field is absent, when its ``FLD_ZONE`` is an A or V zone.
    """
    cols = {c.lower(): c for c in floodplain.columns}
    if sfha_field.lower() in cols:
        flag = floodplain[cols[sfha_field.lower()]].astype(str).str.upper().str.strip() == "T"
        return floodplain[flag]
    zone = floodplain[cols.get(zone_field.lower(), zone_field)].astype(str).str.upper().str.strip()
    return floodplain[zone.isin(SFHA_ZONES)]


def floodway(floodplain: gpd.GeoDataFrame, subtype_field: str) -> gpd.GeoDataFrame:
    """Floodway polygons (``ZONE_SUBTY`` containing FLOODWAY) of an NFHL layer."""
    cols = {c.lower(): c for c in floodplain.columns}
    col = cols.get(subtype_field.lower())
    if col is None:
        return floodplain.iloc[0:0]
    sub = floodplain[col].astype(str).str.upper()
    return floodplain[sub.str.contains("FLOODWAY", regex=False, na=False)]


@dataclass(frozen=True)
class Areas:
    """Areas of a site and what lies inside it, square feet (``None`` = layer absent)."""

    site_area_sqft: float
    #: ``None`` when the submission gives neither a disturbance file nor the area.
    disturbed_area_sqft: float | None
    wetland_area_sqft: float | None
    wetland_in_disturbance_sqft: float | None
    floodplain_area_sqft: float | None
    floodplain_in_disturbance_sqft: float | None
    floodway_area_sqft: float | None

    @property
    def disturbed_area_acres(self) -> float | None:
        """Disturbed area, acres (``None`` when unknown)."""
        sqft = self.disturbed_area_sqft
        return None if sqft is None else sqft_to_acres(sqft)

    @property
    def floodway_present(self) -> bool | None:
        """Whether any floodway lies inside the site."""
        return None if self.floodway_area_sqft is None else self.floodway_area_sqft > 0

    def to_dict(self) -> dict[str, Any]:
        """Return the measures of report.json that come from areas."""
        r = _round
        return {
            "site_area_sqft": r(self.site_area_sqft),
            "site_area_acres": r(sqft_to_acres(self.site_area_sqft), 4),
            "disturbed_area_sqft": r(self.disturbed_area_sqft),
            "disturbed_area_acres": r(self.disturbed_area_acres, 4),
            "wetland_area_sqft": r(self.wetland_area_sqft),
            "wetland_in_disturbance_sqft": r(self.wetland_in_disturbance_sqft),
            "floodplain_area_sqft": r(self.floodplain_area_sqft),
            "floodplain_in_disturbance_sqft": r(self.floodplain_in_disturbance_sqft),
            "floodway_area_sqft": r(self.floodway_area_sqft),
            "floodway_present": self.floodway_present,
        }


def _round(v: float | None, nd: int = 1) -> float | None:
    return None if v is None else round(float(v), nd)


def measure_areas(
    site: shapely.Geometry,
    disturbance: shapely.Geometry | None,
    crs: CRS,
    *,
    wetlands: gpd.GeoDataFrame | None = None,
    floodplain_sfha: gpd.GeoDataFrame | None = None,
    floodways: gpd.GeoDataFrame | None = None,
    declared_disturbed_sqft: float | None = None,
) -> Areas:
    """Measure the site, its disturbance and the wetland and floodplain inside them.

    The disturbance is clipped to the site: land disturbed outside the site
    boundary is not the applicant's to report here and would double count.

    With no disturbance geometry (``None``) the disturbed area is the declared one
    (``declared_disturbed_sqft``) or unknown, never the whole site; what lies in the
    disturbance is then known only where the site holds none of it (0), else unknown.
    """
    site_sqft = area_sqft(site, crs)
    wet_site = overlap_sqft(site, wetlands)
    fp_site = overlap_sqft(site, floodplain_sfha)
    if disturbance is None:
        return Areas(
            site_area_sqft=site_sqft,
            disturbed_area_sqft=declared_disturbed_sqft,
            wetland_area_sqft=wet_site,
            wetland_in_disturbance_sqft=none_on_site(wet_site),
            floodplain_area_sqft=fp_site,
            floodplain_in_disturbance_sqft=none_on_site(fp_site),
            floodway_area_sqft=overlap_sqft(site, floodways),
        )
    disturbed = shapely.intersection(disturbance, site)
    return Areas(
        site_area_sqft=site_sqft,
        disturbed_area_sqft=area_sqft(disturbed, crs),
        wetland_area_sqft=wet_site,
        wetland_in_disturbance_sqft=overlap_sqft(disturbed, wetlands),
        floodplain_area_sqft=fp_site,
        floodplain_in_disturbance_sqft=overlap_sqft(disturbed, floodplain_sfha),
        floodway_area_sqft=overlap_sqft(site, floodways),
    )


def none_on_site(on_site_sqft: float | None) -> float | None:
    """What lies in an unmapped disturbance: 0 where the site holds none, else unknown.

    The disturbance lies within the site, so a resource the site does not hold cannot
    be disturbed; one it holds may or may not be.
    """
    return 0.0 if on_site_sqft == 0 else None
