"""DEM tiles for ``layers build``: one grid, stated vertical units, a VRT mosaic of those used.

The tiles must share CRS, cell size and data type; their elevation units are read from
the files (``VERTICAL_UNITS`` tag, band units) or given; only the tiles meeting the clip
area are copied into ``dem/`` and mosaicked as ``dem.vrt``, as ``gdalbuildvrt`` would.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import shapely

from georeview.errors import ConfigError, DataSourceError
from georeview.load.crs import crs_text
from georeview.load.downloads import Built, bounds_text, sha256_of, toml_string

__all__ = ["Tile", "build_dem", "vertical_units", "write_vrt"]

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

#: numpy dtype -> GDAL VRT ``dataType``.
_VRT_TYPES = {
    "float32": "Float32",
    "float64": "Float64",
    "uint16": "UInt16",
    "int16": "Int16",
    "uint8": "Byte",
    "int32": "Int32",
    "uint32": "UInt32",
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


def _read_tiles(tiles: tuple[Path, ...]) -> list[Tile]:
    """Read each tile's header, refusing one that is not a raster or not of the first's grid."""
    import rasterio

    metas = []
    for t in tiles:
        try:
            with rasterio.open(t) as ds:
                tag = ds.tags().get("VERTICAL_UNITS") or (ds.units[0] if ds.units else None)
                metas.append(Tile(Path(t), ds.crs, ds.res, ds.dtypes[0], ds.nodata, ds.bounds, tag))
        except rasterio.errors.RasterioError as exc:
            raise DataSourceError(f"cannot open as a raster ({exc})", path=t, field="dem") from None
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
    return metas


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


def build_dem(b: Built, tiles: tuple[Path, ...], units: str | None, crs: Any, clip: Any) -> None:
    """Copy the tiles meeting the clip area into ``dem/`` and mosaic them as ``dem.vrt``.

    Raises
    ------
    DataSourceError
        A tile that is not a raster, has no CRS or is of another grid; no tile meets the area.
    ConfigError
        Vertical units neither stated nor given.
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
    b.say(f"dem: copying {len(used)} of {len(metas)} tiles, writing dem.vrt")
    (b.out / "dem").mkdir(exist_ok=True)
    for m in used:
        shutil.copy2(m.path, b.out / "dem" / m.path.name)
    write_vrt(b.out / "dem.vrt", [b.out / "dem" / m.path.name for m in used])
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
    }
    b.toml += [
        "[dem]",
        'path = "dem.vrt"',
        f'vertical_units = "{units}"',
        f"source = {toml_string('DEM tiles: ' + ', '.join(m.path.name for m in used))}",
        "",
    ]


@dataclass(frozen=True)
class _Opened:
    path: Path
    width: int
    height: int
    bounds: Any
    crs: Any
    dtype: str
    nodata: float | None
    block: tuple[int, int]
    res: tuple[float, float]


def _open_all(tiles: list[Path]) -> list[_Opened]:
    import rasterio

    opened = []
    for t in tiles:
        with rasterio.open(t) as ds:
            res = (ds.transform.a, -ds.transform.e)
            block = ds.block_shapes[0]
            opened.append(
                _Opened(
                    t, ds.width, ds.height, ds.bounds, ds.crs, ds.dtypes[0], ds.nodata, block, res
                )
            )
    return opened


def _add_source(
    band: Any, o: _Opened, vrt: Path, dtype: str, origin: tuple[float, float, float, float]
) -> None:
    """One tile's ``SimpleSource`` (or ``ComplexSource`` with nodata) in the VRT band."""
    import xml.etree.ElementTree as ET

    left, top, rx, ry = origin
    src = ET.SubElement(band, "ComplexSource" if o.nodata is not None else "SimpleSource")
    ET.SubElement(src, "SourceFilename", relativeToVRT="1").text = str(
        Path(o.path).resolve().relative_to(vrt.parent.resolve())
    )
    ET.SubElement(src, "SourceBand").text = "1"
    ET.SubElement(
        src,
        "SourceProperties",
        RasterXSize=str(o.width),
        RasterYSize=str(o.height),
        DataType=dtype,
        BlockXSize=str(o.block[1]),
        BlockYSize=str(o.block[0]),
    )
    w, h = str(o.width), str(o.height)
    ET.SubElement(src, "SrcRect", xOff="0", yOff="0", xSize=w, ySize=h)
    xoff = round((o.bounds.left - left) / rx)
    yoff = round((top - o.bounds.top) / ry)
    ET.SubElement(src, "DstRect", xOff=str(xoff), yOff=str(yoff), xSize=w, ySize=h)
    if o.nodata is not None:
        ET.SubElement(src, "NODATA").text = repr(float(o.nodata))


def write_vrt(path: Path, tiles: list[Path]) -> Path:
    """Write a GDAL VRT mosaic of north-up tiles of one grid (paths relative to it).

    Tiles must share CRS, cell size and data type (checked by the caller); where tiles
    overlap, the later one wins, as in ``gdalbuildvrt``.
    """
    import xml.etree.ElementTree as ET

    opened = _open_all(tiles)
    first = opened[0]
    rx, ry = first.res
    left = min(o.bounds.left for o in opened)
    top = max(o.bounds.top for o in opened)
    right = max(o.bounds.right for o in opened)
    bottom = min(o.bounds.bottom for o in opened)
    width = round((right - left) / rx)
    height = round((top - bottom) / ry)
    dtype = _VRT_TYPES[first.dtype]
    root = ET.Element("VRTDataset", rasterXSize=str(width), rasterYSize=str(height))
    ET.SubElement(root, "SRS").text = first.crs.to_wkt()
    ET.SubElement(root, "GeoTransform").text = f"{left!r}, {rx!r}, 0, {top!r}, 0, {-ry!r}"
    band = ET.SubElement(root, "VRTRasterBand", dataType=dtype, band="1")
    if first.nodata is not None:
        ET.SubElement(band, "NoDataValue").text = repr(float(first.nodata))
    for o in opened:
        _add_source(band, o, path, dtype, (left, top, rx, ry))
    ET.ElementTree(root).write(path, encoding="utf-8")
    return path
