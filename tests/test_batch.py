"""Batch review of a folder of submissions and zip files (issue 6, item 2).

Layers are built in a temp folder: a 1,000 m x 1,000 m village (EPSG:3071, metres)
with no neighbours. Areas expected below are hand-worked from the squares drawn
(1 m = 1/0.3048 ft exactly, so 100 m x 100 m = 107,639.10 sq ft).
"""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import geopandas as gpd
import pytest
import shapely

from georeview.errors import DataSourceError, LimitError
from georeview.pipeline.batch import review_many
from georeview.pipeline.submissions import is_batch
from georeview.pipeline.zipsafe import MAX_UNZIPPED_BYTES, extract_zip

CRS = "EPSG:3071"
X0, Y0 = 500_000.0, 300_000.0
SQFT_PER_SQM = 1 / 0.3048**2


def _write(path: Path, geoms: list, crs: str = CRS) -> None:
    gpd.GeoDataFrame({"n": list(range(len(geoms)))}, geometry=geoms, crs=crs).to_file(path)


@pytest.fixture
def layers(tmp_path: Path) -> Path:
    d = tmp_path / "layers"
    d.mkdir()
    _write(d / "boundary.gpkg", [shapely.box(X0, Y0, X0 + 1000, Y0 + 1000)])
    (d / "layers.toml").write_text(
        'municipality = "deerfield"\nworking_crs = "EPSG:3071"\n'
        '[boundary]\npath = "boundary.gpkg"\n'
    )
    return d


def _submission(folder: Path, side_m: float, *, kinds: str = "[]") -> Path:
    folder.mkdir(parents=True)
    box = shapely.box(X0 + 100, Y0 + 100, X0 + 100 + side_m, Y0 + 100 + side_m)
    _write(folder / "site.geojson", [box])
    _write(folder / "disturbance.geojson", [box])  # the whole site disturbed, as drawn
    (folder / "submission.toml").write_text(
        'municipality = "deerfield"\nsite = "site.geojson"\ndisturbance = "disturbance.geojson"\n'
        f"[activity]\nkinds = {kinds}\n"
        "fill_cubic_yards = 0\npipe_length_ft = 0\nlots_created = 0\n"
    )
    return folder


def _zip(folder: Path, zpath: Path, prefix: str = "") -> None:
    with zipfile.ZipFile(zpath, "w") as z:
        for f in sorted(folder.iterdir()):
            z.write(f, prefix + f.name)


def test_batch_reports_summary_and_error_rows(tmp_path: Path, layers: Path) -> None:
    batch = tmp_path / "batch"
    _submission(batch / "a_large", 100.0)  # 107,639 sq ft: >= 4,000 sq ft and >= 1 acre: major
    _submission(batch / "b_small", 10.0)  # 1,076 sq ft: under 4,000 sq ft: not regulated
    broken = _submission(batch / "c_broken", 10.0)
    (broken / "site.geojson").unlink()  # names a missing file -> error row, the rest finish
    src = _submission(tmp_path / "zipped", 50.0)
    _zip(src, batch / "d_zipped.zip", prefix="d_zipped/")
    (batch / "e_evil.zip").write_bytes(b"")
    with zipfile.ZipFile(batch / "e_evil.zip", "w") as z:
        z.writestr("../escape.txt", "x")
    assert is_batch(batch)
    assert not is_batch(batch / "a_large")

    out = tmp_path / "out"
    res = review_many(batch, out, layers_dir=layers)
    names = [r["name"] for r in res.rows]
    assert names == ["a_large", "b_small", "c_broken", "d_zipped", "e_evil"]
    by = {r["name"]: r for r in res.rows}
    assert by["a_large"]["status"] == "ok"
    assert by["a_large"]["category"] == "major"
    assert by["a_large"]["site_area_sqft"] == pytest.approx(100 * 100 * SQFT_PER_SQM, abs=0.1)
    assert by["b_small"]["regulated"] == "no"
    assert by["d_zipped"]["status"] == "ok"
    # 50 m x 50 m = 26,909.8 sq ft: regulated (>= 4,000 sq ft), minor (< 1 acre = 43,560 sq ft)
    assert by["d_zipped"]["category"] == "minor"
    assert by["c_broken"]["status"] == "error"
    assert "site.geojson" in by["c_broken"]["error"]
    assert by["e_evil"]["status"] == "error"
    assert "outside the folder" in by["e_evil"]["error"]
    assert not (tmp_path / "escape.txt").exists()
    for name in ("a_large", "b_small", "d_zipped"):
        rep = json.loads((out / name / "report.json").read_text())
        assert rep["municipality"] == "deerfield"
        assert (out / name / "report.html").is_file()
        assert (out / name / "map.html").is_file()
    with open(res.summary_csv, newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [r["name"] for r in table] == names
    sites = gpd.read_file(res.sites_gpkg)
    assert sorted(sites["name"]) == ["a_large", "b_small", "d_zipped"]
    assert sites.area.sum() == pytest.approx(100**2 + 10**2 + 50**2, rel=1e-9)
    # a second run refuses to overwrite without being told
    with pytest.raises(Exception, match="overwrite"):
        review_many(batch, out, layers_dir=layers)
    again = review_many(batch, out, layers_dir=layers, overwrite=True)
    assert [r["status"] for r in again.rows] == [r["status"] for r in res.rows]


@pytest.mark.parametrize(
    ("member", "message"),
    [("/abs/path.txt", "outside"), ("a/../../up.txt", "outside"), ("C:/win.txt", "outside")],
)
def test_extract_zip_refuses_escaping_entries(tmp_path: Path, member: str, message: str) -> None:
    z = tmp_path / "x.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr(member, "x")
    with pytest.raises(DataSourceError, match=message):
        extract_zip(z, tmp_path / "dest")


def test_extract_zip_refuses_symlinks_and_bombs(tmp_path: Path) -> None:
    z = tmp_path / "link.zip"
    info = zipfile.ZipInfo("link")
    info.external_attr = 0o120777 << 16
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(DataSourceError, match="symbolic link"):
        extract_zip(z, tmp_path / "d1")
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("zeros.bin", b"\0" * 2_000_000)  # compresses to about 2 kB
    with pytest.raises(LimitError, match="exceeds"):
        extract_zip(bomb, tmp_path / "d2", max_bytes=1_000_000)
    assert extract_zip(bomb, tmp_path / "d3", max_bytes=MAX_UNZIPPED_BYTES).is_dir()
