"""Builders for the map/report tests: a Deerfield review with every map layer kind.

The village limit and neighbours are the real Dane County municipalities (via
``_build.deerfield_layers``); wetlands, floodplain, waters and soils are small
hand-made layers laid around the site so that each one is in view, and the
terrain layers (contours, steep slopes, downstream path) are added to
``map_layers`` the way the terrain stage will.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import geopandas as gpd
import shapely
from _build import box_ft, deerfield_layers, write_submission

from georeview.pipeline.result import Review
from georeview.pipeline.review import review

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
XSS = ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>')
EVIL = XSS[0] + XSS[1]

TOML = """
municipality = "deerfield"
name = "{name}"
applicant = "{applicant}"
description = "{description}"
[activity]
kinds = ["building", "grading"]
fill_cubic_yards = 450
pipe_length_ft = 0
on_platted_lot = false
"""


def _toml_str(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def add_reference_layers(folder: Path, centre: shapely.Point, *, attr: str = "") -> None:
    """Write wetlands, floodplain, hydrography and soils around ``centre`` (EPSG:3071)."""
    cx, cy = centre.x, centre.y
    crs = 3071
    gpd.GeoDataFrame(
        {"WETCODE": ["E1K" + attr], "WETCLASS": ["emergent"], "WWI_ID": [1]},
        geometry=[box_ft(cx + 150, cy + 40, 120, 90)],
        crs=crs,
    ).to_file(folder / "wetlands.gpkg")
    gpd.GeoDataFrame(
        {
            "FLD_ZONE": ["AE", "AE"],
            "ZONE_SUBTY": ["FLOODWAY", None],
            "SFHA_TF": ["T", "T"],
            "STATIC_BFE": [-9999.0, 812.0],
        },
        geometry=[box_ft(cx - 200, cy - 180, 100, 400), box_ft(cx - 200, cy - 180, 300, 500)],
        crs=crs,
    ).to_file(folder / "floodplain.gpkg")
    gpd.GeoDataFrame(
        {"GNIS_NAME": ["Koshkonong Creek" + attr], "FType": [460]},
        geometry=[shapely.LineString([(cx - 300, cy - 500), (cx - 60, cy + 500)])],
        crs=crs,
    ).to_file(folder / "hydrography.gpkg")
    gpd.GeoDataFrame(
        {
            "MUSYM": ["PnB" + attr, "KeA"],
            "muname": ["Plano silt loam", "Kegonsa silt loam"],
            "hydgrpdcd": ["B", "B"],
            "kffact": ["0.37", "0.32"],
        },
        geometry=[box_ft(cx - 400, cy, 800, 1200), box_ft(cx + 400, cy, 800, 1200)],
        crs=crs,
    ).to_file(folder / "soils.gpkg")
    text = (folder / "layers.toml").read_text()
    text += (
        '[wetlands]\npath = "wetlands.gpkg"\n'
        '[floodplain]\npath = "floodplain.gpkg"\n'
        '[hydrography]\npath = "hydrography.gpkg"\nname_field = "GNIS_NAME"\n'
        '[soils]\npath = "soils.gpkg"\n'
    )
    (folder / "layers.toml").write_text(text)


def build_layers(folder: Path, *, attr: str = "") -> tuple[Path, shapely.Point]:
    """A Deerfield layers folder with every vector layer; returns it and a site centre."""
    deerfield_layers(folder)
    village = gpd.read_file(folder / "boundary.gpkg").to_crs(3071).geometry.iloc[0]
    centre = shapely.point_on_surface(village)
    add_reference_layers(folder, centre, attr=attr)
    return folder, centre


def terrain_layers(centre: shapely.Point, *, attr: str = "") -> dict[str, gpd.GeoDataFrame]:
    """Contours, steep slopes and a downstream path the way the terrain stage makes them."""
    cx, cy = centre.x, centre.y
    contours = gpd.GeoDataFrame(
        {"elev_ft": [850.0 + 2 * i for i in range(6)]},
        geometry=[
            shapely.LineString([(cx - 200, cy - 150 + 25 * i), (cx + 200, cy - 140 + 25 * i)])
            for i in range(6)
        ],
        crs=3071,
    )
    steep = gpd.GeoDataFrame(
        {"slope_class": ["20 % or more" + attr]},
        geometry=[box_ft(cx + 30, cy + 30, 60, 40)],
        crs=3071,
    )
    downstream = gpd.GeoDataFrame(
        {"receiving_feature": ["Koshkonong Creek" + attr], "distance_ft": [410.0]},
        geometry=[shapely.LineString([(cx, cy), (cx - 60, cy - 40), (cx - 120, cy - 60)])],
        crs=3071,
    )
    return {"contours": contours, "steep_slopes": steep, "downstream": downstream}


def make_review(
    tmp: Path,
    *,
    evil: bool = False,
    folder_name: str = "submission",
) -> Review:
    """A full Deerfield review of a 200 ft x 150 ft site (with hostile text when ``evil``)."""
    attr = EVIL if evil else ""
    layers, centre = build_layers(tmp / "layers" / "deerfield", attr=attr)
    toml = TOML.format(
        name=_toml_str("Test site" + attr),
        applicant=_toml_str("A. Applicant" + attr),
        description=_toml_str("Grading for a house" + attr),
    )
    site = box_ft(centre.x, centre.y, 200, 150)
    dist = box_ft(centre.x - 10, centre.y, 150, 120)
    # A file name cannot hold "/": the hostile site file name carries the attribute payload.
    site_name = f"site{XSS[1]}.geojson" if evil else "site.geojson"
    sub = write_submission(
        tmp / folder_name, site, toml=toml, disturbance=dist, site_name=site_name
    )
    # _build writes the file name unescaped; quote it for TOML.
    toml_path = sub / "submission.toml"
    toml_path.write_text(
        toml_path.read_text().replace(f'site = "{site_name}"', f'site = "{_toml_str(site_name)}"')
    )
    r = review(sub, layers)
    extra = terrain_layers(centre, attr=attr)
    return dataclasses.replace(r, map_layers={**r.map_layers, **extra})


def launch_browser(pw: object) -> object:
    """Launch Debian's chromium (never a downloaded browser) with the CI flags."""
    return pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)  # type: ignore[attr-defined]


class PageWatch:
    """Collect console errors, page errors, failed requests and dialogs of a page."""

    def __init__(self, page: object) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        page.on("console", self._console)  # type: ignore[attr-defined]
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))  # type: ignore[attr-defined]
        page.on("requestfailed", lambda r: self.errors.append(f"requestfailed: {r.url[:100]}"))  # type: ignore[attr-defined]
        page.on("request", lambda r: self.requests.append(r.url))  # type: ignore[attr-defined]
        page.on("dialog", self._dialog)  # type: ignore[attr-defined]

    def _console(self, msg: object) -> None:
        if msg.type in ("error", "warning"):  # type: ignore[attr-defined]
            self.errors.append(f"console {msg.type}: {msg.text}")  # type: ignore[attr-defined]

    def _dialog(self, dialog: object) -> None:
        self.dialogs.append(dialog.message)  # type: ignore[attr-defined]
        dialog.dismiss()  # type: ignore[attr-defined]

    def network(self) -> list[str]:
        """Requests that left the machine (anything but file:, data:, about:)."""
        return [u for u in self.requests if not u.startswith(("file:", "data:", "about:"))]
