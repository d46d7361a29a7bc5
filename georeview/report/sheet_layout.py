"""Site-map sheet layout: sheet sizes, engineer's scales, the map frame and its grid.

Pure geometry of the sheet, no drawing: which sheet and scale an area fits
(:func:`pick_layout`), the map frame at that scale (:func:`map_extent`) and the
alphanumeric grid over it (:func:`grid_labels`, :func:`site_cells`).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path

import shapely

from georeview.errors import InputError, LimitError

#: Engineer's scales, 1 in = N ft, most detailed first.
SCALES_FT_PER_INCH = (20, 30, 40, 50, 60, 100)


@dataclass(frozen=True)
class SheetLayout:
    """Where things go on one sheet size (inches from the lower-left page corner)."""

    name: str
    page_in: tuple[float, float]
    #: Lower-left corner of the map frame.
    map_origin_in: tuple[float, float]
    #: Map frame width and height: whole multiples of ``cell_in``.
    map_size_in: tuple[float, float]
    #: Grid cell side on paper.
    cell_in: float
    #: Side panel (legend, north arrow, scale bar, title block): x0, y0, width, height.
    panel_in: tuple[float, float, float, float]


#: Ledger (ANSI B, 17 x 11 in) and ANSI D (34 x 22 in), landscape.
LAYOUTS: dict[str, SheetLayout] = {
    "ledger": SheetLayout(
        "ledger", (17.0, 11.0), (0.6, 1.0), (12.0, 9.0), 1.0, (13.1, 0.5, 3.4, 10.0)
    ),
    "ansi_d": SheetLayout(
        "ansi_d", (34.0, 22.0), (0.8, 1.0), (28.0, 20.0), 2.0, (29.4, 0.5, 4.1, 21.0)
    ),
}


@dataclass(frozen=True)
class SheetInfo:
    """What was drawn, for the caller and the tests.

    Attributes
    ----------
    path : Path
        The PDF written.
    sheet : str
        ``ledger`` or ``ansi_d``.
    page_size_in : (float, float)
        Page width and height, inches.
    scale_ft_per_inch : int
        1 in on paper = this many ft in the working CRS.
    map_extent : (float, float, float, float)
        minx, miny, maxx, maxy of the map frame in working-CRS units.
    map_frame_in : (float, float, float, float)
        x0, y0, width, height of the map frame on the page, inches.
    grid_columns : tuple of str
        Column letters, west to east.
    grid_rows : int
        Number of rows, numbered 1.. from north to south.
    grid_cell_ft : float
        Side of a grid cell on the ground, ft.
    site_cells : tuple of str
        Grid cells the site touches (``"C4"``).
    contour_interval_ft : float
        Interval of the contours drawn.
    contours_drawn : bool
        False when there is no DEM or it does not cover the map.
    layers_drawn : tuple of str
        Layers drawn (site, disturbance, wetlands, ...).
    """

    path: Path
    sheet: str
    page_size_in: tuple[float, float]
    scale_ft_per_inch: int
    map_extent: tuple[float, float, float, float]
    map_frame_in: tuple[float, float, float, float]
    grid_columns: tuple[str, ...]
    grid_rows: int
    grid_cell_ft: float
    site_cells: tuple[str, ...]
    contour_interval_ft: float
    contours_drawn: bool
    layers_drawn: tuple[str, ...]


def choose_scale(width_ft: float, height_ft: float, layout: SheetLayout) -> int | None:
    """Return the most detailed engineer's scale at which an area fits the map frame.

    Parameters
    ----------
    width_ft, height_ft : float
        Ground size to fit (site plus margins), ft.
    layout : SheetLayout
        The sheet.

    Returns
    -------
    int or None
        Feet per inch from :data:`SCALES_FT_PER_INCH`; None when even 1 in = 100 ft
        is too small a scale for this sheet.
    """
    w_in, h_in = layout.map_size_in
    for s in SCALES_FT_PER_INCH:
        if width_ft / s <= w_in and height_ft / s <= h_in:
            return s
    return None


def grid_labels(n_columns: int) -> tuple[str, ...]:
    """Column letters A, B, ..., Z, AA, AB, ... (spreadsheet style)."""
    out = []
    for i in range(n_columns):
        label, k = "", i
        while True:
            label = string.ascii_uppercase[k % 26] + label
            k = k // 26 - 1
            if k < 0:
                break
        out.append(label)
    return tuple(out)


def pick_layout(
    width_ft: float, height_ft: float, sheet: str, own_scale_ft_per_inch: float | None = None
) -> tuple[SheetLayout, int]:
    """The sheet and scale for an area: the finest scale that fits, ledger when it can.

    ``auto`` takes ledger (it prints on office printers) when the area fits it at
    a scale no coarser than the submission's own map (``own_scale_ft_per_inch``),
    else ANSI D when ANSI D reaches that scale, else the finer of the two. Without
    an own scale, ledger when the area fits it at all.

    Raises
    ------
    InputError
        An unknown sheet name.
    LimitError
        When the area does not fit at 1 in = 100 ft.
    """
    names = ("ledger", "ansi_d") if sheet == "auto" else (sheet,)
    if sheet != "auto" and sheet not in LAYOUTS:
        raise InputError(f"unknown sheet {sheet!r}; use ledger, ansi_d or auto", field="sheet")
    fits = {n: choose_scale(width_ft, height_ft, LAYOUTS[n]) for n in names}
    if sheet == "auto" and own_scale_ft_per_inch and fits["ledger"] is not None:
        led, big = fits["ledger"], fits["ansi_d"]
        if led > own_scale_ft_per_inch and big is not None and big < led:
            return LAYOUTS["ansi_d"], big
    for name in names:
        scale = fits[name]
        if scale is not None:
            return LAYOUTS[name], scale
    lay = LAYOUTS[names[-1]]
    raise LimitError(
        f"the site with its {width_ft:,.0f} x {height_ft:,.0f} ft map area does not fit a "
        f"{lay.page_in[0]:g} x {lay.page_in[1]:g} in sheet at 1 in = 100 ft "
        f"({lay.map_size_in[0] * 100:,.0f} x {lay.map_size_in[1] * 100:,.0f} ft); "
        "draw it in parts",
        field="sheet",
    )


# --------------------------------------------------------------------------- drawing helpers


def map_extent(
    centre: tuple[float, float], layout: SheetLayout, scale: int, crs_per_ft: float
) -> tuple[float, float, float, float]:
    """The map frame (minx, miny, maxx, maxy, CRS units) centred on ``centre`` at ``scale``.

    One inch of the frame on paper is ``scale`` ft, ``scale * crs_per_ft`` CRS units.
    """
    w_in, h_in = layout.map_size_in
    cx, cy = centre
    half_w, half_h = w_in * scale * crs_per_ft / 2, h_in * scale * crs_per_ft / 2
    return (float(cx - half_w), float(cy - half_h), float(cx + half_w), float(cy + half_h))


def site_cells(
    site: shapely.Geometry,
    extent: tuple[float, float, float, float],
    cell: float,
    cols: tuple[str, ...],
    n_rows: int,
) -> tuple[str, ...]:
    """The grid cells (``"C4"``) the site touches, row by row from the north.

    ``cell`` is the side of a grid cell in CRS units; columns run from the west
    edge of ``extent``, rows (numbered from 1) from its north edge.
    """
    x_min, _, _, y_max = extent
    sx0, sy0, sx1, sy1 = (float(v) for v in shapely.bounds(site))
    n_cols = len(cols)
    c0, c1 = (min(max(int((x - x_min) // cell), 0), n_cols - 1) for x in (sx0, sx1))
    r0, r1 = (min(max(int((y_max - y) // cell), 0), n_rows - 1) for y in (sy1, sy0))
    return tuple(
        f"{cols[c]}{rr + 1}"
        for rr in range(r0, r1 + 1)
        for c in range(c0, c1 + 1)
        if shapely.intersects(
            site,
            shapely.box(
                x_min + c * cell,
                y_max - (rr + 1) * cell,
                x_min + (c + 1) * cell,
                y_max - rr * cell,
            ),
        )
    )
