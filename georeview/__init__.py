"""georeview: review erosion-control submissions against Wisconsin village ordinances.

Importing the package is cheap: heavy or optional libraries (folium, dask, matplotlib,
pyflwdir) are imported inside the functions that need them.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
