"""A print-ready site-map sheet at a true engineering scale (``georeview sitemap``).

The sheet answers Somers § 17.10(B)(4) and Deerfield § 31.09(1)(A): a site map at
1 in = 100 ft or finer, contours at 5 ft or less, an alphanumeric grid over the whole
map, and the site, its disturbance and the waters, wetlands, floodplains and steep
slopes on and around it. The map is drawn at one of the engineer's scales
1 in = 20, 30, 40, 50, 60 or 100 ft: the most detailed at which the site and its
disturbance, plus the "immediately adjacent" band of the ordinance
(:func:`georeview.facts.sitemap.adjacent_distance_ft`, 100 ft) on every side, fit the
drawing area of a ledger (17 x 11 in) or ANSI D (34 x 22 in) sheet.

The map frame is placed at an exact position on the page and its limits are set so
that one inch of paper is exactly ``scale_ft_per_inch`` feet in the working CRS
(grid distance; EPSG:3071 has a scale factor within 0.9996-1.0004 of ground, which the
title block states). North is grid north of the working CRS.

Geometries come from :func:`georeview.pipeline.review.review` (the same loaders and measures
as the report); contours are drawn from the municipality's DEM by
:func:`georeview.measure.contours.contours_ft` over the whole map.

This module draws and writes the sheet; its layout (sheet sizes, scales, grid) is
:mod:`~georeview.report.sheet_layout`, the map's layers
:mod:`~georeview.report.sheet_layers` and the side panel
:mod:`~georeview.report.sheet_panel`.
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Any

import shapely

from georeview.errors import InputError
from georeview.report.sheet_layers import contours, draw_layers
from georeview.report.sheet_layout import (
    SheetInfo,
    SheetLayout,
    grid_labels,
    map_extent,
    pick_layout,
    site_cells,
)
from georeview.report.sheet_panel import draw_grid, draw_panel, draw_vicinity
from georeview.units import M_PER_FT

log = logging.getLogger(__name__)

__all__ = ["make_sheet"]


def literal_text(func: Any) -> Any:
    r"""Run ``func`` with every matplotlib text literal, never markup.

    Applicant text such as ``"$x^2$"`` or ``"$\frac{$"`` would otherwise be typeset
    as mathtext (or fail to parse and stop the sheet). Text objects read
    ``text.parse_math`` when they are created, so the whole drawing runs under it.
    """
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import matplotlib as mpl

        with mpl.rc_context({"text.parse_math": False, "text.usetex": False}):
            return func(*args, **kwargs)

    return wrapper


def _check_interval(r: Any, contour_interval_ft: float) -> None:
    """Refuse a contour interval that is not in (0, the ordinance's maximum] ft."""
    max_interval = float(r.ordinance.param("max_contour_interval_ft"))
    if not (0 < contour_interval_ft <= max_interval):
        cite = r.ordinance.citation_of("max_contour_interval_ft")
        raise InputError(
            f"the contour interval must be more than 0 and at most {max_interval:g}"
            f" ft ({r.ordinance.short_name} {cite}), got {contour_interval_ft:g}",
            field="contour_interval_ft",
        )


def _map_axes(fig: Any, layout: SheetLayout, extent: tuple[float, ...]) -> Any:
    """The map axes at the frame's exact place on the page, limits set to ``extent``."""
    page_w, page_h = layout.page_in
    ox, oy = layout.map_origin_in
    w_in, h_in = layout.map_size_in
    ax = fig.add_axes((ox / page_w, oy / page_h, w_in / page_w, h_in / page_h))
    ax.set_xlim(extent[0], extent[2])
    ax.set_ylim(extent[1], extent[3])
    ax.set_xticks([])
    ax.set_yticks([])
    for sp in ax.spines.values():
        sp.set_linewidth(1.2)
    return ax


def _write_pdf(fig: Any, out_pdf: Path, metadata: dict[str, str]) -> None:
    """Save the figure as PDF through a temporary file in the same folder (normal mode)."""
    import matplotlib as mpl

    from georeview.report.files import atomic_path

    with (
        atomic_path(out_pdf) as tmp,
        mpl.rc_context({"pdf.fonttype": 42, "path.simplify": False}),
    ):
        fig.savefig(tmp, format="pdf", metadata=metadata)


@literal_text
def make_sheet(
    submission_dir: Path,
    out_pdf: Path,
    *,
    layers_dir: Path | None = None,
    sheet: str = "auto",
    contour_interval_ft: float = 2.0,
    with_terrain: bool = True,
    sheet_number: str = "1 of 1",
    preparer: str | None = None,
    revision: str | None = None,
) -> SheetInfo:
    """Draw a site-map sheet for a submission and write it as a one-page PDF.

    Parameters
    ----------
    submission_dir : Path
        Submission folder (submission.toml and its geometry).
    out_pdf : Path
        PDF to write (replaced atomically if it exists; the CLI asks for --overwrite).
    layers_dir : Path, optional
        The municipality's layers folder (default: found as for ``georeview review``).
    sheet : {"auto", "ledger", "ansi_d"}
        Sheet size. ``auto`` takes ledger when the site fits it at 1 in = 100 ft or
        finer (it prints on office printers), else ANSI D.
    contour_interval_ft : float
        Contour interval, ft (default 2; at most 5 by both ordinances).
    with_terrain : bool
        Run the review's DEM measures (steep slopes, downstream path) for the map.
    sheet_number : str
        Sheet number for the title block ("1 of 1").
    preparer : str, optional
        Who prepared the sheet (default: georeview, as an automated draft).
    revision : str, optional
        Revision and its date (default: "0", dated today).

    Returns
    -------
    SheetInfo

    Raises
    ------
    InputError
        A contour interval that is not in (0, 5] ft, or an unknown sheet.
    LimitError
        When the site does not fit ANSI D at 1 in = 100 ft.
    GeoReviewError
        Whatever :func:`georeview.pipeline.review.review` raises for bad input.
    """
    from matplotlib.backends.backend_pdf import FigureCanvasPdf
    from matplotlib.figure import Figure

    from georeview.facts.sitemap import adjacent_distance_ft
    from georeview.pipeline.review import review

    out_pdf = Path(out_pdf)
    r = review(Path(submission_dir), layers_dir, with_terrain=with_terrain)
    _check_interval(r, contour_interval_ft)
    crs = r.layers.working_crs
    ft = M_PER_FT / float(crs.axis_info[0].unit_conversion_factor)  # CRS units per ft
    site = r.submission.site_geom
    margin_ft = adjacent_distance_ft(r.ordinance.municipality)
    x0, y0, x1, y1 = shapely.bounds(shapely.union(site, r.submission.disturbance_geom))
    need_w = (x1 - x0) / ft + 2 * margin_ft
    need_h = (y1 - y0) / ft + 2 * margin_ft
    own = r.submission.config.site_map.scale_ft_per_inch if r.submission.config.site_map else None
    layout, scale = pick_layout(need_w, need_h, sheet, own)
    w_in, h_in = layout.map_size_in
    extent = map_extent(((x0 + x1) / 2, (y0 + y1) / 2), layout, scale, ft)
    frame = shapely.box(*extent)
    log.info(
        "sheet %s at 1 in = %d ft: map %.0f x %.0f ft",
        layout.name,
        scale,
        w_in * scale,
        h_in * scale,
    )
    n_rows = round(h_in / layout.cell_in)
    cols = grid_labels(round(w_in / layout.cell_in))
    cell = layout.cell_in * scale * ft
    cells = site_cells(site, extent, cell, cols, n_rows)
    contour_lines, contours_note = contours(r, frame, crs, contour_interval_ft)

    fig = Figure(figsize=layout.page_in)
    FigureCanvasPdf(fig)
    ax = _map_axes(fig, layout, extent)
    drawn = draw_layers(ax, r, frame, contour_lines, contour_interval_ft)
    draw_grid(fig, ax, layout, extent, cell, cols, n_rows)
    band = draw_panel(
        fig,
        layout,
        r,
        scale,
        contour_interval_ft,
        contours_note,
        (cols, n_rows, cell / ft, cells),
        drawn,
        title={
            "sheet": sheet_number,
            "preparer": preparer,
            "revision": revision or f"0, {dt.date.today().isoformat()}",
        },
    )
    draw_vicinity(fig, layout, r, band)
    _write_pdf(
        fig,
        out_pdf,
        {
            "Title": f"Site map: {r.submission.config.name or r.submission.folder.name}",
            "Creator": "georeview",
            "Subject": f"1 in = {scale} ft, {layout.name}",
        },
    )
    return SheetInfo(
        path=out_pdf,
        sheet=layout.name,
        page_size_in=layout.page_in,
        scale_ft_per_inch=scale,
        map_extent=extent,
        map_frame_in=(*layout.map_origin_in, w_in, h_in),
        grid_columns=cols,
        grid_rows=n_rows,
        grid_cell_ft=float(layout.cell_in * scale),
        site_cells=cells,
        contour_interval_ft=float(contour_interval_ft),
        contours_drawn=contour_lines is not None and len(contour_lines) > 0,
        layers_drawn=tuple(drawn),
    )
