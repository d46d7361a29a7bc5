"""One vector reader for every format, and screening outputs other tools open.

The real Cambridge, MA assessor parcels (13,116, City of Cambridge GIS, PDDL) are written
in every input format georeview reads; each copy screens to the same 176 parcels in the
100-year floodplain that ``test_screen.py`` counts independently with shapely, with the
same areas.
"""

from __future__ import annotations

import sqlite3
import warnings
import zipfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely
from _build import CAMBRIDGE_PARCELS, deerfield_layers
from _build import cambridge_layers as write_cambridge_layers

from georeview.errors import ConfigError, CRSError, DataSourceError, LimitError
from georeview.load import read_layer
from georeview.load.vector import read_vector, vector_info
from georeview.pipeline.assume import parse_columns
from georeview.pipeline.outputs import shapefile_names
from georeview.pipeline.run import run_screen

#: Parcels with a positive-area overlap of the Cambridge 1 % floodplain (test_screen.py,
#: checked there against shapely.intersects on the dissolved SFHA).
CAMBRIDGE_FLOODPLAIN_PARCELS = 176


def _zip(folder_or_files: list[Path], out: Path, root: Path) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in folder_or_files:
            files = sorted(f.rglob("*")) if f.is_dir() else [f]
            for g in files:
                zf.write(g, g.relative_to(root))
    return out


@pytest.fixture(scope="module")
def cambridge_formats(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The Cambridge parcels in every input format (with their real attributes)."""
    with warnings.catch_warnings():
        # GDAL warns while writing polygons of more than 100 rings (slow to assemble)
        warnings.filterwarnings("ignore", "organizePolygons", RuntimeWarning)
        return _write_formats(tmp_path_factory.mktemp("formats"))


def _write_formats(d: Path) -> dict[str, Path]:
    g = gpd.read_file(CAMBRIDGE_PARCELS)
    g["EditDate"] = g["EditDate"].astype("string")  # shapefile/FGDB dates differ in type
    paths = {"gpkg": CAMBRIDGE_PARCELS}
    g.to_file(d / "parcels.shp", engine="pyogrio")
    shp_parts = sorted(d.glob("parcels.*"))
    paths["shp"] = d / "parcels.shp"
    paths["shp.zip"] = _zip(shp_parts, d / "parcels_shp.zip", d)
    g.to_file(d / "parcels.geojson", engine="pyogrio", layer_options={"COORDINATE_PRECISION": 15})
    paths["geojson"] = d / "parcels.geojson"
    # FlatGeobuf's spatial index cannot hold the one null geometry
    g.to_file(d / "parcels.fgb", engine="pyogrio", layer_options={"SPATIAL_INDEX": "NO"})
    paths["fgb"] = d / "parcels.fgb"
    # a File Geodatabase stores coordinates on a grid (GDAL's default for degrees moves
    # them by up to ~1 cm); a grid of 1e-12 degree keeps them to double precision
    pyogrio.write_dataframe(
        g,
        d / "parcels.gdb",
        driver="OpenFileGDB",
        layer="parcels",
        layer_options={"XYSCALE": "1e12", "XYTOLERANCE": "1e-12"},
    )
    paths["gdb"] = d / "parcels.gdb"
    paths["gdb.zip"] = _zip([d / "parcels.gdb"], d / "parcels.gdb.zip", d)
    g.to_parquet(d / "parcels.parquet")
    paths["parquet"] = d / "parcels.parquet"
    csv = pd.DataFrame(g.drop(columns="geometry"))
    # full precision WKT (shapely's default rounds to 6 decimals, 0.1 m in longitude)
    csv["WKT"] = shapely.to_wkt(g.geometry.values, rounding_precision=-1)
    csv.to_csv(d / "parcels.csv", index=False)
    paths["csv"] = d / "parcels.csv"
    return paths


@pytest.fixture(scope="module")
def cambridge_layers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cambridge_layers(tmp_path_factory.mktemp("cam_layers"))


@pytest.fixture(scope="module")
def screened(
    cambridge_formats: dict[str, Path],
    cambridge_layers: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("screened")
    results = {}
    for name, path in cambridge_formats.items():
        dest = out / f"{name.replace('.', '_')}.parquet"
        run_screen(
            path,
            cambridge_layers,
            dest,
            columns=parse_columns(None, "ML"),
            partition_size=20_000,
            crs="EPSG:4326" if name == "csv" else None,
        )
        results[name] = dest
    return results


def test_every_format_reads_the_same_features(cambridge_formats: dict[str, Path]) -> None:
    base = gpd.read_file(CAMBRIDGE_PARCELS)
    for name, path in cambridge_formats.items():
        g = read_vector(path, crs="EPSG:4326" if name == "csv" else None)
        assert len(g) == len(base) == 13_116, name
        assert g.crs.equals(base.crs), name
        assert list(g["ML"].fillna("")) == list(base["ML"].fillna("")), name
        # same coordinates: areas in square degrees agree to 1e-6 relative (GeoJSON is written
        # with 15 significant digits, the File Geodatabase on its 1e-12 degree grid)
        a, b = shapely.area(g.geometry.values), shapely.area(base.geometry.values)
        ok = ~(np.isnan(a) | np.isnan(b))
        np.testing.assert_allclose(a[ok], b[ok], rtol=1e-6, atol=1e-16, err_msg=name)


def test_every_format_screens_to_176_floodplain_parcels(screened: dict[str, Path]) -> None:
    base = gpd.read_parquet(screened["gpkg"])
    assert (base["floodplain_sqft"] > 0).sum() == CAMBRIDGE_FLOODPLAIN_PARCELS
    for name, path in screened.items():
        df = gpd.read_parquet(path)
        assert (df["floodplain_sqft"] > 0).sum() == CAMBRIDGE_FLOODPLAIN_PARCELS, name
        assert list(df["parcel_id"]) == list(base["parcel_id"]), name
        # areas in sq ft agree to 1e-6 relative (GeoJSON's 15 digits; the rest are exact);
        # the output rounds them to 0.1 sq ft (report.decimals), so two values that close
        # may fall on neighbouring tenths: one tenth apart at most
        for col in ("area_sqft", "floodplain_sqft", "wetland_sqft"):
            np.testing.assert_allclose(df[col], base[col], rtol=1e-6, atol=0.1 + 1e-9, err_msg=name)
        assert list(df["jurisdiction"].fillna("")) == list(base["jurisdiction"].fillna(""))


def test_screen_parquet_output_reads_back_in(
    screened: dict[str, Path], cambridge_layers: Path, tmp_path: Path
) -> None:
    again = tmp_path / "again.csv"
    run_screen(screened["gpkg"], cambridge_layers, again, columns=parse_columns(None, "parcel_id"))
    # ``error`` as text: it is empty but for a few rows far down the file (pandas, reading
    # in chunks, would take the empty chunks for numbers)
    df = pd.read_csv(again, keep_default_na=False, na_values=[""], dtype={"error": "string"})
    assert len(df) == 13_116
    assert (df["floodplain_sqft"] > 0).sum() == CAMBRIDGE_FLOODPLAIN_PARCELS
    # the first screening wrote its repaired parcels repaired: nothing is left to repair
    first = gpd.read_parquet(screened["gpkg"])
    assert (first["status"] == "repaired").sum() > 0
    assert (df["status"] == "repaired").sum() == 0


# --------------------------------------------------------------------------- refusals


def test_multi_layer_file_without_layer_is_refused(
    cambridge_formats: dict[str, Path], cambridge_layers: Path, tmp_path: Path
) -> None:
    two = tmp_path / "two.gpkg"
    g = gpd.read_file(CAMBRIDGE_PARCELS, max_features=5)
    g.to_file(two, layer="parcels")
    g.to_file(two, layer="other", mode="a")
    with pytest.raises(DataSourceError, match=r"2 layers \(parcels, other\)"):
        run_screen(two, cambridge_layers, tmp_path / "o.csv")
    out = tmp_path / "o.csv"
    run_screen(two, cambridge_layers, out, layer="other", columns=parse_columns(None, "ML"))
    assert len(pd.read_csv(out)) == 5
    with pytest.raises(DataSourceError, match="has no layer 'nope'; its layers are parcels, other"):
        run_screen(two, cambridge_layers, tmp_path / "p.csv", layer="nope")


def test_missing_id_field_or_column_is_refused(cambridge_layers: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no field 'PARCEL_NO'.*ML") as exc:
        run_screen(
            CAMBRIDGE_PARCELS,
            cambridge_layers,
            tmp_path / "o.csv",
            columns=parse_columns(None, "PARCEL_NO"),
        )
    assert exc.value.field == "--id-field"
    with pytest.raises(ConfigError, match="propclass='CLASS'") as exc:
        run_screen(
            CAMBRIDGE_PARCELS,
            cambridge_layers,
            tmp_path / "o.csv",
            columns=parse_columns("propclass=CLASS", "ML"),
        )
    assert exc.value.field == "--columns"


def test_parcels_of_another_state_are_refused(tmp_path: Path) -> None:
    """Cambridge, MA parcels against the Deerfield, WI layers: refused, never "outside"."""
    layers = deerfield_layers(tmp_path / "deerfield")
    with pytest.raises(CRSError, match="wholly outside the area the layers describe"):
        run_screen(CAMBRIDGE_PARCELS, layers, tmp_path / "o.csv")
    assert not (tmp_path / "o.csv").exists()


def test_parcels_beyond_the_extent_are_error_rows(tmp_path: Path) -> None:
    """A file mixing Deerfield and Cambridge parcels: the far ones are marked, not 'outside'."""
    layers = deerfield_layers(tmp_path / "deerfield")
    near = gpd.GeoDataFrame(
        {"PARCELID": ["near"]},
        # 100 m x 100 m in the Village of Deerfield (WTM metres); -89.07, 43.05 is in it
        geometry=[
            shapely.box(-89.0760, 43.0510, -89.0748, 43.0519),
        ],
        crs="EPSG:4326",
    )
    far = gpd.read_file(CAMBRIDGE_PARCELS, max_features=2)[["geometry"]].assign(
        PARCELID=["far1", "far2"]
    )
    mixed = tmp_path / "mixed.gpkg"
    gpd.GeoDataFrame(pd.concat([near, far], ignore_index=True), crs="EPSG:4326").to_file(mixed)
    out = tmp_path / "o.csv"
    run_screen(mixed, layers, out)
    df = pd.read_csv(out, keep_default_na=False, na_values=[""]).set_index("parcel_id")
    assert df.loc["near", "status"] == "ok"
    assert df.loc["near", "jurisdiction"] in ("village", "extraterritorial", "outside")
    for pid in ("far1", "far2"):
        assert df.loc[pid, "status"] == "error"
        assert "outside the layers' extent" in df.loc[pid, "error"]
        assert pd.isna(df.loc[pid, "jurisdiction"])
        assert pd.isna(df.loc[pid, "regulated"])


def test_csv_needs_a_crs_and_geometry_columns(tmp_path: Path) -> None:
    p = tmp_path / "pts.csv"
    p.write_text("id,x,y\na,500000,300000\n")
    with pytest.raises(CRSError, match=r"a CSV states no CRS"):
        read_vector(p)
    g = read_vector(p, crs="EPSG:3071")
    assert g.geometry.iloc[0].equals(shapely.Point(500000, 300000))
    assert g.crs.to_epsg() == 3071
    q = tmp_path / "none.csv"
    q.write_text("id,name\na,b\n")
    with pytest.raises(
        DataSourceError, match=r"a CSV needs a WKT column.*its columns are id, name"
    ):
        read_vector(q, crs="EPSG:3071")
    r = tmp_path / "badwkt.csv"
    r.write_text('id,WKT\na,"POLYGON ((0 0, 1 0, 1 1, 0 0))"\nb,"POLYGN (("\n')
    with pytest.raises(DataSourceError, match="row 2: WKT is not WKT"):
        read_vector(r, crs="EPSG:3071")


def test_parquet_without_geo_metadata_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "plain.parquet"
    pd.DataFrame({"a": [1, 2]}).to_parquet(p)
    with pytest.raises(DataSourceError, match="without GeoParquet 'geo' metadata"):
        read_vector(p)


def test_zip_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = gpd.read_file(CAMBRIDGE_PARCELS, max_features=3)[["ML", "geometry"]]
    g.to_file(tmp_path / "p.shp")
    z = _zip(sorted(tmp_path.glob("p.*")), tmp_path / "p.zip", tmp_path)
    assert len(read_vector(z)) == 3
    monkeypatch.setenv("GEOREVIEW_MAX_ZIP_MEMBERS", "2")
    with pytest.raises(LimitError, match="zip members exceed the limit of 2"):
        read_vector(z)


def test_where_filter_same_in_every_format(tmp_path: Path) -> None:
    """layers.toml's where: the LTSB Dane file filtered to the Village of Deerfield."""
    from _build import DANE

    src = DANE / "deerfield_area_munis.gpkg"
    g = gpd.read_file(src)
    g.to_parquet(tmp_path / "m.parquet")
    g.to_file(tmp_path / "m.fgb")
    where = "MCD_NAME = 'Deerfield' AND CTV = 'V'"
    expect = g[(g.MCD_NAME == "Deerfield") & (g.CTV == "V")]
    assert len(expect) == 1
    for p in (src, tmp_path / "m.parquet", tmp_path / "m.fgb"):
        got = read_vector(p, where=where)
        assert list(got["MCD_NAME"]) == ["Deerfield"], p
        assert list(got["CTV"]) == ["V"], p
        assert shapely.equals_exact(got.geometry.iloc[0], expect.geometry.iloc[0], 0), p
    with pytest.raises(DataSourceError, match="cannot apply where"):
        read_vector(tmp_path / "m.parquet", where="NO_SUCH = 1")
    with pytest.raises(DataSourceError, match="cannot apply where"):
        read_vector(src, where="NO_SUCH = 1")


def test_read_layer_and_vector_info_agree(cambridge_formats: dict[str, Path]) -> None:
    for name, path in cambridge_formats.items():
        info = vector_info(path, crs="EPSG:4326" if name == "csv" else None, force_count=True)
        assert info.features == 13_116, name
        assert "ML" in info.fields, name
    g = read_layer(cambridge_formats["parquet"], gpd.GeoSeries(crs=26986).crs, label="parcels")
    assert g.crs.to_epsg() == 26986


# --------------------------------------------------------------------------- outputs


@pytest.fixture(scope="module")
def small_parcels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("small")
    p = d / "parcels.gpkg"
    gpd.read_file(CAMBRIDGE_PARCELS, max_features=400).to_file(p)
    return p


def test_gpkg_output_opens_in_arcgis_and_qgis(
    small_parcels: Path, cambridge_layers: Path, tmp_path: Path
) -> None:
    out = tmp_path / "s.gpkg"
    run_screen(
        small_parcels, cambridge_layers, out, columns=parse_columns(None, "ML"), partition_size=150
    )
    with sqlite3.connect(out) as db:
        # GeoPackage 1.3: application_id "GPKG", user_version 10300 (OGC 12-128r15 §1.1.1.1)
        assert db.execute("PRAGMA application_id").fetchone()[0] == 0x47504B47
        assert db.execute("PRAGMA user_version").fetchone()[0] == 10300
        gtype, srs = db.execute(
            "SELECT geometry_type_name, srs_id FROM gpkg_geometry_columns"
        ).fetchone()
    assert gtype == "MULTIPOLYGON"
    assert srs == 4326  # the input's CRS, stated
    info = pyogrio.read_info(out)
    subtypes = dict(zip(info["fields"], info["ogr_subtypes"], strict=True))
    for col in ("regulated", "larger_site", "straddles", "extraordinary"):
        assert subtypes[col] == "OFSTBoolean", col
    df = gpd.read_file(out)
    assert len(df) == 400
    csv = tmp_path / "s.csv"
    run_screen(small_parcels, cambridge_layers, csv, columns=parse_columns(None, "ML"))
    text = pd.read_csv(csv, keep_default_na=False, na_values=[""])
    as_text = df["regulated"].map({True: "yes", False: "no"}).fillna("unknown")
    assert list(as_text) == list(text["regulated"].fillna("unknown"))


def test_csv_output_has_one_bom(
    small_parcels: Path, cambridge_layers: Path, tmp_path: Path
) -> None:
    out = tmp_path / "s.csv"
    run_screen(
        small_parcels, cambridge_layers, out, columns=parse_columns(None, "ML"), partition_size=150
    )
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbfid,")
    assert raw.count(b"\xef\xbb\xbf") == 1  # appended partitions add none
    assert len(pd.read_csv(out, encoding="utf-8-sig")) == 400
    plain = tmp_path / "p.csv"
    run_screen(small_parcels, cambridge_layers, plain, csv_bom=False)
    assert plain.read_bytes().startswith(b"id,")


def test_fgb_geojson_shp_outputs(
    small_parcels: Path, cambridge_layers: Path, tmp_path: Path
) -> None:
    ref = tmp_path / "ref.parquet"
    cols = parse_columns(None, "ML")
    run_screen(small_parcels, cambridge_layers, ref, columns=cols)
    base = gpd.read_parquet(ref)
    for suffix in (".fgb", ".geojson", ".shp"):
        out = tmp_path / f"s{suffix}"
        run_screen(small_parcels, cambridge_layers, out, columns=cols, partition_size=150)
        info = pyogrio.read_info(out)
        # a shapefile has one polygon type for polygons and multipolygons
        assert info["geometry_type"] == ("Polygon" if suffix == ".shp" else "MultiPolygon")
        assert info["features"] == 400
        got = gpd.read_file(out)
        assert got.crs.to_epsg() == 4326
        fp = "floodplain" if suffix == ".shp" else "floodplain_sqft"
        if suffix == ".shp":
            names = pd.read_csv(out.with_suffix(".fields.csv"), encoding="utf-8-sig")
            full = dict(zip(names["shp_name"], names["full_name"], strict=True))
            assert all(len(n) <= 10 for n in full)
            assert len(set(full)) == len(full)
            got = got.rename(columns=full)
            fp = "floodplain_sqft"
            # "rules" lists rule ids past a .dbf's 254 bytes: cut, counted, said
            cut = dict(zip(names["full_name"], names["values_cut"], strict=True))
            long = base["rules"].str.encode("utf-8").str.len() > 254
            assert cut["rules"] == int(long.sum()) > 0
            assert list(got["rules"][~long]) == list(base["rules"][~long])
            for full_text, cut_text in zip(base["rules"][long], got["rules"][long], strict=True):
                assert full_text.startswith(cut_text)
                assert len(cut_text.encode("utf-8")) <= 254
        np.testing.assert_allclose(got[fp], base["floodplain_sqft"], rtol=1e-9)
        assert list(got["parcel_id"]) == list(base["parcel_id"])
    assert not list(tmp_path.glob(".*partial*"))


def test_shapefile_names_are_unique_and_short() -> None:
    names = shapefile_names(
        ["row", "floodplain_sqft", "floodplain_sqft_x", "share_village", "share_villa", "in_row"]
    )
    assert names["row"] == "row"
    assert names["floodplain_sqft"] == "floodplain"
    assert names["floodplain_sqft_x"] == "floodpla_1"
    assert names["share_village"] == "share_vill"
    assert names["share_villa"] == "share_vi_1"  # its cut clashes with share_village's
    assert len(set(names.values())) == len(names)
    assert all(len(v) <= 10 for v in names.values())


# --------------------------------------------------------------------------- submissions


def test_review_reads_site_files_in_every_format(tmp_path: Path) -> None:
    """A 100 m x 60 m site (64,583.46 sq ft = 6,000 m² / 0.3048²) in five formats; the
    batch's sites.gpkg is in the layers' working CRS (here EPSG:26986, not EPSG:3071)."""
    from georeview.pipeline.batch import review_many

    x0, y0 = 230_000.0, 900_000.0  # NAD83 / Massachusetts Mainland, metres
    layers = tmp_path / "layers"
    layers.mkdir()
    gpd.GeoDataFrame(geometry=[shapely.box(x0, y0, x0 + 2000, y0 + 2000)], crs=26986).to_file(
        layers / "boundary.gpkg"
    )
    (layers / "layers.toml").write_text(
        'municipality = "deerfield"\nworking_crs = "EPSG:26986"\n'
        '[boundary]\npath = "boundary.gpkg"\n'
    )
    site = gpd.GeoDataFrame(
        {"n": [0]}, geometry=[shapely.box(x0 + 500, y0 + 500, x0 + 600, y0 + 560)], crs=26986
    )
    batch = tmp_path / "batch"
    writers = {
        "site.parquet": lambda p: site.to_parquet(p),
        "site.fgb": lambda p: site.to_file(p),
        "site.gpkg": lambda p: site.to_file(p),
        "site.zip": None,
    }
    for name, write in writers.items():
        sub = batch / name.replace(".", "_")
        sub.mkdir(parents=True)
        if name == "site.zip":
            site.to_file(sub / "s.shp")
            _zip(sorted(sub.glob("s.*")), sub / name, sub)
            for f in sub.glob("s.*"):
                f.unlink()
        else:
            write(sub / name)
        (sub / "submission.toml").write_text(f'municipality = "deerfield"\nsite = "{name}"\n')
    res = review_many(batch, tmp_path / "out", layers_dir=layers)
    assert [r["status"] for r in res.rows] == ["ok"] * 4, [r["error"] for r in res.rows]
    for r in res.rows:
        # the summary gives 0.1 sq ft
        assert float(r["site_area_sqft"]) == pytest.approx(6000 / 0.3048**2, abs=0.05)
    sites = gpd.read_file(res.sites_gpkg)
    assert sites.crs.to_epsg() == 26986
    assert sites.area.tolist() == pytest.approx([6000.0] * 4, rel=1e-9)
    with sqlite3.connect(res.sites_gpkg) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 10300
