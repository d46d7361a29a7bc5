"""Mapped waters and wetlands on the DEM grid: the sinks the trace burns and the cells it meets.

Streams, water bodies and wetlands are reprojected into the DEM's CRS and clipped to the
window (:func:`features_in_dem_crs`), then rasterised twice (:func:`rasterize_features`):
every touched cell is a *sink* (burned below the terrain before the fill, as DESIGN §1 asks),
and every cell whose centre lies within 1.5 cells of a feature is a *meet* cell (a path
entering it reaches that feature), so a stream that the DEM's channel misses by a cell still
counts. The meet cells only decide *that* and *where* a path reaches a feature; its distance
is measured to the feature's own geometry (:mod:`georeview.measure.flow_ends`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from georeview.errors import InputError
from georeview.measure.dem import DemWindow, rasterize

if TYPE_CHECKING:
    import geopandas as gpd

#: Mapped features count within this many cells of the path.
_MEET_BUFFER_CELLS = 1.5

#: A feature layer: (frame, name field, id field, kind "water" or "wetland").
FeatureLayer = tuple["gpd.GeoDataFrame | None", "str | None", "str | None", str]


def _feature_label(value: Any, fid: Any, kind: str) -> str:
    """Name of a feature, or ``<kind> <id>`` when it has none."""
    if value is not None and not (isinstance(value, float) and math.isnan(value)):
        text = str(value).strip()
        if text and text.lower() not in {"nan", "none", "null", "unnamed"}:
            return text
    return f"{kind} {fid}"


def features_in_dem_crs(
    layers: list[tuple[gpd.GeoDataFrame, str | None, str | None, str]],
    win: DemWindow,
) -> tuple[list[Any], list[str]]:
    """Reproject the mapped features into the DEM CRS, clipped to the window; label them."""
    import shapely

    rows, cols = win.elev.shape
    tf = win.transform
    xmin, ymax = tf.c, tf.f
    xmax, ymin = tf.c + tf.a * cols, tf.f + tf.e * rows
    pad = 2 * max(win.xres, win.yres)
    frame = shapely.box(xmin - pad, ymin - pad, xmax + pad, ymax + pad)
    geoms: list[Any] = []
    labels: list[str] = []
    for gdf, name_field, id_field, kind in layers:
        if gdf is None or len(gdf) == 0:
            continue
        if gdf.crs is None:
            raise InputError(f"the {kind} layer has no CRS")
        local = gdf.to_crs(win.crs)
        geo = np.asarray(local.geometry.values, dtype=object)
        keep = ~(shapely.is_missing(geo) | shapely.is_empty(geo))
        geo = shapely.make_valid(geo[keep])
        sub = local[keep]
        hit = shapely.intersects(geo, frame)
        names = sub[name_field] if name_field and name_field in sub.columns else None
        ids = sub[id_field] if id_field and id_field in sub.columns else sub.index
        for i in np.flatnonzero(hit):
            g = geo[i].intersection(frame)
            if g.is_empty:
                continue
            name = None if names is None else names.iloc[i]
            geoms.append(g)
            labels.append(_feature_label(name, ids[i], kind))
    return geoms, labels


def rasterize_features(geoms: list[Any], win: DemWindow) -> tuple[np.ndarray, np.ndarray]:
    """Return (sink mask, meet codes): burned cells and 1-based feature codes of meet cells."""
    shape = win.elev.shape
    if not geoms:
        return np.zeros(shape, bool), np.zeros(shape, np.int32)
    sink = rasterize(
        ((g, 1) for g in geoms),
        out_shape=shape,
        transform=win.transform,
        all_touched=True,
        dtype="uint8",
    ).astype(bool)
    buf = _MEET_BUFFER_CELLS * max(win.xres, win.yres)
    # Later shapes overwrite earlier ones; draw in reverse so the first listed wins.
    order = range(len(geoms) - 1, -1, -1)
    meet = rasterize(
        ((geoms[i].buffer(buf), i + 1) for i in order),
        out_shape=shape,
        transform=win.transform,
        all_touched=False,
        dtype="int32",
    )
    # a burned cell always meets its feature (it may lie beyond the buffer's centres rule)
    miss = sink & (meet == 0)
    if miss.any():
        touched = rasterize(
            ((geoms[i], i + 1) for i in order),
            out_shape=shape,
            transform=win.transform,
            all_touched=True,
            dtype="int32",
        )
        meet[miss] = touched[miss]
    return sink, meet
