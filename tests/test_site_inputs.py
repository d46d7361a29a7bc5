"""KML and KMZ sites, and CSV files whose CRS is in a ``.prj`` beside them (issue 28, item 4).

The reference is the shipped sample ``sample_sites/deerfield_minor_home`` (GeoJSON,
EPSG:4326, coordinates to 1e-7 degree). ``tests/data/kml/`` holds its site and disturbance
as Google Earth Pro saves a placemark (Document, Style, Folder, a Polygon with
``altitudeMode`` and z = 0, a Point placemark beside; made by
``tests/data/make_test_data.py``, ``write_kml``), with the sample's coordinates unchanged.
A review of the KML site (and of the disturbance zipped as a KMZ) must give the sample's
site and disturbed areas: the same coordinates make the same polygons, so the tolerance,
0.01 sq ft, only allows for a KML export that rounds coordinates past the 7th decimal
(1e-7 degree is about 1 cm; at 0.01 sq ft the polygons must agree to about 1e-9 degree).
Measured: 0.0 sq ft.

A CSV's CRS: GDAL's CSV driver reads the ``.prj`` beside a CSV (the GeoCSV convention);
georeview must read it as the same CRS GDAL does (``pyogrio.read_info``), screen a CSV +
.prj to the rows the GeoPackage of the same parcels gives, and refuse a .prj that disagrees
with ``--crs`` or that is not a CRS.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely
from _build import box_ft

from georeview.cli import main
from georeview.errors import CRSError
from georeview.load import load_submission
from georeview.load.vector import read_vector, vector_info
from georeview.pipeline.run import run_screen

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_sites" / "deerfield_minor_home"
LAYERS = ROOT / "layers" / "deerfield"
KML_DATA = Path(__file__).resolve().parent / "data" / "kml"
SITE_KML = KML_DATA / "deerfield_minor_home_site.kml"
DISTURBANCE_KML = KML_DATA / "deerfield_minor_home_disturbance.kml"
#: Site and disturbed areas of the sample agree to this, KML against GeoJSON (module doc).
AREA_TOL_SQFT = 0.01
#: A 1x1 PNG (the smallest valid file): the image a Google Earth KMZ carries in files/.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


def _run(*argv: object, capsys: pytest.CaptureFixture) -> tuple[int, str]:
    """Run the CLI in process; return (exit code, stderr)."""
    capsys.readouterr()
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def _one_line(err: str, *words: str) -> None:
    """stderr is one ``georeview: error:`` line, no traceback, holding every word."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("georeview: error: "), err
    assert "Traceback" not in err
    for w in words:
        assert w in lines[0], (w, err)


def _sample(tmp: Path, name: str, **files: str) -> Path:
    """The sample submission copied to ``tmp/name``, with ``site``/``disturbance`` renamed."""
    sub = tmp / name
    shutil.copytree(SAMPLE, sub)
    toml = (sub / "submission.toml").read_text()
    for key, file in files.items():
        toml = toml.replace(f'{key} = "{key}.geojson"', f'{key} = "{file}"')
    (sub / "submission.toml").write_text(toml)
    return sub


def _kmz(path: Path, entries: dict[str, bytes], **kw: object) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, **kw) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return path


def _review(sub: Path, out: Path, capsys: pytest.CaptureFixture) -> dict:
    code, err = _run(
        "review", sub, "--layers", LAYERS, "--out", out, "--no-terrain", "--no-map",
        capsys=capsys,
    )  # fmt: skip
    assert code == 0, err
    return json.loads((out / "report.json").read_text("utf-8"))


def _sqft(gdf: gpd.GeoDataFrame) -> float:
    """Area of a layer in EPSG:3071 (metres), in international square feet."""
    return float(shapely.area(shapely.union_all(gdf.geometry.values))) / 0.3048**2


# --------------------------------------------------------------------------- KML and KMZ


def test_kml_site_and_kmz_disturbance_review_as_the_geojson(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    ref = _review(SAMPLE, tmp_path / "out_geojson", capsys)
    sub = _sample(tmp_path, "kml", site="site.kml", disturbance="disturbance.kmz")
    shutil.copy(SITE_KML, sub / "site.kml")
    # a Google Earth KMZ: doc.kml at the top, the images it uses in files/
    _kmz(sub / "disturbance.kmz", {"doc.kml": DISTURBANCE_KML.read_bytes(), "files/pin.png": PNG})
    (sub / "site.geojson").unlink()
    (sub / "disturbance.geojson").unlink()
    rep = _review(sub, tmp_path / "out_kml", capsys)
    for key in ("site_area_sqft", "disturbed_area_sqft", "site_area_acres"):
        assert rep["measures"][key] == ref["measures"][key], key
    assert rep["jurisdiction"] == ref["jurisdiction"]
    assert [(f["rule_id"], f["status"]) for f in rep["findings"]] == [
        (f["rule_id"], f["status"]) for f in ref["findings"]
    ]
    # the pins beside the polygons are set aside, and the report says so
    notes = [w for w in rep["warnings"] if "ignored" in w]
    assert notes == [
        "site.kml: 1 point placemark ignored (pins, labels, paths: a site is an area); the"
        " site is the 1 polygon placemark(s) of folder '112 Main St'.",
        "disturbance.kmz: 1 point placemark ignored (pins, labels, paths: a disturbance is"
        " an area); the disturbance is the 1 polygon placemark(s) of folder '112 Main St'.",
    ]
    assert not [w for w in ref["warnings"] if "ignored" in w]
    # unrounded: the loaded polygons, in plan (z dropped), agree within the tolerance
    a, b = load_submission(SAMPLE), load_submission(sub)
    assert not b.site.geometry.has_z.any()
    assert abs(_sqft(a.site) - _sqft(b.site)) <= AREA_TOL_SQFT
    assert abs(_sqft(a.disturbance) - _sqft(b.disturbance)) <= AREA_TOL_SQFT
    assert _sqft(b.site) == pytest.approx(ref["measures"]["site_area_sqft"], abs=0.05)


def test_kml_reads_as_epsg_4326_and_screens(tmp_path: Path) -> None:
    """GDAL states EPSG:4326 for KML (OGC KML 2.2); a KML/KMZ is also a parcel file."""
    info = vector_info(SITE_KML)
    assert info.crs == "EPSG:4326"
    assert info.features == 2  # the polygon and the pin
    kmz = _kmz(tmp_path / "p.kmz", {"doc.kml": SITE_KML.read_bytes()})
    a, b = read_vector(SITE_KML), read_vector(kmz)
    assert list(shapely.to_wkb(a.geometry.values)) == list(shapely.to_wkb(b.geometry.values))
    out = tmp_path / "s.csv"
    run_screen(kmz, LAYERS, out)
    rows = pd.read_csv(out, keep_default_na=False)
    assert list(rows["status"]) == ["ok", "error"]  # the pin is not a parcel
    ref = load_submission(SAMPLE)
    assert float(rows.loc[0, "area_sqft"]) == pytest.approx(_sqft(ref.site), abs=0.05)


def _kml_text(*folders: tuple[str, list[str]]) -> str:
    """A KML whose Folders hold the given Placemark bodies."""
    body = "".join(
        f"<Folder><name>{name}</name>"
        + "".join(f"<Placemark>{p}</Placemark>" for p in marks)
        + "</Folder>"
        for name, marks in folders
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="http://www.opengis.net/kml/2.2">'
        f"<Document><name>d</name>{body}</Document></kml>\n"
    )


POLYGON = (
    "<Polygon><outerBoundaryIs><LinearRing><coordinates>-89.0732704,43.052584,0"
    " -89.0732622,43.0531242,0 -89.0738147,43.0531287,0 -89.0738229,43.0525885,0"
    " -89.0732704,43.052584,0</coordinates></LinearRing></outerBoundaryIs></Polygon>"
)
POINT = "<Point><coordinates>-89.0733,43.0527,0</coordinates></Point>"
LINE = "<LineString><coordinates>-89.0733,43.0527,0 -89.0734,43.0528,0</coordinates></LineString>"


def _refused_site(
    tmp_path: Path, capsys: pytest.CaptureFixture, name: str, write, *words: str
) -> None:
    sub = _sample(tmp_path, "sub", site=name)
    write(sub / name)
    code, err = _run(
        "review", sub, "--layers", LAYERS, "--out", tmp_path / "out", "--no-terrain",
        capsys=capsys,
    )  # fmt: skip
    assert code == 2, err
    _one_line(err, name, ": site: ", *words)
    assert not (tmp_path / "out" / "report.json").exists()


@pytest.mark.parametrize(
    ("folders", "words"),
    [
        ((("pins", [POINT, POINT, LINE]),), "holds no polygon (2 point and 1 line placemarks)"),
        ((), "holds no polygon (no placemarks)"),  # an empty Document: GDAL lists no layer
    ],
)
def test_kml_without_polygon_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture, folders: tuple, words: str
) -> None:
    def write(p: Path) -> None:
        p.write_text(_kml_text(*folders))

    _refused_site(tmp_path, capsys, "site.kml", write, words)


def test_kml_with_polygons_in_two_folders_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """As a GeoPackage of two layers is: which folder is the site would be a guess."""

    def write(p: Path) -> None:
        p.write_text(_kml_text(("Lot 1", [POLYGON]), ("Neighbour", [POLYGON, POINT])))

    _refused_site(
        tmp_path, capsys, "site.kml", write, "polygons in 2 folders (Lot 1, Neighbour)", "guess"
    )


def test_kml_network_link_is_not_followed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A NetworkLink to a KML outside the submission (a polygon there) is not read: the
    site holds no polygon of its own and is refused; nothing is fetched."""
    outside = tmp_path / "outside.kml"
    outside.write_text(_kml_text(("elsewhere", [POLYGON])))

    def write(p: Path) -> None:
        p.write_text(
            '<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="http://www.opengis.net/kml/2.2">'
            f"<Document><NetworkLink><Link><href>{outside}</href></Link></NetworkLink>"
            "<Placemark><name>pin</name>" + POINT + "</Placemark></Document></kml>\n"
        )

    _refused_site(tmp_path, capsys, "site.kml", write, "holds no polygon (1 point placemark)")


def test_kml_with_an_entity_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """An XML external entity (XXE) naming a local file: the KML is refused, not read."""

    def write(p: Path) -> None:
        text = _kml_text(("f", [f"<name>&x;</name>{POLYGON}"]))
        p.write_text(
            text.replace("<kml", '<!DOCTYPE kml [<!ENTITY x SYSTEM "file:///etc/hostname">]>\n<kml')
        )

    _refused_site(tmp_path, capsys, "site.kml", write, "cannot open as a vector layer")


def _patched(zpath: Path, *, method: int) -> None:
    """Set every entry's compression method in the local and central headers (PKWARE
    APPNOTE 4.3.7 and 4.3.12: at offsets 8 and 10); zipfile cannot write Deflate64."""
    data = bytearray(zpath.read_bytes())
    for sig, off in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        i = data.find(sig)
        while i >= 0:
            data[i + off : i + off + 2] = method.to_bytes(2, "little")
            i = data.find(sig, i + 4)
    zpath.write_bytes(bytes(data))


def _symlink_entry(p: Path) -> None:
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("doc.kml", SITE_KML.read_bytes())
        link = zipfile.ZipInfo("files/link.png")
        link.external_attr = 0o120777 << 16  # S_IFLNK
        zf.writestr(link, "/etc/passwd")


KMZ_CASES = {
    "no_kml": (
        lambda p: _kmz(p, {"files/pin.png": PNG, "files/readme.txt": b"x"}),
        "holds no KML file at its top level (a KMZ is a zip holding doc.kml); its files:"
        " files/pin.png, files/readme.txt",
    ),
    "kml_in_a_folder_only": (
        lambda p: _kmz(p, {"files/doc.kml": SITE_KML.read_bytes()}),
        "holds no KML file at its top level",
    ),
    "two_kml_no_doc": (
        lambda p: _kmz(p, {"a.kml": SITE_KML.read_bytes(), "b.kml": SITE_KML.read_bytes()}),
        "2 KML files at its top level (a.kml, b.kml)",
    ),
    "entry_leaving_the_folder": (
        lambda p: _kmz(p, {"doc.kml": SITE_KML.read_bytes(), "../../evil.png": PNG}),
        "entry '../../evil.png' would be written outside the folder",
    ),
    "symlink_entry": (_symlink_entry, "entry 'files/link.png' is a symbolic link"),
    "deflate64": (
        lambda p: _patched(_kmz(p, {"doc.kml": SITE_KML.read_bytes()}), method=9),
        "compression method 9 (Deflate64)",
    ),
    "not_a_zip": (lambda p: p.write_bytes(SITE_KML.read_bytes()), "not a readable zip file"),
    # 2,000,000 bytes of KML comment deflate to about 2 kB: over a 1 MB limit
    "bomb": (
        lambda p: _kmz(
            p,
            {
                "doc.kml": SITE_KML.read_bytes().replace(
                    b"<Document>", b"<!--" + b" " * 2_000_000 + b"--><Document>"
                )
            },
        ),
        "uncompressed size exceeds the limit of 1,000,000 bytes (GEOREVIEW_MAX_ZIP_BYTES)",
    ),
}


@pytest.mark.parametrize("case", list(KMZ_CASES))
def test_hostile_kmz_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    write, words = KMZ_CASES[case]
    monkeypatch.setenv("GEOREVIEW_MAX_ZIP_BYTES", "1000000")
    _refused_site(tmp_path, capsys, "site.kmz", write, words)


def test_kmz_bomb_fits_under_the_default_limit_only_when_small(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit is the zip limit in force: the padded KMZ of the bomb case reads at 3 MB."""
    p = tmp_path / "site.kmz"
    KMZ_CASES["bomb"][0](p)
    assert p.stat().st_size < 20_000  # deflated: the size on disk says nothing
    monkeypatch.setenv("GEOREVIEW_MAX_ZIP_BYTES", "3000000")
    assert len(read_vector(p)) == 2


# --------------------------------------------------------------------------- CSV + .prj


def _esri_prj(epsg: int, folder: Path) -> str:
    """The .prj GDAL writes beside a shapefile in ``epsg`` (ESRI WKT, as counties ship)."""
    gpd.GeoDataFrame(geometry=[shapely.Point(0, 0)], crs=epsg).to_file(folder / "prj_of.shp")
    return (folder / "prj_of.prj").read_text()


def _parcels() -> gpd.GeoDataFrame:
    """36 parcels of 300 x 300 ft in EPSG:3071 across the Village of Deerfield's south
    edge (village, extraterritorial area), ids with leading zeros."""
    cx, cy = 595_187.7, 285_883.6  # WTM metres: a point of the village limit (south side)
    step = 300 * 0.3048
    geoms = [
        box_ft(cx + i * step, cy + j * step, 300, 300) for j in range(-3, 3) for i in range(-3, 3)
    ]
    return gpd.GeoDataFrame(
        {"PARCELID": [f"0{k:03d}" for k in range(len(geoms))]}, geometry=geoms, crs=3071
    )


def _csv(gdf: gpd.GeoDataFrame, path: Path, prj: str | None) -> Path:
    frame = pd.DataFrame(gdf.drop(columns="geometry"))
    frame["WKT"] = shapely.to_wkt(gdf.geometry.values, rounding_precision=-1)
    frame.to_csv(path, index=False)
    if prj is not None:
        path.with_suffix(".prj").write_text(prj)
    return path


def test_csv_prj_gives_the_crs_gdal_reads(tmp_path: Path) -> None:
    csv = _csv(_parcels(), tmp_path / "parcels.csv", _esri_prj(3071, tmp_path))
    ours = vector_info(csv).crs
    gdal = pyogrio.read_info(csv)["crs"]  # GDAL's CSV driver reads the .prj itself
    assert ours is not None
    assert gdal is not None
    assert gpd.GeoSeries(crs=ours).crs.equals(gpd.GeoSeries(crs=gdal).crs)
    assert gpd.GeoSeries(crs=ours).crs.to_epsg() == 3071
    # --crs agreeing with the .prj is fine; disagreeing is refused, naming both
    assert read_vector(csv, crs="EPSG:3071").crs.to_epsg() == 3071
    with pytest.raises(CRSError, match=r"its parcels\.prj says EPSG:3071 .* is EPSG:4326"):
        read_vector(csv, crs="EPSG:4326")


def test_csv_with_prj_screens_as_the_geopackage(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    g = _parcels()
    gpkg = tmp_path / "parcels.gpkg"
    g.to_file(gpkg)
    csv = _csv(g, tmp_path / "parcels.csv", _esri_prj(3071, tmp_path))
    outs = {}
    for src in (gpkg, csv):
        outs[src.suffix] = tmp_path / f"out{src.suffix}.parquet"
        code, err = _run(
            "screen", src, "--layers", LAYERS, "--out", outs[src.suffix], capsys=capsys
        )
        assert code == 0, err
    a, b = (gpd.read_parquet(outs[k]) for k in (".gpkg", ".csv"))
    assert len(a) == 36
    assert set(a["jurisdiction"]) == {"village", "extraterritorial"}  # both sides of the line
    assert list(b["PARCELID"]) == list(a["PARCELID"]) == list(g["PARCELID"])
    pd.testing.assert_frame_equal(
        pd.DataFrame(a.drop(columns="geometry")), pd.DataFrame(b.drop(columns="geometry"))
    )
    np.testing.assert_allclose(a.area, b.area, rtol=1e-12)
    # and --crs against the .prj: exit 2, one line naming both CRSs and the file
    code, err = _run(
        "screen", csv, "--layers", LAYERS, "--out", tmp_path / "x.csv", "--crs", "EPSG:4326",
        capsys=capsys,
    )  # fmt: skip
    assert code == 2
    _one_line(err, "parcels.csv", "parcels.prj says EPSG:3071", "EPSG:4326")


@pytest.mark.parametrize(
    "prj",
    [
        'PROJCS["broken",GEOGCS[',
        "not a crs at all",
        "",
        "\xff\xfe",
    ],
)
def test_malformed_prj_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture, prj: str
) -> None:
    csv = _csv(_parcels(), tmp_path / "parcels.csv", None)
    csv.with_suffix(".prj").write_bytes(prj.encode("latin-1"))
    code, err = _run("screen", csv, "--layers", LAYERS, "--out", tmp_path / "x.csv", capsys=capsys)
    assert code == 2, err
    _one_line(err, f"{tmp_path / 'parcels.prj'}: parcels: not a readable CRS")


def test_csv_site_with_prj_reviews_with_the_same_area(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    ref = _review(SAMPLE, tmp_path / "out_ref", capsys)
    sub = _sample(tmp_path, "csv", site="site.csv")
    site = gpd.read_file(SAMPLE / "site.geojson").to_crs(3071)  # projected, as a CAD export
    _csv(site, sub / "site.csv", _esri_prj(3071, tmp_path))
    (sub / "site.geojson").unlink()
    rep = _review(sub, tmp_path / "out_csv", capsys)
    assert rep["measures"]["site_area_sqft"] == ref["measures"]["site_area_sqft"]
    a, b = load_submission(SAMPLE), load_submission(sub)
    assert abs(_sqft(a.site) - _sqft(b.site)) <= AREA_TOL_SQFT


def test_csv_site_without_prj_or_with_a_prj_link_out_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    sub = _sample(tmp_path, "csv", site="site.csv")
    _csv(gpd.read_file(SAMPLE / "site.geojson"), sub / "site.csv", None)
    out = tmp_path / "out"
    code, err = _run("review", sub, "--layers", LAYERS, "--out", out, capsys=capsys)
    assert code == 2
    _one_line(err, "site.csv: site: has no coordinate reference system", "put its .prj beside it")
    outside = tmp_path / "outside.prj"
    outside.write_text(_esri_prj(4326, tmp_path))
    os.symlink(outside, sub / "site.prj")
    code, err = _run("review", sub, "--layers", LAYERS, "--out", out, capsys=capsys)
    assert code == 2
    _one_line(err, "site.prj: site: is a link that points outside the submission folder")


def test_screen_run_key_follows_the_prj(tmp_path: Path) -> None:
    """A resumed screening starts over when the .prj changes (the CRS of every row)."""
    from georeview.load import load_layers
    from georeview.pipeline.partitions import Source, run_key

    csv = _csv(_parcels(), tmp_path / "parcels.csv", _esri_prj(3071, tmp_path))
    layers = load_layers(LAYERS)
    before = run_key(Source(str(csv)), layers, {})
    csv.with_suffix(".prj").write_text(_esri_prj(3070, tmp_path))
    assert run_key(Source(str(csv)), layers, {}) != before
