"""georeview: review erosion-control submissions against municipal ordinances with GIS data.

The public functions::

    import georeview
    r = georeview.review("sample_sites/deerfield_larger_site")      # report: r.to_dict()
    layers = georeview.load_layers("layers/deerfield")
    screened = georeview.screen(parcels_gdf, layers, assume="disturb=whole")
    ordinance = georeview.load_ordinance("somers")                   # rules and parameters
    georeview.municipalities()                                       # name -> data folder

Importing the package is cheap: heavy or optional libraries (geopandas, folium, dask,
matplotlib, numba) are imported inside the functions that need them.
"""

from __future__ import annotations

from georeview._api import load_layers, load_ordinance, municipalities, review, screen
from georeview._version import __version__

__all__ = [
    "__version__",
    "load_layers",
    "load_ordinance",
    "municipalities",
    "review",
    "screen",
]
