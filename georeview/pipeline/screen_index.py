"""The screening's results page (index.html): its table and a map of every parcel."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd

from georeview.pipeline.assume import WISCONSIN_COLUMNS
from georeview.pipeline.partitions import WorkFolder, part_schema, read_part_table
from georeview.pipeline.results import RESULT_COLUMNS, RESULT_LABELS

__all__ = [
    "INDEX_COLUMNS",
    "INDEX_LABELS",
    "INDEX_MAX_INPUT_CELLS",
    "INDEX_MAX_ROWS",
    "index_columns",
    "write_screen_index",
]

log = logging.getLogger(__name__)

#: Parcels beyond which no index.html is drawn (a browser page is for a village or a county).
INDEX_MAX_ROWS = 250_000
#: Cells of the parcel file's own fields the page carries at most: beyond, only the
#: statewide schema's owner, address, acreage and class fields are kept (the statewide
#: file has some 40 fields; all of them for a county's parcels would make a page of
#: hundreds of megabytes). The output file always keeps every field.
INDEX_MAX_INPUT_CELLS = 3_000_000
#: Result columns of the screening's index.html table, in this order; the parcel file's
#: own fields follow the identifying ones (see :func:`index_columns`).
INDEX_COLUMNS = (
    "parcel_id",
    "status",
    "reason",
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
#: Headers of the page: the workbook's words for the result columns.
INDEX_LABELS: dict[str, str] = {c: words for c, (words, _) in RESULT_LABELS.items()}
#: Fields of the statewide parcel schema shown right after the parcel id (who and where).
_FIRST_INPUTS = tuple(
    WISCONSIN_COLUMNS[k] for k in ("owner", "address", "acres", "propclass", "auxclass")
)


def index_columns(fields: list[str], geometry: str, *, n_rows: int) -> list[str]:
    """The page's columns, in order.

    The parcel id, the statewide schema's owner, address, acreage and class fields, the
    results, then the parcel file's other fields in their order.

    Parameters
    ----------
    fields : list of str
        Every column of a finished partition (input fields, renamed where they clash,
        and the result columns).
    geometry : str
        The geometry column's name (drawn, not listed).
    n_rows : int
        Parcels of the screening: past :data:`INDEX_MAX_INPUT_CELLS` input cells only
        the statewide schema's owner, address, acreage and class fields are kept.
    """
    results = set(RESULT_COLUMNS)
    inputs = [c for c in fields if c not in results and c != geometry]
    # the id field is parcel_id already (as text, leading zeros kept)
    inputs = [c for c in inputs if c != WISCONSIN_COLUMNS["id"]]
    first = [c for c in _FIRST_INPUTS if c in inputs]
    rest = [c for c in inputs if c not in first]
    if n_rows * len(inputs) > INDEX_MAX_INPUT_CELLS and rest:
        log.warning(
            "index.html lists %d of the parcel file's %d fields (%d parcels): the output"
            " file has them all",
            len(first),
            len(inputs),
            n_rows,
        )
        rest = []
    keep = [c for c in INDEX_COLUMNS if c in fields]
    return [*keep[:1], *first, *keep[1:], *rest]


def write_screen_index(
    work: WorkFolder, n_parts: int, path: Path, layers: Any, *, title: str
) -> Path | None:
    """Write index.html over a finished screening: its table and a map of every parcel.

    Reads the finished partitions one at a time, keeping only the table columns and
    the geometry. Skipped, with a warning, past :data:`INDEX_MAX_ROWS` parcels.
    """
    import geopandas as gpd

    from georeview.report.index import quantity_decimals, write_index

    total = sum(read_part_table(work.part(i), ["row"]).num_rows for i in range(n_parts))
    if total > INDEX_MAX_ROWS:
        log.warning(
            "index.html not written: more than %d parcels (open the output in a GIS)",
            INDEX_MAX_ROWS,
        )
        return None
    if not n_parts:
        return None
    schema = part_schema(work.part(0))
    geo = json.loads((schema.metadata or {}).get(b"geo", b"{}") or b"{}")
    geometry = str(geo.get("primary_column", "geometry"))
    cols = index_columns([str(c) for c in schema.names], geometry, n_rows=total)
    # only the page's columns are read back: a statewide file's 40 fields stay on disk
    frames = [gpd.read_feather(work.part(i), columns=[*cols, geometry]) for i in range(n_parts)]
    rows = gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), crs=frames[0].crs)
    return write_index(
        rows,
        path,
        title=title,
        working_crs=layers.working_crs,
        columns=cols,
        labels=INDEX_LABELS,
        decimals=quantity_decimals(cols),
    )
