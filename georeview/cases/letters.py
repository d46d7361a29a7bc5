"""The Village's decision letters: a comment letter, an approval, a disapproval.

:func:`render_letter` turns a plain dict (built by the case service; nothing here imports
Django) into the letter's HTML, from the package template ``letter.html`` with autoescaping
on, so every text from a submission is escaped. :func:`write_pdf` prints that HTML to a
US Letter PDF with WeasyPrint; Chromium prints the same HTML with the same ``@page`` rules
(a browser's print of the letter paginates alike).

Everything municipal is data: ``georeview/ordinances/<m>/record.toml`` holds the
letterhead, the signer's title by category, the subject, opening and closing paragraphs of
each kind of letter in the ordinance's words with their citations, and the requirements,
term and security every permit carries. No section number is written here.

The context
-----------
::

    {"kind": "comment" | "approval" | "disapproval",
     "municipality": "somers",
     "category": "minor" | "major" | None,    # report.json classification.category
     "case": {"number": "SOM-2026-0001", "title": str, "applicant": str, "contact": str,
              "site_address": str, "parcel_id": str, "received_on": "2026-12-01"},
     "round": {"number": 2, "received_on": "2026-12-10"},
     "letter": {"number": 1, "date": "2026-12-11"},
     "decision": {"outcome": "returned" | "approved" | "approved_with_conditions"
                             | "disapproved",
                  "by": "A. Reviewer", "decided_on": "2026-12-11", "reason": str},
     "items": [{"sheet": "Sheet C-2" | None, "on": "On the site map." | None,
                "citation": str, "text": str, "source": "comment" | "owed" | "fail",
                "number": 3 | None}],               # a comment letter's open items
     "resolved": [{"number": 1, "text": str, "citation": str, "round": 2,
                   "resolution": "fixed"}],         # "Resolved since round 1"
     "conditions": [{"number": 2 | None, "text": str, "citation": str}],
     "reasons": [{"citation": str, "text": str}],  # a disapproval's written reasons
     "deadlines": [{"id": str, "name": str, "date": "YYYY-MM-DD" | None,
                    "citation": str, "rule": str}],   # georeview.calendar.deadlines
     "fees": [{"name": str, "amount_usd": float | None, "status": str,
               "citation": str, "note": str}],     # georeview.procedure.fees.money
     "payments": [{"kind": "fee" | "security", "amount_usd": 35.0,
                   "received_on": "YYYY-MM-DD"}],
     "signer": {"name": "A. Reviewer", "title": None}}  # None: record.toml's, by category

``kind``, ``municipality``, ``case.number``, ``letter.date`` and ``decision.outcome`` are
required (the outcome must be one of the kind's); every other key may be absent (empty).
Dates are ISO ``YYYY-MM-DD`` text (or :class:`datetime.date`) and are written out in the
letter ("December 11, 2026").

What each kind prints after the opening: a **comment letter** every open item with its
citation, grouped by sheet (items without a sheet under their ``on`` document, else
"General"; sheets in natural order, then documents, then General), each under its comment
number (items without one are lettered A, B, ... in the order given), and a "Resolved since
round N" section when ``resolved`` is not empty; an **approval** the conditions (each under
its number, else lettered, with its citation), the permit requirements of the category (an
approval on an unclassified activity is refused where they differ), the term with the expiry date
when known (the deadlines ``record.toml`` names in ``permit.term_deadlines``), the security
and the fees with their amounts and what was received; a **disapproval** the decision's
``reason`` and the written reasons with their citations. Every kind then prints the other
deadlines given, the closing, the signature block and "cc: file <case number>".
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from georeview.errors import ConfigError, DependencyError, InputError

__all__ = ["KINDS", "OUTCOMES", "render_letter", "signer_title", "write_pdf"]

#: The kinds of letter, each with the decisions it reports.
OUTCOMES: dict[str, tuple[str, ...]] = {
    "comment": ("returned",),
    "approval": ("approved", "approved_with_conditions"),
    "disapproval": ("disapproved",),
}
KINDS = tuple(OUTCOMES)

#: What a paragraph of record.toml is for when the activity has no category yet.
UNCLASSIFIED = "unclassified"

#: Section headings, by kind; ``[letters.<kind>.headings]`` of record.toml overrides them.
_HEADINGS: dict[str, dict[str, str]] = {
    "comment": {"items": "Comments", "resolved": "Resolved since round {n}"},
    "approval": {
        "resolved": "Resolved since round {n}",
        "conditions": "Conditions of approval",
        "requirements": "Permit requirements",
        "term": "Term of the permit",
        "security": "Security",
        "fees": "Fees",
    },
    "disapproval": {"reasons": "Reasons for disapproval"},
}
_DEADLINES_HEADING = "Dates"
#: The group of items that name neither a sheet nor a document.
_GENERAL = "General"
#: What an open item is, beside its number (a reviewer's comment needs no tag).
_SOURCE_WORDS = {"owed": "Information needed", "fail": "Correction needed"}
#: How a resolved comment was closed, in words (any other text is printed as given).
_RESOLUTION_WORDS = {"fixed": "addressed", "withdrawn": "withdrawn by the Village"}
#: A fee's status when it has no amount to print (georeview.procedure.fees statuses).
_STATUS_WORDS = {
    "due": "due",
    "waived": "waived",
    "needs_info": "to be determined",
    "provisional": "provisional, until the Village determines it",
    "see_schedule": "per the Village's fee schedule",
    "actual_cost": "actual cost, billed by the Village",
    "discretionary": "if the Village requires it",
    "if_appealed": "only if appealed",
    "range": "range",
}
#: The placeholders a record.toml ``text`` may use.
_FILLS = ("received_on", "round", "case_number", "decided_on", "letter_date")
_PLACEHOLDER = re.compile(r"\{(\w*)\}")
#: A sheet the applicant named with a word ("Sheet C-2", "Grading plan"), not a bare number.
_NAMED_SHEET = re.compile(r"[^\W\d_]{3,}\s")
#: Month names, not ``strftime("%B")``: the letter is English whatever the process locale.
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
)  # fmt: skip
#: Longest addressee printed in a continuation page's running header (characters).
_HEADER_CHARS = 60
#: Loggers WeasyPrint and fontTools fill with progress and subsetting notes.
_CHATTY = ("weasyprint", "weasyprint.progress", "fontTools")
#: One PDF at a time: the loggers' levels are process-wide (WeasyPrint holds the GIL anyway).
_PDF_LOCK = threading.Lock()


# --------------------------------------------------------------------------------- record


def _record(municipality: str) -> dict[str, Any]:
    """``record.toml`` of ``municipality``, its required keys checked.

    Raises
    ------
    georeview.errors.ConfigError
        Unknown municipality, no record.toml, or a required key missing (named).
    """
    from georeview.ordinances import folder, table

    rec = table(municipality, "record")
    where = folder(municipality) / "record.toml"
    needed = [
        ("case", "code"),
        ("village", "label"),
        ("signer", "default"),
        *[("letters", kind, "subject") for kind in KINDS],
    ]
    for keys in needed:
        node: Any = rec
        for key in keys:
            if not isinstance(node, Mapping) or key not in node:
                raise ConfigError("missing key", path=where, field=".".join(keys))
            node = node[key]
    return rec


def signer_title(municipality: str, category: str | None) -> str:
    """The title of the official who signs a letter on an activity of ``category``.

    ``[signer]`` of ``record.toml``: the category's key, else ``default``.

    Raises
    ------
    georeview.errors.ConfigError
        The municipality has no record.toml, or it is incomplete.
    """
    signer = _record(municipality)["signer"]
    return str(signer.get(category or "", signer["default"]))


# ------------------------------------------------------------------------------ small parts


def _date(value: Any, field: str) -> dt.date | None:
    """An ISO date (text or :class:`datetime.date`), None when absent."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise InputError(f"not a date (YYYY-MM-DD): {value!r}", field=field) from None


def _long_date(value: Any, field: str) -> str:
    """A date as a letter writes it: ``December 11, 2026`` ("" when absent)."""
    day = _date(value, field)
    return "" if day is None else f"{_MONTHS[day.month - 1]} {day.day}, {day.year}"


def _usd(amount: Any) -> str:
    """Dollars and cents: ``$1,234.50``."""
    return f"${float(amount):,.2f}"


def _one_line(text: Any, limit: int | None = None) -> str:
    """Text on one line (whitespace collapsed), cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(str(text or "").split())
    if limit is not None and len(flat) > limit:
        return flat[: limit - 1].rstrip() + "…"
    return flat


def _cite(text: Any) -> str:
    """A citation on one line, its "§" tied to the number by a no-break space."""
    return _one_line(text).replace("§ ", "§\u00a0")


def _letter_label(k: int) -> str:
    """The k-th letter label (0: A, 25: Z, 26: AA), for items without a comment number."""
    out = ""
    k += 1
    while k:
        k, rest = divmod(k - 1, 26)
        out = chr(ord("A") + rest) + out
    return out


def _natural(text: str) -> list[Any]:
    """Sort key putting ``Sheet C-2`` before ``Sheet C-10``."""
    return [int(p) if p.isdigit() else p.casefold() for p in re.split(r"(\d+)", text)]


def _sheet_heading(sheet: str) -> str:
    """A sheet as a group heading: ``C-2`` reads ``Sheet C-2``, a named sheet as it is."""
    return sheet if _NAMED_SHEET.match(sheet) else f"Sheet {sheet}"


def _heading_of(on: str) -> str:
    """A document's words (``on the site map.``) as a group heading: ``On the site map``."""
    words = _one_line(on).rstrip(".:;")
    return words[:1].upper() + words[1:]


# ------------------------------------------------------------------------------- paragraphs


def _applies(entry: Mapping[str, Any], category: str | None, outcome: str) -> bool:
    """Whether a record.toml paragraph is for this category and decision (module doc)."""
    cats = entry.get("categories") or ()
    outcomes = entry.get("outcomes") or ()
    return (not cats or (category or UNCLASSIFIED) in cats) and (
        not outcomes or outcome in outcomes
    )


def _fill(text: str, fills: Mapping[str, str], field: str) -> str:
    """Put the letter's values in ``{name}`` placeholders (only :data:`_FILLS` exist).

    Raises
    ------
    georeview.errors.ConfigError
        A placeholder the letters do not fill (its name and the known ones said).
    """

    def one(m: re.Match[str]) -> str:
        if m.group(1) not in fills:
            raise ConfigError(
                f"unknown placeholder {m.group(0)}; known: "
                + ", ".join("{" + k + "}" for k in _FILLS),
                field=field,
            )
        return fills[m.group(1)]

    return _PLACEHOLDER.sub(one, text)


def _segment(entry: Mapping[str, Any], fills: Mapping[str, str], field: str) -> dict[str, str]:
    """One paragraph part: the Village's words, the ordinance's quoted, the citation."""
    return {
        "text": _fill(_one_line(entry.get("text")), fills, field),
        "quote": _one_line(entry.get("quote")),
        "cite": _cite(entry.get("citation")),
    }


def _punctuate(parts: list[dict[str, str]]) -> list[dict[str, str]]:
    """Spaces between a paragraph's parts and the full stop a quoted phrase leaves open.

    ``sep`` goes before a part: none before one that starts with punctuation (``, and``).
    ``end`` closes a part whose quote is a phrase, not a sentence, unless the next part
    carries the sentence on (starts in lower case or with punctuation); a cited text of
    the Village's own takes its full stop after the citation.
    """
    out = []
    for k, part in enumerate(parts):
        nxt = parts[k + 1] if k + 1 < len(parts) else None
        lead = (nxt["text"] or nxt["quote"])[:1] if nxt else ""
        goes_on = bool(lead) and not lead.isupper()
        text, end = part["text"], ""
        if part["quote"]:
            if part["quote"][-1] not in ".:;?!" and not goes_on:
                end = "."
        elif part["cite"] and text.endswith("."):
            text, end = text[:-1], "."
        first = (part["text"] or part["quote"])[:1]
        sep = "" if k == 0 or first in ",;:.)" else " "
        out.append({**part, "text": text, "end": end, "sep": sep})
    return out


def _paragraphs(
    entries: Sequence[Mapping[str, Any]],
    *,
    category: str | None,
    outcome: str,
    fills: Mapping[str, str],
    field: str,
) -> list[list[dict[str, str]]]:
    """The paragraphs of ``entries`` that apply, each a list of parts (``with_previous``)."""
    out: list[list[dict[str, str]]] = []
    for k, entry in enumerate(entries):
        if not _applies(entry, category, outcome):
            continue
        part = _segment(entry, fills, f"{field}[{k}]")
        if entry.get("with_previous") and out:
            out[-1].append(part)
        else:
            out.append([part])
    return [_punctuate(parts) for parts in out]


# -------------------------------------------------------------------------------- sections


def _labels(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each row's label: its case number, else a letter (A, B, ...) in the order given.

    Letters, not numbers, for the unnumbered: a comment or condition keeps the number the
    case gave it in every letter, and a letter's own count must not collide with one.
    """
    letters = iter(range(len(rows)))
    return [
        str(r["number"]) if r.get("number") is not None else _letter_label(next(letters))
        for r in rows
    ]


def _groups(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Open items grouped by sheet, then by document, then "General" (module docstring)."""
    sheets: dict[str, list[dict[str, Any]]] = {}
    documents: dict[str, list[dict[str, Any]]] = {}
    general: list[dict[str, Any]] = []
    for item, label in zip(items, _labels(items), strict=True):
        row = {
            "label": label,
            "text": str(item.get("text") or ""),
            "cite": _cite(item.get("citation")),
            "tag": _SOURCE_WORDS.get(str(item.get("source") or ""), ""),
        }
        sheet, on = _one_line(item.get("sheet")), _one_line(item.get("on"))
        if sheet:
            sheets.setdefault(_sheet_heading(sheet), []).append(row)
        elif on:
            documents.setdefault(_heading_of(on), []).append(row)
        else:
            general.append(row)
    out = [{"heading": s, "items": sheets[s]} for s in sorted(sheets, key=_natural)]
    out += [{"heading": d, "items": rows} for d, rows in documents.items()]
    if general:
        out.append({"heading": _GENERAL, "items": general})
    return out


def _resolved(
    resolved: Sequence[Mapping[str, Any]], this_round: int | None
) -> tuple[int | None, list[dict[str, str]]]:
    """The round "resolved since" and the resolved comments, each with how it closed."""
    rounds = [int(r["round"]) for r in resolved if r.get("round") is not None]
    since = min(rounds) - 1 if rounds else (this_round - 1 if this_round else None)
    rows = []
    for r in resolved:
        how = str(r.get("resolution") or "")
        words = _RESOLUTION_WORDS.get(how, how)
        when = f"round {r['round']}" if r.get("round") is not None else ""
        rows.append(
            {
                "label": "" if r.get("number") is None else str(r["number"]),
                "text": str(r.get("text") or ""),
                "cite": _cite(r.get("citation")),
                "how": ", ".join(p for p in (words, when) if p),
            }
        )
    return since, rows


def _conditions(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Conditions of approval, each under its case number (else lettered, as the items)."""
    return [
        {"label": label, "text": str(r.get("text") or ""), "cite": _cite(r.get("citation"))}
        for r, label in zip(rows, _labels(rows), strict=True)
    ]


def _reasons(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """A disapproval's written reasons, numbered in the order given."""
    return [
        {"label": str(k), "text": str(r.get("text") or ""), "cite": _cite(r.get("citation"))}
        for k, r in enumerate(rows, start=1)
    ]


def _reason(decision: Mapping[str, Any], reasons: Sequence[Mapping[str, Any]]) -> str:
    """The decision's own written reason, unless the reasons listed already say it."""
    reason = str(decision.get("reason") or "").strip()
    said = {_one_line(r.get("text")) for r in reasons}
    return "" if _one_line(reason) in said else reason


def _deadline_row(d: Mapping[str, Any], k: int) -> dict[str, str]:
    return {
        "name": str(d.get("name") or ""),
        "date": _long_date(d.get("date"), f"deadlines[{k}].date") or "not yet known",
        "cite": _cite(d.get("citation")),
    }


def _deadlines(
    deadlines: Sequence[Mapping[str, Any]], term_ids: Sequence[str]
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The term's deadlines (by id) and the others, as rows to print."""
    term: list[dict[str, str]] = []
    other: list[dict[str, str]] = []
    for k, d in enumerate(deadlines):
        (term if d.get("id") in term_ids else other).append(_deadline_row(d, k))
    return term, other


def _fees(fees: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Fee rows: name, amount (or what stands for it), status, citation, note."""
    rows = []
    for f in fees:
        status = str(f.get("status") or "")
        amount = f.get("amount_usd")
        if status == "needs_info" and amount is not None:
            # an amount on the applicant's figure, until the Village's own is recorded
            status = "provisional"
        rows.append(
            {
                "name": str(f.get("name") or ""),
                "amount": _usd(amount) if amount is not None else "",
                "status": _STATUS_WORDS.get(status, status.replace("_", " ")),
                "cite": _cite(f.get("citation")),
                "note": str(f.get("note") or ""),
            }
        )
    return rows


def _received(payments: Sequence[Mapping[str, Any]], kind: str) -> dict[str, Any]:
    """What was received of one kind: each payment and the total."""
    rows = [
        {"amount": _usd(p.get("amount_usd") or 0), "on": _long_date(p.get("received_on"), "")}
        for p in payments
        if p.get("kind") == kind
    ]
    total = sum(float(p.get("amount_usd") or 0) for p in payments if p.get("kind") == kind)
    return {"rows": rows, "total": _usd(total) if len(rows) > 1 else ""}


# ----------------------------------------------------------------------------------- view


def _addressee(case: Mapping[str, Any]) -> list[str]:
    """The addressee's lines: the applicant, then the contact's lines as given."""
    lines = [str(case.get("applicant") or ""), *str(case.get("contact") or "").splitlines()]
    return [line for line in (_one_line(x) for x in lines) if line]


def _check(context: Mapping[str, Any]) -> tuple[str, str, str | None]:
    """The kind, outcome and category, checked against one another.

    Raises
    ------
    georeview.errors.InputError
        An unknown kind or category, or an outcome another kind of letter reports.
    """
    kind = context.get("kind")
    if kind not in OUTCOMES:
        raise InputError(
            f"letter kind must be one of {', '.join(KINDS)}, got {kind!r}", field="kind"
        )
    outcome = (context.get("decision") or {}).get("outcome")
    if outcome not in OUTCOMES[kind]:
        raise InputError(
            f"a {kind} letter reports {' or '.join(OUTCOMES[kind])}, not {outcome!r}",
            field="decision.outcome",
        )
    category = context.get("category")
    if category not in (None, "major", "minor"):
        raise InputError(
            f"category must be major, minor or None, got {category!r}", field="category"
        )
    if not (context.get("case") or {}).get("number"):
        raise InputError("the case has no number", field="case.number")
    return str(kind), str(outcome), category


def _permit(
    rec: Mapping[str, Any], category: str | None, outcome: str, fills: Mapping[str, str]
) -> dict[str, Any]:
    """An approval's permit: the requirements of the category, the term, the security."""
    permit = rec.get("permit", {})
    requirements = [
        {"cite": _cite(r.get("citation")), "text": _one_line(r.get("quote"))}
        for r in permit.get("requirements", ())
        if _applies(r, category, outcome)
    ]
    if permit.get("requirements") and not requirements:
        raise InputError(
            "an approval needs the activity's category (major or minor): the permit "
            "requirements differ by category",
            field="category",
        )

    def paras(key: str) -> list[list[dict[str, str]]]:
        return _paragraphs(
            permit.get(key, ()), category=category, outcome=outcome, fills=fills,
            field=f"permit.{key}",
        )  # fmt: skip

    return {
        "intro": paras("intro"),
        "requirements": requirements,
        "term": paras("term"),
        "security": paras("security"),
        "term_ids": tuple(permit.get("term_deadlines", ())),
    }


def _view(context: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the template prints, as text (escaped by the template, not here)."""
    kind, outcome, category = _check(context)
    municipality = str(context.get("municipality") or "")
    rec = _record(municipality)
    case = dict(context.get("case") or {})
    rnd = dict(context.get("round") or {})
    letter = dict(context.get("letter") or {})
    decision = dict(context.get("decision") or {})
    signer = dict(context.get("signer") or {})
    spec = rec["letters"][kind]
    date = _long_date(letter.get("date"), "letter.date")
    if not date:
        raise InputError("the letter has no date", field="letter.date")
    fills = {
        "received_on": _long_date(rnd.get("received_on"), "round.received_on")
        or _long_date(case.get("received_on"), "case.received_on"),
        "round": str(rnd.get("number") or ""),
        "case_number": _one_line(case["number"]),
        "decided_on": _long_date(decision.get("decided_on"), "decision.decided_on"),
        "letter_date": date,
    }

    def paras(key: str) -> list[list[dict[str, str]]]:
        return _paragraphs(
            spec.get(key, ()), category=category, outcome=outcome, fills=fills,
            field=f"letters.{kind}.{key}",
        )  # fmt: skip

    permit = _permit(rec, category, outcome, fills) if kind == "approval" else None
    term, deadlines = _deadlines(
        context.get("deadlines") or (), permit["term_ids"] if permit else ()
    )
    since, resolved = _resolved(context.get("resolved") or (), rnd.get("number"))
    headings = {**_HEADINGS[kind], **spec.get("headings", {})}
    if "resolved" in headings:
        headings["resolved"] = headings["resolved"].format(n=since if since else "")
    village = rec["village"]
    applicant = _one_line(case.get("applicant"))
    return {
        "kind": kind,
        "outcome": outcome,
        "village": {
            "label": _one_line(village["label"]),
            "address": [_one_line(a) for a in village.get("address", ())],
            "office": _one_line(village.get("office")),
        },
        "case": {k: str(v or "") for k, v in case.items()},
        "addressee": _addressee(case),
        "case_number": fills["case_number"],
        "round": fills["round"],
        "received_on": fills["received_on"],
        "case_received_on": _long_date(case.get("received_on"), "case.received_on"),
        "letter_number": str(letter.get("number") or ""),
        "date": date,
        "subject": _one_line(spec.get("subject_by_outcome", {}).get(outcome, spec["subject"])),
        "opening": paras("opening"),
        "closing": paras("closing"),
        "headings": headings,
        "deadlines_heading": _DEADLINES_HEADING,
        "groups": _groups(context.get("items") or ()) if kind == "comment" else [],
        # an approval says how the earlier rounds' comments were closed, as a return does
        "resolved": resolved if kind in ("comment", "approval") else [],
        "conditions": _conditions(context.get("conditions") or ()) if permit else [],
        "permit": permit,
        "term": term,
        "fees": _fees(context.get("fees") or ()) if permit else [],
        "fees_received": _received(context.get("payments") or (), "fee"),
        "security_received": _received(context.get("payments") or (), "security"),
        "reason": _reason(decision, context.get("reasons") or ()) if kind == "disapproval" else "",
        "reasons": _reasons(context.get("reasons") or ()) if kind == "disapproval" else [],
        "deadlines": deadlines,
        "signer": {
            "name": _one_line(signer.get("name") or decision.get("by")),
            "title": _one_line(signer.get("title") or signer_title(municipality, category)),
        },
        "header_to": _one_line(applicant, _HEADER_CHARS),
    }


def render_letter(context: Mapping[str, Any]) -> str:
    """The letter's HTML (a whole page, print CSS included) from the case's context.

    Parameters
    ----------
    context : mapping
        The letter's context, as the module docstring lays it out.

    Returns
    -------
    str
        The HTML; every text of the context is escaped (in the page and in the print
        CSS's running headers).

    Raises
    ------
    georeview.errors.InputError
        A kind, outcome or category that do not fit together, a missing case number or
        letter date, a date that is not ``YYYY-MM-DD``, an approval without a category
        where the permit requirements differ by category.
    georeview.errors.ConfigError
        The municipality's record.toml is missing, incomplete, or uses an unknown
        placeholder.
    """
    from georeview.report import template_env

    return template_env().get_template("letter.html").render(**_view(context))


# ------------------------------------------------------------------------------------- PDF


@contextmanager
def _quiet_loggers() -> Iterator[None]:
    """WeasyPrint's and fontTools' loggers at WARNING for the block, then as they were."""
    loggers = [logging.getLogger(name) for name in _CHATTY]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(max(lg.getEffectiveLevel(), logging.WARNING))
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _refusing_fetcher(weasyprint: Any) -> Any:
    """A WeasyPrint URL fetcher that refuses every URL: the letter embeds nothing."""

    class Refuse(weasyprint.URLFetcher):
        def fetch(self, url: str, headers: Any = None) -> Any:
            raise ValueError(f"refused: a letter fetches nothing ({url[:80]})")

    return Refuse()


def write_pdf(html: str, path: Path) -> int:
    """Print the letter's HTML to a US Letter PDF at ``path``; return its page count.

    The page size and margins are the template's ``@page`` rules. Nothing is fetched: every
    URL (an image, a stylesheet, a font) is refused. The file is written whole or not at
    all (:func:`georeview.report.files.atomic_path`).

    Parameters
    ----------
    html : str
        :func:`render_letter`'s output.
    path : Path
        The PDF to write (replaced if it exists).

    Raises
    ------
    georeview.errors.DependencyError
        WeasyPrint is not installed (the ``workspace`` extra installs it).
    georeview.errors.OutputError
        The file cannot be written.
    """
    try:
        import weasyprint
    except ImportError:
        raise DependencyError(
            'writing a PDF letter needs WeasyPrint: pip install "georeview[workspace]"',
            field="pdf",
        ) from None
    from georeview.report.files import atomic_path

    with _PDF_LOCK, _quiet_loggers():
        document = weasyprint.HTML(
            string=html, base_url=None, url_fetcher=_refusing_fetcher(weasyprint)
        ).render()
        with atomic_path(Path(path)) as tmp:
            document.write_pdf(tmp)
    return len(document.pages)
