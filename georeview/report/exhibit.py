"""The printed report's map: a static site exhibit at a stated engineer's scale.

report.html shows the interactive map on screen; a browser's print of a Leaflet map
comes out at whatever zoom the frame had (about 1 in = 1,100 ft for a small site),
under its own controls, and blank when the tiles or the iframe were not drawn yet.
The print carries this exhibit instead: drawn here, server-side, with the sheet's own
layers (:func:`georeview.report.sheet_layers.draw_layers`), as a PNG image embedded in
report.html and sized in inches, so that a Letter print at 100 % is true to its scale.

The frame is :data:`FRAME_IN` on paper (it fits the printable width of a Letter page
within the report's 11 mm margins); the scale is the most detailed of
:data:`EXHIBIT_SCALES_FT_PER_INCH` at which the site and its disturbance, with the
ordinance's "immediately adjacent" band on every side, fit the frame. A side panel
holds the north arrow (grid north of the working CRS), a scale bar, the legend and a
vicinity inset of the village limits with the site circled.
"""

from __future__ import annotations

import base64
import io
import logging
from dataclasses import dataclass
from typing import Any

import shapely

from georeview.errors import GeoReviewError
from georeview.report.sheet_layout import SheetLayout, map_extent
from georeview.units import M_PER_FT

log = logging.getLogger(__name__)

__all__ = ["EXHIBIT_SCALES_FT_PER_INCH", "FRAME_IN", "Exhibit", "draw_exhibit", "exhibit_scale"]

#: Engineer's scales of the exhibit, 1 in = N ft, most detailed first: the sheet's own
#: (20-100 ft) and the coarser ones a Letter page needs for a subdivision.
EXHIBIT_SCALES_FT_PER_INCH = (20, 30, 40, 50, 60, 100, 200, 300, 400, 500, 600, 1000, 2000)
#: Map frame on paper, width and height in inches.
FRAME_IN = (5.3, 4.2)
#: The whole figure (frame plus side panel), inches; 7.3 in fits Letter's 7.63 in between
#: the report's 11 mm margins.
FIGURE_IN = (7.3, 4.3)
#: Dots per inch of the embedded image: fine enough for 0.35 pt contours on paper.
DPI = 200

#: The exhibit as a SheetLayout, so that the sheet's vicinity inset draws in its panel.
LAYOUT = SheetLayout(
    name="letter exhibit",
    page_in=FIGURE_IN,
    map_origin_in=(0.05, 0.05),
    map_size_in=FRAME_IN,
    cell_in=1.0,
    panel_in=(5.45, 0.05, 1.8, 4.2),
)


@dataclass(frozen=True)
class Exhibit:
    """A drawn exhibit: the image and what it states.

    Attributes
    ----------
    png : bytes
        The image, :data:`FIGURE_IN` at :data:`DPI`.
    scale_ft_per_inch : int
        One inch of the frame on paper is this many ft (grid distance).
    contour_interval_ft : float or None
        Interval of the contours drawn; None when none were drawn.
    layers_drawn : tuple of str
        The layers drawn (site, disturbance, wetlands, ...).
    map_extent : (float, float, float, float)
        minx, miny, maxx, maxy of the map frame, working-CRS units.
    width_in, height_in : float
        The figure's size on paper, inches.
    """

    png: bytes
    scale_ft_per_inch: int
    contour_interval_ft: float | None
    layers_drawn: tuple[str, ...]
    map_extent: tuple[float, float, float, float]
    width_in: float = FIGURE_IN[0]
    height_in: float = FIGURE_IN[1]

    def data_uri(self) -> str:
        """The image as a ``data:`` URI, so report.html stays one file."""
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


def exhibit_scale(width_ft: float, height_ft: float) -> int | None:
    """Return the most detailed exhibit scale at which a ground area fits the frame.

    Parameters
    ----------
    width_ft, height_ft : float
        Ground size to fit (site plus margins), ft.

    Returns
    -------
    int or None
        Feet per inch from :data:`EXHIBIT_SCALES_FT_PER_INCH`; None when the area is
        too large even at the coarsest.
    """
    w_in, h_in = FRAME_IN
    for s in EXHIBIT_SCALES_FT_PER_INCH:
        if width_ft / s <= w_in and height_ft / s <= h_in:
            return s
    return None


def contour_interval_for(scale_ft_per_inch: int) -> float:
    """Contour interval, ft, that stays legible at a scale (lines about 1/20 in apart or more).

    2 ft to 1 in = 100 ft (the ordinances' site-map detail), 5 ft to 1 in = 300 ft,
    10 ft beyond.
    """
    if scale_ft_per_inch <= 100:
        return 2.0
    return 5.0 if scale_ft_per_inch <= 300 else 10.0


def _scale_and_north(fig: Any, scale: int) -> None:
    """The sheet's north arrow and scale bar, smaller, at the top of the panel.

    The bar is three half-inch divisions (1.5 in); under its title, the condition the
    scale holds on (a Letter print at 100 %).
    """
    from georeview.report.sheet_panel import north_arrow, scale_bar

    px, py, pw, ph = LAYOUT.panel_in
    top, centre = py + ph, px + pw / 2
    north_arrow(fig, centre, top, size=0.55)
    by = top - 1.2
    scale_bar(fig, (px + 0.15, by), centre, scale, n_div=3, div_in=0.5, size=0.75)
    fig.text(
        centre,
        by - 0.3,
        "printed on Letter at 100 %",
        transform=fig.dpi_scale_trans,
        ha="center",
        va="top",
        fontsize=5.5,
    )


def _legend(fig: Any, drawn: list[str], interval_ft: float) -> float:
    """The legend of the layers drawn, under the scale bar; return its bottom (inches)."""
    from georeview.report.sheet_panel import legend_entries

    px, py, pw, ph = LAYOUT.panel_in
    names = legend_entries(interval_ft)
    order = [k for k in names if k in drawn]
    top = py + ph - 1.62
    height = 0.12 + 0.15 * len(order)
    w, h = LAYOUT.page_in
    lax = fig.add_axes((px / w, (top - height) / h, pw / w, height / h))
    lax.set_axis_off()
    lax.legend(
        [names[k][1] for k in order],
        [names[k][0] for k in order],
        loc="upper left",
        fontsize=5,
        frameon=False,
        handlelength=1.6,
        borderaxespad=0.1,
        labelspacing=0.35,
    )
    return top - height


def draw_exhibit(r: Any) -> Exhibit | None:
    """Draw the printed report's site exhibit for a review.

    Parameters
    ----------
    r : georeview.pipeline.result.Review
        The review (its submission geometry, map layers, layers folder and
        jurisdictions).

    Returns
    -------
    Exhibit or None
        None when the site is too large for the coarsest scale (the report then
        says the exhibit was not drawn; the sheet command draws large sites in parts).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from georeview.facts.sitemap import adjacent_distance_ft
    from georeview.report.sheet import literal_text
    from georeview.report.sheet_layers import contours, draw_layers
    from georeview.report.sheet_panel import draw_vicinity

    crs = r.layers.working_crs
    ft = M_PER_FT / float(crs.axis_info[0].unit_conversion_factor)  # CRS units per ft
    x0, y0, x1, y1 = shapely.bounds(
        shapely.union(r.submission.site_geom, r.submission.disturbance_geom)
    )
    margin_ft = adjacent_distance_ft(r.ordinance.municipality)
    scale = exhibit_scale((x1 - x0) / ft + 2 * margin_ft, (y1 - y0) / ft + 2 * margin_ft)
    if scale is None:
        log.warning("the site is too large for the report's Letter exhibit: not drawn")
        return None
    extent = map_extent(((x0 + x1) / 2, (y0 + y1) / 2), LAYOUT, scale, ft)
    frame = shapely.box(*extent)
    interval = contour_interval_for(scale)
    try:
        lines, _ = contours(r, frame, crs, interval)
    except GeoReviewError as exc:
        # the exhibit is a print aid: a DEM the contours cannot use (the review's own
        # measures say so in their findings) draws the map without them
        log.warning("exhibit drawn without contours: %s", exc.one_line())
        lines = None

    def draw() -> tuple[bytes, list[str]]:
        fig = Figure(figsize=FIGURE_IN, dpi=DPI)
        FigureCanvasAgg(fig)
        w, h = FIGURE_IN
        ox, oy = LAYOUT.map_origin_in
        ax = fig.add_axes((ox / w, oy / h, FRAME_IN[0] / w, FRAME_IN[1] / h))
        ax.set_xlim(extent[0], extent[2])
        ax.set_ylim(extent[1], extent[3])
        ax.set_xticks([])
        ax.set_yticks([])
        drawn = draw_layers(ax, r, frame, lines, interval)
        _scale_and_north(fig, scale)
        bottom = _legend(fig, drawn, interval)
        draw_vicinity(fig, LAYOUT, r, (LAYOUT.panel_in[1] - 0.05, bottom + 0.1))
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=DPI)
        return buf.getvalue(), drawn

    png, drawn = literal_text(draw)()
    return Exhibit(
        png=png,
        scale_ft_per_inch=scale,
        contour_interval_ft=interval if "contours" in drawn else None,
        layers_drawn=tuple(drawn),
        map_extent=extent,
    )
