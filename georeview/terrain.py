"""Public path of the slope function (DESIGN §2.5): ``georeview.terrain.slope_pct``.

Terrain measures live in :mod:`georeview.measure`: DEM access (:mod:`.measure.dem`), Horn
slope (:mod:`.measure.slope`), steep-slope counts (:mod:`.measure.steep`) and their map
polygons (:mod:`.measure.steep_polygons`), contours (:mod:`.measure.contours`) and the
vertical-units check (:mod:`.measure.vertical_units`).
"""

from __future__ import annotations

from georeview.measure.slope import slope_pct

__all__ = ["slope_pct"]
