"""Layers folders: what one holds (for report.json) and ``georeview layers build``.

:func:`layer_inventory` lists every layer of a folder with its file, feature count,
CRS and vintage. :func:`build_layers` makes a municipality's layers folder from the
public downloads a planner has (see the README "Building a layers folder").
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from georeview.config import LayerSpec
from georeview.errors import ConfigError, DataSourceError, GeometryError, OutputError
from georeview.load.vector import (
    RASTER_SUFFIXES,
    layer_names,
    read_depth_grid,
    read_vector,
    vector_info,
)

__all__ = ["Download", "build_layers", "layer_inventory", "soil_properties", "write_vrt"]


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


# --------------------------------------------------------------------------- layers build

_M_PER_MI = 1609.344
_FT_PER_MI = 5280.0
_TITLE = {"V": "Village of ", "C": "City of ", "T": "Town of "}


@dataclass(frozen=True)
class Download:
    """One public download given to ``layers build``: a file and the layer in it."""

    path: Path
    layer: str | None = None
    vintage: str | None = None


@dataclass
class _Built:
    provenance: dict[str, Any] = field(default_factory=dict)
    toml: list[str] = field(default_factory=list)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def _q(text: str) -> str:
    """A TOML basic string."""
    return json.dumps(text, ensure_ascii=False)


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _source(d: Download, label: str, *, kept: int, read: int, where: str | None = None) -> dict:
    p = Path(d.path)
    return {
        "file": str(p.resolve()),
        "layer": d.layer,
        "where": where,
        "sha256": _sha256(p),
        "bytes": sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
        if p.is_dir()
        else p.stat().st_size,
        "modified": dt.datetime.fromtimestamp(p.stat().st_mtime, dt.UTC).date().isoformat(),
        "vintage": d.vintage,
        "features_read": read,
        "features_kept": kept,
    }


def _read(d: Download, label: str, crs: Any, bbox: Any = None, where: str | None = None) -> Any:
    g = read_vector(d.path, layer=d.layer, label=label, bbox=bbox, bbox_crs=crs, where=where)
    g = g[~(g.geometry.isna() | g.geometry.is_empty)]
    invalid = ~g.geometry.is_valid
    if invalid.any():
        g = g.set_geometry(g.geometry.make_valid())
    return g.to_crs(crs)


def _write(gdf: gpd.GeoDataFrame, path: Path, layer: str, append: bool = False) -> None:
    import pyogrio

    pyogrio.write_dataframe(
        gdf,
        path,
        layer=layer,
        driver="GPKG",
        append=append,
        promote_to_multi=True,
        dataset_options=None if append else {"VERSION": "1.3"},
    )


def _keep_types(g: gpd.GeoDataFrame, kinds: tuple[int, ...], what: str, d: Download) -> Any:
    types = shapely.get_type_id(g.geometry.values)
    ok = np.isin(types, kinds)
    if len(g) and not ok.any():
        raise GeometryError(
            f"holds no {what} (its geometries are {', '.join(sorted(set(g.geom_type)))})",
            path=d.path,
            field=d.layer,
        )
    return g[ok]


def _find(columns: Any, *names: str) -> str | None:
    lower = {str(c).lower(): c for c in columns}
    return next((lower[n.lower()] for n in names if n.lower() in lower), None)


def build_layers(
    out: Path | str,
    *,
    municipality: str,
    name: str,
    kind: str,
    boundaries: Download,
    floodplain: Download | None = None,
    wetlands: Download | None = None,
    flowlines: Download | None = None,
    waterbodies: Download | None = None,
    soils: Download | None = None,
    roads: Download | None = None,
    dem_tiles: tuple[Path, ...] = (),
    dem_vertical_units: str | None = None,
    working_crs: str = "EPSG:3071",
    city_class: dict[str, int] | None = None,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Make a municipality's layers folder from public downloads.

    Parameters
    ----------
    out : path
        The layers folder to write (``layers.toml``, one GeoPackage per layer,
        ``dem.vrt`` with its tiles, ``provenance.json``).
    municipality : str
        The ordinance folder's name (``deerfield``).
    name, kind : str
        The LTSB ``MCD_NAME`` and ``CTV`` (``C``, ``V`` or ``T``) of the municipality.
    boundaries : Download
        Wisconsin LTSB municipal boundaries (statewide or one county), as downloaded.
    floodplain : Download, optional
        FEMA NFHL ``S_FLD_HAZ_AR`` (county or state database, shapefile zip), or a FEMA
        flood-depth raster (depth > 0 is the 1 % floodplain).
    wetlands : Download, optional
        Wisconsin Wetland Inventory polygons.
    flowlines, waterbodies : Download, optional
        NHD or NHDPlus HR ``NHDFlowline`` and ``NHDWaterbody``.
    soils : Download, optional
        SSURGO: a database holding ``soilmu_a`` (or ``MUPOLYGON``) and the ``component``
        and ``chorizon`` tables (gSSURGO), or map units already carrying ``hydgrpdcd``
        and ``kffact``.
    roads : Download, optional
        Road centrelines (Census TIGER/Line ``FULLNAME``, ``LINEARID``).
    dem_tiles : tuple of path
        DEM tiles of one CRS, resolution and type, mosaicked as ``dem.vrt``.
    dem_vertical_units : {"m", "ft", "us_ft"}, optional
        The DEM's elevation units, when its files do not state them.
    working_crs : str
        Projected CRS for area and distance math (layers.toml ``working_crs``).
    city_class : dict, optional
        Class of cities by name (Wis. Stat. § 62.05) for the neighbours' reach.
    overwrite : bool
        Replace an existing folder's files.

    Returns
    -------
    dict
        The provenance written to ``provenance.json``.
    """
    from georeview import __version__
    from georeview.load import to_crs

    out = Path(out)
    crs = to_crs(working_crs, field="--working-crs")
    if (out / "layers.toml").exists() and not overwrite:
        raise OutputError("exists; pass --overwrite to replace it", path=out / "layers.toml")
    out.mkdir(parents=True, exist_ok=True)
    kind = kind.upper()
    if kind not in ("C", "V", "T"):
        raise ConfigError(f"kind must be C, V or T (LTSB CTV), got {kind!r}", field="--kind")
    classes = dict(city_class or {})
    where = f"MCD_NAME = {_sql_text(name)} AND CTV = {_sql_text(kind)}"
    munis = _read(boundaries, "boundaries", crs)
    for col in ("MCD_NAME", "CTV"):
        if col not in munis.columns:
            raise DataSourceError(
                f"has no {col} field: is it the LTSB municipal boundaries file? its columns"
                f" are {', '.join(map(str, munis.columns.drop(munis.geometry.name)))}",
                path=boundaries.path,
                field="boundaries",
            )
    this = (munis["MCD_NAME"] == name) & (munis["CTV"] == kind)
    if not this.any():
        close = sorted(set(munis.loc[munis["MCD_NAME"].str.lower() == name.lower(), "MCD_NAME"]))
        raise DataSourceError(
            f"no municipality where {where}"
            + (f" (names differing only in case: {', '.join(close)})" if close else ""),
            path=boundaries.path,
            field="--name",
        )
    village = shapely.union_all(munis.geometry.values[this.to_numpy()])
    unit_m = float(crs.axis_info[0].unit_conversion_factor)
    # the reaches and the trace length are the ordinance's parameters
    from georeview.measure.jurisdiction import etj_miles
    from georeview.rules import load_ordinance

    ordinance = load_ordinance(municipality)
    reach = ordinance.param("etj_miles")
    own = etj_miles(kind, classes.get(name), reach_miles=reach)
    widest = max(float(v) for v in reach.values())
    margin_mi = float(ordinance.param("downstream_trace_ft")) / _FT_PER_MI
    # neighbours whose own reach (at most the widest) could meet this one's; resource layers
    # reach the downstream trace's length beyond the extraterritorial area
    near = shapely.buffer(village, (own + widest) * _M_PER_MI / unit_m)
    keep = shapely.intersects(munis.geometry.values, near)
    clip = shapely.buffer(village, (own + margin_mi) * _M_PER_MI / unit_m)
    bbox = tuple(float(v) for v in shapely.bounds(clip))
    b = _Built()
    kept = munis[keep]
    _write(kept, out / "municipalities.gpkg", "municipalities")
    src = _source(boundaries, "boundaries", kept=int(keep.sum()), read=len(munis), where=where)
    b.provenance["boundary"] = src
    b.provenance["neighbors"] = {**src, "where": f"NOT ({where})"}
    vintage = f"vintage = {_q(boundaries.vintage)}\n" if boundaries.vintage else ""
    b.toml += [
        "[boundary]",
        'path = "municipalities.gpkg"',
        'layer = "municipalities"',
        f"where = {_q(where)}",
        f"source = {_q(f'Wisconsin LTSB municipal boundaries: {Path(boundaries.path).name}')}",
        vintage + 'name_field = "MCD_NAME"',
        "",
        "[neighbors]",
        'path = "municipalities.gpkg"',
        'layer = "municipalities"',
        f"where = {_q(f'NOT ({where})')}",
        f"source = {_q(f'Wisconsin LTSB municipal boundaries: {Path(boundaries.path).name}')}",
        vintage + 'kind_field = "CTV"',
        'name_field = "MCD_NAME"',
        "city_class = { " + ", ".join(f"{_q(k)} = {v}" for k, v in sorted(classes.items())) + " }",
        "",
    ]
    if floodplain is not None:
        _build_floodplain(b, floodplain, out, crs, bbox, clip)
    if wetlands is not None:
        _build_clipped(
            b, wetlands, "wetlands", out, crs, bbox, clip,
            types=((3, 6), "polygons"),
            source="Wisconsin Wetland Inventory",
            name_fields=("WETCLASS", "WETCODE"),
            id_fields=("WWI_ID", "OBJECTID"),
        )  # fmt: skip
    if flowlines is not None or waterbodies is not None:
        _build_hydrography(b, flowlines, waterbodies, out, crs, bbox, clip)
    if soils is not None:
        _build_soils(b, soils, out, crs, bbox, clip)
    if roads is not None:
        _build_clipped(
            b, roads, "roads", out, crs, bbox, clip,
            types=((1, 5), "lines"),
            source="road centrelines",
            name_fields=("FULLNAME",),
            id_fields=("LINEARID",),
        )  # fmt: skip
    if dem_tiles:
        _build_dem(b, dem_tiles, dem_vertical_units, out, crs, clip)
    head = [
        f"municipality = {_q(municipality)}",
        f"village_name = {_q(_TITLE[kind] + name)}",
        f"working_crs = {_q(working_crs)}",
        "notes = "
        + _q(
            f"Built by georeview layers build {__version__} from public downloads; see"
            " provenance.json for each source file, its checksum and the features kept."
        ),
        "",
    ]
    (out / "layers.toml").write_text("\n".join(head + b.toml) + "\n", encoding="utf-8")
    prov = {
        "built": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "georeview_version": __version__,
        "municipality": municipality,
        "ltsb": {"MCD_NAME": name, "CTV": kind},
        "working_crs": working_crs,
        "clip": {
            "reach_mi": own,
            "margin_mi": margin_mi,
            "neighbours_within_mi": own + widest,
            "bounds": list(bbox),
        },
        "layers": b.provenance,
    }
    (out / "provenance.json").write_text(json.dumps(prov, indent=2) + "\n", encoding="utf-8")
    _validate(out)
    return prov


def _table(name: str, path: str, layer: Any, d: Download, source: str, **fields: Any) -> list[str]:
    lines = [f"[{name}]", f"path = {_q(path)}"]
    if isinstance(layer, (list, tuple)):
        lines.append("layer = [" + ", ".join(_q(x) for x in layer) + "]")
    elif layer:
        lines.append(f"layer = {_q(layer)}")
    lines.append(f"source = {_q(f'{source}: {Path(d.path).name}')}")
    if d.vintage:
        lines.append(f"vintage = {_q(d.vintage)}")
    lines += [f"{k} = {_q(v)}" for k, v in fields.items() if v]
    return [*lines, ""]


def _build_clipped(
    b: _Built,
    src: Download,
    name: str,
    out: Path,
    crs: Any,
    bbox: tuple[float, ...],
    clip: Any,
    *,
    types: tuple[tuple[int, ...], str],
    source: str,
    name_fields: tuple[str, ...],
    id_fields: tuple[str, ...],
) -> None:
    """A layer kept as downloaded: its geometry kind only, clipped, written and described."""
    g = _read(src, name, crs, bbox)
    g = _keep_types(g, types[0], types[1], src)
    g = g[shapely.intersects(g.geometry.values, clip)]
    _write(g, out / f"{name}.gpkg", name)
    b.provenance[name] = _source(src, name, kept=len(g), read=len(g))
    b.toml += _table(
        name,
        f"{name}.gpkg",
        name,
        src,
        source,
        name_field=_find(g.columns, *name_fields),
        id_field=_find(g.columns, *id_fields),
    )


def _build_floodplain(b: _Built, d: Download, out: Path, crs: Any, bbox: Any, clip: Any) -> None:
    if Path(d.path).suffix.lower() in RASTER_SUFFIXES:
        g = read_depth_grid(d.path, crs, bbox=bbox, label="floodplain")
        what = "FEMA flood depth grid (depth > 0)"
    else:
        layer = d.layer
        if layer is None:
            names = layer_names(d.path, "floodplain")
            layer = next((n for n in names if n and n.upper() == "S_FLD_HAZ_AR"), None)
        d = Download(d.path, layer, d.vintage)
        g = _read(d, "floodplain", crs, bbox)
        what = "FEMA NFHL S_FLD_HAZ_AR"
    g = _keep_types(g, (3, 6), "polygons", d)
    g = g[shapely.intersects(g.geometry.values, clip)]
    zone = _find(g.columns, "FLD_ZONE")
    sfha = _find(g.columns, "SFHA_TF")
    if zone is None and sfha is None:
        raise DataSourceError(
            "has neither FLD_ZONE nor SFHA_TF: is it NFHL S_FLD_HAZ_AR? its columns are"
            f" {', '.join(map(str, g.columns.drop(g.geometry.name)))}",
            path=d.path,
            field="floodplain",
        )
    _write(g, out / "floodplain.gpkg", "S_FLD_HAZ_AR")
    b.provenance["floodplain"] = _source(d, "floodplain", kept=len(g), read=len(g))
    b.toml += _table(
        "floodplain",
        "floodplain.gpkg",
        "S_FLD_HAZ_AR",
        d,
        what,
        id_field=_find(g.columns, "FLD_AR_ID"),
        zone_field=zone,
        subtype_field=_find(g.columns, "ZONE_SUBTY"),
        sfha_field=sfha,
    )


def _build_hydrography(
    b: _Built,
    lines: Download | None,
    bodies: Download | None,
    out: Path,
    crs: Any,
    bbox: Any,
    clip: Any,
) -> None:
    written: list[str] = []
    names: list[str] = []
    for d, layer, kinds, what in (
        (lines, "NHDFlowline", (1, 5), "lines"),
        (bodies, "NHDWaterbody", (3, 6), "polygons"),
    ):
        if d is None:
            continue
        g = _read(d, "hydrography", crs, bbox)
        g = _keep_types(g, kinds, what, d)
        g = g[shapely.intersects(g.geometry.values, clip)]
        ftype = _find(g.columns, "FType", "FTYPE")
        if ftype and ftype != "FType":
            g = g.rename(columns={ftype: "FType"})
        _write(g, out / "hydrography.gpkg", layer, append=bool(written))
        written.append(layer)
        names.append(Path(d.path).name)
        b.provenance[f"hydrography.{layer}"] = _source(d, "hydrography", kept=len(g), read=len(g))
        last = g
    first = lines or bodies
    assert first is not None
    b.toml += _table(
        "hydrography",
        "hydrography.gpkg",
        written,
        first,
        "NHD / NHDPlus HR " + " + ".join(written) + " (" + ", ".join(names) + ")",
        name_field=_find(last.columns, "GNIS_NAME", "Name"),
        id_field=_find(last.columns, "Permanent_Identifier", "HYDROID"),
    )


def _build_soils(b: _Built, d: Download, out: Path, crs: Any, bbox: Any, clip: Any) -> None:
    """SSURGO map units with the dominant component's hydrologic group and surface K."""
    import pyogrio

    layer = d.layer
    names = layer_names(d.path, "soils")
    if layer is None:
        layer = next(
            (n for n in names if n and n.lower() in ("soilmu_a", "mupolygon")),
            names[0] if len(names) == 1 else None,
        )
    dd = Download(d.path, layer, d.vintage)
    g = _read(dd, "soils", crs, bbox)
    g = _keep_types(g, (3, 6), "polygons", dd)
    g = g[shapely.intersects(g.geometry.values, clip)]
    mukey = _find(g.columns, "MUKEY")
    if mukey is None:
        raise DataSourceError("soil map units have no MUKEY field", path=d.path, field="soils")
    hsg, kf = _find(g.columns, "hydgrpdcd"), _find(g.columns, "kffact")
    if hsg is None or kf is None:
        try:
            tables = {str(n).lower(): str(n) for n, _ in pyogrio.list_layers(d.path)}
            comp = pyogrio.read_dataframe(d.path, layer=tables["component"], read_geometry=False)
            hz = pyogrio.read_dataframe(d.path, layer=tables["chorizon"], read_geometry=False)
        except KeyError as exc:
            raise DataSourceError(
                f"has no {exc.args[0]} table: SSURGO map units need the component and"
                " chorizon tables for hydrologic group and K factor (a gSSURGO database holds"
                " them)",
                path=d.path,
                field="soils",
            ) from None
        g = g.drop(columns=[c for c in ("hydgrpdcd", "kffact") if c in g.columns])
        g = g.merge(soil_properties(comp, hz), how="left", left_on=mukey, right_index=True)
    g = gpd.GeoDataFrame(g, geometry=g.geometry.name, crs=crs)
    _write(g, out / "soils.gpkg", "soilmu_a")
    b.provenance["soils"] = _source(dd, "soils", kept=len(g), read=len(g))
    b.toml += _table(
        "soils",
        "soils.gpkg",
        "soilmu_a",
        dd,
        "SSURGO soilmu_a",
        id_field=mukey,
        musym_field=_find(g.columns, "MUSYM"),
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


def _build_dem(
    b: _Built, tiles: tuple[Path, ...], units: str | None, out: Path, crs: Any, clip: Any
) -> None:
    """Copy the tiles meeting the clip area into ``dem/`` and mosaic them as ``dem.vrt``."""
    import rasterio
    from pyproj import Transformer

    metas = []
    for t in tiles:
        try:
            with rasterio.open(t) as ds:
                tag = ds.tags().get("VERTICAL_UNITS") or (ds.units[0] if ds.units else None)
                metas.append((Path(t), ds.crs, ds.res, ds.dtypes[0], ds.nodata, ds.bounds, tag))
        except rasterio.errors.RasterioError as exc:
            raise DataSourceError(f"cannot open as a raster ({exc})", path=t, field="dem") from None
    first = metas[0]
    if first[1] is None:
        raise DataSourceError("the DEM tile has no CRS", path=first[0], field="dem")
    for m in metas[1:]:
        if m[1] != first[1] or m[2] != first[2] or m[3] != first[3]:
            raise DataSourceError(
                f"differs from {first[0].name} in CRS, cell size or type; a mosaic needs tiles"
                " of one grid",
                path=m[0],
                field="dem",
            )
    stated = {(_UNITS.get(str(m[6]).strip().lower()) if m[6] else None) for m in metas}
    stated.discard(None)
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
    to_dem = Transformer.from_crs(crs, first[1], always_xy=True)
    minx, miny, maxx, maxy = shapely.bounds(clip)
    cb = to_dem.transform_bounds(minx, miny, maxx, maxy, densify_pts=21)
    used = [
        m
        for m in metas
        if not (m[5].right < cb[0] or m[5].left > cb[2] or m[5].top < cb[1] or m[5].bottom > cb[3])
    ]
    if not used:
        raise DataSourceError(
            "no DEM tile meets the municipality and its extraterritorial area",
            path=first[0],
            field="dem",
        )
    (out / "dem").mkdir(exist_ok=True)
    for m in used:
        shutil.copy2(m[0], out / "dem" / m[0].name)
    write_vrt(out / "dem.vrt", [out / "dem" / m[0].name for m in used])
    b.provenance["dem"] = {
        "tiles": [
            {"file": str(m[0].resolve()), "sha256": _sha256(m[0]), "bytes": m[0].stat().st_size}
            for m in used
        ],
        "tiles_given": len(metas),
        "vertical_units": units,
        "crs": _crs_text(first[1]),
    }
    b.toml += [
        "[dem]",
        'path = "dem.vrt"',
        f'vertical_units = "{units}"',
        f"source = {_q('DEM tiles: ' + ', '.join(m[0].name for m in used))}",
        "",
    ]


def write_vrt(path: Path, tiles: list[Path]) -> Path:
    """Write a GDAL VRT mosaic of north-up tiles of one grid (paths relative to it).

    Tiles must share CRS, cell size and data type (checked by the caller); where tiles
    overlap, the later one wins, as in ``gdalbuildvrt``.
    """
    import xml.etree.ElementTree as ET

    import rasterio

    opened = []
    for t in tiles:
        with rasterio.open(t) as ds:
            opened.append(
                (
                    t,
                    ds.transform,
                    ds.width,
                    ds.height,
                    ds.bounds,
                    ds.crs,
                    ds.dtypes[0],
                    ds.nodata,
                    ds.block_shapes[0],
                )
            )
    rx, ry = opened[0][1].a, -opened[0][1].e
    left = min(o[4].left for o in opened)
    top = max(o[4].top for o in opened)
    right = max(o[4].right for o in opened)
    bottom = min(o[4].bottom for o in opened)
    width = round((right - left) / rx)
    height = round((top - bottom) / ry)
    dtype = {
        "float32": "Float32",
        "float64": "Float64",
        "uint16": "UInt16",
        "int16": "Int16",
        "uint8": "Byte",
        "int32": "Int32",
        "uint32": "UInt32",
    }[opened[0][6]]
    root = ET.Element("VRTDataset", rasterXSize=str(width), rasterYSize=str(height))
    ET.SubElement(root, "SRS").text = opened[0][5].to_wkt()
    ET.SubElement(root, "GeoTransform").text = f"{left!r}, {rx!r}, 0, {top!r}, 0, {-ry!r}"
    band = ET.SubElement(root, "VRTRasterBand", dataType=dtype, band="1")
    if opened[0][7] is not None:
        ET.SubElement(band, "NoDataValue").text = repr(float(opened[0][7]))
    for t, _tr, w, h, bounds, _crs, _dt, nodata, block in opened:
        src = ET.SubElement(band, "ComplexSource" if nodata is not None else "SimpleSource")
        ET.SubElement(src, "SourceFilename", relativeToVRT="1").text = str(
            Path(t).resolve().relative_to(path.parent.resolve())
        )
        ET.SubElement(src, "SourceBand").text = "1"
        ET.SubElement(
            src,
            "SourceProperties",
            RasterXSize=str(w),
            RasterYSize=str(h),
            DataType=dtype,
            BlockXSize=str(block[1]),
            BlockYSize=str(block[0]),
        )
        ET.SubElement(src, "SrcRect", xOff="0", yOff="0", xSize=str(w), ySize=str(h))
        xoff = round((bounds.left - left) / rx)
        yoff = round((top - bounds.top) / ry)
        ET.SubElement(src, "DstRect", xOff=str(xoff), yOff=str(yoff), xSize=str(w), ySize=str(h))
        if nodata is not None:
            ET.SubElement(src, "NODATA").text = repr(float(nodata))
    ET.ElementTree(root).write(path, encoding="utf-8")
    return path


def _validate(out: Path) -> None:
    """Read every layer of the folder back as a review would (refusals are raised)."""
    from georeview.load import load_layers

    layers = load_layers(out)
    for name in ("boundary", "neighbors", "wetlands", "floodplain", "hydrography", "soils"):
        if layers.has(name):
            g = layers.read(name)
            if name == "boundary" and (g is None or len(g) == 0):
                raise DataSourceError("the boundary filter selects nothing", path=out)
    if layers.has("dem"):
        import rasterio

        with rasterio.open(layers.path("dem")) as ds:
            ds.read(1, window=((0, 1), (0, 1)))
