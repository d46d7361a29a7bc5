"""The review pipeline: load → measure → judge → result.

:func:`review` is the one entry point that the command line, the batch runner
and tests call. It returns a :class:`Review`, whose :meth:`Review.to_dict` is
the single source of report.json, report.html and the map popups.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
import shapely

from georeview import __version__
from georeview.config import load_submission_config
from georeview.errors import ConfigError, DataSourceError
from georeview.facts.build import activity_columns, facts_frame, record_of, site_map_columns
from georeview.facts.determinations import FILE_NAME as DETERMINATIONS_FILE
from georeview.facts.determinations import load_determinations
from georeview.facts.plan import plan_facts
from georeview.facts.sitemap import sitemap_facts
from georeview.load import Layers, LoadedSubmission, load_layers, load_submission, to_crs
from georeview.load.build import layer_inventory
from georeview.measure.areas import Areas, floodway, measure_areas, sfha
from georeview.measure.jurisdiction import JurisdictionResult, Jurisdictions, build, locate
from georeview.rules import Judgement, Ordinance, judge, load_ordinance
from georeview.units import M_PER_FT

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
#: Context read around a site: the 1/4-mile downstream reach plus a margin (metres).
#: Layers are read this far beyond the downstream trace around a site, m.
CONTEXT_MARGIN_M = 250.0


def find_layers_dir(municipality: str, start: Path | None = None) -> Path:
    """Find ``layers/<municipality>`` for a submission that names no layers folder.

    Looks in ``$GEOREVIEW_LAYERS``, then ``./layers`` (the reviewer's working folder),
    then the source checkout or installation that holds this package. Never in the
    submission or the folders above it: reference layers are the Village's data, and
    a submission (an extracted zip above all) must not bring its own wetlands and
    floodplain. A candidate inside ``start`` (the submission folder) is skipped.
    """
    candidates: list[Path] = []
    env = os.environ.get("GEOREVIEW_LAYERS")
    if env:
        candidates.append(Path(env) / municipality)
    candidates.append(Path.cwd() / "layers" / municipality)
    candidates.append(Path(__file__).resolve().parents[2] / "layers" / municipality)
    sub = None if start is None else Path(start).resolve()
    for c in candidates:
        if sub is not None and c.resolve().is_relative_to(sub):
            log.warning("layers folder %s is inside the submission: not used", c)
            continue
        if (c / "layers.toml").is_file():
            return c
    raise DataSourceError(
        f"no layers folder for municipality {municipality!r} (looked for "
        f"layers/{municipality}/layers.toml in $GEOREVIEW_LAYERS, ./layers and the"
        " installation); pass --layers",
        field="municipality",
    )


@dataclass(frozen=True)
class Review:
    """Everything one review found; ``to_dict()`` is report.json."""

    submission: LoadedSubmission
    layers: Layers
    ordinance: Ordinance
    jurisdiction: JurisdictionResult
    areas: Areas
    judgement: Judgement
    facts: dict[str, Any]
    terrain: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    #: Geometries for the map (working CRS), keyed by layer name.
    map_layers: dict[str, gpd.GeoDataFrame] = field(default_factory=dict, repr=False)
    jurisdictions: Jurisdictions | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-ready dict (DESIGN §2.4, schema_version 1)."""
        cfg = self.submission.config
        j = self.judgement
        measures = self.areas.to_dict()
        measures.update(
            {
                "steep_slope_area_sqft": self.terrain.get("steep_slope_area_sqft"),
                "steep_slope_area_gt_sqft": self.terrain.get("steep_slope_area_gt_sqft"),
                "max_slope_pct": self.terrain.get("max_slope_pct"),
                "downstream": self.terrain.get("downstream")
                or {
                    "reaches_water_within_quarter_mile": None,
                    "distance_ft": None,
                    "receiving_feature": None,
                    "reason": "not traced: no DEM in layers.toml, or terrain skipped",
                },
                "slope": {
                    k: self.terrain.get(k)
                    for k in ("mean_slope_pct", "n_cells", "n_nodata_cells", "cell_area_sqft")
                },
                "soil_loss_tons_per_acre_year": self.extras.get("soil_loss_tons_per_acre_year"),
                "peak_flow_cfs": self.extras.get("peak_flow_cfs"),
            }
        )
        findings = [f.to_dict() for f in j.findings]
        counts = dict.fromkeys(("pass", "fail", "needs_info", "not_applicable"), 0)
        for f in j.findings:
            counts[f.status] += 1
        category_label = (
            self.ordinance.category_labels.get(j.category, j.category) if j.category else None
        )
        return {
            "schema_version": SCHEMA_VERSION,
            "georeview_version": __version__,
            "municipality": self.ordinance.municipality,
            "ordinance": {
                "title": self.ordinance.title,
                "short_name": self.ordinance.short_name,
                "source": self.ordinance.source,
                "notes": self.ordinance.notes,
            },
            "submission": {
                "folder": self.submission.folder.name,
                "name": cfg.name,
                "applicant": cfg.applicant,
                "description": cfg.description,
                "application_date": _iso(cfg.application_date),
                "site_file": cfg.site,
                "disturbance_file": cfg.disturbance,
                "disturbance_declared": self.submission.disturbance_declared,
                "activity": cfg.activity.model_dump(mode="json"),
                "site_map": cfg.site_map.model_dump(mode="json"),
            },
            "layers": {
                "folder": str(self.layers.folder),
                "working_crs": self.layers.config.working_crs,
                "synthetic": sorted(
                    n
                    for n in type(self.layers.config).model_fields
                    if getattr(getattr(self.layers.config, n), "synthetic", False)
                ),
                "used": layer_inventory(self.layers),
            },
            # every coordinate report.json gives, and the CRS it is in
            "coordinates": {
                "crs": self.layers.config.working_crs,
                "fields": [
                    "measures.downstream.discharge_points[].x",
                    "measures.downstream.discharge_points[].y",
                ],
            },
            "jurisdiction": {
                **self.jurisdiction.to_dict(),
                "village": self.layers.config.village_name
                or (self.jurisdictions.village.name if self.jurisdictions else None),
            },
            "measures": measures,
            "classification": {
                "regulated": j.regulated,
                "category": j.category,
                "category_label": category_label,
                "larger_site": j.larger_site,
                "extraordinary": j.flags.get("extraordinary"),
                "reached": j.reached,
                "exempt": j.exempt,
            },
            "summary": {
                "counts": counts,
                "fail": [f"{f.citation}: {f.message}" for f in j.findings if f.status == "fail"],
                "needs_info": [
                    f"{f.citation}: {f.message}" for f in j.findings if f.status == "needs_info"
                ],
            },
            "findings": findings,
            **{k: v for k, v in self.extras.items() if k not in measures},
            "repairs": [r.to_dict() for r in self.submission.repairs],
            "warnings": list(self.warnings),
        }


def _iso(d: Any) -> str | None:
    return None if d is None else d.isoformat()


def resolve_layers(submission_dir: Path, layers_dir: Path | None) -> tuple[Path, str]:
    """Return the layers folder and municipality for a submission."""
    cfg = load_submission_config(Path(submission_dir) / "submission.toml", folder=submission_dir)
    folder = Path(layers_dir) if layers_dir else find_layers_dir(cfg.municipality, submission_dir)
    return folder, cfg.municipality


def jurisdictions_for(layers: Layers) -> Jurisdictions:
    """Compute the village's extraterritorial area from its boundary layers."""
    cfg = layers.config
    toml = layers.folder / "layers.toml"
    if cfg.boundary is None:
        raise ConfigError("a [boundary] layer is required", path=toml, field="boundary")
    boundary = layers.read("boundary")
    if boundary is None or boundary.empty:
        raise DataSourceError("the boundary layer has no features", path=layers.path("boundary"))
    # No neighbours layer: the extraterritorial area is undetermined (the sites in it
    # say needs_info), never empty.
    neighbours = layers.read("neighbors")
    nb = cfg.neighbors
    try:
        return build(
            shapely.union_all(boundary.geometry.values),
            cfg.village_name or cfg.municipality.title(),
            neighbours,
            kind_field=nb.kind_field if nb else "CTV",
            name_field=nb.name_field if nb else "MCD_NAME",
            city_class=dict(nb.city_class) if nb else {},
            reach_miles=load_ordinance(cfg.municipality).param("etj_miles"),
            crs=boundary.crs,
        )
    except ConfigError as exc:
        if exc.path is not None:
            raise
        raise ConfigError(exc.message, path=toml, field=exc.field) from None


def review(
    submission_dir: Path,
    layers_dir: Path | None = None,
    *,
    layers: Layers | None = None,
    jurisdictions: Jurisdictions | None = None,
    with_terrain: bool = True,
    determinations: Path | None = None,
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
        The Village's determinations file (:mod:`georeview.facts.determinations`);
        default ``determinations.toml`` beside submission.toml when there is one.
    """
    submission_dir = Path(submission_dir)
    if layers is None:
        folder, _ = resolve_layers(submission_dir, layers_dir)
        layers = load_layers(folder)
    crs = to_crs(layers.config.working_crs, path=layers.folder / "layers.toml")
    sub = load_submission(submission_dir, crs)
    if sub.config.municipality != layers.config.municipality:
        raise ConfigError(
            f"submission is for {sub.config.municipality!r} but the layers are for "
            f"{layers.config.municipality!r}",
            path=submission_dir / "submission.toml",
            field="municipality",
        )
    ordinance = load_ordinance(layers.config.municipality)
    if determinations is None and (submission_dir / DETERMINATIONS_FILE).is_file():
        determinations = submission_dir / DETERMINATIONS_FILE
    decided = load_determinations(determinations, sub.config.municipality)
    if jurisdictions is None:
        jurisdictions = jurisdictions_for(layers)
    site = sub.site_geom
    disturbance = sub.disturbance_geom
    warnings: list[str] = []
    if sub.disturbance_declared and not shapely.covers(shapely.buffer(site, 0.5), disturbance):
        warnings.append(
            "The disturbance extends outside the site boundary; only the part inside the "
            "site is counted."
        )
    if not sub.disturbance_declared:
        warnings.append("No disturbance file: the whole site is taken as disturbed.")
    trace_ft = float(ordinance.param("downstream_trace_ft"))
    bbox = tuple(shapely.bounds(shapely.buffer(site, trace_ft * M_PER_FT + CONTEXT_MARGIN_M)))
    wetlands = layers.read("wetlands", bbox=bbox)
    fp_raw = layers.read("floodplain", bbox=bbox)
    fp_spec = layers.config.floodplain
    fp_sfha = fp_ways = None
    if fp_raw is not None and fp_spec is not None:
        fp_sfha = sfha(fp_raw, fp_spec.zone_field, fp_spec.sfha_field)
        fp_ways = floodway(fp_raw, fp_spec.subtype_field)
    areas = measure_areas(
        site, disturbance, crs, wetlands=wetlands, floodplain_sfha=fp_sfha, floodways=fp_ways
    )
    where = locate(site, jurisdictions, unit_m=float(crs.axis_info[0].unit_conversion_factor))
    if where.reason:
        warnings.append(f"Jurisdiction undetermined: {where.reason}.")
    hydro = layers.read("hydrography", bbox=bbox)
    terrain: dict[str, Any] = {}
    map_extra: dict[str, gpd.GeoDataFrame] = {}
    if not with_terrain:
        warnings.append(
            "Terrain skipped (--no-terrain): slopes and the downstream trace are not measured."
        )
    else:
        terrain, map_extra, terr_warn = measure_terrain(
            layers, site, disturbance, crs, hydro=hydro, wetlands=wetlands, ordinance=ordinance
        )
        warnings += terr_warn
    soils = layers.read("soils", bbox=bbox)
    eng = engineering_stage(sub, layers, areas, disturbance, site, soils)
    sitemap = sitemap_facts(
        sub,
        layers_near={
            "wetlands": wetlands,
            "floodplain": fp_sfha,
            "floodway": fp_ways,
            "hydrography": hydro,
            "roads": layers.read("roads", bbox=bbox),
        },
        working_crs=crs,
        downstream=terrain.get("downstream"),
    )
    facts = record_of(
        facts_frame(
            measured_facts(areas, where, terrain),
            activity_columns(sub.config.activity, 1),
            n=1,
            site_map=site_map_columns(sub.config.site_map, 1),
            extra={**engineering_facts(eng), **plan_facts(sub), **sitemap, **decided.facts()},
        )
    )
    judgement = judge(ordinance, facts)
    extras: dict[str, Any] = {
        "soil_loss_tons_per_acre_year": eng.soil_loss_tons_per_acre_year,
        "peak_flow_cfs": eng.peak_flow_cfs,
        "engineering": eng.to_dict(),
        "determinations": decided.to_dict(),
    }
    if judgement.regulated is not False:
        # Fees and deadlines depend on the category the first pass found; the
        # second pass lets the fee and security rules quote the amounts.
        extras.update(procedure(sub, judgement.category, ordinance.municipality, facts))
        facts.update(extras.pop("_facts"))
        judgement = judge(ordinance, facts)
    map_layers = {
        "wetlands": wetlands,
        "floodplain": fp_raw,
        "hydrography": hydro,
        "soils": soils,
        **map_extra,
    }
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
        map_layers={k: v for k, v in map_layers.items() if v is not None},
        jurisdictions=jurisdictions,
    )


def measure_terrain(
    layers: Layers,
    site: shapely.Geometry,
    disturbance: shapely.Geometry,
    crs: Any,
    *,
    hydro: gpd.GeoDataFrame | None,
    wetlands: gpd.GeoDataFrame | None,
    ordinance: Ordinance,
) -> tuple[dict[str, Any], dict[str, gpd.GeoDataFrame], list[str]]:
    """Slopes, contours and the 1/4-mile downstream trace from the municipality's DEM.

    A DEM that does not cover what a measure needs leaves that measure ``None``
    (the rules then say needs_info) and adds a warning; it never stops the review.

    Returns
    -------
    (measures, map layers, warnings)
    """
    from georeview import terrain
    from georeview.errors import CoverageError
    from georeview.measure import flow

    spec = layers.config.dem
    if spec is None:
        return {}, {}, ["No DEM in layers.toml: slope and downstream measures need information."]
    path = layers.folder / spec.path
    units = spec.vertical_units
    out: dict[str, Any] = {}
    maps: dict[str, gpd.GeoDataFrame] = {}
    warnings: list[str] = []
    disturbed = shapely.intersection(disturbance, site)
    try:
        steep = terrain.steep_slopes(
            path,
            units,
            disturbed,
            crs,
            working_crs=crs,
            threshold_pct=float(ordinance.param("steep_slope_pct")),
        )
        out.update(steep.to_dict())
        n_in = steep.n_cells + steep.n_nodata_cells
        out["nodata_share"] = steep.n_nodata_cells / n_in if n_in else None
        if steep.n_nodata_cells:
            # Cells without a slope are not flat: the steep area there is unknown, so
            # the slope measures are left empty (needs_info), with the share missing.
            for key in ("steep_slope_area_sqft", "steep_slope_area_gt_sqft", "max_slope_pct"):
                out[key] = None
            out["mean_slope_pct"] = None
            warnings.append(
                f"Slopes not measured: {100 * out['nodata_share']:.1f} % of the {n_in:,} DEM"
                " cells inside the disturbed area have no data (nodata, or the DEM edge);"
                " the slope there cannot be told"
            )
        elif steep.polygons is not None and len(steep.polygons):
            slope_class = f"{ordinance.param('steep_slope_pct'):g} % or more"
            maps["steep_slopes"] = steep.polygons.assign(slope_class=slope_class)
    except CoverageError as exc:
        warnings.append(f"Slopes not measured: {exc.one_line()}")
    try:
        around = shapely.buffer(site, 60.0 / float(crs.axis_info[0].unit_conversion_factor))
        maps["contours"] = terrain.contours_ft(
            path, units, around, crs, interval_ft=2.0, working_crs=crs
        )
    except CoverageError as exc:
        warnings.append(f"Contours not drawn: {exc.one_line()}")
    hspec = layers.config.hydrography
    wspec = layers.config.wetlands
    down = flow.trace_downstream(
        path,
        units,
        site,
        crs,
        waters=hydro,
        wetlands=wetlands,
        name_field=(hspec.name_field if hspec and hspec.name_field else "GNIS_NAME"),
        water_id_field=hspec.id_field if hspec else None,
        wetland_id_field=wspec.id_field if wspec else None,
        working_crs=crs,
        length_ft=float(ordinance.param("downstream_trace_ft")),
    )
    out["downstream"] = down.to_dict()
    reasons: list[str] = []
    if out.get("nodata_share") and down.reaches_water_within_quarter_mile is False:
        # Runoff from the cells without data was not traced: "reaches no water" is
        # then not known (one that does reach water stays a yes).
        reasons.append(
            f"{100 * out['nodata_share']:.1f} % of the DEM cells inside the disturbed area"
            " have no data; flow from them was not traced"
        )
    absent = [n for n in ("hydrography", "wetlands") if getattr(layers.config, n) is None]
    if absent and down.reaches_water_within_quarter_mile is False:
        # Finding no water proves nothing when the layer that maps it is missing.
        reasons.append(
            f"no {' or '.join(absent)} layer in layers.toml: the trace found none of the "
            "waters it could see, but cannot say that none lies downstream"
        )
    if reasons:
        out["downstream"].update(reaches_water_within_quarter_mile=None, reason="; ".join(reasons))
    if out["downstream"].get("reason"):
        warnings.append(f"Downstream trace: {out['downstream']['reason']}")
    # A DEM whose elevations or slopes are implausible for its declared vertical units
    # (metres declared feet, or the reverse) is flagged, never silently used.
    warnings += terrain.vertical_units_warnings(
        path, units, site, crs, max_slope_pct=out.get("max_slope_pct")
    )
    if down.path is not None and not shapely.is_empty(down.path):
        maps["downstream"] = gpd.GeoDataFrame(
            {
                "receiving_feature": [down.receiving_feature or "none within 1/4 mile"],
                "distance_ft": [down.distance_ft],
            },
            geometry=[down.path],
            crs=crs,
        )
    return out, maps, warnings


def soil_rows(
    soils: gpd.GeoDataFrame | None, area: shapely.Geometry, layers: Layers
) -> list[tuple[float, str | None, float | None]] | None:
    """(area_sqft, hydrologic group, K factor) of each soil map unit inside ``area``."""
    spec = layers.config.soils
    if soils is None or spec is None or len(soils) == 0:
        return None
    from georeview.measure.areas import sqft_per_crs_unit2

    geoms = soils.geometry.values
    hit = shapely.intersects(geoms, area)
    if not hit.any():
        return []
    parts = shapely.intersection(geoms[hit], area)
    sqft = shapely.area(parts) * sqft_per_crs_unit2(soils.crs)
    cols = {c.lower(): c for c in soils.columns}
    hsg_col = cols.get(spec.hsg_field.lower())
    k_col = cols.get(spec.kfactor_field.lower())
    sub = soils[hit]
    hsg = sub[hsg_col].astype("string").tolist() if hsg_col else [None] * len(sub)
    kf = pd.to_numeric(sub[k_col], errors="coerce").tolist() if k_col else [None] * len(sub)
    return [
        (float(a), None if h is None or pd.isna(h) else str(h), None if pd.isna(k) else float(k))
        for a, h, k in zip(sqft, hsg, kf, strict=True)
        if a > 0
    ]


def engineering_stage(
    sub: LoadedSubmission,
    layers: Layers,
    areas: Areas,
    disturbance: shapely.Geometry,
    site: shapely.Geometry,
    soils: gpd.GeoDataFrame | None,
) -> Any:
    """USLE, TR-55 and basin sizing (georeview.measure.engineering) for one submission."""
    from georeview.measure import engineering

    cfg = sub.config
    inputs = engineering.parse_sections(
        {
            "soil_loss": cfg.soil_loss,
            "hydrology": cfg.hydrology,
            "basins": [dict(b) for b in cfg.basins],
            "dewatering": cfg.dewatering,
        },
        sub.folder / "submission.toml",
    )
    return engineering.evaluate(
        inputs,
        municipality=layers.config.municipality,
        disturbed_area_sqft=areas.disturbed_area_sqft,
        site_area_sqft=areas.site_area_sqft,
        soils=soil_rows(soils, shapely.intersection(disturbance, site), layers),
    )


def _all_ok(values: list[bool | None]) -> bool | None:
    """Three-valued AND over checks; ``None`` when there are none."""
    if not values:
        return None
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def engineering_facts(eng: Any) -> dict[str, Any]:
    """Flatten the engineering result into the facts the engineering rules read."""
    facts: dict[str, Any] = {
        "soil_loss_tons_per_acre_year": eng.soil_loss_tons_per_acre_year,
        "soil_loss.calculated": True if eng.soil_loss_tons_per_acre_year is not None else None,
        "soil_loss.mep_explanation_given": eng.soil_loss.mep_explanation_given,
        # a phase without its share of annual R was given the share of the year it lasts
        "soil_loss.uniform_erosivity": (
            None
            if eng.soil_loss_tons_per_acre_year is None
            else any(p.get("r_fraction") is None for p in eng.soil_loss.phases)
        ),
        "sediment_basin.ok": eng.sediment_basin.get("ok"),
        "sediment_basin.required_area_sqft": eng.sediment_basin.get("required_area_sqft"),
        "dewatering.required_area_sqft": eng.dewatering.get("required_area_sqft"),
        "basins.max_unfenced_depth_ft": eng.max_unfenced_depth_ft,
    }
    peaks = eng.peak_flow_cfs or {}
    for storm, q in peaks.items():
        # After the controls when the applicant routed the outflow; else TR-55's post peak.
        pre = q.get("pre")
        post = q.get("post_routed", q.get("post"))
        facts[f"peak.{storm}.increase_cfs"] = (
            None if pre is None or post is None else round(post - pre, 3)
        )
    for kind in ("sediment", "dewatering"):
        checks = [c for c in eng.basin_checks if c["kind"] == kind]
        facts[f"basins.{kind}.depth_ok"] = _all_ok([c["depth"]["ok"] for c in checks])
        facts[f"basins.{kind}.fence_ok"] = _all_ok([c["fence"]["ok"] for c in checks])
        facts[f"basins.{kind}.ok"] = _all_ok([c["ok"] for c in checks])
    return facts


def procedure(
    sub: LoadedSubmission,
    category: str | None,
    municipality: str,
    facts: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Deadlines (georeview.calendar) and money (georeview.procedure.fees) for a regulated site.

    Returns the report sections ``deadlines`` and ``fees``, and under ``_facts``
    the amounts the fee and security rules read and ``schedule.starts_after_decision``
    (:func:`georeview.calendar.starts_after_decision`). ``facts`` supplies the plan's
    ``plan.controls_install_date``.
    """
    from georeview.calendar import deadlines, starts_after_decision
    from georeview.procedure.fees import money

    act = sub.config.activity
    fees = money(
        municipality,
        category=category,
        control_cost_usd=act.control_cost_usd,
        plat_fee_paid=act.plat_fee_paid,
        building_permit_fee_paid=act.building_permit_fee_paid,
    )
    # money.toml names the fact each item's amount gives (``fact``): the item that applies
    # to the category gives it, whatever its id in that municipality.
    money_facts: dict[str, Any] = {}
    for item in fees.items:
        if item.fact is not None and money_facts.get(item.fact) is None:
            money_facts[item.fact] = item.fact_value
    out: dict[str, Any] = {"fees": fees.to_dict(), "_facts": money_facts}
    if sub.config.application_date is not None:
        listed = deadlines(
            municipality,
            application_date=sub.config.application_date,
            category=category,
            building_permit_days=act.building_permit_days,
            start_date=act.start_date,
            controls_install_date=(facts or {}).get("plan.controls_install_date"),
        )
        out["deadlines"] = [d.to_dict() for d in listed]
        out["_facts"]["schedule.starts_after_decision"] = starts_after_decision(
            municipality, listed, sub.config.application_date, act.start_date
        )
    else:
        out["deadlines"] = []
        out["_facts"]["schedule.starts_after_decision"] = None
    return out


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
    }
