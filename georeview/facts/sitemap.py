"""Site-map checks: what the applicant's site map must show, against the layers.

Somers § 17.10(B)(4)(a)-(j) and Deerfield § 31.09(1)(A)-(C) list what a site map
shows. Some items are always required (site boundary, areas of disturbance,
controls); others depend on what lies on or *immediately adjacent to* the site:
lakes, streams, wetlands, channels, ditches, floodplains, floodways, roads. This
module finds those features in the reference layers and compares them with what
the submission says its map shows, giving flat facts for the rules in
``georeview/ordinances/<municipality>.sitemap.toml``.

What the map shows
------------------
A feature is shown when ``[site_map] shows`` lists it, or when the submission
folder has a ``sitemap/`` layer named for it: ``sitemap/<feature>.geojson``
(``.json``, ``.gpkg`` or ``.shp``), ``<feature>`` one of
:data:`georeview.config.SITE_MAP_FEATURES` (``sitemap/wetlands.geojson``,
``sitemap/controls.gpkg`` ...). A layer with another name is refused (a typo must
not silently read as "not shown"). When neither ``shows`` nor ``sitemap/`` is
given, what the map shows is unknown (``None``: needs_info).

Feature names a near-site check accepts (a map that shows "surface waters" shows
the stream): :data:`SHOWN_AS`.

"Immediately adjacent"
----------------------
Neither ordinance defines it. The distance is ordinance data: the ``limit`` (ft)
of the rule ``<municipality>.sitemap.adjacent`` in the municipality's
``sitemap`` part file, where the reason is written.

Facts
-----
``site_map.adjacent_ft``; for each near-site feature ``X`` of :data:`NEAR_FEATURES`:
``site_map.near.X`` (on or within the adjacent distance; None when the layer is
absent), ``site_map.shows.X`` and ``site_map.feature_ok.X`` (True when not near or
shown, False when near and not shown, None when unknown); ``site_map.shows.<f>``
for every feature of SITE_MAP_FEATURES; ``site_map.on_site.wetlands``;
``site_map.near.downstream_discharge`` (the 1/4-mile trace reaches a water);
``site_map.provided``; and, when a contour layer is submitted, its measured
interval as ``site_map.contour_interval_ft``; when a grid layer is submitted,
``site_map.grid`` is whether it covers the whole site.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely

from georeview.config import SITE_MAP_FEATURES
from georeview.errors import ConfigError, GeometryError, InputError
from georeview.facts.near_features import NEAR_FEATURES, SHOWN_AS
from georeview.load.schema import nhd_ftype_codes
from georeview.load.submission import read_submission_layer, submission_file
from georeview.load.vector import VECTOR_SUFFIXES
from georeview.units import M_PER_FT

if TYPE_CHECKING:
    import geopandas as gpd
    from pyproj import CRS

    from georeview.load import LoadedSubmission

log = logging.getLogger(__name__)

__all__ = [
    "CONTOUR_FIELDS",
    "NEAR_FEATURES",
    "SHOWN_AS",
    "SITEMAP_DIR",
    "adjacent_distance_ft",
    "features_near",
    "sitemap_facts",
    "sitemap_layers",
]

#: Folder of the submission holding one layer per feature the site map shows.
SITEMAP_DIR = "sitemap"

#: NHD ``FType`` codes (USGS NHD data dictionary, FType domain): 336 CanalDitch,
#: 466 SwampMarsh. Other lines are streams (460 StreamRiver, 558 ArtificialPath ...)
#: and other polygons are lakes and ponds (390 LakePond, 436 Reservoir ...).
NHD_CANAL_DITCH = 336
NHD_SWAMP_MARSH = 466

#: Elevation attributes tried, in order, when ``[site_map] contour_field`` is not given.
CONTOUR_FIELDS = ("elev_ft", "elevation", "elev", "contour", "contour_ft")

_LINE_TYPES = (1, 2, 5)  # LineString, LinearRing, MultiLineString
_POLY_TYPES = (3, 6)


def adjacent_distance_ft(municipality: str) -> float:
    """Return the "immediately adjacent" distance of a municipality's ordinance, ft.

    It is the ``limit`` of rule ``<municipality>.sitemap.adjacent`` (ordinance data).

    Raises
    ------
    ConfigError
        When the ordinance has no such rule or its limit is not a positive number.
    """
    from georeview.ordinances import folder
    from georeview.rules import load_ordinance
    from georeview.rules.expected import rule_id

    ordinance = load_ordinance(municipality)
    rid = rule_id(municipality, "sitemap.adjacent")
    rule = ordinance.rule(rid)
    if rule is not None and _positive(rule.limit):
        return float(rule.limit)
    from georeview.rules.load import rule_files

    where = folder(municipality)
    if rule is None:
        # The file to add it to: the rule file of the site-map rules, if there is one.
        name = next((n for n in ordinance.rule_files if "sitemap" in n), "ordinance.toml")
        file, problem = where / name, f"no rule {rid!r}"
    else:
        file = rule_files(where).get(rid, where / "ordinance.toml")
        problem = f"rule {rid!r} has no positive limit (limit = {rule.limit!r})"
    raise ConfigError(
        f"{problem}: the code reads its limit as the 'immediately adjacent' distance in ft; "
        f'fix it in {file.name} (kind = "info", measure = "site_map.adjacent_ft", '
        "limit = the distance in ft, as the shipped deerfield/sitemap.toml has it); "
        f"`georeview rules {municipality} --check` lists every such problem",
        path=file,
        field=f"rules.{rid}",
    )


def _positive(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _unit_m(crs: CRS) -> float:
    return float(crs.axis_info[0].unit_conversion_factor)


def _split_hydrography(
    hydro: gpd.GeoDataFrame | None, ftype_field: str
) -> dict[str, np.ndarray | None]:
    """Split a hydrography layer into streams, watercourses (ditches), lakes, marsh."""
    if hydro is None:
        return dict.fromkeys(("streams", "watercourses", "lakes", "marsh"))
    geoms = np.asarray(hydro.geometry.values, dtype=object)
    types = shapely.get_type_id(geoms)
    if ftype_field in hydro.columns:
        # codes or NHD's text names ("StreamRiver"): load.schema.map_fields normalises
        # layers read through layers.toml, this covers frames built otherwise
        ftype = nhd_ftype_codes(hydro[ftype_field]).to_numpy()
    else:
        ftype = np.full(len(hydro), -1, dtype=np.int64)
    lines = np.isin(types, _LINE_TYPES)
    polys = np.isin(types, _POLY_TYPES)
    return {
        "streams": geoms[lines & (ftype != NHD_CANAL_DITCH)],
        "watercourses": geoms[lines & (ftype == NHD_CANAL_DITCH)],
        "lakes": geoms[polys & (ftype != NHD_SWAMP_MARSH)],
        "marsh": geoms[polys & (ftype == NHD_SWAMP_MARSH)],
    }


def _geoms(gdf: gpd.GeoDataFrame | None) -> np.ndarray | None:
    return None if gdf is None else np.asarray(gdf.geometry.values, dtype=object)


def _within(geoms: np.ndarray | None, site: shapely.Geometry, dist: float) -> bool | None:
    """Whether any geometry lies on the site or within ``dist`` of it (CRS units)."""
    if geoms is None:
        return None
    if geoms.size == 0:
        return False
    return bool(np.any(shapely.dwithin(geoms, site, dist)))


def features_near(
    site: shapely.Geometry,
    layers_near: dict[str, gpd.GeoDataFrame | None],
    *,
    adjacent_ft: float,
    working_crs: CRS,
    ftype_field: str = "FType",
) -> dict[str, bool | None]:
    """Which mapped features lie on or within ``adjacent_ft`` of the site.

    Parameters
    ----------
    site : shapely Polygon or MultiPolygon
        The site, in the working CRS.
    layers_near : dict
        Layers in the working CRS, ``None`` (or missing) when absent: ``wetlands``,
        ``floodplain`` (the special flood hazard area polygons), ``floodway``,
        ``hydrography`` (streams as lines, water bodies as polygons; NHD ``FType``
        separates ditches and marshes), ``roads``.
    adjacent_ft : float
        The "immediately adjacent" distance, ft.
    working_crs : pyproj.CRS
        Projected CRS of the geometries.
    ftype_field : str
        NHD feature-type attribute of the hydrography layer.

    Returns
    -------
    dict
        ``{feature: True | False | None}`` for each of :data:`NEAR_FEATURES`;
        None when the layer that would say is absent. NHD swamp/marsh polygons
        count as wetlands.
    """
    dist = adjacent_ft * M_PER_FT / _unit_m(working_crs)
    hydro = _split_hydrography(layers_near.get("hydrography"), ftype_field)
    wet = _within(_geoms(layers_near.get("wetlands")), site, dist)
    marsh = _within(hydro["marsh"], site, dist)
    return {
        "wetlands": True if marsh is True else wet,
        "floodplain": _within(_geoms(layers_near.get("floodplain")), site, dist),
        "floodway": _within(_geoms(layers_near.get("floodway")), site, dist),
        "streams": _within(hydro["streams"], site, dist),
        "lakes": _within(hydro["lakes"], site, dist),
        "watercourses": _within(hydro["watercourses"], site, dist),
        "roads": _within(_geoms(layers_near.get("roads")), site, dist),
    }


def sitemap_layers(folder: Path, working_crs: CRS) -> dict[str, gpd.GeoDataFrame] | None:
    """Read the submission's ``sitemap/`` layers, one per feature the map shows.

    Returns
    -------
    dict or None
        ``{feature: GeoDataFrame}`` in the working CRS; None when there is no
        ``sitemap/`` folder.

    Raises
    ------
    ConfigError
        A vector file whose name is not a site-map feature, or two files for one.
    GeometryError
        A layer with no features.
    """
    d = Path(folder) / SITEMAP_DIR
    if not d.is_dir():
        return None
    out: dict[str, gpd.GeoDataFrame] = {}
    for p in sorted(d.iterdir()):
        if p.suffix.lower() not in VECTOR_SUFFIXES:
            continue  # shapefile sidecars, notes
        name = p.stem
        if name not in SITE_MAP_FEATURES:
            raise ConfigError(
                f"layer name {name!r} is not a site-map feature; name it one of: "
                + ", ".join(SITE_MAP_FEATURES),
                path=p,
            )
        if name in out:
            raise ConfigError(f"two layers for {name!r}", path=p)
        gdf = read_submission_layer(p, working_crs, folder=folder, label=f"{SITEMAP_DIR}/{name}")
        if gdf.empty:
            raise GeometryError("contains no features", path=p)
        out[name] = gdf
    return out


def contour_field(gdf: gpd.GeoDataFrame, declared: str | None, path: Path) -> str:
    """Return the elevation attribute of a contour layer (declared, or a usual name)."""
    if declared is not None:
        if declared not in gdf.columns:
            raise ConfigError(
                f"the contour layer has no attribute {declared!r}",
                path=path,
                field="site_map.contour_field",
            )
        return declared
    lower = {str(c).lower(): str(c) for c in gdf.columns}
    for name in CONTOUR_FIELDS:
        if name in lower:
            return lower[name]
    raise ConfigError(
        "name the elevation attribute of the contour layer (site_map.contour_field); "
        f"none of {', '.join(CONTOUR_FIELDS)} found",
        path=path,
        field="site_map.contour_field",
    )


def _grid_covers(grid: gpd.GeoDataFrame, site: shapely.Geometry, tol: float) -> bool:
    """Whether a grid layer overlies the whole site (polygons: their union; lines: extent)."""
    geoms = np.asarray(grid.geometry.values, dtype=object)
    polys = geoms[np.isin(shapely.get_type_id(geoms), _POLY_TYPES)]
    cover = shapely.union_all(polys) if polys.size else shapely.box(*shapely.total_bounds(geoms))
    return bool(shapely.covers(shapely.buffer(cover, tol), site))


def sitemap_facts(
    submission: LoadedSubmission,
    *,
    layers_near: dict[str, gpd.GeoDataFrame | None],
    working_crs: CRS,
    downstream: dict[str, Any] | None = None,
    adjacent_ft: float | None = None,
) -> dict[str, Any]:
    """Facts about the site map for the ``sitemap`` rules.

    Parameters
    ----------
    submission : georeview.load.LoadedSubmission
        The loaded submission (site in the working CRS, its folder and config).
    layers_near : dict
        Reference layers read around the site, in the working CRS (see
        :func:`features_near`); a missing or None entry makes its items unknown.
    working_crs : pyproj.CRS
        The projected working CRS.
    downstream : dict, optional
        The downstream trace (``DownstreamResult.to_dict()``); its
        ``reaches_water_within_quarter_mile`` says whether Somers (4)(h) asks for the
        discharge locations. None when not traced.
    adjacent_ft : float, optional
        "Immediately adjacent" distance; default: the ordinance's
        (:func:`adjacent_distance_ft`).

    Returns
    -------
    dict
        Flat facts (see the module docstring).

    Raises
    ------
    ConfigError, DataSourceError, GeometryError, CRSError
        For a bad ``sitemap/`` layer, contour layer or grid layer, naming the file.
    """
    cfg = submission.config
    sm = cfg.site_map
    site = submission.site_geom
    if adjacent_ft is None:
        adjacent_ft = adjacent_distance_ft(cfg.municipality)
    facts: dict[str, Any] = {"site_map.adjacent_ft": adjacent_ft}

    layers = sitemap_layers(submission.folder, working_crs)
    declared = set(sm.shows) if sm.shows is not None else None
    from_layers = set(layers or ())
    known = declared is not None or layers is not None
    shown = (declared or set()) | from_layers

    contours = _contour_facts(submission, working_crs)
    if contours["site_map.contour_interval_source"] == "measured":
        shown.add("topography")
    facts.update(contours)
    grid, has_grid = _grid_facts(submission, working_crs)
    if has_grid:
        shown.add("grid")
    if "grid" in shown and "site_map.grid" not in grid:
        grid["site_map.grid"] = True  # only ``shows`` or a sitemap/ layer names it
    facts.update(grid)

    near = features_near(site, layers_near, adjacent_ft=adjacent_ft, working_crs=working_crs)
    facts.update(_shown_facts(shown, known, near))

    wet = layers_near.get("wetlands")
    facts["site_map.on_site.wetlands"] = (
        None
        if wet is None
        else bool(np.any(shapely.intersects(np.asarray(wet.geometry.values), site)))
    )
    reaches = None if downstream is None else downstream.get("reaches_water_within_quarter_mile")
    facts["site_map.near.downstream_discharge"] = reaches
    facts["site_map.feature_ok.downstream_discharge"] = _tri_or_ok(
        reaches, facts["site_map.shows.downstream_discharge"]
    )
    documented = "site_map" in (cfg.plan.get("documents") or {})
    facts["site_map.provided"] = (
        True if (shown or sm.scale_ft_per_inch is not None or documented) else None
    )
    facts["site_map.layers"] = tuple(sorted(from_layers))
    return facts


def _shown_facts(
    shown: set[str], known: bool, near: dict[str, bool | None]
) -> dict[str, bool | None]:
    """What the map shows of every feature, and of each near-site one whether that is enough.

    ``known``: whether ``shows`` or a ``sitemap/`` folder says what the map shows at all
    (else a feature not named is unknown, not absent).
    """
    facts: dict[str, bool | None] = {}
    for f in SITE_MAP_FEATURES:
        facts[f"site_map.shows.{f}"] = True if f in shown else (False if known else None)
    for f in NEAR_FEATURES:
        s: bool | None = any(a in shown for a in SHOWN_AS[f])
        if not s and not known:
            s = None
        facts[f"site_map.near.{f}"] = near[f]
        facts[f"site_map.shows.{f}"] = s
        facts[f"site_map.feature_ok.{f}"] = _tri_or_ok(near[f], s)
    return facts


def _contour_facts(submission: LoadedSubmission, working_crs: CRS) -> dict[str, Any]:
    """The contour interval: measured from ``[site_map] contours`` when given, else declared.

    ``site_map.contour_interval_source`` is ``"measured"`` exactly when the layer was read
    (the map then shows the topography). The measured interval is the layer's dominant
    spacing; levels off it are counted, and a layer no one spacing explains has no
    interval (the declared one does not stand in for a layer that contradicts it).
    """
    sm = submission.config.site_map
    folder = submission.folder
    if not sm.contours:
        source = "declared" if sm.contour_interval_ft is not None else None
        return {
            "site_map.contour_interval_measured_ft": None,
            "site_map.contour_interval_regular": None,
            "site_map.contour_levels_off_interval": None,
            "site_map.contour_interval_source": source,
        }
    from georeview.measure.contours import contour_interval

    path = submission_file(folder, sm.contours, "site_map.contours")
    gdf = read_submission_layer(path, working_crs, folder=folder, label="site_map.contours")
    fld = contour_field(gdf, sm.contour_field, path)
    try:
        got = contour_interval(gdf, fld)
    except InputError as exc:
        raise ConfigError(f"{exc.message} ({fld})", path=path, field="site_map.contours") from None
    log.info(
        "contour layer %s: measured interval %s ft, %d of %d levels off it",
        path.name,
        "none" if got.interval_ft is None else f"{got.interval_ft:.3f}",
        len(got.off_interval),
        got.levels,
    )
    return {
        "site_map.contour_interval_ft": got.interval_ft,
        "site_map.contour_interval_measured_ft": got.interval_ft,
        "site_map.contour_interval_regular": got.regular,
        "site_map.contour_levels_off_interval": len(got.off_interval),
        "site_map.contour_interval_source": "measured",
    }


def _grid_facts(submission: LoadedSubmission, working_crs: CRS) -> tuple[dict[str, Any], bool]:
    """Whether the map has a grid: a ``[site_map] grid_layer`` covering the site, or declared.

    Returns the facts (none when neither is given: what ``shows`` says then decides)
    and whether the map shows a grid (a grid layer, even one short of the site, or
    ``grid = true``).
    """
    sm = submission.config.site_map
    if sm.grid_layer:
        folder = submission.folder
        path = submission_file(folder, sm.grid_layer, "site_map.grid_layer")
        grid = read_submission_layer(path, working_crs, folder=folder, label="site_map.grid_layer")
        if grid.empty:
            raise GeometryError("contains no features", path=path)
        tol = M_PER_FT / _unit_m(working_crs)
        covers = _grid_covers(grid, submission.site_geom, tol=tol)
        return {"site_map.grid_covers_site": covers, "site_map.grid": covers}, True
    if sm.grid is not None:
        return {"site_map.grid": sm.grid}, bool(sm.grid)
    return {}, False


def _tri_or_ok(near: bool | None, shown: bool | None) -> bool | None:
    """True when not near or shown; False when near and not shown; else None."""
    if near is False or shown is True:
        return True
    if near is True and shown is False:
        return False
    return None
