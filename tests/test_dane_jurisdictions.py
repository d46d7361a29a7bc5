"""Every village and city of the real Dane County file builds, jurisdictions and all.

The LTSB municipal boundaries of Dane County (January 2025, tests/data/wi_dane, all 60:
8 cities, 20 villages, 32 towns) through ``layers build`` for each of the 28 incorporated
municipalities, with Deerfield's ordinance (its ``etj_miles``: 1.5 mi for a village). The
build computes the extraterritorial area and the equidistant lines itself; before
``measure.jurisdiction`` cut its overlays to polygons, Waunakee failed there with GEOS's
"Unable to determine overlay result geometry dimension". About 90 s in all on 2 shared
cores (Madison, with nine neighbours taking part of its zone, is a quarter of it).

The build treats a city as the review does (a review's municipality is a village: 1.5 mi);
the checks below hold for whatever reach it uses.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely
from _build import DANE

from georeview.load import load_layers
from georeview.load.build import build_layers
from georeview.load.downloads import Download
from georeview.pipeline.jurisdictions import jurisdictions_for

MUNIS = DANE / "dane_county_munis.gpkg"
MILE_M = 1609.344  # international mile, exact
#: Class of each Dane city (tests/data/README.md: Madison published, the others by the
#: 2020 population; the class only sets the reach).
DANE_CITY_CLASSES = {
    "Madison": 2, "Sun Prairie": 3, "Fitchburg": 3, "Middleton": 3, "Verona": 3,
    "Stoughton": 3, "Monona": 4, "Edgerton": 4,
}  # fmt: skip


def _dane() -> gpd.GeoDataFrame:
    g = gpd.read_file(MUNIS).to_crs(3071)
    g["geometry"] = g.geometry.make_valid()
    return g


INCORPORATED = [
    (n, k) for n, k in sorted(zip(*(gpd.read_file(MUNIS, ignore_geometry=True)[c]
                                     for c in ("MCD_NAME", "CTV")), strict=True))
    if k in ("V", "C")
]  # fmt: skip


def test_the_file_holds_20_villages_and_8_cities() -> None:
    kinds = gpd.read_file(MUNIS, ignore_geometry=True)["CTV"].value_counts().to_dict()
    assert kinds == {"T": 32, "V": 20, "C": 8}
    assert sorted(n for n, k in INCORPORATED if k == "C") == sorted(DANE_CITY_CLASSES)


@pytest.fixture(scope="module")
def dane() -> gpd.GeoDataFrame:
    return _dane()


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kind"), INCORPORATED, ids=[n for n, _ in INCORPORATED])
def test_every_municipality_builds_its_jurisdictions(
    name: str, kind: str, dane: gpd.GeoDataFrame, tmp_path: Path
) -> None:
    out = tmp_path / name
    prov = build_layers(out, municipality="deerfield", name=name, kind=kind,
                        boundaries=Download(MUNIS), city_class=DANE_CITY_CLASSES)  # fmt: skip
    j = jurisdictions_for(load_layers(out))  # the build's own result, from the cache
    village = j.village.geometry
    etj = j.extraterritorial
    for geom in (etj, *j.ceded.values()):
        assert shapely.get_type_id(geom) in (3, 6)  # polygons only
        assert shapely.is_valid(geom)
    # Wis. Stat. § 236.02(5): extraterritorial land is unincorporated, outside the
    # village, within its reach. Checked against the file read here, not the build's.
    incorporated = dane[dane.CTV.isin(["C", "V"])].geometry.union_all()
    assert shapely.area(shapely.intersection(etj, incorporated)) < 1.0  # m²
    reach_m = j.village.reach_m
    verts = shapely.points(shapely.get_coordinates(etj))
    if len(verts):
        # the buffer's vertices lie on the circle; the overlays that cut it to the towns
        # move vertices by centimetres (up to 7.1 cm measured: Fitchburg)
        assert shapely.distance(verts, village).max() <= reach_m + 0.25  # m
    # § 66.0105: a part ceded to a neighbour is nearer it than the village (10 m
    # sampling places the line within centimetres), and is no longer the village's
    for other, part in j.ceded.items():
        assert shapely.area(shapely.intersection(part, etj)) < 1.0
        # probed inside each piece, half a metre in from its edge: a piece's own
        # point_on_surface may be a vertex at the tip of a spike a few cm wide left by the
        # overlays (Deforest's 378 m² piece ceded to Madison has one)
        cores = shapely.buffer(shapely.get_parts(part), -0.5)
        probes = shapely.point_on_surface(cores[~shapely.is_empty(cores)])
        theirs = dane[other == dane.MCD_NAME].geometry.union_all()
        assert np.all(shapely.distance(probes, theirs) <= shapely.distance(probes, village) + 0.05)
    assert prov["jurisdictions"]["extraterritorial_acres"] == pytest.approx(
        shapely.area(etj) / 4046.8564224, abs=0.05  # 1 acre = 4,046.8564224 m², exact
    )


def test_marshall_zone_is_its_whole_one_and_a_half_miles(tmp_path: Path) -> None:
    # Hand-checkable: no city or village lies within 3 mi of the Village of Marshall and
    # its 1.5-mile zone lies in Dane towns, so its extraterritorial area is the whole
    # zone: the village grown by 2,414.016 m, less the village. Computed here with
    # 128 segments a quarter circle (the build uses 32: its chords cut about
    # pi r^2 (2 pi / 128)^2 / 6 = 7,300 m² per separate part, 0.016 % of the zone).
    dane = _dane()
    v = dane[(dane.MCD_NAME == "Marshall") & (dane.CTV == "V")].geometry.union_all()
    others = dane[dane.CTV.isin(["C", "V"]) & (dane.MCD_NAME != "Marshall")]
    assert others.distance(v).min() > 3 * MILE_M
    zone = shapely.difference(shapely.buffer(v, 1.5 * MILE_M, quad_segs=128), v)
    prov = build_layers(tmp_path / "m", municipality="deerfield", name="Marshall", kind="V",
                        boundaries=Download(MUNIS), city_class=DANE_CITY_CLASSES)  # fmt: skip
    j = jurisdictions_for(load_layers(tmp_path / "m"))
    assert j.ceded == {}
    assert shapely.area(j.extraterritorial) == pytest.approx(shapely.area(zone), rel=5e-4)
    assert prov["jurisdictions"]["ceded_acres"] == {}
