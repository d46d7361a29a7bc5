"""Outputs as office and GIS tools open them (issue 28, item 4).

Each output is read the way its target tool reads it, not through georeview:

* GeoPackage version through SQLite, as a GIS checks it before anything else: the
  ``application_id`` is 0x47504B47 ("GPKG") and ``user_version`` 10300 for version 1.3
  (OGC 12-128r15, §1.1.1.1.1, Req. 2; ArcGIS Pro 3.0-3.4 lists 1.0-1.3 only).
* QGIS's ``layer_styles`` table through SQLite, as QGIS's OGR provider queries it: one
  row per spatial layer with ``useAsDefault``, its QML parsed as XML with a
  ``renderer-v2`` element; the colours are the Okabe-Ito palette's (Okabe & Ito 2008:
  orange = 230,159,0; vermillion = 213,94,0), which the folium map uses.
* File modes through ``os.stat``: under umask 022, every output is 0644, the mode
  ``open()`` gives (0o666 & ~0o022).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import geopandas as gpd
import pytest
import shapely

from georeview.cli import main

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_sites" / "deerfield_minor_home"
X0, Y0 = 500_000.0, 300_000.0  # EPSG:3071, metres
#: "GPKG" as a big-endian 32-bit integer (OGC 12-128r15 Req. 2).
GPKG_APPLICATION_ID = 0x47504B47
#: GeoPackage 1.3.0 as SQLite's user_version (major * 10000 + minor * 100 + patch).
GPKG_13 = 10300


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _gpkg_version(path: Path) -> tuple[int, int]:
    with sqlite3.connect(path) as db:
        app = db.execute("PRAGMA application_id").fetchone()[0]
        user = db.execute("PRAGMA user_version").fetchone()[0]
    return app, user


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample home site reviewed (terrain included) under umask 022."""
    out = tmp_path_factory.mktemp("office") / "review"
    with umask(0o022):
        assert main(["review", str(SAMPLE), "--out", str(out), "-q"]) == 0
    return out


# --------------------------------------------------------------------------- GeoPackage


def test_review_layers_gpkg_is_version_1_3(reviewed: Path) -> None:
    assert _gpkg_version(reviewed / "layers.gpkg") == (GPKG_APPLICATION_ID, GPKG_13)


def test_layers_build_writes_version_1_3(tmp_path: Path) -> None:
    from georeview.load.downloads import write_gpkg

    g = gpd.GeoDataFrame({"n": [1]}, geometry=[shapely.box(X0, Y0, X0 + 10, Y0 + 10)], crs=3071)
    path = tmp_path / "boundary.gpkg"
    write_gpkg(g, path, "boundary")
    write_gpkg(g, path, "more", append=True)
    assert _gpkg_version(path) == (GPKG_APPLICATION_ID, GPKG_13)


def test_review_layers_carry_qgis_default_styles(reviewed: Path) -> None:
    with sqlite3.connect(reviewed / "layers.gpkg") as db:
        contents = dict(db.execute("SELECT table_name, data_type FROM gpkg_contents").fetchall())
        spatial = {r[0] for r in db.execute("SELECT table_name FROM gpkg_geometry_columns")}
        columns = [r[1] for r in db.execute("PRAGMA table_info(layer_styles)")]
        rows = db.execute(
            "SELECT f_table_catalog, f_table_schema, f_table_name, f_geometry_column, styleQML"
            " FROM layer_styles WHERE useAsDefault"
        ).fetchall()
        geom_col = dict(db.execute("SELECT table_name, column_name FROM gpkg_geometry_columns"))
    # registered as a table without geometry, as QGIS and GDAL register it
    assert contents["layer_styles"] == "attributes"
    # QGIS's columns, in its order, after its integer key
    assert columns == [
        "id",
        "f_table_catalog",
        "f_table_schema",
        "f_table_name",
        "f_geometry_column",
        "styleName",
        "styleQML",
        "styleSLD",
        "useAsDefault",
        "description",
        "owner",
        "ui",
        "update_time",
    ]
    assert len(spatial) == 7
    # one default style per spatial layer, naming its geometry column
    assert sorted(r[2] for r in rows) == sorted(spatial)
    qml = {}
    for catalog, schema, table, column, text in rows:
        assert (catalog, schema) == ("", "")
        assert column == geom_col[table]
        root = ET.fromstring(text.split("\n", 1)[1])  # past the DOCTYPE line
        assert root.tag == "qgis"
        assert root.find("renderer-v2") is not None, table
        qml[table] = root

    def prop(root: ET.Element, key: str) -> list[str]:
        return [p.get("v", "") for p in root.iter("prop") if p.get("k") == key]

    # the map's colours: disturbance orange at the map's 30 % opacity (round(0.3 * 255) = 76),
    # steep slopes hatched (cross) in vermillion, the site outlined in black
    assert prop(qml["disturbance"], "color") == ["230,159,0,76"]
    assert prop(qml["steep_slopes"], "style") == ["diagonal_x"]
    assert prop(qml["steep_slopes"], "color") == ["213,94,0,255"]
    assert prop(qml["site"], "outline_color") == ["0,0,0,255"]
    assert qml["contours"].find("renderer-v2/symbols/symbol").get("type") == "line"
    assert qml["discharge_points"].find("renderer-v2/symbols/symbol").get("type") == "marker"
    # the jurisdiction pieces: one category per piece of the layer's ``piece`` column
    renderer = qml["jurisdiction"].find("renderer-v2")
    assert renderer.get("type") == "categorizedSymbol"
    assert renderer.get("attr") == "piece"
    values = {c.get("value") for c in renderer.iter("category")}
    assert {"village", "extraterritorial", "outside"} <= values


# --------------------------------------------------------------------------- file modes


def test_review_outputs_have_a_normal_files_mode(reviewed: Path) -> None:
    files = sorted(p for p in reviewed.iterdir() if p.is_file())
    assert {p.name for p in files} >= {"report.json", "report.html", "map.html", "layers.gpkg"}
    assert {p.name: oct(_mode(p)) for p in files} == {p.name: "0o644" for p in files}


def test_sitemap_sheet_has_a_normal_files_mode(tmp_path: Path) -> None:
    out = tmp_path / "sheet.pdf"
    with umask(0o022):
        assert main(["sitemap", str(SAMPLE), "--out", str(out), "-q"]) == 0
    assert oct(_mode(out)) == "0o644"  # was 0o600 (tempfile.mkstemp)


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
def test_atomic_writers_follow_the_umask(tmp_path: Path, mask: int) -> None:
    from georeview.report.files import atomic_path, write_atomic

    with umask(mask):
        a = write_atomic(tmp_path / "a.json", "{}")
        with atomic_path(tmp_path / "b.pdf") as tmp:
            tmp.write_bytes(b"%PDF")
    assert _mode(a) == 0o666 & ~mask
    assert _mode(tmp_path / "b.pdf") == 0o666 & ~mask
    assert not list(tmp_path.glob(".*.part"))


def test_atomic_path_leaves_nothing_when_the_writer_fails(tmp_path: Path) -> None:
    from georeview.errors import OutputError
    from georeview.report.files import atomic_path

    with pytest.raises(OutputError, match="cannot write"), atomic_path(tmp_path / "x.pdf") as tmp:
        raise OSError(28, "No space left on device", str(tmp))
    assert list(tmp_path.iterdir()) == []
