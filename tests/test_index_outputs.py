"""index.html is written next to batch reviews and, on request, next to a screening."""

from __future__ import annotations

import shutil
from pathlib import Path

import geopandas as gpd
import pytest
from _build import CAMBRIDGE_PARCELS
from _build import cambridge_layers as write_cambridge_layers

from georeview.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_batch_review_writes_an_index_linking_each_report(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    for name in ("deerfield_minor_home", "deerfield_outside"):
        shutil.copytree(REPO / "sample_sites" / name, folder / name)
    out = tmp_path / "out"
    assert main(["review", str(folder), "--out", str(out), "-q"]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    for name in ("deerfield_minor_home", "deerfield_outside"):
        assert f"{name}/report.html" in page
        assert (out / name / "report.html").is_file()
    from georeview.report.map_assets import external_resources

    assert external_resources(page) == []  # opens with no network
    data = _data(page)
    # headers in words, the report link shown first (issue 24, item 6)
    assert [data["labels"][j] for j in data["order"]][:2] == ["Report", "Outcome"]
    assert "needs_info" not in data["labels"]
    assert "Needs information" in data["labels"]


def _data(page: str) -> dict:
    """The page's data (its application/json script)."""
    import json
    import re

    m = re.search(r'id="georeview-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_screen_index_has_a_row_per_parcel(tmp_path):
    parcels = gpd.read_file(CAMBRIDGE_PARCELS, rows=300)
    src = tmp_path / "parcels.gpkg"
    parcels.to_file(src)
    layers = write_cambridge_layers(tmp_path / "layers", resources=False)
    out = tmp_path / "screened.csv"
    index = tmp_path / "index.html"
    rc = main(
        [
            "screen",
            str(src),
            "--layers",
            str(layers),
            "--out",
            str(out),
            "--id-field",
            "ML",
            "--index",
            str(index),
            "-q",
        ]
    )
    assert rc == 0
    page = index.read_text(encoding="utf-8")
    # Every parcel id appears in the page's data (300 rows, ids from the input).
    missing = [ml for ml in parcels["ML"].astype(str) if ml not in page]
    assert missing == []
    # the parcel file's own fields are kept, under their own names, beside the results
    labels = _data(page)["labels"]
    assert {"Parcel ID", "Why unknown", "POLY_TYPE", "LOC_ID"} <= set(labels)


@pytest.mark.parametrize("n", [0])
def test_index_row_cap_is_documented(n):
    from georeview.pipeline import screen_index as screen

    assert screen.INDEX_MAX_ROWS >= 13_116  # Cambridge must fit (issue 7)
