"""Screening outputs: the finished partitions assembled into one file.

CSV, GeoPackage, GeoParquet, FlatGeobuf, GeoJSON or shapefile, each written under a
temporary name and renamed when complete.
"""

from __future__ import annotations

import contextlib
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
from georeview.sanitise import neutralise_formulas

log = logging.getLogger(__name__)

#: Output formats by suffix.
OUTPUT_SUFFIXES = (".csv", ".gpkg", ".parquet", ".fgb", ".geojson", ".shp")


#: Result columns holding yes / no / unknown: nullable booleans in GeoPackage, FlatGeobuf
#: and GeoJSON outputs (text in CSV, Parquet and shapefile, which have no null boolean).
TRI_STATE_COLUMNS = ("straddles", "regulated", "larger_site", "extraordinary")


#: GeoPackage version written (GDAL's VERSION creation option): ArcGIS Pro 3.0-3.4 lists
#: GeoPackage 1.0-1.3 only, and GDAL 3.12 writes 1.4 by default.
GPKG_VERSION = "1.3"


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
    """Concatenate the finished partitions in order into ``out`` (temporary name, then rename).

    The output written once every partition is finished (what :class:`StreamedOutput`
    falls back to). One partition is in memory at a time for CSV, GeoPackage, Parquet
    and shapefile; FlatGeobuf and GeoJSON (formats GDAL cannot append to) are written
    from all partitions at once. Parquet and CSV outputs are copied from the
    partitions' Arrow tables, never decoding the geometry. Returns the counts for the
    summary.

    Parameters
    ----------
    csv_bom : bool
        Start a CSV with a UTF-8 byte-order mark, so that Excel reads it as UTF-8
        ("§" rather than "Â§").
    """
    if n_parts == 0:
        raise InputError("the parcel layer has no features", field="parcels")
    paths = [work.part(i) for i in range(n_parts)]
    schema = _output_schema([part_schema(p) for p in paths]) if _is_parquet(out) else None
    writer = OutputWriter(out, csv_bom=csv_bom, schema=schema)
    try:
        read = writer.reader()
        tables = _read_ahead(read, paths) if read is not None else (None for _ in paths)
        for path, table in zip(paths, tables, strict=True):
            writer.add(path, table)
        writer.commit()
    except OSError as exc:
        raise OutputError(f"cannot write ({exc})", path=out) from None
    finally:
        writer.discard()
    return writer.stats()


def _is_parquet(out: Path) -> bool:
    return out.suffix.lower() == ".parquet"


class OutputWriter:
    """The output written from finished partitions, one after another in input order.

    Each :meth:`add` appends the next partition (read from its file, or the table
    given); :meth:`commit` completes the file and gives it its name; :meth:`discard`
    removes what is left under the temporary name. Used from one thread at a time.

    Parameters
    ----------
    out : path
        The output (its suffix says the format).
    csv_bom : bool
        Start a CSV with a UTF-8 byte-order mark.
    schema : pyarrow.Schema, optional
        A Parquet output's schema (:func:`_output_schema` of every partition's); by
        default that of the first partition with its null columns as text
        (:func:`_first_schema`), which the later ones must then :meth:`fit`, and which
        :meth:`exact` tells apart from the schema of them all.
    """

    def __init__(self, out: Path, *, csv_bom: bool, schema: Any = None) -> None:
        self.out, self.suffix, self.tmp = out, out.suffix.lower(), tmp_name(out)
        self.csv_bom = csv_bom
        self.schema = schema
        self.tally = Tally()
        self.added = 0
        #: The schema of each Parquet partition added (as its file holds it).
        self.schemas: list[Any] = []
        self._writer: Any = None
        self._short: dict[str, str] = {}
        self._cut: dict[str, int] = {}
        self._whole: list[Any] = []
        _remove_partial(self.tmp, self.suffix)

    def reader(self) -> Any:
        """What reads a partition's file for :meth:`add` (``None``: :meth:`add` reads it)."""
        if self.suffix == ".parquet":
            return read_part_table
        if self.suffix == ".csv":
            return _attributes
        return None

    def fits(self, schema: Any) -> bool:
        """Whether a partition of ``schema`` can be appended to the Parquet output as is.

        True before the first partition, and when ``schema`` promotes into the output's
        (a null column into text, ``string`` into ``large_string``): then the schema
        unified over every partition is the output's, and the file is the one
        :func:`assemble` writes. Always true for the other formats.
        """
        if self.suffix != ".parquet" or self.schema is None:
            return True
        import pyarrow as pa

        mine = self.schema.remove_metadata()
        both = pa.unify_schemas([mine, schema.remove_metadata()], promote_options="permissive")
        return bool(both.equals(mine, check_metadata=True))

    def exact(self) -> bool:
        """Whether the output's schema is that of every partition added, unified.

        (The schema :func:`assemble` gives the same partitions: then the file is the
        same, byte for byte. Not so when a column the first partition held null only
        stayed null in them all, or was not text.)
        """
        if self.suffix != ".parquet" or not self.schemas:
            return True
        return bool(_output_schema(self.schemas).equals(self.schema, check_metadata=True))

    def add(self, path: Path, table: Any = None) -> None:
        """Append the partition in ``path`` (``table``: its contents, already read)."""
        if self.suffix in (".parquet", ".csv"):
            if table is None:
                table = self.reader()(path)
            self.tally.add(table)
            if self.suffix == ".parquet":
                self._add_parquet(table)
            else:
                first = self.added == 0
                _append_csv(table.to_pandas(), self.tmp, first=first, bom=self.csv_bom)
        else:
            self._add_gdal(read_part(path))
        self.added += 1

    def _add_parquet(self, table: Any) -> None:
        self.schemas.append(table.schema)
        if self._writer is None:
            import pyarrow.parquet as pq

            if self.schema is None:
                self.schema = _output_schema([_first_schema(table.schema)])
            self._writer = pq.ParquetWriter(self.tmp, self.schema)
        unified = self.schema
        table = table.replace_schema_metadata(None)
        self._writer.write_table(
            table.cast(unified.remove_metadata()).replace_schema_metadata(unified.metadata)
        )

    def _add_gdal(self, part: Any) -> None:
        self.tally.add(part)
        layer, append = self.out.stem, self.added > 0
        if self.suffix == ".gpkg":
            _write_gpkg(_typed(part), self.tmp, layer=layer, append=append)
        elif self.suffix == ".shp":
            if not self._short:
                self._short = shapefile_names(list(part.columns.drop(part.geometry.name)))
            _write_shp(part.rename(columns=self._short), self.tmp, append=append, cut=self._cut)
        else:  # .fgb, .geojson
            self._whole.append(_typed(part))

    def _close(self) -> None:
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.close()

    def commit(self) -> None:
        """Complete the output and rename it to ``out``."""
        self._close()
        if self._whole:
            _write_whole(self._whole, self.tmp, self.suffix, layer=self.out.stem)
        _finish(self.tmp, self.out, self.suffix, self._short, self._cut)

    def discard(self) -> None:
        """Remove what an unfinished (or renamed) output left under the temporary name."""
        with contextlib.suppress(OSError):  # the file is removed below either way
            self._close()
        _remove_partial(self.tmp, self.suffix)

    def stats(self) -> dict[str, Any]:
        """The summary's counts and first error rows over the partitions added."""
        return {"counts": self.tally.counts, "errors": self.tally.errors}


class StreamedOutput:
    """The output written while the partitions are screened, in input order, on one thread.

    :meth:`ready` is told of each partition as it is saved (on any thread, in any
    order, resumed ones included); each partition whose predecessors are all written is
    appended by a writer thread, read back from its file, while later partitions are
    screened. The work folder stays the record of what is finished: a run stopped
    before :meth:`finish` leaves no output (:meth:`abort`), and runs again from its
    partitions. The file written is the one :func:`assemble` writes from the same
    partitions; where it cannot be (a Parquet partition whose schema does not fit the
    first one's, :meth:`OutputWriter.fits`), :meth:`finish` writes it with
    :func:`assemble` instead.
    """

    def __init__(self, work: WorkFolder, out: Path, n_parts: int, *, csv_bom: bool) -> None:
        import threading
        from concurrent.futures import ThreadPoolExecutor

        self.work, self.out, self.n_parts, self.csv_bom = work, out, n_parts, csv_bom
        self.writer = OutputWriter(out, csv_bom=csv_bom)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="georeview-write")
        self._lock = threading.Lock()
        self._saved: set[int] = set()
        self._next = 0
        self._futures: list[Any] = []
        #: Set when the partitions left must not be appended (a misfit, an error, abort).
        self._stopped = False
        self._misfit = False

    def ready(self, i: int) -> None:
        """Partition ``i`` is saved: append it (and those after it already saved) in order."""
        with self._lock:
            self._saved.add(i)
            while self._next in self._saved:
                self._futures.append(self._pool.submit(self._append, self._next))
                self._next += 1

    def _append(self, i: int) -> None:
        if self._stopped:
            return
        try:
            path = self.work.part(i)
            if not self.writer.fits(part_schema(path)):
                self._misfit = self._stopped = True
                log.debug("%s: partition %d widens the schema: written at the end", self.out, i)
                return
            self.writer.add(path)
        except BaseException:
            self._stopped = True
            raise

    def finish(self) -> dict[str, Any]:
        """Wait for the last partitions, complete and name the output; the summary's counts."""
        self._pool.shutdown(wait=True)
        try:
            for fut in self._futures:
                fut.result()  # the first error of the writer thread, as assemble raises it
            if self._misfit or self.writer.added < self.n_parts or not self.writer.exact():
                self.writer.discard()
                return assemble(self.work, self.out, self.n_parts, csv_bom=self.csv_bom)
            self.writer.commit()
        except OSError as exc:
            raise OutputError(f"cannot write ({exc})", path=self.out) from None
        finally:
            self.writer.discard()
        return self.writer.stats()

    def abort(self) -> None:
        """Stop appending (the run failed): wait for the writer thread and remove its file."""
        self._stopped = True
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.writer.discard()


def _attributes(path: Path) -> Any:
    """A partition's table without its geometry (for CSV), the geometry never read."""
    # as geopandas reads it (Arrow -> pandas), without reading the geometry at all
    schema = part_schema(path)
    geometry = _geometry_column(schema)
    return read_part_table(path, columns=[c for c in schema.names if c != geometry])


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


def _first_schema(schema: Any) -> Any:
    """A first partition's schema with its null columns (no value in that partition) as text.

    Such a column is text in the output as soon as a later partition holds a value (a
    category no parcel of the first partition has, an input field the first rows leave
    empty), so the output written as the partitions come starts with it as text.
    """
    import pyarrow as pa

    for k, field in enumerate(schema):
        if pa.types.is_null(field.type):
            schema = schema.set(k, field.with_type(pa.large_string()))
    return schema


def _geometry_column(schema: Any) -> str:
    """The primary geometry column named by a GeoParquet schema's ``geo`` metadata."""
    geo = json.loads((schema.metadata or {}).get(b"geo", b"{}") or b"{}")
    return str(geo.get("primary_column", "geometry"))


def _output_schema(schemas: Sequence[Any]) -> Any:
    """The Parquet output's schema: every partition's fits it (GeoParquet metadata kept)."""
    from georeview._compat import require

    pa = require("pyarrow", what="georeview screen")
    # "permissive": a partition whose failing rows were screened apart holds its text as
    # string (pandas joins the halves as objects), the others as large_string
    unified = pa.unify_schemas(
        [s.remove_metadata() for s in schemas], promote_options="permissive"
    )
    geo = json.loads((schemas[0].metadata or {}).get(b"geo", b"{}") or b"{}")
    for col in geo.get("columns", {}).values():
        col.pop("bbox", None)
    return unified.with_metadata({b"geo": json.dumps(geo).encode()} if geo else {})


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


def _gdal_write(frame: Any, path: Path, **kw: Any) -> None:
    import pyogrio

    try:
        # the Arrow path writes pandas nullable booleans as OGR booleans with nulls
        pyogrio.write_dataframe(frame, path, use_arrow=True, **kw)
    except OSError:
        raise
    except Exception as exc:  # pyogrio/GDAL errors
        raise OutputError(f"cannot write ({' '.join(str(exc).split())[:200]})", path=path) from None


def _write_gpkg(frame: Any, path: Path, *, layer: str, append: bool) -> None:
    """Append to a GeoPackage 1.3 with a typed MultiPolygon geometry column."""
    _gdal_write(
        frame,
        path,
        layer=layer,
        driver="GPKG",
        append=append,
        geometry_type="MultiPolygon",
        promote_to_multi=True,
        **({} if append else {"dataset_options": {"VERSION": GPKG_VERSION}}),
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
