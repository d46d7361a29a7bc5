"""Layers folders: what one holds (for report.json) and ``georeview layers build``.

:func:`layer_inventory` lists every layer of a folder with its file, feature count,
CRS and vintage. :func:`build_layers` makes a municipality's layers folder from the
public downloads a planner has (see the README "Building a layers folder").
"""

from __future__ import annotations

from typing import Any

from georeview.config import LayerSpec
from georeview.load.vector import RASTER_SUFFIXES, layer_names, read_vector, vector_info

__all__ = ["layer_inventory"]


def layer_inventory(layers: Any) -> list[dict[str, Any]]:
    """Every layer named in layers.toml: file, layer, filter, features, CRS, vintage.

    Vector layers give their feature count (after the ``where`` filter); rasters give
    ``features = None`` and their cell count. The CRS is the file's own (vectors are
    reprojected to the working CRS when read; rasters are read in theirs).
    """
    out: list[dict[str, Any]] = []
    cfg = layers.config
    for name in type(cfg).model_fields:
        spec = getattr(cfg, name)
        if not isinstance(spec, LayerSpec):
            continue
        path = layers.folder / spec.path
        row: dict[str, Any] = {
            "name": name,
            "file": spec.path,
            "layer": list(spec.layer) if isinstance(spec.layer, tuple) else spec.layer,
            "where": spec.where,
            "features": None,
            "cells": None,
            "crs": None,
            "vintage": spec.vintage,
            "source": spec.source,
            "synthetic": spec.synthetic,
        }
        if path.suffix.lower() in RASTER_SUFFIXES:
            import rasterio

            with rasterio.open(path) as ds:
                row["cells"] = int(ds.width) * int(ds.height)
                row["crs"] = _crs_text(ds.crs)
        else:
            if spec.layer is None:
                names = layer_names(path, name)  # read_layer reads them all
            else:
                names = [spec.layer] if isinstance(spec.layer, str) else list(spec.layer)
            total = 0
            for layer in names:
                kw = {"layer": layer, "label": name, "crs": spec.crs}
                info = vector_info(path, force_count=spec.where is None, **kw)
                if spec.where is None:
                    total += info.features
                else:
                    total += len(read_vector(path, where=spec.where, **kw))
                row["crs"] = _crs_text(info.crs)
            row["features"] = total
        out.append(row)
    return out


def _crs_text(crs: Any) -> str | None:
    """``EPSG:3071`` when the CRS has a code, else its name."""
    if crs is None:
        return None
    from pyproj import CRS

    c = CRS.from_user_input(crs if isinstance(crs, str) else crs.to_wkt())
    code = c.to_epsg(min_confidence=90)
    return f"EPSG:{code}" if code else c.name
