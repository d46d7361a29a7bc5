"""Builders for small, real test inputs: layers folders and submissions in tmp dirs."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import rasterio
import shapely
from affine import Affine

from georeview.units import M_PER_FT

DEERFIELD = "Deerfield"


#: The small real data the tests read, shipped in the repository (tests/data/README.md gives
#: each file's source, licence and cut; tests/data/make_test_data.py rebuilds them). A test
#: that needs real data reads it from here, never from ../shared, so a fresh clone runs it.
REAL_DATA = Path(__file__).resolve().parent / "data"
CAMBRIDGE = REAL_DATA / "ma_cambridge"  # City of Cambridge GIS, ODC PDDL 1.0
CAMBRIDGE_PARCELS = CAMBRIDGE / "ASSESSING_ParcelsFY2014.gpkg"
CENTRAL_SANDS = REAL_DATA / "wi_central_sands"  # USGS modflow-setup test data, public domain
DANE = REAL_DATA / "wi_dane"  # Wisconsin LTSB municipal boundaries, January 2025


def write_dem(
    path: Path,
    z: np.ndarray,
    *,
    res: float | tuple[float, float] = 1.0,
    origin: tuple[float, float] = (500_000.0, 300_000.0),
    crs: str | None = "EPSG:3071",
    nodata: float | None = None,
) -> Path:
    """Write a north-up GeoTIFF DEM (``origin`` = upper-left corner, ``res`` x or (x, y))."""
    rx, ry = (res, res) if isinstance(res, (int, float)) else res
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        height=z.shape[0],
        width=z.shape[1],
        count=1,
        dtype=z.dtype,
        crs=crs,
        transform=Affine(rx, 0.0, origin[0], 0.0, -ry, origin[1]),
        nodata=nodata,
    ) as ds:
        ds.write(z, 1)
    return path


def dane_munis() -> gpd.GeoDataFrame:
    """The real Dane County municipalities within 12 km of Deerfield (WI LTSB, Jan 2025),
    repaired, in EPSG:3071."""
    g = gpd.read_file(DANE / "deerfield_area_munis.gpkg")
    g["geometry"] = g.geometry.make_valid()
    return g.to_crs(3071)


def deerfield_layers(folder: Path) -> Path:
    """Write a layers folder with the real Deerfield limit and its neighbours only."""
    folder.mkdir(parents=True, exist_ok=True)
    g = dane_munis()
    village = g[(g.MCD_NAME == DEERFIELD) & (g.CTV == "V")]
    village.to_file(folder / "boundary.gpkg")
    g.drop(village.index).to_file(folder / "neighbors.gpkg")
    (folder / "layers.toml").write_text(
        'municipality = "deerfield"\nvillage_name = "Village of Deerfield"\n'
        '[boundary]\npath = "boundary.gpkg"\n'
        '[neighbors]\npath = "neighbors.gpkg"\nkind_field = "CTV"\nname_field = "MCD_NAME"\n'
        'city_class = { "Madison" = 2 }\n'
    )
    return folder


def box_ft(cx: float, cy: float, width_ft: float, height_ft: float) -> shapely.Polygon:
    """A rectangle centred on (cx, cy) in EPSG:3071 metres, sized in international feet."""
    w = width_ft * M_PER_FT / 2
    h = height_ft * M_PER_FT / 2
    return shapely.box(cx - w, cy - h, cx + w, cy + h)


def write_submission(
    folder: Path,
    site: shapely.Geometry,
    *,
    toml: str,
    crs: int | str = 3071,
    disturbance: shapely.Geometry | None = None,
    site_name: str = "site.geojson",
) -> Path:
    """Write submission.toml (``toml`` body after municipality/site lines) and geometry."""
    folder.mkdir(parents=True, exist_ok=True)
    gpd.GeoDataFrame({"name": ["site"]}, geometry=[site], crs=crs).to_file(folder / site_name)
    head = f'site = "{site_name}"\n'
    if disturbance is not None:
        gpd.GeoDataFrame(geometry=[disturbance], crs=crs).to_file(folder / "disturbance.geojson")
        head += 'disturbance = "disturbance.geojson"\n'
    # TOML needs top-level keys before the first table.
    lines = toml.strip().splitlines()
    first_table = next((i for i, ln in enumerate(lines) if ln.startswith("[")), len(lines))
    body = "\n".join(lines[:first_table]) + "\n" + head + "\n".join(lines[first_table:]) + "\n"
    (folder / "submission.toml").write_text(body)
    return folder


def cambridge_layers(folder: Path, *, resources: bool = True) -> Path:
    """A layers folder for the real Cambridge, MA data (Deerfield's rules as a stand-in).

    The city limit plays the village; FEMA's 1 % floodplain (NFHL fields in lower case)
    and the city's wetlands are the resource layers when ``resources`` is true.
    """
    folder.mkdir(parents=True, exist_ok=True)
    text = (
        'municipality = "deerfield"  # Deerfield rules as a stand-in\n'
        'village_name = "Cambridge"\n'
        "trusted = true  # the layer files are the shared data, outside this folder\n"
        'working_crs = "EPSG:26986"  # NAD83 Massachusetts Mainland, metres\n'
        f'[boundary]\npath = "{CAMBRIDGE / "BOUNDARY_CityBoundary.geojson"}"\n'
    )
    if resources:
        text += (
            f'[floodplain]\npath = "{CAMBRIDGE / "FEMA_FloodPlains100Year.geojson"}"\n'
            'zone_field = "fld_zone"\nsubtype_field = "zone_subty"\nsfha_field = "sfha_tf"\n'
            f'[wetlands]\npath = "{CAMBRIDGE / "HYDRO_Wetlands.geojson"}"\n'
        )
    (folder / "layers.toml").write_text(text)
    return folder


def shipped_municipalities() -> list[str]:
    """The municipalities shipped in the package (their ordinance folders), sorted."""
    from georeview.ordinances import MAIN_FILE, search_path

    shipped = search_path({})[-1]
    return sorted(p.name for p in shipped.iterdir() if (p / MAIN_FILE).is_file())
