"""Faults in batch runs (issue 8, item 3): nothing lost, nothing partial, the error reported.

* A Dask worker process killed (SIGKILL) while it screens a partition: the nanny restarts
  it and the scheduler runs the partition again, so the output is byte for byte the
  single-process output. When the scheduler gives up (``allowed-failures`` reached) the
  run ends with :class:`~georeview.errors.ComputeError` (exit 2, one line), no output
  file exists, the finished partitions are kept, and running again resumes to the same
  bytes.
* A partition that fails while others run on threads of the process: the run stops with
  its one line (exit 2) once the running partitions have finished and been kept, with
  no thread left and the caller's warning filters restored; running again resumes to the
  same bytes.
* A write that fails (disk full, ``OSError(ENOSPC)`` raised by the writer) while the
  screening output or a batch review's summary.csv / report.json is written: no file
  under the final name, no temporary file left, the error reported as one line with exit
  2 (or, for one submission of a batch, as its error row), and the next run gives the
  complete output with every row.

The interrupted-run resume on real parcels is tests/test_screen.py
(``test_cambridge_resume_after_interruption``).
"""

from __future__ import annotations

import csv
import errno
import os
import signal
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

import georeview.pipeline.run as screen_mod
from georeview.cli import main
from georeview.errors import DataSourceError
from georeview.pipeline.batch import review_many
from georeview.pipeline.partitions import Source
from georeview.pipeline.run import run_screen

X0, Y0 = 500_000.0, 300_000.0  # EPSG:3071
PARTITION = 25
N_PARCELS = 100  # 4 partitions


def _write(path: Path, cols: dict, geoms: list) -> None:
    gpd.GeoDataFrame(cols, geometry=geoms, crs=3071).to_file(path)


@pytest.fixture(scope="module")
def village(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("fault_layers")
    v = shapely.box(X0, Y0, X0 + 600, Y0 + 600)
    _write(d / "boundary.gpkg", {"n": [0]}, [v])
    town = shapely.box(X0 - 5000, Y0 - 5000, X0 + 6000, Y0 + 6000).difference(v)
    _write(d / "neighbors.gpkg", {"CTV": ["T"], "MCD_NAME": ["Town of Test"]}, [town])
    _write(d / "wetlands.gpkg", {"n": [0]}, [shapely.box(X0 + 100, Y0 + 100, X0 + 180, Y0 + 180)])
    (d / "layers.toml").write_text(
        'municipality = "deerfield"\nvillage_name = "Testville"\n'
        '[boundary]\npath = "boundary.gpkg"\n[neighbors]\npath = "neighbors.gpkg"\n'
        '[wetlands]\npath = "wetlands.gpkg"\n'
    )
    return d


@pytest.fixture(scope="module")
def parcels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("fault_parcels") / "parcels.gpkg"
    side = int(N_PARCELS**0.5)
    xs, ys = np.meshgrid(np.arange(side) * 120.0 + X0 - 300, np.arange(side) * 120.0 + Y0 - 300)
    geoms = list(shapely.box(xs.ravel(), ys.ravel(), xs.ravel() + 110, ys.ravel() + 110))
    _write(p, {"PARCELID": [f"p{i:03d}" for i in range(N_PARCELS)]}, geoms)
    return p


@pytest.fixture(scope="module")
def expected(village: Path, parcels: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The single-process output, uninterrupted."""
    out = tmp_path_factory.mktemp("fault_expected") / "screened.csv"
    s = run_screen(parcels, village, out, partition_size=PARTITION)
    assert s.partitions == N_PARCELS // PARTITION
    return out.read_bytes()


def _rows(path: Path) -> int:
    with open(path, newline="") as fh:
        return sum(1 for _ in csv.DictReader(fh))


# --------------------------------------------------------------------------- Dask worker killed


@dataclass(frozen=True)
class KillingSource(Source):
    """A parcel source whose worker dies (SIGKILL) reading partition ``start == 50``.

    With ``once`` the first reader leaves a marker file and dies, the retry reads; without
    it every reader dies. Pickled by reference to the worker processes (this module is on
    their ``sys.path``, which spawned processes inherit).
    """

    marker: str = ""
    once: bool = True

    def read(self, start: int, count: int):
        if start == 2 * PARTITION:
            marker = Path(self.marker)
            if not (self.once and marker.exists()):
                marker.touch()
                os.kill(os.getpid(), signal.SIGKILL)
        return super().read(start, count)


def _killing(monkeypatch: pytest.MonkeyPatch, marker: Path, *, once: bool) -> None:
    monkeypatch.setattr(
        screen_mod,
        "Source",
        lambda path, layer=None, crs=None: KillingSource(
            path, layer, crs, marker=str(marker), once=once
        ),
    )


def test_dask_worker_killed_mid_partition(
    village: Path,
    parcels: Path,
    expected: bytes,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    pytest.importorskip("distributed")
    import dask

    # 1. Killed once: the partition runs again on a restarted worker; identical output.
    marker = tmp_path / "killed-once"
    _killing(monkeypatch, marker, once=True)
    out = tmp_path / "retried.csv"
    s = run_screen(parcels, village, out, partition_size=PARTITION, workers=2)
    assert marker.exists()  # a worker really died
    assert s.rows == N_PARCELS
    assert out.read_bytes() == expected

    # 2. Killed every time, no retries allowed: one line, exit 2, no output, parts kept.
    marker = tmp_path / "killed-always"
    _killing(monkeypatch, marker, once=False)
    out = tmp_path / "failed.csv"
    argv = ["screen", str(parcels), "--layers", str(village), "--out", str(out)]
    argv += ["--partition-size", str(PARTITION), "--workers", "2", "-q"]
    capsys.readouterr()
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("georeview: error: ")
    assert err.count("\n") == 1
    assert "a Dask worker died" in err
    assert "run the same command again to resume" in err
    assert marker.exists()
    assert not out.exists()  # nothing under the final name
    assert not list(tmp_path.glob(".failed.partial-*"))
    parts = sorted((tmp_path / "failed.csv.parts").glob("part-*.arrow"))
    assert "part-000002.arrow" not in {p.name for p in parts}

    # 3. Resume in one process: only the missing partitions run; the same bytes.
    monkeypatch.setattr(screen_mod, "Source", Source)
    s = run_screen(parcels, village, out, partition_size=PARTITION)
    assert s.resumed == len(parts)
    assert out.read_bytes() == expected
    assert _rows(out) == N_PARCELS


# --------------------------------------------------------------------------- a thread fails


@dataclass(frozen=True)
class FailingSource(Source):
    """A parcel source whose partition ``start == 50`` cannot be read."""

    def read(self, start: int, count: int):
        if start == 2 * PARTITION:
            raise DataSourceError("cannot read features (test)", path=self.path, field="parcels")
        return super().read(start, count)


def test_partition_failing_on_a_thread(
    village: Path,
    parcels: Path,
    expected: bytes,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    """One partition fails while others run on threads: one line, exit 2, no thread left
    writing, the finished partitions kept, the caller's warning filters back; resuming
    gives the uninterrupted bytes."""
    monkeypatch.setattr(screen_mod, "Source", FailingSource)
    out = tmp_path / "failed.csv"
    argv = ["screen", str(parcels), "--layers", str(village), "--out", str(out)]
    argv += ["--partition-size", str(PARTITION), "--threads", "3", "-q"]
    filters, show = list(warnings.filters), warnings.showwarning
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "cannot read features (test)" in err
    assert not out.exists()
    assert not [t for t in threading.enumerate() if t.name.startswith("georeview-screen")]
    assert warnings.filters == filters
    assert warnings.showwarning is show
    parts = {p.name for p in (tmp_path / "failed.csv.parts").glob("part-*.arrow")}
    assert "part-000002.arrow" not in parts
    assert not list((tmp_path / "failed.csv.parts").glob(".part-*"))  # no half-written part

    monkeypatch.setattr(screen_mod, "Source", Source)
    s = run_screen(parcels, village, out, partition_size=PARTITION, threads=3)
    assert s.resumed == len(parts)
    assert out.read_bytes() == expected


# --------------------------------------------------------------------------- disk full


def _enospc(path: object = None) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path) if path else None)


def test_screen_output_disk_full(
    village: Path,
    parcels: Path,
    expected: bytes,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys,
) -> None:
    out = tmp_path / "screened.csv"
    real = pd.DataFrame.to_csv
    calls = []

    def full_disk(self, path=None, *args, **kwargs):
        calls.append(path)
        if len(calls) == 3:  # the third partition's append: write part of it, then fail
            real(self.head(3), path, *args, **kwargs)
            raise _enospc(path)
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", full_disk)
    argv = ["screen", str(parcels), "--layers", str(village), "--out", str(out)]
    argv += ["--partition-size", str(PARTITION), "-q"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "screened.csv" in err
    assert "No space left on device" in err
    assert not out.exists()  # no partial file under the final name
    assert [p.name for p in tmp_path.iterdir() if p.name != "screened.csv.parts"] == []
    assert len(list((tmp_path / "screened.csv.parts").glob("part-*.arrow"))) == 4

    monkeypatch.setattr(pd.DataFrame, "to_csv", real)  # space freed: run again
    assert main(argv) == 0
    assert out.read_bytes() == expected  # every row, same bytes
    assert not (tmp_path / "screened.csv.parts").exists()


def _batch(tmp_path: Path, n: int = 3) -> Path:
    batch = tmp_path / "batch"
    for i in range(n):
        sub = batch / f"s{i}"
        sub.mkdir(parents=True)
        x = X0 + 50 + 150 * i
        _write(sub / "site.geojson", {"n": [0]}, [shapely.box(x, Y0 + 50, x + 60, Y0 + 110)])
        (sub / "submission.toml").write_text(
            'municipality = "deerfield"\nsite = "site.geojson"\n[activity]\nkinds = []\n'
            "fill_cubic_yards = 0\npipe_length_ft = 0\nlots_created = 0\n"
        )
    return batch


def _fail_fsync_for(monkeypatch: pytest.MonkeyPatch, needle: str) -> list[str]:
    """Make ``os.fsync`` raise ENOSPC for files whose temporary name contains ``needle``.

    write_atomic writes to ``.<name>.<random>.part`` and fsyncs before the rename, so the
    data is written but cannot be committed: the disk-full case at its worst moment.
    """
    real = os.fsync
    hits: list[str] = []

    def fsync(fd: int) -> None:
        name = os.readlink(f"/proc/self/fd/{fd}")
        if needle in name:
            hits.append(name)
            raise _enospc()
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return hits


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_batch_summary_disk_full(
    village: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    batch = _batch(tmp_path)
    out = tmp_path / "out"
    hits = _fail_fsync_for(monkeypatch, ".summary.csv.")
    rc = main(["review", str(batch), "--out", str(out), "--layers", str(village), "-q"])
    err = capsys.readouterr().err
    assert hits
    assert rc == 2
    assert err.count("\n") == 1
    assert "summary.csv" in err
    assert "No space left on device" in err
    assert not (out / "summary.csv").exists()
    assert not list(out.glob(".*.part"))  # no temporary left behind
    monkeypatch.undo()
    res = review_many(batch, out, layers_dir=village, overwrite=True)
    assert [r["status"] for r in res.rows] == ["ok", "ok", "ok"]
    assert _rows(out / "summary.csv") == 3


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)")
def test_batch_one_report_disk_full(
    village: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = _batch(tmp_path)
    out = tmp_path / "out"
    hits = _fail_fsync_for(monkeypatch, "/s1/.report.json.")
    res = review_many(batch, out, layers_dir=village)
    assert hits
    by = {r["name"]: r for r in res.rows}
    assert [r["name"] for r in res.rows] == ["s0", "s1", "s2"]  # no row lost
    assert by["s0"]["status"] == by["s2"]["status"] == "ok"
    assert by["s1"]["status"] == "error"
    assert "report.json" in by["s1"]["error"]
    assert "No space left on device" in by["s1"]["error"]
    assert not (out / "s1" / "report.json").exists()
    assert not list((out / "s1").glob(".*.part"))
    assert _rows(out / "summary.csv") == 3
