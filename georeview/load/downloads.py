"""What ``georeview layers build`` reads and records: public downloads, provenance, tables.

A :class:`Download` is a file as a planner has it; :func:`read_download` reads it into the
working CRS; :class:`Built` gathers what the build writes (each layer's GeoPackage, its
provenance record with the source's checksum, its layers.toml table).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import shapely

from georeview.errors import DataSourceError, GeometryError, GeoReviewError, OutputError
from georeview.load.crs import bbox_into, crs_text
from georeview.load.geometry import drop_empty, repair_invalid
from georeview.load.vector import read_vector, vector_info

log = logging.getLogger(__name__)

__all__ = [
    "Built",
    "Download",
    "bounds_text",
    "find_column",
    "keep_clipped",
    "read_download",
    "refuse_elsewhere",
    "sha256_of",
    "source_record",
    "toml_string",
    "toml_table",
    "write_gpkg",
]


@dataclass(frozen=True)
class Download:
    """One public download given to ``layers build``: a file and the layer in it."""

    path: Path
    layer: str | None = None
    vintage: str | None = None


def sha256_of(path: Path) -> str:
    """SHA-256 of a file, or of a folder's files in name order (a File Geodatabase)."""
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def toml_string(text: str) -> str:
    r"""A TOML basic string that TOML reads back as ``text``.

    JSON's escapes (``\"``, ``\\``, ``\n``, ``\uXXXX`` for the other C0 controls) are
    TOML's too; DEL is the one control JSON leaves raw and TOML forbids in a string.
    """
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def source_record(
    d: Download, *, kept: int, read: int, where: str | None = None, **counts: int
) -> dict:
    """The provenance of one download: file, checksum, size, dates, features read and kept.

    ``counts`` adds what became of the others (``features_repaired``,
    ``features_other_kinds``, ``features_outside``, ``collections_cut_to_kind``).
    """
    p = Path(d.path)
    return {
        "file": str(p.resolve()),
        "layer": d.layer,
        "where": where,
        "sha256": sha256_of(p),
        "bytes": sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
        if p.is_dir()
        else p.stat().st_size,
        "modified": dt.datetime.fromtimestamp(p.stat().st_mtime, dt.UTC).date().isoformat(),
        "vintage": d.vintage,
        "features_read": read,
        "features_kept": kept,
        **counts,
    }


def read_download(
    d: Download, label: str, crs: Any, bbox: Any = None, where: str | None = None
) -> gpd.GeoDataFrame:
    """Read a download in ``crs``: empty geometries dropped, invalid ones made valid.

    ``attrs["counts"]`` of the result holds ``features_read`` (non-empty, in ``bbox``) and
    ``features_repaired``, for the provenance.
    """
    g = read_vector(d.path, layer=d.layer, label=label, bbox=bbox, bbox_crs=crs, where=where)
    g, repaired = repair_invalid(drop_empty(g))
    g = g.to_crs(crs)
    g.attrs["counts"] = {"features_read": len(g), "features_repaired": repaired}
    return g


def of_kinds(geoms: Any, kinds: tuple[int, ...]) -> tuple[Any, int]:
    """Each geometry cut to its parts of the shapely type ids ``kinds``; None when none.

    A repair (:func:`shapely.make_valid`) can turn a polygon into a GeometryCollection of
    polygons and stray lines or points: its polygonal part is the feature, not a reason
    to drop it. Collections become the multi-part geometry of their parts of the
    ``kinds`` (multi-polygons for polygon kinds, multi-lines for line kinds).

    Returns
    -------
    geometries : numpy.ndarray
        One per input (None where nothing of ``kinds`` is left).
    cut : int
        Collections cut to their parts of ``kinds``.
    """
    geoms = np.asarray(geoms, dtype=object)
    types = shapely.get_type_id(geoms)
    out = geoms.copy()
    out[~np.isin(types, kinds)] = None
    coll = np.flatnonzero(types == 7)
    if coll.size == 0:
        return out, 0
    members, owner = shapely.get_parts(geoms[coll], return_index=True)
    single, sub = shapely.get_parts(members, return_index=True)  # multi-parts into singles
    owner = owner[sub]
    want = np.isin(shapely.get_type_id(single), kinds)
    single, owner = single[want], owner[want]
    make = shapely.multipolygons if 3 in kinds else shapely.multilinestrings
    got, dense = np.unique(owner, return_inverse=True)  # indices must run 0, 1, ...
    if got.size:
        out[coll[got]] = make(single, indices=dense)
    return out, int(got.size)


def keep_clipped(
    g: gpd.GeoDataFrame,
    kinds: tuple[int, ...],
    what: str,
    d: Download,
    clip: Any,
    *,
    label: str,
    crs: Any,
) -> gpd.GeoDataFrame:
    """The features of the geometry kinds ``kinds`` (shapely type ids) that meet ``clip``.

    Raises
    ------
    GeometryError
        The download holds features but none of those kinds (``what`` names them).
    DataSourceError
        No feature meets ``clip`` (:func:`refuse_elsewhere`).
    """
    counts = dict(g.attrs.get("counts", {"features_read": len(g)}))
    geoms, cut = of_kinds(g.geometry.values, kinds)
    ok = geoms != None  # noqa: E711 (an element-wise test of an object array)
    if len(g) and not ok.any():
        raise GeometryError(
            f"holds no {what} (its geometries are {', '.join(sorted(set(g.geom_type)))})",
            path=d.path,
            field=d.layer,
        )
    g = g[ok].set_geometry(gpd.GeoSeries(geoms[ok], index=g.index[ok], crs=g.crs))
    near = shapely.intersects(g.geometry.values, clip)
    kept = g[near]
    if len(kept) == 0:
        refuse_elsewhere(d, label, crs, clip, _vector_bounds(d, label, crs))
    kept.attrs["counts"] = counts | {
        "features_other_kinds": int((~ok).sum()),
        "collections_cut_to_kind": cut,
        "features_outside": int((~near).sum()),
    }
    return kept


def bounds_text(bounds: Any) -> str:
    """``(minx, miny, maxx, maxy)`` rounded to whole units, for messages."""
    return "(" + ", ".join(f"{float(v):,.0f}" for v in bounds) + ")"


def _vector_bounds(d: Download, label: str, crs: Any) -> tuple[float, ...] | None:
    """The bounds of a vector download's features, in ``crs``; ``None`` when unknown."""
    try:
        info = vector_info(d.path, layer=d.layer, label=label)
        if info.bounds is None or info.crs is None or not np.isfinite(info.bounds).all():
            return None
        from pyproj import CRS

        return tuple(bbox_into(info.bounds, CRS.from_user_input(info.crs), crs.to_wkt(), d.path))
    except GeoReviewError as exc:  # the refusal below says what matters; this only adds to it
        log.debug("bounds of %s not read: %s", d.path, exc)
        return None


def refuse_elsewhere(
    d: Download, label: str, crs: Any, clip: Any, source_bounds: tuple[float, ...] | None
) -> None:
    """Refuse a download none of whose data meets the village and its reach.

    An empty layer would read as "no wetland (floodplain, ...) here", and every review
    would pass the rules it decides; a download of another county is refused instead,
    with both extents in the working CRS, so the planner sees which area it covers.

    Raises
    ------
    DataSourceError
        Always.
    """
    unit = crs.axis_info[0].unit_name
    where = (
        f"its data lie within {bounds_text(source_bounds)}"
        if source_bounds is not None
        else "its extent is not stated"
    )
    raise DataSourceError(
        f"no feature meets the village and its reach: {where}, the village and its reach"
        f" within {bounds_text(shapely.bounds(clip))} ({crs_text(crs)}, {unit}); is it a"
        " download of another area?",
        path=d.path,
        field=label,
    )


def write_gpkg(gdf: gpd.GeoDataFrame, path: Path, layer: str, append: bool = False) -> None:
    """Write a layer to a GeoPackage 1.3 (multi-part geometries, as the downloads mix both).

    Raises
    ------
    OutputError
        The file cannot be written (a full disk, a folder that refuses it): one line
        naming it, not an internal error.
    """
    import pyogrio

    from georeview.geopackage import write_layer

    try:
        write_layer(gdf, path, layer, append=append, promote_to_multi=True)
    except (OSError, pyogrio.errors.DataSourceError, pyogrio.errors.DataLayerError) as exc:
        detail = getattr(exc, "strerror", None) or " ".join(str(exc).split())[:200]
        raise OutputError(f"cannot write ({detail})", path=path) from None


def find_column(columns: Any, *names: str) -> str | None:
    """The first of ``names`` among ``columns``, compared without regard to case."""
    lower = {str(c).lower(): c for c in columns}
    return next((lower[n.lower()] for n in names if n.lower() in lower), None)


def toml_table(
    name: str,
    path: str,
    layer: Any,
    d: Download,
    source: str,
    *,
    where: str | None = None,
    **fields: Any,
) -> list[str]:
    """The lines of one layers.toml table (fields left ``None`` are not written)."""
    lines = [f"[{name}]", f"path = {toml_string(path)}"]
    if isinstance(layer, (list, tuple)):
        lines.append("layer = [" + ", ".join(toml_string(x) for x in layer) + "]")
    elif layer:
        lines.append(f"layer = {toml_string(layer)}")
    if where:
        lines.append(f"where = {toml_string(where)}")
    lines.append(f"source = {toml_string(f'{source}: {Path(d.path).name}')}")
    if d.vintage:
        lines.append(f"vintage = {toml_string(d.vintage)}")
    lines += [f"{k} = {toml_string(v)}" for k, v in fields.items() if v]
    return [*lines, ""]


@dataclass
class Built:
    """What a build has written so far: provenance by layer, and layers.toml lines."""

    out: Path
    provenance: dict[str, Any] = field(default_factory=dict)
    toml: list[str] = field(default_factory=list)
    #: Told of each step as it starts: (steps done, steps in all, what is being done).
    on_step: Callable[[int, int, str], None] | None = None
    steps: int = 0
    done: int = 0

    def say(self, text: str) -> None:
        """Report what the build is doing now (logged, and to :attr:`on_step`)."""
        log.info("layers build: %s", text)
        if self.on_step is not None:
            self.on_step(self.done, self.steps, text)

    def step_done(self) -> None:
        """Count one step (a source read, cut and written) as done."""
        self.done += 1
        if self.on_step is not None:
            self.on_step(self.done, self.steps, "")

    def keep(
        self,
        g: gpd.GeoDataFrame,
        d: Download,
        file: str,
        layer: str,
        *,
        key: str,
        append: bool = False,
    ) -> None:
        """Write ``g`` as ``layer`` of ``out/file`` and record where it came from as ``key``."""
        self.say(f"{key}: writing {len(g):,} features to {file}")
        write_gpkg(g, self.out / file, layer, append=append)
        counts = dict(g.attrs.get("counts", {}))
        read = counts.pop("features_read", len(g))
        self.provenance[key] = source_record(d, kept=len(g), read=read, **counts)

    def table(
        self, g: gpd.GeoDataFrame, d: Download, name: str, layer: str, source: str, **fields: Any
    ) -> None:
        """Keep ``g`` as ``layer`` of ``<name>.gpkg`` and describe it as table ``[name]``."""
        self.keep(g, d, f"{name}.gpkg", layer, key=name)
        self.toml += toml_table(name, f"{name}.gpkg", layer, d, source, **fields)
