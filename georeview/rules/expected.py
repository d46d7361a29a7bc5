"""What the code reads from a municipality's folder by name, declared once.

The judge reads rules and parameters through the data alone, but a few measures look one up
by its name: the site-map facts ask for the rule ``<municipality>.sitemap.adjacent``, the
jurisdiction and the terrain ask for parameters such as ``etj_miles``. An ordinance folder
must hold each of them; ``georeview rules NAME --check`` (:mod:`georeview.rules.check`)
lists those missing, and ``georeview ordinance new`` keeps them when it renames ids.

A test (``tests/test_ordinance_new.py``) reads every ``param("...")`` and every rule-id
suffix of the package's code, so a lookup added without its entry here fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CODE_PARAMETERS",
    "CODE_RULES",
    "ETJ_KEYS",
    "FILES",
    "JUDGE_FACTS",
    "ParamSpec",
    "rule_id",
]


@dataclass(frozen=True)
class ParamSpec:
    """A parameter the code reads: its type, whether it must be set, and who reads it.

    ``kind``: ``number`` (finite, above zero), ``storm`` (a storm key such as ``5yr``),
    ``storms`` (a list of them) or ``etj`` (miles by kind, :data:`ETJ_KEYS`).
    """

    kind: Literal["number", "storm", "storms", "etj"]
    required: bool
    used_by: str


#: Rule ids the code looks up, as the part after ``<municipality>.``: what reads it and
#: what the rule must give.
CODE_RULES: dict[str, str] = {
    "sitemap.adjacent": (
        "georeview/facts/sitemap.py reads its limit, the 'immediately adjacent' distance in "
        "ft (a positive number); the shipped sitemap.toml of deerfield or somers has one"
    ),
}

#: Parameters (``[parameters.NAME]`` of ordinance.toml) the code reads by name. The optional
#: ones leave a measure uncomputed (the report says the ordinance sets no such standard).
CODE_PARAMETERS: dict[str, ParamSpec] = {
    "etj_miles": ParamSpec("etj", True, "jurisdiction, screening, layers build"),
    "steep_slope_pct": ParamSpec("number", True, "steep-slope areas (review, screening)"),
    "downstream_trace_ft": ParamSpec("number", True, "downstream trace, layers build"),
    "max_contour_interval_ft": ParamSpec("number", True, "site-map sheet"),
    "peak_storms": ParamSpec("storms", False, "runoff peaks compared"),
    "basin_design_storm": ParamSpec("storm", False, "sediment basin sizing"),
    "basin_settling_rate_gpd_per_sqft": ParamSpec("number", False, "sediment basin sizing"),
    "dewatering_settling_rate_gpd_per_sqft": ParamSpec("number", False, "dewatering"),
    "basin_min_depth_ft": ParamSpec("number", False, "sediment basins"),
    "basin_min_fence_height_ft": ParamSpec("number", False, "sediment basins"),
}

#: Facts the judge itself reads or sets (the reach finding, the classification), by prefix:
#: no rule needs to read them.
JUDGE_FACTS = ("jurisdiction.", "classification.")

#: Keys of ``etj_miles``: the reach by the kind of the municipality near the site.
ETJ_KEYS = ("city_class_1", "city_class_2", "city_class_3", "city_class_4", "village", "town")

#: The files of a municipality's folder besides ordinance.toml and its ``rule_files``, with
#: what reads them.
FILES: dict[str, str] = {
    "calendar.toml": "deadlines and inspections",
    "money.toml": "fees, security, forfeitures",
    "rainfall.toml": "design rainfall of the runoff peaks",
    "usle.toml": "the USLE R factor of soil loss",
    "coverage.toml": "the paragraph map (rules --coverage, --check)",
    "record.toml": "the case record: case-number code, letterhead, the letters' words",
}


def rule_id(municipality: str, suffix: str) -> str:
    """The id of a rule the code looks up (``suffix`` a key of :data:`CODE_RULES`)."""
    if suffix not in CODE_RULES:
        raise KeyError(f"{suffix!r} is not declared in georeview.rules.expected.CODE_RULES")
    return f"{municipality}.{suffix}"
