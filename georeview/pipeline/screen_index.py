"""The screening's results page (index.html): its table and a map of every parcel."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from georeview.pipeline.partitions import WorkFolder, read_part

__all__ = ["INDEX_COLUMNS", "INDEX_MAX_ROWS", "write_screen_index"]

log = logging.getLogger(__name__)

#: Parcels beyond which no index.html is drawn (a browser page is for a village or a county).
INDEX_MAX_ROWS = 250_000
#: Columns of the screening's index.html table, in this order.
INDEX_COLUMNS = (
    "parcel_id",
    "status",
    "jurisdiction",
    "regulated",
    "category",
    "larger_site",
    "extraordinary",
    "area_sqft",
    "floodplain_sqft",
    "floodway_sqft",
    "wetland_sqft",
    "steep_slope_sqft",
    "citations",
    "error",
)


def write_screen_index(
    work: WorkFolder, n_parts: int, path: Path, layers: Any, *, title: str
) -> Path | None:
    """Write index.html over a finished screening: its table and a map of every parcel.

    Reads the finished partitions one at a time, keeping only the table columns and
    the geometry. Skipped, with a warning, past :data:`INDEX_MAX_ROWS` parcels.
    """
    import geopandas as gpd

    from georeview.report.index import write_index

    frames = []
    total = 0
    for i in range(n_parts):
        part = read_part(work.part(i))
        total += len(part)
        if total > INDEX_MAX_ROWS:
            log.warning(
                "index.html not written: more than %d parcels (open the output in a GIS)",
                INDEX_MAX_ROWS,
            )
            return None
        keep = [c for c in INDEX_COLUMNS if c in part.columns]
        frames.append(part[[*keep, part.geometry.name]])
    rows = gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), crs=frames[0].crs)
    return write_index(rows, path, title=title, working_crs=layers.working_crs)
