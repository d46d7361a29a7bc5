"""Screening outputs: the finished partitions assembled into one file.

CSV, GeoPackage, GeoParquet, FlatGeobuf, GeoJSON or shapefile, each written under a
temporary name and renamed when complete. The result columns' numbers are rounded as
they are written (:mod:`georeview.report.decimals`); the partitions keep them whole.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from georeview.errors import (
    InputError,
    OutputError,
)
from georeview.pipeline.partitions import (
    WorkFolder,
    part_schema,
    read_part,
    read_part_table,
    tmp_name,
)
from georeview.pipeline.results import RESULT_COLUMNS, RESULT_LABELS
from georeview.report.decimals import round_arrow, round_frame
from georeview.sanitise import neutralise_formulas

log = logging.getLogger(__name__)

#: Output formats by suffix.
OUTPUT_SUFFIXES = (".csv", ".xlsx", ".gpkg", ".parquet", ".fgb", ".geojson", ".shp")


#: Result columns holding yes / no / unknown: nullable booleans in GeoPackage, FlatGeobuf
#: and GeoJSON outputs (text in CSV, Parquet and shapefile, which have no null boolean).
TRI_STATE_COLUMNS = ("straddles", "regulated", "larger_site", "extraordinary")


#: Longest field name of a dBase (.dbf) table, the attribute part of a shapefile.
SHP_FIELD_CHARS = 10


#: Result columns the run's summary counts (read without the geometry or the input's fields).
COUNTED_COLUMNS = (
    "row",
    "parcel_id",
    "status",
    "error",
    "jurisdiction",
    "regulated",
    "category",
    "floodplain_sqft",
    "floodway_sqft",
    "wetland_sqft",
)


def assemble(work: WorkFolder, out: Path, n_parts: int, *, csv_bom: bool = True) -> dict[str, Any]:
    """Concatenate the partitions in order into ``out`` (temporary name, then rename).

    One partition is in memory at a time for CSV, GeoPackage, Parquet and shapefile;
    FlatGeobuf and GeoJSON (formats GDAL cannot append to) are written from all
    partitions at once. Parquet and CSV outputs are copied from the partitions' Arrow
    tables, never decoding the geometry. Returns the counts for the summary.

    Parameters
    ----------
    csv_bom : bool
        Start a CSV with a UTF-8 byte-order mark, so that Excel reads it as UTF-8
        ("§" rather than "Â§").
    """
    if n_parts == 0:
        raise InputError("the parcel layer has no features", field="parcels")
    suffix = out.suffix.lower()
    tmp = tmp_name(out)
    tmp.unlink(missing_ok=True)
    tally = Tally()
    short: dict[str, str] = {}
    cut: dict[str, int] = {}
    try:
        if suffix == ".parquet":
            _assemble_parquet(work, n_parts, tmp, tally)
        elif suffix == ".csv":
            _assemble_csv(work, n_parts, tmp, tally, bom=csv_bom)
        elif suffix == ".xlsx":
            _assemble_xlsx(work, n_parts, tmp, tally, out=out)
        else:
            short = _assemble_gdal(work, n_parts, tmp, suffix, tally, layer=out.stem, cut=cut)
        _finish(tmp, out, suffix, short, cut)
    except OSError as exc:
        raise OutputError(f"cannot write ({exc})", path=out) from None
    finally:
        _remove_partial(tmp, suffix)
    return {"counts": tally.counts, "errors": tally.errors}


def _assemble_parquet(work: WorkFolder, n_parts: int, tmp: Path, tally: Tally) -> None:
    """Append every partition's Arrow table to one GeoParquet file (WKB copied as is)."""
    writer, unified = _parquet_writer(work, n_parts, tmp)
    try:
        for table in _read_ahead(read_part_table, [work.part(i) for i in range(n_parts)]):
            table = table.replace_schema_metadata(None)
            tally.add(table)
            table = round_arrow(table, RESULT_COLUMNS)
            writer.write_table(
                table.cast(unified.remove_metadata()).replace_schema_metadata(unified.metadata)
            )
    finally:
        writer.close()


def _assemble_csv(work: WorkFolder, n_parts: int, tmp: Path, tally: Tally, *, bom: bool) -> None:
    """Append every partition's rows (without the geometry) to one CSV file."""
    for i, table in enumerate(_attribute_tables(work, n_parts)):
        tally.add(table)
        _append_csv(round_frame(table.to_pandas(), RESULT_COLUMNS), tmp, first=i == 0, bom=bom)


def _attribute_tables(work: WorkFolder, n_parts: int) -> Any:
    """Each partition's Arrow table without its geometry column (never decoded)."""

    def attributes(path: Path) -> Any:
        # as geopandas reads it (Arrow -> pandas), without reading the geometry at all
        schema = part_schema(path)
        geometry = _geometry_column(schema)
        return read_part_table(path, columns=[c for c in schema.names if c != geometry])

    return _read_ahead(attributes, [work.part(i) for i in range(n_parts)])


def _part_rows(path: Path) -> int:
    """Rows of a finished partition, read from its record batches' headers."""
    import pyarrow as pa

    with pa.memory_map(str(path)) as source:
        reader = pa.ipc.open_file(source)
        return sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))


def _assemble_xlsx(work: WorkFolder, n_parts: int, tmp: Path, tally: Tally, *, out: Path) -> None:
    """Write every partition's rows (without the geometry) to one sheet of an .xlsx.

    The parcel id is text whatever its type; the header names each result column in
    words with its units (:data:`~georeview.pipeline.results.RESULT_LABELS`), and the
    ``columns`` sheet gives each header's machine name and meaning.
    """
    from georeview.report.xlsx import check_rows, write_xlsx

    n_rows = sum(_part_rows(work.part(i)) for i in range(n_parts))
    check_rows(n_rows, out)  # before a byte is written
    schema = part_schema(work.part(0))
    names = [c for c in schema.names if c != _geometry_column(schema)]

    def frames() -> Any:
        for table in _attribute_tables(work, n_parts):
            tally.add(table)
            yield round_frame(table.to_pandas(), RESULT_COLUMNS)

    columns = [
        (c, *RESULT_LABELS[c]) if c in RESULT_LABELS else (c, c, "from the parcel file")
        for c in names
    ]
    write_xlsx(
        tmp, frames(), columns, n_rows=n_rows, sheet="parcels", text_columns=("parcel_id",)
    )


def _read_ahead(read: Any, paths: Sequence[Path]) -> Any:
    """``read(path)`` of each path in order, the next one read while the caller works.

    (Arrow's read and the Parquet write release the GIL: one partition is read while the
    previous one is written, and two partitions at most are in memory.)
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="georeview-read") as pool:
        ahead = [pool.submit(read, p) for p in paths[:1]]
        for nxt in [*paths[1:], None]:
            table = ahead.pop().result()
            if nxt is not None:
                ahead.append(pool.submit(read, nxt))
            yield table


def _assemble_gdal(
    work: WorkFolder,
    n_parts: int,
    tmp: Path,
    suffix: str,
    tally: Tally,
    *,
    layer: str,
    cut: dict[str, int],
) -> dict[str, str]:
    """Write the partitions through GDAL (GeoPackage, shapefile, FlatGeobuf, GeoJSON).

    Returns the shapefile's short field names (empty for the other formats).
    """
    whole: list[Any] = []
    short: dict[str, str] = {}
    for i in range(n_parts):
        part = read_part(work.part(i))
        tally.add(part)
        # counted unrounded; written to the decimals of report.decimals
        part = round_frame(part, RESULT_COLUMNS)
        if suffix == ".gpkg":
            _write_gpkg(_typed(part), tmp, layer=layer, append=i > 0)
        elif suffix == ".shp":
            if not short:
                short = shapefile_names(list(part.columns.drop(part.geometry.name)))
            _write_shp(part.rename(columns=short), tmp, append=i > 0, cut=cut)
        else:  # .fgb, .geojson
            whole.append(_typed(part))
    if whole:
        _write_whole(whole, tmp, suffix, layer=layer)
    return short


def _geometry_column(schema: Any) -> str:
    """The primary geometry column named by a GeoParquet schema's ``geo`` metadata."""
    geo = json.loads((schema.metadata or {}).get(b"geo", b"{}") or b"{}")
    return str(geo.get("primary_column", "geometry"))


def _parquet_writer(work: WorkFolder, n_parts: int, tmp: Path) -> tuple[Any, Any]:
    """A Parquet writer with the schema every partition fits (GeoParquet metadata kept)."""
    from georeview._compat import require

    # partitions are kept as Arrow IPC whatever the output format
    pa = require("pyarrow", what="georeview screen")
    pq = require("pyarrow.parquet", what="georeview screen")
    schemas = [part_schema(work.part(i)) for i in range(n_parts)]
    # "permissive": a partition whose failing rows were screened apart holds its text as
    # string (pandas joins the halves as objects), the others as large_string
    unified = pa.unify_schemas(
        [s.remove_metadata() for s in schemas], promote_options="permissive"
    )
    geo = json.loads((schemas[0].metadata or {}).get(b"geo", b"{}") or b"{}")
    for col in geo.get("columns", {}).values():
        col.pop("bbox", None)
    unified = unified.with_metadata({b"geo": json.dumps(geo).encode()} if geo else {})
    return pq.ParquetWriter(tmp, unified), unified


def _remove_partial(tmp: Path, suffix: str) -> None:
    """Remove what a failed or finished write left under the temporary name."""
    for f in _shapefile_files(tmp) if suffix == ".shp" else [tmp]:
        f.unlink(missing_ok=True)


def _append_csv(rows: pd.DataFrame, tmp: Path, *, first: bool, bom: bool) -> None:
    """Append a partition's rows (formulas neutralised); the BOM and header start the file."""
    table = neutralise_formulas(rows)
    enc = "utf-8-sig" if (bom and first) else "utf-8"
    table.to_csv(tmp, mode="w" if first else "a", header=first, index=False, encoding=enc)


def _finish(tmp: Path, out: Path, suffix: str, short: dict[str, str], cut: dict[str, int]) -> None:
    """Give the complete output its name (a shapefile: every part file, and the names sidecar)."""
    if suffix != ".shp":
        os.replace(tmp, out)
        return
    _move_shapefile(tmp, out, short, cut)
    if cut:
        log.warning(
            "%s: text cut to %d bytes (a shapefile's limit) in %s; the .gpkg output keeps it whole",
            out,
            SHP_TEXT_BYTES,
            ", ".join(f"{n:,} values of {c}" for c, n in cut.items()),
        )


def _typed(part: Any) -> Any:
    """The partition with its yes / no / unknown columns as nullable booleans."""
    out = part.copy()
    for col in TRI_STATE_COLUMNS:
        if col in out.columns:
            text = out[col].astype("string")
            out[col] = text.map({"yes": True, "no": False}, na_action="ignore").astype("boolean")
    return out


def _gdal_write(frame: Any, path: Path, *, write: Any = None, **kw: Any) -> None:
    """``write(frame, path, use_arrow=True, **kw)`` (pyogrio's by default), errors named."""
    import pyogrio

    try:
        # the Arrow path writes pandas nullable booleans as OGR booleans with nulls
        (write or pyogrio.write_dataframe)(frame, path, use_arrow=True, **kw)
    except OSError:
        raise
    except Exception as exc:  # pyogrio/GDAL errors
        raise OutputError(f"cannot write ({' '.join(str(exc).split())[:200]})", path=path) from None


def _write_gpkg(frame: Any, path: Path, *, layer: str, append: bool) -> None:
    """Append to a GeoPackage 1.3 with a typed MultiPolygon geometry column."""
    from georeview.geopackage import write_layer

    _gdal_write(
        frame,
        path,
        write=write_layer,
        layer=layer,
        append=append,
        geometry_type="MultiPolygon",
        promote_to_multi=True,
    )


def _write_whole(parts: list[Any], path: Path, suffix: str, *, layer: str) -> None:
    import geopandas as gpd

    frame = gpd.GeoDataFrame(pd.concat(parts, ignore_index=True), crs=parts[0].crs)
    if suffix == ".geojson" and frame.crs is not None and not frame.crs.equals("EPSG:4326"):
        # RFC 7946: GeoJSON coordinates are WGS 84 longitude/latitude
        frame = frame.to_crs("EPSG:4326")
    driver = "FlatGeobuf" if suffix == ".fgb" else "GeoJSON"
    options = {"RFC7946": "YES"} if driver == "GeoJSON" else {}
    if driver == "FlatGeobuf":
        # its packed R-tree reorders features (Hilbert order) and cannot hold the null
        # geometry of an error row: without it the rows stay in input order
        options["SPATIAL_INDEX"] = "NO"
    _gdal_write(
        frame,
        path,
        layer=layer,
        driver=driver,
        geometry_type="MultiPolygon",
        promote_to_multi=True,
        layer_options=options,
    )


def shapefile_names(columns: Sequence[str]) -> dict[str, str]:
    """Full name -> unique name of at most 10 characters, for a shapefile's .dbf.

    Names that fit are kept; longer ones are cut to 10 characters, and a cut that
    clashes with another name ends in ``_1``, ``_2``, ... instead.
    """
    used = {c.upper() for c in columns if len(c) <= SHP_FIELD_CHARS}
    out: dict[str, str] = {}
    for c in columns:
        if len(c) <= SHP_FIELD_CHARS:
            out[c] = c
            continue
        name, k = c[:SHP_FIELD_CHARS], 0
        while name.upper() in used:
            k += 1
            tail = f"_{k}"
            name = c[: SHP_FIELD_CHARS - len(tail)] + tail
        used.add(name.upper())
        out[c] = name
    return out


def _shapefile_files(path: Path) -> list[Path]:
    return [path.with_suffix(s) for s in (".shp", ".shx", ".dbf", ".prj", ".cpg")]


#: Longest text value of a dBase field, bytes.
SHP_TEXT_BYTES = 254


def _clip_text(values: Any) -> tuple[Any, int]:
    """Cut text to :data:`SHP_TEXT_BYTES` UTF-8 bytes (whole characters); count the cut."""
    text = pd.Series(values, dtype="string")
    nbytes = text.str.encode("utf-8").str.len()
    long = (nbytes > SHP_TEXT_BYTES).fillna(False).to_numpy(dtype=bool)
    if not long.any():
        return values, 0
    cut = text[long].str.encode("utf-8").str[:SHP_TEXT_BYTES].str.decode("utf-8", "ignore")
    out = text.copy()
    out[long] = cut
    return out.astype(object).to_numpy(), int(long.sum())


def _write_shp(frame: Any, path: Path, *, append: bool, cut: dict[str, int]) -> None:
    """Append to a shapefile; text past 254 bytes is cut and counted in ``cut``."""
    # a .dbf has dates but no date-times: keep them whole, as ISO 8601 text
    stamps = [c for c in frame.columns if frame[c].dtype.kind == "M"]
    if stamps:
        frame = frame.assign(**{c: frame[c].astype("string") for c in stamps})
    frame = frame.copy()
    for col in frame.columns:
        kind = frame[col].dtype
        if col != frame.geometry.name and (kind.kind == "O" or pd.api.types.is_string_dtype(kind)):
            frame[col], n = _clip_text(frame[col].to_numpy())
            if n:
                cut[col] = cut.get(col, 0) + n
    _gdal_write(
        frame,
        path,
        driver="ESRI Shapefile",
        append=append,
        geometry_type="MultiPolygon",
        promote_to_multi=True,
        layer_options={"ENCODING": "UTF-8"},
    )


def _move_shapefile(tmp: Path, out: Path, names: dict[str, str], cut: dict[str, int]) -> None:
    """Rename the temporary shapefile's parts to ``out`` and write ``OUT.fields.csv``.

    The sidecar lists each short .dbf name with the full result column name it stands
    for and how many of its values were cut to 254 bytes
    (``shp_name,full_name,values_cut``; the GeoPackage output keeps them whole).
    """
    for part in _shapefile_files(tmp):
        if part.exists():
            os.replace(part, out.with_suffix(part.suffix))
    table = pd.DataFrame(
        {
            "shp_name": list(names.values()),
            "full_name": list(names),
            "values_cut": [cut.get(short, 0) for short in names.values()],
        }
    )
    table.to_csv(out.with_suffix(".fields.csv"), index=False, encoding="utf-8-sig")


class Tally:
    """The summary's counts by outcome and its first error rows, over the partitions."""

    #: Error rows kept for the summary.
    MAX_ERRORS = 20

    def __init__(self) -> None:
        self.counts: dict[str, dict[str, int]] = {}
        self.errors: list[tuple[int, str, str]] = []

    def add(self, part: Any) -> None:
        """Count one partition (a pandas frame or an Arrow table of the result columns)."""
        if not isinstance(part, pd.DataFrame):
            part = part.select(list(COUNTED_COLUMNS)).to_pandas()
        for col in ("status", "jurisdiction", "regulated", "category"):
            vc = part[col].fillna("-").astype(str).value_counts()
            bucket = self.counts.setdefault(col, {})
            for k, v in vc.items():
                bucket[str(k)] = bucket.get(str(k), 0) + int(v)
        for col in ("floodplain_sqft", "floodway_sqft", "wetland_sqft"):
            bucket = self.counts.setdefault("parcels_with", {})
            bucket[col] = bucket.get(col, 0) + int((part[col] > 0).sum())
        bad = part[part["status"] == "error"]
        room = self.MAX_ERRORS - len(self.errors)
        for r, pid, e in zip(
            bad["row"][:room], bad["parcel_id"][:room], bad["error"][:room], strict=True
        ):
            self.errors.append((int(r), str(pid), str(e)))
