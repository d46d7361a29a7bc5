"""Traceability: every paragraph of an adopted ordinance text, mapped to the rules that check it.

The ordinance text shipped in ``georeview/ordinances/<municipality>/ordinance.txt`` is the source
of truth for which paragraphs exist. :func:`paragraphs` parses it into paragraph ids written the
way the rules cite them (``17.08(C)(3)(d)``, ``31.06(3)(C)1.a``). How to find the sections and how
the labels nest is data in ``georeview/ordinances/<municipality>/coverage.toml``:

``[text]``
    ``file`` (the text, beside coverage.toml), ``levels`` (the label styles from the outermost
    subdivision inwards: ``paren_upper`` "(A)", ``paren_digit`` "(1)", ``paren_lower`` "(a)",
    ``dot_digit`` "1.", ``dot_lower`` "a."), and either ``heading`` (a regular expression whose
    group 1 is the section number, for a text with section headings) or ``[[text.sections]]``
    (``id``, ``first_line``, ``last_line``: a line map, for a text that lost its headings).
``[[paragraph]]``
    One entry per paragraph: ``id``; ``rules`` (rule ids) with ``check = "checked"`` or
    ``"partly"``; or a ``reason`` from :data:`REASONS` when software does not check it; optional
    ``deadlines`` (ids in ``georeview/data/calendar.toml``), ``money`` (ids in
    ``georeview/data/money.toml``) and a short ``note``.

:func:`check` lists every inconsistency (a paragraph unmapped or mapped twice, a mapped paragraph
or rule id that does not exist, a rule citing a paragraph the text does not have); the test suite
and ``georeview rules <m> --coverage`` use it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from georeview.config import StrictModel, parse_model, read_toml
from georeview.errors import ConfigError, DataSourceError

__all__ = [
    "REASONS",
    "Coverage",
    "CoverageProblem",
    "Paragraph",
    "check",
    "cited_paragraphs",
    "counts",
    "load_coverage",
    "paragraphs",
    "problems",
    "report_lines",
]

#: Why software does not check a paragraph (the fixed vocabulary of ``reason``).
REASONS: dict[str, str] = {
    "definition": "a definition (used by the rules that read the defined term)",
    "purpose": "purpose, findings or policy",
    "authority": "authority, administration, severability, interpretation or effect",
    "enforcement": "enforcement by the Village after a violation",
    "village_discretion": "a decision left to the Village (engineer, board, administrator)",
    "during_construction": "a duty of the permit holder during construction (inspection check)",
    "procedure_info": "a procedure or time limit of the Village or an appeal body",
    "heading": "a heading or lead-in whose content is in its subdivisions",
    "not_applicable": "cannot apply to a submission reviewed here (e.g. activity by the Village)",
}

Reason = Literal[
    "definition",
    "purpose",
    "authority",
    "enforcement",
    "village_discretion",
    "during_construction",
    "procedure_info",
    "heading",
    "not_applicable",
]

#: Label styles: the regular expression of a label at the start of a line, and how the
#: label is written in a paragraph id (``{}`` is the label's text).
_STYLES: dict[str, tuple[str, str]] = {
    "paren_upper": (r"\(([A-Z]{1,2})\)", "({})"),
    "paren_digit": (r"\((\d{1,2})\)", "({})"),
    "paren_lower": (r"\(([a-z])\)", "({})"),
    "dot_digit": (r"(\d{1,2})\.(?=\s)", "{}"),
    "dot_lower": (r"([a-z])\.(?=\s)", ".{}"),
}


class Section(StrictModel):
    """A section of a text without headings, by its line range (1-based, inclusive)."""

    id: str
    first_line: int
    last_line: int


class TextSpec(StrictModel):
    """How to read the ordinance text."""

    file: str
    levels: tuple[
        Literal["paren_upper", "paren_digit", "paren_lower", "dot_digit", "dot_lower"], ...
    ] = Field(strict=False)
    heading: str | None = None
    sections: tuple[Section, ...] = Field(default=(), strict=False)


class Paragraph(StrictModel):
    """One entry of the map."""

    id: str
    rules: tuple[str, ...] = Field(default=(), strict=False)
    check: Literal["checked", "partly"] | None = None
    reason: Reason | None = None
    deadlines: tuple[str, ...] = Field(default=(), strict=False)
    money: tuple[str, ...] = Field(default=(), strict=False)
    note: str = ""


class Coverage(StrictModel):
    """A municipality's ``coverage.toml``."""

    municipality: str
    text: TextSpec
    paragraph: tuple[Paragraph, ...] = Field(strict=False)


@dataclass(frozen=True)
class TextParagraph:
    """A paragraph found in the text: its id and its first line (1-based)."""

    id: str
    line: int


def _file(municipality: str, name: str) -> Path:
    """A file of the municipality's folder (:func:`georeview.ordinances.folder`)."""
    from georeview.ordinances import folder

    return folder(municipality) / name


def load_coverage(municipality: str) -> Coverage:
    """Read and validate ``<folder of municipality>/coverage.toml``."""
    return _load_coverage(_file(municipality, "coverage.toml"), municipality)


@cache
def _load_coverage(path: Path, municipality: str) -> Coverage:
    """Cached by file: two folders of one name on two search paths are two maps."""
    if not path.is_file():
        raise ConfigError(
            f"no coverage map for municipality {municipality!r}", path=path, field="municipality"
        )
    cov: Coverage = parse_model(Coverage, read_toml(path), path)
    if cov.municipality != municipality:
        raise ConfigError(f"map is for {cov.municipality!r}", path=path, field="municipality")
    return cov


def paragraphs(municipality: str) -> tuple[TextParagraph, ...]:
    """Every paragraph id of the adopted text, in text order.

    Each section is a paragraph, and so is each labelled subdivision at every depth: a
    subdivision's id is its parent's id plus its label (``17.08(C)`` + ``(3)`` + ``(d)``).
    """
    spec = load_coverage(municipality).text
    path = _file(municipality, spec.file)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataSourceError(
            "the ordinance text named in coverage.toml [text] file is not found", path=path
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataSourceError(f"cannot read the ordinance text ({exc})", path=path) from None
    return parse_text(lines, spec)


def parse_text(lines: list[str], spec: TextSpec) -> tuple[TextParagraph, ...]:
    """Parse text lines into paragraph ids (see :func:`paragraphs`)."""
    styles = [(re.compile(r"^\s*" + _STYLES[s][0]), _STYLES[s][1]) for s in spec.levels]
    heading = re.compile(spec.heading) if spec.heading else None
    by_line = {n: s.id for s in spec.sections for n in range(s.first_line, s.last_line + 1)}
    out: list[TextParagraph] = []
    section: str | None = None
    path: list[str] = []
    for number, line in enumerate(lines, start=1):
        new_section = None
        if heading is not None:
            m = heading.match(line)
            new_section = m.group(1) if m else None
        elif by_line.get(number) != section:
            new_section = by_line.get(number)
            if new_section is None:
                raise ConfigError(f"line {number} of the ordinance text is in no section")
        if new_section is not None:
            section, path = new_section, []
            out.append(TextParagraph(section, number))
            if heading is not None:
                continue
        if section is None:
            continue
        for depth, (pattern, fmt) in enumerate(styles):
            m = pattern.match(line)
            if m:
                path = [*path[:depth], fmt.format(m.group(1))]
                # A label deeper than the current depth + 1 would skip a level: the
                # text has no such nesting, so a jump means a mis-declared style.
                if len(path) < depth + 1:
                    raise ConfigError(f"line {number}: label {m.group(0)!r} skips a level")
                out.append(TextParagraph(section + "".join(path), number))
                break
    ids = [p.id for p in out]
    dupes = [i for i, n in Counter(ids).items() if n > 1]
    if dupes:
        raise ConfigError(f"paragraph ids parsed twice: {', '.join(dupes)}")
    return tuple(out)


_CITE = re.compile(r"§\s*([0-9]+\.[0-9]+)((?:\([A-Za-z0-9]+\)|\d+|\.[a-z])*)")
_PART = re.compile(r"\([A-Za-z0-9]+\)|\.[a-z]|\d+")
_MORE = re.compile(r"^\s*(,|-)\s*((?:\([A-Za-z0-9]+\)|\d+|\.[a-z])+)")


def cited_paragraphs(citation: str, chapter: str) -> list[str]:
    """Paragraph ids a rule's citation names, for sections of ``chapter`` (``17``, ``31``).

    ``§ 17.09(C)(1), (4)`` names 17.09(C)(1) and 17.09(C)(4); ``§ 17.10(B)(1)-(2)`` names
    both ends of the range. Citations of other law (Wis. Stat. § 66.0105) are left out.
    """
    out: list[str] = []
    for m in _CITE.finditer(citation):
        section, rest = m.group(1), m.group(2)
        if section.split(".")[0] != chapter:
            continue
        parts = _PART.findall(rest)
        out.append(section + "".join(parts))
        tail = citation[m.end() :]
        while (more := _MORE.match(tail)) is not None:
            extra = _PART.findall(more.group(2))
            # A sibling replaces the same number of trailing components it spells.
            base = parts[: max(0, len(parts) - len(extra))]
            out.append(section + "".join(base + extra))
            tail = tail[more.end() :]
    return out


#: A bare section number in a data citation ("Somers 17.09(B), 17.11"), not after "§ ".
_BARE = re.compile(r"(?<!§ )(?<![\d.])(\d+\.\d+)(?=[\s(,]|$)")


def _data_entries(municipality: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Id and citation of every deadline and money item of the municipality, any category.

    Read through :func:`georeview.calendar.deadlines` and :func:`georeview.procedure.fees.money`
    (which list every category's entries when the category is None), wherever their data lives.
    """
    import datetime as dt

    from georeview.calendar import deadlines
    from georeview.procedure.fees import money

    # Any date serves: only the ids and citations are read, not the dates.
    listed = deadlines(municipality, application_date=dt.date(2000, 1, 3), category=None)
    items = money(municipality, category=None).items
    return (
        [{"id": d.id, "citation": d.citation} for d in listed],
        [{"id": i.id, "citation": i.citation} for i in items],
    )


@dataclass(frozen=True)
class CoverageProblem:
    """One inconsistency: the file and key it is in, and the line :func:`check` prints."""

    file: str
    key: str
    message: str
    text: str


def check(municipality: str) -> list[str]:
    """Every inconsistency of a municipality's coverage map (empty when consistent).

    Checks: each paragraph of the text is mapped exactly once; each mapped paragraph exists;
    an entry has rules with ``check``, or a ``reason``; each mapped rule, deadline and money
    id exists; each citation of a rule, a deadline or a money item names paragraphs that exist.
    """
    return [p.text for p in problems(municipality)]


def problems(municipality: str, ordinance: Any = None) -> list[CoverageProblem]:
    """:func:`check`'s inconsistencies with the file and key of each.

    ``ordinance`` (default: loaded) may be one with problems of its own
    (:func:`georeview.rules.load.folder_problems`): its rules that loaded are checked.
    A paragraph's file is ``coverage.toml``; a citation's, ``rules`` (the file of that
    rule), ``ordinance.toml`` (the reach), ``calendar.toml`` or ``money.toml``.
    """
    if ordinance is None:
        from georeview.rules import load_ordinance

        ordinance = load_ordinance(municipality)
    text_ids = [p.id for p in paragraphs(municipality)]
    deadline_items, money_items = _data_entries(municipality)
    rule_ids = {r.id for r in ordinance.rules} | {f"{municipality}.reach"}
    known_ids = {
        "rule": rule_ids,
        "deadline": {d["id"] for d in deadline_items},
        "money item": {i["id"] for i in money_items},
    }
    out = _paragraph_problems(load_coverage(municipality), text_ids, known_ids)
    cites = [
        (f"rule {r.id}", "rules", f"rules.{r.id}.citation", r.citation) for r in ordinance.rules
    ]
    reach = (f"rule {municipality}.reach", "ordinance.toml", "reach")
    cites.append((*reach, ordinance.reach.citation_village))
    cites.append((*reach, ordinance.reach.citation_extraterritorial))
    # Deadlines and money items cite as "Somers 17.09(E)(1)": the same check, once each
    # bare section number reads as a citation.
    cites += [
        (
            f"{what} {d['id']}",
            file,
            f"{table}.{d['id']}.citation",
            _BARE.sub(r"§ \1", d["citation"]),
        )
        for what, file, table, items in (
            ("deadline", "calendar.toml", "deadlines", deadline_items),
            ("money item", "money.toml", "items", money_items),
        )
        for d in items
    ]
    chapter = text_ids[0].split(".")[0]
    known = set(text_ids)
    for label, file, key, citation in cites:
        for pid in cited_paragraphs(citation, chapter):
            if pid not in known:
                message = f"cites {pid}, not a paragraph of the text"
                out.append(CoverageProblem(file, key, message, f"{label} {message}"))
    return out


def _paragraph_problems(
    cov: Coverage, text_ids: list[str], known_ids: dict[str, set[str]]
) -> list[CoverageProblem]:
    """The map's own inconsistencies (see :func:`check`)."""
    out: list[CoverageProblem] = []

    def para(pid: str, message: str) -> None:
        out.append(
            CoverageProblem("coverage.toml", f"paragraph {pid}", message, f"{pid}: {message}")
        )

    mapped = Counter(p.id for p in cov.paragraph)
    for pid in text_ids:
        if pid not in mapped:
            para(pid, "paragraph of the text not in the map")
    for pid, n in mapped.items():
        if pid not in set(text_ids):
            para(pid, "mapped but not a paragraph of the text")
        if n > 1:
            para(pid, f"mapped {n} times")
    for p in cov.paragraph:
        for message in _entry_problems(p, known_ids):
            para(p.id, message)
    return out


def _entry_problems(p: Paragraph, known_ids: dict[str, set[str]]) -> list[str]:
    """What is wrong with one entry of the map."""
    out = []
    if p.rules and p.check is None:
        out.append("rules given without check = checked or partly")
    if p.check is not None and not p.rules:
        out.append(f"check = {p.check} but no rules")
    if not p.rules and p.reason is None:
        out.append("neither rules nor a reason")
    if p.check == "checked" and p.reason is not None:
        out.append("checked but also given a reason")
    for what, ids in (("rule", p.rules), ("deadline", p.deadlines), ("money item", p.money)):
        out += [f"no {what} {x!r}" for x in ids if x not in known_ids[what]]
    return out


def counts(municipality: str) -> dict[str, int]:
    """Paragraphs in total, checked, partly, and not checkable by reason."""
    cov = load_coverage(municipality)
    out = {"total": len(cov.paragraph), "checked": 0, "partly": 0}
    out.update(dict.fromkeys(REASONS, 0))
    for p in cov.paragraph:
        key = p.check or p.reason or ""
        out[key] = out.get(key, 0) + 1
    return out


def report_lines(municipality: str) -> list[str]:
    """The map as printable lines: one per paragraph, then the counts."""
    cov = load_coverage(municipality)
    lines = []
    for p in cov.paragraph:
        status = p.check or p.reason or "?"
        refs = ", ".join([*p.rules, *(f"deadline:{d}" for d in p.deadlines)])
        refs = ", ".join(filter(None, [refs, *(f"money:{m}" for m in p.money)]))
        extra = f" ({p.reason})" if p.check == "partly" and p.reason else ""
        said = " - ".join(filter(None, [refs, p.note]))
        lines.append(f"{p.id:<22} {status + extra:<32} {said}".rstrip())
    c = counts(municipality)
    lines.append("")
    lines.append(
        f"{c['total']} paragraphs: {c['checked']} checked, {c['partly']} partly, "
        f"{c['total'] - c['checked'] - c['partly']} not checkable by software"
    )
    lines += [f"  {k}: {c[k]}" for k in REASONS if c[k]]
    return lines
