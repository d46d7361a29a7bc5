"""``georeview layers build``: a municipality's layers folder from the public downloads.

The municipality is selected from the Wisconsin LTSB municipal boundaries by its
``MCD_NAME`` and ``CTV``; its neighbours are those whose reach could meet its own, and
every resource layer is clipped to its extraterritorial area grown by the ordinance's
downstream trace length (see the README "Building a layers folder"). The datasets'
schemas are in :mod:`~georeview.load.sources`, the DEM's in :mod:`~georeview.load.dem`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geopandas as gpd
import shapely

from georeview.errors import ConfigError, DataSourceError, GeoReviewError, OutputError
from georeview.load.crs import to_crs
from georeview.load.dem import build_dem
from georeview.load.downloads import (
    Built,
    Download,
    read_download,
    source_record,
    toml_string,
    toml_table,
    write_gpkg,
)
from georeview.load.layers import load_layers
from georeview.load.sources import (
    build_floodplain,
    build_hydrography,
    build_kept,
    build_soils,
)

__all__ = ["build_layers"]

_M_PER_MI = 1609.344
_FT_PER_MI = 5280.0
_TITLE = {"V": "Village of ", "C": "City of ", "T": "Town of "}


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _select_municipality(
    munis: gpd.GeoDataFrame, name: str, kind: str, where: str, boundaries: Download
) -> shapely.Geometry:
    """The municipality's area in the LTSB boundaries, refusing another schema or no match."""
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
    return shapely.union_all(munis.geometry.values[this.to_numpy()])


@dataclass(frozen=True)
class _Reach:
    """How far the build looks around the municipality, in miles, and the clip area."""

    own_mi: float
    margin_mi: float
    widest_mi: float
    near: Any
    clip: Any
    #: The ordinance's ``etj_miles`` parameter: miles by kind and city class.
    reach_miles: dict[str, float]


def _reach(
    village: Any, municipality: str, name: str, kind: str, classes: dict[str, int], crs: Any
) -> _Reach:
    """The reaches and the trace length, from the ordinance's parameters."""
    from georeview.measure.jurisdiction import etj_miles
    from georeview.rules import load_ordinance

    unit_m = float(crs.axis_info[0].unit_conversion_factor)
    ordinance = load_ordinance(municipality)
    reach = {str(k): float(v) for k, v in ordinance.param("etj_miles").items()}
    own = etj_miles(kind, classes.get(name), reach_miles=reach)
    widest = max(reach.values())
    margin_mi = float(ordinance.param("downstream_trace_ft")) / _FT_PER_MI
    # neighbours whose own reach (at most the widest) could meet this one's; resource layers
    # reach the downstream trace's length beyond the extraterritorial area
    near = shapely.buffer(village, (own + widest) * _M_PER_MI / unit_m)
    clip = shapely.buffer(village, (own + margin_mi) * _M_PER_MI / unit_m)
    return _Reach(own, margin_mi, widest, near, clip, reach)


def _reach_miles(municipality: str) -> dict[str, float]:
    """The ordinance's ``etj_miles`` parameter."""
    from georeview.rules import load_ordinance

    return {str(k): float(v) for k, v in load_ordinance(municipality).param("etj_miles").items()}


def _check_city_classes(
    munis: gpd.GeoDataFrame,
    village: Any,
    name: str,
    kind: str,
    classes: dict[str, int],
    reach_miles: dict[str, float],
    crs: Any,
    boundaries: Download,
) -> None:
    """Refuse, before anything is written, while a city near enough has no class.

    Every such city is named at once, with the ``--city-class`` options to add: the
    same cities a review would need (:func:`~georeview.measure.jurisdiction.cities_without_class`),
    and the municipality itself when it is a city.

    Raises
    ------
    ConfigError
        One line listing them.
    """
    import shlex

    from georeview.measure.jurisdiction import (
        cities_without_class,
        city_class_message,
        etj_miles,
    )

    unit_m = float(crs.axis_info[0].unit_conversion_factor)
    missing: list[tuple[str, float]] = []
    if kind == "C" and name not in classes:
        missing.append((name, 0.0))
        own = max(v for k, v in reach_miles.items() if k.startswith("city_class_"))
    else:
        own = etj_miles(kind, classes.get(name), reach_miles=reach_miles)
    others = ~((munis["MCD_NAME"] == name) & (munis["CTV"] == kind)).to_numpy()
    kinds = munis["CTV"].astype(str).str.upper().str[:1].to_numpy()[others]
    missing += cities_without_class(
        munis["MCD_NAME"].astype(str).to_numpy()[others],
        kinds,
        munis.geometry.values[others],
        village,
        village_miles=own,
        reach_miles=reach_miles,
        city_class=classes,
        unit_m=unit_m,
    )
    if missing:
        flags = " ".join(f"--city-class {shlex.quote(f'{n}=N')}" for n, _ in missing)
        raise ConfigError(
            city_class_message(missing, reach_miles) + f"; add {flags} (N = each city's class)",
            path=boundaries.path,
            field="--city-class",
        )


def _build_municipalities(
    b: Built,
    boundaries: Download,
    munis: gpd.GeoDataFrame,
    keep: Any,
    where: str,
    classes: dict[str, int],
) -> None:
    """The boundary and the neighbours: one GeoPackage of the municipalities near enough."""
    b.say(f"municipalities: writing {int(keep.sum()):,} of {len(munis):,} to municipalities.gpkg")
    write_gpkg(munis[keep], b.out / "municipalities.gpkg", "municipalities")
    src = source_record(boundaries, kept=int(keep.sum()), read=len(munis), where=where)
    b.provenance["boundary"] = src
    b.provenance["neighbors"] = {**src, "where": f"NOT ({where})"}
    ltsb = "Wisconsin LTSB municipal boundaries"
    gpkg = ("municipalities.gpkg", "municipalities", boundaries, ltsb)
    b.toml += toml_table("boundary", *gpkg, where=where, name_field="MCD_NAME")
    # the neighbours' table ends with the class of cities, not a quoted string
    b.toml += toml_table(
        "neighbors", *gpkg, where=f"NOT ({where})", kind_field="CTV", name_field="MCD_NAME"
    )[:-1]
    cities = ", ".join(f"{toml_string(k)} = {v}" for k, v in sorted(classes.items()))
    b.toml += ["city_class = { " + cities + " }", ""]


def _resource_layers(b: Built, crs: Any, bbox: tuple[float, ...], clip: Any, **given: Any) -> None:
    """Every resource layer given, clipped, each through its dataset's schema."""
    if given["floodplain"] is not None:
        build_floodplain(b, given["floodplain"], crs, bbox, clip)
        b.step_done()
    if given["wetlands"] is not None:
        build_kept(b, given["wetlands"], "wetlands", crs, bbox, clip)
        b.step_done()
    if given["flowlines"] is not None or given["waterbodies"] is not None:
        build_hydrography(b, given["flowlines"], given["waterbodies"], crs, bbox, clip)
        b.step_done()
    if given["soils"] is not None:
        build_soils(b, given["soils"], crs, bbox, clip)
        b.step_done()
    if given["roads"] is not None:
        build_kept(b, given["roads"], "roads", crs, bbox, clip)
        b.step_done()


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
    on_step: Callable[[int, int, str], None] | None = None,
) -> dict[str, Any]:
    """Make a municipality's layers folder from public downloads.

    Parameters
    ----------
    out : path
        The layers folder to write (``layers.toml``, one GeoPackage per layer,
        ``dem.tif``, ``provenance.json``).
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
        DEM tiles of one grid, mosaicked over the village's reach as ``dem.tif``.
    dem_vertical_units : {"m", "ft", "us_ft"}, optional
        The DEM's elevation units, when its files do not state them.
    working_crs : str
        Projected CRS for area and distance math (layers.toml ``working_crs``).
    city_class : dict, optional
        Class of cities by name (Wis. Stat. § 62.05) for the neighbours' reach.
    overwrite : bool
        Replace an existing folder's files.
    on_step : callable, optional
        Told ``(steps done, steps in all, what is being done)`` as the build goes.

    Returns
    -------
    dict
        The provenance written to ``provenance.json``.
    """
    out = Path(out)
    crs = to_crs(working_crs, field="--working-crs")
    if (out / "layers.toml").exists() and not overwrite:
        raise OutputError("exists; pass --overwrite to replace it", path=out / "layers.toml")
    kind = kind.upper()
    if kind not in ("C", "V", "T"):
        raise ConfigError(f"kind must be C, V or T (LTSB CTV), got {kind!r}", field="--kind")
    classes = dict(city_class or {})
    given = {
        "floodplain": floodplain, "wetlands": wetlands, "flowlines": flowlines,
        "waterbodies": waterbodies, "soils": soils, "roads": roads,
    }  # fmt: skip
    b = Built(out, on_step=on_step)
    # steps: the municipalities, each resource layer (flowlines and waterbodies make one),
    # the DEM, the jurisdictions
    layers = {
        "hydrography" if k in ("flowlines", "waterbodies") else k for k, v in given.items() if v
    }
    b.steps = 2 + len(layers) + bool(dem_tiles)
    where = f"MCD_NAME = {_sql_text(name)} AND CTV = {_sql_text(kind)}"
    b.say(f"boundaries: reading {Path(boundaries.path).name}")
    munis = read_download(boundaries, "boundaries", crs)
    village = _select_municipality(munis, name, kind, where, boundaries)
    reach_miles = _reach_miles(municipality)
    _check_city_classes(munis, village, name, kind, classes, reach_miles, crs, boundaries)
    r = _reach(village, municipality, name, kind, classes, crs)
    keep = shapely.intersects(munis.geometry.values, r.near)
    bbox = tuple(float(v) for v in shapely.bounds(r.clip))
    # Everything is written to a hidden folder beside ``out`` and moved in once the
    # jurisdictions are built from it: a refused source leaves nothing that looks built.
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create its folder ({exc.strerror})", path=out) from None
    stage = _staging(out)
    try:
        b.out = stage
        _build_municipalities(b, boundaries, munis, keep, where, classes)
        b.step_done()
        _resource_layers(b, crs, bbox, r.clip, **given)
        if dem_tiles:
            build_dem(b, dem_tiles, dem_vertical_units, crs, r.clip)
            b.step_done()
        _write_text(
            stage / "layers.toml",
            "\n".join(_head(municipality, name, kind, working_crs) + b.toml) + "\n",
        )
        prov = _provenance(b, municipality, name, kind, working_crs, r, bbox)
        b.say("jurisdictions: the extraterritorial area and the equidistant lines")
        prov["jurisdictions"] = _validate(stage)
        b.step_done()
        _write_text(stage / "provenance.json", json.dumps(prov, indent=2) + "\n")
        _publish(stage, out)
    except GeoReviewError as exc:
        raise _moved(exc, stage, out) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    b.out = out
    return prov


#: Everything a build writes; an --overwrite removes those of them the new build does not.
_OUTPUTS = (
    "layers.toml", "provenance.json", "municipalities.gpkg", "floodplain.gpkg",
    "wetlands.gpkg", "hydrography.gpkg", "soils.gpkg", "roads.gpkg", "dem.tif",
    "dem.vrt", "dem",  # the mosaic and tiles of builds before the mosaic was one GeoTIFF
)  # fmt: skip


def _write_text(path: Path, text: str) -> None:
    """Write a text file of the staged build; a failed write is an OutputError naming it."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"cannot write ({exc.strerror or exc})", path=path) from None


def _staging(out: Path) -> Path:
    """A new hidden folder beside ``out``, with the permissions a normal folder gets."""
    try:
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    except OSError as exc:
        raise OutputError(f"cannot write beside it ({exc.strerror})", path=out) from None
    umask = os.umask(0)
    os.umask(umask)
    stage.chmod(0o777 & ~umask)
    return stage


def _publish(stage: Path, out: Path) -> None:
    """Move the built files into ``out``: layers.toml first out and last in.

    A build over an existing folder (``--overwrite``) removes its layers.toml before
    anything else, so an interrupted move never leaves an old layers.toml over new
    layers, and removes the outputs of the old build that the new one does not make.
    """
    if not out.exists():
        stage.rename(out)
        return
    (out / "layers.toml").unlink(missing_ok=True)
    made = {p.name for p in stage.iterdir()}
    for name in _OUTPUTS:
        old = out / name
        if name == "layers.toml" or not (old.exists() or old.is_symlink()):
            continue
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old)
        elif name not in made or name == "dem":
            old.unlink()
    for name in sorted(made - {"layers.toml"}):
        os.replace(stage / name, out / name)
    os.replace(stage / "layers.toml", out / "layers.toml")


def _moved(exc: GeoReviewError, stage: Path, out: Path) -> GeoReviewError:
    """The error with a path in the staging folder given as the same path in ``out``."""
    if exc.path is not None and Path(exc.path).is_relative_to(stage):
        exc.path = str(out / Path(exc.path).relative_to(stage))
        exc.args = (exc.one_line(),)
    return exc


def _head(municipality: str, name: str, kind: str, working_crs: str) -> list[str]:
    """The top of layers.toml: the municipality, its title, the working CRS, a note."""
    from georeview._version import __version__

    return [
        f"municipality = {toml_string(municipality)}",
        f"village_name = {toml_string(_TITLE[kind] + name)}",
        f"working_crs = {toml_string(working_crs)}",
        "notes = "
        + toml_string(
            f"Built by georeview layers build {__version__} from public downloads; see"
            " provenance.json for each source file, its checksum and the features kept."
        ),
        "",
    ]


def _provenance(
    b: Built,
    municipality: str,
    name: str,
    kind: str,
    working_crs: str,
    r: _Reach,
    bbox: tuple[float, ...],
) -> dict[str, Any]:
    """What provenance.json says: when, by which version, for whom, how far, from what."""
    from georeview._version import __version__

    return {
        "built": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "georeview_version": __version__,
        "municipality": municipality,
        "ltsb": {"MCD_NAME": name, "CTV": kind},
        "working_crs": working_crs,
        "clip": {
            "reach_mi": r.own_mi,
            "margin_mi": r.margin_mi,
            "neighbours_within_mi": r.own_mi + r.widest_mi,
            "bounds": list(bbox),
        },
        "layers": b.provenance,
    }


def _validate(out: Path) -> dict[str, Any]:
    """Read every layer back and build the jurisdictions, as a review would.

    The jurisdictions go through the review's cache
    (:func:`~georeview.pipeline.jurisdictions.jurisdictions_for`): the first review of
    the folder reads them from there.

    Returns
    -------
    dict
        The extraterritorial area and what each neighbour takes from it, acres.
    """
    from georeview.pipeline.jurisdictions import jurisdictions_for
    from georeview.units import sqft_to_acres, sqm_to_sqft

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
    j = jurisdictions_for(layers)
    unit_m = float(layers.working_crs.axis_info[0].unit_conversion_factor)

    def acres(geom: Any) -> float:
        return round(float(sqft_to_acres(sqm_to_sqft(shapely.area(geom) * unit_m**2))), 1)

    return {
        "extraterritorial_acres": acres(j.extraterritorial),
        "ceded_acres": {k: acres(v) for k, v in sorted(j.ceded.items())},
        "undetermined_acres": acres(j.undetermined),
    }
