"""The Village's determinations: a reviewer's file kept beside the submission.

Some facts only the Village can supply (the Village Engineer requires a basin, the
Administrator accepts a maximum-extent-practicable explanation, ...). They are declared in
the fact registry with source ``village`` and come only from ``determinations.toml``, a file
the reviewer keeps beside the submission (or names with ``georeview review
--determinations FILE`` when the submission folder is the applicant's), never from the
applicant's ``submission.toml``. Until one is given, the findings that read it say
needs_info "for the Village to decide".

The file (strict: unknown keys are refused)::

    municipality = "deerfield"            # optional; must match the submission's

    [determinations.basin_required]       # the fact village.basin_required
    value = true
    by = "A. Engineer, Village Engineer"  # who decided
    date = 2025-05-02                     # when
    reason = "A channel originates in the disturbed area."
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from georeview.errors import ConfigError

__all__ = ["FILE_NAME", "Determination", "Determinations", "load_determinations"]

#: The file's name beside a submission.
FILE_NAME = "determinations.toml"
_PREFIX = "village."
_ENTRY_KEYS = ("value", "by", "date", "reason")
_TYPES: dict[str, tuple[type, ...]] = {
    "bool": (bool,),
    "number": (int, float),
    "integer": (int,),
    "text": (str,),
    "date": (dt.date,),
}


@dataclass(frozen=True)
class Determination:
    """One determination: the fact it sets, its value, who decided, when and why."""

    fact: str
    value: Any
    by: str
    date: dt.date
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict (report.json ``determinations[]``)."""
        value = self.value.isoformat() if isinstance(self.value, dt.date) else self.value
        return {
            "fact": self.fact,
            "value": value,
            "by": self.by,
            "date": self.date.isoformat(),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Determinations:
    """Every determination of one file (none when there is no file)."""

    path: Path | None = None
    items: tuple[Determination, ...] = ()

    def facts(self) -> dict[str, Any]:
        """The ``village.*`` facts they set."""
        return {d.fact: d.value for d in self.items}

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict (report.json ``determinations``)."""
        return {
            "file": None if self.path is None else self.path.name,
            "items": [d.to_dict() for d in self.items],
        }


def _entry(name: str, spec: Any, path: Path) -> Determination:
    from georeview.facts.registry import registry

    field = f"determinations.{name}"
    fact = registry().get(_PREFIX + name)
    if fact is None or fact.source != "village":
        known = sorted(
            n.removeprefix(_PREFIX) for n, f in registry().facts.items() if f.source == "village"
        )
        raise ConfigError(
            f"unknown determination {name!r} (known: {', '.join(known)})", path=path, field=field
        )
    if not isinstance(spec, dict):
        raise ConfigError("must be a table with value, by, date and reason", path=path, field=field)
    extra = sorted(set(spec) - set(_ENTRY_KEYS))
    missing = [k for k in _ENTRY_KEYS if k not in spec]
    if extra or missing:
        what = "; ".join(
            s
            for s in (
                f"unknown key(s) {', '.join(extra)}" if extra else "",
                f"missing {', '.join(missing)}" if missing else "",
            )
            if s
        )
        raise ConfigError(f"{what} (keys: {', '.join(_ENTRY_KEYS)})", path=path, field=field)
    value = spec["value"]
    types = _TYPES.get(fact.type)
    wrong_bool = isinstance(value, bool) and fact.type != "bool"
    if types is not None and (not isinstance(value, types) or wrong_bool):
        raise ConfigError(
            f"value must be of type {fact.type}, got {value!r}", path=path, field=f"{field}.value"
        )
    date = spec["date"]
    if not isinstance(date, dt.date) or isinstance(date, dt.datetime):
        raise ConfigError(
            f"date must be a TOML date (2025-05-02), got {date!r}", path=path, field=f"{field}.date"
        )
    for key in ("by", "reason"):
        if not isinstance(spec[key], str) or not spec[key].strip():
            raise ConfigError(f"{key} must be non-empty text", path=path, field=f"{field}.{key}")
    return Determination(fact.name, value, spec["by"].strip(), date, spec["reason"].strip())


def load_determinations(path: Path | None, municipality: str) -> Determinations:
    """Read a determinations file; ``None`` or a missing default file gives none.

    Parameters
    ----------
    path : Path or None
        The file.
    municipality : str
        The submission's municipality (the file's, when it names one, must match).

    Raises
    ------
    georeview.errors.ConfigError
        Unreadable TOML, an unknown key or determination, a value of the wrong type, or a
        missing ``by``/``date``/``reason`` (file and field named).
    """
    if path is None:
        return Determinations()
    from georeview.config import read_toml

    path = Path(path)
    if not path.is_file():
        raise ConfigError("determinations file not found", path=path)
    data = read_toml(path)
    extra = sorted(set(data) - {"municipality", "determinations"})
    if extra:
        raise ConfigError(
            f"unknown key(s) {', '.join(extra)} (keys: municipality, determinations)",
            path=path,
            field=extra[0],
        )
    named = data.get("municipality")
    if named is not None and named != municipality:
        raise ConfigError(
            f"the determinations are for {named!r}, the submission for {municipality!r}",
            path=path,
            field="municipality",
        )
    entries = data.get("determinations", {})
    if not isinstance(entries, dict):
        raise ConfigError("must be a table of determinations", path=path, field="determinations")
    return Determinations(path, tuple(_entry(n, s, path) for n, s in entries.items()))
