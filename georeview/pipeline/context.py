"""The screening context: a municipality's layers prepared once for every partition.

Reference layers are dissolved once and cut into small pieces (like PostGIS
``ST_Subdivide``, :func:`georeview.measure.overlay.subdivide`) so that an STRtree pairs
parcels with pieces and most pairs need no intersection. The context holds plain arrays
and strings only: it pickles small and is sent once to each Dask worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from georeview.measure.overlay import MAX_PIECE_VERTICES, dissolve_pieces, subdivide
from georeview.pipeline.assume import WISCONSIN_COLUMNS, Assumption
from georeview.rules import Ordinance

__all__ = ["ScreenContext", "build_context"]


@dataclass(frozen=True)
class ScreenContext:
    """Everything a partition needs, computed once and shipped once to each worker.

    Plain arrays and strings only, so it pickles small and identically everywhere.
    """

    working_crs: str
    sqft_per_unit2: float
    municipality: str
    village_name: str
    village: Any
    extraterritorial: Any
    muni_pieces: Any
    muni_labels: Any
    muni_names: tuple[str, ...]
    floodplain: Any | None
    floodway: Any | None
    wetlands: Any | None
    dem_path: str | None
    dem_vertical_units: str | None
    assumption: Assumption
    columns: dict[str, str]
    #: ``(minx, miny, maxx, maxy)`` in the working CRS that the layers describe (the
    #: municipalities grown by the widest extraterritorial reach, within the working
    #: CRS's area of use); parcels beyond it become error rows, never "outside".
    extent: tuple[float, float, float, float] | None = None
    #: Land whose extraterritorial status is unknown (no neighbours layer), or None.
    undetermined: Any | None = None

    @property
    def ordinance(self) -> Ordinance:
        """The municipality's ordinance (cached by :func:`georeview.rules.load_ordinance`)."""
        from georeview.rules import load_ordinance

        return load_ordinance(self.municipality)


def build_context(
    layers: Any,
    assumption: Assumption | None = None,
    columns: Mapping[str, str] | None = None,
    *,
    max_vertices: int = MAX_PIECE_VERTICES,
) -> ScreenContext:
    """Prepare the layers of a municipality for screening: dissolve, subdivide, locate.

    Parameters
    ----------
    layers : georeview.load.Layers
        From :func:`georeview.load.load_layers`.
    assumption : Assumption, optional
        The assumed activity (default: the whole parcel disturbed).
    columns : mapping, optional
        Role -> field map of the parcel layer (default: Wisconsin statewide schema).
    """
    from georeview.measure.areas import floodway, sfha, sqft_per_crs_unit2
    from georeview.pipeline.jurisdictions import jurisdictions_for

    cfg = layers.config
    crs = layers.working_crs
    j = jurisdictions_for(layers)
    names = (j.village.name, *(m.name for m in j.neighbours))
    muni_parts, muni_labels = [], []
    for k, geom in enumerate([j.village.geometry, *(m.geometry for m in j.neighbours)]):
        # the village keeps its own limits; neighbours lose what overlaps the village
        g = geom if k == 0 else shapely.difference(geom, j.village.geometry)
        p = subdivide(np.array([shapely.make_valid(g)], dtype=object), max_vertices)
        muni_parts.append(p)
        muni_labels.append(np.full(p.size, k, dtype=np.intp))
    fp = layers.read("floodplain")
    fp_sfha = fp_way = None
    if fp is not None and cfg.floodplain is not None:
        spec = cfg.floodplain
        fp_sfha = dissolve_pieces(sfha(fp, spec.zone_field, spec.sfha_field).geometry.values)
        fp_way = dissolve_pieces(floodway(fp, spec.subtype_field).geometry.values)
    wet = layers.read("wetlands")
    dem = cfg.dem
    return ScreenContext(
        working_crs=crs.to_wkt(),
        sqft_per_unit2=sqft_per_crs_unit2(crs),
        municipality=cfg.municipality,
        village_name=j.village.name,
        village=subdivide(np.array([j.village.geometry], dtype=object), max_vertices),
        extraterritorial=subdivide(np.array([j.extraterritorial], dtype=object), max_vertices),
        undetermined=(
            None
            if shapely.is_empty(j.undetermined)
            else subdivide(np.array([j.undetermined], dtype=object), max_vertices)
        ),
        muni_pieces=np.concatenate(muni_parts),
        muni_labels=np.concatenate(muni_labels),
        muni_names=names,
        floodplain=fp_sfha,
        floodway=fp_way,
        wetlands=None if wet is None else dissolve_pieces(wet.geometry.values, max_vertices),
        dem_path=None if dem is None else str(layers.folder / dem.path),
        dem_vertical_units=None if dem is None else dem.vertical_units,
        assumption=assumption or Assumption(),
        columns=dict(columns or WISCONSIN_COLUMNS),
    )
