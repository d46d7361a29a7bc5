"""What changed between two review rounds of one case.

A round is one submission as received (its files and their sha256) and the review of it
(report.json, layers.gpkg). :func:`diff_rounds` compares two rounds: the recommendation,
the findings by rule, the measures by name, the site and disturbance polygons, and the
submitted files. :func:`diff_lines` says the same in plain lines for the command line.

Pure: nothing is written, no database is read; the only input read from disk is the two
layers.gpkg files. Citations and titles are the reports' own (no Python names an
ordinance's section).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from georeview.errors import CRSError, DataSourceError, InputError
from georeview.report.decimals import display_decimals
from georeview.report.numbers import number_text
from georeview.units import M_PER_FT, crs_metres_per_unit

if TYPE_CHECKING:
    from pyproj import CRS

__all__ = [
    "GEOMETRY_LAYERS",
    "MOVED_TOLERANCE_SQFT",
    "RELATIVE_TOLERANCE",
    "RoundSnapshot",
    "diff_lines",
    "diff_rounds",
]

#: Two numbers of a measure closer than this share of the larger are the same value. The
#: pipeline's float arithmetic (overlays, float32 slope grids turned into float64) leaves
#: noise up to about 1e-7 of a value when nothing in the submission changed; the smallest
#: change a report shows (0.1 sq ft of an area, 0.0001 acre) is far above 1e-6 of any site.
RELATIVE_TOLERANCE: Final = 1e-6
#: Beside the relative one, an absolute floor for values at zero: an overlay that finds
#: nothing may leave -1e-13 sq ft rather than 0, and no measure is reported to 1e-9.
ABSOLUTE_TOLERANCE: Final = 1e-9
#: A polygon whose moved area (symmetric difference) is at most this did not change: half a
#: square foot reads 0 sq ft at report.html's whole square feet, and reprojecting the same
#: polygon between two CRSs leaves slivers far smaller than that.
MOVED_TOLERANCE_SQFT: Final = 0.5
#: The layers of layers.gpkg that :func:`diff_rounds` compares.
GEOMETRY_LAYERS: Final = ("site", "disturbance")
#: A measure name's suffix -> its units (the report's names carry their units).
UNIT_SUFFIXES: Final = (
    ("_sqft", "sq ft"),
    ("_acres", "acres"),
    ("_ft", "ft"),
    ("_pct", "%"),
    ("_cfs", "cfs"),
)
#: A finding's status in words.
STATUS_WORDS: Final = {
    "pass": "pass",
    "fail": "fail",
    "needs_info": "needs information",
    "not_applicable": "not applicable",
}


@dataclass(frozen=True)
class RoundSnapshot:
    """One review round of a case, as :func:`diff_rounds` reads it.

    Parameters
    ----------
    number : int
        The round's number within its case.
    report : mapping
        The round's latest report.json, parsed.
    files : mapping
        Submission file path (POSIX, relative to the submission folder) -> sha256 hex.
    gpkg : Path, optional
        The round's layers.gpkg (review output), if any.
    """

    number: int
    report: Mapping[str, Any]
    files: Mapping[str, str]
    gpkg: Path | None = None


def diff_rounds(before: RoundSnapshot, after: RoundSnapshot) -> dict[str, Any]:
    """What changed from one round to another.

    Parameters
    ----------
    before, after : RoundSnapshot
        The earlier and the later round (any two rounds; the order is the caller's).

    Returns
    -------
    dict
        JSON-ready, keys in a fixed order, lists sorted: ``from_round``, ``to_round``,
        ``outcome`` (``before``, ``after`` codes), ``findings`` (``changed``, ``new``,
        ``gone``, ``unchanged``), ``measures`` (the leaves that changed), ``geometry``
        (one entry per layer of :data:`GEOMETRY_LAYERS` present in both layers.gpkg) and
        ``files`` (``added``, ``removed``, ``replaced``, ``unchanged``).

    Raises
    ------
    georeview.errors.InputError
        A report naming one rule in two findings.
    georeview.errors.CRSError
        A layers.gpkg layer without a CRS, or in a geographic one.
    georeview.errors.DataSourceError
        A layers.gpkg that cannot be read.
    """
    return {
        "from_round": before.number,
        "to_round": after.number,
        "outcome": {
            "before": _outcome_code(before.report),
            "after": _outcome_code(after.report),
        },
        "findings": _diff_findings(
            before.report.get("findings") or [], after.report.get("findings") or []
        ),
        "measures": _diff_measures(
            before.report.get("measures") or {}, after.report.get("measures") or {}
        ),
        "geometry": _diff_geometry(before.gpkg, after.gpkg),
        "files": _diff_files(before.files, after.files),
    }


# --- outcome and findings ------------------------------------------------------------------


def _outcome_code(report: Mapping[str, Any]) -> str | None:
    """The report's recommendation code; ``None`` for a report older than ``summary.outcome``."""
    outcome = (report.get("summary") or {}).get("outcome") or {}
    code = outcome.get("code")
    return None if code is None else str(code)


def _by_rule(findings: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Findings keyed by rule id; one rule judged twice in a report is an error, not a pick."""
    out: dict[str, Mapping[str, Any]] = {}
    for finding in findings:
        rule_id = str(finding["rule_id"])
        if rule_id in out:
            raise InputError(f"rule {rule_id!r} has two findings in one report", field="findings")
        out[rule_id] = finding
    return out


def _finding_entry(finding: Mapping[str, Any]) -> dict[str, Any]:
    """A finding that is only in one round: its rule, citation, title, status and message."""
    return {
        "rule_id": str(finding["rule_id"]),
        "citation": finding.get("citation"),
        "title": finding.get("title"),
        "status": finding.get("status"),
        "message": finding.get("message"),
    }


def _diff_findings(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Findings whose status changed, that are new, that are gone, and how many stayed."""
    old, new = _by_rule(before), _by_rule(after)
    changed = []
    unchanged = 0
    for rule_id in sorted(old.keys() & new.keys()):
        a, b = old[rule_id], new[rule_id]
        if a.get("status") == b.get("status"):
            unchanged += 1
            continue
        changed.append(
            {
                "rule_id": rule_id,
                # the later round's words: an ordinance folder updated between rounds
                # cites as it does now
                "citation": b.get("citation", a.get("citation")),
                "title": b.get("title", a.get("title")),
                "before": a.get("status"),
                "after": b.get("status"),
                "message_before": a.get("message"),
                "message_after": b.get("message"),
            }
        )
    return {
        "changed": changed,
        "new": [_finding_entry(new[r]) for r in sorted(new.keys() - old.keys())],
        "gone": [_finding_entry(old[r]) for r in sorted(old.keys() - new.keys())],
        "unchanged": unchanged,
    }


# --- measures --------------------------------------------------------------------------------


def _leaves(value: Any, name: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a nested measures dict as (dotted name, value).

    A list (``downstream.discharge_points``) is not a leaf to compare item by item: the
    items are not matched across rounds (their order follows the contributing area), so
    only their count is, as ``<name>.count``.
    """
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, f"{name}.{key}" if name else str(key))
    elif isinstance(value, (list, tuple)):
        yield f"{name}.count", len(value)
    else:
        yield name, value


def _is_number(value: Any) -> bool:
    """A JSON number (a bool is not one, though Python counts it as an int)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    """Whether two leaf values are the same measure (numbers within the tolerances)."""
    if _is_number(a) and _is_number(b):
        return math.isclose(a, b, rel_tol=RELATIVE_TOLERANCE, abs_tol=ABSOLUTE_TOLERANCE)
    # a bool is compared with a bool only: True == 1 must not hide a number turned flag
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return bool(a == b)


def _change(a: Any, b: Any) -> int | float | None:
    """``b - a`` for two numbers, exact in the decimals report.json wrote them with.

    report.json numbers are written as their shortest round-trip decimals; subtracting those
    decimals (rather than the binary floats) gives 2108.8, not 2108.8000000000011.
    """
    if not (_is_number(a) and _is_number(b)):
        return None
    if isinstance(a, int) and isinstance(b, int):
        return b - a
    if not (math.isfinite(a) and math.isfinite(b)):
        return float(b) - float(a)
    return float(Decimal(repr(float(b))) - Decimal(repr(float(a))))


def _units(name: str) -> str | None:
    """The units a measure's name says, from its leaf or else the nearest parent that says one.

    ``downstream.distance_ft`` is in ft; ``peak_flow_cfs.2yr.post`` takes cfs from
    ``peak_flow_cfs``; ``downstream.discharge_points.count`` has none.
    """
    for part in reversed(name.split(".")):
        for suffix, units in UNIT_SUFFIXES:
            if part.endswith(suffix):
                return units
    return None


def _diff_measures(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The measure leaves whose value changed, by name; a leaf missing on one side is null."""
    old, new = dict(_leaves(before)), dict(_leaves(after))
    out = []
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name), new.get(name)
        if _same(a, b):
            continue
        out.append(
            {"name": name, "before": a, "after": b, "change": _change(a, b), "units": _units(name)}
        )
    return out


# --- geometry --------------------------------------------------------------------------------


def _feet_per_unit(crs: CRS | None, path: Path, layer: str) -> float:
    """International feet in one unit of a projected CRS's axes (metre, US survey foot...)."""
    if crs is None:
        raise CRSError("layer has no CRS", path=path, field=layer)
    if not crs.is_projected:
        raise CRSError(
            f"layer is in {crs.name}, not a projected CRS: areas need one", path=path, field=layer
        )
    return crs_metres_per_unit(crs) / M_PER_FT


def _layer_names(path: Path) -> set[str]:
    """The layers a layers.gpkg holds."""
    import pyogrio

    try:
        return {str(row[0]) for row in pyogrio.list_layers(path)}
    except (OSError, pyogrio.errors.DataSourceError) as exc:
        raise DataSourceError(f"cannot read the review's layers: {exc}", path=path) from exc


def _read_layer(path: Path, layer: str) -> Any:
    """One layer's geometries (no attributes) as a GeoDataFrame."""
    import pyogrio

    try:
        return pyogrio.read_dataframe(path, layer=layer, columns=[])
    except (OSError, pyogrio.errors.DataSourceError, pyogrio.errors.DataLayerError) as exc:
        raise DataSourceError(f"cannot read the layer: {exc}", path=path, field=layer) from exc


def _union(frame: Any) -> Any:
    """The layer's geometries as one (possibly empty) geometry.

    Made valid first: GEOS's overlays refuse an invalid ring, and a layers.gpkg edited in a
    GIS between rounds may hold one.
    """
    import shapely

    return shapely.union_all(shapely.make_valid(frame.geometry.array.to_numpy()))


def _layer_change(before: Path, after: Path, layer: str) -> dict[str, Any]:
    """Areas, moved area and centroid shift of one layer between two layers.gpkg files."""
    import shapely

    old, new = _read_layer(before, layer), _read_layer(after, layer)
    ft = _feet_per_unit(old.crs, before, layer)
    _feet_per_unit(new.crs, after, layer)  # checked, though reprojected below
    if new.crs != old.crs:
        new = new.to_crs(old.crs)
    a, b = _union(old), _union(new)
    sqft = ft * ft
    moved = float(shapely.area(shapely.symmetric_difference(a, b))) * sqft
    shift = None
    if not (shapely.is_empty(a) or shapely.is_empty(b)):
        shift = float(shapely.distance(shapely.centroid(a), shapely.centroid(b))) * ft
    return {
        "layer": layer,
        "area_before_sqft": float(shapely.area(a)) * sqft,
        "area_after_sqft": float(shapely.area(b)) * sqft,
        "moved_sqft": moved,
        "centroid_shift_ft": shift,
        "changed": moved > MOVED_TOLERANCE_SQFT,
    }


def _diff_geometry(before: Path | None, after: Path | None) -> list[dict[str, Any]]:
    """One entry per layer of :data:`GEOMETRY_LAYERS` in both files (none without both)."""
    if before is None or after is None:
        return []
    both = _layer_names(before) & _layer_names(after)
    return [_layer_change(before, after, layer) for layer in GEOMETRY_LAYERS if layer in both]


# --- files -----------------------------------------------------------------------------------


def _diff_files(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, Any]:
    """Submission files added, removed and replaced (same path, other contents), by path."""
    common = before.keys() & after.keys()
    replaced = sorted(p for p in common if before[p].lower() != after[p].lower())
    return {
        "added": sorted(after.keys() - before.keys()),
        "removed": sorted(before.keys() - after.keys()),
        "replaced": replaced,
        "unchanged": len(common) - len(replaced),
    }


# --- lines -----------------------------------------------------------------------------------


def _words(code: Any) -> str:
    """A code (``return_to_applicant``, ``needs_info``) in words; ``None`` as "none"."""
    if code is None:
        return "none"
    return STATUS_WORDS.get(str(code), str(code).replace("_", " "))


def _rule(entry: Mapping[str, Any]) -> str:
    """A finding's rule as a reviewer names it: citation, title and rule id."""
    head = " ".join(str(entry[k]) for k in ("citation", "title") if entry.get(k))
    return f"{head} ({entry['rule_id']})" if head else str(entry["rule_id"])


def _measure_label(name: str) -> str:
    """A measure's dotted name in words: ``downstream.distance_ft`` -> "downstream distance"."""
    parts = name.split(".")
    count = parts[-1] == "count" and len(parts) > 1
    if count:
        parts = parts[:-1]
    words = []
    for part in parts:
        for suffix, _ in UNIT_SUFFIXES:
            if part.endswith(suffix) and part != suffix:
                part = part.removesuffix(suffix)
                break
        words.append(part.replace("_", " "))
    text = " ".join(words)
    text = f"number of {text}" if count else text
    return text[:1].upper() + text[1:]


def _quantity(value: Any, units: str | None, *, signed: bool = False) -> str:
    """A measure's value as report.html would write it (its decimals by units)."""
    if not _is_number(value):
        return number_text(value, missing="none")
    digits = display_decimals(units, value)
    if digits is None:
        digits = 0 if isinstance(value, int) else 2
    text = number_text(value, digits, units=units or "")
    return f"+{text}" if signed and value > 0 else text


def _finding_lines(findings: Mapping[str, Any]) -> list[str]:
    """One line per finding that changed status, appeared or went."""
    lines = [
        f"Finding {_rule(f)}: {_words(f['before'])} before, {_words(f['after'])} now. "
        f"{f.get('message_after') or ''}".rstrip()
        for f in findings.get("changed", [])
    ]
    lines += [
        f"New finding {_rule(f)}: {_words(f['status'])}. {f.get('message') or ''}".rstrip()
        for f in findings.get("new", [])
    ]
    lines += [
        f"Finding no longer made {_rule(f)} (was {_words(f['status'])})."
        for f in findings.get("gone", [])
    ]
    return lines


def _measure_line(m: Mapping[str, Any]) -> str:
    """One changed measure: before, after and the change in its units."""
    units = m.get("units")
    text = (
        f"{_measure_label(m['name'])} ({m['name']}): "
        f"{_quantity(m['before'], units)} before, {_quantity(m['after'], units)} now"
    )
    if m.get("change") is not None:
        text += f" ({_quantity(m['change'], units, signed=True)})"
    return text + "."


def _geometry_line(g: Mapping[str, Any]) -> str:
    """One changed layer: its areas, the area that moved and how far its centre moved."""
    text = (
        f"{str(g['layer']).capitalize()} polygon changed: "
        f"{_quantity(g['area_before_sqft'], 'sq ft')} before, "
        f"{_quantity(g['area_after_sqft'], 'sq ft')} now; "
        f"{_quantity(g['moved_sqft'], 'sq ft')} added or taken away"
    )
    if g.get("centroid_shift_ft") is not None:
        text += f"; its centre moved {_quantity(g['centroid_shift_ft'], 'ft')}"
    return text + "."


def diff_lines(diff: Mapping[str, Any]) -> list[str]:
    """The changes of a :func:`diff_rounds` result in plain lines, one per change.

    Parameters
    ----------
    diff : mapping
        What :func:`diff_rounds` returned (or the same dict read back from JSON).

    Returns
    -------
    list of str
        Outcome, findings (changed, new, gone), measures, polygons, then files; a single
        line saying so when nothing changed. Numbers read with report.html's decimals.
    """
    lines = []
    outcome = diff.get("outcome") or {}
    if outcome.get("before") != outcome.get("after"):
        lines.append(
            f"Recommendation: {_words(outcome.get('before'))} before, "
            f"{_words(outcome.get('after'))} now."
        )
    lines += _finding_lines(diff.get("findings") or {})
    lines += [_measure_line(m) for m in diff.get("measures") or []]
    lines += [_geometry_line(g) for g in diff.get("geometry") or [] if g.get("changed")]
    files = diff.get("files") or {}
    lines += [f"File added: {p}" for p in files.get("added", [])]
    lines += [f"File removed: {p}" for p in files.get("removed", [])]
    lines += [f"File replaced (new contents): {p}" for p in files.get("replaced", [])]
    if not lines:
        lines.append(
            f"No change from round {diff.get('from_round')} to round {diff.get('to_round')}."
        )
    return lines
