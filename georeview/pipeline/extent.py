"""The extent the layers describe, and parcels beyond it (error rows, never "outside")."""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely

from georeview.errors import CRSError
from georeview.pipeline.context import ScreenContext
from georeview.pipeline.results import RESULT_COLUMNS

__all__ = ["check_parcels_within", "layers_extent", "mark_outside_extent"]


#: Result columns kept for a parcel beyond the layers' extent (the rest are emptied).
KEPT_OUTSIDE = ("row", "parcel_id", "status", "error", "area_sqft")


def mark_outside_extent(out: Any, ctx: ScreenContext) -> Any:
    """Make parcels beyond ``ctx.extent`` error rows, with no jurisdiction or answer.

    Such a parcel is not "outside the village" as far as the layers know: they say
    nothing of it (parcels of another state, a wrong CRS). It keeps its row, id and area
    and says why it has no answer.
    """
    if ctx.extent is None or len(out) == 0 or out.crs is None:
        return out
    from pyproj import CRS, Transformer

    t = Transformer.from_crs(CRS.from_wkt(ctx.working_crs), out.crs, always_xy=True)
    box = shapely.box(*t.transform_bounds(*ctx.extent, densify_pts=21))
    geoms = out.geometry.values
    present = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    beyond = present & (out["status"].to_numpy(dtype=object) != "error")
    beyond[beyond] = ~shapely.intersects(geoms[beyond], box)
    if not beyond.any():
        return out
    out = out.copy()
    out.loc[beyond, "status"] = "error"
    out.loc[beyond, "error"] = (
        "outside the layers' extent (the municipality and its neighbours grown by the widest"
        " extraterritorial reach, within the working CRS's area of use): not screened"
    )
    for col in RESULT_COLUMNS:
        if col not in KEPT_OUTSIDE:
            out.loc[beyond, col] = np.nan if out[col].dtype.kind == "f" else None
    return out


def layers_extent(layers: Any) -> tuple[float, float, float, float] | None:
    """The box, in the working CRS, that the layers describe (see :class:`ScreenContext`).

    The boundary layers' bounds grown by the widest extraterritorial reach the ordinance
    gives any municipality: the layers describe nothing beyond it.
    """
    from pyproj import Transformer

    from georeview.measure.areas import sqft_per_crs_unit2
    from georeview.rules import load_ordinance
    from georeview.units import FT_PER_MILE

    reach = load_ordinance(layers.config.municipality).param("etj_miles")
    widest_ft = max(float(v) for v in reach.values()) * FT_PER_MILE

    crs = layers.working_crs
    boxes = [
        g.total_bounds
        for g in (layers.read("boundary"), layers.read("neighbors"))
        if g is not None and len(g)
    ]
    if not boxes:
        return None
    b = np.vstack(boxes)
    grow = widest_ft / float(np.sqrt(sqft_per_crs_unit2(crs)))
    ext = [b[:, 0].min() - grow, b[:, 1].min() - grow, b[:, 2].max() + grow, b[:, 3].max() + grow]
    aou = crs.area_of_use
    if aou is not None:
        t = Transformer.from_crs("EPSG:4326", crs, always_xy=True)
        a = t.transform_bounds(aou.west, aou.south, aou.east, aou.north, densify_pts=21)
        ext = [max(ext[0], a[0]), max(ext[1], a[1]), min(ext[2], a[2]), min(ext[3], a[3])]
    minx, miny, maxx, maxy = (float(v) for v in ext)
    return minx, miny, maxx, maxy


def check_parcels_within(info: Any, extent: Any, layers: Any, path: str) -> None:
    """Refuse a parcel file whose stored bounds lie wholly beyond the layers' extent."""
    from pyproj import CRS, Transformer

    if extent is None or info.bounds is None or info.crs is None:
        return
    t = Transformer.from_crs(CRS.from_user_input(info.crs), layers.working_crs, always_xy=True)
    west, south, east, north = info.bounds  # VectorInfo.bounds: (minx, miny, maxx, maxy)
    try:
        b = t.transform_bounds(west, south, east, north, densify_pts=21)
    except Exception:  # pyproj: bounds that do not transform at all
        b = (np.inf,) * 4
    finite = np.isfinite(b).all()
    if not finite or b[2] < extent[0] or b[0] > extent[2] or b[3] < extent[1] or b[1] > extent[3]:
        lon = Transformer.from_crs(CRS.from_user_input(info.crs), "EPSG:4326", always_xy=True)
        w, s, e, n = lon.transform_bounds(west, south, east, north, densify_pts=21)
        raise CRSError(
            f"lies wholly outside the area the layers describe (parcels at longitude {w:.2f}"
            f" to {e:.2f}, latitude {s:.2f} to {n:.2f}; layers of {layers.config.municipality}"
            f" in {layers.working_crs.name}): are these the right layers, and is the parcel"
            " file's CRS right?",
            path=path,
            field="parcels",
        )
