"""The result of one review and its report.json form.

:class:`Review` holds what every stage found; :meth:`Review.to_dict` is the single
source of report.json, report.html and the map popups (DESIGN §2.4).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import geopandas as gpd

from georeview._version import __version__
from georeview.load import Layers, LoadedSubmission
from georeview.load.inventory import layer_inventory
from georeview.measure.areas import Areas
from georeview.measure.jurisdiction import JurisdictionResult, Jurisdictions
from georeview.rules import Judgement, Ordinance

__all__ = ["SCHEMA_VERSION", "Review"]

SCHEMA_VERSION = 1
#: What report.json says of the downstream trace when none was run.
_NOT_TRACED = {
    "reaches_water_within_quarter_mile": None,
    "distance_ft": None,
    "receiving_feature": None,
    "reason": "not traced: no DEM in layers.toml, or terrain skipped",
}


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
        measures = self._measures()
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
            "submission": self._submission(),
            "layers": self._layers(),
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
            "classification": self._classification(),
            "summary": self._summary(),
            "findings": [f.to_dict() for f in self.judgement.findings],
            **{k: v for k, v in self.extras.items() if k not in measures},
            "repairs": [r.to_dict() for r in self.submission.repairs],
            "warnings": list(self.warnings),
        }

    def _measures(self) -> dict[str, Any]:
        """report.json ``measures``: the areas, then the terrain and engineering figures."""
        measures = self.areas.to_dict()
        measures.update(
            {
                "steep_slope_area_sqft": self.terrain.get("steep_slope_area_sqft"),
                "steep_slope_area_gt_sqft": self.terrain.get("steep_slope_area_gt_sqft"),
                "max_slope_pct": self.terrain.get("max_slope_pct"),
                "downstream": self.terrain.get("downstream") or dict(_NOT_TRACED),
                "slope": {
                    k: self.terrain.get(k)
                    for k in ("mean_slope_pct", "n_cells", "n_nodata_cells", "cell_area_sqft")
                },
                "soil_loss_tons_per_acre_year": self.extras.get("soil_loss_tons_per_acre_year"),
                "peak_flow_cfs": self.extras.get("peak_flow_cfs"),
            }
        )
        return measures

    def _submission(self) -> dict[str, Any]:
        """report.json ``submission``: what the applicant declared."""
        cfg = self.submission.config
        return {
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
        }

    def _layers(self) -> dict[str, Any]:
        """report.json ``layers``: the folder, its CRS and every layer read."""
        cfg = self.layers.config
        return {
            "folder": str(self.layers.folder),
            "working_crs": cfg.working_crs,
            "synthetic": sorted(
                n for n in type(cfg).model_fields if getattr(getattr(cfg, n), "synthetic", False)
            ),
            "used": copy.deepcopy(self._inventory),
        }

    @cached_property
    def _inventory(self) -> list[dict[str, Any]]:
        # Opening every layer file to count its features is the slowest part of
        # to_dict(), which the CLI, the batch and the report writers each call: once per
        # review is enough (the files do not change during one). Copied on use, so a
        # caller editing its report changes no other's.
        return layer_inventory(self.layers)

    def _classification(self) -> dict[str, Any]:
        """report.json ``classification``: what the judge decided of the site."""
        j = self.judgement
        label = self.ordinance.category_labels.get(j.category, j.category) if j.category else None
        return {
            "regulated": j.regulated,
            "category": j.category,
            "category_label": label,
            "larger_site": j.larger_site,
            "extraordinary": j.flags.get("extraordinary"),
            "reached": j.reached,
            "exempt": j.exempt,
        }

    def counts(self) -> dict[str, int]:
        """Findings by status (``pass``, ``fail``, ``needs_info``, ``not_applicable``).

        ``pass_declared`` counts the passes that rest on the applicant's own words (also
        in ``pass``), which the reviewer verifies on the sheets they name.
        """
        counts = dict.fromkeys(("pass", "fail", "needs_info", "not_applicable"), 0)
        for f in self.judgement.findings:
            counts[f.status] += 1
        counts["pass_declared"] = sum(
            1 for f in self.judgement.findings if f.status == "pass" and f.declared
        )
        return counts

    def _summary(self) -> dict[str, Any]:
        """report.json ``summary``: counts, failing and missing findings, who owes what.

        ``owes`` and ``outcome``: :func:`georeview.pipeline.owes.summary_owes`.
        """
        from georeview.facts.registry import registry
        from georeview.pipeline.owes import summary_owes
        from georeview.report.rule_reads import rule_facts

        findings = self.judgement.findings
        reads = rule_facts(self.ordinance)
        missing = {
            rid: sorted(n for n in names if self.facts.get(n) is None)
            for rid, names in reads.items()
        }
        reg = registry()
        supplied = {n: reg.supplied_by(n) for names in missing.values() for n in names}
        belongs = {
            n: reg.document(n)
            for names in reads.values()
            for n in names
            if reg.supplied_by(n) == "applicant"
        }
        return {
            "counts": self.counts(),
            "fail": [f"{f.citation}: {f.message}" for f in findings if f.status == "fail"],
            "needs_info": [
                f"{f.citation}: {f.message}" for f in findings if f.status == "needs_info"
            ],
            **summary_owes(
                findings,
                {r.id: r for r in self.ordinance.rules},
                missing,
                supplied,
                self.judgement.regulated,
                self.ordinance.outcomes,
                reads,
                belongs,
            ),
        }


def _iso(d: Any) -> str | None:
    return None if d is None else d.isoformat()
