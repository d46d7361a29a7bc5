"""Routed outflow: Deerfield 31.06(3)(C)1 compares the peak *leaving the site* after the
controls with the pre-development peak. TR-55's graphical method does not route through
a detention basin, so the applicant's routed outflow, when declared with its source, is
what the rule compares (hand-checked: increase = routed post - pre)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from georeview.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "sample_sites" / "deerfield_larger_site"


def _review(folder: Path, out: Path) -> dict:
    assert main(["review", str(folder), "--out", str(out), "-q"]) == 0
    return json.loads((out / "report.json").read_text())


def _with_routed(tmp_path: Path, routed: str, source: str | None) -> Path:
    folder = tmp_path / "site"
    shutil.copytree(SAMPLE, folder)
    toml = folder / "submission.toml"
    # "during or after disturbance": the same routing through the pond, which also holds the
    # graded site's runoff, declared for both conditions
    extra = (
        f"routed_peak_cfs = {routed}\nrouted_construction_peak_cfs = {routed}\n"
        + (f'routed_source = "{source}"\n' if source else "")
    )
    toml.write_text(toml.read_text().replace("[hydrology]\n", "[hydrology]\n" + extra, 1))
    return folder


def test_routed_outflow_below_pre_passes(tmp_path):
    before = _review(SAMPLE, tmp_path / "a")
    pre = {s: before["measures"]["peak_flow_cfs"][s]["pre"] for s in ("1yr", "2yr", "10yr")}
    routed = "{ " + ", ".join(f'"{s}" = {round(q * 0.9, 3)}' for s, q in pre.items()) + " }"
    r = _review(
        _with_routed(tmp_path, routed, "pond routing, HydroCAD model sheet 4"), tmp_path / "b"
    )
    for storm, rid in (("1yr", "a"), ("10yr", "b"), ("2yr", "c")):
        q = r["measures"]["peak_flow_cfs"][storm]
        assert q["post_routed"] == pytest.approx(round(pre[storm] * 0.9, 3))
        f = next(f for f in r["findings"] if f["rule_id"] == f"deerfield.31.06.3.C.1.{rid}")
        assert f["status"] == "pass"
        assert f["measured"] == pytest.approx(round(q["post_routed"] - q["pre"], 3), abs=1e-3)
    # Without routing, the same site (which describes a detention basin) has no peak leaving
    # the site: needs_info, never TR-55's unrouted post peak compared as if it left the site.
    assert all(
        f["status"] == "needs_info"
        for f in before["findings"]
        if f["rule_id"].startswith("deerfield.31.06.3.C.1")
    )


def test_routed_outflow_needs_its_source(tmp_path, capsys):
    folder = _with_routed(tmp_path, '{ "1yr" = 1.0 }', None)
    assert main(["review", str(folder), "--out", str(tmp_path / "o"), "-q"]) == 2
    assert "routed_source" in capsys.readouterr().err
