"""The village's jurisdictions from its layers folder, cached by the files' contents.

Building the extraterritorial area (the 1.5-mile zone, the towns in it and the
equidistant lines with the neighbours, :func:`georeview.measure.jurisdiction.build`)
takes longer than the rest of a small review, and gives the same answer for every
site of one layers folder. :func:`jurisdictions_for` therefore keeps the result in a
cache file named by a digest of everything it depends on: the bytes of
``layers.toml``, of the boundary and neighbours files (with their sidecar files), the
ordinance's ``etj_miles`` parameter, and the source of the code that reads and builds
them with the versions of shapely and GEOS. When any of them changes, the digest
changes, so a cached result is never stale; a cache that cannot be read or written is
ignored (the result is computed, and a debug message says why).

The cache folder is ``$GEOREVIEW_CACHE_DIR`` when set (``off`` disables the cache),
else ``$XDG_CACHE_HOME/georeview``, else ``~/.cache/georeview``; the files are under
``jurisdictions/``. They hold geometries as WKB inside JSON (no pickle: reading a
cache file runs no code).

Every layers folder and code version adds an entry, so the folder is bounded: after a
new entry is written, the least recently used entries past :data:`MAX_ENTRIES` or past
:data:`MAX_BYTES` in all are deleted (a hit marks its entry used by setting its
modification time), as are temporary files a process left when it died mid-write.
Two processes may share the folder: an entry is written to a temporary file and renamed
(a reader sees the old file or the new one, never half of one), and an entry deleted by
the other process between listing and reading is simply a miss.

The cache is a trust boundary (SECURITY.md): an entry decides whether a site is in the
village. So a cached result is used only when

- the cache folder and its ``jurisdictions/`` folder are real folders (not links) owned
  by the user running the review and writable by nobody else (``mode & 0o022 == 0``);
  otherwise the cache is off for the run and a warning says why;
- the entry is a regular file (opened without following links and without blocking, so
  a FIFO in its place is a miss, not a hang) owned by the user, of at most
  :data:`MAX_ENTRY_BYTES`;
- the entry's tag, an HMAC-SHA256 over its cache key and content with the folder's own
  secret key (``jurisdictions/key``, 32 random bytes, mode 0600, made on first use), is
  right. A forged entry, written by anyone who does not hold that key, is a miss and is
  rebuilt.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import stat
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import shapely

from georeview.errors import ConfigError, DataSourceError
from georeview.load import Layers
from georeview.measure.jurisdiction import Jurisdictions, Municipality, build
from georeview.rules import load_ordinance

__all__ = ["MAX_BYTES", "MAX_ENTRIES", "cache_dir", "cache_key", "jurisdictions_for"]

log = logging.getLogger(__name__)

#: Bumped when the cache file's layout changes (2: entries carry an HMAC tag).
_FORMAT = 2
#: Package sources whose code decides the result (reading, repairing, building).
_CODE = ("config", "load", "measure/jurisdiction.py", "pipeline/jurisdictions.py")
#: Entries kept: the most recently used. An entry is 59 kB (Somers' layers) to 2.1 MB
#: (Deerfield's: its neighbours layer is 1.7 MB), so 16 of them are a few tens of MB at most.
MAX_ENTRIES = 16
#: Bytes the entries may take in all (the most recent entry is kept whatever its size).
MAX_BYTES = 256 * 2**20
#: A temporary file this old (seconds) was left by a process that died while writing it;
#: a live writer renames its file within a second.
_STALE_PARTIAL_S = 3600.0
_PARTIAL_PREFIX = ".partial-"
#: The name of an entry: the hex SHA-256 of :func:`cache_key` (nothing else is deleted).
_ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.json")
#: The largest entry read (bytes): 16 times Deerfield's 2.1 MB. A bigger file in the
#: folder is not ours, and reading it whole could take any amount of memory.
MAX_ENTRY_BYTES = 32 * 2**20
#: The folder's secret key: the file's name and its length in bytes.
_KEY_NAME = "key"
_KEY_BYTES = 32


def jurisdictions_for(layers: Layers) -> Jurisdictions:
    """Compute the village's extraterritorial area from its boundary layers.

    The result is read from the cache when a file for the same inputs exists
    (see the module docstring), which marks that entry used; otherwise it is built
    and written there, and the least recently used entries past the limits go.
    """
    cfg = layers.config
    toml = layers.folder / "layers.toml"
    if cfg.boundary is None:
        raise ConfigError("a [boundary] layer is required", path=toml, field="boundary")
    reach_miles = load_ordinance(cfg.municipality).param("etj_miles")
    folder = cache_dir()
    entries = private_folder(folder / "jurisdictions") if folder is not None else None
    secret = _secret(entries) if entries is not None else None
    path = None
    if entries is not None and secret is not None:
        key = cache_key(layers, reach_miles)
        path = entries / f"{key}.json"
        cached = _read(path, key=key, secret=secret)
        if cached is not None:
            _touch(path)
            return cached
    result = _build(layers, reach_miles)
    if path is not None and secret is not None and _write(path, result, secret=secret):
        _evict(path.parent, newest=path)
    return result


def private_folder(entries: Path) -> Path | None:
    """``entries`` (made, mode 0700, if missing) when only this user can write it, else ``None``.

    The cache folder and ``entries`` must each be a real folder (``lstat``: a link is
    refused, as it could point anywhere), owned by the effective user and without group or
    world write permission, the test ssh applies to ``~/.ssh``. A folder that fails it is
    a warning once per process and no cache, never an error: the review still runs.
    """
    try:
        entries.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        entries.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        log.debug("jurisdiction cache %s not made: %s", entries, exc)
        return None
    for folder in (entries.parent, entries):
        why = _unsafe_folder(folder)
        if why is not None:
            if folder not in _WARNED:
                _WARNED.add(folder)
                log.warning("cache folder %s not used: %s", folder, why)
            return None
    return entries


#: Folders already warned about in this process (a batch warns once, not per site).
_WARNED: set[Path] = set()


def _unsafe_folder(folder: Path) -> str | None:
    """Why ``folder`` cannot hold trusted entries, or ``None`` when it can."""
    try:
        st = folder.lstat()
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if st.st_uid != os.geteuid():
        return f"it belongs to user {st.st_uid}, not to this user ({os.geteuid()})"
    if st.st_mode & 0o022:
        return f"others may write to it (mode {stat.S_IMODE(st.st_mode):o}; chmod go-w)"
    return None


def _secret(entries: Path) -> bytes | None:
    """The folder's HMAC key, made on first use; ``None`` when it cannot be read or made."""
    path = entries / _KEY_NAME
    key = _read_bounded(path, _KEY_BYTES)
    if key is not None and len(key) == _KEY_BYTES:
        return key
    fresh = secrets.token_bytes(_KEY_BYTES)
    try:
        fd, tmp = tempfile.mkstemp(prefix=_PARTIAL_PREFIX, dir=entries)  # mode 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(fresh)
            # link, not replace: of two processes making the key at once, one wins and
            # both use the winner's (the loser reads it back)
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as exc:
        log.debug("jurisdiction cache key %s not made: %s", path, exc)
        return None
    key = _read_bounded(path, _KEY_BYTES)
    return key if key is not None and len(key) == _KEY_BYTES else None


def _read_bounded(path: Path, limit_bytes: int) -> bytes | None:
    """The bytes of ``path`` if it is a regular file of this user of at most ``limit_bytes``.

    Opened with ``O_NOFOLLOW`` (a link is refused) and ``O_NONBLOCK`` (a FIFO put in an
    entry's place opens at once and is then refused as not a regular file, instead of
    blocking every review on it); checked on the open descriptor, so what is checked is
    what is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if not isinstance(exc, FileNotFoundError):
            log.debug("jurisdiction cache %s not opened: %s", path, exc)
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            log.debug("jurisdiction cache %s not used: not a regular file", path)
            return None
        if st.st_uid != os.geteuid() or st.st_size > limit_bytes:
            log.debug(
                "jurisdiction cache %s not used: owner %d, %d bytes", path, st.st_uid, st.st_size
            )
            return None
        with os.fdopen(fd, "rb") as f:
            fd = -1  # the file object closes it
            data = f.read(limit_bytes + 1)
        return data if len(data) <= limit_bytes else None
    except OSError as exc:
        log.debug("jurisdiction cache %s not read: %s", path, exc)
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def _tag(secret: bytes, key: str, payload: bytes) -> str:
    """The HMAC-SHA256 of an entry: its cache key and its content, with the folder's key."""
    return hmac.new(secret, key.encode("ascii") + b"\0" + payload, hashlib.sha256).hexdigest()


def _build(layers: Layers, reach_miles: Mapping[str, float]) -> Jurisdictions:
    """Read the boundary and neighbours layers and build the jurisdictions."""
    cfg = layers.config
    toml = layers.folder / "layers.toml"
    boundary = layers.read("boundary")
    if boundary is None or boundary.empty:
        raise DataSourceError("the boundary layer has no features", path=layers.path("boundary"))
    # No neighbours layer: the extraterritorial area is undetermined (the sites in it
    # say needs_info), never empty.
    neighbours = layers.read("neighbors")
    nb = cfg.neighbors
    try:
        return build(
            shapely.union_all(boundary.geometry.values),
            cfg.village_name or cfg.municipality.title(),
            neighbours,
            kind_field=nb.kind_field if nb else "CTV",
            name_field=nb.name_field if nb else "MCD_NAME",
            city_class=dict(nb.city_class) if nb else {},
            reach_miles=reach_miles,
            crs=boundary.crs,
        )
    except ConfigError as exc:
        if exc.path is not None:
            raise
        raise ConfigError(exc.message, path=toml, field=exc.field) from None


def cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The cache folder (``None`` when ``GEOREVIEW_CACHE_DIR=off``)."""
    env = os.environ if environ is None else environ
    own = env.get("GEOREVIEW_CACHE_DIR")
    if own:
        return None if own.lower() == "off" else Path(own)
    xdg = env.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "georeview"
    try:
        home = Path.home()
    except RuntimeError as exc:  # no HOME and no password entry (a bare container)
        log.debug("jurisdiction cache off: %s", exc)
        return None
    return home / ".cache" / "georeview"


def cache_key(layers: Layers, reach_miles: Mapping[str, float]) -> str:
    """Digest of every input of :func:`jurisdictions_for` for ``layers``.

    Any change to a byte of layers.toml, of the boundary or neighbours files (or a
    sidecar of theirs), to the reach parameter or to the code and geometry library
    that build the result gives another digest.
    """
    from georeview import _version

    h = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        # length-prefixed, so no two different input lists hash alike
        h.update(f"{label}\0{len(data)}\0".encode())
        h.update(data)

    add("format", str(_FORMAT).encode())
    add("versions", f"{_version.__version__} {shapely.__version__} {shapely.geos_version}".encode())
    add("reach", json.dumps(dict(reach_miles), sort_keys=True).encode())
    add("layers.toml", (layers.folder / "layers.toml").read_bytes())
    for name in ("boundary", "neighbors"):
        src = layers.path(name)
        for f in _input_files(src) if src is not None else ():
            add(f"{name}:{f.name}", f.read_bytes())
    package = Path(_version.__file__).parent
    for part in _CODE:
        for f in sorted(_input_files(package / part, same_stem=False)):
            if f.suffix == ".py":
                add(f"code:{f.relative_to(package).as_posix()}", f.read_bytes())
    return h.hexdigest()


def _input_files(path: Path, *, same_stem: bool = True) -> Iterator[Path]:
    """The files a layer's data lives in: a folder's files, or a file and its sidecars.

    Sidecars are the files beside it with the same stem (a shapefile's .dbf, .shx,
    .prj, .cpg; a raster's .aux.xml), which change what is read as much as the file.
    """
    if path.is_dir():
        yield from sorted(p for p in path.rglob("*") if p.is_file())
    elif same_stem:
        # listed, not globbed: a stem holding "[" or "*" is a name, not a pattern
        parent = path.parent if path.parent.is_dir() else None
        siblings = parent.iterdir() if parent is not None else iter(())
        yield from sorted(p for p in siblings if p.stem == path.stem and p.is_file())
    elif path.is_file():
        yield path


def _read(path: Path, *, key: str, secret: bytes) -> Jurisdictions | None:
    """The cached result at ``path``, or ``None`` when absent, unreadable or not ours.

    The file is a tag line (:func:`_tag` of ``key`` and the rest) and the JSON content;
    a wrong tag is a forged or damaged entry, and a miss.
    """
    raw = _read_bounded(path, MAX_ENTRY_BYTES)
    if raw is None:
        return None
    tag, sep, payload = raw.partition(b"\n")
    if not sep or not hmac.compare_digest(tag, _tag(secret, key, payload).encode("ascii")):
        log.debug("jurisdiction cache %s not used: its tag is not this folder's", path)
        return None
    try:
        data = json.loads(payload.decode("utf-8"))
        if data.get("format") != _FORMAT:
            return None
        return Jurisdictions(
            village=_municipality(data["village"]),
            extraterritorial=_geom(data["extraterritorial"]),
            ceded={k: _geom(v) for k, v in data["ceded"].items()},
            neighbours=tuple(_municipality(m) for m in data["neighbours"]),
            undetermined=_geom(data["undetermined"]),
            undetermined_reason=str(data["undetermined_reason"]),
        )
    # What a damaged file can raise while decoded: not JSON or not UTF-8 (ValueError),
    # JSON of another shape (KeyError, TypeError, AttributeError: a list where an object
    # was), nesting deeper than the parser's stack (RecursionError), bad base64
    # (binascii.Error, a ValueError) or bad WKB (GEOSException).
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        RecursionError,
        shapely.errors.GEOSException,
    ) as exc:
        log.debug("jurisdiction cache %s not used: %s", path, exc)
        return None


def _touch(path: Path) -> None:
    """Mark the entry at ``path`` as just used (its modification time), if the folder lets us."""
    try:
        os.utime(path)
    except OSError as exc:
        log.debug("jurisdiction cache %s not marked used: %s", path, exc)


def _write(path: Path, j: Jurisdictions, *, secret: bytes) -> bool:
    """Write ``j`` to ``path`` atomically (temporary file, then rename), tagged; never fails.

    Returns whether the entry was written.
    """
    data = {
        "format": _FORMAT,
        "village": _municipality_dict(j.village),
        "extraterritorial": _wkb(j.extraterritorial),
        "ceded": {k: _wkb(v) for k, v in j.ceded.items()},
        "neighbours": [_municipality_dict(m) for m in j.neighbours],
        "undetermined": _wkb(j.undetermined),
        "undetermined_reason": j.undetermined_reason,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps(data).encode("utf-8")
        tag = _tag(secret, path.name.removesuffix(".json"), payload)
        fd, tmp = tempfile.mkstemp(prefix=_PARTIAL_PREFIX, suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(tag.encode("ascii") + b"\n" + payload)
            os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as exc:
        log.debug("jurisdiction cache %s not written: %s", path, exc)
        return False
    return True


def _evict(folder: Path, *, newest: Path) -> None:
    """Delete the least recently used entries of ``folder`` past the limits; never fails.

    Entries are ranked by modification time (written or last hit), ``newest`` first
    whatever its time says; going down that list, the first entry that would pass
    :data:`MAX_ENTRIES` or :data:`MAX_BYTES` and every older one are deleted, so an
    older entry never outlives a newer one. Temporary files older than an hour are
    deleted too. A file another process deleted meanwhile is skipped.
    """
    try:
        with os.scandir(folder) as listing:
            names = list(listing)
    except OSError as exc:
        log.debug("jurisdiction cache %s not listed: %s", folder, exc)
        return
    now_s = time.time()
    entries: list[tuple[int, str, int]] = []
    for e in names:
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue  # deleted by another process since the listing
        if e.name.startswith(_PARTIAL_PREFIX) and now_s - st.st_mtime > _STALE_PARTIAL_S:
            _unlink(Path(e.path))
        elif _ENTRY_NAME.fullmatch(e.name) and e.name != newest.name:
            entries.append((st.st_mtime_ns, e.name, st.st_size))
    try:
        total_bytes = newest.stat().st_size
    except OSError:
        total_bytes = 0
    entries.sort(reverse=True)  # most recently used first
    cut = len(entries)
    for i, (_, _, size_bytes) in enumerate(entries):
        total_bytes += size_bytes
        if i + 2 > MAX_ENTRIES or total_bytes > MAX_BYTES:  # i + 2: with ``newest``
            cut = i
            break
    for _, name, _ in entries[cut:]:
        _unlink(folder / name)
    if cut < len(entries):
        log.debug("jurisdiction cache: %d entries evicted", len(entries) - cut)


def _unlink(path: Path) -> None:
    """Delete ``path`` if it is there; a failure only logs."""
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        log.debug("jurisdiction cache %s not deleted: %s", path, exc)


def _wkb(geom: shapely.Geometry) -> str:
    # WKB keeps every coordinate's float64 bits: the cached geometry is the computed one
    return base64.b64encode(shapely.to_wkb(geom, include_srid=False)).decode("ascii")


def _geom(text: str) -> shapely.Geometry:
    return shapely.from_wkb(base64.b64decode(text))


def _municipality_dict(m: Municipality) -> dict[str, Any]:
    return {"name": m.name, "kind": m.kind, "geometry": _wkb(m.geometry), "reach_m": m.reach_m}


def _municipality(d: Mapping[str, Any]) -> Municipality:
    return Municipality(str(d["name"]), str(d["kind"]), _geom(d["geometry"]), float(d["reach_m"]))
