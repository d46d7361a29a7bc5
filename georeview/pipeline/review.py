"""The review pipeline: load → measure → judge → result.

:func:`review` is the one entry point that the command line, the batch runner and
tests call. It returns a :class:`georeview.pipeline.result.Review`, whose ``to_dict()``
is the single source of report.json, report.html and the map popups. The stages it
runs live beside it: :mod:`.terrain_stage`, :mod:`.engineering_stage`,
:mod:`.procedure_stage`; the layers folder and the village's jurisdictions come from
:mod:`.layers_folder` and :mod:`.jurisdictions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geopandas as gpd
import shapely

from georeview.errors import ConfigError
from georeview.facts.build import activity_columns, facts_frame, record_of, site_map_columns
from georeview.facts.compare import declared_vs_measured
from georeview.facts.determinations import (
    IGNORED_NOTE,
    Determinations,
    load_determinations,
    planted,
)
from georeview.facts.plan import plan_facts
from georeview.facts.sitemap import sitemap_facts
from georeview.load import Layers, LoadedSubmission, load_layers, load_submission, to_crs
from georeview.measure.areas import (
    Areas,
    floodway,
    measure_areas,
    none_on_site,
    sfha,
)
from georeview.measure.jurisdiction import JurisdictionResult, Jurisdictions, locate
from georeview.pipeline.engineering_stage import engineering_facts, engineering_stage
from georeview.pipeline.jurisdictions import jurisdictions_for
from georeview.pipeline.layers_folder import resolve_layers
from georeview.pipeline.procedure_stage import procedure
from georeview.pipeline.result import Review
from georeview.pipeline.terrain_stage import measure_terrain
from georeview.rules import Judgement, Ordinance, judge, load_ordinance
from georeview.units import M_PER_FT

__all__ = ["CONTEXT_MARGIN_M", "measured_facts", "review"]

#: Layers are read this far beyond the downstream trace around a site, m.
CONTEXT_MARGIN_M = 250.0


@dataclass(frozen=True)
class _Context:
    """The reference layers read around one site (working CRS; ``None`` when absent)."""

    wetlands: gpd.GeoDataFrame | None
    floodplain: gpd.GeoDataFrame | None
    sfha: gpd.GeoDataFrame | None
    floodways: gpd.GeoDataFrame | None
    hydrography: gpd.GeoDataFrame | None
    soils: gpd.GeoDataFrame | None
    roads: gpd.GeoDataFrame | None


def review(
    submission_dir: Path,
    layers_dir: Path | None = None,
    *,
    layers: Layers | None = None,
    jurisdictions: Jurisdictions | None = None,
    with_terrain: bool = True,
    determinations: Path | Determinations | None = None,
    determinations_not_in: tuple[Path, ...] = (),
) -> Review:
    """Review one submission folder against its municipality's ordinance.

    Parameters
    ----------
    submission_dir : Path
        Folder with submission.toml and its geometry files.
    layers_dir : Path, optional
        The municipality's layers folder; found from submission.toml when omitted.
    layers, jurisdictions : optional
        Already-loaded layers and extraterritorial areas (a batch computes them once).
    with_terrain : bool
        Run the DEM-based measures when the layers have a DEM.
    determinations : Path, optional
        The Village's determinations file (:mod:`georeview.facts.determinations`),
        outside the submission, or the determinations a case holds
        (:mod:`georeview.cases`). A ``determinations.toml`` in the submission is never
        read (the report warns of it).
    determinations_not_in : tuple of Path
        Other folders the determinations must not come from (a batch's folder).
    """
    submission_dir = Path(submission_dir)
    layers = _layers(submission_dir, layers_dir, layers, with_terrain=with_terrain)
    crs = to_crs(layers.config.working_crs, path=layers.folder / "layers.toml")
    # metres per unit of the working CRS: every margin below is given in metres or feet
    # and converted, so a State Plane CRS in US survey feet reads as far as one in metres
    unit_m = float(crs.axis_info[0].unit_conversion_factor)
    sub = _load_matching(submission_dir, layers, crs)
    ordinance = load_ordinance(layers.config.municipality)
    decided = (
        determinations
        if isinstance(determinations, Determinations)
        else load_determinations(
            determinations,
            sub.config.municipality,
            not_in=(submission_dir, *determinations_not_in),
        )
    )
    if jurisdictions is None:
        jurisdictions = jurisdictions_for(layers)
    site = sub.site_geom
    disturbance = sub.disturbance_geom
    warnings = [*sub.notes, *_disturbance_warnings(sub, site, disturbance, unit_m)]
    if planted(submission_dir):
        warnings.append(IGNORED_NOTE)
    trace_ft = float(ordinance.param("downstream_trace_ft"))
    ctx = _read_context(layers, site, (trace_ft * M_PER_FT + CONTEXT_MARGIN_M) / unit_m)
    areas = measure_areas(
        site,
        disturbance if sub.disturbance_declared else None,
        crs,
        wetlands=ctx.wetlands,
        floodplain_sfha=ctx.sfha,
        floodways=ctx.floodways,
        declared_disturbed_sqft=_declared_disturbed_sqft(sub),
    )
    _check_declared_area(sub, areas)
    where = locate(site, jurisdictions, unit_m=unit_m)
    if where.reason:
        warnings.append(f"Jurisdiction undetermined: {where.reason}.")
    terrain, map_extra, terr_warn = _terrain(
        with_terrain, layers, site, disturbance, crs, ctx, ordinance
    )
    warnings += terr_warn
    if not sub.disturbance_declared:
        terrain = _slopes_without_disturbance(terrain)
    eng = engineering_stage(sub, layers, areas, disturbance, site, ctx.soils)
    sitemap = _sitemap(sub, ctx, crs, terrain)
    facts = _facts(sub, measured_facts(areas, where, terrain), eng, sitemap, decided)
    extras: dict[str, Any] = {
        "soil_loss_tons_per_acre_year": eng.soil_loss_tons_per_acre_year,
        "peak_flow_cfs": eng.peak_flow_cfs,
        "engineering": eng.to_dict(),
        "determinations": decided.to_dict(),
    }
    judgement = _judge(ordinance, sub, facts, extras)
    return Review(
        submission=sub,
        layers=layers,
        ordinance=ordinance,
        jurisdiction=where,
        areas=areas,
        judgement=judgement,
        facts=facts,
        terrain=terrain,
        extras=extras,
        warnings=tuple(warnings),
        map_layers=_map_layers(ctx, map_extra),
        jurisdictions=jurisdictions,
    )


def _layers(
    submission_dir: Path, layers_dir: Path | None, layers: Layers | None, *, with_terrain: bool
) -> Layers:
    """The layers to review against (read unless given); start the flow routing's warm-up."""
    if layers is None:
        folder, _ = resolve_layers(submission_dir, layers_dir)
        layers = load_layers(folder)
    if with_terrain and layers.config.dem is not None:
        # numba's import and loading the kernels are most of a first trace's start-up:
        # begun here, it overlaps reading the submission and the layers around the site
        from georeview.measure.flow_routing import start_warm_up

        start_warm_up()
    return layers


def _sitemap(
    sub: LoadedSubmission, ctx: _Context, crs: Any, terrain: dict[str, Any]
) -> dict[str, Any]:
    """The site-map facts, against the reference layers read around the site."""
    return sitemap_facts(
        sub,
        layers_near={
            "wetlands": ctx.wetlands,
            "floodplain": ctx.sfha,
            "floodway": ctx.floodways,
            "hydrography": ctx.hydrography,
            "roads": ctx.roads,
        },
        working_crs=crs,
        downstream=terrain.get("downstream"),
    )


def _facts(
    sub: LoadedSubmission,
    measured: dict[str, Any],
    eng: Any,
    sitemap: dict[str, Any],
    decided: Determinations,
) -> dict[str, Any]:
    """The one record of facts the rules read: measured, declared, engineered, decided.

    The declared numbers georeview also measures are compared last, on the whole record
    (:mod:`georeview.facts.compare`); the declared contour interval is kept apart from the
    one a contour layer replaces it with.
    """
    declared_interval = {
        "site_map.contour_interval_declared_ft": sub.config.site_map.contour_interval_ft
    }
    record = record_of(
        facts_frame(
            measured,
            activity_columns(sub.config.activity, 1),
            n=1,
            site_map=site_map_columns(sub.config.site_map, 1),
            extra={
                **engineering_facts(eng),
                **plan_facts(sub),
                **sitemap,
                **declared_interval,
                **decided.facts(),
            },
        )
    )
    return {**record, **declared_vs_measured(record, disturbed_measured=sub.disturbance_declared)}


def _map_layers(
    ctx: _Context, map_extra: dict[str, gpd.GeoDataFrame]
) -> dict[str, gpd.GeoDataFrame]:
    """The reference and terrain layers map.html draws (those present)."""
    layers = {
        "wetlands": ctx.wetlands,
        "floodplain": ctx.floodplain,
        "hydrography": ctx.hydrography,
        "soils": ctx.soils,
        **map_extra,
    }
    return {k: v for k, v in layers.items() if v is not None}


def _terrain(
    with_terrain: bool,
    layers: Layers,
    site: shapely.Geometry,
    disturbance: shapely.Geometry,
    crs: Any,
    ctx: _Context,
    ordinance: Ordinance,
) -> tuple[dict[str, Any], dict[str, gpd.GeoDataFrame], list[str]]:
    """The terrain stage's measures, map layers and warnings (or why it was skipped)."""
    if not with_terrain:
        return (
            {},
            {},
            ["Terrain skipped (--no-terrain): slopes and the downstream trace are not measured."],
        )
    return measure_terrain(
        layers,
        site,
        disturbance,
        crs,
        hydro=ctx.hydrography,
        wetlands=ctx.wetlands,
        ordinance=ordinance,
    )


def _judge(
    ordinance: Ordinance, sub: LoadedSubmission, facts: dict[str, Any], extras: dict[str, Any]
) -> Judgement:
    """Judge the facts; for a site that may be regulated, add the procedure and judge again.

    Fees and deadlines depend on the category the first pass found; the second pass
    lets the fee and security rules quote the amounts. ``facts`` and ``extras`` gain
    the procedure's facts and report sections.
    """
    sources = declared_sources(sub)
    judgement = judge(ordinance, facts, sources=sources)
    if judgement.regulated is not False:
        extras.update(procedure(sub, judgement.category, ordinance.municipality, facts))
        facts.update(extras.pop("_facts"))
        judgement = judge(ordinance, facts, sources=sources)
    return judgement


def _load_matching(submission_dir: Path, layers: Layers, crs: Any) -> LoadedSubmission:
    """Load the submission in the working CRS; refuse one for another municipality."""
    sub = load_submission(submission_dir, crs)
    if sub.config.municipality != layers.config.municipality:
        raise ConfigError(
            f"submission is for {sub.config.municipality!r} but the layers are for "
            f"{layers.config.municipality!r}",
            path=submission_dir / "submission.toml",
            field="municipality",
        )
    return sub


def _disturbance_warnings(
    sub: LoadedSubmission,
    site: shapely.Geometry,
    disturbance: shapely.Geometry,
    unit_m: float,
) -> list[str]:
    """What the report says of a disturbance outside the site, or of none declared.

    ``unit_m`` is metres per working-CRS unit: a disturbance within 0.5 m of the
    boundary (digitising noise) is not reported as outside it.
    """
    warnings: list[str] = []
    inside = shapely.buffer(site, 0.5 / unit_m)
    if sub.disturbance_declared and not shapely.covers(inside, disturbance):
        warnings.append(
            "The disturbance extends outside the site boundary; only the part inside the "
            "site is counted."
        )
    if not sub.disturbance_declared:
        declared = sub.config.activity.disturbed_area_sqft
        warnings.append(
            "No disturbance file: the disturbed area is unknown (give a disturbance file, or "
            "activity.disturbed_area_sqft as the site map shows it)."
            if declared is None
            else f"No disturbance file: the disturbed area is the declared {declared:,.0f} sq ft "
            "(activity.disturbed_area_sqft); wetland, floodplain and steep slopes in it are "
            "known only where the site has none."
        )
    return warnings


def _declared_disturbed_sqft(sub: LoadedSubmission) -> float | None:
    """The declared disturbed area, used only when no disturbance file is given."""
    declared = sub.config.activity.disturbed_area_sqft
    return None if sub.disturbance_declared or declared is None else float(declared)


def _check_declared_area(sub: LoadedSubmission, areas: Areas) -> None:
    """Refuse a declared disturbed area larger than the measured site."""
    declared = _declared_disturbed_sqft(sub)
    site_sqft = areas.site_area_sqft
    # 0.1 % for the site map's rounding of an area the whole site is disturbed over
    if declared is not None and declared > site_sqft * 1.001:
        raise ConfigError(
            f"{declared:,.0f} sq ft is more than the site's {site_sqft:,.0f} sq ft",
            path=sub.folder / "submission.toml",
            field="activity.disturbed_area_sqft",
        )


def declared_sources(sub: LoadedSubmission) -> dict[str, str]:
    """Facts this submission declares that the registry lists as measured.

    Without a disturbance file the disturbed area is the applicant's figure: its findings
    rest on what was declared, not on a measurement.
    """
    if sub.disturbance_declared or sub.config.activity.disturbed_area_sqft is None:
        return {}
    return dict.fromkeys(("disturbed_area_sqft", "disturbed_area_acres"), "declared")


def _slopes_without_disturbance(terrain: dict[str, Any]) -> dict[str, Any]:
    """Steep slopes of an unmapped disturbance: 0 where the site has none, else unknown.

    The terrain stage measured the whole site (the only polygon there is); its steepest
    slope is not the disturbance's, so it is dropped.
    """
    out = dict(terrain)
    for key in ("steep_slope_area_sqft", "steep_slope_area_gt_sqft"):
        if key in out:
            out[key] = none_on_site(out[key])
    if "max_slope_pct" in out:
        out["max_slope_pct"] = None
    return out


def _read_context(layers: Layers, site: shapely.Geometry, margin: float) -> _Context:
    """Read the reference layers within ``margin`` (working CRS units) of the site."""
    # the bounds of the site grown by the margin: what a buffer's bounds would be, without
    # buffering every vertex of a detailed boundary
    x0, y0, x1, y1 = (float(v) for v in shapely.bounds(site))
    bbox = (x0 - margin, y0 - margin, x1 + margin, y1 + margin)
    fp_raw = layers.read("floodplain", bbox=bbox)
    fp_spec = layers.config.floodplain
    fp_sfha = fp_ways = None
    if fp_raw is not None and fp_spec is not None:
        fp_sfha = sfha(fp_raw, fp_spec.zone_field, fp_spec.sfha_field)
        fp_ways = floodway(fp_raw, fp_spec.subtype_field)
    return _Context(
        wetlands=layers.read("wetlands", bbox=bbox),
        floodplain=fp_raw,
        sfha=fp_sfha,
        floodways=fp_ways,
        hydrography=layers.read("hydrography", bbox=bbox),
        soils=layers.read("soils", bbox=bbox),
        roads=layers.read("roads", bbox=bbox),
    )


def measured_facts(
    areas: Areas, where: JurisdictionResult, terrain: dict[str, Any]
) -> dict[str, Any]:
    """The measure stage's facts of one site (:data:`georeview.facts.build.MEASURED`)."""
    down = terrain.get("downstream") or {}
    return {
        "jurisdiction.status": where.status,
        "jurisdiction.undetermined_reason": where.reason or None,
        **{
            f"jurisdiction.share.{s}": where.share(s)
            for s in ("village", "extraterritorial", "outside")
        },
        "site_area_sqft": areas.site_area_sqft,
        "disturbed_area_sqft": areas.disturbed_area_sqft,
        "wetland_area_sqft": areas.wetland_area_sqft,
        "wetland_in_disturbance_sqft": areas.wetland_in_disturbance_sqft,
        "floodplain_area_sqft": areas.floodplain_area_sqft,
        "floodplain_in_disturbance_sqft": areas.floodplain_in_disturbance_sqft,
        "floodway_present": areas.floodway_present,
        **{
            k: terrain.get(k)
            for k in ("steep_slope_area_sqft", "steep_slope_area_gt_sqft", "max_slope_pct")
        },
        "downstream.reaches_water_within_quarter_mile": down.get(
            "reaches_water_within_quarter_mile"
        ),
        "downstream.receiving_feature": down.get("receiving_feature"),
        "downstream.distance_ft": down.get("distance_ft"),
    }
