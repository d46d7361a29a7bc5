"""The jurisdictions cache: the same answer as building them, and never a stale one.

:func:`georeview.pipeline.jurisdictions.jurisdictions_for` keeps the village's
extraterritorial area in a file named by a digest of its inputs. The outside value
here is the uncached build (``GEOREVIEW_CACHE_DIR=off``) of the same layers: the
cached geometries must be the same to the bit (WKB equality), and any change to an
input file must give the newly built answer, not the old one.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import geopandas as gpd
import pytest
import shapely

import georeview.pipeline.jurisdictions as pj
from georeview.load import load_layers
from georeview.measure.jurisdiction import Jurisdictions, Municipality

REPO = Path(__file__).resolve().parents[1]


def _fresh(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Jurisdictions:
    """The jurisdictions built without the cache."""
    with monkeypatch.context() as m:
        m.setenv("GEOREVIEW_CACHE_DIR", "off")
        return pj.jurisdictions_for(load_layers(folder))


def _same(a: Jurisdictions, b: Jurisdictions) -> None:
    """Equal to the bit: names, reaches, WKB of every geometry, the reason."""

    def wkb(g: shapely.Geometry) -> bytes:
        return shapely.to_wkb(g)

    assert (a.village.name, a.village.kind, a.village.reach_m) == (
        b.village.name,
        b.village.kind,
        b.village.reach_m,
    )
    assert wkb(a.village.geometry) == wkb(b.village.geometry)
    assert wkb(a.extraterritorial) == wkb(b.extraterritorial)
    assert wkb(a.undetermined) == wkb(b.undetermined)
    assert a.undetermined_reason == b.undetermined_reason
    assert {k: wkb(v) for k, v in a.ceded.items()} == {k: wkb(v) for k, v in b.ceded.items()}
    assert [(m.name, m.kind, m.reach_m, wkb(m.geometry)) for m in a.neighbours] == [
        (m.name, m.kind, m.reach_m, wkb(m.geometry)) for m in b.neighbours
    ]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("GEOREVIEW_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def somers(tmp_path: Path) -> Path:
    """A copy of the shipped Somers layers (real boundaries, Kenosha ceding land)."""
    return Path(shutil.copytree(REPO / "layers" / "somers", tmp_path / "somers"))


def test_cached_equals_built_and_is_read_back(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = REPO / "layers" / "deerfield"
    built = _fresh(folder, monkeypatch)
    first = pj.jurisdictions_for(load_layers(folder))
    files = list((cache / "jurisdictions").glob("*.json"))
    assert len(files) == 1
    _same(first, built)

    # the second call must come from the file: building is not allowed
    def no_build(*_: object) -> Jurisdictions:
        raise AssertionError("built again although the cache holds the answer")

    monkeypatch.setattr(pj, "_build", no_build)
    _same(pj.jurisdictions_for(load_layers(folder)), built)


def _rewrite_boundary(folder: Path, buffer_m: float) -> None:
    path = folder / "boundary.gpkg"
    gdf = gpd.read_file(path, layer="boundary")
    gdf["geometry"] = gdf.geometry.buffer(buffer_m)
    path.unlink()
    gdf.to_file(path, layer="boundary", driver="GPKG")


def test_changed_boundary_is_rebuilt(
    cache: Path, somers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = pj.jurisdictions_for(load_layers(somers))
    _rewrite_boundary(somers, 200.0)
    after = pj.jurisdictions_for(load_layers(somers))
    # 200 m wider: the village limits are not the cached ones
    assert shapely.area(after.village.geometry) > shapely.area(before.village.geometry)
    _same(after, _fresh(somers, monkeypatch))
    assert len(list((cache / "jurisdictions").glob("*.json"))) == 2


def test_key_follows_every_input(somers: Path) -> None:
    """Every input named in the module docstring changes the digest."""
    layers = load_layers(somers)
    reach = {"village": 1.5, "town": 0.0, "city_class_1": 3.0}
    keys = {pj.cache_key(layers, reach)}
    assert pj.cache_key(layers, reach) in keys  # same inputs, same digest

    keys.add(pj.cache_key(layers, {**reach, "village": 3.0}))  # the ordinance's reach

    toml = somers / "layers.toml"
    toml.write_text(toml.read_text() + "\n# a byte more\n")
    keys.add(pj.cache_key(load_layers(somers), reach))

    nb = somers / "neighbors.gpkg"
    data = bytearray(nb.read_bytes())
    data[-1] ^= 0xFF  # one byte of the neighbours file, size and name unchanged
    nb.write_bytes(bytes(data))
    keys.add(pj.cache_key(load_layers(somers), reach))

    (somers / "boundary.gpkg.aux.xml").write_text("<x/>")  # not a sidecar: other stem
    same = pj.cache_key(load_layers(somers), reach)
    (somers / "boundary.xml").write_text("<x/>")  # a sidecar (same stem)
    keys.add(pj.cache_key(load_layers(somers), reach))
    assert same in keys
    assert len(keys) == 5


def test_broken_cache_file_is_ignored(
    cache: Path, somers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pj.jurisdictions_for(load_layers(somers))
    (path,) = (cache / "jurisdictions").glob("*.json")
    path.write_text('{"format": 1, "village": ')  # cut short
    _same(pj.jurisdictions_for(load_layers(somers)), _fresh(somers, monkeypatch))


def test_unwritable_cache_still_reviews(
    tmp_path: Path, somers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("GEOREVIEW_CACHE_DIR", str(blocker / "below-a-file"))
    _same(pj.jurisdictions_for(load_layers(somers)), _fresh(somers, monkeypatch))


def test_cache_dir_choice() -> None:
    assert pj.cache_dir({"GEOREVIEW_CACHE_DIR": "off"}) is None
    assert pj.cache_dir({"GEOREVIEW_CACHE_DIR": "/c"}) == Path("/c")
    assert pj.cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/georeview")
    assert pj.cache_dir({}) == Path.home() / ".cache" / "georeview"


def test_key_reads_a_file_whose_name_looks_like_a_pattern(somers: Path) -> None:
    # "[1]" would be a glob character class: the file must still be hashed
    (somers / "boundary.gpkg").rename(somers / "b[1].gpkg")
    toml = somers / "layers.toml"
    toml.write_text(toml.read_text().replace('"boundary.gpkg"', '"b[1].gpkg"'))
    reach = {"village": 1.5}
    before = pj.cache_key(load_layers(somers), reach)
    data = bytearray((somers / "b[1].gpkg").read_bytes())
    data[-1] ^= 0xFF
    (somers / "b[1].gpkg").write_bytes(bytes(data))
    assert pj.cache_key(load_layers(somers), reach) != before


# ------------------------------------------------------------------ bounded folder
DEERFIELD = REPO / "layers" / "deerfield"


@pytest.fixture(scope="module")
def deerfield_built() -> Jurisdictions:
    """Deerfield's jurisdictions built without the cache (the outside value)."""
    with pytest.MonkeyPatch.context() as m:
        m.setenv("GEOREVIEW_CACHE_DIR", "off")
        return pj.jurisdictions_for(load_layers(DEERFIELD))


def _small() -> Jurisdictions:
    """A made-up result, for entries whose content does not matter."""
    box = shapely.box(0.0, 0.0, 10.0, 10.0)
    return Jurisdictions(
        village=Municipality("V", "V", box, 2414.0), extraterritorial=shapely.box(0, 0, 20, 20)
    )


#: A key for entries written straight through ``_write`` (the eviction tests never read them).
SECRET = bytes(range(32))


def _entry(folder: Path, letter: str, used_s: float | None = None) -> Path:
    """Write an entry named by ``letter`` (64 of it), last used at ``used_s`` (epoch s)."""
    path = folder / f"{letter * 64}.json"
    assert pj._write(path, _small(), secret=SECRET)
    if used_s is not None:
        os.utime(path, ns=(int(used_s * 1e9), int(used_s * 1e9)))
    return path


def _letters(folder: Path) -> set[str]:
    return {p.name[0] for p in folder.glob("*.json") if not p.name.startswith(".")}


def _names(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.json") if not p.name.startswith(".")}


def test_least_recently_used_entry_is_evicted_and_a_hit_counts_as_use(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = cache / "jurisdictions"
    monkeypatch.setattr(pj, "MAX_ENTRIES", 3)
    # three old entries, used at 1000, 2000 and 3000 s after the epoch
    for letter, used_s in zip("abc", (1000.0, 2000.0, 3000.0), strict=True):
        _entry(folder, letter, used_s)
    # a fourth (Deerfield's, built now) leaves room for two more: "a", the oldest, goes
    pj.jurisdictions_for(load_layers(DEERFIELD))
    # told apart by whole name: the real entry's (a hash) may start with "a", "b" or "c"
    dummies = {f"{letter * 64}.json" for letter in "abce"}
    (mine,) = (p for p in folder.glob("*.json") if p.name not in dummies)
    assert _names(folder) == {"b" * 64, "c" * 64, mine.stem}

    # Deerfield's entry made the oldest (500 s), then hit: the hit marks it used now
    os.utime(mine, ns=(500 * 10**9, 500 * 10**9))
    pj.jurisdictions_for(load_layers(DEERFIELD))
    assert mine.stat().st_mtime > 3000.0

    # a new entry evicts "b" (used at 2000 s), not the one hit last (500 s before the hit)
    monkeypatch.setattr(pj, "cache_key", lambda *_: "e" * 64)
    pj.jurisdictions_for(load_layers(DEERFIELD))
    assert _names(folder) == {"c" * 64, "e" * 64, mine.stem}


def test_size_cap_evicts_oldest_first_and_keeps_the_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "jurisdictions"
    for letter, used_s in zip("abcd", (4000.0, 1000.0, 3000.0, 2000.0), strict=True):
        size_bytes = _entry(folder, letter, used_s).stat().st_size
    # room for two and a half entries: the newest and the next most recently used ("a")
    monkeypatch.setattr(pj, "MAX_BYTES", int(2.5 * size_bytes))
    newest = _entry(folder, "f")
    pj._evict(folder, newest=newest)
    assert _letters(folder) == {"a", "f"}
    # smaller than a single entry: the one just written still stays
    monkeypatch.setattr(pj, "MAX_BYTES", 1)
    pj._evict(folder, newest=newest)
    assert _letters(folder) == {"f"}


def test_eviction_removes_stale_partial_files_and_nothing_else(tmp_path: Path) -> None:
    folder = tmp_path / "jurisdictions"
    newest = _entry(folder, "a")
    stale = folder / ".partial-dead.json"  # left by a process killed while writing
    stale.write_text("{")
    os.utime(stale, ns=(10**9, 10**9))
    live = folder / ".partial-live.json"  # being written by another process right now
    live.write_text("{")
    other = folder / "notes.txt"  # not an entry's name: never deleted
    other.write_text("mine")
    pj._evict(folder, newest=newest)
    assert not stale.exists()
    assert live.exists()
    assert other.exists()


def test_entry_deleted_by_another_process_during_eviction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "jurisdictions"
    for letter, used_s in zip("abc", (1000.0, 2000.0, 3000.0), strict=True):
        _entry(folder, letter, used_s)
    newest = _entry(folder, "d")
    real_scandir = os.scandir

    class Listed(list[os.DirEntry[str]]):
        def __enter__(self) -> Listed:
            return self

        def __exit__(self, *_: object) -> None:
            return None

    def listing_then_gone(path: Path) -> Listed:
        with real_scandir(path) as it:
            listed = Listed(it)
        # the other process deletes "b" after this one listed the folder
        (folder / f"{'b' * 64}.json").unlink()
        return listed

    monkeypatch.setattr(pj, "MAX_ENTRIES", 2)
    with monkeypatch.context() as m:
        m.setattr(pj.os, "scandir", listing_then_gone)
        pj._evict(folder, newest=newest)
    assert _letters(folder) == {"c", "d"}


_WRITER = """
import sys, time
from pathlib import Path
import shapely
import georeview.pipeline.jurisdictions as pj
from georeview.measure.jurisdiction import Jurisdictions, Municipality

folder, letters = Path(sys.argv[1]), sys.argv[2]
pj.MAX_ENTRIES = 5
box = shapely.box(0.0, 0.0, 10.0, 10.0)
j = Jurisdictions(village=Municipality("V", "V", box, 1.0), extraterritorial=box)
while not (folder.parent / "go").exists():  # both start together
    time.sleep(0.01)
assert pj.private_folder(folder) == folder
secret = pj._secret(folder)  # made by one of the two at once: both must get the same
assert secret is not None
for k in range(300):
    path = folder / f"{letters[k % len(letters)] * 64}.json"
    key = path.stem
    if pj._read(path, key=key, secret=secret) is None and pj._write(path, j, secret=secret):
        pj._evict(folder, newest=path)
"""


def test_two_processes_share_the_folder(tmp_path: Path) -> None:
    """Two processes writing, reading and evicting at once: neither fails, the bound holds."""
    folder = tmp_path / "jurisdictions"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(folder), letters],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for letters in ("0123456789ab", "ba9876543210")  # the same entries, met in turn
    ]
    (tmp_path / "go").touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert not err
    assert 1 <= len(_letters(folder)) <= 5
    assert not list(folder.glob(".partial-*"))
    secret = pj._secret(folder)
    assert secret is not None
    for p in folder.glob("*.json"):
        assert pj._read(p, key=p.stem, secret=secret) is not None


@pytest.mark.parametrize(
    "damage",
    [
        b'{"format": 1, "village": ',  # cut short
        b"[1, 2]",  # JSON, but a list
        b"[" * 100_000,  # deeper than the JSON parser's stack
        b'{"format": 1, "village": {"name": "V", "kind": "V", "geometry": "@@", "reach_m": 1}}',
        b"\xff\xfe not UTF-8",
        b"",
    ],
    ids=["cut", "list", "deep", "bad-base64", "not-utf8", "empty"],
)
def test_damaged_entry_is_ignored_and_replaced(
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    deerfield_built: Jurisdictions,
    damage: bytes,
) -> None:
    pj.jurisdictions_for(load_layers(DEERFIELD))
    (path,) = (cache / "jurisdictions").glob("*.json")
    path.write_bytes(damage)
    with caplog.at_level(logging.DEBUG, logger=pj.__name__):
        _same(pj.jurisdictions_for(load_layers(DEERFIELD)), deerfield_built)
    assert "not used" in caplog.text
    # replaced: the file is a whole entry again, read back without building
    secret = pj._secret(path.parent)
    assert secret is not None
    replaced = pj._read(path, key=path.stem, secret=secret)
    assert replaced is not None
    _same(replaced, deerfield_built)


def test_cache_folder_that_is_a_file_is_skipped_with_a_debug_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    deerfield_built: Jurisdictions,
) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "jurisdictions").write_text("a file where the folder should be")
    monkeypatch.setenv("GEOREVIEW_CACHE_DIR", str(folder))
    with caplog.at_level(logging.DEBUG, logger=pj.__name__):
        _same(pj.jurisdictions_for(load_layers(DEERFIELD)), deerfield_built)
    assert "not made" in caplog.text


def test_read_only_entry_is_still_a_hit(
    cache: Path, monkeypatch: pytest.MonkeyPatch, deerfield_built: Jurisdictions
) -> None:
    pj.jurisdictions_for(load_layers(DEERFIELD))

    def refused(*_: object, **__: object) -> None:
        # what a read-only folder or file system answers (root ignores chmod here)
        raise PermissionError(13, "Permission denied")

    def no_build(*_: object) -> Jurisdictions:
        raise AssertionError("built again although the cache holds the answer")

    monkeypatch.setattr(pj.os, "utime", refused)
    monkeypatch.setattr(pj, "_build", no_build)
    _same(pj.jurisdictions_for(load_layers(DEERFIELD)), deerfield_built)


def test_eviction_in_a_missing_folder_does_not_fail(tmp_path: Path) -> None:
    pj._evict(tmp_path / "gone", newest=tmp_path / "gone" / f"{'a' * 64}.json")


def test_no_home_directory_means_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(pj.Path, "home", staticmethod(no_home))
    assert pj.cache_dir({}) is None


# --- the cache as a trust boundary (issue 23 item 5) -----------------------------------


def _forged(built: Jurisdictions) -> Jurisdictions:
    """What an attacker wants the cache to say: the village is far away (sites "outside")."""
    far = shapely.box(0.0, 0.0, 1.0, 1.0)
    return Jurisdictions(
        village=Municipality(built.village.name, built.village.kind, far, built.village.reach_m),
        extraterritorial=far,
    )


def test_forged_entry_in_the_cache_folder_is_rebuilt(
    cache: Path, monkeypatch: pytest.MonkeyPatch, deerfield_built: Jurisdictions
) -> None:
    """Before: an entry written by anyone under the right name was trusted, so a forged
    one in a shared or pre-created cache folder turned a village site "outside"."""
    pj.jurisdictions_for(load_layers(DEERFIELD))
    (path,) = (cache / "jurisdictions").glob("*.json")
    # the attacker knows the layout and the name, but not the folder's key
    assert pj._write(path, _forged(deerfield_built), secret=b"\x01" * 32)
    _same(pj.jurisdictions_for(load_layers(DEERFIELD)), deerfield_built)
    # an untagged entry of the layout before tags is not read either
    path.write_text('{"format": 2}')
    _same(pj.jurisdictions_for(load_layers(DEERFIELD)), deerfield_built)


@pytest.mark.parametrize("where", ["cache", "jurisdictions"])
def test_group_or_world_writable_cache_folder_is_not_used(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    deerfield_built: Jurisdictions,
    where: str,
) -> None:
    """Before: a cache folder others could write was used, so they could plant entries."""
    folder = tmp_path / "cache"
    (folder / "jurisdictions").mkdir(parents=True)
    target = folder if where == "cache" else folder / "jurisdictions"
    target.chmod(0o777)
    monkeypatch.setenv("GEOREVIEW_CACHE_DIR", str(folder))
    monkeypatch.setattr(pj, "_WARNED", set())
    with caplog.at_level(logging.WARNING, logger=pj.__name__):
        _same(pj.jurisdictions_for(load_layers(DEERFIELD)), deerfield_built)
    assert "others may write to it (mode 777; chmod go-w)" in caplog.text
    assert not list((folder / "jurisdictions").iterdir())  # nothing written, no key made


def test_cache_folder_that_is_a_link_is_not_used(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    deerfield_built: Jurisdictions,
) -> None:
    real = tmp_path / "elsewhere"
    real.mkdir(mode=0o700)
    (tmp_path / "cache").mkdir(mode=0o700)
    (tmp_path / "cache" / "jurisdictions").symlink_to(real)
    monkeypatch.setenv("GEOREVIEW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(pj, "_WARNED", set())
    with caplog.at_level(logging.WARNING, logger=pj.__name__):
        _same(pj.jurisdictions_for(load_layers(DEERFIELD)), deerfield_built)
    assert "it is a symbolic link" in caplog.text
    assert not list(real.iterdir())


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_cache_folder_of_another_user_is_not_used(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    deerfield_built: Jurisdictions,
) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    os.chown(folder, 1, 1)  # another account's (daemon) pre-created folder
    monkeypatch.setenv("GEOREVIEW_CACHE_DIR", str(folder))
    monkeypatch.setattr(pj, "_WARNED", set())
    with caplog.at_level(logging.WARNING, logger=pj.__name__):
        _same(pj.jurisdictions_for(load_layers(DEERFIELD)), deerfield_built)
    assert "it belongs to user 1" in caplog.text


def test_fifo_huge_file_or_link_in_an_entrys_place_is_a_miss_not_a_hang(
    cache: Path, monkeypatch: pytest.MonkeyPatch, deerfield_built: Jurisdictions
) -> None:
    """Before: a FIFO under an entry's name blocked every review on open(); a huge file
    was read whole into memory."""
    pj.jurisdictions_for(load_layers(DEERFIELD))
    (path,) = (cache / "jurisdictions").glob("*.json")
    good = path.read_bytes()
    path.unlink()
    os.mkfifo(path)
    _same(pj.jurisdictions_for(load_layers(DEERFIELD)), deerfield_built)  # returns: no hang
    assert path.read_bytes() == good or path.is_file()  # replaced by the rebuilt entry

    path.unlink()
    with path.open("wb") as f:  # sparse: takes no disk, but reads as 40 MB
        f.truncate(pj.MAX_ENTRY_BYTES + 1)
    assert pj._read_bounded(path, pj.MAX_ENTRY_BYTES) is None

    path.unlink()
    elsewhere = cache / "elsewhere.json"
    elsewhere.write_bytes(good)
    path.symlink_to(elsewhere)
    assert pj._read_bounded(path, pj.MAX_ENTRY_BYTES) is None
