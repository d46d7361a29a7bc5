"""The fact registry: every fact a rule may read, with its type, units and source.

Declared once in ``georeview/facts/registry.toml``. A *source* says what a finding that
reads the fact rests on: ``measured`` (geometry, layers, DEM), ``declared`` (the
applicant), ``computed`` (from declared inputs and measures), ``village`` (the
Village's determination) or ``judged`` (the judge's own classification). Loading an
ordinance refuses a rule that reads an undeclared fact (:mod:`georeview.rules.load`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

from georeview.errors import ConfigError

__all__ = ["SOURCES", "Fact", "Registry", "registry"]

Source = Literal["measured", "declared", "computed", "village", "judged"]
#: Every source a fact may have, in the words a report shows.
SOURCES: dict[str, str] = {
    "measured": "measured from the layers or the DEM",
    "declared": "declared by the applicant",
    "computed": "computed from declared inputs",
    "village": "the Village's determination",
    "judged": "the ordinance's classification",
}
_TYPES = ("number", "integer", "bool", "text", "date", "list", "any")


@dataclass(frozen=True)
class Fact:
    """One declared fact."""

    name: str
    type: str
    source: Source
    description: str
    units: str | None = None
    #: Who supplies the fact when it is missing: ``applicant`` (their files and words, and
    #: what is computed from them) or ``village`` (its decisions, its reference layers and
    #: DEM); ``None`` for the judge's own classification (owed by whoever owes its facts).
    supplied_by: str | None = None


#: Who supplies a fact of each source, unless the registry says otherwise.
SUPPLIED_BY = {
    "declared": "applicant",
    "computed": "applicant",
    "village": "village",
    "measured": "village",
    "judged": None,
}


def _activity_fields() -> tuple[str, ...]:
    from georeview.config import Activity

    return tuple(Activity.model_fields)


def _site_map_features() -> tuple[str, ...]:
    from georeview.config import SITE_MAP_FEATURES

    return tuple(dict.fromkeys(SITE_MAP_FEATURES))


def _near_features() -> tuple[str, ...]:
    from georeview.facts.near_features import NEAR_FEATURES

    return NEAR_FEATURES


def _plan_items() -> tuple[str, ...]:
    from georeview.facts.plan import PLAN_ITEMS

    return PLAN_ITEMS


def _bmp_items() -> tuple[str, ...]:
    from georeview.facts.plan import BMP_ITEMS

    return BMP_ITEMS


def _document_items() -> tuple[str, ...]:
    from georeview.facts.plan import DOCUMENT_ITEMS

    return DOCUMENT_ITEMS


def _plan_keys() -> tuple[str, ...]:
    from georeview.facts.plan import Plan

    return tuple(Plan.model_fields)


def _storms() -> tuple[str, ...]:
    from typing import get_args

    from georeview.measure.engineering_inputs import StormKey

    return tuple(get_args(StormKey))


#: Named member lists of families: the schemas that declare them.
MEMBER_LISTS: dict[str, Callable[[], tuple[str, ...]]] = {
    "activity_fields": _activity_fields,
    "site_map_features": _site_map_features,
    "near_features": _near_features,
    "plan_items": _plan_items,
    "bmp_items": _bmp_items,
    "document_items": _document_items,
    "plan_keys": _plan_keys,
    "storms": _storms,
}


@dataclass(frozen=True)
class Registry:
    """Facts by name (families expanded)."""

    facts: dict[str, Fact]
    #: Fact-name prefix -> the sheet or document of a submission the fact belongs on
    #: (registry.toml ``[documents]``; the longest matching prefix wins).
    documents: dict[str, str] = field(default_factory=dict)

    def document(self, name: str) -> str | None:
        """Where in a submission fact ``name`` belongs, in an applicant's words, or ``None``."""
        hits = [p for p in self.documents if name.startswith(p)]
        return self.documents[max(hits, key=len)] if hits else None

    def knows(self, name: str) -> bool:
        """Whether ``name`` is a declared fact."""
        return name in self.facts

    def get(self, name: str) -> Fact | None:
        """The declared fact ``name``, or ``None``."""
        return self.facts.get(name)

    def supplied_by(self, name: str) -> str | None:
        """Who supplies fact ``name`` when it is missing (``None``: judged or undeclared)."""
        f = self.facts.get(name)
        return f.supplied_by if f else None

    def source(self, name: str) -> str | None:
        """The source of fact ``name`` (``None`` when undeclared)."""
        f = self.facts.get(name)
        return f.source if f else None


def _fact(name: str, spec: dict[str, Any], where: str) -> Fact:
    kind = spec.get("type", "any")
    source = spec.get("source")
    if kind not in _TYPES or source not in SOURCES or not spec.get("description"):
        raise ConfigError(
            f"fact {name!r} needs a type ({', '.join(_TYPES)}), a source "
            f"({', '.join(SOURCES)}) and a description",
            path="georeview/facts/registry.toml",
            field=where,
        )
    by = spec.get("supplied_by", SUPPLIED_BY[source])
    if by not in ("applicant", "village", None):
        raise ConfigError(
            f"fact {name!r}: supplied_by is applicant or village, not {by!r}",
            path="georeview/facts/registry.toml",
            field=where,
        )
    return Fact(name, kind, source, spec["description"], spec.get("units"), by)


@functools.cache
def registry() -> Registry:
    """Read ``registry.toml`` once and expand its families."""
    import tomllib

    text = resources.files("georeview.facts").joinpath("registry.toml").read_text("utf-8")
    data = tomllib.loads(text)
    facts = {n: _fact(n, s, f"facts.{n}") for n, s in data.get("facts", {}).items()}
    for k, fam in enumerate(data.get("families", [])):
        where = f"families[{k}]"
        src = fam.get("members_from")
        if src is not None and src not in MEMBER_LISTS:
            raise ConfigError(
                f"unknown member list {src!r}", path="georeview/facts/registry.toml", field=where
            )
        members = MEMBER_LISTS[src]() if src else tuple(fam.get("members", ()))
        for m in members:
            name = f"{fam['prefix']}{m}{fam.get('suffix', '')}"
            spec = {**fam, "description": fam["description"].format(member=m.replace("_", " "))}
            facts.setdefault(name, _fact(name, spec, where))
    documents = data.get("documents", {})
    if not all(isinstance(v, str) and v for v in documents.values()):
        raise ConfigError(
            "every [documents] entry names a sheet or document in words",
            path="georeview/facts/registry.toml",
            field="documents",
        )
    return Registry(facts, dict(documents))
