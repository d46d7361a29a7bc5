"""Site-map sheet margins and side panel: grid, north arrow, scale bar, legend, title block.

The vicinity inset goes in the panel's free band too. Everything here is placed in
inches on the page (``fig.dpi_scale_trans``), from the
:class:`~georeview.report.sheet_layout.SheetLayout` of the sheet.
"""

from __future__ import annotations

import datetime as dt
import logging
import textwrap
from typing import Any

import numpy as np
import shapely

from georeview.report.sheet_layers import (
    CONTOUR_COLOR,
    DOWNSTREAM_COLOR,
    ROAD_COLOR,
    SITE_COLOR,
    WATER_COLOR,
    legend_patch,
    poly_path,
)
from georeview.report.sheet_layout import SheetLayout

log = logging.getLogger(__name__)


def draw_grid(
    fig: Any, ax: Any, layout: SheetLayout, extent: Any, cell: float, cols: Any, n_rows: int
) -> None:
    """Alphanumeric grid over the whole map: letters across, numbers down."""
    x0, _, _, y1 = extent
    kw = {"color": (0.25, 0.25, 0.25), "lw": 0.4, "alpha": 0.8, "zorder": 8, "snap": False}
    for i in range(1, len(cols)):
        ax.axvline(x0 + i * cell, **kw)
    for j in range(1, n_rows):
        ax.axhline(y1 - j * cell, **kw)
    ox, oy = layout.map_origin_in
    w_in, h_in = layout.map_size_in
    c_in = layout.cell_in
    t = fig.dpi_scale_trans
    for i, lab in enumerate(cols):
        x = ox + (i + 0.5) * c_in
        fig.text(x, oy + h_in + 0.12, lab, transform=t, ha="center", va="bottom", fontsize=9)
        fig.text(x, oy - 0.12, lab, transform=t, ha="center", va="top", fontsize=9)
    for j in range(n_rows):
        y = oy + h_in - (j + 0.5) * c_in
        fig.text(ox - 0.1, y, str(j + 1), transform=t, ha="right", va="center", fontsize=9)
        fig.text(ox + w_in + 0.1, y, str(j + 1), transform=t, ha="left", va="center", fontsize=9)


def draw_vicinity(fig: Any, layout: SheetLayout, r: Any, band: tuple[float, float]) -> None:
    """A vicinity inset in the side panel: the village limits and the site marked on them.

    ``band`` is the free (bottom, top) of the panel between the title block and the
    legend; the inset is the largest square that fits it (none under 1 in).
    """
    j = r.jurisdictions
    if j is None:
        return
    px, _, pw, _ = layout.panel_in
    side = min(pw - 0.4, band[1] - band[0] - 0.45, 4.0)
    if side < 1.0:
        log.warning("no room for the vicinity inset on the %s sheet", layout.name)
        return
    y0 = band[0] + 0.1 + (band[1] - band[0] - 0.35 - side) / 2
    page_w, page_h = layout.page_in
    ax = fig.add_axes(((px + (pw - side) / 2) / page_w, y0 / page_h, side / page_w, side / page_h))
    ax.set_xticks([])
    ax.set_yticks([])
    village = j.village.geometry
    site = r.submission.site_geom
    both = shapely.union(village, shapely.buffer(site, 1.0))
    x0, y0b, x1, y1 = shapely.bounds(both)
    half = max(x1 - x0, y1 - y0b) / 2 * 1.08
    cx, cy = (x0 + x1) / 2, (y0b + y1) / 2
    ax.set_xlim(cx - half, cx + half)
    ax.set_ylim(cy - half, cy + half)
    from matplotlib.patches import PathPatch

    path = poly_path(np.asarray([village], dtype=object))
    if path is not None:
        ax.add_patch(PathPatch(path, facecolor=(0.9, 0.9, 0.9), edgecolor="black", lw=0.6))
    c = shapely.centroid(site)
    ax.plot([c.x], [c.y], marker="o", ms=6, mfc="none", mec=SITE_COLOR, mew=1.6)
    ax.plot([c.x], [c.y], marker=".", ms=3, color=SITE_COLOR)
    # two lines: a long village name fits a narrow panel
    ax.set_title(f"VICINITY\n{j.village.name} limits, site circled", fontsize=6, pad=2)


def north_arrow(fig: Any, x: float, top: float, size: float = 1.0) -> None:
    """A grid north arrow centred on ``x`` below ``top`` (inches on the page).

    ``size`` scales the sheet's arrow (1.25 in tall with its letter) for a smaller frame;
    the "grid north" label stays legible (5 pt at least).
    """
    from matplotlib.patches import FancyArrow

    t = fig.dpi_scale_trans
    fig.add_artist(
        FancyArrow(
            x,
            top - 1.25 * size,
            0,
            0.8 * size,
            width=0.06 * size,
            head_width=0.3 * size,
            head_length=0.3 * size,
            length_includes_head=True,
            transform=t,
            color="black",
        )
    )
    fig.text(
        x,
        top - 0.3 * size,
        "N",
        transform=t,
        ha="center",
        va="bottom",
        fontsize=14 * size,
        weight="bold",
    )
    label_y = top - 1.45 * size
    fig.text(x, label_y, "grid north", transform=t, ha="center", fontsize=max(6 * size, 5))


def scale_bar(
    fig: Any,
    origin: tuple[float, float],
    centre_x: float,
    scale: int,
    *,
    n_div: int,
    div_in: float = 1.0,
    size: float = 1.0,
) -> None:
    """A scale bar of ``n_div`` divisions of ``div_in`` inches, labelled in ft, and its title.

    ``origin`` is the bar's lower-left corner and ``centre_x`` the title's centre (inches
    on the page); ``size`` scales the text and spacing of the sheet's bar.
    """
    from matplotlib.patches import Rectangle

    t = fig.dpi_scale_trans
    bx, by = origin
    for k in range(n_div):
        fig.add_artist(
            Rectangle(
                (bx + k * div_in, by),
                div_in,
                0.08 * size,
                transform=t,
                lw=0.6 * size,
                facecolor="black" if k % 2 == 0 else "white",
                edgecolor="black",
            )
        )
    for k in range(n_div + 1):
        label = f"{k * div_in * scale:g}" + (" ft" if k == n_div else "")
        fig.text(
            bx + k * div_in, by + 0.12 * size, label, transform=t, ha="center", fontsize=7 * size
        )
    fig.text(
        centre_x,
        by - 0.2 * size,
        f"SCALE: 1 in = {scale} ft",
        transform=t,
        ha="center",
        va="top",
        fontsize=10 * size,
        weight="bold",
    )


def legend_entries(interval_ft: float) -> dict[str, tuple[str, Any]]:
    """Layer name → (legend text, matplotlib handle drawn like the layer), in legend order."""
    from matplotlib.lines import Line2D

    return {
        "site": ("Site boundary", Line2D([], [], color=SITE_COLOR, lw=1.8)),
        "disturbance": ("Land disturbance", legend_patch("disturbance")),
        "wetlands": ("Wetland", legend_patch("wetlands")),
        "floodplain": ("100-year floodplain (SFHA)", legend_patch("floodplain")),
        "floodway": ("Floodway", legend_patch("floodway")),
        "waters": ("Lake, stream, ditch", Line2D([], [], color=WATER_COLOR, lw=1.4)),
        "roads": ("Road", Line2D([], [], color=ROAD_COLOR, lw=2.0)),
        "steep_slopes": ("Slope 20 % or more (disturbed area)", legend_patch("steep_slopes")),
        "contours": (
            f"Contour, {interval_ft:g} ft (index {5 * interval_ft:g} ft)",
            Line2D([], [], color=CONTOUR_COLOR, lw=0.6),
        ),
        "downstream": (
            "Downstream flow path (1/4 mile)",
            Line2D([], [], color=DOWNSTREAM_COLOR, lw=1.2, linestyle="--"),
        ),
    }


def _legend(fig: Any, layout: SheetLayout, drawn: list[str], interval_ft: float) -> float:
    """The legend of the layers drawn, under the scale bar; return its bottom (inches)."""
    px, py, pw, ph = layout.panel_in
    top = py + ph
    names = legend_entries(interval_ft)
    order = [k for k in names if k in drawn]
    # The legend box is as tall as its rows (7 pt text, about 0.2 in a row, plus title).
    legend_h = 0.45 + 0.2 * len(order)
    lax = fig.add_axes(
        (
            (px + 0.1) / layout.page_in[0],
            (top - 2.6 - legend_h) / layout.page_in[1],
            (pw - 0.2) / layout.page_in[0],
            legend_h / layout.page_in[1],
        )
    )
    lax.set_axis_off()
    lax.legend(
        [names[k][1] for k in order],
        [names[k][0] for k in order],
        loc="upper left",
        fontsize=7,
        frameon=False,
        title="LEGEND",
        title_fontsize=9,
    )
    return top - 2.6 - legend_h


def title_lines(
    r: Any,
    layout: SheetLayout,
    scale: int,
    interval_ft: float,
    contours_note: str,
    grid: tuple[tuple[str, ...], int, float, tuple[str, ...]],
    title: dict[str, Any],
) -> list[tuple[str, int, str]]:
    """The title block's lines: (text, font size in pt, weight), top first.

    ``grid`` is (column letters, number of rows, cell side in ft, cells the site touches).
    """
    from georeview._version import __version__

    cols, n_rows, cell_ft, cells = grid
    cfg = r.submission.config
    prepared = title.get("preparer") or f"georeview {__version__} (automated draft)"
    more = " ..." if len(cells) > 12 else ""
    small = [
        f"Prepared by: {prepared}",
        f"Revision: {title.get('revision') or '0'}",
        f"Applicant: {cfg.applicant or 'not given'}",
        f"{r.ordinance.short_name} ({r.ordinance.municipality.title()})",
        f"Category: {r.judgement.category or 'not determined'}",
        f"Scale 1 in = {scale} ft on {layout.page_in[0]:g} x {layout.page_in[1]:g} in",
        f"Grid: columns {cols[0]}-{cols[-1]}, rows 1-{n_rows}; cells {cell_ft:g} ft",
        f"Site in cells {', '.join(cells[:12])}{more}",
    ]
    smallest = [
        f"Contours {interval_ft:g} ft {contours_note}",
        f"CRS {r.layers.config.working_crs} (grid distances)",
        f"Drawn {dt.date.today().isoformat()} by georeview {__version__}",
    ]
    lines = [
        (f"SITE MAP    SHEET {title.get('sheet') or '1 of 1'}", 12, "bold"),
        (cfg.name or r.submission.folder.name, 9, "bold"),
        *((text, 7, "normal") for text in small),
        *((text, 6, "normal") for text in smallest),
    ]
    synthetic = [
        n
        for n in type(r.layers.config).model_fields
        if getattr(getattr(r.layers.config, n), "synthetic", False)
    ]
    if synthetic:
        wrapped = textwrap.wrap(f"SYNTHETIC reference layers: {', '.join(synthetic)}", 58)
        lines += [(w, 6, "bold") for w in wrapped]
    return lines


def _title_block(fig: Any, layout: SheetLayout, lines: list[tuple[str, int, str]]) -> float:
    """Write the title block at the foot of the panel; return its top (inches)."""
    from matplotlib.lines import Line2D

    t = fig.dpi_scale_trans
    px, py, pw, _ = layout.panel_in
    steps = [0.17 if size < 9 else 0.24 for _, size, _ in lines]
    y = py + 0.1 + sum(steps)
    fig.add_artist(Line2D([px, px + pw], [y + 0.15, y + 0.15], transform=t, color="black", lw=0.8))
    title_top = y + 0.15
    for (text, size, weight), step in zip(lines, steps, strict=True):
        fig.text(px + 0.12, y, text, transform=t, fontsize=size, weight=weight, va="top")
        y -= step
    return title_top


def draw_panel(
    fig: Any,
    layout: SheetLayout,
    r: Any,
    scale: int,
    interval_ft: float,
    contours_note: str,
    grid: tuple[tuple[str, ...], int, float, tuple[str, ...]],
    drawn: list[str],
    title: dict[str, Any] | None = None,
) -> tuple[float, float]:
    """Legend, north arrow, scale bar and title block in the side panel.

    ``grid`` is (column letters, number of rows, cell side in ft, cells the site
    touches). Returns the free band between the title block and the legend,
    (bottom, top) in inches from the page's lower edge, for the vicinity inset.
    """
    from matplotlib.patches import Rectangle

    px, py, pw, ph = layout.panel_in
    fig.add_artist(Rectangle((px, py), pw, ph, transform=fig.dpi_scale_trans, fill=False, lw=1.0))
    top = py + ph
    north_arrow(fig, px + pw / 2, top)
    # three one-inch divisions on a narrow panel, else four
    n_div = 3 if pw < 4 else 4
    scale_bar(fig, (px + (pw - n_div) / 2, top - 2.1), px + pw / 2, scale, n_div=n_div)
    legend_bottom = _legend(fig, layout, drawn, interval_ft)
    lines = title_lines(r, layout, scale, interval_ft, contours_note, grid, title or {})
    return _title_block(fig, layout, lines), legend_bottom
