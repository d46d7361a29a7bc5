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
:func:`georeview.terrain.contours_ft` over the whole map.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import string
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely

from georeview.errors import CoverageError, InputError, LimitError, OutputError
from georeview.units import M_PER_FT

if TYPE_CHECKING:
    import geopandas as gpd

log = logging.getLogger(__name__)

__all__ = [
    "LAYOUTS",
    "SCALES_FT_PER_INCH",
    "SITE_COLOR",
    "SheetInfo",
    "SheetLayout",
    "choose_scale",
    "grid_labels",
    "make_sheet",
]

#: Engineer's scales, 1 in = N ft, most detailed first.
SCALES_FT_PER_INCH = (20, 30, 40, 50, 60, 100)
#: Site boundary colour (RGB 0-1); the tests find the boundary in the PDF by it.
SITE_COLOR = (0.85, 0.0, 0.0)
DISTURBANCE_COLOR = (0.95, 0.55, 0.0)
WETLAND_COLOR = (0.2, 0.55, 0.3)
FLOODPLAIN_COLOR = (0.35, 0.6, 0.95)
WATER_COLOR = (0.1, 0.35, 0.85)
STEEP_COLOR = (0.6, 0.3, 0.1)
DOWNSTREAM_COLOR = (0.55, 0.0, 0.65)
CONTOUR_COLOR = (0.55, 0.42, 0.3)
ROAD_COLOR = (0.35, 0.35, 0.35)


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


def _poly_path(geoms: Any) -> Any:
    """One matplotlib Path for polygons (holes included), or None when there are none."""
    from matplotlib.path import Path as MplPath

    verts: list[np.ndarray] = []
    codes: list[np.ndarray] = []
    for g in np.asarray(geoms, dtype=object).ravel():
        if g is None or shapely.is_empty(g):
            continue
        parts = shapely.get_parts(g)
        for p in parts:
            if p.geom_type != "Polygon":
                continue
            for ring in (p.exterior, *p.interiors):
                xy = np.asarray(ring.coords)
                if len(xy) < 3:
                    continue
                c = np.full(len(xy), MplPath.LINETO, dtype=np.uint8)
                c[0] = MplPath.MOVETO
                c[-1] = MplPath.CLOSEPOLY
                verts.append(xy)
                codes.append(c)
    if not verts:
        return None
    return MplPath(np.concatenate(verts), np.concatenate(codes))


def _lines(geoms: Any) -> list[np.ndarray]:
    """Coordinate arrays of every line (and polygon ring) in ``geoms``."""
    out: list[np.ndarray] = []
    for g in np.asarray(geoms, dtype=object).ravel():
        if g is None or shapely.is_empty(g):
            continue
        for p in shapely.get_parts(g):
            if p.geom_type == "Polygon":
                out += [np.asarray(r.coords) for r in (p.exterior, *p.interiors)]
            elif p.geom_type in ("LineString", "LinearRing"):
                out.append(np.asarray(p.coords))
    return out


def _of_type(gdf: gpd.GeoDataFrame | None, polygons: bool) -> np.ndarray:
    if gdf is None or len(gdf) == 0:
        return np.empty(0, dtype=object)
    geoms = np.asarray(gdf.geometry.values, dtype=object)
    poly = np.isin(shapely.get_type_id(geoms), (3, 6))
    return geoms[poly] if polygons else geoms[~poly]


# --------------------------------------------------------------------------- the sheet


def _literal_text(func: Any) -> Any:
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


@_literal_text
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
    import matplotlib as mpl
    from matplotlib.backends.backend_pdf import FigureCanvasPdf
    from matplotlib.figure import Figure

    from georeview.facts.sitemap import adjacent_distance_ft
    from georeview.pipeline.review import review

    out_pdf = Path(out_pdf)
    r = review(Path(submission_dir), layers_dir, with_terrain=with_terrain)
    max_interval = float(r.ordinance.param("max_contour_interval_ft"))
    if not (0 < contour_interval_ft <= max_interval):
        cite = r.ordinance.citation_of("max_contour_interval_ft")
        raise InputError(
            f"the contour interval must be more than 0 and at most {max_interval:g}"
            f" ft ({r.ordinance.short_name} {cite}), got {contour_interval_ft:g}",
            field="contour_interval_ft",
        )
    crs = r.layers.working_crs
    unit_m = float(crs.axis_info[0].unit_conversion_factor)
    ft = M_PER_FT / unit_m  # CRS units per ft
    site = r.submission.site_geom
    dist = r.submission.disturbance_geom
    margin_ft = adjacent_distance_ft(r.ordinance.municipality)
    x0, y0, x1, y1 = shapely.bounds(shapely.union(site, dist))
    need_w = (x1 - x0) / ft + 2 * margin_ft
    need_h = (y1 - y0) / ft + 2 * margin_ft
    own = r.submission.config.site_map.scale_ft_per_inch if r.submission.config.site_map else None
    layout, scale = pick_layout(need_w, need_h, sheet, own)
    w_in, h_in = layout.map_size_in
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    half_w, half_h = w_in * scale * ft / 2, h_in * scale * ft / 2
    extent = (cx - half_w, cy - half_h, cx + half_w, cy + half_h)
    frame = shapely.box(*extent)
    log.info(
        "sheet %s at 1 in = %d ft: map %.0f x %.0f ft",
        layout.name,
        scale,
        w_in * scale,
        h_in * scale,
    )

    n_cols = round(w_in / layout.cell_in)
    n_rows = round(h_in / layout.cell_in)
    cols = grid_labels(n_cols)
    cell = layout.cell_in * scale * ft
    ci = np.clip(((shapely.bounds(site)[[0, 2]] - extent[0]) // cell).astype(int), 0, n_cols - 1)
    ri = np.clip(((extent[3] - shapely.bounds(site)[[3, 1]]) // cell).astype(int), 0, n_rows - 1)
    site_cells = tuple(
        f"{cols[c]}{rr + 1}"
        for rr in range(ri[0], ri[1] + 1)
        for c in range(ci[0], ci[1] + 1)
        if shapely.intersects(
            site,
            shapely.box(
                extent[0] + c * cell,
                extent[3] - (rr + 1) * cell,
                extent[0] + (c + 1) * cell,
                extent[3] - rr * cell,
            ),
        )
    )

    contours, contours_note = _contours(r, frame, crs, contour_interval_ft)

    page_w, page_h = layout.page_in
    fig = Figure(figsize=(page_w, page_h))
    FigureCanvasPdf(fig)
    ox, oy = layout.map_origin_in
    ax = fig.add_axes((ox / page_w, oy / page_h, w_in / page_w, h_in / page_h))
    ax.set_xlim(extent[0], extent[2])
    ax.set_ylim(extent[1], extent[3])
    ax.set_xticks([])
    ax.set_yticks([])
    for sp in ax.spines.values():
        sp.set_linewidth(1.2)
    drawn = _draw_layers(ax, r, frame, contours, contour_interval_ft)
    _draw_grid(fig, ax, layout, extent, cell, cols, n_rows)
    band = _draw_panel(
        fig,
        layout,
        r,
        scale,
        contour_interval_ft,
        contours_note,
        cols,
        n_rows,
        cell / ft,
        drawn,
        site_cells,
        title={
            "sheet": sheet_number,
            "preparer": preparer,
            "revision": revision or f"0, {dt.date.today().isoformat()}",
        },
    )
    _draw_vicinity(fig, layout, r, band)

    out_pdf.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".pdf", dir=out_pdf.parent)
    os.close(fd)
    try:
        with mpl.rc_context({"pdf.fonttype": 42, "path.simplify": False}):
            fig.savefig(
                tmp,
                format="pdf",
                metadata={
                    "Title": f"Site map: {r.submission.config.name or r.submission.folder.name}",
                    "Creator": "georeview",
                    "Subject": f"1 in = {scale} ft, {layout.name}",
                },
            )
        os.replace(tmp, out_pdf)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"cannot write the sheet ({exc.strerror})", path=out_pdf) from None
    return SheetInfo(
        path=out_pdf,
        sheet=layout.name,
        page_size_in=layout.page_in,
        scale_ft_per_inch=scale,
        map_extent=tuple(float(v) for v in extent),  # type: ignore[arg-type]
        map_frame_in=(ox, oy, w_in, h_in),
        grid_columns=cols,
        grid_rows=n_rows,
        grid_cell_ft=float(layout.cell_in * scale),
        site_cells=site_cells,
        contour_interval_ft=float(contour_interval_ft),
        contours_drawn=contours is not None and len(contours) > 0,
        layers_drawn=tuple(drawn),
    )


def _contours(
    r: Any, frame: shapely.Geometry, crs: Any, interval_ft: float
) -> tuple[gpd.GeoDataFrame | None, str]:
    """Contours over the map frame from the DEM, and a note for the title block."""
    from georeview import terrain

    spec = r.layers.config.dem
    if spec is None:
        return None, "no DEM in layers.toml: no contours"
    try:
        gdf = terrain.contours_ft(
            r.layers.folder / spec.path,
            spec.vertical_units,
            frame,
            crs,
            interval_ft=interval_ft,
            working_crs=crs,
        )
    except CoverageError as exc:
        log.warning("contours not drawn: %s", exc.one_line())
        return None, "the DEM does not cover the map: no contours"
    src = "synthetic DEM" if getattr(spec, "synthetic", False) else f"DEM {spec.path}"
    return gdf, f"from the {src}"


def _draw_layers(
    ax: Any, r: Any, frame: shapely.Geometry, contours: Any, interval_ft: float
) -> list[str]:
    """Draw every layer in the map axes; return the names drawn."""
    from matplotlib.collections import LineCollection
    from matplotlib.patches import PathPatch

    from georeview.measure.areas import floodway, sfha

    drawn: list[str] = []
    ml = r.map_layers
    bbox = tuple(shapely.bounds(frame))

    def polys(name: str, geoms: Any, **kw: Any) -> None:
        geoms = np.asarray(geoms, dtype=object)
        if geoms.size:
            geoms = geoms[shapely.intersects(geoms, frame)]
        path = _poly_path(geoms) if geoms.size else None
        if path is not None:
            ax.add_patch(PathPatch(path, **kw))
            drawn.append(name)

    def lines(name: str, geoms: Any, **kw: Any) -> None:
        geoms = np.asarray(geoms, dtype=object)
        if geoms.size:
            geoms = geoms[shapely.intersects(geoms, frame)]
        segs = _lines(geoms) if geoms.size else []
        if segs:
            ax.add_collection(LineCollection(segs, **kw))
            drawn.append(name)

    fp = ml.get("floodplain")
    spec = r.layers.config.floodplain
    if fp is not None and spec is not None:
        polys(
            "floodplain",
            sfha(fp, spec.zone_field, spec.sfha_field).geometry.values,
            # Hatched, not filled: where it overlaps wetland or slopes both stay readable.
            facecolor=(*FLOODPLAIN_COLOR, 0.08),
            edgecolor=FLOODPLAIN_COLOR,
            hatch="///",
            lw=0.8,
            zorder=1,
        )
        polys(
            "floodway",
            floodway(fp, spec.subtype_field).geometry.values,
            facecolor="none",
            edgecolor=FLOODPLAIN_COLOR,
            hatch="\\\\\\",
            lw=0.6,
            zorder=1.1,
        )
    polys(
        "wetlands",
        _of_type(ml.get("wetlands"), True),
        facecolor=(*WETLAND_COLOR, 0.08),
        edgecolor=WETLAND_COLOR,
        hatch="\\\\",
        lw=0.9,
        zorder=2,
    )
    polys(
        "steep_slopes",
        _of_type(ml.get("steep_slopes"), True),
        facecolor="none",
        edgecolor=STEEP_COLOR,
        hatch="xx",
        lw=0.8,
        zorder=2.5,
    )
    if contours is not None and len(contours):
        elev = np.asarray(contours["elev_ft"], dtype=float)
        index = np.isclose(np.mod(elev, 5 * interval_ft), 0.0) | np.isclose(
            np.mod(elev, 5 * interval_ft), 5 * interval_ft
        )
        geoms = np.asarray(contours.geometry.values, dtype=object)
        lines("contours", geoms[~index], colors=[CONTOUR_COLOR], linewidths=0.35, zorder=3)
        lines("contours", geoms[index], colors=[CONTOUR_COLOR], linewidths=0.9, zorder=3)
        for g, z in zip(geoms[index], elev[index], strict=True):
            if g.length > 0:
                p = g.interpolate(0.5, normalized=True)
                if frame.contains(p):
                    ax.text(
                        p.x,
                        p.y,
                        f"{z:g}",
                        fontsize=5,
                        color=CONTOUR_COLOR,
                        ha="center",
                        va="center",
                        zorder=3.1,
                        bbox={"fc": "white", "ec": "none", "pad": 0.3},
                    )
    roads = r.layers.read("roads", bbox=bbox) if r.layers.has("roads") else None
    lines("roads", _of_type(roads, False), colors=[ROAD_COLOR], linewidths=2.0, zorder=3.5)
    hydro = ml.get("hydrography")
    polys(
        "waters",
        _of_type(hydro, True),
        facecolor=(*WATER_COLOR, 0.35),
        edgecolor=WATER_COLOR,
        lw=0.8,
        zorder=4,
    )
    lines("waters", _of_type(hydro, False), colors=[WATER_COLOR], linewidths=1.4, zorder=4)
    lines(
        "downstream",
        _of_type(ml.get("downstream"), False),
        colors=[DOWNSTREAM_COLOR],
        linewidths=1.2,
        linestyles="dashed",
        zorder=5,
    )
    polys(
        "disturbance",
        [r.submission.disturbance_geom],
        # Outline only: the disturbance lies over the layers it is measured against.
        facecolor="none",
        edgecolor=DISTURBANCE_COLOR,
        lw=1.6,
        linestyle="--",
        zorder=6,
    )
    # The site boundary: plain lines (no snapping) so the PDF holds its exact vertices.
    for xy in _lines([r.submission.site_geom]):
        ax.plot(
            xy[:, 0],
            xy[:, 1],
            color=SITE_COLOR,
            lw=1.8,
            snap=False,
            zorder=7,
            solid_joinstyle="miter",
        )
    drawn.append("site")
    return list(dict.fromkeys(drawn))


def _draw_grid(
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


def _draw_vicinity(fig: Any, layout: SheetLayout, r: Any, band: tuple[float, float]) -> None:
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

    path = _poly_path(np.asarray([village], dtype=object))
    if path is not None:
        ax.add_patch(PathPatch(path, facecolor=(0.9, 0.9, 0.9), edgecolor="black", lw=0.6))
    c = shapely.centroid(site)
    ax.plot([c.x], [c.y], marker="o", ms=6, mfc="none", mec=SITE_COLOR, mew=1.6)
    ax.plot([c.x], [c.y], marker=".", ms=3, color=SITE_COLOR)
    ax.set_title(f"VICINITY: {j.village.name} limits, site circled", fontsize=6, pad=2)


def _draw_panel(
    fig: Any,
    layout: SheetLayout,
    r: Any,
    scale: int,
    interval_ft: float,
    contours_note: str,
    cols: tuple[str, ...],
    n_rows: int,
    cell_ft: float,
    drawn: list[str],
    site_cells: tuple[str, ...],
    title: dict[str, Any] | None = None,
) -> tuple[float, float]:
    """Legend, north arrow, scale bar and title block in the side panel.

    Returns the free band between them, (bottom, top) in inches from the page's
    lower edge, for the vicinity inset.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrow, Patch, Rectangle

    from georeview import __version__

    t = fig.dpi_scale_trans
    px, py, pw, ph = layout.panel_in
    fig.add_artist(Rectangle((px, py), pw, ph, transform=t, fill=False, lw=1.0))
    top = py + ph

    # North arrow (grid north).
    ax_x = px + pw / 2
    fig.add_artist(
        FancyArrow(
            ax_x,
            top - 1.25,
            0,
            0.8,
            width=0.06,
            head_width=0.3,
            head_length=0.3,
            length_includes_head=True,
            transform=t,
            color="black",
        )
    )
    fig.text(
        ax_x, top - 0.3, "N", transform=t, ha="center", va="bottom", fontsize=14, weight="bold"
    )
    fig.text(ax_x, top - 1.45, "grid north", transform=t, ha="center", fontsize=6)

    # Scale bar: four one-inch divisions = 4 x scale ft.
    n_div = 3 if pw < 4 else 4
    bx = px + (pw - n_div) / 2
    by = top - 2.1
    for k in range(n_div):
        fig.add_artist(
            Rectangle(
                (bx + k, by),
                1.0,
                0.08,
                transform=t,
                lw=0.6,
                facecolor="black" if k % 2 == 0 else "white",
                edgecolor="black",
            )
        )
        fig.text(bx + k, by + 0.12, f"{k * scale:g}", transform=t, ha="center", fontsize=7)
    fig.text(bx + n_div, by + 0.12, f"{n_div * scale:g} ft", transform=t, ha="center", fontsize=7)
    fig.text(
        px + pw / 2,
        by - 0.2,
        f"SCALE: 1 in = {scale} ft",
        transform=t,
        ha="center",
        va="top",
        fontsize=10,
        weight="bold",
    )

    # Legend.
    names = {
        "site": ("Site boundary", Line2D([], [], color=SITE_COLOR, lw=1.8)),
        "disturbance": (
            "Land disturbance",
            Patch(facecolor="none", edgecolor=DISTURBANCE_COLOR, linestyle="--", lw=1.6),
        ),
        "wetlands": (
            "Wetland",
            Patch(facecolor=(*WETLAND_COLOR, 0.08), edgecolor=WETLAND_COLOR, hatch="\\\\"),
        ),
        "floodplain": (
            "100-year floodplain (SFHA)",
            Patch(facecolor=(*FLOODPLAIN_COLOR, 0.08), edgecolor=FLOODPLAIN_COLOR, hatch="///"),
        ),
        "floodway": (
            "Floodway",
            Patch(facecolor="none", edgecolor=FLOODPLAIN_COLOR, hatch="\\\\\\"),
        ),
        "waters": ("Lake, stream, ditch", Line2D([], [], color=WATER_COLOR, lw=1.4)),
        "roads": ("Road", Line2D([], [], color=ROAD_COLOR, lw=2.0)),
        "steep_slopes": (
            "Slope 20 % or more (disturbed area)",
            Patch(facecolor="none", edgecolor=STEEP_COLOR, hatch="xx"),
        ),
        "contours": (
            f"Contour, {interval_ft:g} ft (index {5 * interval_ft:g} ft)",
            Line2D([], [], color=CONTOUR_COLOR, lw=0.6),
        ),
        "downstream": (
            "Downstream flow path (1/4 mile)",
            Line2D([], [], color=DOWNSTREAM_COLOR, lw=1.2, linestyle="--"),
        ),
    }
    order = [k for k in names if k in drawn]
    # The legend box is as tall as its rows (7 pt text, about 0.2 in a row, plus title).
    legend_h = 0.45 + 0.2 * len([k for k in names if k in drawn])
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

    # Title block.
    cfg = r.submission.config
    j = r.judgement
    title = title or {}
    lines = [
        (f"SITE MAP    SHEET {title.get('sheet') or '1 of 1'}", 12, "bold"),
        (cfg.name or r.submission.folder.name, 9, "bold"),
        (
            f"Prepared by: {title.get('preparer') or f'georeview {__version__} (automated draft)'}",
            7,
            "normal",
        ),
        (f"Revision: {title.get('revision') or '0'}", 7, "normal"),
        (f"Applicant: {cfg.applicant or 'not given'}", 7, "normal"),
        (f"{r.ordinance.short_name} ({r.ordinance.municipality.title()})", 7, "normal"),
        (f"Category: {j.category or 'not determined'}", 7, "normal"),
        (
            f"Scale 1 in = {scale} ft on {layout.page_in[0]:g} x {layout.page_in[1]:g} in",
            7,
            "normal",
        ),
        (f"Grid: columns {cols[0]}-{cols[-1]}, rows 1-{n_rows}; cells {cell_ft:g} ft", 7, "normal"),
        (
            f"Site in cells {', '.join(site_cells[:12])}{' ...' if len(site_cells) > 12 else ''}",
            7,
            "normal",
        ),
        (f"Contours {interval_ft:g} ft {contours_note}", 6, "normal"),
        (f"CRS {r.layers.config.working_crs} (grid distances)", 6, "normal"),
        (f"Drawn {dt.date.today().isoformat()} by georeview {__version__}", 6, "normal"),
    ]
    synthetic = [
        n
        for n in type(r.layers.config).model_fields
        if getattr(getattr(r.layers.config, n), "synthetic", False)
    ]
    if synthetic:
        wrapped = textwrap.wrap(f"SYNTHETIC reference layers: {', '.join(synthetic)}", 58)
        lines += [(w, 6, "bold") for w in wrapped]
    steps = [0.17 if size < 9 else 0.24 for _, size, _ in lines]
    y = py + 0.1 + sum(steps)
    fig.add_artist(Line2D([px, px + pw], [y + 0.15, y + 0.15], transform=t, color="black", lw=0.8))
    title_top = y + 0.15
    for (text, size, weight), step in zip(lines, steps, strict=True):
        fig.text(px + 0.12, y, text, transform=t, fontsize=size, weight=weight, va="top")
        y -= step
    return title_top, top - 2.6 - legend_h
