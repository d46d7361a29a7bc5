"""Site-map sheet layers: what the map frame of the sheet draws, and in which colours.

Reference layers (floodplain and floodway, wetlands, steep slopes, contours with
index labels, roads, waters, the downstream path) are clipped to the frame and drawn
hatched or outlined so the layers beneath stay readable; the disturbance and the
site boundary go on top, the site as plain lines that keep its exact vertices.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely

from georeview.errors import CoverageError

if TYPE_CHECKING:
    import geopandas as gpd

log = logging.getLogger(__name__)

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


def poly_path(geoms: Any) -> Any:
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


def line_coords(geoms: Any) -> list[np.ndarray]:
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


def of_type(gdf: gpd.GeoDataFrame | None, polygons: bool) -> np.ndarray:
    """The polygon (``polygons``) or the other geometries of a layer, as an array."""
    if gdf is None or len(gdf) == 0:
        return np.empty(0, dtype=object)
    geoms = np.asarray(gdf.geometry.values, dtype=object)
    poly = np.isin(shapely.get_type_id(geoms), (3, 6))
    return geoms[poly] if polygons else geoms[~poly]


# --------------------------------------------------------------------------- the sheet


def contours(
    r: Any, frame: shapely.Geometry, crs: Any, interval_ft: float
) -> tuple[gpd.GeoDataFrame | None, str]:
    """Contours over the map frame from the DEM, and a note for the title block."""
    from georeview.measure.contours import contours_ft

    spec = r.layers.config.dem
    if spec is None:
        return None, "no DEM in layers.toml: no contours"
    try:
        gdf = contours_ft(
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


#: Area layers drawn as one patch: PathPatch properties by layer. Hatched or outlined, not
#: filled, so that where floodplain, wetland and slopes overlap each stays readable; the
#: disturbance is an outline because it lies over the layers it is measured against.
AREA_STYLES: dict[str, dict[str, Any]] = {
    "floodplain": {
        "facecolor": (*FLOODPLAIN_COLOR, 0.08),
        "edgecolor": FLOODPLAIN_COLOR,
        "hatch": "///",
        "lw": 0.8,
        "zorder": 1,
    },
    "floodway": {
        "facecolor": "none",
        "edgecolor": FLOODPLAIN_COLOR,
        "hatch": "\\\\\\",
        "lw": 0.6,
        "zorder": 1.1,
    },
    "wetlands": {
        "facecolor": (*WETLAND_COLOR, 0.08),
        "edgecolor": WETLAND_COLOR,
        "hatch": "\\\\",
        "lw": 0.9,
        "zorder": 2,
    },
    "steep_slopes": {
        "facecolor": "none",
        "edgecolor": STEEP_COLOR,
        "hatch": "xx",
        "lw": 0.8,
        "zorder": 2.5,
    },
    "disturbance": {
        "facecolor": "none",
        "edgecolor": DISTURBANCE_COLOR,
        "lw": 1.6,
        "linestyle": "--",
        "zorder": 6,
    },
}


def legend_patch(name: str) -> Any:
    """A legend handle drawn like the area layer ``name`` of :data:`AREA_STYLES`.

    A hatched layer is known by its hatch (the handle keeps matplotlib's default
    edge width); an outline by its line, so its handle keeps the layer's width.
    """
    from matplotlib.patches import Patch

    style = AREA_STYLES[name]
    keys = ("facecolor", "edgecolor", "hatch", "linestyle") + (() if "hatch" in style else ("lw",))
    return Patch(**{k: style[k] for k in keys if k in style})


class _Frame:
    """The map axes and frame: draws a layer's geometries inside the frame, records its name."""

    def __init__(self, ax: Any, frame: shapely.Geometry) -> None:
        self.ax = ax
        self.frame = frame
        self.drawn: list[str] = []

    def _inside(self, geoms: Any) -> np.ndarray:
        geoms = np.asarray(geoms, dtype=object)
        return geoms[shapely.intersects(geoms, self.frame)] if geoms.size else geoms

    def polys(self, name: str, geoms: Any, **kw: Any) -> None:
        """Polygons as one patch (holes kept), styled by :data:`AREA_STYLES` and ``kw``."""
        from matplotlib.patches import PathPatch

        path = poly_path(self._inside(geoms))
        if path is not None:
            self.ax.add_patch(PathPatch(path, **{**AREA_STYLES.get(name, {}), **kw}))
            self.drawn.append(name)

    def lines(self, name: str, geoms: Any, **kw: Any) -> None:
        """Lines (and rings) as one collection; ``kw`` are LineCollection properties."""
        from matplotlib.collections import LineCollection

        segs = line_coords(self._inside(geoms))
        if segs:
            self.ax.add_collection(LineCollection(segs, **kw))
            self.drawn.append(name)


def _draw_floodplain(f: _Frame, r: Any) -> None:
    """The 1 % annual chance floodplain hatched one way, the floodway the other."""
    from georeview.measure.areas import floodway, sfha

    fp = r.map_layers.get("floodplain")
    spec = r.layers.config.floodplain
    if fp is None or spec is None:
        return
    f.polys("floodplain", sfha(fp, spec.zone_field, spec.sfha_field).geometry.values)
    f.polys("floodway", floodway(fp, spec.subtype_field).geometry.values)


def _draw_contours(f: _Frame, gdf: Any, interval_ft: float) -> None:
    """Contours, every fifth (index) contour heavier and labelled with its elevation."""
    if gdf is None or not len(gdf):
        return
    elev = np.asarray(gdf["elev_ft"], dtype=float)
    index = np.isclose(np.mod(elev, 5 * interval_ft), 0.0) | np.isclose(
        np.mod(elev, 5 * interval_ft), 5 * interval_ft
    )
    geoms = np.asarray(gdf.geometry.values, dtype=object)
    f.lines("contours", geoms[~index], colors=[CONTOUR_COLOR], linewidths=0.35, zorder=3)
    f.lines("contours", geoms[index], colors=[CONTOUR_COLOR], linewidths=0.9, zorder=3)
    for g, z in zip(geoms[index], elev[index], strict=True):
        if g.length > 0:
            p = g.interpolate(0.5, normalized=True)
            if f.frame.contains(p):
                f.ax.text(
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


def _draw_waters(f: _Frame, r: Any) -> None:
    """Roads, waters (areas and lines) and the downstream flow path."""
    bbox = tuple(shapely.bounds(f.frame))
    roads = r.layers.read("roads", bbox=bbox) if r.layers.has("roads") else None
    f.lines("roads", of_type(roads, False), colors=[ROAD_COLOR], linewidths=2.0, zorder=3.5)
    hydro = r.map_layers.get("hydrography")
    f.polys(
        "waters",
        of_type(hydro, True),
        facecolor=(*WATER_COLOR, 0.35),
        edgecolor=WATER_COLOR,
        lw=0.8,
        zorder=4,
    )
    f.lines("waters", of_type(hydro, False), colors=[WATER_COLOR], linewidths=1.4, zorder=4)
    f.lines(
        "downstream",
        of_type(r.map_layers.get("downstream"), False),
        colors=[DOWNSTREAM_COLOR],
        linewidths=1.2,
        linestyles="dashed",
        zorder=5,
    )


def draw_layers(
    ax: Any, r: Any, frame: shapely.Geometry, contour_lines: Any, interval_ft: float
) -> list[str]:
    """Draw every layer in the map axes, bottom first; return the names drawn.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The map axes, limits set to the frame.
    r : georeview.pipeline.result.Review
        The review whose layers are drawn.
    frame : shapely.Geometry
        The map frame (working CRS).
    contour_lines : GeoDataFrame or None
        Contours with an ``elev_ft`` column (:func:`contours`).
    interval_ft : float
        Their interval, ft (every fifth is an index contour).
    """
    f = _Frame(ax, frame)
    ml = r.map_layers
    _draw_floodplain(f, r)
    f.polys("wetlands", of_type(ml.get("wetlands"), True))
    f.polys("steep_slopes", of_type(ml.get("steep_slopes"), True))
    _draw_contours(f, contour_lines, interval_ft)
    _draw_waters(f, r)
    f.polys("disturbance", [r.submission.disturbance_geom])
    # The site boundary: plain lines (no snapping) so the PDF holds its exact vertices.
    for xy in line_coords([r.submission.site_geom]):
        ax.plot(
            xy[:, 0],
            xy[:, 1],
            color=SITE_COLOR,
            lw=1.8,
            snap=False,
            zorder=7,
            solid_joinstyle="miter",
        )
    f.drawn.append("site")
    return list(dict.fromkeys(f.drawn))
