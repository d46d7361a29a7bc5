"""The jurisdictions cache: the same answer as building them, and never a stale one.

:func:`georeview.pipeline.jurisdictions.jurisdictions_for` keeps the village's
extraterritorial area in a file named by a digest of its inputs. The outside value
here is the uncached build (``GEOREVIEW_CACHE_DIR=off``) of the same layers: the
cached geometries must be the same to the bit (WKB equality), and any change to an
input file must give the newly built answer, not the old one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import geopandas as gpd
import pytest
import shapely

import georeview.pipeline.jurisdictions as pj
from georeview.load import load_layers
from georeview.measure.jurisdiction import Jurisdictions

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


def test_cached_equals_built_and_is_read_back(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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
