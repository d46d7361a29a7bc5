"""Measure stage: pure functions that return quantities with units.

Areas and overlays (:mod:`.areas`), jurisdiction (:mod:`.jurisdiction`), the downstream
trace (:mod:`.flow`), USLE, TR-55 and basin sizing together (:mod:`.engineering`). Slopes,
soil loss, runoff and sediment basins keep their public paths ``georeview.terrain``,
``georeview.soil_loss``, ``georeview.hydrology`` and ``georeview.sediment`` (DESIGN §2.5).
"""
