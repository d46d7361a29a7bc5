"""What a municipality's ordinance asks of runoff peaks and basins, read from its parameters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Criteria:
    """What a municipality's ordinance asks of runoff peaks and basins (its parameters).

    A value an ordinance does not set is ``None``: the measure it drives is not computed,
    and the report says the ordinance sets no such standard.
    """

    peak_storms: tuple[str, ...] = ()
    basin_storm: str | None = None
    basin_settling_rate_gpd_per_sqft: float | None = None
    dewatering_settling_rate_gpd_per_sqft: float | None = None
    basin_min_depth_ft: float | None = None
    basin_min_fence_height_ft: float | None = None
    basin_citation: str = ""
    dewatering_citation: str = ""

    @classmethod
    def of(cls, ordinance: Any) -> Criteria:
        """Read the criteria from an ordinance's ``[parameters]``."""
        p = ordinance.parameters

        def val(name: str) -> Any:
            return p[name].value if name in p else None

        return cls(
            peak_storms=tuple(val("peak_storms") or ()),
            basin_storm=val("basin_design_storm"),
            basin_settling_rate_gpd_per_sqft=val("basin_settling_rate_gpd_per_sqft"),
            dewatering_settling_rate_gpd_per_sqft=val("dewatering_settling_rate_gpd_per_sqft"),
            basin_min_depth_ft=val("basin_min_depth_ft"),
            basin_min_fence_height_ft=val("basin_min_fence_height_ft"),
            basin_citation=ordinance.citation_of("basin_settling_rate_gpd_per_sqft"),
            dewatering_citation=ordinance.citation_of("dewatering_settling_rate_gpd_per_sqft"),
        )
