"""Output claims and leftovers (issue 23 item 5): two runs never share an output, and what a
stopped or refused run leaves is cleaned, not kept.

Before: two reviews given the same ``--out`` both passed the "report.json exists" check and
one silently replaced the other's reports; a killed screening left ``.NAME.partial-PID.EXT``
files that no later run removed; a screening refused after its work folder was made left an
empty ``OUT.parts/``. The claim is an exclusive ``flock`` held for the run
(:func:`georeview.report.files.claim`), so these tests hold it from another process (or this
one) and check the second run is refused with one line, exit 2.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import geopandas as gpd
import pytest
import shapely
from _build import write_submission
from test_hostile import SITE, TOML, _layers, run

from georeview.errors import ConfigError, OutputError
from georeview.pipeline import run as screen_run
from georeview.report.files import FOLDER_LOCK, claim, claim_folder, claim_name

X0, Y0 = 500_000.0, 300_000.0


@pytest.fixture(scope="module")
def layers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _layers(tmp_path_factory.mktemp("claims") / "layers")


def test_a_second_review_on_a_claimed_out_is_refused(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    sub = write_submission(tmp_path / "sub", SITE, toml=TOML)
    out = tmp_path / "out"
    with claim_folder(out):  # a review writing there right now
        code, _, err = run("review", sub, "--out", out, "--layers", layers, capsys=capsys)
        assert code == 2
        assert err.strip().endswith(
            "another georeview run is writing it now; wait for that run or choose another output"
        )
        assert len(err.strip().splitlines()) == 1
        assert not (out / "report.json").exists()  # nothing written under the other's feet
    # once it is done, the same command runs, and leaves no lock behind
    code, _, err = run("review", sub, "--out", out, "--layers", layers, "--no-map", capsys=capsys)
    assert code == 0, err
    assert (out / "report.json").is_file()
    assert not (out / FOLDER_LOCK).exists()


def test_a_second_batch_on_a_claimed_out_is_refused(
    tmp_path: Path, layers: Path, capsys: pytest.CaptureFixture
) -> None:
    batch = tmp_path / "batch"
    write_submission(batch / "a", SITE, toml=TOML)
    write_submission(batch / "b", SITE, toml=TOML)
    out = tmp_path / "out"
    with claim_folder(out):
        code, _, err = run("review", batch, "--out", out, "--layers", layers, capsys=capsys)
    assert code == 2
    assert "another georeview run is writing it now" in err
    assert not (out / "summary.csv").exists()


_HOLDER = """
import sys, time
from pathlib import Path
from georeview.report.files import claim_folder
with claim_folder(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_killed_run_leaves_no_stale_claim(tmp_path: Path) -> None:
    """The claim is a kernel lock: it goes with its process, however that process ends."""
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(out)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputError, match="another georeview run"), claim_folder(out):
            pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        if holder.stdout is not None:
            holder.stdout.close()
    assert (out / FOLDER_LOCK).exists()  # killed: it could not remove its file...
    with claim_folder(out):  # ...but its lock went with it
        pass
    assert not (out / FOLDER_LOCK).exists()


def test_claim_is_not_fooled_by_a_lock_file_removed_meanwhile(tmp_path: Path) -> None:
    """A run that opened the lock file just before its holder removed it must not count as
    holding the claim (it locks a deleted file): the name is checked after locking."""
    lock = tmp_path / ".x.lock"
    real_open = os.open
    calls = []

    def open_then_lose(path: object, *args: object, **kw: object) -> int:
        fd = real_open(path, *args, **kw)  # type: ignore[arg-type]
        if not calls:
            calls.append(1)
            os.unlink(lock)  # the previous holder's clean-up, between open and flock
        return fd

    with pytest.MonkeyPatch.context() as m:
        m.setattr(os, "open", open_then_lose)
        with claim(lock, what=tmp_path / "x"):
            assert lock.exists()  # taken again on a file that has the name
            with pytest.raises(OutputError), claim(lock, what=tmp_path / "x"):
                pass


@pytest.fixture
def parcels(tmp_path: Path) -> Path:
    path = tmp_path / "parcels.gpkg"
    boxes = [shapely.box(X0 + 100 * i, Y0 + 100, X0 + 100 * i + 80, Y0 + 180) for i in range(4)]
    gpd.GeoDataFrame({"PARCELID": [f"P{i}" for i in range(4)]}, geometry=boxes, crs=3071).to_file(
        path
    )
    return path


def test_a_second_screening_to_a_claimed_output_is_refused(
    tmp_path: Path, layers: Path, parcels: Path
) -> None:
    out = tmp_path / "screen.csv"
    busy = pytest.raises(OutputError, match="another georeview run is writing it now")
    with claim(claim_name(out), what=out), busy:
        screen_run.run_screen(parcels, layers, out, columns={"parcel_id": "PARCELID"})
    assert not out.exists()
    assert not screen_run.WorkFolder.path_for(out).exists()


@pytest.mark.parametrize("suffix", [".csv", ".gpkg", ".shp"])
def test_a_killed_screenings_temporary_output_is_removed_by_the_next_run(
    tmp_path: Path, layers: Path, parcels: Path, suffix: str
) -> None:
    out = tmp_path / f"screen{suffix}"
    # what a run killed while assembling left (pid 999999 is no process of this test)
    exts = (".shp", ".shx", ".dbf", ".prj", ".cpg") if suffix == ".shp" else (suffix,)
    left = [tmp_path / f".screen.partial-999999{e}" for e in exts]
    for f in left:
        f.write_bytes(b"half a file")
    other = tmp_path / ".screen.partial-999999.parquet"  # another output's: not touched
    other.write_bytes(b"not ours")
    mine = tmp_path / "screen.partial-1.csv"  # not a temporary name: never deleted
    mine.write_bytes(b"keep")
    screen_run.run_screen(parcels, layers, out, columns={"parcel_id": "PARCELID"})
    assert out.is_file()
    assert not [f for f in left if f.exists()]
    assert other.exists()
    assert mine.exists()
    assert not claim_name(out).exists()


def test_a_screening_refused_before_any_partition_leaves_no_work_folder(
    tmp_path: Path, layers: Path, parcels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "screen.csv"

    def refused(*_: object, **__: object) -> None:
        raise ConfigError("refused while building the context", field="layers")

    monkeypatch.setattr(screen_run, "build_context", refused)
    with pytest.raises(ConfigError):
        screen_run.run_screen(parcels, layers, out, columns={"parcel_id": "PARCELID"})
    assert not screen_run.WorkFolder.path_for(out).exists()
    assert not claim_name(out).exists()
