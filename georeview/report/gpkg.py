"""The review's GIS layers: ``layers.gpkg`` beside report.json, to open the review in QGIS.

One GeoPackage in the working CRS with the geometry the review measured and the
attributes a reviewer filters on:

``site``
    The site boundary: name, jurisdiction, regulated, category, areas.
``disturbance``
    The disturbed area: area and what of it lies in wetland, floodplain, steep slopes.
``steep_slopes``
    Slopes of 20 % or more in the disturbance (DEM); ``drawn_block_cells`` is 1 when
    traced cell for cell, *k* when a large window was drawn on k x k-cell blocks (then
    the polygons' areas do not add up to the measured steep area).
``downstream_paths``
    The downstream trace, merged where paths join (as on the map).
``discharge_points``
    Where runoff leaves the site: the point where each flow path crosses the site
    boundary (as on the map; ``at`` is ``boundary``, ``inside`` where the path meets a
    water or wetland inside the site, ``ends`` where it stops in its cell), the cell's
    centre that report.json gives (``cell_x``, ``cell_y``), contributing area, whether
    it reaches water.
``contours``
    Contours from the DEM: elevation, ft.
``jurisdiction``
    The site cut by the village limits and the extraterritorial area: which piece
    lies where, its area and share.

A layer with nothing in it (no steep slopes, no DEM) is still written, empty, with
its columns, so that a project file or a model built on the GeoPackage finds every
layer. The file is GeoPackage 1.3 (:mod:`georeview.geopackage`), written to a temporary
name and renamed. Its ``layer_styles`` table holds each layer's QGIS default style, in
the map's colours (:mod:`georeview.report.gpkg_styles`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from georeview.errors import OutputError
from georeview.units import sqm_to_sqft

log = logging.getLogger(__name__)

#: Layer name → (geometry type, columns and their dtypes), in writing order.
SCHEMA: dict[str, tuple[str, dict[str, str]]] = {
    "site": (
        "MultiPolygon",
        {
            "name": "str",
            "jurisdiction": "str",
            "regulated": "str",
            "category": "str",
            "larger_site": "str",
            "extraordinary": "str",
            "area_sqft": "float",
            "area_acres": "float",
            "fail": "int",
            "needs_info": "int",
        },
    ),
    "disturbance": (
        "MultiPolygon",
        {
            "area_sqft": "float",
            "area_acres": "float",
            "wetland_sqft": "float",
            "floodplain_sqft": "float",
            "steep_slope_sqft": "float",
        },
    ),
    "steep_slopes": (
        "MultiPolygon",
        {"slope_class": "str", "area_sqft": "float", "drawn_block_cells": "int"},
    ),
    "downstream_paths": (
        "LineString",
        {
            "receiving_feature": "str",
            "distance_ft": "float",
            "n_paths": "int",
            "length_ft": "float",
        },
    ),
    "discharge_points": (
        "Point",
        {
            "at": "str",
            "cell_x": "float",
            "cell_y": "float",
            "contributing_area_sqft": "float",
            "reaches_water": "str",
            "distance_ft": "float",
            "receiving_feature": "str",
        },
    ),
    "contours": ("LineString", {"elev_ft": "float"}),
    "jurisdiction": (
        "MultiPolygon",
        {"piece": "str", "municipality": "str", "area_sqft": "float", "share": "float"},
    ),
}


def _sqft(geoms: Any, crs: Any) -> np.ndarray:
    """Areas of ``geoms`` in sq ft (the working CRS is projected; its unit may be ft)."""
    unit_m = float(crs.axis_info[0].unit_conversion_factor or 1.0)
    area_sqm = shapely.area(np.asarray(geoms, dtype=object)) * unit_m**2
    # sqm_to_sqft is typed for a scalar; on the array it divides element-wise
    return np.asarray(sqm_to_sqft(area_sqm))


def _ft(lengths: Any, crs: Any) -> np.ndarray:
    unit_m = float(crs.axis_info[0].unit_conversion_factor or 1.0)
    return np.asarray(lengths, dtype=float) * unit_m / 0.3048


def _yes(value: Any) -> str:
    return {True: "yes", False: "no"}.get(value, "unknown")


def _frame(name: str, data: dict[str, Any], geoms: Any, crs: Any) -> gpd.GeoDataFrame:
    """A layer with exactly the columns of :data:`SCHEMA` (missing ones empty)."""
    geom_type, columns = SCHEMA[name]
    # The review measures in plan: a submission's Z values are dropped here too.
    geoms = [None if g is None else shapely.force_2d(g) for g in geoms]
    n = len(geoms)
    frame = {}
    for col, kind in columns.items():
        values = data.get(col, [None] * n)
        if kind == "str":
            frame[col] = pd.Series(["" if v is None else str(v) for v in values], dtype=object)
        elif kind == "int":
            frame[col] = pd.Series(values, dtype="Int64")
        else:
            frame[col] = pd.Series(values, dtype="float64")
    if geom_type == "MultiPolygon":
        geoms = [
            g if g is None or g.geom_type != "Polygon" else shapely.MultiPolygon([g]) for g in geoms
        ]
    return gpd.GeoDataFrame(frame, geometry=gpd.GeoSeries(geoms, crs=crs), crs=crs)


def _polygons(geoms: Any) -> list[Any]:
    """Only the polygonal part of each geometry (an intersection may add slivers of lines)."""
    out = []
    for g in geoms:
        parts = shapely.get_parts(g) if g is not None else []
        polys = [p for p in parts if p.geom_type in ("Polygon", "MultiPolygon") and not p.is_empty]
        if polys:
            out.append(shapely.MultiPolygon([q for p in polys for q in shapely.get_parts(p)]))
    return out


def review_layers(review: Any, report: dict[str, Any]) -> dict[str, gpd.GeoDataFrame]:
    """Every layer of layers.gpkg as a GeoDataFrame in the working CRS (see :data:`SCHEMA`)."""
    crs = review.layers.working_crs
    m = report.get("measures") or {}
    site = review.submission.site_geom
    layers = review.map_layers or {}
    return {
        "site": _site_layer(report, site, crs),
        "disturbance": _disturbance_layer(m, review.submission.disturbance_geom, crs),
        "steep_slopes": _steep_layer(layers.get("steep_slopes"), crs),
        "downstream_paths": _paths_layer(layers.get("downstream"), m.get("downstream") or {}, crs),
        "discharge_points": _discharge_layer(
            m.get("downstream") or {}, layers.get("downstream"), site, crs
        ),
        "contours": _contours_layer(layers.get("contours"), crs),
        "jurisdiction": _jurisdiction_pieces(review, site, crs),
    }


def _site_layer(report: dict[str, Any], site: Any, crs: Any) -> gpd.GeoDataFrame:
    """The site boundary with its classification, areas and finding counts."""
    m = report.get("measures") or {}
    c = report.get("classification") or {}
    counts = (report.get("summary") or {}).get("counts") or {}
    sub = report.get("submission") or {}
    return _frame(
        "site",
        {
            "name": [sub.get("name") or sub.get("folder")],
            "jurisdiction": [(report.get("jurisdiction") or {}).get("status")],
            "regulated": [_yes(c.get("regulated"))],
            "category": [c.get("category") or ""],
            "larger_site": [_yes(c.get("larger_site"))],
            "extraordinary": [_yes(c.get("extraordinary"))],
            "area_sqft": [m.get("site_area_sqft")],
            "area_acres": [m.get("site_area_acres")],
            "fail": [counts.get("fail")],
            "needs_info": [counts.get("needs_info")],
        },
        _polygons([site]),
        crs,
    )


def _disturbance_layer(m: dict[str, Any], dist: Any, crs: Any) -> gpd.GeoDataFrame:
    """The disturbed area and what of it lies in wetland, floodplain and steep slopes."""
    return _frame(
        "disturbance",
        {
            "area_sqft": [m.get("disturbed_area_sqft")],
            "area_acres": [m.get("disturbed_area_acres")],
            "wetland_sqft": [m.get("wetland_in_disturbance_sqft")],
            "floodplain_sqft": [m.get("floodplain_in_disturbance_sqft")],
            "steep_slope_sqft": [m.get("steep_slope_area_sqft")],
        },
        _polygons([dist]),
        crs,
    )


def _steep_layer(steep: gpd.GeoDataFrame | None, crs: Any) -> gpd.GeoDataFrame:
    """The steep-slope polygons of the map, with their class and how they were drawn."""
    if steep is None or not len(steep):
        return _frame("steep_slopes", {}, [], crs)
    steep = steep.to_crs(crs)
    geoms = _polygons(steep.geometry.to_numpy())
    whole = len(geoms) == len(steep)
    classes = (
        steep["slope_class"].astype(str).tolist()
        if "slope_class" in steep.columns and whole
        else ["20 % or more"] * len(geoms)
    )
    # 1: traced cell for cell (the areas add up to the measured steep area); k: drawn
    # on k x k-cell blocks for the map of a large window (the areas do not)
    blocks = (
        steep["drawn_block_cells"].astype(int).tolist()
        if "drawn_block_cells" in steep.columns and whole
        else [None] * len(geoms)
    )
    return _frame(
        "steep_slopes",
        {
            "slope_class": classes,
            "area_sqft": _sqft(geoms, crs).tolist(),
            "drawn_block_cells": blocks,
        },
        geoms,
        crs,
    )


def _paths_layer(
    paths: gpd.GeoDataFrame | None, down: dict[str, Any], crs: Any
) -> gpd.GeoDataFrame:
    """The downstream trace merged where paths join (as on the map), one row per line."""
    from georeview.report.map_data import band_width, merged_paths

    if paths is None or not len(paths):
        return _frame("downstream_paths", {}, [], crs)
    merged = merged_paths(paths.to_crs(crs), band_width(down))
    geoms = shapely.get_parts(merged.geometry.to_numpy())
    # line_merge may leave MultiLineStrings where paths branch: one row per line.
    n = shapely.get_num_geometries(merged.geometry.to_numpy())
    rep = np.repeat(np.arange(len(merged)), n)
    data = {
        col: merged[col].to_numpy()[rep].tolist()
        for col in merged.columns
        if col != merged.geometry.name
    }
    data["length_ft"] = _ft(shapely.length(geoms), crs).tolist()
    return _frame("downstream_paths", data, geoms, crs)


def _discharge_layer(
    down: dict[str, Any], paths: gpd.GeoDataFrame | None, site: Any, crs: Any
) -> gpd.GeoDataFrame:
    """Where runoff leaves the site, on its boundary, as the map draws it.

    report.json gives each discharge cell's centre, up to a cell inside the site; the
    layer puts each point where its path crosses the boundary (the point its
    ``distance_ft`` is measured from: :func:`~georeview.report.map_data.boundary_discharge`)
    and keeps the cell's centre as attributes.
    """
    from georeview.report.map_data import boundary_discharge, trace_lines

    points = boundary_discharge(down, trace_lines(down, paths, crs), site, crs)
    if points is None:
        return _frame("discharge_points", {}, [], crs)
    data = {col: points[col].tolist() for col in points.columns if col != points.geometry.name}
    data["reaches_water"] = [_yes(v) for v in data.get("reaches_water", [])]
    data["at"] = data.pop("_gr_group", [])
    cells = [p for p in down.get("discharge_points") or [] if p.get("x") is not None]
    data["cell_x"] = [p["x"] for p in cells]
    data["cell_y"] = [p["y"] for p in cells]
    return _frame("discharge_points", data, points.geometry, crs)


def _contours_layer(contours: gpd.GeoDataFrame | None, crs: Any) -> gpd.GeoDataFrame:
    """The DEM's contours with their elevation in feet."""
    if contours is None or not len(contours):
        return _frame("contours", {}, [], crs)
    contours = contours.to_crs(crs)
    col = next((c for c in ("elev_ft", "elevation_ft") if c in contours.columns), None)
    return _frame(
        "contours",
        {"elev_ft": contours[col].tolist() if col else [None] * len(contours)},
        contours.geometry,
        crs,
    )


def _jurisdiction_pieces(review: Any, site: Any, crs: Any) -> gpd.GeoDataFrame:
    """The site cut into its village, extraterritorial and outside pieces."""
    j = review.jurisdictions
    if j is None:
        return _frame("jurisdiction", {}, [], crs)
    village = j.village.geometry
    etj = j.extraterritorial if j.extraterritorial is not None else shapely.Polygon()
    ceded = shapely.union_all(list(j.ceded.values())) if j.ceded else shapely.Polygon()
    pieces = [
        ("village", j.village.name, shapely.intersection(site, village)),
        (
            "extraterritorial",
            j.village.name,
            shapely.difference(shapely.intersection(site, etj), village),
        ),
        (
            "outside",
            "",
            shapely.difference(site, shapely.union_all([village, etj, ceded])),
        ),
    ]
    pieces += [
        ("neighbour's extraterritorial", name, shapely.intersection(site, geom))
        for name, geom in (j.ceded or {}).items()
    ]
    geoms = _polygons([g for _, _, g in pieces])
    kept = [(p, n) for (p, n, g) in pieces if _polygons([g])]
    area = _sqft(geoms, crs)
    total = float(_sqft([site], crs)[0]) or 1.0
    return _frame(
        "jurisdiction",
        {
            "piece": [p for p, _ in kept],
            "municipality": [n for _, n in kept],
            "area_sqft": area.tolist(),
            "share": (area / total).tolist(),
        },
        geoms,
        crs,
    )


def write_layers_gpkg(review: Any, report: dict[str, Any], path: Path) -> Path:
    """Write layers.gpkg for one review (every layer of :data:`SCHEMA`, some maybe empty).

    Raises
    ------
    OutputError
        When the file cannot be written.
    """
    from georeview.geopackage import write_layer, write_table
    from georeview.report.decimals import round_frame
    from georeview.report.gpkg_styles import styles_table

    path = Path(path)
    frames = review_layers(review, report)
    tmp = path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")
    try:
        tmp.unlink(missing_ok=True)
        for i, (name, gdf) in enumerate(frames.items()):
            geom_type, columns = SCHEMA[name]
            gdf = round_frame(gdf, columns)  # shares to 4 decimals, sq ft to 0.1 ...
            write_layer(gdf, tmp, name, append=i > 0, geometry_type=geom_type)
        # QGIS's default style of each layer, drawn as map.html draws it
        styles = styles_table({name: SCHEMA[name][0] for name in frames})
        write_table(styles, tmp, "layer_styles", fid="id")
        os.replace(tmp, path)
    except (OSError, RuntimeError) as exc:  # pyogrio's write errors are RuntimeErrors
        raise OutputError(f"cannot write ({exc})", path=path) from None
    finally:
        tmp.unlink(missing_ok=True)
    log.info("layers.gpkg: %s", ", ".join(f"{k} {len(v)}" for k, v in frames.items()))
    return path
