"""Excel workbooks (.xlsx) of a table: a screening's parcels, a batch's summary.

Written with openpyxl (MIT) in its write-only mode, one partition in memory at a time:

* the first sheet holds the rows under a header of plain-language names with units
  (``Area (sq ft)``), frozen, with an autofilter and widths fitted to the header and the
  first rows;
* the second sheet, ``columns``, lists each header with the machine column name it
  stands for (the CSV's, GeoPackage's and Parquet's) and its meaning;
* text is written as text cells, always: an id such as ``080923191010`` keeps its
  leading zero, and a value starting with ``=`` ``+`` ``-`` or ``@`` is text, never a
  formula (openpyxl would otherwise store ``=...`` as one); numbers are number cells,
  NaN and nulls empty cells;
* characters XML 1.0 cannot hold (control characters) are dropped and text past
  Excel's 32,767 characters per cell is cut, so that Excel opens the file without a
  "repair".

A sheet holds at most :data:`EXCEL_MAX_ROWS` rows, the header included: a longer table is
refused before anything is written (:func:`check_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from georeview.errors import OutputError

__all__ = ["EXCEL_MAX_ROWS", "check_rows", "write_xlsx"]

#: Rows of an Excel worksheet (Excel 2007 and later), the header row included.
EXCEL_MAX_ROWS = 1_048_576
#: Characters of an Excel cell.
EXCEL_MAX_CELL_CHARS = 32_767
#: Widest column, in characters (longer text wraps out of view, as in any spreadsheet).
MAX_WIDTH = 60
#: Rows read to fit the column widths.
WIDTH_SAMPLE = 1_000


def check_rows(n_rows: int, path: Path) -> None:
    """Refuse a table of more rows than one sheet holds below its header.

    Raises
    ------
    OutputError
        ``n_rows`` + 1 (the header) is more than :data:`EXCEL_MAX_ROWS`.
    """
    if n_rows + 1 > EXCEL_MAX_ROWS:
        raise OutputError(
            f"{n_rows:,} rows do not fit an Excel sheet ({EXCEL_MAX_ROWS - 1:,} rows below"
            " the header at most); write .csv, .gpkg or .parquet instead",
            path=path,
        )


def _column_letter(i: int) -> str:
    from openpyxl.utils import get_column_letter

    return str(get_column_letter(i + 1))


def _clean_text(values: pd.Series) -> pd.Series:
    """Text as Excel can hold it: XML-illegal characters dropped, cut to 32,767 characters."""
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    text = values.astype("string")
    text = text.str.replace(ILLEGAL_CHARACTERS_RE.pattern, "", regex=True)
    return text.str.slice(0, EXCEL_MAX_CELL_CHARS)


def _cells(frame: pd.DataFrame, text: Sequence[bool]) -> list[list[Any]]:
    """The rows of ``frame`` as lists of Python values (text as text, NaN as empty)."""
    columns = []
    for col, is_text in zip(frame.columns, text, strict=True):
        s = frame[col]
        if is_text:
            values = _clean_text(s).astype(object)
            columns.append([None if v is pd.NA else v for v in values.tolist()])
        elif s.dtype.kind == "M":
            # timestamps as ISO 8601 text: Excel has no time zone, openpyxl refuses one
            iso = s.astype("string")
            columns.append([None if v is pd.NA else v for v in iso.astype(object).tolist()])
        else:
            values = s.astype(object).where(s.notna(), None)
            columns.append([v.item() if isinstance(v, np.generic) else v for v in values.tolist()])
    return [list(r) for r in zip(*columns, strict=True)] if columns else []


def _is_text(s: pd.Series) -> bool:
    return s.dtype.kind == "O" or pd.api.types.is_string_dtype(s.dtype)


def _widths(first: pd.DataFrame, headers: Sequence[str]) -> list[float]:
    sample = first.head(WIDTH_SAMPLE)
    out = []
    for col, header in zip(first.columns, headers, strict=True):
        longest = sample[col].astype("string").str.len().max() if len(sample) else 0
        longest = 0 if pd.isna(longest) else int(longest)
        out.append(float(min(MAX_WIDTH, max(len(header), longest) + 2)))
    return out


def write_xlsx(
    dest: Any,
    frames: Iterable[pd.DataFrame],
    columns: Sequence[tuple[str, str, str]],
    *,
    n_rows: int,
    sheet: str,
    text_columns: Sequence[str] = (),
) -> None:
    """Write ``frames`` (one table in pieces) as one sheet of an .xlsx workbook.

    Parameters
    ----------
    dest : Path or binary file
        Where to save the workbook.
    frames : iterable of pandas.DataFrame
        The rows, in order; each piece has the columns of ``columns``, in that order.
    columns : sequence of (name, header, meaning)
        The machine name of each column, its header, and what it means.
    n_rows : int
        Rows in all (for the autofilter's range, and :func:`check_rows`).
    sheet : str
        Name of the sheet of rows.
    text_columns : sequence of str
        Columns written as text whatever their dtype (ids).
    """
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.styles import Font

    check_rows(n_rows, Path(str(getattr(dest, "name", dest))))
    names = [c[0] for c in columns]
    headers = [c[1] for c in columns]
    wb = Workbook(write_only=True)
    ws = wb.create_sheet(sheet)
    ws.freeze_panes = "A2"
    ws.auto_filter.ref = f"A1:{_column_letter(len(names) - 1)}{n_rows + 1}"
    bold = Font(bold=True)
    started = False
    text: list[bool] = []
    for frame in frames:
        frame = frame[names]
        if not started:
            text = [n in text_columns or _is_text(frame[n]) for n in names]
            for i, w in enumerate(_widths(frame, headers)):
                ws.column_dimensions[_column_letter(i)].width = w
            head = []
            for h in headers:
                cell = WriteOnlyCell(ws, value=h)
                cell.font = bold
                cell.data_type = "s"
                head.append(cell)
            ws.append(head)
            started = True
        for row in _cells(frame, text):
            ws.append([_text_cell(ws, v, WriteOnlyCell) for v in row])
    if not started:
        ws.append(headers)
    legend = wb.create_sheet("columns")
    legend.freeze_panes = "A2"
    legend.column_dimensions["A"].width = min(MAX_WIDTH, max(map(len, headers)) + 2)
    legend.column_dimensions["B"].width = min(MAX_WIDTH, max(map(len, names)) + 2)
    legend.column_dimensions["C"].width = 100
    legend.append(["Header", "Column", "Meaning"])
    for name, header, meaning in columns:
        legend.append([_text_cell(legend, v, WriteOnlyCell) for v in (header, name, meaning)])
    wb.save(dest)


def _text_cell(ws: Any, value: Any, cell_type: Any) -> Any:
    """A string as a cell typed text (``=...`` would be a formula); other values as they are."""
    if isinstance(value, str) and value.startswith("="):
        cell = cell_type(ws, value=value)
        cell.data_type = "s"
        return cell
    return value
