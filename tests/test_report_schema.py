"""report.json against its JSON Schema, and its list of the layers used."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pyogrio
import pytest
import rasterio
from test_samples import SAMPLES, report_validator

from georeview.cli import main

LAYERS = Path(__file__).resolve().parents[1] / "layers" / "deerfield"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("r") / "minor"
    assert main(["review", str(SAMPLES / "deerfield_minor_home"), "--out", str(out), "-q"]) == 0
    return json.loads((out / "report.json").read_text())


def test_schema_refuses_what_the_contract_forbids(report: dict) -> None:
    v = report_validator()
    v.validate(report)
    for path, value in (
        (("findings", 0, "status"), "maybe"),
        (("jurisdiction", "status"), "nearby"),
        (("layers", "used", 0, "features"), -1),
        (("coordinates", "crs"), None),
        (("schema_version",), 2),
    ):
        bad = copy.deepcopy(report)
        node = bad
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
        with pytest.raises(jsonschema.ValidationError):
            v.validate(bad)
    bad = copy.deepcopy(report)
    del bad["layers"]["used"]
    with pytest.raises(jsonschema.ValidationError, match="'used' is a required property"):
        v.validate(bad)


def test_report_lists_every_layer_with_counts(report: dict) -> None:
    used = {row["name"]: row for row in report["layers"]["used"]}
    assert set(used) == {
        "boundary",
        "neighbors",
        "dem",
        "wetlands",
        "floodplain",
        "hydrography",
        "soils",
        "roads",
    }
    # counts read independently: pyogrio's feature count per layer, rasterio's shape
    assert used["neighbors"]["features"] == 59  # the 60 Dane municipalities less Deerfield
    for name in ("boundary", "wetlands", "floodplain", "soils", "roads"):
        row = used[name]
        info = pyogrio.read_info(LAYERS / row["file"], layer=row["layer"])
        assert row["features"] == info["features"], name
    hydro = used["hydrography"]
    assert hydro["features"] == sum(
        pyogrio.read_info(LAYERS / hydro["file"], layer=n)["features"] for n in hydro["layer"]
    )
    with rasterio.open(LAYERS / "dem.tif") as ds:
        assert used["dem"]["cells"] == ds.width * ds.height
        assert used["dem"]["crs"] == "EPSG:3071"
    assert used["boundary"]["vintage"] == "2025-01"
    assert report["coordinates"]["crs"] == report["layers"]["working_crs"] == "EPSG:3071"
