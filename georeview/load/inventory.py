"""What a layers folder holds, for report.json: each layer's file, features, CRS and vintage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from georeview.config import LayerSpec
from georeview.load.crs import crs_text
from georeview.load.depth_grid import RASTER_SUFFIXES
from georeview.load.vector import layer_names, read_vector, vector_info

__all__ = ["layer_inventory"]


def _raster_row(path: Path) -> dict[str, Any]:
    import rasterio

    with rasterio.open(path) as ds:
        return {"cells": int(ds.width) * int(ds.height), "crs": crs_text(ds.crs)}


def _vector_row(path: Path, name: str, spec: LayerSpec) -> dict[str, Any]:
    """Features (after the ``where`` filter) summed over the layers read, and the CRS."""
    if spec.layer is None:
        names = layer_names(path, name)  # read_layer reads them all
    else:
        names = [spec.layer] if isinstance(spec.layer, str) else list(spec.layer)
    total = 0
    crs = None
    for layer in names:
        kw: dict[str, Any] = {"layer": layer, "label": name, "crs": spec.crs}
        info = vector_info(path, force_count=spec.where is None, **kw)
        if spec.where is None:
            total += info.features
        else:
            total += len(read_vector(path, where=spec.where, **kw))
        crs = crs_text(info.crs)
    return {"features": total, "crs": crs}


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
            row.update(_raster_row(path))
        else:
            row.update(_vector_row(path, name, spec))
        out.append(row)
    return out
