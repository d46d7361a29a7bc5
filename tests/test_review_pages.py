"""The pages a reviewer reads, for three sample reviews, in Debian's chromium (issue 13).

Samples: somers_etj_near_kenosha (Somers, extraterritorial, soil loss on an R proxy),
deerfield_wetland_floodplain (wetland and floodplain, extraordinary site) and
deerfield_larger_site (TR-55 peaks on illustrative rainfall). For each: report.html
keeps determinations apart from compliance results, shows its caveats and engineering
inputs, carries no rule ids or JSON paths in its visible text and prints in at most seven
Letter pages; every map layer's popup is reachable by a click; the batch index links each
report and states each outcome. Screenshots go to pytest's tmp folder.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely
from _web_helpers import CHROMIUM, PageWatch

from georeview.report import map_data, map_popups, map_styles, rule_reads, webmap, write_reports
from georeview.report.reader import DETERMINATION_KINDS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium not installed"),
]

REPO = Path(__file__).resolve().parents[1]
SAMPLES = ("somers_etj_near_kenosha", "deerfield_wetland_floodplain", "deerfield_larger_site")
#: Developer wording that must not reach a reviewer's visible text: rule ids, JSON paths
#: into report.json, dotted snake_case keys, TOML arrays and tables, relative paths,
#: nodata sentinels, float noise and "1 acres".
FORBIDDEN = {
    "rule id": re.compile(r"\b(?:deerfield|somers)\.[a-z0-9_]+(?:\.[a-z0-9_]+)*"),
    "JSON path": re.compile(r"\bengineering\.[a-z_]+|\bmeasures\.[a-z_]+"),
    "dotted key": re.compile(r"\b[a-z]+\.[a-z]+_[a-z_]+\b"),
    "TOML": re.compile(r"=\s*\[|\[[a-z_]+\]\s+[a-z_]+"),
    "path": re.compile(r"\.\./|/shared/"),
    "nodata": re.compile(r"-9999"),
    "float noise": re.compile(r"\d\.\d{6,}"),
    "1 acres": re.compile(r"\b1(?:\.0+)? acres\b"),
}


def _forbidden(text: str) -> dict[str, list[str]]:
    return {k: rx.findall(text)[:3] for k, rx in FORBIDDEN.items() if rx.search(text)}


@pytest.fixture(scope="module")
def reviews(tmp_path_factory):
    from georeview.pipeline.review import review

    out = {}
    base = tmp_path_factory.mktemp("pages")
    for name in SAMPLES:
        rev = review(REPO / "sample_sites" / name)
        paths = write_reports(rev, base / name)
        out[name] = (rev, paths, json.loads(paths["json"].read_text(encoding="utf-8")))
    return out


@pytest.fixture
def page(browser):
    p = browser.new_page(viewport={"width": 1200, "height": 800})
    yield p
    p.close()


# --------------------------------------------------------------------------- report.html


@pytest.mark.parametrize("name", SAMPLES)
def test_report_page_for_a_reviewer(page, reviews, name, tmp_path):
    _rev, paths, report = reviews[name]
    watch = PageWatch(page)
    page.goto(paths["html"].as_uri())
    page.frame_locator("iframe.map").locator(".leaflet-control-layers").wait_for()
    page.screenshot(path=str(tmp_path / f"{name}-report.png"), full_page=True)
    assert watch.errors == []
    assert watch.network() == []
    visible = page.locator("body").inner_text()

    # 1. Determinations are not compliance results: no "Passes" among them, and the
    # verdict's pass count leaves them out (counted here from report.json's kinds).
    det = page.locator("#determinations-table").inner_text()
    assert "Passes" not in det
    assert re.search(r"Applies|Classified as|Not exempt|Does not apply", det)
    compliance_pass = sum(
        f["status"] == "pass" and f["kind"] not in DETERMINATION_KINDS for f in report["findings"]
    )
    counts = page.locator("#counts").inner_text()
    # passes on the applicant's word are counted apart (issue 24 item 1)
    declared = sum(bool(f.get("declared")) for f in report["findings"])
    assert f"{compliance_pass - declared} pass" in counts
    assert f"{declared} declared: verify on the sheets" in counts
    assert report["summary"]["counts"]["pass"] > compliance_pass  # JSON counts both
    assert page.locator("#findings-pass tr.f-pass, table.condensed tr.f-pass").count() == (
        compliance_pass
    )
    # Evidence in words beside each compliance row.
    assert page.locator("tr.f-pass .ev").count() >= compliance_pass

    # 3. No developer wording in what the reviewer sees (technical details are closed).
    assert _forbidden(visible) == {}
    assert "rule_id" not in visible
    # ... but it is all still there for whoever opens the technical details.
    page.locator("#technical > summary").click()
    assert report["findings"][0]["rule_id"] in page.locator("#technical").inner_text()

    # 4. Print: at most seven Letter pages (the sign-off, the reasons and the exhibit
    # print since issue 24), and the map's controls are not printed.
    from pypdf import PdfReader

    pdf = page.pdf(format="Letter")
    n_pages = len(PdfReader(io.BytesIO(pdf)).pages)
    (tmp_path / f"{name}.pdf").write_bytes(pdf)
    assert n_pages <= 7, f"{name}: {n_pages} Letter pages"


def test_village_determinations_on_screen_and_in_print(page, reviews, tmp_path):
    # Deerfield 31.06(4): the Master Plan question is the Village's. Without a
    # determinations file the page lists it as still to decide; with one, it shows the
    # decision, who made it, when and why, on screen and in the printed report, which
    # stays within seven Letter pages.
    from pypdf import PdfReader

    from georeview.pipeline.review import review

    _, paths, _ = reviews["deerfield_larger_site"]
    page.goto(paths["html"].as_uri())
    pending = page.locator("#village-pending")
    assert pending.is_visible()
    assert "Village Master Plan" in pending.inner_text()
    assert "no determinations file was given" in page.locator("#village").inner_text()

    sub = tmp_path / "deerfield_larger_site"
    shutil.copytree(REPO / "sample_sites" / sub.name, sub)
    decided = tmp_path / "determinations.toml"  # the reviewer's, outside the submission
    decided.write_text(
        'municipality = "deerfield"\n\n[determinations.master_plan_area]\nvalue = true\n'
        'by = "A. Reviewer, Village Engineer"\ndate = 2025-05-02\n'
        'reason = "Master Plan map 4 shows an environmental corridor."\n',
        encoding="utf-8",
    )
    out = write_reports(review(sub, determinations=decided), tmp_path / "out")
    watch = PageWatch(page)
    page.goto(out["html"].as_uri())
    page.frame_locator("iframe.map").locator(".leaflet-control-layers").wait_for()
    assert watch.errors == []
    for media in ("screen", "print"):
        page.emulate_media(media=media)
        given = page.locator("#village-given")
        assert given.is_visible(), media
        text = given.inner_text()
        assert "A. Reviewer, Village Engineer, 2025-05-02" in text, media
        assert "environmental corridor" in text, media
        assert "§ 31.06(4)" in text, media
        assert "Village Master Plan" not in page.locator("#village-pending").inner_text()
        assert _forbidden(page.locator("#village").inner_text()) == {}
    # Back to no emulation: an emulated "screen" would print with the screen stylesheet.
    page.emulate_media(media=None)
    n_pages = len(PdfReader(io.BytesIO(page.pdf(format="Letter"))).pages)
    assert n_pages <= 7, f"{n_pages} Letter pages"


def test_caveats_and_inputs_reach_the_page(page, reviews):
    # Somers: R = 150 is a stated proxy (sample_sites/README.md), beside the soil-loss
    # finding; each phase's share of annual erosivity shows with its stated source.
    _, paths, _ = reviews["somers_etj_near_kenosha"]
    page.goto(paths["html"].as_uri())
    top = page.locator("#caveats").inner_text()
    assert "proxy" in top
    assert "unconfirmed" in top
    # 17.08(C)(2)(a) waits on the Administrator's call on the written maximum extent
    # practicable explanation (its escape clause), so the row is needs_info, not fail.
    row = page.locator("tr.f-needs_info", has_text="§ 17.08(C)(2)")
    assert "proxy" in row.inner_text()
    usle = page.locator("#usle-inputs").inner_text()
    assert "150" in usle
    assert "0.43" in usle
    phases = page.locator("#usle-phases").inner_text()
    assert "bare" in phases
    assert "gravel" in phases
    assert "0.05" in phases
    assert "Illustrative monthly erosivity shares" in phases

    # Deerfield larger site: the declared depths (README: 1-yr 2.5 ... 100-yr 6.6 in) are
    # "illustrative ... not NOAA Atlas 14"; the peak findings say so beside them.
    _, paths, report = reviews["deerfield_larger_site"]
    page.goto(paths["html"].as_uri())
    assert "not NOAA Atlas 14" in page.locator("#caveats").inner_text()
    rain = page.locator("#rainfall-inputs").inner_text()
    for depth in ("2.50 in", "2.90 in", "3.60 in", "4.20 in", "6.60 in"):
        assert depth in rain
    runoff = page.locator("#runoff-inputs").inner_text()
    cn = report["engineering"]["curve_numbers"]
    assert f"{cn['pre']:.0f}" in runoff
    assert f"{cn['post']:.0f}" in runoff
    for row in page.locator("tr.f-fail").all():
        assert "not NOAA Atlas 14" in row.inner_text()


def test_needs_information_says_what_and_how(page, tmp_path):
    # deerfield_etj_subdivision declares no [hydrology]: its peaks need information.
    from georeview.pipeline.review import review

    rev = review(REPO / "sample_sites" / "deerfield_etj_subdivision")
    paths = write_reports(rev, tmp_path / "out", with_map=False)
    page.goto(paths["html"].as_uri())
    rows = page.locator("tr.f-needs_info")
    assert rows.count() == rev.to_dict()["summary"]["counts"]["needs_info"]
    # the first peak finding (the Village's own questions, 31.06(4), come before it)
    first = next(
        rows.nth(i)
        for i in range(rows.count())
        if "rainfall" in rows.nth(i).locator("td.missing").inner_text().lower()
    )
    # in plain words who owes it; the submission.toml keys folded away (not printed)
    assert first.locator("td.supply p.owner").inner_text() == "The applicant supplies it."
    how = first.locator("td.supply").text_content()
    assert "submission.toml" in how
    assert '"rainfall_in"' in how
    assert "engineering." not in first.inner_text()
    assert "Limit 0 cfs" not in first.inner_text()


# --------------------------------------------------------------------------- map.html


def _feature_points(rev, report) -> dict[str, tuple[float, float]]:
    """For each shown layer, a lon/lat point on its first feature (inside an area)."""
    out = {}
    for key, gdf in map_data.map_frames(rev, report).items():
        style = map_styles.style_for(key)
        if not style.show:
            continue
        g = gdf.to_crs(rev.layers.working_crs).geometry
        g = g[~(g.isna() | g.is_empty)]
        if not len(g):
            continue
        geom = g.iloc[0]
        if geom.geom_type in ("Polygon", "MultiPolygon"):
            # Inside the site's view: the part of the area nearest the site.
            near = shapely.intersection(geom, shapely.buffer(rev.submission.site_geom, 200))
            geom = near if not near.is_empty else geom
            pt = shapely.point_on_surface(geom)
        elif geom.geom_type in ("LineString", "MultiLineString"):
            pt = shapely.line_interpolate_point(shapely.line_merge(geom), 0.5, normalized=True)
            pt = shapely.get_point(pt, 0) if pt.geom_type != "Point" else pt
        else:
            pt = shapely.get_point(geom, 0) if geom.geom_type != "Point" else geom
        ll = gpd.GeoSeries([pt], crs=rev.layers.working_crs).to_crs(4326).iloc[0]
        out[key] = (ll.y, ll.x)
    return out


@pytest.mark.parametrize("name", SAMPLES)
def test_every_layer_popup_is_reachable_by_a_click(page, reviews, name, tmp_path):
    rev, paths, report = reviews[name]
    watch = PageWatch(page)
    page.goto(paths["map"].as_uri())
    page.wait_for_selector(".leaflet-control-layers-overlays")
    page.screenshot(path=str(tmp_path / f"{name}-map.png"))
    points = _feature_points(rev, report)
    assert {"site", "disturbance"} <= set(points)
    box = page.locator(".leaflet-container").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    texts = []
    for key, (lat, lon) in points.items():
        label = map_styles.style_for(key).label
        page.evaluate(
            "([lat, lon]) => { const m = Object.values(window).find(v => v instanceof L.Map);"
            " m.closePopup();"
            " m.setView([lat, lon], Math.max(m.getZoom(), 17), {animate: false}); }",
            [lat, lon],
        )
        page.wait_for_function("!document.querySelector('.leaflet-popup')")
        page.mouse.click(cx, cy)
        popup = page.locator(".leaflet-popup-content")
        popup.wait_for()
        text = popup.inner_text()
        # The clicked feature's popup, or a section of the list of what lies under it.
        assert label in text, f"{name}: no popup for {key} ({label}) at its own feature"
        texts.append(text)
        for summary in popup.locator("details.gr-other > summary").all():
            summary.click()
        texts.append(popup.inner_text())
    every = "\n".join(texts)
    assert watch.errors == []
    assert not re.search(r"-9999", every)
    assert not re.search(r"\d\.\d{5,}", every)  # "951.4435695538057"
    assert "passes" not in " ".join(
        t.split("Also here")[0] for t in texts if t.startswith(map_styles.LAYERS["site"].label)
    )


def test_zone_x_polygon_does_not_carry_the_100_year_finding(reviews):
    rev, _, report = reviews["deerfield_wetland_floodplain"]
    page = webmap.render_map(webmap.build_map(rev, report))
    info = json.loads(
        re.search(r"georeview\.info = (\{.*?\});georeview\.patterns", page, re.S)
        .group(1)
        .replace("\\u003c", "<")
        .replace("\\u003e", ">")
        .replace("\\u0026", "&")
    )
    groups = info["floodplain"]["groups"]
    assert groups["other"]["findings"] == []
    assert "0.2 % annual chance" in groups["other"]["note"]
    hundred = [f for f in groups["sfha"]["findings"] if "100-year floodplain" in f["message"]]
    assert hundred, "the 1 % annual chance polygons carry the floodplain finding"
    # Every zone X polygon of the layer is in group "other" (FEMA: X is not an SFHA).
    fp = rev.map_layers["floodplain"]
    grp = map_data.feature_groups("floodplain", fp, rev.layers.spec("floodplain"))
    zone = fp["FLD_ZONE"].astype(str).str.upper().to_numpy()
    assert (grp[zone == "X"] == "other").all()
    assert (grp[zone != "X"] != "other").all()


def test_downstream_layer_carries_the_discharge_rule(reviews):
    rev, _, report = reviews["somers_etj_near_kenosha"]
    found = map_popups.layer_findings(
        report, rule_reads.rule_facts(rev.ordinance), map_styles.LAYERS["downstream"]
    )
    assert any(f["citation"] == "§ 17.10(B)(4)(h)" for f in found)


def test_merged_paths_join_where_paths_meet():
    # Hand-worked: two paths from (0, 10) and (10, 10) meet at (5, 0) and run on to
    # (5, -20) together: three lines (two branches and the shared stretch), not two
    # overlapping polylines.
    a = shapely.LineString([(0, 10), (5, 0), (5, -20)])
    b = shapely.LineString([(10, 10), (5, 0), (5, -20)])
    merged = map_data.merged_paths(gpd.GeoDataFrame(geometry=[a, b], crs=3071))
    assert len(merged) == 3
    assert sorted(round(g.length, 6) for g in merged.geometry) == sorted(
        [round(np.hypot(5, 10), 6)] * 2 + [20.0]
    )
    # Side by side a cell apart (10 m) and never meeting: one line for the band.
    c = shapely.LineString([(0, 0), (0, -100)])
    d = shapely.LineString([(10, 0), (10, -100)])
    band = map_data.merged_paths(gpd.GeoDataFrame(geometry=[c, d], crs=3071), band_width=15)
    assert len(band) == 1
    assert band["n_paths"].iloc[0] == 2
    apart = map_data.merged_paths(gpd.GeoDataFrame(geometry=[c, d], crs=3071), band_width=5)
    assert len(apart) == 2


# Machado, Oliveira & Fernandes (2009), "A physiologically-based model for simulation of
# color vision deficiency", IEEE TVCG 15(6): severity 1.0 matrices on linear RGB.
CVD = {
    "normal": np.eye(3),
    "protanopia": np.array(
        [
            [0.152286, 1.052583, -0.204868],
            [0.114503, 0.786281, 0.099216],
            [-0.003882, -0.048116, 1.051998],
        ]
    ),
    "deuteranopia": np.array(
        [
            [0.367322, 0.860646, -0.227968],
            [0.280085, 0.672501, 0.047413],
            [-0.011820, 0.042940, 0.968881],
        ]
    ),
    "tritanopia": np.array(
        [
            [1.255528, -0.076749, -0.178779],
            [-0.078411, 0.930809, 0.147602],
            [0.004733, 0.691367, 0.303900],
        ]
    ),
}


def _lab(hex_colours: list[str], matrix: np.ndarray) -> np.ndarray:
    """CIE L*a*b* (D65) of sRGB colours seen through a colour-vision matrix."""
    rgb = np.array([[int(h[i : i + 2], 16) / 255 for i in (1, 3, 5)] for h in hex_colours])
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    lin = np.clip(lin @ matrix.T, 0, 1)
    xyz = (
        lin
        @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]).T
    )
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], 1)


def test_fills_are_distinct_for_colour_blind_readers():
    keys = ["extraterritorial", "disturbance", "wetlands", "floodplain", "steep_slopes"]
    fills = [map_styles.LAYERS[k].fill for k in keys]
    assert len(set(fills)) == len(fills)
    for vision, matrix in CVD.items():
        lab = _lab(fills, matrix)
        d = np.linalg.norm(lab[:, None] - lab[None], axis=2)
        d[np.eye(len(keys), dtype=bool)] = np.inf
        # CIE76 delta E of 10 is a difference anyone sees side by side; the old palette
        # (#fdbf6f extraterritorial vs #fdae6b disturbance) was 5.6 with normal vision.
        i, j = np.unravel_index(np.argmin(d), d.shape)
        assert d.min() > 10, f"{vision}: {keys[i]} and {keys[j]} look alike ({d.min():.1f})"
    old = _lab(["#fdbf6f", "#fdae6b"], CVD["normal"])
    assert np.linalg.norm(old[0] - old[1]) < 10  # the test would have caught the old pair


# --------------------------------------------------------------------------- index pages


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    from georeview.pipeline.batch import review_many

    base = tmp_path_factory.mktemp("batch")
    folder = base / "subs"
    folder.mkdir()
    for name in (*SAMPLES, "deerfield_etj_subdivision"):
        shutil.copytree(REPO / "sample_sites" / name, folder / name)
    return review_many(folder, base / "out")


def test_batch_index_and_summary(page, batch, tmp_path):
    with open(batch.summary_csv, newline="") as fh:
        rows = {r["name"]: r for r in csv.DictReader(fh)}
    # 5 need information from the applicant, 4 are for the Village to decide (31.06(3)(B)
    # basin required, 31.06(4) master-plan areas and the Board's referral, 31.12(2)(A) the
    # Village Engineer's cost estimate the security rests on)
    # the applicant owes the peaks' inputs: return to the applicant (summary.outcome)
    assert rows["deerfield_etj_subdivision"]["outcome"] == "return to applicant"
    assert rows["deerfield_etj_subdivision"]["needs_info"] == "9"
    # the larger site describes detention without a routed outflow: its peaks are unknown
    # (needs_info), not failed; whether it lies in master-plan areas is the Village's
    assert rows["deerfield_larger_site"]["outcome"] == "return to applicant"
    assert rows["deerfield_larger_site"]["fail"] == "0"
    assert rows["deerfield_wetland_floodplain"]["extraordinary"] == "yes"
    assert rows["deerfield_larger_site"]["extraordinary"] not in ("yes", "no")
    for name, r in rows.items():
        assert r["report_html"] == f"{name}/report.html"
        assert (batch.out / r["report_html"]).is_file()
    watch = PageWatch(page)
    page.goto((batch.out / "index.html").as_uri())
    page.wait_for_selector("#results tbody tr")
    page.screenshot(path=str(tmp_path / "batch-index.png"))
    assert watch.errors == []
    links = page.locator('#results tbody a[href$="/report.html"]')
    assert links.count() == len(rows)
    assert "return to applicant" in page.locator("#georeview-legend").inner_text()
    assert "village limits" in page.locator("#georeview-legend").inner_text()
    # The overview opens on the submissions (zoomed past the whole of both villages).
    zoom = page.evaluate("window.georeviewIndex.map.getZoom()")
    assert zoom >= 9
    links.first.click()
    page.wait_for_load_state()
    assert page.url.endswith("/report.html")
    assert ogr_layers(batch.out / sorted(rows)[0] / "layers.gpkg")


def ogr_layers(path: Path) -> dict[str, int]:
    """Layer name → feature count, as GDAL's ogrinfo reads the file."""
    res = subprocess.run(
        ["ogrinfo", "-so", "-al", str(path)], capture_output=True, text=True, check=True
    )
    names = re.findall(r"Layer name: (\S+)", res.stdout)
    counts = [int(n) for n in re.findall(r"Feature Count: (\d+)", res.stdout)]
    return dict(zip(names, counts, strict=True))


def test_screening_index_colours_repaired_parcels_by_outcome(page, tmp_path):
    from _build import CAMBRIDGE_PARCELS

    from georeview.report.index import index_data, write_index

    parcels = gpd.read_file(CAMBRIDGE_PARCELS, rows=40).to_crs(26986)
    n = len(parcels)
    status = np.array(["ok"] * n, dtype=object)
    error = np.array([""] * n, dtype=object)
    status[:3] = "repaired"
    error[:3] = "self-intersection; repaired"
    status[3] = "error"
    error[3] = "GeometryError: empty"
    rows = gpd.GeoDataFrame(
        {
            "id": parcels["ML"].astype(str),
            "status": status,
            "regulated": ["yes"] * n,
            "category": ["minor"] * n,
            "error": error,
        },
        geometry=parcels.geometry,
        crs=parcels.crs,
    )
    data = index_data(rows, working_crs="EPSG:26986")
    outcomes = [r[0] for r in data["rows"]]
    assert outcomes[:4] == ["minor", "minor", "minor", "error"]
    assert data["repaired"] == [0, 1, 2]
    assert data["counts"] == {"minor": n - 1, "error": 1}
    path = write_index(rows, tmp_path / "screen.html", title="Screening", working_crs=26986)
    page.goto(path.as_uri())
    page.wait_for_selector("#results tbody tr")
    page.screenshot(path=str(tmp_path / "screen-index.png"))
    assert "geometry repaired (3)" in page.locator("#georeview-legend").inner_text()
    assert page.locator("#results tbody .repaired").count() == 3


# --------------------------------------------------------------------------- layers.gpkg


def test_layers_gpkg_opens_in_ogrinfo_with_every_layer(reviews):
    from georeview.report.gpkg import SCHEMA

    for name in SAMPLES:
        _, paths, report = reviews[name]
        layers = ogr_layers(paths["gpkg"])
        # every layer of SCHEMA, then QGIS's styles table (no geometry)
        assert list(layers) == [*SCHEMA, "layer_styles"]
        assert layers["layer_styles"] == len(SCHEMA)
        assert layers["site"] == 1
        assert layers["disturbance"] == 1
        assert layers["contours"] > 0
        pieces = gpd.read_file(paths["gpkg"], layer="jurisdiction")
        # The pieces add up to the site, and match the jurisdiction stage's areas (each
        # written to 0.1 sq ft: within half a tenth of the exact value per piece)
        assert pieces["area_sqft"].sum() == pytest.approx(
            report["measures"]["site_area_sqft"], rel=1e-6, abs=0.05 * (len(pieces) + 1)
        )
        for _, p in pieces.iterrows():
            assert p["area_sqft"] == pytest.approx(
                report["jurisdiction"]["area_sqft"][p["piece"]], rel=1e-6, abs=0.1
            )
    _rev, paths, report = reviews["somers_etj_near_kenosha"]
    pts = gpd.read_file(paths["gpkg"], layer="discharge_points")
    assert len(pts) == len(report["measures"]["downstream"]["discharge_points"])
    assert set(pts["reaches_water"]) <= {"yes", "no", "unknown"}
    # each point where its path leaves the site, as on the map (issue 24 item 6): on the
    # boundary within 1 ft (0.3048 m in EPSG:3071), the cell centre kept as attributes
    ring = shapely.boundary(_rev.submission.site_geom)
    on_edge = pts["at"] == "boundary"
    assert on_edge.any()
    assert (shapely.distance(pts.geometry[on_edge].to_numpy(), ring) < 0.3048).all()
    cells = report["measures"]["downstream"]["discharge_points"]
    assert pts["cell_x"].tolist() == pytest.approx([c["x"] for c in cells])
    site = gpd.read_file(paths["gpkg"], layer="site")
    assert site["jurisdiction"].iloc[0] == "extraterritorial"


def test_layers_gpkg_areas_hand_worked(tmp_path):
    # A 200 ft x 150 ft site (30,000 sq ft) inside Deerfield's limits: one village piece
    # of 30,000 sq ft; the disturbance carries the review's measured area.
    from _web_helpers import make_review

    rev = make_review(tmp_path)
    paths = write_reports(rev, tmp_path / "out", with_map=False)
    pieces = gpd.read_file(paths["gpkg"], layer="jurisdiction")
    assert list(pieces["piece"]) == ["village"]
    assert pieces["area_sqft"].iloc[0] == pytest.approx(30_000, rel=1e-6)
    assert pieces["share"].iloc[0] == pytest.approx(1.0, rel=1e-9)
    dist = gpd.read_file(paths["gpkg"], layer="disturbance")
    measured = rev.to_dict()["measures"]["disturbed_area_sqft"]
    assert dist["area_sqft"].iloc[0] == pytest.approx(measured, rel=1e-9)
    steep = gpd.read_file(paths["gpkg"], layer="steep_slopes")
    assert steep["area_sqft"].iloc[0] == pytest.approx(60 * 40, rel=1e-6)  # box_ft 60 x 40
