"""The Village's determinations: a file the reviewer keeps and names, never the applicant's.

Some facts only the Village can supply (the Village Engineer requires a basin, the
Administrator accepts a maximum-extent-practicable explanation, ...). They are declared in
the fact registry with source ``village`` and come only from a determinations file the
reviewer names (``georeview review --determinations FILE``; for a batch a folder of
``<submission name>.toml``), kept outside the submission: never from the applicant's
``submission.toml``, and never from a ``determinations.toml`` found in a submission folder
or zip (an applicant could write one with any "by" and date; it is ignored, with a
warning in the report). Until one is given, the findings that read it say needs_info
"for the Village to decide".

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

__all__ = [
    "FILE_NAME",
    "IGNORED_NOTE",
    "Determination",
    "Determinations",
    "load_determinations",
    "make_determination",
    "planted",
]

#: The name a determinations file found in a submission has (and is ignored under).
FILE_NAME = "determinations.toml"

#: The report's warning when a submission holds one.
IGNORED_NOTE = (
    "The submission holds a determinations.toml: it was ignored. The Village's"
    " determinations are read only from the file the reviewer names (--determinations,"
    " kept outside the submission) or the Village's own records, never from the"
    " applicant's files."
)
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
    #: where they come from when not a file: the case record (``"case SOM-2026-0001"``)
    source: str | None = None

    def facts(self) -> dict[str, Any]:
        """The ``village.*`` facts they set."""
        return {d.fact: d.value for d in self.items}

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict (report.json ``determinations``)."""
        out: dict[str, Any] = {"file": None if self.path is None else self.path.name}
        if self.source is not None:
            out["source"] = self.source
        out["items"] = [d.to_dict() for d in self.items]
        return out


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


def make_determination(name: str, spec: Any, *, where: str) -> Determination:
    """Check one determination as a file's entry is checked (the case store records them).

    Parameters
    ----------
    name : str
        The fact without its ``village.`` prefix (``"basin_required"``).
    spec : dict
        ``value``, ``by``, ``date`` (a :class:`datetime.date`) and ``reason``.
    where : str
        What an error names as the file (``"case SOM-2026-0001"``).

    Raises
    ------
    georeview.errors.ConfigError
        An unknown fact, a value of the wrong type, or a missing ``by``/``date``/``reason``.
    """
    return _entry(name, spec, Path(where))


def planted(submission_dir: Path) -> bool:
    """Whether a submission folder holds a ``determinations.toml`` (of any kind, a link too)."""
    f = Path(submission_dir) / FILE_NAME
    return f.is_symlink() or f.exists()


def load_determinations(
    path: Path | None, municipality: str, *, not_in: tuple[Path, ...] = ()
) -> Determinations:
    """Read the determinations file the reviewer names; ``None`` gives none.

    Parameters
    ----------
    path : Path or None
        The file.
    municipality : str
        The submission's municipality (the file's, when it names one, must match).
    not_in : tuple of Path
        Folders the file must not lie in once links are resolved: the submission (and
        the batch) it is for. What the Village decides never comes from there.

    Raises
    ------
    georeview.errors.DataSourceError
        Missing, a symbolic link, not a regular file, or inside a folder of ``not_in``.
    georeview.errors.LimitError
        Larger than the TOML limit.
    georeview.errors.ConfigError
        Unreadable TOML, not a determinations file, an unknown determination, a value
        of the wrong type, or a missing ``by``/``date``/``reason`` (file and field
        named). The keys of a file that is not a determinations file are not repeated.
    """
    if path is None:
        return Determinations()
    import os

    from georeview.config import read_bounded_toml
    from georeview.errors import DataSourceError

    path = Path(path)
    real = Path(os.path.realpath(path))
    for folder in not_in:
        if real.is_relative_to(Path(os.path.realpath(folder))):
            raise DataSourceError(
                "lies in the submission: the Village's determinations are kept outside"
                " the applicant's files",
                path=path,
                field="--determinations",
            )
    data = read_bounded_toml(path, follow_links=False)
    extra = set(data) - {"municipality", "determinations"}
    if extra or not isinstance(data.get("determinations", {}), dict):
        raise ConfigError(
            "is not a determinations file (it holds only municipality and a"
            " [determinations] table)",
            path=path,
        )
    named = data.get("municipality")
    if named is not None and named != municipality:
        raise ConfigError(
            f"the determinations are for {named!r}, the submission for {municipality!r}",
            path=path,
            field="municipality",
        )
    entries = data.get("determinations", {})
    return Determinations(path, tuple(_entry(n, s, path) for n, s in entries.items()))
