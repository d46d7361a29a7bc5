"""A new municipality is a new folder: no Python changes, found through $GEOREVIEW_ORDINANCES.

The test copies Deerfield's ordinance folder as "Lakeview", renumbers its chapter (31 -> 9),
renames it, and changes three parameters: a 3-mile extraterritorial reach for villages (instead
of 1.5), a 15 % steep-slope threshold (instead of 20 %) and a $135 major-permit fee (instead of
$35). It copies Deerfield's layers folder under the new name, then runs the CLI ``review`` and
``screen`` on it and checks that the results follow the new parameters and that no finding,
fee or deadline cites Deerfield or its chapter.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
import shapely

import georeview.ordinances
from georeview.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = Path(georeview.ordinances.__file__).parent
SAMPLE = ROOT / "sample_sites" / "deerfield_steep"


def _rename(text: str) -> str:
    text = re.sub(r"\b31\.(\d\d)", r"9.\1", text)
    text = re.sub(r"(Chapter|ch\.) 31\b", r"\1 9", text)
    return text.replace("deerfield", "lakeview").replace("Deerfield", "Lakeview")


@pytest.fixture
def lakeview(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    packs = tmp_path / "packs"
    pack = packs / "lakeview"
    shutil.copytree(SHIPPED / "deerfield", pack)
    for f in pack.iterdir():
        if f.suffix in (".toml", ".txt"):
            f.write_text(_rename(f.read_text(encoding="utf-8")), encoding="utf-8")
    main_toml = pack / "ordinance.toml"
    text = main_toml.read_text(encoding="utf-8")
    text = text.replace("village = 1.5, town = 0.0", "village = 3.0, town = 0.0")
    text = re.sub(r"(\[parameters\.steep_slope_pct\]\nvalue = )20\.0", r"\g<1>15.0", text)
    main_toml.write_text(text, encoding="utf-8")
    money = pack / "money.toml"
    money.write_text(
        money.read_text(encoding="utf-8").replace("amount_usd = 35\n", "amount_usd = 135\n", 1),
        encoding="utf-8",
    )
    layers = tmp_path / "layers" / "lakeview"
    shutil.copytree(ROOT / "layers" / "deerfield", layers)
    lt = layers / "layers.toml"
    lt.write_text(
        lt.read_text(encoding="utf-8")
        .replace('municipality = "deerfield"', 'municipality = "lakeview"')
        .replace('village_name = "Village of Deerfield"', 'village_name = "Village of Lakeview"'),
        encoding="utf-8",
    )
    sub = tmp_path / "submission"
    shutil.copytree(SAMPLE, sub)
    st = sub / "submission.toml"
    st.write_text(
        st.read_text(encoding="utf-8").replace(
            'municipality = "deerfield"', 'municipality = "lakeview"'
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("GEOREVIEW_ORDINANCES", str(packs))
    return {"pack": pack, "layers": layers, "submission": sub, "tmp": tmp_path}


def _review(submission: Path, layers: Path, out: Path) -> dict:
    assert main(["review", str(submission), "--layers", str(layers), "--out", str(out), "-q"]) == 0
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def test_rules_lists_the_new_municipality(lakeview, capsys):
    assert main(["rules", "lakeview"]) == 0
    out = capsys.readouterr().out
    assert "lakeview.9.06.1.C" in out
    assert "§ 9.06(1)(C)" in out
    assert "Deerfield" not in out
    assert main(["rules"]) == 0
    assert "Lakeview" in capsys.readouterr().out


def test_review_follows_the_new_parameters(lakeview):
    tmp = lakeview["tmp"]
    new = _review(lakeview["submission"], lakeview["layers"], tmp / "out_new")
    old = _review(SAMPLE, ROOT / "layers" / "deerfield", tmp / "out_old")
    assert new["municipality"] == "lakeview"
    # 15 % instead of 20 %: at least as much disturbed ground counts as steep, here more
    assert new["measures"]["steep_slope_area_sqft"] > old["measures"]["steep_slope_area_sqft"]
    # the major-permit fee of the new money table
    fees = {i["id"]: i for i in new["fees"]["items"]}
    assert fees["application_fee"]["amount_usd"] == 135
    # nothing the ordinance says cites the original municipality or its chapter
    cited = json.dumps([new["findings"], new["fees"], new["deadlines"], new["engineering"]])
    assert "Deerfield" not in cited
    assert "deerfield" not in cited
    assert not re.search(r"\b31\.\d\d", cited)


def test_screen_follows_the_new_reach(lakeview):
    tmp = lakeview["tmp"]
    boundary = gpd.read_file(ROOT / "layers" / "deerfield" / "boundary.gpkg").to_crs(3071)
    village = shapely.union_all(boundary.geometry.values)
    cx = shapely.centroid(village).x
    north = shapely.bounds(village)[3]
    # a 100 m parcel 2 miles (3,219 m) north of the limits: beyond 1.5 miles, within 3
    parcel = shapely.box(cx - 50, north + 3219, cx + 50, north + 3319)
    parcels = gpd.GeoDataFrame({"PARCELID": ["P1"]}, geometry=[parcel], crs=3071)
    src = tmp / "parcels.gpkg"
    parcels.to_file(src)
    rows = {}
    for name, layers in (("new", lakeview["layers"]), ("old", ROOT / "layers" / "deerfield")):
        out = tmp / f"screen_{name}.csv"
        argv = ["screen", str(src), "--layers", str(layers), "--out", str(out), "-q"]
        assert main([*argv, "--assume", "disturb=whole,kinds=subdivision"]) == 0
        rows[name] = pd.read_csv(out, encoding="utf-8-sig").iloc[0]
    assert rows["old"]["jurisdiction"] == "outside"
    assert rows["new"]["jurisdiction"] == "extraterritorial"
    # the new ordinance reaches a subdivision in its extraterritorial area and cites itself
    assert rows["new"]["regulated"] == "yes"
    assert "9.03(2)" in rows["new"]["reach_citation"]
    assert "31." not in rows["new"]["citations"]


def test_public_api_screens_a_geodataframe(lakeview):
    import georeview

    boundary = gpd.read_file(ROOT / "layers" / "deerfield" / "boundary.gpkg").to_crs(3071)
    inside = shapely.centroid(shapely.union_all(boundary.geometry.values)).buffer(30.0)
    parcels = gpd.GeoDataFrame({"PARCELID": ["A"]}, geometry=[inside], crs=3071)
    out = georeview.screen(parcels, ROOT / "layers" / "deerfield")
    assert out["jurisdiction"].tolist() == ["village"]
    # a 30 m circle: 2,827 m^2 = 30,432 sq ft disturbed >= 4,000 sq ft (Deerfield 31.06(1)(C))
    assert out["regulated"].tolist() == ["yes"]
    assert "lakeview" in georeview.municipalities()
    assert georeview.load_ordinance("lakeview").param("steep_slope_pct") == 15.0
