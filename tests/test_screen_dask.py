"""Screening on Dask (issue 6, item 6): a LocalCluster gives the single-process output."""

from __future__ import annotations

from pathlib import Path

import pytest
from _build import CAMBRIDGE_PARCELS
from _build import cambridge_layers as write_cambridge_layers

from georeview.pipeline.assume import parse_columns
from georeview.pipeline.run import run_screen

PARCELS = CAMBRIDGE_PARCELS

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def layers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cambridge_layers(tmp_path_factory.mktemp("cambridge_dask"))


def test_local_cluster_equals_single_process(layers: Path, tmp_path: Path) -> None:
    from distributed import LocalCluster

    kw = {"columns": parse_columns(None, "ML"), "partition_size": 4000}
    single = tmp_path / "single.csv"
    run_screen(PARCELS, layers, single, **kw)
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        on_dask = tmp_path / "dask.csv"
        s = run_screen(PARCELS, layers, on_dask, scheduler=cluster.scheduler_address, **kw)
    assert s.partitions == 4
    assert s.rows == 13_116
    # row for row, byte for byte: partitions arrive in any order but are written in input order
    assert on_dask.read_bytes() == single.read_bytes()


def test_local_worker_processes(layers: Path, tmp_path: Path) -> None:
    """``--workers 2``: two local processes receive the layers by broadcast, same output."""
    kw = {"columns": parse_columns(None, "ML"), "partition_size": 7000}
    single = tmp_path / "single.gpkg"
    run_screen(PARCELS, layers, single, **kw)
    two = tmp_path / "two.gpkg"
    run_screen(PARCELS, layers, two, workers=2, **kw)
    import geopandas as gpd

    a, b = gpd.read_file(single), gpd.read_file(two)
    assert a.drop(columns="geometry").equals(b.drop(columns="geometry"))
    assert a.geometry.geom_equals_exact(b.geometry, tolerance=0).all()
