"""A standing fuzz test of ``georeview review`` over hostile submissions (issue 15, item 5).

Hypothesis draws a batch folder of one or two entries, each a submission folder or a zip
of one: ``submission.toml`` built from drawn keys and values (NaN, infinities, dates at
the ends of the calendar, wrong types, unknown keys, nested arrays), file names (control
characters, ``..``, absolute paths, links, a FIFO), site geometry (NaN and huge
coordinates, rings of one to six points, points and lines) and zip layouts (escaping
entries, a file and a folder of one name, duplicates, encrypted and Deflate64 flags).
The command line runs in process and must:

* exit 0, 2 (refused) or 3 (the batch finished with error rows), never anything else
  (1 is an internal error: a bug);
* print nothing to stderr on 0, exactly one ``georeview: error:`` line otherwise, and never a
  traceback or a raw Python warning;
* write nothing outside ``--out`` and the scratch folder (every other file under the
  example's folder is unchanged, and the scratch folder is empty afterwards);
* open no file outside the submission, the layers and the outputs: Python-level opens
  are recorded with an audit hook (PEP 578), and a canary site beside the batch, with an
  area no drawn site has, must never be measured.

Budget: 100 examples, derandomized (the same examples on every run and in CI), about
30 s on the shared 2-core machine; the layers have no DEM so that each review is quick.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import math
import os
import shutil
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Any

import geopandas as gpd
import pytest
import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from georeview.cli import main

X0, Y0 = 500_000.0, 300_000.0
#: The canary's area: 123 m x 77 m = 9,471 m2, no drawn site has it (they are <= 50 m wide).
CANARY = shapely.box(X0 + 100, Y0 + 100, X0 + 223, Y0 + 177)
_OPENED: list[str] = []
_RECORD = [False]


def _audit(event: str, args: tuple) -> None:
    if _RECORD[0] and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # cannot be removed; records only while _RECORD[0] is set


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    layers = root / "layers"
    layers.mkdir()
    gpd.GeoDataFrame(
        {"n": [0]}, geometry=[shapely.box(X0, Y0, X0 + 2000, Y0 + 2000)], crs=3071
    ).to_file(layers / "boundary.gpkg")
    (layers / "layers.toml").write_text(
        'municipality = "deerfield"\n[boundary]\npath = "boundary.gpkg"\n'
    )
    gpd.GeoDataFrame({"n": [0]}, geometry=[CANARY], crs=3071).to_file(root / "secret.geojson")
    return root


# --------------------------------------------------------------------------- strategies

_CRS = {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::3071"}}
odd_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=12
)
entry_names = st.one_of(
    st.sampled_from(["..", ".", "...", "a", "A", "a.zip", "=cmd", "\x01javascript:x", " ", "-rf"]),
    odd_text,
).filter(lambda s: s not in ("", ".", "..") and "/" not in s and "\x00" not in s)
file_names = st.one_of(
    st.just("site.geojson"),
    st.sampled_from(
        [
            "../secret.geojson",
            "../../secret.geojson",
            "SECRET_ABS",
            "link.geojson",
            "fifo.geojson",
            "sub/../site.geojson",
            "site.GEOJSON",
            "site.kml",
            "",
            ".",
            "sitemap",
        ]
    ),
    odd_text,
)
numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 1e308, 5e-324]),
)
dates = st.one_of(
    st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)),
    st.sampled_from([dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(2025, 5, 1)]),
)
scalars = st.one_of(numbers, dates, st.booleans(), odd_text)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
activity = st.dictionaries(
    st.sampled_from(
        [
            "fill_cubic_yards",
            "pipe_length_ft",
            "lots_created",
            "kinds",
            "start_date",
            "end_date",
            "land_division_acres",
            "building_permit_days",
            "control_cost_usd",
            "on_platted_lot",
            "fil_cubic_yards",
        ]
    ),
    st.one_of(values, st.just(["building"]), st.just(["grading", "road"])),
    max_size=5,
)
tables = st.dictionaries(
    st.sampled_from(["site_map", "dewatering", "hydrology", "soil_loss", "plan"]),
    st.dictionaries(
        st.sampled_from(
            ["pump_rate_gpm", "tc_pre_hr", "scale_ft_per_inch", "contours", "grid_layer", "x"]
        ),
        st.one_of(values, file_names),
        max_size=2,
    ),
    max_size=2,
)
coords = st.one_of(
    st.floats(min_value=0, max_value=50),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e300]),
)
rings = st.lists(st.tuples(coords, coords), min_size=1, max_size=6)
geometries = st.one_of(
    st.builds(lambda r: {"type": "Polygon", "coordinates": [_closed(r)]}, rings),
    st.builds(lambda r: {"type": "Polygon", "coordinates": [r]}, rings),  # maybe unclosed
    st.builds(lambda r: {"type": "LineString", "coordinates": r}, rings),
    st.builds(lambda p: {"type": "Point", "coordinates": p}, st.tuples(coords, coords)),
    st.just({"type": "Polygon", "coordinates": []}),
)
#: A valid 40 m square: most examples reach the review itself.
SQUARE = {"type": "Polygon", "coordinates": [[[0, 0], [40, 0], [40, 40], [0, 40], [0, 0]]]}
geometries = st.one_of(st.just(SQUARE), geometries)
submissions = st.fixed_dictionaries(
    {
        "municipality": st.sampled_from(["deerfield", "deerfield", "somers", "Deerfield", 5]),
        "site": st.one_of(st.just("site.geojson"), file_names),
        "geometry": geometries,
        "activity": activity,
        "tables": tables,
        "extra": st.dictionaries(
            st.sampled_from(["name", "applicant", "bogus"]), values, max_size=2
        ),
        "raw": st.one_of(
            st.none(), st.none(), st.none(), st.binary(max_size=40), st.just("[" * 3000)
        ),
        "sidecar": st.sampled_from(["none", "none", "link_out", "fifo", "dir"]),
    }
)
zip_layouts = st.fixed_dictionaries(
    {
        "prefix": st.sampled_from(["", "s/", "deep/er/", "../", "/abs/", "C:/"]),
        "junk": st.lists(
            st.sampled_from(
                [
                    "../x.txt",
                    "/etc/x",
                    "s/site.geojson/inner",
                    "dup",
                    "dup",
                    "a/",
                    "a",
                    "layers/deerfield/layers.toml",
                ]
            ),
            max_size=3,
        ),
        "flags": st.sampled_from([None, None, None, "encrypted", "deflate64"]),
    }
)
entries = st.lists(
    st.tuples(entry_names, submissions, st.one_of(st.none(), zip_layouts)), min_size=1, max_size=2
)


def _closed(r: list) -> list:
    return [*r, r[0]]


# --------------------------------------------------------------------------- builders


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return (
            "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        )
    if isinstance(v, (int, dt.date)):
        return str(v) if isinstance(v, int) else v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    # a TOML basic string (JSON escapes control characters as \uXXXX, which TOML reads)
    return json.dumps(str(v), ensure_ascii=False)


def _toml(sub: dict, canary: Path) -> bytes:
    if sub["raw"] is not None:
        return sub["raw"].encode() if isinstance(sub["raw"], str) else sub["raw"]
    site = str(canary) if sub["site"] == "SECRET_ABS" else sub["site"]
    lines = [f"municipality = {_toml_value(sub['municipality'])}", f"site = {_toml_value(site)}"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in sub["extra"].items()]
    lines.append("[activity]")
    lines += [f"{k} = {_toml_value(v)}" for k, v in sub["activity"].items()]
    for name, table in sub["tables"].items():
        lines.append(f"[{name}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items()]
    return ("\n".join(lines) + "\n").encode()


def _write_submission(folder: Path, sub: dict, canary: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "submission.toml").write_bytes(_toml(sub, canary))
    geom = json.loads(json.dumps(sub["geometry"]))
    geom["coordinates"] = _offset(geom["coordinates"])
    fc = {
        "type": "FeatureCollection",
        "crs": _CRS,
        "features": [{"type": "Feature", "properties": {}, "geometry": geom}],
    }
    (folder / "site.geojson").write_text(json.dumps(fc, allow_nan=True))
    (folder / "link.geojson").symlink_to(canary)
    if sub["sidecar"] == "fifo":
        os.mkfifo(folder / "fifo.geojson")
    elif sub["sidecar"] == "link_out":
        (folder / "sitemap").symlink_to(canary.parent, target_is_directory=True)
    elif sub["sidecar"] == "dir":
        (folder / "sitemap").mkdir()
        (folder / "sitemap" / "controls.geojson").symlink_to(canary)


def _offset(c: Any) -> Any:
    if isinstance(c, list) and c and isinstance(c[0], (int, float)):
        return [c[0] + X0 + 500, c[1] + Y0 + 500]
    if isinstance(c, (list, tuple)):
        return [_offset(x) for x in c]
    return c


def _write_zip(path: Path, src: Path, layout: dict) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for f in sorted(src.iterdir()):
            if f.is_file() and not f.is_symlink():
                zf.write(f, layout["prefix"] + f.name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # duplicate names are the point
            for name in layout["junk"]:
                zf.writestr(name, "x")
    if layout["flags"]:
        data = bytearray(path.read_bytes())
        for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
            i = data.find(sig)
            while i >= 0:
                if layout["flags"] == "encrypted":
                    data[i + off] |= 0x1
                else:
                    data[i + off + 2 : i + off + 4] = (9).to_bytes(2, "little")
                i = data.find(sig, i + 4)
        path.write_bytes(bytes(data))


def _snapshot(root: Path, skip: tuple[Path, ...]) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        dirnames[:] = [n for n in dirnames if d / n not in skip]
        for n in filenames:
            p = d / n
            st_ = p.lstat()
            out[str(p)] = (st_.st_size, st_.st_mtime_ns)
    return out


# --------------------------------------------------------------------------- the test


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(batch_entries=entries)
def test_review_never_escapes_never_crashes(base: Path, batch_entries: list) -> None:
    ex = Path(tempfile.mkdtemp(prefix="ex-", dir=base))
    try:
        _one_example(base, ex, batch_entries)
    finally:
        shutil.rmtree(ex, ignore_errors=True)


def _one_example(base: Path, ex: Path, batch_entries: list) -> None:
    canary = base / "secret.geojson"
    batch = ex / "batch"
    batch.mkdir()
    built = ex / "built"
    for i, (name, sub, layout) in enumerate(batch_entries):
        if layout is None:
            target = batch / name
            if target.exists():
                continue
            _write_submission(target, sub, canary)
        else:
            src = built / str(i)
            _write_submission(src, sub, canary)
            z = batch / f"{name}.zip"
            if not z.exists():
                _write_zip(z, src, layout)
    scratch = ex / "scratch"
    scratch.mkdir()
    out = ex / "out"
    layers = base / "layers"
    before = _snapshot(base, (out, scratch))
    err = io.StringIO()
    old_tmp = tempfile.tempdir
    tempfile.tempdir = str(scratch)
    _OPENED.clear()
    _RECORD[0] = True
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["review", str(batch), "--out", str(out), "--layers", str(layers)])
    finally:
        _RECORD[0] = False
        tempfile.tempdir = old_tmp
    text = err.getvalue()
    assert code in (0, 2, 3), text
    assert "Traceback" not in text
    assert "Warning" not in text
    if code == 0:
        assert text == ""
    else:
        lines = text.strip().splitlines()
        assert len(lines) == 1, text
        assert lines[0].startswith("georeview: error: ")
    # nothing written outside --out and the scratch folder, which is left empty
    assert _snapshot(base, (out, scratch)) == before
    assert os.listdir(scratch) == []
    # nothing read outside the batch, the layers and the outputs
    allowed = (batch, layers, out, scratch)
    for p in _OPENED:
        rp = Path(os.path.realpath(p))
        if rp.is_relative_to(base.resolve()):
            assert any(rp.is_relative_to(a.resolve()) for a in allowed), p
    canary_sqft = CANARY.area / 0.3048**2
    summary = out / "summary.csv"
    if summary.exists():
        import csv

        with open(summary, newline="") as fh:
            for row in csv.DictReader(fh):
                assert row["status"] in ("ok", "error"), row
                if row["site_area_sqft"]:
                    assert abs(float(row["site_area_sqft"]) - canary_sqft) > 1.0, row
