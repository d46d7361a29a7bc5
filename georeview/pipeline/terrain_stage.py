"""The review's terrain stage: slopes, contours and the downstream trace from the DEM.

A DEM that does not cover what a measure needs leaves that measure ``None`` (the
rules then say needs_info) and adds a warning; it never stops the review. The
terrain libraries are imported when the stage runs, so a review without terrain
never loads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import geopandas as gpd
import shapely

from georeview.load import Layers
from georeview.rules import Ordinance

__all__ = ["measure_terrain"]


def measure_terrain(
    layers: Layers,
    site: shapely.Geometry,
    disturbance: shapely.Geometry,
    crs: Any,
    *,
    hydro: gpd.GeoDataFrame | None,
    wetlands: gpd.GeoDataFrame | None,
    ordinance: Ordinance,
) -> tuple[dict[str, Any], dict[str, gpd.GeoDataFrame], list[str]]:
    """Slopes, contours and the 1/4-mile downstream trace from the municipality's DEM.

    A DEM that does not cover what a measure needs leaves that measure ``None``
    (the rules then say needs_info) and adds a warning; it never stops the review.

    Returns
    -------
    (measures, map layers, warnings)
    """
    from georeview.measure.vertical_units import vertical_units_warnings

    spec = layers.config.dem
    if spec is None:
        return {}, {}, ["No DEM in layers.toml: slope and downstream measures need information."]
    path = layers.folder / spec.path
    units = spec.vertical_units
    maps: dict[str, gpd.GeoDataFrame] = {}
    disturbed = shapely.intersection(disturbance, site)
    out, warnings = _slopes(path, units, disturbed, crs, ordinance, maps)
    warnings += _contours(path, units, site, crs, maps)
    warnings += _downstream(layers, path, units, site, crs, hydro, wetlands, ordinance, out, maps)
    # A DEM whose elevations or slopes are implausible for its declared vertical units
    # (metres declared feet, or the reverse) is flagged, never silently used.
    warnings += vertical_units_warnings(
        path, units, site, crs, max_slope_pct=out.get("max_slope_pct")
    )
    return out, maps, warnings


def _slopes(
    path: Path,
    units: str,
    disturbed: shapely.Geometry,
    crs: Any,
    ordinance: Ordinance,
    maps: dict[str, gpd.GeoDataFrame],
) -> tuple[dict[str, Any], list[str]]:
    """Steep-slope measures of the disturbed area; adds the steep polygons to ``maps``."""
    from georeview.errors import CoverageError
    from georeview.measure.steep import steep_slopes

    out: dict[str, Any] = {}
    warnings: list[str] = []
    try:
        steep = steep_slopes(
            path,
            units,
            disturbed,
            crs,
            working_crs=crs,
            threshold_pct=float(ordinance.param("steep_slope_pct")),
        )
    except CoverageError as exc:
        return out, [f"Slopes not measured: {exc.one_line()}"]
    out.update(steep.to_dict())
    n_in = steep.n_cells + steep.n_nodata_cells
    out["nodata_share"] = steep.n_nodata_cells / n_in if n_in else None
    if steep.n_nodata_cells:
        # Cells without a slope are not flat: the steep area there is unknown, so
        # the slope measures are left empty (needs_info), with the share missing.
        for key in ("steep_slope_area_sqft", "steep_slope_area_gt_sqft", "max_slope_pct"):
            out[key] = None
        out["mean_slope_pct"] = None
        warnings.append(
            f"Slopes not measured: {100 * out['nodata_share']:.1f} % of the {n_in:,} DEM"
            " cells inside the disturbed area have no data (nodata, or the DEM edge);"
            " the slope there cannot be told"
        )
    elif steep.polygons is not None and len(steep.polygons):
        slope_class = f"{ordinance.param('steep_slope_pct'):g} % or more"
        maps["steep_slopes"] = steep.polygons.assign(slope_class=slope_class)
    return out, warnings


def _contours(
    path: Path, units: str, site: shapely.Geometry, crs: Any, maps: dict[str, gpd.GeoDataFrame]
) -> list[str]:
    """Contours around the site for the map (added to ``maps``); a warning if not drawn."""
    from georeview.errors import CoverageError
    from georeview.measure.contours import contours_ft

    try:
        # 60 m around the site, on a boundary simplified to 1 m first (and grown by that
        # metre): a superset of the exact band at a fraction of the cost
        unit_m = float(crs.axis_info[0].unit_conversion_factor)
        around = shapely.buffer(shapely.simplify(site, 1.0 / unit_m), 61.0 / unit_m)
        maps["contours"] = contours_ft(path, units, around, crs, interval_ft=2.0, working_crs=crs)
    except CoverageError as exc:
        return [f"Contours not drawn: {exc.one_line()}"]
    return []


def _downstream(
    layers: Layers,
    path: Path,
    units: str,
    site: shapely.Geometry,
    crs: Any,
    hydro: gpd.GeoDataFrame | None,
    wetlands: gpd.GeoDataFrame | None,
    ordinance: Ordinance,
    out: dict[str, Any],
    maps: dict[str, gpd.GeoDataFrame],
) -> list[str]:
    """Trace runoff downstream; sets ``out["downstream"]`` and the map's path."""
    from georeview.measure import flow

    hspec = layers.config.hydrography
    wspec = layers.config.wetlands
    down = flow.trace_downstream(
        path,
        units,
        site,
        crs,
        waters=hydro,
        wetlands=wetlands,
        name_field=(hspec.name_field if hspec and hspec.name_field else "GNIS_NAME"),
        water_id_field=hspec.id_field if hspec else None,
        wetland_id_field=wspec.id_field if wspec else None,
        working_crs=crs,
        length_ft=float(ordinance.param("downstream_trace_ft")),
    )
    out["downstream"] = down.to_dict()
    reasons = _unknown_reach_reasons(layers, out, down.reaches_water_within_quarter_mile)
    if reasons:
        out["downstream"].update(reaches_water_within_quarter_mile=None, reason="; ".join(reasons))
    warnings = []
    if out["downstream"].get("reason"):
        warnings.append(f"Downstream trace: {out['downstream']['reason']}")
    if down.path is not None and not shapely.is_empty(down.path):
        maps["downstream"] = gpd.GeoDataFrame(
            {
                "receiving_feature": [down.receiving_feature or "none within 1/4 mile"],
                "distance_ft": [down.distance_ft],
            },
            geometry=[down.path],
            crs=crs,
        )
    return warnings


def _unknown_reach_reasons(layers: Layers, out: dict[str, Any], reaches: bool | None) -> list[str]:
    """Why a trace that found no water cannot say that none lies downstream."""
    if reaches is not False:
        return []
    reasons: list[str] = []
    if out.get("nodata_share"):
        # Runoff from the cells without data was not traced: "reaches no water" is
        # then not known (one that does reach water stays a yes).
        reasons.append(
            f"{100 * out['nodata_share']:.1f} % of the DEM cells inside the disturbed area"
            " have no data; flow from them was not traced"
        )
    absent = [n for n in ("hydrography", "wetlands") if getattr(layers.config, n) is None]
    if absent:
        # Finding no water proves nothing when the layer that maps it is missing.
        reasons.append(
            f"no {' or '.join(absent)} layer in layers.toml: the trace found none of the "
            "waters it could see, but cannot say that none lies downstream"
        )
    return reasons
