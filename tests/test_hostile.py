"""Hostile and broken inputs, second wave (issue 15): nothing escapes, nothing is lost,
no number is wrong.

Each test builds its inputs in a temp folder and runs the command line in process
(:func:`georeview.cli.main`). Each was checked to fail on the code before issue 15
(commit cba3f15): the failure it caught is in its docstring. A batch review or a
screening that finishes with error rows exits 3 (``EXIT_SOME_FAILED``); a refusal exits 2.

Geometry is hand-worked in EPSG:3071 (metres): a 100 m x 100 m site is
100^2 / 0.3048^2 = 107,639.10 sq ft (international foot, exact).
"""

from __future__ import annotations

import csv
import json
import os
import threading
import warnings
import zipfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from _build import write_dem, write_submission

from georeview.cli import main
from georeview.cli.options import EXIT_SOME_FAILED
from georeview.errors import ConfigError
from georeview.load import load_layers
from georeview.pipeline.layers_folder import find_layers_dir
from georeview.report.index import index_data

X0, Y0 = 500_000.0, 300_000.0
SITE = shapely.box(X0 + 500, Y0 + 500, X0 + 600, Y0 + 600)
SQFT_PER_SQM = 1 / 0.3048**2
SITE_SQFT = 100.0**2 * SQFT_PER_SQM
TOML = """
municipality = "deerfield"
name = "Hostile site"
[activity]
kinds = ["building"]
fill_cubic_yards = 0
pipe_length_ft = 0
on_platted_lot = false
"""


def _layers(folder: Path, dem: np.ndarray | None = None) -> Path:
    """A 2 km square village with a 10 m DEM (flat at 260 m unless ``dem`` is given)."""
    folder.mkdir(parents=True, exist_ok=True)
    gpd.GeoDataFrame(
        {"n": [0]}, geometry=[shapely.box(X0, Y0, X0 + 2000, Y0 + 2000)], crs=3071
    ).to_file(folder / "boundary.gpkg")
    z = np.full((200, 200), 260.0, dtype="float32") if dem is None else dem
    write_dem(folder / "dem.tif", z, res=10.0, origin=(X0, Y0 + 2000), nodata=-9999.0)
    (folder / "layers.toml").write_text(
        'municipality = "deerfield"\nvillage_name = "Testville"\n'
        '[boundary]\npath = "boundary.gpkg"\n[dem]\npath = "dem.tif"\nvertical_units = "m"\n'
    )
    return folder


@pytest.fixture(scope="module")
def layers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _layers(tmp_path_factory.mktemp("hostile") / "layers")


def run(*argv: object, capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    """Run the CLI in process; return (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_clean_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert "Warning" not in err
    assert lines[0].startswith("georeview: error: ")
    return lines[0]


def _zip_folder(folder: Path, zpath: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(zpath, "w") as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, prefix + f.relative_to(folder).as_posix())
    return zpath


def _rows(summary: Path) -> list[dict[str, str]]:
    with open(summary, newline="") as fh:
        return list(csv.DictReader(fh))


# --------------------------------------------------------------------------- escapes


def test_zip_whose_stem_is_dotdot_stays_in_scratch_and_out(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: "...zip" (stem "..") was extracted into the scratch folder's parent and its
    reports were written to the parent of --out."""
    scratch_root = tmp_path / "tmp"
    scratch_root.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(scratch_root))
    src = write_submission(tmp_path / "src", SITE, toml=TOML)
    batch = tmp_path / "batch"
    batch.mkdir()
    _zip_folder(src, batch / "...zip")
    work = tmp_path / "work"
    out = work / "out"
    code, _, err = run("review", batch, "--out", out, "--layers", layers, capsys=capsys)
    assert code == 0, err
    assert sorted(os.listdir(work)) == ["out"]  # nothing beside --out
    assert os.listdir(scratch_root) == []  # the scratch folder is gone, nothing left beside it
    (row,) = _rows(out / "summary.csv")
    assert row["status"] == "ok"
    assert row["source"] == "...zip"
    assert row["name"] not in ("", ".", "..")
    assert (out / row["name"] / "report.json").is_file()


def test_control_character_names_never_become_links(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    """Before: a name starting with \\x01 passed the scheme check, and browsers strip the
    character: "\\x01javascript:alert(1)/report.html" became a javascript: link."""
    gdf = gpd.GeoDataFrame(
        {"link": ["\x01javascript:alert(1)/report.html", "\tjavascript:x", "ok/report.html"]},
        geometry=[SITE, SITE, SITE],
        crs=3071,
    )
    data = index_data(gdf, working_crs="EPSG:3071", link_column="link")
    assert data["links"] == [None, None, "ok/report.html"]
    batch = tmp_path / "batch"
    write_submission(batch / "\x01javascript:alert(1)", SITE, toml=TOML)
    out = tmp_path / "out"
    code, _, err = run("review", batch, "--out", out, "--layers", layers, capsys=capsys)
    assert code == 0, err
    (row,) = _rows(out / "summary.csv")
    assert row["source"] == "\x01javascript:alert(1)"  # the source as it was
    assert ":" not in row["name"]  # the folder name is safe
    assert "\x01" not in row["name"]
    page = (out / "index.html").read_text()
    assert "javascript:alert(1)/report.html" not in page


def test_a_linked_submission_folder_is_an_error_row_not_lost(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    """Added beyond the issue: a batch entry that is a link to a submission folder elsewhere
    is not followed, and is listed as an error row rather than dropped."""
    elsewhere = write_submission(tmp_path / "elsewhere" / "sub", SITE, toml=TOML)
    batch = tmp_path / "batch"
    write_submission(batch / "fine", SITE, toml=TOML)
    os.symlink(elsewhere, batch / "linked", target_is_directory=True)
    out = tmp_path / "out"
    code, _, err = run("review", batch, "--out", out, "--layers", layers, capsys=capsys)
    assert code == EXIT_SOME_FAILED, err
    by = {r["source"]: r for r in _rows(out / "summary.csv")}
    assert by["fine"]["status"] == "ok"
    assert by["linked"]["status"] == "error"
    assert "symbolic link" in by["linked"]["error"]


def test_layers_are_never_taken_from_the_submission(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: without --layers the folders above the submission were searched; a zip
    holding layers/deerfield/ replaced the Village's layers with its own."""
    monkeypatch.delenv("GEOREVIEW_LAYERS", raising=False)
    empty = tmp_path / "cwd"
    empty.mkdir()
    monkeypatch.chdir(empty)
    planted = _layers(tmp_path / "zipsrc" / "layers" / "deerfield")
    (planted / "layers.toml").write_text(
        (planted / "layers.toml").read_text().replace("Testville", "Planted")
    )
    sub = write_submission(tmp_path / "zipsrc" / "sub", SITE, toml=TOML)
    assert find_layers_dir("deerfield", sub).resolve() != planted.resolve()
    batch = tmp_path / "batch"
    batch.mkdir()
    _zip_folder(tmp_path / "zipsrc", batch / "applicant.zip")
    out = tmp_path / "out"
    run("review", batch, "--out", out, capsys=capsys)
    (row,) = _rows(out / "summary.csv")
    if row["status"] == "ok":  # reviewed against the installed layers, never the zip's
        report = json.loads((out / row["name"] / "report.json").read_text())
        assert "georeview-batch-" not in report["layers"]["folder"]
        assert Path(report["layers"]["folder"]).resolve() == find_layers_dir("deerfield").resolve()


@pytest.mark.parametrize("where", ["absolute", "parent"])
def test_layers_toml_paths_stay_in_the_layers_folder(
    tmp_path: Path, layers: Path, where: str
) -> None:
    """Before: a layers.toml path could be absolute or climb out with ../."""
    d = _layers(tmp_path / "village" / "layers")
    outside = tmp_path / "village" / "wetlands.gpkg"
    gpd.GeoDataFrame({"n": [0]}, geometry=[SITE], crs=3071).to_file(outside)
    path = str(outside) if where == "absolute" else "../wetlands.gpkg"
    text = (d / "layers.toml").read_text()
    (d / "layers.toml").write_text(text + f'[wetlands]\npath = "{path}"\n')
    with pytest.raises(ConfigError, match=r"wetlands\.path.*outside the layers folder"):
        load_layers(d)
    # the Village may say that its layers.toml reaches elsewhere
    (d / "layers.toml").write_text("trusted = true\n" + text + f'[wetlands]\npath = "{path}"\n')
    assert len(load_layers(d).read("wetlands")) == 1


# --------------------------------------------------------------------------- wrong numbers


def test_nodata_inside_the_disturbed_area_is_needs_info(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Before: nodata cells counted as flat ground: 0 sq ft steep, pass.

    The site covers DEM columns 50-59 (cell centres X0 + 505 ... X0 + 595 m) and rows
    140-149; columns 50-54 are nodata. A slope needs the 3 x 3 block around its cell
    (Horn 1981, as gdaldem), so column 55 has none either: 6 of the 10 columns, 60.0 %
    of the 100 cells inside, cannot be measured.
    """
    z = np.full((200, 200), 260.0, dtype="float32")
    z[:, 50:55] = -9999.0
    lay = _layers(tmp_path / "layers", z)
    sub = write_submission(tmp_path / "sub", SITE, toml=TOML)
    out = tmp_path / "out"
    code, _, err = run("review", sub, "--out", out, "--layers", lay, capsys=capsys)
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    assert report["measures"]["steep_slope_area_sqft"] is None
    assert any("60.0 % of the 100 DEM cells" in w for w in report["warnings"])


def test_shapefile_with_fewer_dbf_records_is_refused(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    """Before: a .dbf with 1 record beside a .shp with 3 shapes read as 1 polygon."""
    sub = tmp_path / "sub"
    sub.mkdir()
    parts = [
        shapely.box(X0 + 500 + 40 * i, Y0 + 500, X0 + 530 + 40 * i, Y0 + 530) for i in range(3)
    ]
    gpd.GeoDataFrame({"n": [0, 1, 2]}, geometry=parts, crs=3071).to_file(sub / "site.shp")
    one = tmp_path / "one"
    one.mkdir()
    gpd.GeoDataFrame({"n": [0]}, geometry=parts[:1], crs=3071).to_file(one / "site.shp")
    (sub / "site.dbf").write_bytes((one / "site.dbf").read_bytes())
    (sub / "submission.toml").write_text(
        TOML.replace("[activity]", 'site = "site.shp"\n[activity]')
    )
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--layers", layers, capsys=capsys)
    assert code == 2
    assert "3 shapes but the .dbf holds 1" in _one_clean_line(err)


def test_batch_name_collisions_get_their_own_folders(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    """Before: a folder and a zip of one stem, or a zip's inner folder and a folder of the
    joined name, shared one output folder (one report over the other)."""
    batch = tmp_path / "batch"
    small = shapely.box(X0 + 500, Y0 + 500, X0 + 510, Y0 + 510)  # 100 m2
    write_submission(batch / "a", small, toml=TOML)
    _zip_folder(write_submission(tmp_path / "big", SITE, toml=TOML), batch / "a.zip")
    multi = tmp_path / "multi"
    write_submission(multi / "one", small, toml=TOML)
    write_submission(multi / "two", SITE, toml=TOML)
    _zip_folder(multi, batch / "b.zip")
    write_submission(batch / "b-one", SITE, toml=TOML)
    out = tmp_path / "out"
    code, _, err = run("review", batch, "--out", out, "--layers", layers, capsys=capsys)
    assert code == 0, err
    rows = _rows(out / "summary.csv")
    assert len({r["name"] for r in rows}) == len(rows) == 5
    by_source = {r["source"]: r for r in rows}
    assert set(by_source) == {"a", "a.zip", "b-one", "b.zip:one", "b.zip:two"}
    expect = {"a": 100, "a.zip": 10_000, "b-one": 10_000, "b.zip:one": 100, "b.zip:two": 10_000}
    for source, sqm in expect.items():
        r = by_source[source]
        report = json.loads((out / r["name"] / "report.json").read_text())
        # report.json gives areas to 0.1 sq ft
        assert report["measures"]["site_area_sqft"] == pytest.approx(sqm * SQFT_PER_SQM, abs=0.05)


@pytest.mark.parametrize(
    ("option", "value", "field"),
    [("--columns", "propclass=PROPCLAS", "--columns"), ("--id-field", "PARCELDI", "--id-field")],
)
def test_misspelt_screen_columns_are_refused(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, option: str, value: str, field: str
) -> None:
    """Before: a misspelt field was silently ignored (its class exclusions dropped)."""
    p = tmp_path / "parcels.gpkg"
    gpd.GeoDataFrame({"PARCELID": ["a"], "PROPCLASS": ["4"]}, geometry=[SITE], crs=3071).to_file(p)
    code, _, err = run(
        "screen", p, "--layers", layers, "--out", tmp_path / "o.csv", option, value, capsys=capsys
    )
    assert code == 2
    line = _one_clean_line(err)
    assert field in line
    assert "has no field" in line


# --------------------------------------------------------------------------- isolation


def test_screen_bad_parcels_become_error_rows(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    """Before: a two-point ring ended the whole run (GEOS error reading the partition);
    a NaN vertex was screened with a made-up area, raw RuntimeWarnings on stderr."""
    crs = '"crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::3071"}}'
    good = [shapely.get_coordinates(SITE).tolist()]
    two = [[[X0 + 500, Y0 + 500], [X0 + 600, Y0 + 500]]]
    feats = [
        {
            "type": "Feature",
            "properties": {"PARCELID": pid},
            "geometry": {"type": "Polygon", "coordinates": c},
        }
        for pid, c in (("good", good), ("two_point", two), ("good2", good))
    ]
    p = tmp_path / "two.geojson"
    p.write_text('{"type":"FeatureCollection",' + crs + ',"features":' + json.dumps(feats) + "}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # shapely warns building a ring with NaN
        nan_ring = shapely.polygons([[X0, Y0], [X0 + 10, Y0], [np.nan, Y0 + 10], [X0, Y0]])
    q = tmp_path / "nan.gpkg"
    gpd.GeoDataFrame(
        {"PARCELID": ["good", "nan_vertex"]}, geometry=[SITE, nan_ring], crs=3071
    ).to_file(q)
    for src, bad in ((p, "two_point"), (q, "nan_vertex")):
        out = tmp_path / f"{src.stem}.csv"
        code, _, err = run("screen", src, "--layers", layers, "--out", out, capsys=capsys)
        assert code == EXIT_SOME_FAILED, err  # finished, but some records failed
        assert "1 of" in _one_clean_line(err)
        table = pd.read_csv(out)
        by = dict(zip(table["parcel_id"], table["status"], strict=True))
        assert by.pop(bad) == "error"
        assert set(by.values()) == {"ok"}
        ok = table[table["status"] == "ok"]
        # written to 0.1 sq ft (georeview.report.decimals)
        np.testing.assert_allclose(ok["area_sqft"], SITE_SQFT, rtol=0, atol=0.05)


def _patched(zpath: Path, *, method: int | None = None, flags: int | None = None) -> None:
    """Set the compression method or the general purpose flags of every entry, in the
    local and central headers (PKWARE APPNOTE 4.3.7 and 4.3.12: flags at offsets 6 and
    8, method at 8 and 10). zipfile cannot write either (no encryption, no Deflate64)."""
    data = bytearray(zpath.read_bytes())
    for sig, flag_off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = data.find(sig)
        while i >= 0:
            if flags is not None:
                data[i + flag_off : i + flag_off + 2] = flags.to_bytes(2, "little")
            if method is not None:
                data[i + flag_off + 2 : i + flag_off + 4] = method.to_bytes(2, "little")
            i = data.find(sig, i + 4)
    zpath.write_bytes(bytes(data))


def _odd(kind: str, batch: Path, tmp: Path) -> None:
    src = write_submission(tmp / f"src_{kind}", SITE, toml=TOML)
    z = batch / f"{kind}.zip"
    if kind == "encrypted":
        _zip_folder(src, z)
        _patched(z, flags=0x1)  # bit 0 of the general purpose flag: encrypted
    elif kind == "deflate64":
        _zip_folder(src, z)
        _patched(z, method=9)
    elif kind == "file_and_folder":
        with zipfile.ZipFile(z, "w") as zf:
            for f in sorted(src.iterdir()):
                zf.write(f, f"s/{f.name}")
            zf.writestr("s/site.geojson/inner.txt", "x")
    elif kind == "deep_toml":
        (src / "submission.toml").write_text(TOML + "[plan]\nx = " + "[" * 5000 + "]" * 5000 + "\n")
        _zip_folder(src, z)
    elif kind == "year_one":
        (src / "submission.toml").write_text(
            "application_date = 0001-01-01\n"
            + TOML.replace("[activity]", 'site = "site.geojson"\n[activity]')
        )
        _zip_folder(src, z)
    elif kind == "end_of_calendar":
        body = TOML.replace(
            "[activity]", 'site = "site.geojson"\n[activity]\nstart_date = 9999-12-31'
        )
        (src / "submission.toml").write_text(body)
        _zip_folder(src, z)


@pytest.mark.parametrize(
    "kind",
    ["encrypted", "deflate64", "file_and_folder", "deep_toml", "year_one", "end_of_calendar"],
)
def test_batch_odd_zips_and_toml_become_error_rows(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, kind: str
) -> None:
    """Before: each of these aborted the whole batch with a traceback (RuntimeError,
    NotImplementedError, FileExistsError, RecursionError, ValueError), or (9999-12-31)
    was reviewed with a deadline past the end of the calendar."""
    batch = tmp_path / "batch"
    write_submission(batch / "fine", SITE, toml=TOML)
    _odd(kind, batch, tmp_path)
    out = tmp_path / "out"
    code, _, err = run("review", batch, "--out", out, "--layers", layers, capsys=capsys)
    assert code == EXIT_SOME_FAILED
    assert "1 of 2 submissions could not be reviewed" in _one_clean_line(err)
    by = {r["source"]: r for r in _rows(out / "summary.csv")}
    assert by["fine"]["status"] == "ok"
    assert by[f"{kind}.zip"]["status"] == "error"
    assert by[f"{kind}.zip"]["error"]


# --------------------------------------------------------------------------- special files


def _run_with_timeout(
    argv: list[object], fifo: Path | None, capsys: pytest.CaptureFixture
) -> tuple[int, str]:
    """Run the CLI in a thread; a reader stuck on a FIFO is released and reported."""
    result: dict[str, object] = {}

    def go() -> None:
        result["code"] = main([str(a) for a in argv])

    capsys.readouterr()
    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(30)
    hung = t.is_alive()
    if hung and fifo is not None:
        with open(fifo, "w"):  # unblock the reader so the thread can end
            pass
        t.join(30)
    _, err = capsys.readouterr()
    assert not hung, "the review blocked on a FIFO"
    return int(result["code"]), err  # type: ignore[call-overload]


@pytest.mark.parametrize("case", ["dbf_link_out", "prj_fifo", "toml_link_out", "toml_fifo"])
def test_special_files_are_refused(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, case: str
) -> None:
    """Before: links out of the submission were followed and FIFOs opened (blocking)."""
    sub = tmp_path / "sub"
    sub.mkdir()
    gpd.GeoDataFrame({"n": [0]}, geometry=[SITE], crs=3071).to_file(sub / "site.shp")
    (sub / "submission.toml").write_text(
        TOML.replace("[activity]", 'site = "site.shp"\n[activity]')
    )
    secret = tmp_path / "secret"
    secret.mkdir()
    fifo = None
    if case == "dbf_link_out":
        os.replace(sub / "site.dbf", secret / "site.dbf")
        os.symlink(secret / "site.dbf", sub / "site.dbf")
    elif case == "prj_fifo":
        (sub / "site.prj").unlink()
        fifo = sub / "site.prj"
        os.mkfifo(fifo)
    elif case == "toml_link_out":
        os.replace(sub / "submission.toml", secret / "submission.toml")
        os.symlink(secret / "submission.toml", sub / "submission.toml")
    else:
        text = (sub / "submission.toml").read_text()
        (sub / "submission.toml").unlink()
        fifo = sub / "submission.toml"
        os.mkfifo(fifo)
        del text
    argv = ["review", sub, "--out", tmp_path / "out", "--layers", layers]
    code, err = _run_with_timeout(argv, fifo, capsys)
    assert code == 2
    line = _one_clean_line(err)
    assert "outside the submission folder" in line or "not a regular file" in line


def test_sitemap_and_contour_layers_keep_the_submission_limits(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: sitemap/ layers and the site-map contour layer were read with the reference
    layer limit (2,000,000 features), not the submission's."""
    monkeypatch.setenv("GEOREVIEW_MAX_SUBMISSION_FEATURES", "5")
    lines = [
        shapely.LineString([(X0 + 500, Y0 + 500 + i), (X0 + 600, Y0 + 500 + i)]) for i in range(10)
    ]
    for case in ("sitemap", "contours"):
        sub = write_submission(tmp_path / case, SITE, toml=TOML)
        if case == "sitemap":
            (sub / "sitemap").mkdir()
            gpd.GeoDataFrame({"n": range(10)}, geometry=lines, crs=3071).to_file(
                sub / "sitemap" / "controls.geojson"
            )
        else:
            gpd.GeoDataFrame(
                {"elev_ft": [850.0 + 2 * i for i in range(10)]}, geometry=lines, crs=3071
            ).to_file(sub / "contours.geojson")
            text = (sub / "submission.toml").read_text()
            (sub / "submission.toml").write_text(
                text + '[site_map]\ncontours = "contours.geojson"\ncontour_field = "elev_ft"\n'
            )
        code, _, err = run(
            "review", sub, "--out", tmp_path / f"o_{case}", "--layers", layers, capsys=capsys
        )
        assert code == 2, err
        assert "10 features exceed the limit of 5" in _one_clean_line(err)


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (TOML + "[dewatering]\npump_rate_gpm = inf\n", "dewatering.pump_rate_gpm"),
        (TOML + "[hydrology]\ntc_pre_hr = inf\n", "hydrology.tc_pre_hr"),
        (TOML.replace("[activity]", "[activity]\nstart_date = 9999-12-31"), "activity.start_date"),
        ("application_date = 0001-01-01\n" + TOML, "application_date"),
    ],
)
def test_non_finite_and_out_of_range_values_are_refused(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, body: str, field: str
) -> None:
    """Before: inf was taken as a pump rate or a time of concentration, and dates at the
    ends of the calendar as dates (9999-12-31 reviewed; 0001-01-01 a traceback)."""
    sub = write_submission(tmp_path / "s", SITE, toml=body)
    code, _, err = run("review", sub, "--out", tmp_path / "o", "--layers", layers, capsys=capsys)
    assert code == 2
    line = _one_clean_line(err)
    assert f": {field}: " in line
    assert "finite number" in line or "than or equal to" in line


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_coordinates_are_refused(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, token: str
) -> None:
    """Before: GEOSException traceback (orientationIndex encountered NaN/Inf)."""
    sub = write_submission(tmp_path / "s", SITE, toml=TOML)
    a, b, c = f"{X0 + 500},{Y0 + 500}", f"{X0 + 600},{Y0 + 500}", f"{token},{Y0 + 600}"
    ring = f"[[{a}],[{b}],[{c}],[{a}]]"
    (sub / "site.geojson").write_text(
        '{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":'
        '"urn:ogc:def:crs:EPSG::3071"}},"features":[{"type":"Feature","properties":{},'
        f'"geometry":{{"type":"Polygon","coordinates":[{ring}]}}}}]}}'
    )
    code, _, err = run("review", sub, "--out", tmp_path / "o", "--layers", layers, capsys=capsys)
    assert code == 2
    assert "site: feature 0 has a coordinate that is not a finite number" in _one_clean_line(err)


@pytest.mark.parametrize(
    "assume", ["disturb_acres=nan", "disturb_sqft=inf", "disturb_fraction=nan"]
)
def test_non_finite_assume_is_refused(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, assume: str
) -> None:
    """Before: disturb_acres=nan was accepted (nan < 0 is false) and screened."""
    p = tmp_path / "parcels.gpkg"
    gpd.GeoDataFrame({"PARCELID": ["a"]}, geometry=[SITE], crs=3071).to_file(p)
    code, _, err = run(
        "screen",
        p,
        "--layers",
        layers,
        "--out",
        tmp_path / "o.csv",
        "--assume",
        assume,
        capsys=capsys,
    )
    assert code == 2
    line = _one_clean_line(err)
    assert "--assume" in line
    assert "finite" in line


def test_one_pixel_dem_is_needs_info(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Before: TypeError from contourpy (a 1 x 1 grid), then ValueError from pyflwdir."""
    lay = _layers(tmp_path / "layers")
    write_dem(
        lay / "dem.tif",
        np.full((1, 1), 260.0, dtype="float32"),
        res=3000.0,
        origin=(X0 - 500, Y0 + 2500),
        nodata=-9999.0,
    )
    sub = write_submission(tmp_path / "sub", SITE, toml=TOML)
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--layers", lay, capsys=capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["measures"]["steep_slope_area_sqft"] is None
    assert report["measures"]["downstream"]["reaches_water_within_quarter_mile"] is None


# --------------------------------------------------------------------------- outputs


def test_pdf_sheet_text_is_never_mathtext(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    r"""Before: a name "$\frac{$" was parsed as mathtext and the sheet failed (ValueError)."""
    sub = write_submission(
        tmp_path / "sub", SITE, toml=TOML.replace("Hostile site", r"$\\frac{$ $x^2$")
    )
    pdf = tmp_path / "sheet.pdf"
    code, _, err = run("sitemap", sub, "--out", pdf, "--layers", layers, capsys=capsys)
    assert code == 0, err
    assert pdf.read_bytes().startswith(b"%PDF")


def test_paths_gdal_would_change_are_refused(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    """Found by test_fuzz.py: GDAL drops "\r" (and tab, newline) from a path, so a folder
    named "\r" made it read the site file of the folder above, outside the submission."""
    batch = tmp_path / "batch"
    decoy = shapely.box(X0 + 500, Y0 + 500, X0 + 501, Y0 + 501)  # 1 m2, beside the folder
    write_submission(batch, decoy, toml=TOML)
    (batch / "submission.toml").unlink()  # the batch folder holds the decoy site only
    sub = batch / "\r"
    sub.mkdir()
    (sub / "submission.toml").write_text(
        TOML.replace("[activity]", 'site = "site.geojson"\n[activity]')
    )
    (sub / "site.geojson").write_text((batch / "site.geojson").read_text())  # Python sees it
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--layers", layers, capsys=capsys)
    assert code == 2
    assert "GDAL drops" in _one_clean_line(err)


def test_csv_cells_cannot_be_formulas(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    """Before: "=HYPERLINK(...)" and "@SUM(...)" were written raw into summary.csv and the
    screening CSV, where a spreadsheet runs them."""
    batch = tmp_path / "batch"
    write_submission(batch / '=HYPERLINK("http:__x","y")', SITE, toml=TOML)
    # found by test_fuzz.py: a lone carriage return was written unquoted and split the row
    # (and GDAL drops it from paths: that submission is refused, see the next test)
    (batch / "\r").mkdir()
    (batch / "\r" / "submission.toml").write_text(TOML)
    out = tmp_path / "out"
    code, _, err = run("review", batch, "--out", out, "--layers", layers, capsys=capsys)
    assert code == EXIT_SOME_FAILED, err
    assert [r["status"] for r in _rows(out / "summary.csv")] == ["error", "ok"]
    with open(out / "summary.csv", newline="") as fh:
        cells = [c for row in csv.reader(fh) for c in row]
    assert not any(c.startswith(("=", "+", "@")) for c in cells)
    assert '\'=HYPERLINK("http:__x","y")' in cells
    p = tmp_path / "parcels.gpkg"
    gpd.GeoDataFrame(
        {"PARCELID": ["@SUM(1+1)"], "OWNERNME1": ["=cmd|' /C calc'!A0"], "NOTE": ["-2+3"]},
        geometry=[SITE],
        crs=3071,
    ).to_file(p)
    code, _, err = run("screen", p, "--layers", layers, "--out", tmp_path / "s.csv", capsys=capsys)
    assert code == 0, err
    with open(tmp_path / "s.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["OWNERNME1"] == "'=cmd|' /C calc'!A0"
    assert rows[0]["parcel_id"] == "'@SUM(1+1)"
    assert rows[0]["NOTE"] == "'-2+3"
    assert float(rows[0]["area_sqft"]) == pytest.approx(SITE_SQFT, abs=0.05)  # to 0.1 sq ft


# --------------------------------------------------------------------------- second-wave leftovers


def test_a_300_byte_site_file_name_is_one_line(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    """Before: "internal error: OSError: [Errno 36] File name too long" (exit 1); Linux file
    names hold 255 bytes, and Path.exists raises rather than answer for a longer one."""
    sub = write_submission(tmp_path / "sub", SITE, toml=TOML)
    long_name = "s" * 292 + ".geojson"  # 300 bytes
    text = (sub / "submission.toml").read_text()
    (sub / "submission.toml").write_text(text.replace('"site.geojson"', f'"{long_name}"'))
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--layers", layers,
                       "--no-map", capsys=capsys)  # fmt: skip
    assert code == 2
    line = _one_clean_line(err)
    assert line.startswith(f"georeview: error: {sub / 'submission.toml'}: site: ")
    assert "(300 bytes) cannot be a file name here (File name too long)" in line
    assert len(line) < 400  # the name is cut in the message, not echoed whole


def test_a_local_cs_prj_is_one_line(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    """Before: "internal error: ProjError: Error creating Transformer from CRS." (exit 1): a
    LOCAL_CS parses as a CRS, but nothing relates its coordinates to the earth."""
    sub = write_submission(tmp_path / "sub", SITE, toml=TOML, site_name="site.shp")
    (sub / "site.prj").write_text(
        'LOCAL_CS["Site grid",LOCAL_DATUM["Site datum",0],UNIT["metre",1],'
        'AXIS["X",EAST],AXIS["Y",NORTH]]'
    )
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--layers", layers,
                       "--no-map", capsys=capsys)  # fmt: skip
    assert code == 2
    line = _one_clean_line(err)
    assert line.startswith(f"georeview: error: {sub / 'site.shp'}: site: ")
    assert "no transformation from 'Site grid' to the working CRS" in line
    assert "local or engineering CRS" in line


@pytest.mark.parametrize("below", [False, True])
def test_batch_out_that_is_a_file_or_below_one_is_one_line(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, below: bool
) -> None:
    """Before: "internal error: NotADirectoryError" / FileExistsError from mkdir (exit 1)."""
    batch = tmp_path / "batch"
    write_submission(batch / "one", SITE, toml=TOML)
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    out = a_file / "out" if below else a_file
    code, _, err = run("review", batch, "--out", out, "--layers", layers, "--no-map",
                       capsys=capsys)  # fmt: skip
    assert code == 2
    line = _one_clean_line(err)
    reason = "Not a directory" if below else "File exists"
    assert line == f"georeview: error: {out}: cannot create the output folder ({reason})"
    assert a_file.read_text() == "not a folder"  # nothing lost


def test_control_characters_from_input_never_reach_the_terminal_raw(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    """Before: a folder or file name with ESC, BEL or CR was printed as it is: the terminal
    recoloured, beeped or overwrote the line. Now each is written as \\xNN."""
    sub = write_submission(tmp_path / "lot\x1b[31m12\x07", SITE, toml=TOML)
    text = (sub / "submission.toml").read_text()
    (sub / "submission.toml").write_text(text.replace('"site.geojson"', '"gone\\r.geojson"'))
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--layers", layers,
                       "--no-map", capsys=capsys)  # fmt: skip
    assert code == 2
    line = _one_clean_line(err)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in line), repr(line)
    assert "lot\\x1b[31m12\\x07" in line  # the folder, readable and inert


# --------------------------------------------------------------------------- DEM storage


@pytest.mark.parametrize("kind", ["scaled", "south-up"])
def test_a_scaled_or_south_up_dem_is_refused_by_name(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture
) -> None:
    """Before: an int16 decimetre DEM (band scale 0.1) was read as stored, slopes 10x too
    steep; a south-up DEM was neither read nor refused. Now each is one line naming the
    DEM and the GDAL command that makes it readable."""
    import rasterio

    rows = np.add.outer(np.arange(200, dtype="float32"), np.zeros(200, dtype="float32"))
    if kind == "scaled":
        lay = _layers(tmp_path / "layers", dem=(2600 + rows).astype("int16"))  # decimetres
        with rasterio.open(lay / "dem.tif", "r+") as ds:
            ds.scales = (0.1,)
        want = "its band has scale 0.1 and offset 0"
    else:
        lay = _layers(tmp_path / "layers", dem=260 + rows / 10)
        with rasterio.open(lay / "dem.tif") as ds:
            prof, z = ds.profile, ds.read(1)
        t = prof["transform"]
        prof["transform"] = rasterio.Affine(t.a, 0, t.c, 0, -t.e, t.f + t.e * z.shape[0])
        with rasterio.open(lay / "dem.tif", "w", **prof) as ds:
            ds.write(z[::-1], 1)
        want = "the DEM is south-up"
    sub = write_submission(tmp_path / "sub", SITE, toml=TOML)
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--layers", lay, "--no-map",
                       capsys=capsys)  # fmt: skip
    assert code == 2
    line = _one_clean_line(err)
    assert line.startswith(f"georeview: error: {lay / 'dem.tif'}: dem: {want}")
    assert not (tmp_path / "out" / "report.json").exists()


def test_layers_build_on_a_full_disk_is_one_line(tmp_path: Path) -> None:
    """Before: "internal error: DataSourceError: Failed to commit transaction" (exit 1).

    A full disk is simulated with RLIMIT_FSIZE (a write past 64 kB fails with EFBIG) in a
    child process; the build is one line naming the file it could not write, exit 2, and
    leaves no folder that looks built.
    """
    import subprocess
    import sys

    lay = Path(__file__).resolve().parents[1] / "layers" / "deerfield"
    munis = Path(__file__).resolve().parent / "data" / "wi_dane" / "deerfield_area_munis.gpkg"
    out = tmp_path / "built"
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))\n"
        "from georeview.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    argv = [
        "layers", "build", str(out), "--municipality", "deerfield", "--name", "Deerfield",
        "--kind", "V", "--boundaries", str(munis), "--wetlands", str(lay / "wetlands.gpkg"),
        "--dem", str(lay / "dem.tif"), "--dem-vertical-units", "m", "--city-class",
        "Madison=2", "-q",
    ]  # fmt: skip
    p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    assert p.returncode == 2, p.stderr
    line = _one_clean_line(p.stderr)
    assert f"georeview: error: {out}/" in line
    assert "cannot write" in line
    assert not out.exists()
    assert not [q for q in tmp_path.iterdir() if q.name.startswith(".built.partial-")]


# --------------------------------------------------------------------------- Village's files

REPO = Path(__file__).resolve().parents[1]
FORGED = """municipality = "deerfield"
[determinations.master_plan_area]
value = false
by = "A. Reviewer, Village Engineer"
date = 2025-05-02
reason = "Forged by the applicant."
"""
GIVEN = """municipality = "deerfield"
[determinations.master_plan_area]
value = true
by = "A. Reviewer, Village Engineer"
date = 2025-05-02
reason = "Master Plan map 4."
"""


def _larger_site(folder: Path) -> Path:
    import shutil

    shutil.copytree(REPO / "sample_sites" / "deerfield_larger_site", folder)
    return folder


def _master_plan(report: dict) -> str:
    (f,) = [f for f in report["findings"] if f["rule_id"] == "deerfield.31.06.4.master_plan"]
    return str(f["status"])


def test_a_determinations_toml_in_the_submission_is_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Before: a determinations.toml beside submission.toml was read as the Village's, with
    the applicant's "by" and date. Now it is ignored: the Village's question stays open,
    and the report and the terminal say a file was ignored."""
    from georeview.facts.determinations import IGNORED_NOTE

    sub = _larger_site(tmp_path / "deerfield_larger_site")
    (sub / "determinations.toml").write_text(FORGED)
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--no-terrain", "--no-map",
                       capsys=capsys)  # fmt: skip
    assert code == 0, err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["determinations"]["items"] == []
    assert _master_plan(report) == "needs_info"
    assert IGNORED_NOTE in report["warnings"]
    assert "georeview: warning:" in err
    # named by the reviewer from outside the submission, the same file is the Village's
    given = tmp_path / "village" / "larger.toml"
    given.parent.mkdir()
    given.write_text(GIVEN)
    code, _, err = run("review", sub, "--out", tmp_path / "out2", "--no-terrain", "--no-map",
                       "--determinations", given, capsys=capsys)  # fmt: skip
    assert code == 0, err
    report = json.loads((tmp_path / "out2" / "report.json").read_text())
    assert report["determinations"]["items"][0]["reason"] == "Master Plan map 4."
    assert report["classification"]["extraordinary"] is True


def test_a_batch_zip_determinations_toml_is_ignored_and_a_village_folder_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Before: a batch zip's determinations.toml was read as the Village's. Now it is
    ignored; the Village's own are ``--determinations DIR`` of ``<name>.toml``."""
    src = _larger_site(tmp_path / "src")
    (src / "determinations.toml").write_text(FORGED.replace("false", "true"))
    batch = tmp_path / "batch"
    batch.mkdir()
    _zip_folder(src, batch / "larger.zip")
    code, _, err = run("review", batch, "--out", tmp_path / "out", "--no-map", capsys=capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "out" / "larger" / "report.json").read_text())
    assert report["determinations"]["items"] == []
    assert report["classification"]["extraordinary"] is not True
    village = tmp_path / "village"
    village.mkdir()
    (village / "larger.toml").write_text(GIVEN)
    code, _, err = run("review", batch, "--out", tmp_path / "out2", "--no-map",
                       "--determinations", village, capsys=capsys)  # fmt: skip
    assert code == 0, err
    report = json.loads((tmp_path / "out2" / "larger" / "report.json").read_text())
    assert report["classification"]["extraordinary"] is True
    # a folder of determinations inside the batch is the applicants'
    (batch / "village").mkdir()
    code, _, err = run("review", batch, "--out", tmp_path / "out3", "--no-map",
                       "--determinations", batch / "village", capsys=capsys)  # fmt: skip
    assert code == 2
    assert "lies in the batch folder" in _one_clean_line(err)


@pytest.mark.parametrize("kind", ["inside", "link", "other toml"])
def test_a_determinations_file_is_the_reviewers_own(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture
) -> None:
    """Before: --determinations could name a file in the submission, a link was followed,
    and a TOML that is not a determinations file had its keys echoed."""
    sub = _larger_site(tmp_path / "deerfield_larger_site")
    given = tmp_path / "village.toml"
    given.write_text(GIVEN)
    if kind == "inside":
        path, want = sub / "mine.toml", "lies in the submission"
        path.write_text(GIVEN)
    elif kind == "link":
        path, want = tmp_path / "link.toml", "is a symbolic link"
        path.symlink_to(given)
    else:
        path, want = tmp_path / "settings.toml", "is not a determinations file"
        path.write_text('db_password = "hunter2"\n[secrets]\napi_key = "k"\n')
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--no-terrain", "--no-map",
                       "--determinations", path, capsys=capsys)  # fmt: skip
    assert code == 2
    line = _one_clean_line(err)
    assert want in line
    for secret in ("db_password", "hunter2", "secrets", "api_key"):
        assert secret not in line


def test_a_layers_folder_above_the_submission_is_never_looked_up(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a review run in a shared inbox took ./layers/deerfield, beside the
    applicants' folders, as the Village's layers. Now a looked-up layers folder in or
    above the submission (or the batch) is skipped with a warning."""
    monkeypatch.delenv("GEOREVIEW_LAYERS", raising=False)
    inbox = tmp_path / "inbox"
    planted = _layers(inbox / "layers" / "deerfield")
    sub = write_submission(inbox / "applicant" / "sub", SITE, toml=TOML)
    monkeypatch.chdir(inbox)
    found = find_layers_dir("deerfield", sub)
    assert found.resolve() != planted.resolve()
    batch = inbox / "applicant"
    import georeview.pipeline.layers_folder as lf
    from georeview.errors import DataSourceError

    monkeypatch.setattr(lf, "source_checkout", lambda: None)  # as an installed package
    with pytest.raises(DataSourceError, match=r"not used: .*inbox/layers/deerfield, in or above"):
        lf.find_layers_dir("deerfield", sub, also_not_in=(batch,))
    # the reviewer's own working folder, away from the submissions, is still looked up
    office = tmp_path / "office"
    mine = _layers(office / "layers" / "deerfield")
    monkeypatch.chdir(office)
    assert lf.find_layers_dir("deerfield", sub, also_not_in=(batch,)).resolve() == mine.resolve()


# --------------------------------------------------------------------------- screening names


@pytest.mark.parametrize("suffix", [".gpkg", ".geojson", ".fgb"])
def test_screen_input_fields_never_overwrite_results(
    tmp_path: Path, layers: Path, suffix: str, capsys: pytest.CaptureFixture
) -> None:
    """Before: STATUS, REGULATED, MUNICIPALITY (result names in upper case) overwrote the
    results in .geojson/.fgb and failed .gpkg after the whole run; ``status`` with
    ``in_status`` crashed on duplicate columns. Now every clashing input field is renamed,
    case aside and uniquely, and keeps its values."""
    import pyogrio

    crs = '"crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::3071"}}'
    props = {"PARCELID": "a", "STATUS": "S1", "status": "s2", "in_status": "s3",
             "REGULATED": "R", "MUNICIPALITY": "M", "Name": "n1", "NAME": "n2"}  # fmt: skip
    feat = {"type": "Feature", "properties": props,
            "geometry": json.loads(shapely.to_geojson(SITE))}  # fmt: skip
    src = tmp_path / "parcels.geojson"
    src.write_text('{"type":"FeatureCollection",' + crs + ',"features":[' + json.dumps(feat) + "]}")
    out = tmp_path / f"screened{suffix}"
    code, _, err = run("screen", src, "--layers", layers, "--out", out, "-q", capsys=capsys)
    assert code == 0, err
    row = pyogrio.read_dataframe(out).drop(columns="geometry").iloc[0].to_dict()
    assert len({k.lower() for k in row}) == len(row)  # unique, case aside
    assert row["status"] == "ok"
    assert row["municipality"] == "Testville"
    assert row["regulated"] in (True, 1)
    assert row["in_STATUS_2"] == "S1"
    assert row["in_status_3"] == "s2"
    assert row["in_status"] == "s3"
    assert row["in_REGULATED"] == "R"
    assert row["in_MUNICIPALITY"] == "M"
    assert row["Name"] == "n1"
    assert row["NAME_2"] == "n2"


# --------------------------------------------------------------------------- limits


def test_a_zipped_shapefile_counts_its_uncompressed_size(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a zipped shapefile was counted by its compressed size, so a few kB of zip
    carrying megabytes of geometry passed the upload limit. A 20,000-vertex circle (about
    320 kB of .shp, compressing to a fraction of that) against a 200 kB limit."""
    t = np.linspace(0, 2 * np.pi, 20_000, endpoint=False)
    circle = shapely.Polygon(np.c_[X0 + 550 + 50 * np.cos(t), Y0 + 550 + 50 * np.sin(t)])
    shp = tmp_path / "shp"
    shp.mkdir()
    gpd.GeoDataFrame({"n": [0]}, geometry=[circle], crs=3071).to_file(shp / "site.shp")
    sub = write_submission(tmp_path / "sub", SITE, toml=TOML)
    zpath = sub / "site.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(shp.iterdir()):
            z.write(f, f.name)
    text = (sub / "submission.toml").read_text()
    (sub / "submission.toml").write_text(text.replace('"site.geojson"', '"site.zip"'))
    unpacked = sum(f.stat().st_size for f in shp.iterdir())
    assert zpath.stat().st_size < 200_000 < unpacked
    monkeypatch.setenv("GEOREVIEW_MAX_UPLOAD_BYTES", "200000")
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--layers", layers,
                       "--no-map", "--no-terrain", capsys=capsys)  # fmt: skip
    assert code == 2
    line = _one_clean_line(err)
    assert f"{unpacked:,} bytes exceed the upload limit of 200,000 bytes" in line
    monkeypatch.setenv("GEOREVIEW_MAX_UPLOAD_BYTES", str(unpacked))
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--layers", layers,
                       "--no-map", "--no-terrain", capsys=capsys)  # fmt: skip
    assert code == 0, err


def test_a_site_of_too_many_vertices_is_refused_at_once(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: one polygon of 1,000,000 vertices (16 MB, inside every limit) took 9 minutes
    and 18 GB; 300,000 took 43 s here. Now more than GEOREVIEW_MAX_SUBMISSION_VERTICES
    (100,000) is one line, exit 2; raised, the same site is reviewed."""
    t = np.linspace(0, 2 * np.pi, 100_001, endpoint=False)
    circle = shapely.Polygon(np.c_[X0 + 550 + 50 * np.cos(t), Y0 + 550 + 50 * np.sin(t)])
    n = int(shapely.get_num_coordinates(circle))  # the ring's closing vertex too
    sub = write_submission(tmp_path / "sub", circle, toml=TOML)
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--layers", layers,
                       "--no-map", "--no-terrain", capsys=capsys)  # fmt: skip
    assert code == 2
    assert _one_clean_line(err).endswith(
        f"site: {n:,} vertices exceed the limit of 100,000 (GEOREVIEW_MAX_SUBMISSION_VERTICES)"
    )
    monkeypatch.setenv("GEOREVIEW_MAX_SUBMISSION_VERTICES", str(n))
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--layers", layers,
                       "--no-map", "--no-terrain", capsys=capsys)  # fmt: skip
    assert code == 0, err


# --------------------------------------------------------------------------- units


def test_a_working_crs_in_feet_reads_as_far_as_one_in_metres(tmp_path: Path) -> None:
    """Before: the context margin (a 1,320 ft trace + 250 m = 652.3 m) was used as CRS
    units, so under WI State Plane South in US survey feet (EPSG:2289) the review read
    reference layers within 652 *feet* and missed a creek 1,000 ft (304.8 m) east of the
    site. Now margins are converted with the CRS's unit: the creek is read in both CRSs."""
    from georeview.pipeline.review import review

    layers = _layers(tmp_path / "layers")
    east = X0 + 600 + 1000 * 0.3048  # 1,000 ft east of the site's east edge
    gpd.GeoDataFrame(
        {"GNIS_NAME": ["Far Creek"]},
        geometry=[shapely.LineString([(east, Y0 + 400), (east, Y0 + 700)])],
        crs=3071,
    ).to_file(layers / "hydro.gpkg")
    base = (layers / "layers.toml").read_text()
    sub = write_submission(tmp_path / "sub", SITE, toml=TOML)
    for crs in ("EPSG:3071", "EPSG:2289"):
        (layers / "layers.toml").write_text(
            f'working_crs = "{crs}"\n{base}'
            '[hydrography]\npath = "hydro.gpkg"\nname_field = "GNIS_NAME"\n'
        )
        rev = review(sub, layers, with_terrain=False)
        hydro = rev.map_layers.get("hydrography")
        assert hydro is not None, crs
        assert list(hydro["GNIS_NAME"]) == ["Far Creek"], crs
        # and the site is the same ground in both, 100 m x 100 m, within the two
        # projections' scale factors there (their grid areas differ by 0.07 %)
        assert rev.areas.site_area_sqft == pytest.approx(SITE_SQFT, rel=2e-3), crs


def test_an_applicant_cannot_waive_fees_or_set_the_security_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Deerfield 31.08(2) waives permit and fees for Village activity, and 31.12(2)(A) rests
    the security on the Village Engineer's estimate: both are the Village's record. Planted
    in the applicant's folder, or as keys of submission.toml, they change nothing."""
    sub = _larger_site(tmp_path / "deerfield_larger_site")
    (sub / "determinations.toml").write_text(
        'municipality = "deerfield"\n\n'
        '[determinations.village_activity]\nvalue = true\nby = "Me"\ndate = 2025-05-02\n'
        'reason = "We are the Village."\n\n'
        '[determinations.control_cost_usd]\nvalue = 1.0\nby = "Me"\ndate = 2025-05-02\n'
        'reason = "Cheap."\n'
    )
    code, _, err = run("review", sub, "--out", tmp_path / "out", "--no-terrain", "--no-map",
                       capsys=capsys)  # fmt: skip
    assert code == 0, err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    fees = {i["id"]: i for i in report["fees"]["items"]}
    assert fees["application_fee"]["status"] == "due"
    assert fees["security"]["status"] == "needs_info"  # provisional on the applicant's own
    assert fees["security"]["amount_usd"] == 80_000.00  # 1.25 x the declared 64,000
    # as a key of submission.toml it is refused, naming the file and the field
    toml = sub / "submission.toml"
    (sub / "determinations.toml").unlink()
    forged = toml.read_text().replace("[activity]\n", "[activity]\nvillage_activity = true\n", 1)
    toml.write_text(forged)
    code, _, err = run("review", sub, "--out", tmp_path / "out2", "--no-terrain", "--no-map",
                       capsys=capsys)  # fmt: skip
    assert code == 2
    assert "submission.toml" in err
    assert "village_activity" in err
    assert "Traceback" not in err
