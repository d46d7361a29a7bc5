"""A municipality's layers folder: ``layers.toml`` checked, its vector layers read on demand.

Vectors come out in the working CRS (a projected CRS; EPSG:3071 unless layers.toml says
another), their fields named as layers.toml maps them; a floodplain given as a FEMA depth
grid comes out as polygons. Rasters (the DEM) are never read here: the terrain stage reads
windows of them in their own CRS.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
from pyproj import CRS

from georeview.config import LayersConfig, LayerSpec, load_layers_config
from georeview.errors import ConfigError, DataSourceError
from georeview.load.crs import to_crs
from georeview.load.depth_grid import RASTER_SUFFIXES, read_depth_grid
from georeview.load.geometry import drop_empty, repair_invalid
from georeview.load.schema import check_boundary, map_fields
from georeview.load.vector import layer_names, read_vector

__all__ = ["Layers", "load_layers", "read_layer"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Layers:
    """A municipality's reference layers, read lazily and cached per instance."""

    folder: Path
    config: LayersConfig
    _cache: dict[tuple[str, tuple[float, ...] | None], gpd.GeoDataFrame] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def working_crs(self) -> CRS:
        """The projected CRS for area and distance math."""
        return to_crs(self.config.working_crs, path=self.folder / "layers.toml")

    def spec(self, name: str) -> LayerSpec | None:
        """Return the layers.toml table for ``name`` (``None`` when absent or not a layer)."""
        spec = getattr(self.config, name, None)
        return spec if isinstance(spec, LayerSpec) else None

    def path(self, name: str) -> Path | None:
        """Return the file of layer ``name`` (``None`` when layers.toml has none)."""
        spec = self.spec(name)
        return None if spec is None else (self.folder / spec.path)

    def has(self, name: str) -> bool:
        """Whether layers.toml names layer ``name``."""
        return self.spec(name) is not None

    def read(
        self, name: str, *, bbox: tuple[float, float, float, float] | None = None
    ) -> gpd.GeoDataFrame | None:
        """Read vector layer ``name`` in the working CRS, or ``None`` when absent.

        Parameters
        ----------
        name : str
            A layer table of layers.toml (``wetlands``, ``floodplain``, ...).
        bbox : tuple of float, optional
            ``(minx, miny, maxx, maxy)`` in the working CRS: read only features
            that intersect it (a review reads only what is near the site).
        """
        spec = self.spec(name)
        if spec is None:
            return None
        key = (name, None if bbox is None else tuple(round(v, 3) for v in bbox))
        if key not in self._cache:
            self._cache[key] = self._read_mapped(name, spec, bbox)
        return self._cache[key]

    def _read_mapped(
        self, name: str, spec: LayerSpec, bbox: tuple[float, float, float, float] | None
    ) -> gpd.GeoDataFrame:
        """Read a layer's file and map its fields as layers.toml says."""
        path = self.folder / spec.path
        if name == "floodplain" and path.suffix.lower() in RASTER_SUFFIXES:
            gdf = read_depth_grid(path, self.working_crs, bbox=bbox, label=name)
        else:
            gdf = read_layer(
                path,
                self.working_crs,
                layer=spec.layer,
                bbox=bbox,
                label=name,
                where=spec.where,
                crs=spec.crs,
            )
        toml = self.folder / "layers.toml"
        gdf = map_fields(gdf, name, spec, toml)
        if name == "boundary":
            nb = self.config.neighbors
            check_boundary(gdf, spec, toml, nb.kind_field if nb else "CTV")
        return gdf


def _layers_to_read(path: Path, layer: str | tuple[str, ...] | None, label: str) -> list[Any]:
    """The layer names to read: those named, else every layer with geometry in the file."""
    if layer is not None:
        return [layer] if isinstance(layer, str) else list(layer)
    if not path.exists():
        return [None]  # read_vector reports the missing file
    return layer_names(path, label)


def read_layer(
    path: Path,
    working_crs: CRS,
    *,
    layer: str | tuple[str, ...] | None = None,
    bbox: tuple[float, float, float, float] | None = None,
    label: str = "layer",
    where: str | None = None,
    crs: Any = None,
) -> gpd.GeoDataFrame:
    """Read a reference layer and reproject it to the working CRS.

    ``where`` is an attribute filter (layers.toml ``where``) and ``crs`` the CRS of a
    CSV layer; any format of :mod:`georeview.load.vector` is read.

    Invalid polygons are repaired with :func:`shapely.make_valid` (reference
    layers are the municipality's; their repairs are logged, not reported);
    empty geometries are dropped.
    """
    path = Path(path)
    names = _layers_to_read(path, layer, label)
    kw: dict[str, Any] = {"bbox": bbox, "label": label, "bbox_crs": working_crs}
    if len(names) > 1:
        # NHD ships flowlines and waterbodies as two layers of one file: read them all,
        # keeping where each feature came from.
        parts = [
            read_vector(path, layer=n, where=where, crs=crs, **kw)
            .to_crs(working_crs)
            .assign(source_layer=n)
            for n in names
        ]
        gdf = gpd.GeoDataFrame(pd.concat(parts, ignore_index=True), crs=working_crs)
    else:
        gdf = read_vector(path, layer=names[0], where=where, crs=crs, **kw)
    gdf, repaired = repair_invalid(drop_empty(gdf))
    if repaired:
        log.info("%s: repaired %d invalid geometries with make_valid", path, repaired)
    return gdf.to_crs(working_crs)


def load_layers(folder: Path) -> Layers:
    """Read ``folder/layers.toml`` and check that every named file exists.

    Raises
    ------
    ConfigError
        A layer file outside the folder (unless layers.toml says ``trusted = true``).
    DataSourceError
        A layer file that does not exist.
    """
    folder = Path(folder)
    toml_path = folder / "layers.toml"
    cfg = load_layers_config(toml_path)
    to_crs(cfg.working_crs, path=toml_path)
    root = folder.resolve()
    for name in type(cfg).model_fields:
        spec = getattr(cfg, name)
        if not isinstance(spec, LayerSpec):
            continue
        # Layer paths stay inside the layers folder: a layers.toml copied from
        # elsewhere (or planted) must not read files the Village did not put there.
        if not cfg.trusted and not (folder / spec.path).resolve().is_relative_to(root):
            raise ConfigError(
                f"{spec.path!r} is outside the layers folder; keep layer files inside it,"
                " or set trusted = true in layers.toml to allow paths elsewhere",
                path=toml_path,
                field=f"{name}.path",
            )
        if not (folder / spec.path).exists():
            raise DataSourceError(
                f"layer file {spec.path!r} not found", path=toml_path, field=f"{name}.path"
            )
    return Layers(folder=folder, config=cfg)
