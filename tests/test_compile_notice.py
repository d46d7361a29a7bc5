"""The first trace in a new environment compiles the flow kernels; the command says so, once.

numba caches the machine code (``cache=True``); whether the cache is cold is read from its
index before anything compiles (``_flowkernels.cache_is_cold``), never from a time. Real
processes, each with its own fresh ``NUMBA_CACHE_DIR``, as a new installation has.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from georeview.measure.flow_routing import COMPILE_NOTICE

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_sites" / "deerfield_minor_home"
LAYERS = ROOT / "layers" / "deerfield"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return {**env, **extra}


def _review(out: Path, *flags: str, **env: str) -> subprocess.CompletedProcess:
    argv = ["review", str(SAMPLE), "--out", str(out), "--layers", str(LAYERS), "--no-map"]
    proc = subprocess.run(
        [sys.executable, "-m", "georeview", *argv, *flags],
        capture_output=True,
        text=True,
        env=_env(**env),
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.slow
def test_first_compile_is_announced_once(tmp_path: Path) -> None:
    """Before: about 30 s of silence on the first review of a new environment."""
    cache = tmp_path / "numba"
    first = _review(tmp_path / "a", NUMBA_CACHE_DIR=str(cache))
    assert first.stderr.count(COMPILE_NOTICE) == 1, first.stderr
    assert first.stderr.startswith(f"georeview: {COMPILE_NOTICE}\n")
    assert list(cache.rglob("*.nbi"))  # numba wrote its cache where it was told
    second = _review(tmp_path / "b", NUMBA_CACHE_DIR=str(cache))
    assert "compiling" not in second.stderr
    # --quiet: nothing, even when compiling
    quiet = _review(tmp_path / "c", "-q", NUMBA_CACHE_DIR=str(tmp_path / "numba_q"))
    assert quiet.stderr == ""
    # without a trace (--no-terrain) nothing compiles and nothing is said
    flat = _review(tmp_path / "d", "--no-terrain", NUMBA_CACHE_DIR=str(tmp_path / "numba_d"))
    assert "compiling" not in flat.stderr


def test_no_writable_cache_folder_falls_back_to_the_temporary_directory(tmp_path: Path) -> None:
    """Before: a package whose __pycache__ and ~/.cache are both unwritable failed at import
    ("RuntimeError: cannot cache function '_sortable': no locator available")."""
    pkg = tmp_path / "site"
    shutil.copytree(
        ROOT / "georeview", pkg / "georeview", ignore=shutil.ignore_patterns("__pycache__")
    )
    # a file where numba wants a folder: no in-tree cache (root ignores permissions)
    (pkg / "georeview" / "measure" / "__pycache__").write_text("")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    code = (
        "import numba\n"
        "from georeview.measure import _flowkernels as k\n"
        "print(numba.config.CACHE_DIR)\n"
        "print(k.cache_is_cold())\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in {"NUMBA_CACHE_DIR", "XDG_CACHE_HOME"}}
    # HOME a file: numba's user-wide cache folder (~/.cache/numba) cannot be made either
    # (run in the copy: python -c puts the working folder first on sys.path)
    env |= {"PYTHONPATH": str(pkg), "HOME": os.devnull, "TMPDIR": str(tmp)}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=pkg, capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    folder, cold = proc.stdout.split("\n")[:2]
    assert Path(folder).parent == tmp
    assert Path(folder).name.startswith("georeview-numba-")
    assert cold == "True"  # a new folder holds nothing yet
