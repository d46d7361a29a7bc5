"""The built package is the product: the wheel and sdist built from this checkout.

All the other tests import georeview from the checkout, so a file the package opens at run
time but the wheel leaves out (``facts/registry.toml`` was one: every installed ``review``
and ``rules`` ended in FileNotFoundError) or a dependency only the test extras bring
(pyarrow, for every ``screen``) passes them all. Here the wheel and sdist are built once per
session (``python -m build``: the sdist, then the wheel from the sdist, as pip and PyPI
do) from a copy of the checkout's own files; one test holds their file lists to
``git ls-files georeview``, and one installs the wheel, without extras, into a new virtualenv
and runs every command from a folder outside the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import geopandas as gpd
import jsonschema
import pandas as pd
import pyogrio
import pytest

from georeview._version import __version__
from georeview.pipeline.outputs import OUTPUT_SUFFIXES

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_sites"
LAYERS = ROOT / "layers"
DANE_MUNIS = ROOT / "tests" / "data" / "wi_dane" / "deerfield_area_munis.gpkg"

#: Every output format `georeview screen` writes: the pipeline's own list, so a format
#: added there is installed-tested here with no edit.
SCREEN_FORMATS: tuple[str, ...] = tuple(OUTPUT_SUFFIXES)

#: Files never to ship: byte code, numba's machine code, build leftovers.
NEVER_SHIPPED = ("__pycache__", ".pyc", ".nbi", ".nbc", ".egg-info")


@dataclass(frozen=True)
class Dist:
    """The built distributions and the package files they must hold."""

    wheel: Path
    sdist: Path
    package_files: tuple[str, ...]  # paths under georeview/ in the checkout (posix)


def _package_files() -> list[str]:
    """Every file under georeview/ that the checkout holds: git's list, else the tree.

    Untracked files git does not ignore count too: a data file added but not yet committed
    must have a pattern by the time it is.
    """
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "georeview"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
        files = [f for f in out if f and (ROOT / f).is_file()]
    except (OSError, subprocess.CalledProcessError):
        files = []
    if not files:  # not a git checkout (an unpacked sdist, say)
        files = [
            p.relative_to(ROOT).as_posix()
            for p in (ROOT / "georeview").rglob("*")
            if p.is_file() and not any(n in p.as_posix() for n in NEVER_SHIPPED)
        ]
    return sorted(files)


def _source_copy(dest: Path, package_files: list[str]) -> Path:
    """The files a build reads: the top-level files (pyproject.toml, README.md, LICENSE...)
    and the package. A copy, so the build leaves no build/ or egg-info in the checkout."""
    for f in ROOT.iterdir():
        if f.is_file():
            shutil.copy2(f, dest / f.name)
    for rel in package_files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    return dest


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """The sdist and the wheel built from it, once per session."""
    files = _package_files()
    src = _source_copy(tmp_path_factory.mktemp("src"), files)
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = out.glob("georeview-*.whl")
    (sdist,) = out.glob("georeview-*.tar.gz")
    return Dist(wheel, sdist, tuple(files))


def _wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def _sdist_names(sdist: Path) -> set[str]:
    """The sdist's paths without its top folder (``georeview-0.1.0/``)."""
    with tarfile.open(sdist) as t:
        return {n.split("/", 1)[1] for n in t.getnames() if "/" in n}


def test_every_package_file_ships_in_the_wheel_and_the_sdist(dist: Dist) -> None:
    """Before: package-data listed patterns by kind; facts/registry.toml matched none."""
    wheel, sdist = _wheel_names(dist.wheel), _sdist_names(dist.sdist)
    assert "georeview/facts/registry.toml" in dist.package_files
    assert any(f.endswith(".py") for f in dist.package_files)
    assert [f for f in dist.package_files if f not in wheel] == []
    assert [f for f in dist.package_files if f not in sdist] == []
    shipped = [n for n in wheel | sdist if n.startswith("georeview/")]
    assert [n for n in shipped if any(bad in n for bad in NEVER_SHIPPED)] == []
    # the console script and the core dependency screening needs
    with zipfile.ZipFile(dist.wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        requires = [
            line.split(":", 1)[1].strip()
            for line in z.read(meta).decode().splitlines()
            if line.startswith("Requires-Dist:") and "extra ==" not in line
        ]
        entry = next(n for n in z.namelist() if n.endswith("entry_points.txt"))
        assert "georeview = georeview.cli:main" in z.read(entry).decode()
    assert any(r.startswith("pyarrow") for r in requires), requires


# --- the installed package, run from outside the checkout ---------------------------------

#: An inspection log and rainfall small enough to check by hand on the June 2025 calendar
#: (Somers: an inspection within 1 day after a rain of 0.5 in or more, weekly otherwise).
#: Rains >= 0.5 in: Jun 4 (inspected Jun 5), Jun 10 (same day), Jun 17, Jun 21, Jun 27 (no
#: inspection that day or the next): 5 events, 3 missed.
LOG = (
    "date,inspector,phase\n2025-06-02,A. Smith,grading\n2025-06-05,A. Smith,grading\n"
    "2025-06-10,B. Jones,utilities\n2025-06-24,B. Jones,paving\n2025-06-30,C. Lee,final\n"
)
RAIN = (
    "date,rain_in\n2025-06-01,0\n2025-06-04,0.62\n2025-06-10,0.50\n2025-06-12,0.49\n"
    "2025-06-17,1.10\n2025-06-21,0.75\n2025-06-27,0.80\n2025-07-01,0.30\n"
)


class Installed:
    """A new virtualenv holding the wheel; runs ``georeview`` in a folder outside the checkout."""

    def __init__(self, venv: Path, work: Path) -> None:
        self.exe = venv / "bin" / "georeview"
        self.work = work
        # nothing of the checkout or of this run's environment leaks in: no PYTHONPATH,
        # numba caches where an installation's own would go, layers only as given
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"PYTHONPATH", "NUMBA_CACHE_DIR", "GEOREVIEW_LAYERS", "VIRTUAL_ENV"}
        }

    def run(self, *args: object, expect: int = 0, **env: str) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [str(self.exe), *map(str, args)],
            cwd=self.work,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
        assert proc.returncode == expect, (args, proc.stdout[-2000:], proc.stderr[-2000:])
        assert "Traceback" not in proc.stderr
        return proc


@pytest.fixture(scope="module")
def installed(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """The wheel installed with pip (its cache allowed) into a new virtualenv, no extras.

    No extra: every command tested here must work from a plain `pip install georeview`
    (the `dask` extra only adds `screen --workers/--scheduler`). The virtualenv (about
    1 GB) is removed afterwards, not left to pytest's rotation of its temporary folders.
    """
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(dist.wheel)],
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    work = tmp_path_factory.mktemp("work")
    assert not work.resolve().is_relative_to(ROOT)
    yield Installed(venv, work)
    shutil.rmtree(venv, ignore_errors=True)


def _report(folder: Path) -> dict:
    """report.json, held to the checkout's schema, with the other outputs beside it."""
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    schema = json.loads((ROOT / "georeview/report/report.schema.json").read_text("utf-8"))
    jsonschema.validate(report, schema)
    assert report["findings"]
    for name in ("report.html", "map.html", "layers.gpkg"):
        assert (folder / name).stat().st_size > 1000, name
    return report


def _parcels(path: Path) -> int:
    """Five Deerfield sample sites as one parcels file; returns the number of parcels."""
    names = {
        "deerfield_minor_home": "site.geojson",
        "deerfield_larger_site": "site.gpkg",
        "deerfield_outside": "site.geojson",
        "deerfield_small_patio": "site.geojson",
        "deerfield_etj_shed": "site.geojson",
    }
    frames = [
        gpd.read_file(SAMPLES / n / f).to_crs(3071).assign(PARCELID=n)[["PARCELID", "geometry"]]
        for n, f in names.items()
    ]
    gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), crs=3071).to_file(path)
    return len(names)


def _rows(path: Path) -> int:
    """Rows of a screening output, read the way a user's tool reads it."""
    if path.suffix == ".csv":
        return len(pd.read_csv(path, dtype=str))
    if path.suffix == ".parquet":
        return len(pd.read_parquet(path))
    if path.suffix in {".gpkg", ".fgb", ".geojson", ".shp"}:
        return len(pyogrio.read_dataframe(path, read_geometry=False))
    if path.suffix == ".xlsx":
        # as a spreadsheet reads it: the first sheet's rows below its header
        return len(pd.read_excel(path, sheet_name=0, dtype=str))
    pytest.fail(f"no reader in this test for {path.suffix}: add one")


@pytest.mark.slow
def test_installed_wheel_runs_every_command_outside_the_checkout(installed: Installed) -> None:
    """Before: every installed review and rules ended in FileNotFoundError (registry.toml),
    and every screen in ImportError (pyarrow.feather)."""
    run, work = installed.run, installed.work
    assert run("--version").stdout.strip() == f"georeview {__version__}"

    rules = run("rules").stdout
    assert "17." in rules  # both ordinances' sections
    assert "31." in rules
    assert "17." in run("rules", "somers", "--coverage").stdout

    # an installation has no layers of its own: the error says how to give them
    proc = run("review", SAMPLES / "deerfield_minor_home", "--out", "none", expect=2)
    assert proc.stderr.count("\n") == 1
    assert "--layers" in proc.stderr
    assert "GEOREVIEW_LAYERS" in proc.stderr

    # without terrain, the layers found through $GEOREVIEW_LAYERS
    run("review", SAMPLES / "deerfield_minor_home", "--out", "minor", "--no-terrain",
        GEOREVIEW_LAYERS=str(LAYERS))  # fmt: skip
    minor = _report(work / "minor")
    assert any("Terrain skipped" in w for w in minor["warnings"])
    assert minor["measures"]["downstream"]["reaches_water_within_quarter_mile"] is None
    assert minor["measures"]["max_slope_pct"] is None

    # with terrain: the first trace in the new environment compiles the flow kernels
    # (numba caches them in site-packages) and says so, once
    proc = run("review", SAMPLES / "deerfield_larger_site", "--out", "larger",
               "--layers", LAYERS / "deerfield")  # fmt: skip
    assert proc.stderr.count("compiling the flow kernels") == 1, proc.stderr
    larger = _report(work / "larger")
    assert larger["measures"]["downstream"]["length_ft"] == 1320  # 1/4 mile, 31.06
    assert larger["measures"]["downstream"]["discharge_points"]
    assert larger["measures"]["max_slope_pct"] > 0
    proc = run("review", SAMPLES / "somers_complete_plan", "--out", "somers",
               "--layers", LAYERS / "somers")  # fmt: skip
    assert "compiling" not in proc.stderr  # cached by the first
    assert _report(work / "somers")["measures"]["downstream"]["discharge_points"]

    n = _parcels(work / "parcels.gpkg")
    for suffix in SCREEN_FORMATS:
        out = work / f"screened{suffix}"
        run("screen", "parcels.gpkg", "--layers", LAYERS / "deerfield", "--out", out.name)
        assert _rows(out) == n, suffix

    run("sitemap", SAMPLES / "deerfield_minor_home", "--out", "sheet.pdf",
        "--layers", LAYERS / "deerfield")  # fmt: skip
    assert (work / "sheet.pdf").read_bytes()[:5] == b"%PDF-"

    (work / "log.csv").write_text(LOG, encoding="utf-8")
    (work / "rain.csv").write_text(RAIN, encoding="utf-8")
    run("inspections", "log.csv", "--rain", "rain.csv", "--municipality", "somers",
        "--out", "inspections.json")  # fmt: skip
    result = json.loads((work / "inspections.json").read_text(encoding="utf-8"))
    assert (result["n_rain_events"], len(result["missed_rain"])) == (5, 3)

    shipped = LAYERS / "deerfield"
    run("layers", "build", "built/deerfield", "--municipality", "deerfield", "--name",
        "Deerfield", "--kind", "V", "--boundaries", DANE_MUNIS,
        "--floodplain", shipped / "floodplain.gpkg", "--wetlands", shipped / "wetlands.gpkg",
        "--flowlines", shipped / "hydrography.gpkg", "--flowlines-layer", "NHDFlowline",
        "--waterbodies", shipped / "hydrography.gpkg", "--waterbodies-layer", "NHDWaterbody",
        "--soils", shipped / "soils.gpkg", "--roads", shipped / "roads.gpkg",
        "--dem", shipped / "dem.tif", "--dem-vertical-units", "m",
        "--city-class", "Madison=2", "--vintage", "boundaries=2025-01")  # fmt: skip
    assert (work / "built/deerfield/layers.toml").is_file()
    # the built folder reviews the sample as the shipped one does (layers and paths aside)
    run("review", SAMPLES / "deerfield_minor_home", "--out", "minor_built", "--no-terrain",
        "--layers", "built/deerfield")  # fmt: skip
    built = _report(work / "minor_built")
    assert built["findings"] == minor["findings"]

    # the case store and the web workspace are extras: without them, one line says which
    for command in (("case", "list"), ("serve",), ("users", "list")):
        proc = run(*command, "--workspace", "ws", expect=2)
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert "pip install" in proc.stderr
