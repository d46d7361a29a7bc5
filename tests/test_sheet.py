"""Tests of georeview.report.sheet: the printed scale is measured in the PDF itself.

PDF user space is 72 points per inch (ISO 32000-1, 8.3.2.3), so a ledger page is
17 x 11 in = 1224 x 792 pt and ANSI D 34 x 22 in = 2448 x 1584 pt. The site is a
400 ft x 300 ft rectangle built in EPSG:3071 metres (0.3048 m per ft, exact); its boundary
is found in the page's content stream by its stroke colour, and its drawn width in
points / 72 x (ft per inch) must give back 400 ft within 0.5 %.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely
from _build import write_dem
from pypdf import PdfReader
from pypdf.generic import ContentStream
from shapely.geometry import LineString

from georeview.cli import sitemap as sheet_cli
from georeview.errors import InputError, LimitError, OutputError
from georeview.report.sheet import make_sheet
from georeview.report.sheet_layers import SITE_COLOR
from georeview.report.sheet_layout import LAYOUTS, choose_scale, grid_labels
from georeview.units import M_PER_FT
from tests._build import box_ft, write_submission

CX, CY = 580_000.0, 290_000.0
PT_PER_IN = 72.0
REPO = Path(__file__).resolve().parents[1]


def build_layers(folder: Path) -> Path:
    """A small Somers-like layers folder: a DEM plane with a 30 % bank, and vector layers."""
    folder.mkdir(parents=True, exist_ok=True)
    gpd.GeoDataFrame(
        {"MCD_NAME": ["Testville"], "CTV": ["V"]},
        geometry=[shapely.box(CX - 3000, CY - 3000, CX + 3000, CY + 3000)],
        crs=3071,
    ).to_file(folder / "boundary.gpkg")
    res, n = 2.0, 600
    x0, y1 = CX - n * res / 2, CY + n * res / 2
    xs = x0 + res * (np.arange(n) + 0.5)
    ys = y1 - res * (np.arange(n) + 0.5)
    X, Y = np.meshgrid(xs, ys)
    # 4 % and 2 % plane, plus a 30 % bank east of CX + 20 m (steep slopes in the disturbance).
    z = 250.0 + 0.04 * (X - CX) + 0.02 * (Y - CY) + 0.30 * np.clip(X - CX - 20, 0, 15)
    write_dem(folder / "dem.tif", z.astype("float32"), res=res, origin=(x0, y1))
    gpd.GeoDataFrame(
        {"WETCODE": ["E1K"]}, geometry=[shapely.box(CX + 55, CY - 20, CX + 90, CY + 25)], crs=3071
    ).to_file(folder / "wetlands.gpkg")
    gpd.GeoDataFrame(
        {"FLD_ZONE": ["AE", "AE"], "ZONE_SUBTY": [None, "FLOODWAY"], "SFHA_TF": ["T", "T"]},
        geometry=[
            shapely.box(CX - 120, CY - 150, CX - 70, CY + 150),
            shapely.box(CX - 105, CY - 150, CX - 95, CY + 150),
        ],
        crs=3071,
    ).to_file(folder / "floodplain.gpkg")
    gpd.GeoDataFrame(
        {"GNIS_NAME": ["Test Creek", "Ditch"], "FType": [460, 336]},
        geometry=[
            LineString([(CX - 100, CY - 400), (CX - 100, CY + 400)]),
            LineString([(CX - 300, CY + 70), (CX + 300, CY + 70)]),
        ],
        crs=3071,
    ).to_file(folder / "hydrography.gpkg")
    gpd.GeoDataFrame(
        {"FULLNAME": ["Main St"]},
        geometry=[LineString([(CX - 400, CY - 60), (CX + 400, CY - 60)])],
        crs=3071,
    ).to_file(folder / "roads.gpkg")
    (folder / "layers.toml").write_text(
        'municipality = "somers"\nvillage_name = "Testville"\n'
        '[boundary]\npath = "boundary.gpkg"\n'
        '[dem]\npath = "dem.tif"\nvertical_units = "m"\n'
        '[wetlands]\npath = "wetlands.gpkg"\n[floodplain]\npath = "floodplain.gpkg"\n'
        '[hydrography]\npath = "hydrography.gpkg"\nname_field = "GNIS_NAME"\n'
        '[roads]\npath = "roads.gpkg"\n'
    )
    return folder


TOML = 'municipality = "somers"\nname = "Test site"\n[activity]\nkinds = ["building"]\n'


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("sheet")
    layers = build_layers(base / "layers")
    site = box_ft(CX, CY, 400, 300)
    sub = write_submission(base / "sub", site, toml=TOML, disturbance=box_ft(CX + 10, CY, 300, 200))
    info = make_sheet(sub, base / "ledger.pdf", layers_dir=layers)
    return {"base": base, "layers": layers, "sub": sub, "site": site, "ledger": info}


def stroked_paths(pdf: Path, rgb: tuple[float, float, float]) -> list[np.ndarray]:
    """Points (pt) of every path stroked in colour ``rgb`` on page 1 (m/l/S operators)."""
    reader = PdfReader(pdf)
    ops = ContentStream(reader.pages[0].get_contents(), reader).operations
    out, color, pts = [], None, []
    for operands, op in ops:
        if op == b"RG":
            color = tuple(float(v) for v in operands)
        elif op in (b"m", b"l"):
            pts.append([float(v) for v in operands])
        elif op in (b"S", b"s", b"n", b"f", b"B", b"f*", b"B*", b"W"):
            if op in (b"S", b"s") and color and np.allclose(color, rgb) and pts:
                out.append(np.array(pts))
            pts = []
        elif op == b"Q":
            color = None
    return out


def site_paths(info) -> list[np.ndarray]:
    """Site-coloured paths inside the map frame (the legend sample lies outside it)."""
    x0, y0, w, h = (v * PT_PER_IN for v in info.map_frame_in)
    return [
        p
        for p in stroked_paths(info.path, SITE_COLOR)
        if (p[:, 0] >= x0).all()
        and (p[:, 0] <= x0 + w).all()
        and (p[:, 1] >= y0).all()
        and (p[:, 1] <= y0 + h).all()
    ]


def clip_rects(pdf: Path) -> list[tuple[float, ...]]:
    """Rectangles (x, y, w, h in pt) used as clip paths (``re W``): the axes frames."""
    reader = PdfReader(pdf)
    ops = ContentStream(reader.pages[0].get_contents(), reader).operations
    return [
        tuple(float(v) for v in ops[i][0])
        for i in range(len(ops) - 1)
        if ops[i][1] == b"re" and ops[i + 1][1] == b"W"
    ]


# --------------------------------------------------------------------------- the PDF


def test_ledger_page_size_and_true_scale(built):
    info = built["ledger"]
    pdf = info.path
    reader = PdfReader(pdf)
    assert len(reader.pages) == 1
    box = reader.pages[0].mediabox
    assert float(box.width) == pytest.approx(17 * PT_PER_IN, abs=0.5)
    assert float(box.height) == pytest.approx(11 * PT_PER_IN, abs=0.5)
    # 400 x 300 ft plus the 100-ft adjacent band on each side = 600 x 500 ft. On a 12 x 9 in
    # frame 1 in = 50 ft needs 10 in of height (too much); 1 in = 60 ft needs 10 x 8.33 in.
    assert info.scale_ft_per_inch == 60
    paths = site_paths(info)
    assert len(paths) == 1
    pts = paths[0]
    width_ft = (pts[:, 0].max() - pts[:, 0].min()) / PT_PER_IN * info.scale_ft_per_inch
    height_ft = (pts[:, 1].max() - pts[:, 1].min()) / PT_PER_IN * info.scale_ft_per_inch
    assert width_ft == pytest.approx(400.0, rel=0.005)
    assert height_ft == pytest.approx(300.0, rel=0.005)


def test_plotted_extent_matches_the_frame(built):
    info = built["ledger"]
    x0_in, y0_in, w_in, h_in = info.map_frame_in
    rects = clip_rects(info.path)
    frame_pt = (x0_in * 72, y0_in * 72, w_in * 72, h_in * 72)
    assert any(np.allclose(r, frame_pt, atol=0.05) for r in rects), rects
    # The map extent (EPSG:3071 metres) spans exactly frame inches x scale.
    ex0, ey0, ex1, ey1 = info.map_extent
    assert (ex1 - ex0) / M_PER_FT == pytest.approx(w_in * info.scale_ft_per_inch, rel=1e-9)
    assert (ey1 - ey0) / M_PER_FT == pytest.approx(h_in * info.scale_ft_per_inch, rel=1e-9)
    # The site's west edge is drawn where the extent puts it: a ground offset measured on
    # the page (pt from the frame edge / 72 x scale) equals the offset in the CRS.
    pts = site_paths(info)[0]
    site = built["site"]
    off_ft = (site.bounds[0] - ex0) / M_PER_FT
    page_ft = (pts[:, 0].min() - frame_pt[0]) / PT_PER_IN * info.scale_ft_per_inch
    assert page_ft == pytest.approx(off_ft, rel=0.005)
    off_ft = (ey1 - site.bounds[3]) / M_PER_FT
    page_ft = (frame_pt[1] + frame_pt[3] - pts[:, 1].max()) / PT_PER_IN * info.scale_ft_per_inch
    assert page_ft == pytest.approx(off_ft, rel=0.005)


def test_sheet_content(built):
    info = built["ledger"]
    assert info.grid_columns == tuple("ABCDEFGHIJKL")
    assert info.grid_rows == 9
    assert info.grid_cell_ft == 60.0
    # The site (400 x 300 ft centred in a 720 x 540 ft frame) spans x 160-560 ft from the
    # west edge and 120-420 ft from the north edge: columns C-J (120-600), rows 3-7.
    cols = sorted({c[0] for c in info.site_cells})
    rows = sorted({int(c[1:]) for c in info.site_cells})
    assert cols == list("CDEFGHIJ")
    assert rows == [3, 4, 5, 6, 7]
    assert info.contours_drawn
    assert info.contour_interval_ft == 2.0
    for name in (
        "site",
        "disturbance",
        "wetlands",
        "floodplain",
        "floodway",
        "waters",
        "roads",
        "contours",
        "steep_slopes",
    ):
        assert name in info.layers_drawn, name
    text = PdfReader(info.path).pages[0].extract_text()
    for words in ("SCALE: 1 in = 60 ft", "LEGEND", "SITE MAP", "Test site", "N"):
        assert words in text


def test_ansi_d_sheet(built):
    info = make_sheet(
        built["sub"],
        built["base"] / "d.pdf",
        layers_dir=built["layers"],
        sheet="ansi_d",
        contour_interval_ft=5.0,
    )
    box = PdfReader(info.path).pages[0].mediabox
    assert (float(box.width), float(box.height)) == pytest.approx((2448.0, 1584.0), abs=0.5)
    # 600 x 500 ft on 28 x 20 in: 1 in = 20 ft needs 30 in (too wide); 1 in = 30 ft fits.
    assert info.scale_ft_per_inch == 30
    pts = site_paths(info)[0]
    width_ft = (pts[:, 0].max() - pts[:, 0].min()) / PT_PER_IN * 30
    assert width_ft == pytest.approx(400.0, rel=0.005)
    assert info.grid_columns == grid_labels(14)
    assert info.grid_cell_ft == 60.0


# --------------------------------------------------------------------------- choices, errors


@pytest.mark.parametrize(
    ("w_ft", "h_ft", "sheet", "scale"),
    [
        (240, 180, "ledger", 20),  # 12 x 9 in exactly at 1 in = 20 ft
        (241, 180, "ledger", 30),
        (600, 500, "ledger", 60),
        (1200, 900, "ledger", 100),
        (1201, 900, "ledger", None),
        (1300, 800, "ansi_d", 50),  # 26 x 16 in on 28 x 20
        (2800, 2000, "ansi_d", 100),
        (2801, 2000, "ansi_d", None),
    ],
)
def test_choose_scale_hand_worked(w_ft, h_ft, sheet, scale):
    assert choose_scale(w_ft, h_ft, LAYOUTS[sheet]) == scale


def test_grid_labels():
    assert grid_labels(3) == ("A", "B", "C")
    assert grid_labels(28)[-3:] == ("Z", "AA", "AB")


def test_too_large_a_site_is_refused(built, tmp_path):
    # 2,700 x 2,000 ft plus 200 ft of margins exceeds ANSI D at 1 in = 100 ft (2,800 x 2,000).
    sub = write_submission(tmp_path / "big", box_ft(CX, CY, 2700, 2000), toml=TOML)
    with pytest.raises(LimitError, match="does not fit"):
        make_sheet(sub, tmp_path / "x.pdf", layers_dir=built["layers"], with_terrain=False)


@pytest.mark.parametrize("interval", [0.0, 5.01, 10.0])
def test_contour_interval_limit(built, tmp_path, interval):
    with pytest.raises(InputError, match="at most 5"):
        make_sheet(built["sub"], tmp_path / "x.pdf", contour_interval_ft=interval)


def test_cli_hook(built, tmp_path, capsys):
    parser = argparse.ArgumentParser()
    sheet_cli.add_arguments(parser)
    out = tmp_path / "cli.pdf"
    out.write_bytes(b"old")
    args = parser.parse_args(
        [str(built["sub"]), "--out", str(out), "--layers", str(built["layers"])]
    )
    with pytest.raises(OutputError, match="--overwrite"):
        sheet_cli.main(args)
    args = parser.parse_args(
        [str(built["sub"]), "--out", str(out), "--layers", str(built["layers"]), "--overwrite"]
    )
    assert sheet_cli.main(args) == 0
    assert "1 in = 60 ft" in capsys.readouterr().out
    assert out.read_bytes().startswith(b"%PDF")


def _sample_sites() -> list[Path]:
    root = REPO / "sample_sites"
    return sorted(p.parent for p in root.glob("*/submission.toml")) if root.is_dir() else []


@pytest.mark.slow
@pytest.mark.parametrize("site", _sample_sites() or [None], ids=lambda p: p.name if p else "none")
def test_sample_sites_draw(site, tmp_path):
    if site is None:
        pytest.skip("no sample_sites/ yet")
    info = make_sheet(site, tmp_path / f"{site.name}.pdf")
    assert info.scale_ft_per_inch in (20, 30, 40, 50, 60, 100)
    assert site_paths(info)


# --------------------------------------------------------------------------- scale vs own map


@pytest.mark.parametrize(
    ("w_ft", "h_ft", "own", "sheet", "scale"),
    [
        # Hand-worked on the frames (ledger 12 x 9 in, ANSI D 28 x 20 in):
        # 650 / 60 = 10.8 <= 12 and 500 / 60 = 8.3 <= 9, so ledger fits at 60 at best;
        # the map's own 1 in = 50 ft is finer, and ANSI D fits at 30 (21.7 x 16.7 in).
        (650, 500, 50, "ansi_d", 30),
        (650, 500, 100, "ledger", 60),  # ledger at 60 is no coarser than 100
        (650, 500, None, "ledger", 60),  # no own scale: ledger when it fits
        (1300, 900, 50, "ansi_d", 50),  # 13 in > 12 on ledger at 100; 26 x 18 in on D
        (240, 180, 20, "ledger", 20),
    ],
)
def test_sheet_never_coarser_than_the_own_map_when_ansi_d_fits(w_ft, h_ft, own, sheet, scale):
    from georeview.report.sheet_layout import pick_layout

    layout, got = pick_layout(w_ft, h_ft, "auto", own)
    assert (layout.name, got) == (sheet, scale)


def test_title_block_and_vicinity_inset(built, tmp_path):
    info = make_sheet(
        built["sub"],
        tmp_path / "t.pdf",
        layers_dir=built["layers"],
        sheet_number="2 of 3",
        preparer="J. Reviewer, Village Engineer",
        revision="1, 2025-05-01",
    )
    text = PdfReader(info.path).pages[0].extract_text()
    assert "SHEET 2 of 3" in text
    assert "Prepared by: J. Reviewer, Village Engineer" in text
    assert "Revision: 1, 2025-05-01" in text
    assert "VICINITY" in text
    # The inset is an axes of its own: one more clip rectangle than the map frame and
    # the legend, lying in the side panel (right of the map frame).
    px = LAYOUTS[info.sheet].panel_in[0] * PT_PER_IN
    assert any(r[0] >= px and r[2] > PT_PER_IN for r in clip_rects(info.path))
