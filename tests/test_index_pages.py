"""The batch and screening index pages a village engineer reads (issue 24, item 6).

Built from the shipped samples: a batch of sample_sites submissions (one with a hostile
applicant) and a screening of a 5,184-parcel grid in the Wisconsin statewide parcel
schema laid over the shipped Deerfield layers (village, extraterritorial area and beyond).
Checked: headers in words (unknown input fields keep their names), the report link as
the first column, quantities with thousands separators and one rounding each, the
applicant, received date, decision deadline and outcome of each submission (page and
summary.csv), the parcel file's fields kept, and a reason for every parcel left unknown.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from _web_helpers import CHROMIUM, XSS, PageWatch

from georeview.calendar import municipality_calendar
from georeview.cli import main
from georeview.pipeline.batch_outputs import SUMMARY_COLUMNS

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_sites"
DEERFIELD = REPO / "layers" / "deerfield"
BATCH = ("deerfield_minor_home", "deerfield_outside", "deerfield_etj_shed", "somers_complete_plan")
#: The hostile submission's applicant (a copy of deerfield_minor_home).
EVIL = XSS[0] + XSS[1]
#: Grid cell, metres (EPSG:3071), and its extent over the Deerfield layers.
CELL_M = 250.0
#: Whole numbers with thousands separators ("12,345"), and with two decimals.
WHOLE = re.compile(r"^\d{1,3}(,\d{3})*$")
TWO_DECIMALS = re.compile(r"^\d{1,3}(,\d{3})*\.\d\d$")


def _page_data(path: Path) -> dict:
    """The JSON the page is drawn from (the escaped <script type=application/json>)."""
    text = path.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="georeview-data">(.*?)</script>', text, re.S)
    assert m is not None
    return json.loads(m.group(1))


def _shown_labels(data: dict) -> list[str]:
    return [data["labels"][j] for j in data["order"]]


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("index_batch")
    subs = tmp / "subs"
    for name in BATCH:
        shutil.copytree(SAMPLES / name, subs / name)
    evil = subs / "evil_applicant"
    shutil.copytree(SAMPLES / "deerfield_minor_home", evil)
    toml = evil / "submission.toml"
    escaped = EVIL.replace("\\", "\\\\").replace('"', '\\"')
    toml.write_text(
        toml.read_text().replace('applicant = "Example Homes LLC"', f'applicant = "{escaped}"')
    )
    out = tmp / "out"
    assert main(["review", str(subs), "--out", str(out), "-q"]) == 0
    return out


def _grid(path: Path) -> int:
    """A parcel grid in the statewide schema over the Deerfield layers; returns its rows."""
    xs, ys = np.meshgrid(np.arange(586_000, 604_000, CELL_M), np.arange(277_500, 295_500, CELL_M))
    x, y = xs.ravel(), ys.ravel()
    n = x.size
    idx = np.arange(n)
    gpd.GeoDataFrame(
        {
            "PARCELID": pd.Series(idx).map("{:06d}".format),
            "OWNERNME1": pd.Series(idx).map("Owner {}".format),
            "SITEADRESS": pd.Series(idx).map("{} County Road".format),
            "PROPCLASS": np.where(idx % 7 == 0, "4", "1"),  # class 4: agricultural
            "GISACRES": np.full(n, CELL_M**2 / 4046.8564224),
            "YEARBUILT": np.full(n, 1987),  # a number field no rule formats
        },
        geometry=shapely.box(x, y, x + CELL_M, y + CELL_M),
        crs=3071,
    ).to_file(path)
    return n


@pytest.fixture(scope="module")
def screening(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    tmp = tmp_path_factory.mktemp("index_screen")
    n = _grid(tmp / "parcels.gpkg")
    out, index = tmp / "screened.csv", tmp / "index.html"
    argv = ["screen", str(tmp / "parcels.gpkg"), "--layers", str(DEERFIELD), "--out", str(out)]
    assert main([*argv, "--index", str(index), "-q"]) == 0
    return out, index, n


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")


# --------------------------------------------------------------------------- batch


def test_batch_page_headers_in_words_and_report_link_first(batch: Path) -> None:
    data = _page_data(batch / "index.html")
    shown = _shown_labels(data)
    assert shown[0] == "Report"
    assert data["order"][0] == data["link_column"]
    for words in ("Outcome", "Applicant", "Received", "Decision deadline", "Needs information"):
        assert words in shown
    # no machine name shows as a header (each has its words)
    assert not {"needs_info", "report_html", "application_date", "site_area_sqft"} & set(shown)
    # every report is linked, by a relative link to its own folder
    assert sorted(data["links"]) == sorted(f"{n}/report.html" for n in (*BATCH, "evil_applicant"))
    # the areas are whole square feet, shown with separators (formatted by the page)
    cols = data["columns"]
    for name in ("site_area_sqft", "disturbed_area_sqft"):
        j = cols.index(name)
        assert data["decimals"][j] == 0
        assert all(isinstance(r[j], int) for r in data["rows"] if r[j] is not None)


def test_batch_summary_carries_applicant_received_deadline_and_outcome(batch: Path) -> None:
    with open(batch / "summary.csv", newline="", encoding="utf-8") as fh:
        table = {r["name"]: r for r in csv.DictReader(fh)}
    assert list(next(iter(table.values()))) == list(SUMMARY_COLUMNS)
    for name in BATCH:
        row = table[name]
        report = json.loads((batch / name / "report.json").read_text(encoding="utf-8"))
        assert row["applicant"] == report["submission"]["applicant"]
        assert row["application_date"] == report["submission"]["application_date"]
        assert row["recommendation"] == report["summary"]["outcome"]["words"]
        decision = {
            d["id"]
            for d in municipality_calendar(report["municipality"])["deadlines"]
            if d.get("decision")
        }
        dated = [d for d in report.get("deadlines") or [] if d["id"] in decision and d["date"]]
        if dated:
            latest = max(dated, key=lambda d: d["date"])
            assert (row["decision_deadline"], row["decision_citation"]) == (
                latest["date"],
                latest["citation"],
            )
        else:
            assert row["decision_deadline"] == row["decision_citation"] == ""
    # the regulated samples have a decision deadline; the unregulated have none to meet
    assert table["deerfield_minor_home"]["decision_deadline"]
    assert table["somers_complete_plan"]["decision_deadline"]
    assert table["deerfield_outside"]["decision_deadline"] == ""
    assert table["evil_applicant"]["applicant"].lstrip("'") == EVIL  # csv_cell may guard it


# --------------------------------------------------------------------------- screening


def test_screen_page_keeps_the_parcel_fields_and_says_why(
    screening: tuple[Path, Path, int],
) -> None:
    _out, index, n = screening
    data = _page_data(index)
    assert len(data["rows"]) == n
    shown = _shown_labels(data)
    assert shown[:2] == ["Outcome", "Parcel ID"]
    # the statewide schema's fields keep their own names, owner and address first
    assert shown[2:6] == ["OWNERNME1", "SITEADRESS", "GISACRES", "PROPCLASS"]
    assert "YEARBUILT" in shown
    assert "PARCELID" not in shown
    for words in ("Why unknown", "Regulated", "Area (sq ft)", "Wetland (sq ft)"):
        assert words in shown
    cols = data["columns"]
    assert data["decimals"][cols.index("area_sqft")] == 0
    assert data["decimals"][cols.index("GISACRES")] == 2
    assert data["decimals"][cols.index("YEARBUILT")] is None  # a year is not a quantity
    # a needs-info parcel on the page gives its reason
    reason = cols.index("reason")
    needs = [r for r in data["rows"] if r[0] == "needs info"]
    assert needs
    assert all(r[reason] for r in needs)


def test_screen_outputs_give_a_reason_for_every_unknown_parcel(
    screening: tuple[Path, Path, int],
) -> None:
    out, _, n = screening
    table = _csv(out)
    assert len(table) == n
    for field in ("PARCELID", "OWNERNME1", "SITEADRESS", "GISACRES", "PROPCLASS", "YEARBUILT"):
        assert field in table.columns
    unknown = table["regulated"] == "unknown"
    assert unknown.sum() > 100  # the extraterritorial area: subdivision or not is open
    assert (table.loc[unknown, "reason"] != "").all()
    # Deerfield reaches its extraterritorial area for subdivisions only: an assumed
    # activity that does not say whether it is on a platted lot leaves that open, and
    # whether it connects with a subdivision is the Village's to decide
    assert table.loc[unknown, "reason"].str.contains("not stated in --assume: on_platted_lot").all()
    assert table.loc[unknown, "reason"].str.contains("for the Village to decide").all()
    # a parcel whose answers are all known has no reason
    decided = (table["regulated"] == "no") | (
        (table["regulated"] == "yes")
        & (table["category"] != "")
        & (table["larger_site"] != "unknown")
        & (table["extraordinary"] != "unknown")
    )
    assert (table.loc[decided, "reason"] == "").all()
    # a regulated parcel's open classification is named with its reason
    open_ext = (table["regulated"] == "yes") & (table["extraordinary"] == "unknown")
    assert table.loc[open_ext, "reason"].str.startswith("extraordinary: ").all()


def test_reasons_name_the_missing_layers(tmp_path: Path) -> None:
    """Without the neighbours and the DEM: the reasons say so, where they matter."""
    layers = tmp_path / "layers"
    layers.mkdir()
    text = (DEERFIELD / "layers.toml").read_text(encoding="utf-8")
    keep = []
    for block in re.split(r"\n(?=\[)", text):
        if block.startswith(("[neighbors]", "[dem]")):
            continue
        keep.append(block)
    toml = "\n".join(keep)
    for f in DEERFIELD.iterdir():
        if f.suffix == ".gpkg" and f.stem not in ("neighbors",):
            shutil.copy(f, layers / f.name)
    (layers / "layers.toml").write_text(toml, encoding="utf-8")
    _grid(tmp_path / "parcels.gpkg")
    out = tmp_path / "screened.parquet"
    argv = ["screen", str(tmp_path / "parcels.gpkg"), "--layers", str(layers), "--out", str(out)]
    # exit 3: without the neighbours the layers describe less land (the village grown by
    # its extraterritorial reach), and the grid's far parcels are error rows
    assert main([*argv, "-q"]) == 3
    table = pd.read_parquet(out)
    assert (table["status"] == "error").any()
    undetermined = table["jurisdiction"] == "undetermined"
    assert undetermined.any()
    open_ = undetermined & (table["regulated"] == "unknown")
    assert open_.any()
    assert table.loc[open_, "reason"].str.contains("no neighbours layer").all()
    unknown = table["regulated"] == "unknown"
    assert table.loc[unknown, "reason"].fillna("").ne("").all()
    # without a DEM, no steep slope is measured: a regulated parcel's extraordinary
    # (steep slopes in the disturbance) stays open, and says why
    ext = (table["regulated"] == "yes") & (table["extraordinary"] == "unknown")
    assert ext.any()
    assert table.loc[ext, "reason"].str.contains("no DEM in the layers folder").all()


# --------------------------------------------------------------------------- chromium


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium not installed")
@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_report_link_in_view_without_horizontal_scrolling(
    browser, batch: Path, screening: tuple[Path, Path, int], width: int, height: int
) -> None:
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        watch = PageWatch(page)
        page.goto((batch / "index.html").as_uri())
        page.wait_for_selector("#results tbody tr")
        link = page.locator("#results tbody tr").first.locator("td").first.locator("a")
        assert link.inner_text() == "Open report"
        link.scroll_into_view_if_needed()  # vertically only (below the map on a phone)
        box = link.bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= width
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.evaluate("window.scrollX") == 0
        # the areas as a reader reads them: whole square feet with separators
        heads = page.locator("#results thead th").all_inner_texts()
        k = heads.index("Site area (sq ft)")
        cells = page.locator(f"#results tbody tr td:nth-child({k + 1})").all_inner_texts()
        assert cells
        assert all(WHOLE.match(c) for c in cells if c)
        # the hostile applicant is text, not markup
        rows = page.locator("#results tbody tr", has_text="alert(1)")
        assert rows.count() == 1
        cell = rows.first.locator("td").nth(heads.index("Applicant"))
        assert cell.inner_text().lstrip("'") == EVIL
        assert cell.locator("script, img").count() == 0
        page.screenshot(path=str(batch / f"index_batch_{width}.png"))

        page.goto(screening[1].as_uri())
        page.wait_for_selector("#results tbody tr")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        heads = page.locator("#results thead th").all_inner_texts()
        k = heads.index("Area (sq ft)")
        cells = page.locator(f"#results tbody tr td:nth-child({k + 1})").all_inner_texts()
        assert cells
        assert all(WHOLE.match(c) for c in cells if c)
        k = heads.index("GISACRES")
        cells = page.locator(f"#results tbody tr td:nth-child({k + 1})").all_inner_texts()
        assert cells
        assert all(TWO_DECIMALS.match(c) for c in cells if c)
        assert watch.errors == []
    finally:
        page.close()
