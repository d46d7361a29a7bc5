"""Load stage: read submissions and reference layers, check CRS, repair geometry.

Everything that enters the pipeline passes through here once. Vectors come out
in the working CRS (a projected CRS; EPSG:3071 unless layers.toml says another);
rasters are never read here (the terrain stage reads windows of them in their
own CRS). Each problem is raised as a :mod:`georeview.errors` error that names
the file and, where it has one, the field.

The stage's entry points are re-exported here; the work is in its modules:
:mod:`~georeview.load.submission` (submission folders), :mod:`~georeview.load.layers`
(layers folders), :mod:`~georeview.load.vector` (the one vector reader, with
:mod:`~georeview.load.geoparquet` and :mod:`~georeview.load.csv_layer`),
:mod:`~georeview.load.files` (checks before a file is opened),
:mod:`~georeview.load.geometry` (geometry checks and repairs),
:mod:`~georeview.load.schema` (public datasets' fields), :mod:`~georeview.load.build`
(``georeview layers build``) and :mod:`~georeview.load.inventory` (what a folder holds).
"""

from __future__ import annotations

from georeview.load.crs import to_crs
from georeview.load.layers import Layers, load_layers, read_layer
from georeview.load.submission import LoadedSubmission, Repair, load_submission

__all__ = [
    "Layers",
    "LoadedSubmission",
    "Repair",
    "load_layers",
    "load_submission",
    "read_layer",
    "to_crs",
]
