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


# --------------------------------------------------------------------------- screening


#: A bow-tie (self-intersecting) parcel: two triangles of base 100 m and height 50 m,
#: 2 x (100 x 50 / 2) = 5,000 sq m once repaired (the shoelace formula gives it 0).
BOWTIE = shapely.Polygon(
    [(X0 + 10, Y0 + 10), (X0 + 110, Y0 + 110), (X0 + 110, Y0 + 10), (X0 + 10, Y0 + 110)]
)
BOWTIE_SQM = 5_000.0
#: Parcel ids as text: a Dane County PIN with its leading zero, and text a spreadsheet
#: would take for a formula (OWASP "CSV injection": = + - @).
IDS = ["080923191010", '=HYPERLINK("http://x","y")', "-3", "@SUM(A1)"]


@pytest.fixture(scope="module")
def village(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("office_layers")
    v = shapely.box(X0, Y0, X0 + 600, Y0 + 600)
    town = shapely.box(X0 - 5000, Y0 - 5000, X0 + 6000, Y0 + 6000).difference(v)
    gpd.GeoDataFrame({"n": [0]}, geometry=[v], crs=3071).to_file(d / "boundary.gpkg")
    gpd.GeoDataFrame(
        {"CTV": ["T"], "MCD_NAME": ["Town of Test"]}, geometry=[town], crs=3071
    ).to_file(d / "neighbors.gpkg")
    (d / "layers.toml").write_text(
        'municipality = "deerfield"\nvillage_name = "Testville"\n'
        '[boundary]\npath = "boundary.gpkg"\n[neighbors]\npath = "neighbors.gpkg"\n'
    )
    return d


@pytest.fixture(scope="module")
def parcels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("office_parcels") / "parcels.gpkg"
    geoms = [
        shapely.box(X0 + 200, Y0 + 200, X0 + 300, Y0 + 300),
        BOWTIE,
        shapely.box(X0 + 550, Y0 + 50, X0 + 650, Y0 + 150),  # half in the village
        shapely.box(X0 + 100, Y0 + 400, X0 + 150, Y0 + 450),
    ]
    gpd.GeoDataFrame(
        {"PARCELID": IDS, "OWNER": ["A", "B", "C", "+D"]}, geometry=geoms, crs=3071
    ).to_file(p)
    return p


def _screen(parcels: Path, village: Path, out: Path, *extra: str) -> int:
    return main(["screen", str(parcels), "--layers", str(village), "--out", str(out), "-q", *extra])


def test_screen_xlsx_as_excel_reads_it(parcels: Path, village: Path, tmp_path: Path) -> None:
    from openpyxl import load_workbook

    out = tmp_path / "screened.xlsx"
    assert _screen(parcels, village, out) == 0
    wb = load_workbook(out)
    assert wb.sheetnames == ["parcels", "columns"]
    ws = wb["parcels"]
    rows = list(ws.iter_rows())
    header = [c.value for c in rows[0]]
    assert {"Parcel ID", "Area (sq ft)", "Share in village (0-1)", "Status"} <= set(header)
    col = {h: i for i, h in enumerate(header)}
    body = rows[1:]
    assert len(body) == 4
    ids = [r[col["Parcel ID"]] for r in body]
    # ids are text cells, the leading zero kept; formula-looking text is text, not a formula
    assert [c.value for c in ids] == IDS
    assert {c.data_type for c in ids} == {"s"}
    assert [r[col["PARCELID"]].value for r in body] == IDS
    assert all(c.data_type != "f" for r in rows for c in r)
    # numbers are numbers: the first parcel is 100 m x 100 m = 107,639.1 sq ft (0.3048 m/ft)
    area = body[0][col["Area (sq ft)"]]
    assert area.data_type == "n"
    assert area.value == pytest.approx(10_000 / 0.3048**2, abs=0.05)
    assert body[2][col["Share in village (0-1)"]].value == 0.5
    assert isinstance(body[0][col["Input row"]].value, int)
    # header frozen, autofilter over every row, widths set
    assert ws.freeze_panes == "A2"
    assert ws.auto_filter.ref == f"A1:{rows[0][-1].column_letter}5"
    assert ws.column_dimensions["A"].width >= len("PARCELID")
    # the columns sheet maps each header to its machine name
    legend = {r[0].value: r[1].value for r in wb["columns"].iter_rows(min_row=2)}
    assert legend["Area (sq ft)"] == "area_sqft"
    assert legend["Parcel ID"] == "parcel_id"
    assert legend["PARCELID"] == "PARCELID"


def test_xlsx_refuses_more_rows_than_a_sheet_holds(
    parcels: Path, village: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import georeview.report.xlsx as xlsx

    monkeypatch.setattr(xlsx, "EXCEL_MAX_ROWS", 4)  # 3 rows below the header; 4 parcels
    out = tmp_path / "screened.xlsx"
    assert _screen(parcels, village, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "do not fit an Excel sheet" in err
    assert "screened.xlsx" in err
    assert not out.exists()
    assert not list(tmp_path.glob(".*"))


def test_repaired_parcel_is_written_with_its_repaired_geometry(
    parcels: Path, village: Path, tmp_path: Path
) -> None:
    out = tmp_path / "screened.gpkg"
    assert _screen(parcels, village, out) == 0
    g = gpd.read_file(out)
    assert g["status"].tolist() == ["ok", "repaired", "ok", "ok"]
    assert g.geometry.is_valid.all()  # the bow-tie was written invalid, area 0
    assert g.geometry.area[1] == pytest.approx(BOWTIE_SQM, rel=1e-9)
    assert g["area_sqft"][1] == pytest.approx(BOWTIE_SQM / 0.3048**2, abs=0.05)


def test_screen_outputs_round_areas_and_shares(
    parcels: Path, village: Path, tmp_path: Path
) -> None:
    import csv

    out = tmp_path / "screened.csv"
    assert _screen(parcels, village, out) == 0
    with out.open(encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))

    def decimals(text: str) -> int:
        return len(text.partition(".")[2])

    for r in rows:
        for col in ("share_village", "share_extraterritorial", "share_outside"):
            assert decimals(r[col]) <= 4, (col, r[col])
            assert 0.0 <= float(r[col]) <= 1.0
        for col in ("area_sqft", "disturbed_sqft"):
            assert decimals(r[col]) <= 1, (col, r[col])
    # 100 m x 100 m / 0.3048**2 = 107,639.104 sq ft -> 107639.1
    assert rows[0]["area_sqft"] == "107639.1"


def test_decimals_table_clips_and_rounds_shares() -> None:
    import pandas as pd

    from georeview.report.decimals import decimals_for, round_frame

    # the share, a remainder below 0, and a share to round
    frame = pd.DataFrame(
        {
            "share_village": [1.0000000000000873, -2e-17, 0.123456],
            "area_sqft": [1234.5678, 0.04, 2.0],
            "site_area_acres": [0.66716, 0.0, 1.0],
            "OWNER_sqft": [1.23456, 0.0, 0.0],  # an input column: not georeview's, kept
        }
    )
    out = round_frame(frame, ["share_village", "area_sqft", "site_area_acres"])
    assert out["share_village"].tolist() == [1.0, 0.0, 0.1235]
    assert str(out["share_village"][1]) == "0.0"  # not -0.0
    assert out["area_sqft"].tolist() == [1234.6, 0.0, 2.0]
    assert out["site_area_acres"].tolist() == [0.667, 0.0, 1.0]
    assert out["OWNER_sqft"].tolist() == [1.23456, 0.0, 0.0]
    assert frame["share_village"][0] == 1.0000000000000873  # the input is not changed
    assert [decimals_for(c) for c in ("share", "share_outside", "wetland_sqft", "x")] == [
        4,
        4,
        1,
        None,
    ]


def test_screen_outputs_have_a_normal_files_mode(
    parcels: Path, village: Path, tmp_path: Path
) -> None:
    written = []
    with umask(0o022):
        for suffix in (".csv", ".xlsx", ".gpkg", ".parquet", ".fgb", ".geojson", ".shp"):
            out = tmp_path / f"screened{suffix}"
            assert _screen(parcels, village, out) == 0
            written.append(out)
        index = tmp_path / "index.html"
        assert _screen(parcels, village, tmp_path / "again.csv", "--index", str(index)) == 0
    files = sorted(p for p in tmp_path.iterdir() if p.is_file())
    assert len(files) >= len(written) + 2
    assert {p.name: oct(_mode(p)) for p in files} == {p.name: "0o644" for p in files}


# --------------------------------------------------------------------------- batch


def test_batch_writes_summary_xlsx_and_reports_progress(tmp_path: Path) -> None:
    import shutil

    from openpyxl import load_workbook

    from georeview.pipeline.batch import review_many

    batch = tmp_path / "batch"
    for name in ("deerfield_minor_home", "deerfield_small_patio"):
        shutil.copytree(REPO / "sample_sites" / name, batch / f"0{name}")
    ticks: list[tuple[int, int]] = []
    with umask(0o022):
        res = review_many(batch, tmp_path / "out", on_submission=lambda d, t: ticks.append((d, t)))
    assert ticks == [(0, 2), (1, 2), (2, 2)]
    path = tmp_path / "out" / "summary.xlsx"
    assert oct(_mode(path)) == "0o644"
    wb = load_workbook(path)
    ws = wb["summary"]
    rows = list(ws.iter_rows(values_only=False))
    header = [c.value for c in rows[0]]
    assert header[:2] == ["Name", "Source"]
    assert "Site area (sq ft)" in header
    names = [r[0] for r in rows[1:]]
    # the folder names start with a zero: text cells keep it
    assert [c.value for c in names] == [r["name"] for r in res.rows]
    assert all(c.value.startswith("0") and c.data_type == "s" for c in names)
    area = rows[1][header.index("Site area (sq ft)")]
    assert area.data_type == "n"
    assert area.value > 0
    legend = {r[0].value: r[1].value for r in wb["columns"].iter_rows(min_row=2)}
    assert legend["Site area (sq ft)"] == "site_area_sqft"


def test_batch_review_ends_with_its_outcomes(tmp_path: Path, capsys) -> None:
    import shutil

    batch = tmp_path / "batch"
    shutil.copytree(SAMPLE, batch / SAMPLE.name)
    out = tmp_path / "out"
    assert main(["review", str(batch), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith("batch: 1 submissions, 1 reviewed, 0 errors")
    # the sample home site's open findings are the Village's own (31.06(4) master-plan areas
    # and the Board's referral): the applicant owes nothing, "awaiting the Village"
    assert lines[1] == "  outcome: awaiting the Village 1"
    assert f"  wrote {out / 'summary.xlsx'}" in lines
    # off a terminal (pytest captures stderr) no progress bar is drawn
    assert captured.err == ""
