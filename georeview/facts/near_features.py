"""The near-site features a site map must show, and the ``shows`` entries that show them.

Both ordinances ask the site map to show some features only where they lie on or
immediately adjacent to the site (Somers § 17.10(B)(4), Deerfield § 31.09(1)):
:data:`NEAR_FEATURES`. They are a vocabulary, like
:data:`georeview.config.SITE_MAP_FEATURES`: the fact registry expands its
``site_map.near.*`` families from them, and :mod:`georeview.facts.sitemap` measures
them. They live here, apart from the measuring module, because that module reads the
ordinance (its "immediately adjacent" distance), whose loader checks every rule
against the registry: declared in the measuring module, the registry sat in an
import cycle with the rules.
"""

from __future__ import annotations

__all__ = ["NEAR_FEATURES", "SHOWN_AS"]

#: Features that must be shown where they lie on or immediately adjacent to the site.
NEAR_FEATURES = ("wetlands", "floodplain", "floodway", "streams", "lakes", "watercourses", "roads")

#: ``shows`` entries that count as showing a near-site feature. Channels and ditches
#: (NHD CanalDitch) are "watercourses" (Somers (4)(a), Deerfield (A)2) and an engineered
#: drainage system (Somers (4)(a)); a map of "surface waters" shows streams and lakes.
SHOWN_AS: dict[str, tuple[str, ...]] = {
    "wetlands": ("wetlands",),
    "floodplain": ("floodplain",),
    "floodway": ("floodway",),
    "streams": ("streams", "watercourses", "surface_waters"),
    "lakes": ("lakes", "surface_waters"),
    "watercourses": ("watercourses", "drainage"),
    "roads": ("roads",),
}
