"""The review's engineering stage: USLE soil loss, TR-55 peaks and basin sizing.

Runs :mod:`georeview.measure.engineering` on the submission's declared inputs and the
soils under its disturbance, and flattens the result into the facts the engineering
rules read.
"""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import pandas as pd
import shapely

from georeview.load import Layers, LoadedSubmission
from georeview.measure.areas import Areas

__all__ = ["engineering_facts", "engineering_stage", "soil_rows"]


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
    from georeview.measure import engineering, engineering_inputs

    cfg = sub.config
    inputs = engineering_inputs.parse_sections(
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


def _evenly_spread(phases: Any) -> list[str]:
    """The phases that give no share of annual erosivity (``r_fraction``), by name."""
    return [p["name"] for p in phases if p.get("r_fraction") is None]


def _unsettled(even: list[str], rate: float | None, reason: str | None) -> str | None:
    """Why the soil loss is not known: phases without their erosivity share, or the engine's."""
    if even:
        return (
            f"no share of annual erosivity (r_fraction, with its source) for "
            f"{', '.join(even)}; spread evenly over the year the rate would be "
            f"{rate:,.2f} tons/acre/year, but the period of disturbance decides it, and most "
            "of Wisconsin's erosivity falls from May to September"
        )
    if rate is None:
        return f"not computed ({reason or 'declare [soil_loss] phases'})"
    return None


def engineering_facts(eng: Any) -> dict[str, Any]:
    """Flatten the engineering result into the facts the engineering rules read."""
    rate = eng.soil_loss_tons_per_acre_year
    even = _evenly_spread(eng.soil_loss.phases) if rate is not None else []
    facts: dict[str, Any] = {
        # the rate is judged only on each phase's own share of annual erosivity
        "soil_loss_tons_per_acre_year": None if even else rate,
        "soil_loss.uniform_estimate_tons_per_acre_year": rate if even else None,
        "soil_loss.unsettled_reason": _unsettled(even, rate, eng.soil_loss.reason),
        "soil_loss.calculated": True if rate is not None else None,
        "soil_loss.mep_explanation_given": eng.soil_loss.mep_explanation_given,
        "soil_loss.uniform_erosivity": None if rate is None else bool(even),
        "sediment_basin.ok": eng.sediment_basin.get("ok"),
        "sediment_basin.required_area_sqft": eng.sediment_basin.get("required_area_sqft"),
        "sediment_basin.reason": eng.sediment_basin.get("reason"),
        "dewatering.required_area_sqft": eng.dewatering.get("required_area_sqft"),
        "basins.max_unfenced_depth_ft": eng.max_unfenced_depth_ft,
        "basins.declared_count": eng.basins_declared,
    }
    peaks = eng.peak_flow_cfs or {}
    for storm, q in peaks.items():
        # "leaving the site during or after disturbance": the larger rise of the two, each
        # after the controls when the applicant routed it, else TR-55's own peak.
        pre = q.get("pre")
        post = q.get("post_routed", q.get("post"))
        during = q.get("construction_routed", q.get("construction"))
        facts[f"peak.{storm}.increase_cfs"] = (
            None
            if pre is None or post is None or during is None
            else round(max(post, during) - pre, 3)
        )
    for kind in ("sediment", "dewatering"):
        checks = [c for c in eng.basin_checks if c["kind"] == kind]
        facts[f"basins.{kind}.depth_ok"] = _all_ok([c["depth"]["ok"] for c in checks])
        facts[f"basins.{kind}.fence_ok"] = _all_ok([c["fence"]["ok"] for c in checks])
        facts[f"basins.{kind}.ok"] = _all_ok([c["ok"] for c in checks])
    return facts
