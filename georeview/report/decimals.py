"""How many decimals a number keeps in an output table: one table, applied only on output.

The measures are computed in full double precision and stay so in the pipeline (the
judge, the tally, the partitions); only what is written for people and their tools (a
screening's CSV, GeoPackage, Parquet, FlatGeobuf, GeoJSON, shapefile and Excel outputs,
a batch's summary.csv and sites.gpkg, a review's layers.gpkg) is rounded, by
:data:`DECIMALS`. An overlay's arithmetic leaves noise in the last bits (a parcel wholly in
the village has ``share_village`` 1.0000000000000873); a share is also clipped to 0-1
before it is rounded, so it never reads more than the whole.

report.json keeps the rounding its schema documents (``Jurisdiction.to_dict``: shares to
6 decimals, sq ft to 0.1; measures' acres to 4): its numbers are read by programs and
compared with the ordinance's thresholds, and its schema is a published contract.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["DECIMALS", "decimals_for", "round_arrow", "round_frame"]

#: Column name rule -> (decimals, why). A rule is ``share`` (the name, or ``share_*``)
#: or a suffix (``_sqft``); the first rule that fits a column decides.
DECIMALS: tuple[tuple[str, int, str], ...] = (
    ("share", 4, "a share of the parcel's or site's area: 0.0001 is 0.01 %, a few sq ft of a lot"),
    ("_acres", 3, "0.001 acre is 43.6 sq ft, finer than any acreage threshold (0.5 to 40 acres)"),
    (
        "_sqft",
        1,
        "0.1 sq ft (0.009 sq m): below a survey's precision, yet a sliver of wetland stays > 0",
    ),
    ("elev_ft", 2, "contour elevations: 0.01 ft keeps a DEM's half-foot or decimetre levels"),
    ("_ft", 1, "0.1 ft (3 cm) lengths and distances: finer than a 1 m DEM's cell"),
    ("_pct", 1, "slopes: 0.1 % against whole-percent thresholds"),
)


def decimals_for(column: str) -> int | None:
    """The decimals of ``column`` by :data:`DECIMALS`, ``None`` when no rule fits."""
    for rule, digits, _ in DECIMALS:
        if rule == "share":
            if column == "share" or column.startswith("share_"):
                return digits
        elif column.endswith(rule):
            return digits
    return None


def _is_share(column: str) -> bool:
    return column == "share" or column.startswith("share_")


def _rounded(values: Any, column: str, digits: int) -> Any:
    v = np.asarray(values, dtype=float)
    if _is_share(column):
        v = np.clip(v, 0.0, 1.0)  # NaN stays NaN
    # + 0.0 turns a rounded -0.0 into 0.0 (a tiny negative remainder of a difference)
    return np.round(v, digits) + 0.0


def round_frame(frame: Any, columns: Iterable[str]) -> Any:
    """A copy of ``frame`` with each of ``columns`` it holds rounded by :data:`DECIMALS`.

    Parameters
    ----------
    frame : pandas.DataFrame or geopandas.GeoDataFrame
        The table to write.
    columns : iterable of str
        The columns georeview computed (input columns are written as they came).
    """
    updates = {}
    for col in columns:
        digits = decimals_for(col)
        if digits is None or col not in frame.columns or frame[col].dtype.kind != "f":
            continue
        updates[col] = _rounded(frame[col].to_numpy(), col, digits)
    return frame.assign(**updates) if updates else frame


def round_arrow(table: Any, columns: Iterable[str]) -> Any:
    """An Arrow table with each of ``columns`` it holds rounded (its types kept)."""
    import pyarrow as pa

    for col in columns:
        digits = decimals_for(col)
        if digits is None or col not in table.column_names:
            continue
        i = table.column_names.index(col)
        if not pa.types.is_floating(table.schema.field(i).type):
            continue
        arr = table.column(i).to_numpy(zero_copy_only=False)
        # nulls come back as NaN and go back as nulls
        mask = table.column(i).is_null().to_numpy(zero_copy_only=False)
        new = pa.array(_rounded(arr, col, digits), mask=mask, type=table.schema.field(i).type)
        table = table.set_column(i, table.schema.field(i), new)
    return table
