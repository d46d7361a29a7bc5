"""DEM tiles for ``layers build``: one grid, stated vertical units, one mosaic of the reach.

The tiles must share CRS, cell size, data type and grid origin, be north-up and store
heights as they are (no band scale or offset); their elevation units are read from the
files (``VERTICAL_UNITS`` tag, band units) or given. The tiles meeting the clip area are
mosaicked by :func:`rasterio.merge.merge` (GDAL's reads, each tile's own nodata mask)
into ``dem.tif``, cut to the clip area: cells no tile covers are the mosaic's nodata,
never 0 m, and no tile is copied under its own name (two ``dem.tif`` from two folders
were one file).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import shapely

from georeview.errors import ConfigError, DataSourceError, OutputError
from georeview.load.crs import crs_text
from georeview.load.downloads import Built, bounds_text, sha256_of, toml_string
from georeview.measure.dem import stored_as_is

__all__ = ["MOSAIC", "Tile", "build_dem", "mosaic", "vertical_units"]

#: The mosaic's file name in a layers folder.
MOSAIC = "dem.tif"

#: The nodata value of a mosaic whose tiles name none, by data type: the value GDAL's
#: tools and most DEM producers use for it (a height no Wisconsin ground has).
_FILL = {
    "float32": -9999.0, "float64": -9999.0, "int16": -32768, "int32": -2147483648,
    "uint16": 65535, "uint32": 4294967295, "uint8": 255,
}  # fmt: skip

#: Vertical units as rasterio gives them (``ds.units``) or a tag states them.
_UNITS = {
    "m": "m",
    "metre": "m",
    "meter": "m",
    "metres": "m",
    "meters": "m",
    "ft": "ft",
    "foot": "ft",
    "feet": "ft",
    "us_ft": "us_ft",
    "us survey foot": "us_ft",
    "ftus": "us_ft",
    "us-ft": "us_ft",
}


@dataclass(frozen=True)
class Tile:
    """What a DEM tile is, read from its header."""

    path: Path
    crs: Any
    res: tuple[float, float]
    dtype: str
    nodata: float | None
    bounds: Any
    #: The vertical units the file states (tag or band units), as written there.
    units: str | None
    transform: Any = None
    #: Band 1's scale and offset (GDAL metadata): heights = stored * scale + offset.
    scale: float = 1.0
    offset: float = 0.0


def _read_tiles(tiles: tuple[Path, ...]) -> list[Tile]:
    """Read each tile's header, refusing one that is not a raster or not of the first's grid."""
    import rasterio

    metas = []
    for t in tiles:
        try:
            with rasterio.open(t) as ds:
                tag = ds.tags().get("VERTICAL_UNITS") or (ds.units[0] if ds.units else None)
                scale, offset = float(ds.scales[0]), float(ds.offsets[0])
                head = (ds.crs, ds.res, ds.dtypes[0], ds.nodata, ds.bounds, tag, ds.transform)
                metas.append(Tile(Path(t), *head, scale, offset))
        except rasterio.errors.RasterioError as exc:
            raise DataSourceError(f"cannot open as a raster ({exc})", path=t, field="dem") from None
    for m in metas:
        problem = stored_as_is(m.transform, m.scale, m.offset)
        if problem:
            raise DataSourceError(problem, path=m.path, field="dem")
    first = metas[0]
    if first.crs is None:
        raise DataSourceError("the DEM tile has no CRS", path=first.path, field="dem")
    for m in metas[1:]:
        if m.crs != first.crs or m.res != first.res or m.dtype != first.dtype:
            raise DataSourceError(
                f"differs from {first.path.name} in CRS, cell size or type; a mosaic needs tiles"
                " of one grid",
                path=m.path,
                field="dem",
            )
        if not _aligned(m, first):
            raise DataSourceError(
                f"its cells are offset from those of {first.path.name} by a fraction of a cell;"
                " a mosaic needs tiles of one grid (resample it onto theirs with gdalwarp -tap)",
                path=m.path,
                field="dem",
            )
    return metas


def _aligned(m: Tile, first: Tile) -> bool:
    """Whether ``m``'s cell corners fall on ``first``'s grid (to a thousandth of a cell)."""
    rx, ry = first.res
    dx = (m.bounds.left - first.bounds.left) / rx
    dy = (m.bounds.top - first.bounds.top) / ry
    return abs(dx - round(dx)) < 1e-3 and abs(dy - round(dy)) < 1e-3


def vertical_units(metas: list[Tile], given: str | None) -> str:
    """The DEM's elevation units: as given, else as every tile that states them says.

    Raises
    ------
    ConfigError
        Not given and not stated (or stated differently), or not ``m``, ``ft``, ``us_ft``.
    """
    stated = {(_UNITS.get(str(m.units).strip().lower()) if m.units else None) for m in metas}
    stated.discard(None)
    units = given
    if units is None:
        if len(stated) != 1:
            raise ConfigError(
                "the DEM does not state its vertical units: pass --dem-vertical-units m, ft or"
                " us_ft",
                field="--dem-vertical-units",
            )
        units = stated.pop()
    if units not in ("m", "ft", "us_ft"):
        raise ConfigError(f"must be m, ft or us_ft, got {units!r}", field="--dem-vertical-units")
    return units


def _clip_bounds_in_dem(metas: list[Tile], crs: Any, clip: Any) -> tuple[float, ...]:
    """The clip area's bounds in the DEM's CRS (edges densified)."""
    from pyproj import Transformer

    to_dem = Transformer.from_crs(crs, metas[0].crs, always_xy=True)
    minx, miny, maxx, maxy = shapely.bounds(clip)
    return tuple(to_dem.transform_bounds(minx, miny, maxx, maxy, densify_pts=21))


def _tiles_meeting(metas: list[Tile], cb: tuple[float, ...]) -> list[Tile]:
    """The tiles whose bounds meet the clip area's ``cb`` (in the DEM's CRS)."""
    return [
        m
        for m in metas
        if not (
            m.bounds.right < cb[0]
            or m.bounds.left > cb[2]
            or m.bounds.top < cb[1]
            or m.bounds.bottom > cb[3]
        )
    ]


def _snapped(cb: tuple[float, ...], used: list[Tile]) -> tuple[float, float, float, float]:
    """The clip bounds ``cb`` grown to whole cells of the tiles' grid, within the tiles."""
    first = used[0]
    rx, ry = first.res
    x0, y0 = first.bounds.left, first.bounds.top
    left = max(cb[0], min(m.bounds.left for m in used))
    right = min(cb[2], max(m.bounds.right for m in used))
    bottom = max(cb[1], min(m.bounds.bottom for m in used))
    top = min(cb[3], max(m.bounds.top for m in used))
    return (
        x0 + math.floor((left - x0) / rx + 1e-9) * rx,
        y0 - math.ceil((y0 - bottom) / ry - 1e-9) * ry,
        x0 + math.ceil((right - x0) / rx - 1e-9) * rx,
        y0 - math.floor((y0 - top) / ry + 1e-9) * ry,
    )


def mosaic(used: list[Tile], bounds: tuple[float, ...], out: Path, units: str) -> dict[str, Any]:
    """Mosaic ``used`` over ``bounds`` into the GeoTIFF ``out``, with rasterio's merge.

    Each tile is read with its own nodata mask; cells no tile covers are the mosaic's
    nodata: the first tile's that names one, else :data:`_FILL` for the type. Where
    tiles overlap the first given wins. The vertical units are written as the
    ``VERTICAL_UNITS`` tag.

    Returns
    -------
    dict
        ``nodata``, ``cells``, ``cells_without_data``, ``width``, ``height``.

    Raises
    ------
    OutputError
        The mosaic cannot be written.
    """
    import numpy as np
    import rasterio
    from rasterio.merge import merge
    from rasterio.transform import from_origin
    from rasterio.windows import Window

    first = used[0]
    rx, ry = first.res
    nodata = next((m.nodata for m in used if m.nodata is not None), _FILL[first.dtype])
    width = max(1, round((bounds[2] - bounds[0]) / rx))
    height = max(1, round((bounds[3] - bounds[1]) / ry))
    tiled = width >= 256 and height >= 256
    profile = {
        "driver": "GTiff", "width": width, "height": height, "count": 1,
        "dtype": first.dtype, "crs": first.crs, "nodata": nodata,
        "transform": from_origin(bounds[0], bounds[3], rx, ry),
        "compress": "deflate", "predictor": 3 if first.dtype.startswith("float") else 2,
        "BIGTIFF": "IF_SAFER",
    } | ({"tiled": True, "blockxsize": 256, "blockysize": 256} if tiled else {})  # fmt: skip
    try:
        with rasterio.open(out, "w", **profile) as dst:
            dst.update_tags(VERTICAL_UNITS=units)
            merge([str(m.path) for m in used], bounds=bounds, nodata=nodata, dst_path=dst)
        empty = 0
        with rasterio.open(out) as ds:
            for r0 in range(0, height, 1024):
                win = Window(0, r0, width, min(1024, height - r0))
                empty += int(np.count_nonzero(ds.read_masks(1, window=win) == 0))
    except (OSError, rasterio.errors.RasterioError) as exc:
        detail = getattr(exc, "strerror", None) or " ".join(str(exc).split())[:200]
        raise OutputError(f"cannot write ({detail})", path=out) from None
    return {
        "nodata": float(nodata), "cells": width * height, "cells_without_data": empty,
        "width": width, "height": height,
    }  # fmt: skip


def build_dem(b: Built, tiles: tuple[Path, ...], units: str | None, crs: Any, clip: Any) -> None:
    """Mosaic the tiles meeting the clip area into ``dem.tif``, cut to the area.

    Raises
    ------
    DataSourceError
        A tile that is not a raster, has no CRS, is of another grid, is scaled, south-up
        or rotated; no tile meets the area.
    ConfigError
        Vertical units neither stated nor given.
    OutputError
        The mosaic cannot be written.
    """
    b.say(f"dem: reading {len(tiles)} tile header{'s' if len(tiles) != 1 else ''}")
    metas = _read_tiles(tiles)
    units = vertical_units(metas, units)
    cb = _clip_bounds_in_dem(metas, crs, clip)
    used = _tiles_meeting(metas, cb)
    if not used:
        tb = (
            min(m.bounds.left for m in metas),
            min(m.bounds.bottom for m in metas),
            max(m.bounds.right for m in metas),
            max(m.bounds.top for m in metas),
        )
        unit = metas[0].crs.linear_units or "units"
        raise DataSourceError(
            f"no DEM tile meets the village and its reach: the {len(metas)} tiles lie within"
            f" {bounds_text(tb)}, the village and its reach within {bounds_text(cb)}"
            f" ({crs_text(metas[0].crs)}, {unit}); are they tiles of another area?",
            path=metas[0].path,
            field="dem",
        )
    b.say(f"dem: mosaicking {len(used)} of {len(metas)} tiles into {MOSAIC}")
    made = mosaic(used, _snapped(cb, used), b.out / MOSAIC, units)
    b.provenance["dem"] = {
        "tiles": [
            {
                "file": str(m.path.resolve()),
                "sha256": sha256_of(m.path),
                "bytes": m.path.stat().st_size,
            }
            for m in used
        ],
        "tiles_given": len(metas),
        "vertical_units": units,
        "crs": crs_text(metas[0].crs),
        "mosaic": {"file": MOSAIC, "sha256": sha256_of(b.out / MOSAIC)} | made,
    }
    b.toml += [
        "[dem]",
        f'path = "{MOSAIC}"',
        f'vertical_units = "{units}"',
        f"source = {toml_string('DEM tiles: ' + ', '.join(m.path.name for m in used))}",
        "",
    ]
