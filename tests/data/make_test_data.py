"""Cut the small real test data in ``tests/data/`` from the shared sample data.

Run from anywhere (rewrites ``tests/data/<source>/``; README.md there says what each file is)::

    python tests/data/make_test_data.py [--data ../shared/data] [--out tests/data]

Only permissively licensed sources are read (see ``../shared/data/SOURCES.md``):

- ``ma_cambridge/``: City of Cambridge GIS, ODC PDDL 1.0. Copied byte for byte.
- ``wi_dane/dane_county_munis.geojson``: Wisconsin LTSB municipal boundaries (January 2025).
  The municipalities within 12 km of the Village of Deerfield, whole and unchanged, and all
  60 of them as a GeoPackage.
- ``kml/``: the site and disturbance of ``sample_sites/deerfield_minor_home`` (georeview's
  own sample, MIT) written as Google Earth Pro saves a placemark (Document, Style, Folder,
  Placemark Polygon with altitudeMode and z = 0, a Point placemark beside), with the
  sample's coordinates unchanged.
- ``wi_central_sands/``: USGS ``DOI-USGS/modflow-setup`` test data, public domain / CC0 1.0.
  The Plainfield DEM re-compressed (same values, grid, CRS and dtype), its lakes as a
  GeoPackage, a window of the geographic Pleasant Lake DEM, and the Plainfield DEM warped to
  NAD83 / Wisconsin South (ftUS) with elevations in US survey feet (uint16), which stands in
  for a feet DEM in a feet CRS.

The Muncy, PA files (``pa_muncy/``, from the GPL-3.0 repository ``pches/FLOPIT``) and the
Kenosha bluff lines (no licence, unknown source) are never read here. Output is deterministic:
GeoPackage timestamps are pinned with GDAL's ``OGR_CURRENT_DATE``.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import rasterio
from rasterio.crs import CRS
from rasterio.transform import from_origin
from rasterio.warp import Resampling, reproject, transform_bounds
from rasterio.windows import Window, from_bounds

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[1] / "sample_sites" / "deerfield_minor_home"
DEFAULT_DATA = HERE.parents[2] / "shared" / "data"
PINNED_DATE = "2025-01-17T00:00:00Z"
#: Features of the Dane file kept: those within this distance of the Village of Deerfield.
#: 12 km holds every municipality whose extraterritorial area can meet Deerfield's (at most
#: 3 mi + 1.5 mi = 7.24 km, Wis. Stat. 236.02(5)) and the nearest second-class city, Madison.
DANE_KEEP_M = 12_000.0
#: The Pleasant Lake DEM window (lon/lat, EPSG:4269): the box the tests query, plus a margin.
PLEASANT_WINDOW_LONLAT = (-89.57, 43.94, -89.54, 43.97)
#: Source rows/columns of the Plainfield DEM warped to feet: its western hills (steep cells).
FT_SOURCE_WINDOW = Window(col_off=200, row_off=0, width=360, height=400)
FT_CRS = "EPSG:2289"  # NAD83 / Wisconsin South (ftUS): Waushara County's state plane zone
M_PER_US_FT = 1200.0 / 3937.0  # US survey foot (exact definition)
FT_RES = 10.0 / M_PER_US_FT  # the source's 10 m cell, in US survey feet (32.8083...)
#: Small layers read whole: an R-tree index would only add bytes.
NO_INDEX = {"SPATIAL_INDEX": "NO"}
GTIFF = {
    "driver": "GTiff",
    "compress": "deflate",
    "zlevel": 9,
    "tiled": True,
    "blockxsize": 256,
    "blockysize": 256,
}


def copy_cambridge(data: Path, out: Path) -> None:
    """Copy the four Cambridge files the tests read, unchanged."""
    out.mkdir(parents=True, exist_ok=True)
    for name in (
        "ASSESSING_ParcelsFY2014.gpkg",
        "BOUNDARY_CityBoundary.geojson",
        "FEMA_FloodPlains100Year.geojson",
        "HYDRO_Wetlands.geojson",
    ):
        shutil.copyfile(data / "ma_cambridge" / name, out / name)


def cut_dane(data: Path, out: Path) -> None:
    """Keep the Dane municipalities near Deerfield, whole, with their published geometry."""
    out.mkdir(parents=True, exist_ok=True)
    g = gpd.read_file(data / "wi_dane" / "dane_county_munis.geojson")
    # Distances in a projected CRS on repaired copies; the file keeps the original geometry.
    valid = g.geometry.make_valid().to_crs(3071)
    village = valid[(g["MCD_NAME"] == "Deerfield") & (g["CTV"] == "V")].iloc[0]
    keep = g[valid.distance(village) <= DANE_KEEP_M].reset_index(drop=True)
    path = out / "deerfield_area_munis.gpkg"
    path.unlink(missing_ok=True)
    pyogrio.write_dataframe(
        keep, path, layer="dane_county_munis", driver="GPKG", layer_options=NO_INDEX
    )


def copy_dane_all(data: Path, out: Path) -> None:
    """All 60 Dane municipalities as published, as a GeoPackage (same geometry, attributes)."""
    out.mkdir(parents=True, exist_ok=True)
    g = gpd.read_file(data / "wi_dane" / "dane_county_munis.geojson")
    path = out / "dane_county_munis.gpkg"
    path.unlink(missing_ok=True)
    pyogrio.write_dataframe(
        g, path, layer="dane_county_munis", driver="GPKG", layer_options=NO_INDEX
    )


def _write_tif(path: Path, z: np.ndarray, profile: dict, tags: dict) -> None:
    path.unlink(missing_ok=True)
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(z, 1)
        dst.update_tags(**tags)


def cut_central_sands(data: Path, out: Path) -> None:
    """Plainfield DEM (re-compressed), its lakes, the Pleasant window and the feet DEM."""
    out.mkdir(parents=True, exist_ok=True)
    src_dir = data / "wi_central_sands"
    with rasterio.open(src_dir / "plainfieldlakes_dem10m.tif") as src:
        z = src.read(1)
        profile = {**src.profile, **GTIFF, "predictor": 3}
        tags = src.tags()
        src_crs, nodata = src.crs, src.nodata
        sub = src.read(1, window=FT_SOURCE_WINDOW)
        sub_tf = src.window_transform(FT_SOURCE_WINDOW)
        sub_bounds = src.window_bounds(FT_SOURCE_WINDOW)
    _write_tif(out / "plainfieldlakes_dem10m.tif", z, profile, tags)

    lakes = gpd.read_file(src_dir / "plainfieldlakes_all_lakes.shp")
    path = out / "plainfieldlakes_all_lakes.gpkg"
    path.unlink(missing_ok=True)
    pyogrio.write_dataframe(lakes, path, layer="all_lakes", driver="GPKG", layer_options=NO_INDEX)

    with rasterio.open(src_dir / "pleasant_dem40m.tif") as src:
        win = from_bounds(*PLEASANT_WINDOW_LONLAT, transform=src.transform)
        win = win.round_offsets().round_lengths()
        zp = src.read(1, window=win)
        profile = {
            **src.profile,
            **GTIFF,
            "predictor": 3,
            "height": zp.shape[0],
            "width": zp.shape[1],
            "transform": src.window_transform(win),
            "tiled": False,
        }
        profile.pop("blockxsize")
        profile.pop("blockysize")
        _write_tif(out / "pleasant_dem40m_clip.tif", zp, profile, src.tags())

    # The feet DEM: bilinear warp onto a 10 m (32.808 ftUS) grid set 5 cells inside the source
    # window (the two grids are rotated by well under a degree here), so every cell has a value
    # (no nodata, like a DEM delivered in feet); then metres to US survey feet, rounded to
    # whole feet, as uint16.
    left, bottom, right, top = transform_bounds(src_crs, FT_CRS, *sub_bounds)
    x0 = np.ceil((left + 5 * FT_RES) / 100.0) * 100.0
    y0 = np.floor((top - 5 * FT_RES) / 100.0) * 100.0
    width = int((right - 5 * FT_RES - x0) // FT_RES)
    height = int((y0 - (bottom + 5 * FT_RES)) // FT_RES)
    dst_tf = from_origin(x0, y0, FT_RES, FT_RES)
    z_m = np.full((height, width), np.nan, np.float64)
    reproject(
        sub.astype(np.float64),
        z_m,
        src_transform=sub_tf,
        src_crs=src_crs,
        src_nodata=nodata,
        dst_transform=dst_tf,
        dst_crs=CRS.from_user_input(FT_CRS),
        dst_nodata=np.nan,
        resampling=Resampling.bilinear,
    )
    if not np.isfinite(z_m).all():
        raise SystemExit("the feet DEM grid must lie inside the source window")
    z_ft = np.rint(z_m / M_PER_US_FT).astype(np.uint16)
    profile = {
        **GTIFF,
        "predictor": 2,
        "height": z_ft.shape[0],
        "width": z_ft.shape[1],
        "count": 1,
        "dtype": "uint16",
        "crs": FT_CRS,
        "transform": dst_tf,
        "nodata": None,
    }
    tags = {
        "SOURCE": "DOI-USGS/modflow-setup plainfieldlakes dem10m.tif (public domain), warped "
        "bilinear to EPSG:2289 by tests/data/make_test_data.py",
        "VERTICAL_UNITS": "us_ft",
    }
    _write_tif(out / "plainfield_dem_ftus_2289.tif", z_ft, profile, tags)


#: A placemark as Google Earth Pro 7.3 saves it ("Save Place As... .kml"): a Document
#: with its Style, a Folder, the Polygon (tessellate, altitudeMode, z = 0) and a pin.
GOOGLE_EARTH_KML = """<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2" \
xmlns:kml="http://www.opengis.net/kml/2.2" xmlns:atom="http://www.w3.org/2005/Atom">
<Document>
\t<name>{title}.kml</name>
\t<Style id="poly_site">
\t\t<LineStyle>
\t\t\t<color>ff0000ff</color>
\t\t\t<width>2</width>
\t\t</LineStyle>
\t\t<PolyStyle>
\t\t\t<color>4d0000ff</color>
\t\t</PolyStyle>
\t</Style>
\t<Folder>
\t\t<name>{title}</name>
\t\t<open>1</open>
\t\t<Placemark>
\t\t\t<name>{name}</name>
\t\t\t<styleUrl>#poly_site</styleUrl>
\t\t\t<Polygon>
\t\t\t\t<tessellate>1</tessellate>
\t\t\t\t<altitudeMode>clampToGround</altitudeMode>
\t\t\t\t<outerBoundaryIs>
\t\t\t\t\t<LinearRing>
\t\t\t\t\t\t<coordinates>
\t\t\t\t\t\t\t{coordinates}
\t\t\t\t\t\t</coordinates>
\t\t\t\t\t</LinearRing>
\t\t\t\t</outerBoundaryIs>
\t\t\t</Polygon>
\t\t</Placemark>
\t\t<Placemark>
\t\t\t<name>{pin}</name>
\t\t\t<Point>
\t\t\t\t<gx:drawOrder>1</gx:drawOrder>
\t\t\t\t<coordinates>{pin_xy},0</coordinates>
\t\t\t</Point>
\t\t</Placemark>
\t</Folder>
</Document>
</kml>
"""


def write_kml(samples: Path, out: Path) -> None:
    """The deerfield_minor_home site and disturbance as Google Earth KML files.

    The coordinates are the sample's GeoJSON numbers written unchanged (their shortest
    repr, 7 decimals), each with Google Earth's ``,0`` altitude; the pin is the ring's
    first vertex (the driveway corner), so the KML holds a Point placemark beside the
    Polygon as Google Earth users' files do.
    """
    out.mkdir(parents=True, exist_ok=True)
    for layer, pin in (("site", "Driveway entrance"), ("disturbance", "Stockpile")):
        feature = json.loads((samples / f"{layer}.geojson").read_text())["features"][0]
        ring = feature["geometry"]["coordinates"][0]
        text = GOOGLE_EARTH_KML.format(
            title="112 Main St",
            name=feature["properties"]["name"],
            coordinates=" ".join(f"{x!r},{y!r},0" for x, y in ring) + " ",
            pin=pin,
            pin_xy=f"{ring[0][0]!r},{ring[0][1]!r}",
        )
        (out / f"deerfield_minor_home_{layer}.kml").write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    """Rewrite every file under ``--out`` from ``--data``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="../shared/data")
    parser.add_argument("--out", type=Path, default=HERE, help="tests/data")
    args = parser.parse_args(argv)
    pyogrio.set_gdal_config_options({"OGR_CURRENT_DATE": PINNED_DATE})
    copy_cambridge(args.data, args.out / "ma_cambridge")
    cut_dane(args.data, args.out / "wi_dane")
    copy_dane_all(args.data, args.out / "wi_dane")
    cut_central_sands(args.data, args.out / "wi_central_sands")
    write_kml(SAMPLE, args.out / "kml")
    for cache in args.out.glob("*/*.aux.xml"):
        cache.unlink()


if __name__ == "__main__":
    main()
