"""Coordinate reference systems on loading: the working CRS, bboxes between CRSs, CRS names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyproj import CRS
from pyproj.exceptions import CRSError as PyprojCRSError

from georeview.errors import CRSError

__all__ = ["bbox_into", "crs_text", "to_crs"]


def to_crs(value: Any, *, path: object = None, field: str | None = "working_crs") -> CRS:
    """Turn any CRS input (``"EPSG:3071"``, WKT, a CRS) into a projected :class:`pyproj.CRS`.

    Raises
    ------
    CRSError
        Not a CRS, or a geographic one (area and distance need a projected CRS).
    """
    try:
        crs = CRS.from_user_input(value)
    except PyprojCRSError as exc:
        raise CRSError(f"not a CRS: {value!r} ({exc})", path=path, field=field) from None
    if not crs.is_projected:
        raise CRSError(
            f"{crs.name} is not projected; area and distance need a projected CRS "
            "such as EPSG:3071",
            path=path,
            field=field,
        )
    return crs


def bbox_into(
    bbox: tuple[float, float, float, float], src: CRS, layer_crs: str, path: Path
) -> tuple[float, float, float, float]:
    """Return a bbox in ``src`` transformed into the layer's CRS (densified edges)."""
    from pyproj import Transformer

    try:
        dst = CRS.from_user_input(layer_crs)
    except PyprojCRSError as exc:
        raise CRSError(f"unreadable CRS ({exc})", path=path) from None
    t = Transformer.from_crs(src, dst, always_xy=True)
    minx, miny, maxx, maxy = bbox
    return t.transform_bounds(minx, miny, maxx, maxy, densify_pts=21)


def crs_text(crs: Any) -> str | None:
    """``EPSG:3071`` when the CRS has a code, else its name (``None`` for no CRS)."""
    if crs is None:
        return None
    c = CRS.from_user_input(crs if isinstance(crs, str) else crs.to_wkt())
    code = c.to_epsg(min_confidence=90)
    return f"EPSG:{code}" if code else c.name
