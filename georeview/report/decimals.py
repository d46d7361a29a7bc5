"""How many decimals a number keeps in an output table: one table, applied only on output.

The measures are computed in full double precision and stay so in the pipeline (the
judge, the tally, the partitions); only what is written for people and their tools (a
screening's CSV, GeoPackage, Parquet, FlatGeobuf, GeoJSON, shapefile and Excel outputs,
a batch's summary.csv and sites.gpkg, a review's layers.gpkg) is rounded, by
:data:`DECIMALS`. An overlay's arithmetic leaves noise in the last bits (a parcel wholly in
the village has ``share_village`` 1.0000000000000873); a share is also clipped to 0-1
before it is rounded, so it never reads more than the whole.

report.html rounds by :data:`DISPLAY_DECIMALS`, one rule per unit: a quantity (a peak
flow, an area, a depth) reads with the same decimals wherever the page shows it, in a
finding, the measures table or the TR-55 summary, so one peak is never "11.2" in one place
and "11.16" in another. An area counted in DEM cells (:func:`raster_area_text`) is rounded
to what one cell supports, with the cells said beside it.

report.json keeps the rounding its schema documents (``Jurisdiction.to_dict``: shares to
6 decimals, sq ft to 0.1; measures' acres to 4): its numbers are read by programs and
compared with the ordinance's thresholds, and its schema is a published contract.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "DECIMALS",
    "DISPLAY_DECIMALS",
    "decimals_for",
    "display_decimals",
    "raster_area_text",
    "round_arrow",
    "round_frame",
]

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


#: report.html: units -> (decimals of every number shown in them, why). The one rule of
#: the page; :func:`georeview.report.reader.quantity` and the template's filters read it.
DISPLAY_DECIMALS: dict[str, tuple[int, str]] = {
    "cfs": (2, "peak flows: 0.01 cfs, as a TR-55 worksheet and a peak-rate comparison read"),
    "sq ft": (0, "areas drawn or computed: 1 sq ft, below any threshold (400 sq ft up)"),
    "acres": (2, "0.01 acre is 436 sq ft, finer than the 1- and 5-acre thresholds need"),
    "in": (2, "rainfall and runoff depths: TR-55 Table 2-1 prints 0.01 in"),
    "h": (2, "Tc and travel times: TR-55 worksheet 3 gives hours to 0.01"),
    "csm/in": (0, "unit peak discharge: exhibit 4-II is read to whole csm/in"),
    "ft": (1, "lengths, depths and distances: 0.1 ft (3 cm)"),
    "%": (1, "slopes and differences: 0.1 % against whole-percent limits"),
    "tons/acre/year": (2, "soil loss: 0.01 ton/acre/year against a 5- or 7.5-ton standard"),
    "tons/acre": (2, "a phase's soil loss, in the units of the annual figure"),
    "days": (0, "schedules are counted in whole days"),
    "cu yd": (0, "excavation and fill: whole cubic yards"),
    "lots": (0, "lots are whole"),
    "ft per inch": (0, "a map scale: whole feet per inch"),
    "ft per in": (0, "a map scale: whole feet per inch"),
    "gal/sq ft/day": (0, "settling rates are whole gallons"),
    "gal/min": (0, "pumping rates: whole gallons per minute"),
    "mi": (1, "extraterritorial reach: 0.1 mile"),
}


#: report.html: units -> (magnitude from which a number in them is shown whole, why). A
#: length of hundreds of feet is traced on a DEM of 1 to 10 m cells or declared as
#: "about 950 ft": 1,000.7 ft would claim a precision neither has, and 100.0 ft reads
#: as something other than the ordinance's 100 ft. A depth or an interval keeps 0.1 ft.
DISPLAY_WHOLE_FROM: dict[str, tuple[float, str]] = {
    "ft": (100.0, "distances and lengths of 100 ft or more: whole feet"),
}


def display_decimals(units: str | None, value: float | None = None) -> int | None:
    """The decimals report.html shows a number in ``units`` with, ``None`` for other units.

    ``value``, when given, applies :data:`DISPLAY_WHOLE_FROM` (whole feet from 100 ft).

    Examples
    --------
    >>> display_decimals("cfs"), display_decimals("sq ft"), display_decimals("furlongs")
    (2, 0, None)
    >>> display_decimals("ft", 2.5), display_decimals("ft", 1000.66), display_decimals("ft")
    (1, 0, 1)
    """
    u = (units or "").strip()
    rule = DISPLAY_DECIMALS.get(u)
    if rule is None:
        return None
    whole = DISPLAY_WHOLE_FROM.get(u)
    if whole is not None and value is not None and abs(float(value)) >= whole[0]:
        return 0
    return rule[0]


#: Square metres in a square foot (a DEM cell's side is said in metres, as DEMs are made).
_SQM_PER_SQFT = 0.09290304


def raster_area_text(area_sqft: float | None, cell_area_sqft: float | None) -> str:
    """An area counted in DEM cells, rounded to what a cell supports, with the cells beside it.

    A count of cells claims no more than the cell: 37 cells of 10 m (1,076 sq ft each) is
    about 40,000 sq ft, not 39,826. The area is rounded to the cell area's leading digit
    and the count and cell size are said, so a reviewer can weigh it.

    Examples
    --------
    >>> raster_area_text(39826.46854182597, 1076.391041670972)
    'about 40,000 sq ft (37 DEM cells of 10 m)'
    >>> raster_area_text(0.0, 1076.39)
    '0 sq ft (no DEM cell)'
    """
    if area_sqft is None:
        return "—"
    if not cell_area_sqft or cell_area_sqft <= 0:
        return f"{area_sqft:,.0f} sq ft"
    cells = round(area_sqft / cell_area_sqft)
    side_m = (cell_area_sqft * _SQM_PER_SQFT) ** 0.5
    side = f"{side_m:.0f} m" if side_m >= 1.5 else f"{side_m:.1f} m"
    if cells == 0:
        return "0 sq ft (no DEM cell)"
    step = 10 ** int(np.floor(np.log10(cell_area_sqft)))
    rounded = round(area_sqft / step) * step
    word = "cell" if cells == 1 else "cells"
    return f"about {rounded:,.0f} sq ft ({cells:,} DEM {word} of {side})"


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
