"""Jurisdiction stage: inside the village, in its extraterritorial area, or outside.

Wisconsin law (Wis. Stat. § 236.02(5)): the extraterritorial plat approval
jurisdiction is the *unincorporated* area within 3 miles of a first-, second- or
third-class city and 1.5 miles of a fourth-class city or a village. Where two
municipalities' areas overlap, the line equidistant from their boundaries divides
them (Wis. Stat. § 66.0105). Both are computed here from the boundary layers,
never drawn by hand.

The equidistant line is found from a Voronoi diagram of points sampled densely
along both boundaries (``spacing_m``): every point of a Voronoi cell is nearer to
the cell's sample than to any other, so merging the cells of each municipality
gives the region nearer to it. With samples every 10 m the line is placed within
centimetres at the distances involved (the error is about spacing² / (8 d)).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import geopandas as gpd
import numpy as np
import shapely

from georeview.errors import ConfigError, GeometryError
from georeview.units import miles_to_m, sqm_to_sqft

log = logging.getLogger(__name__)

#: Shares below this fraction of the site are digitising slivers, not a straddle.
SLIVER_SHARE = 0.001


def etj_miles(
    kind: str, city_class: int | None = None, *, reach_miles: Mapping[str, float]
) -> float:
    """Return the extraterritorial reach of a municipality, miles.

    Parameters
    ----------
    kind : str
        ``"C"`` city, ``"V"`` village, ``"T"`` town (towns have none).
    city_class : int
        Class of a city (Wis. Stat. § 62.05); required for a city: its reach depends on
        its class, and none is assumed.
    reach_miles : mapping
        The ordinance's ``etj_miles`` parameter: miles by ``village``, ``town`` and
        ``city_class_1`` .. ``city_class_4``.

    Raises
    ------
    georeview.errors.ConfigError
        A city without a class, a class outside 1 to 4, or a kind the parameter omits.
    """
    kind = kind.upper()
    if kind == "V":
        key = "village"
    elif kind == "C":
        if city_class is None:
            raise ConfigError(
                "a city's class (1 to 4) is needed for its extraterritorial reach",
                field="neighbors.city_class",
            )
        cls = int(city_class)
        if cls not in (1, 2, 3, 4):
            raise ConfigError(f"city class must be 1 to 4, got {city_class!r}", field="city_class")
        key = f"city_class_{cls}"
    else:
        key = "town"
    if key not in reach_miles:
        raise ConfigError(
            f"the ordinance's etj_miles parameter gives no reach for {key!r}",
            field="parameters.etj_miles",
        )
    return float(reach_miles[key])


@dataclass(frozen=True)
class Municipality:
    """One municipality: its name, kind (C/V/T), reach and limits (working CRS).

    ``reach_m`` is the extraterritorial reach in working-CRS units: metres in the
    metre CRSs the layers use; a CRS in feet holds it in feet (the cache's key keeps
    its first name).
    """

    name: str
    kind: str
    geometry: shapely.Geometry
    reach_m: float


@dataclass(frozen=True)
class Jurisdictions:
    """The village, its extraterritorial area and what its neighbours take from it."""

    village: Municipality
    extraterritorial: shapely.Geometry
    #: Parts of the village's 1.5-mile zone that the equidistant line gives to a neighbour.
    ceded: dict[str, shapely.Geometry] = field(default_factory=dict)
    neighbours: tuple[Municipality, ...] = ()
    #: Land within the village's reach whose status cannot be decided (no neighbours
    #: layer: whether it is unincorporated is unknown), and why.
    undetermined: shapely.Geometry = field(default_factory=shapely.Polygon)
    undetermined_reason: str = ""


@dataclass(frozen=True)
class JurisdictionResult:
    """Where a site lies, by share of its area."""

    status: str
    village_sqft: float
    extraterritorial_sqft: float
    outside_sqft: float
    straddles: bool
    municipalities: dict[str, float]
    ceded_to: dict[str, float]
    #: Site area whose status (extraterritorial or outside) cannot be decided, and why.
    undetermined_sqft: float = 0.0
    reason: str = ""

    @property
    def total_sqft(self) -> float:
        """Site area, square feet."""
        return (
            self.village_sqft
            + self.extraterritorial_sqft
            + self.outside_sqft
            + self.undetermined_sqft
        )

    def share(self, status: str) -> float | None:
        """Fraction of the site area in ``status`` (village, extraterritorial, outside).

        ``None`` for the extraterritorial and outside shares while part of the site lies
        where they cannot be told apart (:attr:`undetermined_sqft`).
        """
        total = self.total_sqft
        if status != "village" and total > 0 and self.undetermined_sqft / total >= SLIVER_SHARE:
            return None
        value = {
            "village": self.village_sqft,
            "extraterritorial": self.extraterritorial_sqft,
            "outside": self.outside_sqft,
        }[status]
        return value / total if total > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return the report.json ``jurisdiction`` object."""
        shares = {s: self.share(s) for s in ("village", "extraterritorial", "outside")}
        return {
            "status": self.status,
            "straddles": self.straddles,
            "shares": {s: None if v is None else round(v, 6) for s, v in shares.items()},
            "undetermined_sqft": round(self.undetermined_sqft, 1),
            "reason": self.reason or None,
            "area_sqft": {
                "village": round(self.village_sqft, 1),
                "extraterritorial": round(self.extraterritorial_sqft, 1),
                "outside": round(self.outside_sqft, 1),
            },
            "municipalities": {k: round(v, 6) for k, v in self.municipalities.items()},
            "extraterritorial_of_other": {k: round(v, 6) for k, v in self.ceded_to.items()},
        }


def polygon_parts(geom: shapely.Geometry) -> shapely.Geometry:
    """Return the polygons of an overlay result: a Polygon or MultiPolygon, maybe empty.

    GEOS's overlay (OverlayNG, in its default non-strict mode) gives the intersection of
    two polygons that also touch along a line or at a point as a GeometryCollection
    holding that line or point beside the polygons. Such a mixed collection cannot go
    into the next overlay when the other operand is empty: GEOS 3.14 then fails with
    "Unable to determine overlay result geometry dimension" (Dane County, LTSB 2025: the
    Village of Waunakee's extraterritorial area meets the Village of Windsor's 1.5-mile
    zone in 15,664 m² and along a 374 m line, and no part of that overlap is nearer
    Windsor). Areas are all this module measures, so every overlay result is cut back
    to its polygons. (``georeview.load`` has its own
    repair helper; the measure stage imports nothing from ``load``.)
    """
    if shapely.get_type_id(geom) in (3, 6):
        return geom
    # twice: a collection may hold MultiPolygons
    parts = shapely.get_parts(shapely.get_parts(geom))
    polys = parts[shapely.get_type_id(parts) == 3]
    if len(polys) == 0:
        return shapely.Polygon()
    if len(polys) == 1:
        return polys[0]
    multi = shapely.multipolygons(polys)
    # the parts of one overlay result do not overlap; should they touch along an edge
    # (a collection gathered from several results), the union merges them
    return multi if shapely.is_valid(multi) else shapely.union_all(polys)


def _sample_boundary(geom: shapely.Geometry, spacing_m: float) -> np.ndarray:
    """Return points every ``spacing_m`` along the boundary of ``geom`` as an (n, 2) array."""
    boundary = shapely.segmentize(shapely.boundary(geom), spacing_m)
    return shapely.get_coordinates(boundary)


def nearer_region(
    a: shapely.Geometry,
    b: shapely.Geometry,
    within: shapely.Geometry,
    *,
    spacing_m: float = 10.0,
) -> shapely.Geometry:
    """Return the part of ``within`` nearer to the boundary of ``b`` than to that of ``a``.

    The boundary between the result and the rest of ``within`` is the line
    equidistant from ``a`` and ``b`` (Wis. Stat. § 66.0105).

    Parameters
    ----------
    a, b : shapely.Geometry
        Two municipalities' limits, projected CRS.
    within : shapely.Geometry
        The area to divide (their overlapping extraterritorial zones).
    spacing_m : float
        Sampling interval along the boundaries, metres.
    """
    within = polygon_parts(within)
    if shapely.is_empty(within):
        return shapely.Polygon()
    # Only boundary samples that can be nearest to some point of `within` matter. A point
    # p of `within` is at most d(v, x) + |p - v| from municipality x for any vertex v of
    # `within`, so samples within the largest vertex distance plus the diameter of
    # `within` are enough; fewer would let the clipped boundary's cut edges stand in for
    # the real one.
    verts = shapely.points(shapely.get_coordinates(within))
    diameter = shapely.hausdorff_distance(within, shapely.centroid(within)) * 2
    reach = float(max(shapely.distance(verts, a).max(), shapely.distance(verts, b).max()))
    zone = shapely.buffer(within, reach + diameter + spacing_m)
    pa = _sample_boundary(polygon_parts(shapely.intersection(a, zone)), spacing_m)
    pb = _sample_boundary(polygon_parts(shapely.intersection(b, zone)), spacing_m)
    if len(pa) == 0:
        return within
    if len(pb) == 0:
        return shapely.Polygon()
    pts = np.vstack([pa, pb])
    pts, idx = np.unique(pts, axis=0, return_index=True)
    label = (idx >= len(pa)).astype(bool)
    # Samples along a long straight edge are collinear, and GEOS's Voronoi diagram of
    # collinear points is degenerate: cells that miss their own sample and spill over
    # their neighbours' (the Somers site 0.28 mi from the village and 0.96 mi from
    # Kenosha was given to Kenosha that way). A fixed sub-millimetre jitter (1e-4 of the
    # spacing) breaks the collinearity and moves the line by less than that.
    rng = np.random.default_rng(0)
    pts = pts + rng.uniform(-1e-4 * spacing_m, 1e-4 * spacing_m, pts.shape)
    cells = shapely.get_parts(
        shapely.voronoi_polygons(
            shapely.multipoints(pts), extend_to=shapely.envelope(zone), ordered=True
        )
    )
    # Should a cell still be wrong (invalid, or missing its sample), it is dropped and the
    # gap it leaves given, piece by piece, to the nearer boundary measured exactly.
    good = shapely.is_valid(cells) & shapely.intersects(cells, shapely.points(pts))
    region_b = polygon_parts(shapely.intersection(within, shapely.union_all(cells[good & label])))
    region_a = polygon_parts(shapely.intersection(within, shapely.union_all(cells[good & ~label])))
    gaps = shapely.get_parts(shapely.difference(within, shapely.union_all([region_a, region_b])))
    gaps = gaps[shapely.area(gaps) > 0]
    if len(gaps):
        probe = shapely.point_on_surface(gaps)
        to_b = shapely.distance(probe, shapely.boundary(b)) < shapely.distance(
            probe, shapely.boundary(a)
        )
        region_b = polygon_parts(shapely.union_all([region_b, *gaps[to_b]]))
    return polygon_parts(shapely.difference(region_b, region_a))


def build(
    village_geom: shapely.Geometry,
    village_name: str,
    neighbours: gpd.GeoDataFrame | None,
    *,
    kind_field: str,
    name_field: str | None,
    city_class: dict[str, int] | None = None,
    reach_miles: Mapping[str, float],
    village_kind: str = "V",
    village_class: int | None = None,
    spacing_m: float = 10.0,
    crs: Any = None,
) -> Jurisdictions:
    """Compute a village's extraterritorial area from the boundary layers.

    Parameters
    ----------
    village_geom : shapely.Geometry
        The village limits (working CRS, metres or feet as that CRS says).
    village_name : str
        Name for messages.
    neighbours : GeoDataFrame or None
        Other municipalities with a C/V/T kind field (working CRS). ``None`` (no
        neighbours layer): which land around the village is unincorporated is unknown, so
        its whole reach is :attr:`Jurisdictions.undetermined`, never taken as outside.
    kind_field, name_field : str
        Field names in ``neighbours``.
    reach_miles : mapping
        Extraterritorial reach by kind and city class, miles (:func:`etj_miles`).
    city_class : dict, optional
        Class of named cities. A city near enough for its class to matter (within the
        village's reach plus the largest city reach) must have one.
    crs : optional
        The working CRS, needed when ``neighbours`` is ``None``.

    Raises
    ------
    georeview.errors.ConfigError
        A city whose reach could touch the village's has no class.
    """
    if shapely.is_empty(village_geom):
        raise GeometryError("the village boundary is empty", field="boundary")
    village_miles = etj_miles(village_kind, village_class, reach_miles=reach_miles)
    if neighbours is None:
        return _without_neighbours(village_geom, village_name, village_kind, village_miles, crs)
    unit_m = _crs_unit_m(neighbours)
    reach = miles_to_m(village_miles) / unit_m
    village = Municipality(village_name, village_kind, village_geom, reach)
    others = _neighbours(
        neighbours,
        village,
        kind_field=kind_field,
        name_field=name_field,
        city_class=city_class or {},
        reach_miles=reach_miles,
        village_miles=village_miles,
        unit_m=unit_m,
    )
    zone = polygon_parts(
        shapely.difference(shapely.buffer(village_geom, reach, quad_segs=32), village_geom)
    )
    towns = [m.geometry for m in others if m.kind == "T"]
    unincorporated = polygon_parts(shapely.union_all(towns)) if towns else shapely.Polygon()
    etj = polygon_parts(shapely.intersection(zone, unincorporated))
    etj, ceded = _cede(village, etj, others, spacing_m / unit_m)
    return Jurisdictions(village, etj, ceded, tuple(others))


def _without_neighbours(
    village_geom: shapely.Geometry, village_name: str, village_kind: str, miles: float, crs: Any
) -> Jurisdictions:
    """The village's whole reach undetermined: no layer says which land is unincorporated."""
    unit_m = _crs_unit_m(gpd.GeoDataFrame(geometry=[], crs=crs))
    reach = miles_to_m(miles) / unit_m
    village = Municipality(village_name, village_kind, village_geom, reach)
    zone = polygon_parts(
        shapely.difference(shapely.buffer(village_geom, reach, quad_segs=32), village_geom)
    )
    return Jurisdictions(
        village,
        shapely.Polygon(),
        undetermined=zone,
        undetermined_reason=(
            "no neighbours layer ([neighbors] in layers.toml): whether land near the "
            "village is unincorporated, and so extraterritorial, is unknown"
        ),
    )


def class_reaches(reach_miles: Mapping[str, float]) -> str:
    """Words for the reach by city class, from the ordinance's ``etj_miles`` parameter.

    E.g. "a city of class 1, 2 or 3 reaches 3 mi, of class 4 1.5 mi".
    """
    by_miles: dict[float, list[str]] = {}
    for cls in range(1, 5):
        miles = reach_miles.get(f"city_class_{cls}")
        if miles is not None:
            by_miles.setdefault(float(miles), []).append(str(cls))
    words: list[str] = []
    for miles, classes in sorted(by_miles.items(), key=lambda kv: kv[1]):
        listed = classes[0] if len(classes) == 1 else ", ".join(classes[:-1]) + " or " + classes[-1]
        words.append(f"class {listed}{' reaches' if not words else ''} {miles:g} mi")
    return "a city of " + ", of ".join(words)


def cities_without_class(
    names: Any,
    kinds: Any,
    geoms: Any,
    village_geom: shapely.Geometry,
    *,
    village_miles: float,
    reach_miles: Mapping[str, float],
    city_class: Mapping[str, int],
    unit_m: float,
) -> list[tuple[str, float]]:
    """Every city near enough for its class to matter that has none, nearest first.

    A city farther from the village than the village's reach plus the largest city
    reach cannot meet the village's zone whatever its class; a nearer one can, and its
    class decides where the equidistant line falls (Wis. Stat. § 66.0105).

    Parameters
    ----------
    names, kinds, geoms : array-like
        The neighbours' names, C/V/T kinds (first letter, upper case) and limits.
    village_geom : shapely.Geometry
        The village limits, in the same CRS as ``geoms``.
    village_miles : float
        The village's own reach, miles.
    reach_miles : mapping
        The ordinance's ``etj_miles`` parameter (:func:`etj_miles`).
    city_class : mapping
        The classes given, by city name.
    unit_m : float
        Metres per unit of the CRS.

    Returns
    -------
    list of (str, float)
        Name and distance from the village, miles, of each such city (one entry a name).
    """
    city_miles = max(float(v) for k, v in reach_miles.items() if k.startswith("city_class_"))
    names = np.asarray(names, dtype=object)
    is_city = np.asarray(kinds, dtype=object) == "C"
    lacking = is_city & ~np.isin(names.astype(str), [str(k) for k in city_class])
    if not lacking.any():
        return []
    geoms = np.asarray(geoms, dtype=object)[lacking]
    miles = shapely.distance(geoms, village_geom) * unit_m / miles_to_m(1.0)
    near = miles <= village_miles + city_miles
    found: dict[str, float] = {}
    for name, d in sorted(zip(names[lacking][near], miles[near], strict=True), key=lambda x: x[1]):
        found.setdefault(str(name), float(d))
    return list(found.items())


def city_class_message(missing: list[tuple[str, float]], reach_miles: Mapping[str, float]) -> str:
    """What is wrong when cities lack a class: every one, how far, what a class means."""
    city_miles = max(float(v) for k, v in reach_miles.items() if k.startswith("city_class_"))
    listed = ", ".join(f"{n} ({d:.1f} mi)" for n, d in missing)
    one = len(missing) == 1
    return (
        f"{'a city lies' if one else f'{len(missing)} cities lie'} within the village's reach"
        f" plus {city_miles:g} mi, where {'its' if one else 'their'} class decides where the"
        f" equidistant line falls, and {'has' if one else 'have'} no class: {listed}. A class"
        " is 1 to 4, as the city has proclaimed it under the state's city-class statute (not as its"
        f" population would allow); by the ordinance's etj_miles, {class_reaches(reach_miles)}"
    )


def _neighbours(
    neighbours: gpd.GeoDataFrame,
    village: Municipality,
    *,
    kind_field: str,
    name_field: str | None,
    city_class: dict[str, int],
    reach_miles: Mapping[str, float],
    village_miles: float,
    unit_m: float,
) -> list[Municipality]:
    """Every neighbour with its reach; a city near enough for its class to matter needs one."""
    others = []
    kinds = neighbours[kind_field].astype(str).str.upper().str[:1].to_numpy()
    names = (
        neighbours[name_field].astype(str).to_numpy()
        if name_field
        else np.array([str(i) for i in neighbours.index])
    )
    missing = cities_without_class(
        names,
        kinds,
        neighbours.geometry.values,
        village.geometry,
        village_miles=village_miles,
        reach_miles=reach_miles,
        city_class=city_class,
        unit_m=unit_m,
    )
    if missing:
        pairs = ", ".join(f"{json.dumps(n, ensure_ascii=False)} = N" for n, _ in missing)
        raise ConfigError(
            city_class_message(missing, reach_miles)
            + f"; give every one in [neighbors]: city_class = {{ {pairs} }}",
            field="neighbors.city_class",
        )
    for name, kind, geom in zip(names, kinds, neighbours.geometry.values, strict=True):
        if kind == "C" and name not in city_class:
            # too far for any reach to touch the village's: its class cannot matter
            others.append(Municipality(name, kind, geom, 0.0))
            continue
        r = miles_to_m(etj_miles(kind, city_class.get(name), reach_miles=reach_miles)) / unit_m
        others.append(Municipality(name, kind, geom, r))
    return others


def _cede(
    village: Municipality,
    etj: shapely.Geometry,
    others: list[Municipality],
    spacing_m: float,
) -> tuple[shapely.Geometry, dict[str, shapely.Geometry]]:
    """Give each neighbour the overlap nearer to it (Wis. Stat. § 66.0105).

    Returns the village's remaining extraterritorial area and what each neighbour took.
    """
    ceded: dict[str, shapely.Geometry] = {}
    for other in others:
        if other.reach_m <= 0:
            continue
        if shapely.distance(other.geometry, village.geometry) > village.reach_m + other.reach_m:
            continue
        their_zone = shapely.buffer(other.geometry, other.reach_m, quad_segs=32)
        overlap = polygon_parts(shapely.intersection(etj, their_zone))
        if shapely.is_empty(overlap) or shapely.area(overlap) <= 0:
            continue
        theirs = nearer_region(village.geometry, other.geometry, overlap, spacing_m=spacing_m)
        if not shapely.is_empty(theirs) and shapely.area(theirs) > 0:
            ceded[other.name] = theirs
            etj = polygon_parts(shapely.difference(etj, theirs))
            log.info(
                "equidistant line: %s takes %.0f m2 from %s",
                other.name,
                shapely.area(theirs),
                village.name,
            )
    return etj, ceded


def _crs_unit_m(gdf: gpd.GeoDataFrame) -> float:
    """Metres per unit of a GeoDataFrame's projected CRS."""
    crs = gdf.crs
    if crs is None or not crs.is_projected:
        raise GeometryError("boundary layers must be in a projected CRS", field="neighbors")
    return float(crs.axis_info[0].unit_conversion_factor)


#: Jurisdiction categories, in the order that wins a tie.
CATEGORIES = ("village", "extraterritorial", "outside")


def classify_shares(
    village: np.ndarray, extraterritorial: np.ndarray, total: np.ndarray
) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Status, shares and straddling of many sites from their areas (one tie rule).

    The status is the category holding the largest share; shares equal to 1e-9 (a site
    split evenly along the limit, where float noise from the vertex order would decide)
    go to the first of :data:`CATEGORIES`: the village's own rules before its
    extraterritorial ones. A site straddles when more than one category holds at least
    :data:`SLIVER_SHARE` of it.

    Parameters
    ----------
    village, extraterritorial, total : ndarray
        Areas of each site inside the village, in the extraterritorial area, and in all
        (any one unit); ``total`` > 0.

    Returns
    -------
    (status, shares, straddles)
        Object array of category names, ``{category: share}``, boolean array.
    """
    village = np.asarray(village, dtype=float)
    etj = np.asarray(extraterritorial, dtype=float)
    total = np.asarray(total, dtype=float)
    outside = np.maximum(total - village - etj, 0.0)
    stack = np.column_stack([village, etj, outside]) / total[:, None]
    status = np.array(CATEGORIES, dtype=object)[np.argmax(np.round(stack, 9), axis=1)]
    straddles = (stack >= SLIVER_SHARE).sum(axis=1) > 1
    shares = {c: stack[:, k] for k, c in enumerate(CATEGORIES)}
    return status, shares, straddles


def locate(site: shapely.Geometry, j: Jurisdictions, *, unit_m: float = 1.0) -> JurisdictionResult:
    """Place a site: its area in the village, the extraterritorial area and outside.

    The status is the category holding the largest share of the site; a site
    straddles when more than one category holds at least 0.1 % of it (smaller
    shares are digitising slivers along shared lines).
    """
    sqft = sqm_to_sqft(1.0) * unit_m * unit_m
    total = shapely.area(site)
    if total <= 0:
        raise GeometryError("the site has no area", field="site")
    village = shapely.area(shapely.intersection(site, j.village.geometry))
    etj = shapely.area(shapely.intersection(site, j.extraterritorial))
    unknown = shapely.area(shapely.intersection(site, j.undetermined))
    outside = max(total - village - etj - unknown, 0.0)
    status_a, _, straddles_a = classify_shares(
        np.array([village]), np.array([etj]), np.array([total])
    )
    status, straddles = str(status_a[0]), bool(straddles_a[0])
    if unknown / total >= SLIVER_SHARE:
        # extraterritorial or outside: which, nobody can say without the neighbours
        if unknown >= max(village, etj, outside):
            status = "undetermined"
        straddles = straddles or (village / total >= SLIVER_SHARE)
    munis: dict[str, float] = {}
    if village > 0:
        munis[j.village.name] = village / total
    for m in j.neighbours:
        if shapely.intersects(site, m.geometry):
            a = shapely.area(shapely.intersection(site, m.geometry))
            if a / total >= SLIVER_SHARE:
                munis[m.name] = a / total
    ceded = {}
    for name, geom in j.ceded.items():
        a = shapely.area(shapely.intersection(site, geom))
        if a / total >= SLIVER_SHARE:
            ceded[name] = a / total
    return JurisdictionResult(
        status=status,
        village_sqft=village * sqft,
        extraterritorial_sqft=etj * sqft,
        outside_sqft=outside * sqft,
        straddles=straddles,
        municipalities=munis,
        ceded_to=ceded,
        undetermined_sqft=unknown * sqft,
        reason=j.undetermined_reason if unknown / total >= SLIVER_SHARE else "",
    )
