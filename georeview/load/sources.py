"""The public datasets ``layers build`` takes, each mapped onto its layers.toml table.

FEMA NFHL ``S_FLD_HAZ_AR`` (or a FEMA flood-depth grid), the Wisconsin Wetland Inventory,
NHD / NHDPlus HR flowlines and waterbodies, SSURGO map units (with the dominant
component's hydrologic group and K factor from the ``component`` and ``chorizon`` tables)
and TIGER road centrelines: each is read as downloaded, kept to its geometry kind and the
clip area, written as a GeoPackage and described in layers.toml with the fields it has.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
import shapely

from georeview.errors import DataSourceError
from georeview.load.crs import bbox_into
from georeview.load.depth_grid import RASTER_SUFFIXES, read_depth_grid
from georeview.load.downloads import (
    Built,
    Download,
    find_column,
    keep_clipped,
    read_download,
    refuse_elsewhere,
    toml_table,
)
from georeview.load.vector import layer_names

__all__ = [
    "KEPT",
    "KeptLayer",
    "build_floodplain",
    "build_hydrography",
    "build_kept",
    "build_soils",
    "soil_properties",
]

#: shapely geometry type ids, by the kind a layer holds.
POLYGONS = ((3, 6), "polygons")
LINES = ((1, 5), "lines")


def _named_layer(d: Download, label: str, names: tuple[str, ...], *, or_only: bool) -> Download:
    """The download with its layer named: as given, else the layer called one of ``names``.

    With ``or_only``, a file holding one layer under another name gives that layer.
    """
    if d.layer is not None:
        return d
    found = layer_names(d.path, label)
    layer = next((n for n in found if n and n.lower() in names), None)
    if layer is None and or_only and len(found) == 1:
        layer = found[0]
    return replace(d, layer=layer)


@dataclass(frozen=True)
class KeptLayer:
    """A layer kept as downloaded: its geometry kind, its source, its fields by preference."""

    kinds: tuple[tuple[int, ...], str]
    source: str
    name_fields: tuple[str, ...]
    id_fields: tuple[str, ...]


#: The layers kept as downloaded, by layers.toml table.
KEPT = {
    "wetlands": KeptLayer(
        POLYGONS, "Wisconsin Wetland Inventory", ("WETCLASS", "WETCODE"), ("WWI_ID", "OBJECTID")
    ),
    "roads": KeptLayer(LINES, "road centrelines", ("FULLNAME",), ("LINEARID",)),
}


def build_kept(
    b: Built, src: Download, name: str, crs: Any, bbox: tuple[float, ...], clip: Any
) -> None:
    """A layer of :data:`KEPT` (wetlands, roads): its geometry kind, clipped, described."""
    spec = KEPT[name]
    b.say(f"{name}: reading {Path(src.path).name}")
    g = keep_clipped(
        read_download(src, name, crs, bbox), *spec.kinds, src, clip, label=name, crs=crs
    )
    b.table(
        g,
        src,
        name,
        name,
        spec.source,
        name_field=find_column(g.columns, *spec.name_fields),
        id_field=find_column(g.columns, *spec.id_fields),
    )


def _raster_meets(d: Download, crs: Any, clip: Any) -> None:
    """Refuse a depth grid whose extent does not meet the village and its reach."""
    import rasterio

    try:
        with rasterio.open(d.path) as ds:
            if ds.crs is None:
                return  # read_depth_grid refuses it, naming the missing CRS
            left, bottom, right, top = (float(v) for v in ds.bounds)
            grid_crs = ds.crs.to_wkt()
    except rasterio.errors.RasterioError:
        return  # read_depth_grid refuses it, naming what GDAL says
    from pyproj import CRS

    b = bbox_into((left, bottom, right, top), CRS.from_user_input(grid_crs), crs.to_wkt(), d.path)
    if not shapely.intersects(shapely.box(*b), clip):
        refuse_elsewhere(d, "floodplain", crs, clip, b)


def build_floodplain(b: Built, d: Download, crs: Any, bbox: Any, clip: Any) -> None:
    """FEMA NFHL ``S_FLD_HAZ_AR`` polygons, or a FEMA depth grid's wet cells, clipped.

    Raises
    ------
    DataSourceError
        The polygons have neither ``FLD_ZONE`` nor ``SFHA_TF``.
    """
    b.say(f"floodplain: reading {Path(d.path).name}")
    if Path(d.path).suffix.lower() in RASTER_SUFFIXES:
        _raster_meets(d, crs, clip)
        g = read_depth_grid(d.path, crs, bbox=bbox, label="floodplain")
        what = "FEMA flood depth grid (depth > 0)"
        # a grid that covers the area and holds no wet cell there says "no 1 % floodplain"
        g = g[shapely.intersects(g.geometry.values, clip)]
    else:
        d = _named_layer(d, "floodplain", ("s_fld_haz_ar",), or_only=False)
        g = read_download(d, "floodplain", crs, bbox)
        what = "FEMA NFHL S_FLD_HAZ_AR"
        g = keep_clipped(g, *POLYGONS, d, clip, label="floodplain", crs=crs)
    zone = find_column(g.columns, "FLD_ZONE")
    sfha = find_column(g.columns, "SFHA_TF")
    if zone is None and sfha is None:
        raise DataSourceError(
            "has neither FLD_ZONE nor SFHA_TF: is it NFHL S_FLD_HAZ_AR? its columns are"
            f" {', '.join(map(str, g.columns.drop(g.geometry.name)))}",
            path=d.path,
            field="floodplain",
        )
    b.table(
        g,
        d,
        "floodplain",
        "S_FLD_HAZ_AR",
        what,
        id_field=find_column(g.columns, "FLD_AR_ID"),
        zone_field=zone,
        subtype_field=find_column(g.columns, "ZONE_SUBTY"),
        sfha_field=sfha,
    )


def build_hydrography(
    b: Built,
    lines: Download | None,
    bodies: Download | None,
    crs: Any,
    bbox: Any,
    clip: Any,
) -> None:
    """NHD flowlines and waterbodies as two layers of ``hydrography.gpkg``, ``FType`` named so."""
    written: list[str] = []
    names: list[str] = []
    last: gpd.GeoDataFrame | None = None
    for d, layer, kinds, option in (
        (lines, "NHDFlowline", LINES, "flowlines"),
        (bodies, "NHDWaterbody", POLYGONS, "waterbodies"),
    ):
        if d is None:
            continue
        b.say(f"{option}: reading {Path(d.path).name}")
        g = read_download(d, "hydrography", crs, bbox)
        g = keep_clipped(g, *kinds, d, clip, label=option, crs=crs)
        ftype = find_column(g.columns, "FType", "FTYPE")
        if ftype and ftype != "FType":
            g = g.rename(columns={ftype: "FType"})
        b.keep(g, d, "hydrography.gpkg", layer, key=f"hydrography.{layer}", append=bool(written))
        written.append(layer)
        names.append(Path(d.path).name)
        last = g
    first = lines or bodies
    assert first is not None
    assert last is not None
    b.toml += toml_table(
        "hydrography",
        "hydrography.gpkg",
        written,
        first,
        "NHD / NHDPlus HR " + " + ".join(written) + " (" + ", ".join(names) + ")",
        name_field=find_column(last.columns, "GNIS_NAME", "Name"),
        id_field=find_column(last.columns, "Permanent_Identifier", "HYDROID"),
    )


def _ssurgo_tables(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``component`` and ``chorizon`` tables of a SSURGO database.

    Raises
    ------
    DataSourceError
        The database lacks one of them.
    """
    import pyogrio

    try:
        tables = {str(n).lower(): str(n) for n, _ in pyogrio.list_layers(path)}
        comp = pyogrio.read_dataframe(path, layer=tables["component"], read_geometry=False)
        hz = pyogrio.read_dataframe(path, layer=tables["chorizon"], read_geometry=False)
    except KeyError as exc:
        raise DataSourceError(
            f"has no {exc.args[0]} table: SSURGO map units need the component and"
            " chorizon tables for hydrologic group and K factor (a gSSURGO database holds"
            " them)",
            path=path,
            field="soils",
        ) from None
    return comp, hz


def build_soils(b: Built, d: Download, crs: Any, bbox: Any, clip: Any) -> None:
    """SSURGO map units with the dominant component's hydrologic group and surface K.

    Raises
    ------
    DataSourceError
        Map units without ``MUKEY``, or without ``hydgrpdcd``/``kffact`` and without the
        tables they are computed from.
    """
    dd = _named_layer(d, "soils", ("soilmu_a", "mupolygon"), or_only=True)
    b.say(f"soils: reading {Path(d.path).name}")
    g = keep_clipped(
        read_download(dd, "soils", crs, bbox), *POLYGONS, dd, clip, label="soils", crs=crs
    )
    mukey = find_column(g.columns, "MUKEY")
    if mukey is None:
        raise DataSourceError("soil map units have no MUKEY field", path=d.path, field="soils")
    if find_column(g.columns, "hydgrpdcd") is None or find_column(g.columns, "kffact") is None:
        comp, hz = _ssurgo_tables(Path(d.path))
        g = g.drop(columns=[c for c in ("hydgrpdcd", "kffact") if c in g.columns])
        g = g.merge(soil_properties(comp, hz), how="left", left_on=mukey, right_index=True)
    g = gpd.GeoDataFrame(g, geometry=g.geometry.name, crs=crs)
    b.table(
        g,
        dd,
        "soils",
        "soilmu_a",
        "SSURGO soilmu_a",
        id_field=mukey,
        musym_field=find_column(g.columns, "MUSYM"),
        hsg_field="hydgrpdcd",
        kfactor_field="kffact",
    )


def soil_properties(component: pd.DataFrame, chorizon: pd.DataFrame) -> pd.DataFrame:
    """Hydrologic group and surface K factor of each map unit, from SSURGO tables.

    As SSURGO's ``muaggatt.hydgrpdcd`` ("dominant conditions"): the group of the
    component with the largest ``comppct_r``; the K factor (``kffact``) is that
    component's top horizon's (smallest ``hzdept_r``).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``mukey``, with ``hydgrpdcd`` and ``kffact``.
    """
    c = component.rename(columns={x: x.lower() for x in component.columns})
    h = chorizon.rename(columns={x: x.lower() for x in chorizon.columns})
    c = c.assign(comppct_r=pd.to_numeric(c["comppct_r"], errors="coerce").fillna(0))
    dom = c.sort_values(["mukey", "comppct_r"], ascending=[True, False]).drop_duplicates("mukey")
    h = h.assign(hzdept_r=pd.to_numeric(h["hzdept_r"], errors="coerce"))
    top = h.sort_values(["cokey", "hzdept_r"]).drop_duplicates("cokey")[["cokey", "kffact"]]
    dom = dom[["mukey", "cokey", "hydgrp"]].merge(top, how="left", on="cokey")
    dom["kffact"] = pd.to_numeric(dom["kffact"], errors="coerce")
    return dom.rename(columns={"hydgrp": "hydgrpdcd"}).set_index("mukey")[["hydgrpdcd", "kffact"]]
