"""A command imports only what it uses, and a one-shot command leaves a settled heap.

Each case runs the command line in a fresh interpreter (``python -m georeview`` as a
reviewer runs it) and reads back which modules that process imported: a library
loaded at import time anywhere in the chain (``georeview/__init__``, ``cli.main``,
``report/__init__``, ``pipeline.review``) shows here. folium belongs to the map,
matplotlib to the exhibit and the sheet (the exhibit is drawn in a forked child, so
the reviewing process itself never loads it), numba and the flow kernels to the
trace, Django to ``serve`` and ``users``, dask to a scheduler.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_sites" / "deerfield_minor_home"

#: Never imported by a command that does not use them.
OPTIONAL = ("folium", "branca", "matplotlib", "numba", "django", "dask", "distributed")
#: What ``--help`` and ``--version`` must not wait for either.
HEAVY = (*OPTIONAL, "geopandas", "pandas", "numpy", "shapely", "pyproj", "rasterio", "pydantic")

#: Runs ``python -m georeview ARGS`` as its own process does, then prints the top-level
#: modules loaded and how many objects the collector holds frozen.
PROBE = """\
import gc, json, runpy, sys
sys.argv = ["georeview", *sys.argv[1:]]
code = 0
try:
    runpy.run_module("georeview", run_name="__main__", alter_sys=True)
except SystemExit as e:
    code = e.code
top = sorted({m.split(".")[0] for m in sys.modules})
flow = "georeview.measure._flowkernels" in sys.modules
print(json.dumps({"code": code, "modules": top, "flow": flow, "frozen": gc.get_freeze_count()}))
"""


def run(*args: str) -> dict:
    """The probe's report of one command line, run from the checkout."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["code"] in (0, None), out.stderr
    return report


def loaded(report: dict, names: tuple[str, ...]) -> list[str]:
    return [n for n in names if n in report["modules"]]


def test_import_of_the_package_and_the_cli_is_light() -> None:
    code = "import sys, georeview, georeview.cli.main; print(' '.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        check=True,
    )
    top = {m.split(".")[0] for m in out.stdout.split()}
    assert [n for n in HEAVY if n in top] == []


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["review", "--help"]])
def test_help_and_version_load_no_library(args: list[str]) -> None:
    assert loaded(run(*args), HEAVY) == []


def test_review_without_map_or_terrain_loads_none_of_the_optional(tmp_path: Path) -> None:
    r = run("review", str(SAMPLE), "--out", str(tmp_path), "-q", "--no-map", "--no-terrain")
    assert (tmp_path / "report.html").exists()
    assert loaded(r, OPTIONAL) == []
    assert not r["flow"]


def test_review_with_map_loads_folium_not_the_trace_nor_the_exhibits_plotting(
    tmp_path: Path,
) -> None:
    r = run("review", str(SAMPLE), "--out", str(tmp_path), "-q", "--no-terrain")
    assert (tmp_path / "map.html").exists()
    assert "folium" in r["modules"]  # the map is made here...
    # ...the exhibit in a forked child, so this process never loads matplotlib
    assert loaded(r, ("matplotlib", "numba", "django", "dask")) == []
    assert not r["flow"]


def test_one_shot_command_settles_its_heap_for_the_exit(tmp_path: Path) -> None:
    # the interpreter's exit then skips full collections over every library's objects
    r = run("review", str(SAMPLE), "--out", str(tmp_path), "-q", "--no-map", "--no-terrain")
    assert r["frozen"] > 10_000


def test_main_called_in_process_leaves_the_collector_alone(tmp_path: Path) -> None:
    import gc

    from georeview.cli import main

    before = gc.get_freeze_count()
    assert main(["rules", "deerfield", "-q"]) == 0
    assert gc.get_freeze_count() == before


def same_but_ids(a: Path, b: Path) -> bool:
    """Equal once folium's random element ids (32 hex digits, new on every map) are blanked."""
    import re

    def blank(p: Path) -> bytes:
        return re.sub(rb"_[0-9a-f]{32}", b"_ID", p.read_bytes())

    return blank(a) == blank(b)


def test_exhibit_drawn_aside_is_the_exhibit_drawn_here(tmp_path: Path) -> None:
    from georeview.pipeline.review import review
    from georeview.report import write_reports

    rev = review(SAMPLE, with_terrain=False)
    here = write_reports(rev, tmp_path / "here", with_layers=False)
    aside = write_reports(rev, tmp_path / "aside", with_layers=False, exhibit_aside=True)
    assert b"data:image/png;base64," in here["html"].read_bytes()
    assert same_but_ids(here["html"], aside["html"])


def test_aside_gives_the_serial_answer_when_the_child_fails() -> None:
    from georeview.report.aside import aside

    calls: list[int] = []

    def fails_in_the_child_only() -> int:
        calls.append(os.getpid())
        if os.getpid() != parent:
            raise RuntimeError("child")
        return 7

    parent = os.getpid()
    assert aside(fails_in_the_child_only)() == 7
    assert calls == [parent]  # the child's call was in its own memory


@pytest.mark.parametrize("where", ["cache", "templates", "key"])
def test_compiled_templates_are_not_read_from_a_folder_others_may_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Jinja runs the cached code it loads: a cache folder on the way that another user may
    write (mode 777) leaves the templates compiled, with no cache; a private one is used."""
    from georeview.pipeline import jurisdictions as pj
    from georeview.report import _bytecode_cache, template_env

    folder = tmp_path / "cache"
    monkeypatch.setenv("GEOREVIEW_CACHE_DIR", str(folder))
    monkeypatch.setattr(pj, "_WARNED", set())
    env = template_env.__wrapped__()
    assert env.bytecode_cache is not None  # a private folder: cached
    key_folder = next((folder / "templates").iterdir())
    target = {"cache": folder, "templates": folder / "templates", "key": key_folder}[where]
    target.chmod(0o777)
    assert _bytecode_cache(env) is None
