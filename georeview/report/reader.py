"""What a reviewer reads: plain wording, evidence and caveats derived from the report dict.

report.json keeps rule ids, fact names and JSON paths (they are what a program
or a developer follows); the pages a reviewer reads must not. This module turns
one report dict into the view the HTML template renders: every finding gets a
reviewer's status (a compliance result, or a determination such as "applies" or
"exempt"), its evidence in words, its message with the technical parts moved to
a separate list, the caveats that weaken it and, when it needs information, what
is missing and how to supply it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from georeview.report.decimals import display_decimals, raster_area_text
from georeview.report.rule_reads import rule_facts

#: Rule kinds whose findings are determinations (what applies), not compliance results.
DETERMINATION_KINDS = frozenset({"reach", "exemption", "trigger", "classify", "info"})
#: Statuses a compliance result can have, worst first.
COMPLIANCE_ORDER = ("fail", "needs_info", "pass")
COMPLIANCE_LABEL = {"fail": "Fails", "needs_info": "Needs information", "pass": "Passes"}
#: Evidence source (the fact registry's ``source``) → words and a one-letter marker.
EVIDENCE_WORDS = {
    "measured": ("measured from the maps", "M"),
    "declared": ("declared by the applicant", "D"),
    "computed": ("computed from the inputs", "C"),
    "village": ("Village's decision", "V"),
    "village_none": ("no decision of the Village on file", "V?"),
    "judged": ("follows from the classification", "J"),
    "ordinance": ("set by the ordinance", "O"),
}
#: Who owes an open finding (report.json ``summary.owes``), as the page says it.
OWNER_WORDS = {"applicant": "The applicant supplies it.", "village": "The Village decides it."}
#: Sentinels reference layers use for "no value" (FEMA NFHL writes -9999).
NODATA = (-9999.0, -9998.0, -8888.0)
NOT_GIVEN = "not given"

# Technical tokens: dotted snake-case names (hydrology.rainfall_in), TOML tables and
# arrays ([hydrology], = [...]), rule ids (deerfield.sitemap.adjacent), file names.
_DOTTED = re.compile(r"\b[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+\b")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")
_TECH = re.compile(
    r"\brule\s+[a-z]|\{|\}|\w\s*=\s*[\[{\"']|\[[a-z_]+\]|\.\./|\w/\w+\.\w+|\.(?:toml|json|geojson|gpkg|shp|txt)\b"
)
_SUBPARA = re.compile(r"\([A-Za-z0-9]{1,4}\)")
_SEE_PATH = re.compile(r"\(?\s*see\s+[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+[^)]*\)?", re.IGNORECASE)


def _technical(fragment: str) -> bool:
    return bool(_DOTTED.search(fragment) or _SNAKE.search(fragment) or _TECH.search(fragment))


def _groups(text: str) -> list[tuple[int, int]]:
    """Spans of the outermost parenthesised groups of ``text``."""
    spans, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    return spans


def plain(text: str | None) -> tuple[str, list[str]]:
    """Split a message into reviewer prose and the technical details taken out of it.

    Parenthesised groups that name keys, rule ids, TOML syntax or files are
    removed (kept in the second value); "see engineering.x" pointers likewise.
    A citation in brackets (with sub-paragraph groups such as "(C)(2)") is prose and stays.

    Examples
    --------
    >>> plain("The plan gives it (plan.maintenance).")
    ('The plan gives it.', ['plan.maintenance'])
    >>> plain("The peak is unknown: see engineering.peak_flow_reasons.")[0]
    'The peak is unknown.'
    """
    if not text:
        return "", []
    tech: list[str] = []
    out, last = [], 0
    for a, b in _groups(text):
        inner = text[a + 1 : b - 1]
        # A citation in brackets ("... explanation (17.08(C)(2)(c))") is prose: it has
        # sub-paragraph groups like "(C)", which no key or file name has.
        if _technical(inner) and not _SUBPARA.search(inner):
            out.append(text[last:a])
            tech.append(inner.strip())
            last = b
    out.append(text[last:])
    prose = "".join(out)

    def see(m: re.Match[str]) -> str:
        tech.append(m.group(0).strip(" ()"))
        return ""

    prose = _SEE_PATH.sub(see, prose)
    # What is still technical outside brackets (e.g. "pass hydrology.rainfall_in"):
    # drop the clause that carries it.
    clauses = re.split(r"(?<=[;:])\s+", prose)
    kept = []
    for clause in clauses:
        if _DOTTED.search(clause) or _TECH.search(clause):
            tech.append(clause.strip(" ;:"))
        else:
            kept.append(clause)
    prose = " ".join(kept)
    # A lone snake_case name left in a sentence reads as words.
    prose = _SNAKE.sub(lambda m: m.group(0).replace("_", " "), prose)
    prose = re.sub(r"\s+([.,;:])", r"\1", prose)
    # A clause dropped before the full stop leaves its colon behind ("unknown:.").
    prose = re.sub(r"[;:,]+\.", ".", prose)
    prose = re.sub(r"\s{2,}", " ", prose).strip()
    prose = re.sub(r"[;:,]\s*$", ".", prose)
    return prose, tech


def keys_in(texts: Iterable[str]) -> list[str]:
    """Dotted submission.toml keys named in ``texts`` (``hydrology.rainfall_in``), in order."""
    from georeview.ordinances import municipalities

    # report paths, Village facts, rule ids and file names are not submission.toml keys
    not_keys = ("engineering.", "determinations.", "village.", *(f"{m}." for m in municipalities()))
    found: dict[str, None] = {}
    for t in texts:
        for k in _DOTTED.findall(t or ""):
            if not k.startswith(not_keys) and not k.endswith((".toml", ".gpkg", ".json", ".html")):
                found[k] = None
    return list(found)


def supply_words(keys: Iterable[str]) -> list[str]:
    """Keys grouped by submission.toml section, in words (one sentence per section)."""
    by_section: dict[str, list[str]] = {}
    for k in keys:
        section, _, name = k.rpartition(".")
        by_section.setdefault(section, []).append(name)
    out = []
    for section, names in by_section.items():
        quoted = ", ".join(f'"{n}"' for n in dict.fromkeys(names))
        where = f"the {section.replace('.', ' > ')} section of" if section else "the top of"
        out.append(f"In {where} submission.toml give {quoted}.")
    return out


def key_words(key: str) -> str:
    """A submission.toml key in words: ``hydrology.rainfall_in`` → 'entry "rainfall_in" ...'."""
    parts = key.split(".")
    if len(parts) == 1:
        return f'the entry "{parts[0]}" of submission.toml'
    section = " > ".join(parts[:-1])
    return f'the entry "{parts[-1]}" in the {section} section of submission.toml'


def is_number(value: Any) -> TypeGuard[int | float]:
    """Whether ``value`` is a real number (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_nodata(value: Any) -> bool:
    """Whether a value is a layer's "no value" sentinel (-9999 and the like)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return False
    return any(abs(v - s) < 1e-9 for s in NODATA)


_SINGULAR = {"acres": "acre", "lots": "lot", "days": "day", "feet": "foot", "tons": "ton"}


def quantity(value: Any, units: str | None = None, *, digits: int | None = None) -> str:
    """A value with its units at the page's precision ("1.00 acre", "7.11 tons/acre/year").

    Units of :data:`~georeview.report.decimals.DISPLAY_DECIMALS` take its decimals (one
    rounding per quantity), ``digits`` overriding them; a bare number or other units: whole
    numbers and values of 100 or more get no decimals, others up to two; nodata sentinels
    read "not given".
    """
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not is_number(value):
        return str(value)
    if is_nodata(value):
        return NOT_GIVEN
    v = float(value)
    digits = display_decimals(units, v) if digits is None else digits
    if digits is not None:
        # a quantity with a unit of the page's one rule: the same decimals everywhere
        text = f"{v:,.{digits}f}"
    elif abs(v) >= 100 or v.is_integer():
        text = f"{v:,.0f}"
    elif abs(v) >= 10:
        text = f"{v:,.1f}"
    else:
        text = f"{v:,.2f}"
    u = units or ""
    if u == "USD":
        return f"${v:,.0f}" if v.is_integer() else f"${v:,.2f}"
    if u == "fraction":
        return f"{100 * v:.1f} %"
    if re.fullmatch(r"1(?:\.0+)?", text):
        head, _, tail = u.partition(" ")
        u = " ".join(x for x in (_SINGULAR.get(head, head), tail) if x)
    return f"{text} {u}".strip()


def is_determination(finding: Mapping[str, Any]) -> bool:
    """A determination (what applies) rather than a compliance result.

    Uses the finding's own ``determination`` field when report.json carries it,
    otherwise its rule kind.
    """
    # report.json's ``determination`` covers reach, exemption, trigger and classify;
    # an ``info`` finding (a procedure, a fee, a forfeiture) is no compliance result either.
    if finding.get("determination") is True or finding.get("kind") == "info":
        return True
    if finding.get("determination") is False:
        return False
    return finding.get("kind") in DETERMINATION_KINDS


def determination_label(finding: Mapping[str, Any]) -> str:
    """The reviewer's word for a determination: applies, does not apply, exempt, classified as."""
    status, kind, applies = finding["status"], finding.get("kind"), finding.get("applies")
    if status == "needs_info":
        return "Needs information"
    if status == "fail":
        return "Fails"
    if status == "not_applicable":
        return "Does not apply"
    if kind == "exemption":
        return "Exempt" if applies else "Not exempt"
    if kind == "classify":
        if not applies:
            return "Does not apply"
        head = str(finding.get("title") or "").split(":")[0].strip()
        return f"Classified as {head.lower()}" if head else "Classified"
    if kind == "info":
        return "For the record"
    return "Applies" if applies else "Does not apply"


def evidence_of(finding: Mapping[str, Any], derived: Mapping[str, list[str]]) -> list[str]:
    """Evidence sources of a finding: its own ``evidence`` field, else derived from its facts."""
    own = finding.get("evidence")
    if isinstance(own, str):
        found = [own]
    elif isinstance(own, (list, tuple)):
        found = [str(x) for x in own]
    else:
        found = list(derived.get(finding.get("rule_id", ""), []))
    # Nearly every rule reads the classification to know whether it applies; say so
    # only where nothing else is the evidence.
    rest = [e for e in found if e != "judged"]
    return rest or found


def derive_evidence(review: Any) -> dict[str, list[str]]:
    """Rule id → sources of the facts the rule reads (the fact registry's ``source``)."""
    from georeview.facts.registry import registry

    reg = registry()
    out: dict[str, list[str]] = {}
    for rule_id, facts in rule_facts(review.ordinance).items():
        sources = {reg.source(f) for f in facts}
        out[rule_id] = [s for s in EVIDENCE_WORDS if s in sources]
    return out


def missing_facts(review: Any) -> dict[str, list[str]]:
    """Rule id → the facts it reads that have no value in this review."""
    facts = review.facts or {}
    return {
        rid: sorted(f for f in names if facts.get(f) is None)
        for rid, names in rule_facts(review.ordinance).items()
    }


def rule_measures(review: Any) -> dict[str, dict[str, Any]]:
    """Rule id → what its finding's number is: the ``measure`` fact, ``op`` and source.

    The page labels a finding's number by it (Measured, Computed, Declared, Required),
    never by a column heading that fits some rows only.
    """
    from georeview.facts.registry import registry

    reg = registry()
    out: dict[str, dict[str, Any]] = {}
    for rule in review.ordinance.rules:
        shown = rule.measure or rule.fact
        if shown:
            out[rule.id] = {
                "measure": shown,
                "op": rule.op,
                "source": reg.source(shown),
                "kind": rule.kind,
            }
    return out


def village_undecided(review: Any) -> set[str]:
    """Rule ids that read Village facts of which none is decided in this review.

    Such a finding rests on no decision of the Village: its evidence must not show the
    Village's badge (what it waits for is said in the Village's section and the row).
    """
    from georeview.report.village import village_facts_read

    facts = review.facts or {}
    decided: dict[str, bool] = {}
    for fact, entry in village_facts_read(review).items():
        for rid in entry["rules"]:
            decided[rid] = decided.get(rid, False) or facts.get(fact) is not None
    return {rid for rid, d in decided.items() if not d}


def _owed(status: str) -> str:
    """What a status asks of someone: a fail or a missing fact, else nothing.

    A pass and a not applicable ask nothing, and are the same to whoever acts on the review.
    """
    return status if status in ("fail", "needs_info") else "nothing"


def interpretation_uses(review: Any) -> dict[str, set[str]]:
    """Per local interpretation still undecided, the rules whose result rests on it.

    A rule's result uses an interpretation when the Village deciding otherwise would
    change what the finding asks for: the ordinance is judged again with the Village's
    fact set each way (``determined_by`` true, then false) and a finding whose fail or
    need for information comes or goes is one that uses it. A pass that would become
    not applicable asks nothing either way, and carries no caveat.

    Returns
    -------
    dict of str to set of str
        The interpretation's ``short`` (or ``label``) words → rule ids.
    """
    from georeview.rules.judge import judge

    facts = dict(review.facts or {})
    now = {f.rule_id: _owed(f.status) for f in review.judgement.findings}
    out: dict[str, set[str]] = {}
    for interp in review.ordinance.interpretations.values():
        if facts.get(interp.determined_by) is not None:
            continue
        uses: set[str] = set()
        for decided in (True, False):
            other = judge(review.ordinance, {**facts, interp.determined_by: decided})
            uses |= {
                f.rule_id
                for f in other.findings
                if f.rule_id in now and _owed(f.status) != now[f.rule_id]
            }
        out[str(interp.short or interp.label)] = uses
    return out


# ------------------------------------------------------------------ caveats
_TOPICS = {
    "soil_loss": re.compile(
        r"soil.loss|sediment discharge|tons/acre|USLE|erosivity", re.IGNORECASE
    ),
    "runoff": re.compile(r"\bpeak|sediment basin|\bcfs\b|design storm", re.IGNORECASE),
}


#: The facts whose value a caveat's topic weakens (prefixes): a finding whose rule reads
#: one of them rests on the caveat; one that reads only whether a plan shows a
#: calculation, or a basin's depth and fence, does not.
_CAVEAT_FACTS: dict[str, tuple[str, ...]] = {
    "soil_loss": ("soil_loss_tons_per_acre_year", "soil_loss.uniform_estimate"),
    "runoff": ("peak.", "sediment_basin."),
}


#: TR-55's Ia/P limit as :func:`georeview.hydrology.peak_discharge` warns of it, with the
#: storm and condition the stage prefixes (``"100yr post: Ia/P = 0.071 is outside ..."``).
_IA_P_LIMIT = re.compile(
    r"^(\d+yr) (pre|post|construction): Ia/P = ([\d.]+) is outside ([\d.]+-[\d.]+); "
    r"the limiting value ([\d.]+) was used"
)


def _rests_on(c: Mapping[str, Any], f: Mapping[str, Any], reads: Mapping[str, set[str]]) -> bool:
    """Whether finding ``f`` rests on caveat ``c``: its rule reads a fact the caveat weakens."""
    names = reads.get(str(f.get("rule_id") or ""), set())
    storms = c.get("storms") or ()
    return any(n.startswith(tuple(c.get("facts") or ())) for n in names) and (
        not storms
        or any(n.startswith(f"peak.{st}.") for st in storms for n in names)
        or _storm_of(f) in storms
    )


def _finding_topics(f: Mapping[str, Any]) -> set[str]:
    text = f"{f.get('title', '')} {f.get('message', '')} {f.get('units') or ''}"
    return {t for t, rx in _TOPICS.items() if rx.search(text)}


def _engineering_warnings(warnings: Iterable[Any], add: Any) -> None:
    """The engineering stage's warnings as caveats (``add`` of :func:`caveats`).

    TR-55's Ia/P limit met by several peaks is one instruction: said once, naming each
    storm and condition, and weakening the rows of those storms only.
    """
    clamped: list[tuple[str, str, str]] = []
    limits = ("", "")
    for w in warnings:
        m = _IA_P_LIMIT.match(str(w))
        if m:
            # one TR-55 instruction met by several peaks: said once, naming each
            clamped.append((m.group(1), m.group(2), m.group(3)))
            limits = (m.group(4), m.group(5))
            continue
        topic = "soil_loss" if _TOPICS["soil_loss"].search(str(w)) else "runoff"
        words = str(w).rstrip(".")
        add(f"{'Runoff' if topic == 'runoff' else 'Soil loss'}: {words}.", topic, raw=str(w))
    if clamped:
        which = "; ".join(
            f"{storm_words(st)} storm {CONDITION_WORDS.get(cond, cond).lower()} {v}"
            for st, cond, v in sorted(clamped, key=lambda x: _years(x[0]))
        )
        add(
            f"Runoff: Ia/P is outside TR-55's {limits[0]} for {which}; the limiting value "
            f"{limits[1]} was used, as TR-55 chapter 4 instructs.",
            "runoff",
            storms=tuple(dict.fromkeys(st for st, _c, _v in clamped)),
        )


def caveats(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every warning of the review in words, each with the topic of the findings it weakens."""
    eng = report.get("engineering") or {}
    sl = eng.get("soil_loss") or {}
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    # Runoff caveats matter only where a rule of this review reads a peak or a basin.
    runoff_read = any(
        "runoff" in _finding_topics(f) and f.get("status") != "not_applicable"
        for f in report.get("findings", [])
    )

    def add(text: str, topic: str, raw: str | None = None, storms: tuple[str, ...] = ()) -> None:
        # The same warning can come from two places (soil_loss.warnings is repeated in
        # engineering.warnings): say it once.
        key = (raw or text).strip().lower()
        if key in seen or (topic == "runoff" and not runoff_read):
            return
        seen.add(key)
        prose, _ = plain(text)
        storm = re.match(r"(?:Runoff|Soil loss): (\d+yr) ", prose)
        if storm:
            prose = prose.replace(storm.group(1), storm_words(storm.group(1)) + " storm", 1)
        if prose and all(c["text"] != prose for c in out):
            out.append(
                {
                    "text": prose,
                    "topic": topic,
                    "storm": storm.group(1) if storm else "",
                    "storms": storms or ((storm.group(1),) if storm else ()),
                    "facts": _CAVEAT_FACTS.get(topic, ())
                    if not prose.startswith("Runoff: Detention")
                    # the unrouted peak after development: not a basin sized on construction
                    else ("peak.",),
                }
            )

    for w in report.get("warnings") or []:
        add(str(w), "all")
    # a local interpretation: said once here, in full, from the finding that makes it
    labels = {
        m.group(1)
        for f in report.get("findings", [])
        for m in re.finditer(r"\[Local interpretation: ([^\]]+)\]", str(f.get("message") or ""))
    }
    if labels:
        # in the ordinance's words, section numbers included: plain wording would drop
        # "17.07/17.08" and with it what the interpretation is
        longest = max(labels, key=len)
        out.append(
            {"text": f"Local interpretation: {longest}.", "topic": "all", "storm": "", "storms": ()}
        )
    r_src = str(((sl.get("r") or {}).get("source")) or "")
    if re.search(r"proxy|unconfirmed", r_src, re.IGNORECASE):
        add(f"Rainfall erosivity R is a stand-in: {r_src}.", "soil_loss")
    for w in sl.get("warnings") or []:
        add(f"Soil loss: {w}.", "soil_loss", raw=str(w))
    rain = eng.get("rainfall") or {}
    sources = {str(s) for s in (rain.get("sources") or {}).values() if s}
    for s in sorted(sources):
        if re.search(r"illustrative|not NOAA|unconfirmed|replace", s, re.IGNORECASE):
            add(f"Design rainfall depths: {s}.", "runoff")
    cfg = str(rain.get("config_source") or "")
    if not rain.get("depths_in") and re.search(r"not yet|unconfirmed", cfg, re.IGNORECASE):
        add(f"No confirmed design rainfall for this village: {cfg}.", "runoff")
    _engineering_warnings(eng.get("warnings") or [], add)
    for rep in report.get("repairs") or []:
        add(f"A geometry was repaired before measuring: {rep.get('reason')}.", "all")
    return out


# ------------------------------------------------------------------ engineering
def engineering_view(report: Mapping[str, Any]) -> dict[str, Any]:
    """The engineering inputs as rows a reviewer reads (value, units, source)."""
    eng = report.get("engineering") or {}
    sl = eng.get("soil_loss") or {}
    usle = []
    for key, label in (("r", "R, rainfall erosivity"), ("k", "K, soil erodibility")):
        item = sl.get(key) or {}
        usle.append(
            {
                "name": label,
                "value": quantity(item.get("value")) or NOT_GIVEN,
                "source": plain(item.get("source") or item.get("reason") or "")[0],
            }
        )
    ls = sl.get("ls") or {}
    usle.append(
        {
            "name": "LS, slope length and steepness",
            "value": quantity(ls.get("value")) or NOT_GIVEN,
            "source": plain(ls.get("source") or ls.get("reason") or "")[0],
        }
    )
    phases = [
        {
            "name": phase_words(p.get("name")),
            "days": quantity(p.get("days"), "days"),
            "c": quantity(p.get("c")),
            "p": quantity(p.get("p")),
            "r_share": NOT_GIVEN
            if p.get("r_fraction") is None
            else quantity(p["r_fraction"], "fraction"),
            "tons": quantity(p.get("tons_per_acre"), "tons/acre"),
            "source": plain(_phase_source(p))[0],
        }
        for p in sl.get("phases") or []
    ]
    rain = eng.get("rainfall") or {}
    depths = rain.get("depths_in") or {}
    storms = []
    details = eng.get("peak_flow_details") or []
    for storm, depth in depths.items():
        row: dict[str, Any] = {
            "storm": storm_words(storm),
            "depth": quantity(depth, "in"),
            "source": plain((rain.get("sources") or {}).get(storm) or "")[0],
        }
        for d in details:
            if d.get("storm") == storm:
                row[f"q_{d.get('condition')}"] = quantity(d.get("qp_cfs"), "cfs")
        storms.append(row)
    cn = eng.get("curve_numbers") or {}
    tc = eng.get("tc_hr") or {}
    runoff = [
        {
            "condition": CONDITION_WORDS.get(k, k),
            "cn": quantity(cn.get(k)) or NOT_GIVEN,
            "tc": NOT_GIVEN if tc.get(k) is None else quantity(tc[k], "h"),
        }
        for k in ("pre", "post", "construction")
        if cn.get(k) is not None or tc.get(k) is not None
    ]
    even = [p for p in sl.get("phases") or [] if p.get("r_fraction") is None]
    measures = report.get("measures") or {}
    slope = measures.get("slope") or {}
    return {
        "tr55": tr55_view(eng.get("tr55") or {}),
        # the phases whose erosivity is spread evenly over the year (no r_fraction)
        "even_phases": ", ".join(phase_words(p.get("name")) for p in even),
        "steep_area": raster_area_text(
            measures.get("steep_slope_area_sqft"), slope.get("cell_area_sqft")
        )
        if measures.get("steep_slope_area_sqft") is not None
        else "—",
        "soil_loss": quantity(sl.get("tons_per_acre_year"), "tons/acre/year"),
        "soil_loss_reason": plain(sl.get("reason") or "")[0],
        "usle": usle,
        "phases": phases,
        "method": plain(sl.get("method") or "")[0],
        "storms": storms,
        "runoff": runoff,
        "rainfall_note": "" if depths else plain(str(rain.get("config_source") or ""))[0],
    }


#: The three TR-55 conditions of report.json (``pre``, ``post``, ``construction``) in words.
CONDITION_WORDS = {
    "pre": "Before development",
    "post": "After development",
    "construction": "During construction",
}
#: A flow path segment's kind as TR-55 chapter 3 names it.
SEGMENT_WORDS = {"sheet": "sheet", "shallow": "shallow concentrated", "channel": "channel"}


def _cover_words(cover: str) -> str:
    """A TR-55 cover key in the words of its Table 2-2 row (``data/tr55.toml``)."""
    from georeview.hydrology import tr55_tables

    row = tr55_tables()["cover"].get(cover) or {}
    words = str(row.get("description") or cover.replace("_", " "))
    # the row's name without its glosses: "(SR)", "(excluding right-of-way)", ", etc."
    words = re.sub(r"\s*\([^)]*\)", "", words)
    return re.sub(r",?\s*etc\.?$", "", words).strip()


def _segment_words(seg: Mapping[str, Any]) -> str:
    """One Tc segment as worksheet 3 lists it: kind, length, slope, surface or n, Tt."""
    kind = SEGMENT_WORDS.get(str(seg.get("kind")), str(seg.get("kind")))
    parts = [quantity(seg.get("length_ft"), "ft")]
    if is_number(seg.get("slope_ft_per_ft")):
        parts.append(f"s {seg['slope_ft_per_ft']:.3f} ft/ft")
    if seg.get("surface"):
        parts.append(str(seg["surface"]).replace("_", " "))
    if is_number(seg.get("n")) and seg.get("kind") != "shallow":
        parts.append(f"n {seg['n']:g}")
    return f"{kind} {', '.join(parts)}: {quantity(seg.get('travel_time_hr'), 'h')}"


def _years(storm: str) -> float:
    """A storm key's return period (``"10yr"`` -> 10), infinite when it is not one."""
    m = re.fullmatch(r"(\d+)yr", storm)
    return float(m.group(1)) if m else float("inf")


def tr55_view(tr55: Mapping[str, Any]) -> dict[str, Any]:
    """report.json ``engineering.tr55`` as the rows of the page's TR-55 subcatchment summary.

    Only words and roundings are added (by the page's one rule,
    :data:`~georeview.report.decimals.DISPLAY_DECIMALS`): every number is the stage's own.

    Returns
    -------
    dict
        ``area`` and ``distribution`` in words, ``conditions`` (condition, CN and how it
        was composed, Tc and its segments) and ``storms`` (condition, storm, P, Q, Ia/P,
        qu, distribution, peak); empty when no condition has a CN or a Tc.
    """
    conds = tr55.get("conditions") or []
    if not conds:
        return {}
    dist = f"NRCS Type {tr55.get('distribution')}" if tr55.get("distribution") else NOT_GIVEN
    area = quantity(tr55.get("drainage_area_acres"), "acres")
    source = str(tr55.get("drainage_area_source") or "")
    conditions, storms = [], []
    for c in conds:
        words = CONDITION_WORDS.get(str(c.get("condition")), str(c.get("condition")))
        parts = [
            f"{_cover_words(str(p.get('cover')))}, HSG {p.get('hsg')}: "
            f"{quantity(p.get('acres'), 'acres')} at CN {quantity(p.get('cn'))}"
            for p in c.get("cn_parts") or []
        ]
        if c.get("cn") is None:
            cn_how = plain(str(c.get("cn_reason") or ""))[0]
        elif len(parts) > 1 and is_number(c.get("cn_weighted")):
            # worksheet 2: the area-weighted CN, then "Use CN = ..." rounded
            cn_how = f"{'; '.join(parts)}; weighted {c['cn_weighted']:.1f}"
        else:
            cn_how = "; ".join(parts)
        segs = [_segment_words(s) for s in c.get("tc_segments") or []]
        if c.get("tc_hr") is None:
            tc_how = plain(str(c.get("tc_reason") or ""))[0]
        elif segs:
            tc_how = "; ".join(segs)
        else:
            tc_how = plain(str(c.get("tc_source") or ""))[0]
        conditions.append(
            {
                "condition": words,
                "cn": quantity(c.get("cn")) or NOT_GIVEN,
                "cn_how": cn_how,
                "tc": NOT_GIVEN if c.get("tc_hr") is None else quantity(c["tc_hr"], "h"),
                "tc_how": tc_how,
            }
        )
        # by return period, as TR-55's tables list storms (the basin's 5-year comes last)
        for st in sorted(c.get("storms") or [], key=lambda x: _years(str(x.get("storm")))):
            clamped = is_number(st.get("ia_over_p_used")) and st.get("ia_over_p_used") != st.get(
                "ia_over_p"
            )
            storms.append(
                {
                    "condition": words,
                    "storm": storm_words(str(st.get("storm"))),
                    "p": quantity(st.get("p_in"), "in"),
                    "q": quantity(st.get("q_in"), "in"),
                    # TR-55 prints Ia/P to two decimals (example 4-1: 0.11)
                    "ia_p": f"{st['ia_over_p']:.2f}" if is_number(st.get("ia_over_p")) else "",
                    "ia_p_used": f"{st['ia_over_p_used']:.2f}" if clamped else "",
                    "qu": quantity(st.get("qu_csm_per_in"), "csm/in"),
                    "distribution": dist,
                    "peak": quantity(st.get("qp_cfs"), "cfs"),
                    "within_limits": st.get("within_limits") is not False,
                }
            )
    return {
        "area": area,
        "area_source": "declared drainage area" if source.startswith("declared") else source,
        "distribution": dist,
        "conditions": conditions,
        "storms": storms,
    }


def phase_words(name: Any) -> str:
    """A USLE phase as the plan would write it: its cover's words, or its name in words.

    A phase named by its cover key (``mulch_hay_1_5_tpa``) reads as the C-factor table's
    row ("Hay mulch, 1.5 tons/acre"); a name of the plan's own ("Rough grading") stays, a
    snake_case one (``rough_grading``) reads as words.
    """
    from georeview.soil_loss import usle_tables

    text = str(name or "")
    row = usle_tables()["cover"].get(text)
    if row and row.get("description"):
        # the row without its gloss: "(slopes 2:1 or flatter)" is the table's, not the plan's;
        # "None (fallow ground): graded, bare soil" names the cover after its colon
        words = re.sub(r"\s*\([^)]*\)\s*$", "", str(row["description"])).strip()
        words = words.split(": ", 1)[-1]
        return words[0].upper() + words[1:]
    if re.fullmatch(r"[a-z0-9]+(?:_[a-z0-9]+)+", text):
        words = text.replace("_", " ")
        return words[0].upper() + words[1:]
    return text


def _phase_source(phase: Mapping[str, Any]) -> str:
    """Where a phase's C factor and, when declared, its share of the annual R come from."""
    parts = [str(phase.get("c_source") or "")]
    if phase.get("r_fraction_source"):
        parts.append(f"R share: {phase['r_fraction_source']}")
    return "; ".join(p for p in parts if p)


def storm_words(storm: str) -> str:
    """``"10yr"`` → ``"10-year, 24-hour"``."""
    m = re.fullmatch(r"(\d+)yr", str(storm))
    return f"{m.group(1)}-year, 24-hour" if m else str(storm)


# ------------------------------------------------------------------ needs information
def _resolve(report: Mapping[str, Any], path: str) -> list[str]:
    """The text values under a dotted path of the report (``engineering.sediment_basin.reason``)."""
    node: Any = report
    for part in path.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        else:
            return []
    out: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, Mapping):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)

    walk(node)
    return list(dict.fromkeys(out))


def _storm_of(finding: Mapping[str, Any]) -> str | None:
    """The storm a finding is about ("1-year, 24-hour peak ..." → ``"1yr"``), if one."""
    found = re.findall(r"(\d+)-year", str(finding.get("title") or ""))
    if len(found) == 1:
        return f"{found[0]}yr"
    # "2-, 10- and 100-year storms": the largest storm named is the one computed last.
    found = re.findall(r"(\d+)-(?:,| and| or|year)", str(finding.get("title") or ""))
    return f"{max(map(int, found))}yr" if found else None


def how_to_supply(
    finding: Mapping[str, Any],
    report: Mapping[str, Any],
    missing: Iterable[str] = (),
    sources: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """What a needs-information finding lacks and how to supply it, in words.

    Parameters
    ----------
    finding : mapping
        One finding of report.json.
    report : mapping
        The whole report (the finding may point into ``engineering``).
    missing : iterable of str
        Facts the finding's rule reads that have no value.
    sources : mapping, optional
        Fact name → registry source (declared facts come from submission.toml,
        village facts from the Village's determinations file).
    """
    texts = [str(finding.get("message") or "")]
    for path in re.findall(r"engineering(?:\.[a-z0-9_]+)+", texts[0]):
        values = _resolve(report, path)
        storm = _storm_of(finding)
        if storm and path.endswith("peak_flow_reasons"):
            values = _resolve(report, f"{path}.{storm}") or values
        texts.extend(values)
    what = []
    for t in texts[1:]:
        # Reasons are "a; b; c": list each missing item once across storms and conditions.
        for part in re.split(r";\s+", t):
            prose, _ = plain(part)
            if prose:
                what.append(prose[0].upper() + prose[1:])
    keys = keys_in(texts)
    village = False
    for fact in missing:
        src = (sources or {}).get(fact)
        if src == "village":
            village = True
        elif src == "declared" and not any(fact.split(".")[-1] in k for k in keys):
            keys.append(fact)
    supply = supply_words(keys)
    if village:
        supply.append("The Village decides: its determinations file of this review.")
    if not supply:
        supply.append("Ask the applicant (submission.toml).")
    return {
        "missing": list(dict.fromkeys(what)) or [plain(texts[0])[0]],
        "supply": list(dict.fromkeys(supply)),
        "keys": keys,
    }


# ------------------------------------------------------------------ a finding's numbers
#: The label of a finding's number by the registry source of the fact it shows.
VALUE_LABEL = {"measured": "Measured", "computed": "Computed", "declared": "Declared"}
#: Facts counted in DEM cells: their area claims no more than a cell supports.
RASTER_AREAS = frozenset({"steep_slope_area_sqft", "steep_slope_area_gt_sqft"})
#: A limit's comparison as an engineer writes it ("≤ 5.00 tons/acre/year").
_OP_SIGNS = {"<=": "≤ ", "<": "< ", ">=": "≥ ", ">": "> ", "==": "= "}
_TAG = re.compile(r"\s*\[Local interpretation: ([^\]]+)\]")
#: the judge's note that a Village determination settled a local interpretation (its
#: fact key in parentheses, gone once :func:`plain` has read it)
_DECIDED_TAG = re.compile(
    r"\s*\[The Village's determination(?: \([^)]*\))? replaces the local interpretation\.\]"
)
_COMPARED = re.compile(r"declared ([^;()]+); measured ([^;()]+)")


def _declared_beside(measure: str, report: Mapping[str, Any]) -> float | None:
    """What the plan declares against a required value the review computes."""
    eng = report.get("engineering") or {}
    if measure == "sediment_basin.required_area_sqft":
        v = (eng.get("sediment_basin") or {}).get("declared_total_area_sqft")
        return float(v) if is_number(v) else None
    if measure == "dewatering.required_area_sqft":
        areas = [
            (b.get("area") or {}).get("measured")
            for b in eng.get("basin_checks") or []
            if b.get("kind") == "dewatering"
        ]
        found = [float(a) for a in areas if is_number(a)]
        return sum(found) if found else None
    return None


def _compared(
    measure: str, f: Mapping[str, Any], facts: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """The declared and the measured value of a declared-against-measured comparison."""
    from georeview.facts.compare import PAIRS

    pair = next((p for p in PAIRS if measure == f"compare.{p.name}.diff_pct"), None)
    if pair is not None and facts:
        dv, mv = facts.get(pair.declared), facts.get(pair.measured)
        if is_number(dv) and is_number(mv):
            return [
                ("Declared", quantity(dv, pair.units)),
                ("Measured", quantity(float(mv) * pair.scale, pair.units)),
            ]
    m = _COMPARED.search(str(f.get("message") or ""))
    return [("Declared", m.group(1).strip()), ("Measured", m.group(2).strip())] if m else []


def finding_values(
    f: Mapping[str, Any],
    report: Mapping[str, Any],
    measure: Mapping[str, Any] | None = None,
    facts: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A finding's numbers, each with what it is: measured, declared, required, a limit.

    A required value the review computes (the sediment basin's area) is the standard the
    plan's declared value meets, not a measure; a comparison of a declared number with a
    measure shows both and the tolerance; a value worked out from the plan's own figures
    (a pond's depth, the days between two declared dates) reads as what the plan says.

    Returns
    -------
    dict
        ``found`` (the site's values) and ``standard`` (what they are held to), each a
        list of ``(label, text)``, and ``raster``: the words of an area counted in DEM
        cells ("" for any other value).
    """
    units = f.get("units")
    value, limit = f.get("measured"), f.get("limit")
    info = measure or {}
    name, source = str(info.get("measure") or ""), info.get("source")
    facts = facts or {}
    found: list[tuple[str, str]] = []
    standard: list[tuple[str, str]] = []
    raster = ""
    if isinstance(value, bool) or (value is None and limit is None):
        return {"found": found, "standard": standard}
    if name == "basins.max_unfenced_depth_ft" and is_number(value):
        # a depth the plan declares, not one measured: "0" meant every pond is fenced
        found.append(
            (
                "Declared",
                "every pond fenced"
                if float(value) == 0
                else f"{quantity(value, 'ft')} deep, no fence",
            )
        )
        standard.append(("Required", f"a fence on any pond over {quantity(limit, 'ft')}"))
    elif name == "plan.controls_lead_days" and is_number(value):
        n = round(float(value))
        when = (
            "the day clearing begins"
            if n == 0
            else f"{quantity(abs(n), 'days')} {'before' if n > 0 else 'after'} clearing begins"
        )
        found.append(("Declared dates", f"controls installed {when}"))
        standard.append(("Required", "installed before clearing begins"))
    elif name.startswith("compare.") and name.endswith(".diff_pct"):
        found.extend(_compared(name, f, facts))
        if is_number(value):
            found.append(("Apart", quantity(value, units)))
        if limit is not None:
            standard.append(("Tolerance", quantity(limit, units)))
    elif info.get("kind") == "required" and is_number(value):
        standard.append(("Required", quantity(value, units)))
        declared = _declared_beside(name, report)
        found.append(("Declared", NOT_GIVEN if declared is None else quantity(declared, units)))
    else:
        if value is not None:
            text = quantity(value, units, digits=apart_digits(value, limit, units))
            if name in RASTER_AREAS and is_number(value):
                cell = ((report.get("measures") or {}).get("slope") or {}).get("cell_area_sqft")
                text = raster_area_text(float(value), cell)
                raster = text
            found.append((VALUE_LABEL.get(str(source), "Value"), text))
        if limit is not None:
            op = _OP_SIGNS.get(str(info.get("op") or ""), "")
            standard.append(("Limit", f"{op}{quantity(limit, units)}"))
    return {"found": found, "standard": standard, "raster": raster}


def apart_digits(value: Any, limit: Any, units: str | None) -> int | None:
    """The page's decimals for ``value``, or more where they would make it read as ``limit``.

    The verdict compares unrounded values: 399.6 cu yd is under 400 and must not be shown
    as "400 cu yd" beside a 400 cu yd limit (the judge's messages do the same).
    """
    digits = display_decimals(units, value if is_number(value) else None)
    if digits is None or not (is_number(value) and is_number(limit)) or value == limit:
        return digits
    while digits < 6 and round(float(value), digits) == round(float(limit), digits):
        digits += 1
    return digits


def _rerounded(message: str, f: Mapping[str, Any], values: Mapping[str, Any]) -> str:
    """The message with the finding's own numbers in the page's one rounding.

    The judge writes a number as its template's words need it ("7 acres", "at least 1
    acre"); the page's rule (:data:`~georeview.report.decimals.DISPLAY_DECIMALS`) writes
    every acreage to 0.01. Only the finding's measured value and limit are rewritten, from
    their unrounded values, so no digit is invented; an area counted in DEM cells reads
    as the cells support.
    """
    units = str(f.get("units") or "")
    digits = display_decimals(units)
    found = dict(values.get("found") or [])
    if message and "Declared" in found and "Measured" in found:
        # a comparison's two values, as the row's columns give them
        message = _COMPARED.sub(
            lambda m: f"declared {found['Declared']}; measured {found['Measured']}", message
        )
    if digits is None or not message:
        return message
    single = _SINGULAR.get(units.split(" ")[0], units)
    after = rf"(?= (?:{re.escape(units)}|{re.escape(single)})(?!\w))"
    for key in ("measured", "limit"):
        v = f.get(key)
        if not is_number(v) or isinstance(v, bool):
            continue
        x = float(v)
        shown = {f"{x:,.0f}", f"{x:,.1f}", f"{x:,.2f}", f"{x:g}"}
        d = (
            apart_digits(x, f.get("limit"), units)
            if key == "measured"
            else display_decimals(units, x)
        )
        new = f"{x:,.{d}f}"
        raster = key == "measured" and values.get("raster")
        for old in sorted(shown, key=len, reverse=True):
            rx = rf"(?<![\d.,]){re.escape(old)}{after}"
            if raster:
                message = re.sub(rf"{rx} {re.escape(units)}", str(values["raster"]), message)
            else:
                message = re.sub(rx, new, message)
    return message


def display_message(f: Mapping[str, Any], report: Mapping[str, Any]) -> str:
    """A finding's message as report.html says it, for the map's popups.

    Plain words (no keys), its own measured value and limit in the page's one rounding
    (an area counted in DEM cells as the cells support), and no local-interpretation
    tag: the report states an interpretation once, among its caveats.
    """
    prose = plain(str(f.get("message") or f.get("title") or ""))[0]
    return untag(_rerounded(prose, f, finding_values(f, report)))


def applicant_message(f: Mapping[str, Any], report: Mapping[str, Any]) -> str:
    """A finding's message as a letter to the applicant says it.

    :func:`display_message`, without the note that a Village determination settled a
    local interpretation either: the applicant reads the finding, not how it was reached.
    """
    return _DECIDED_TAG.sub("", display_message(f, report)).strip()


def untag(text: Any) -> str:
    """``text`` without the judge's "[Local interpretation: ...]" tags.

    Examples
    --------
    >>> untag("A site map is given. [Local interpretation: the one-acre split]")
    'A site map is given.'
    """
    return _TAG.sub("", str(text or "")).strip()


def _untag(row: dict[str, Any], f: Mapping[str, Any], uses: Mapping[str, set[str]] | None) -> None:
    """Say a local interpretation on the rows whose result rests on it, and only there.

    The interpretation is in full among the caveats (and in the finding that makes it);
    with the review at hand (``uses``), a finding that follows it keeps a short caveat only
    where the Village deciding otherwise would change what it asks for.
    """
    if uses is None:
        return
    rid = str(f.get("rule_id") or "")
    labels = _TAG.findall(str(row["message"]))
    if not labels:
        return
    if any(w not in uses for w in labels):
        return  # the rule that makes the interpretation: its words stay in full
    kept = [w for w in labels if rid in uses[w]]
    row["message"] = untag(row["message"])
    if row.get("supply"):
        # what is missing is said without it too: the row's caveat says it once
        row["supply"]["missing"] = [untag(t) for t in row["supply"]["missing"]]
    notes = [f"Rests on a local interpretation: {words}." for words in kept]
    row["caveats"].extend(notes)
    # what a row that asks nothing now (not applicable, a determination) shows of it
    row["interpretation"] = notes


# ------------------------------------------------------------------ the view
def view(
    report: Mapping[str, Any],
    *,
    evidence: Mapping[str, list[str]] | None = None,
    missing: Mapping[str, list[str]] | None = None,
    fact_sources: Mapping[str, str] | None = None,
    measures: Mapping[str, Mapping[str, Any]] | None = None,
    facts: Mapping[str, Any] | None = None,
    interpretations: Mapping[str, set[str]] | None = None,
    undecided: Iterable[str] = (),
    reads: Mapping[str, set[str]] | None = None,
) -> dict[str, Any]:
    """The reviewer's view of one report dict (what report.html renders).

    Parameters
    ----------
    report : mapping
        ``Review.to_dict()``.
    evidence, missing, fact_sources : mapping, optional
        From :func:`derive_evidence`, :func:`missing_facts` and the registry.
    measures : mapping, optional
        :func:`rule_measures`: labels each finding's number (Measured, Required, ...).
    facts : mapping, optional
        The review's facts (a comparison's declared and measured values).
    interpretations : mapping, optional
        :func:`interpretation_uses`: without it, every finding keeps its tag.
    undecided : iterable of str
        :func:`village_undecided`: rules whose Village facts nobody has decided.
    reads : mapping, optional
        Rule id → the facts it reads (:func:`~georeview.report.rule_reads.rule_facts`): a
        caveat is shown on a row only where its rule reads a fact the caveat weakens;
        without it, on the rows whose words name its topic.

    Returns
    -------
    dict
        ``determinations`` and ``compliance`` (status → rows), ``not_applicable``,
        ``counts`` (compliance results only), ``caveats`` and ``engineering``.
    """
    evidence = evidence or {}
    no_decision = set(undecided)
    cav = caveats(report)
    rows: dict[str, list[dict[str, Any]]] = {s: [] for s in COMPLIANCE_ORDER}
    determinations: list[dict[str, Any]] = []
    not_applicable: list[dict[str, Any]] = []
    owes = (report.get("summary") or {}).get("owes") or {}
    # who owes each open finding (report.json summary.owes): said in words on the page
    owner = {i["rule_id"]: who for who in ("applicant", "village") for i in owes.get(who, ())}
    for f in report.get("findings", []):
        prose, tech = plain(f.get("message"))
        ev = evidence_of(f, evidence)
        if f.get("rule_id") in no_decision and "village" in ev:
            # no decision of the Village on file: not the Village's decision as evidence;
            # where the result waits on it, or rests on nothing else, say none is on file
            rest = [e for e in ev if e != "village"]
            ev = (
                rest
                if rest and f.get("status") != "needs_info"
                else ["village_none" if e == "village" else e for e in ev]
            )
        topics = _finding_topics(f)
        row = {
            "f": f,
            "message": prose,
            "technical": tech,
            "evidence": [(e, *EVIDENCE_WORDS.get(e, (e, "?"))) for e in ev],
            "caveats": [
                c["text"]
                for c in cav
                if (
                    _rests_on(c, f, reads)
                    if reads is not None and f.get("rule_id") in reads
                    else c["topic"] in topics and (not c["storms"] or _storm_of(f) in c["storms"])
                )
            ],
            "measured": quantity(f.get("measured"), f.get("units")),
            "limit": quantity(f.get("limit"), f.get("units"))
            if f.get("status") != "needs_info" or f.get("measured") is not None
            else "",
            **finding_values(f, report, (measures or {}).get(f.get("rule_id", "")), facts),
        }
        if f["status"] == "needs_info":
            # What is missing is said in its own column; a caveat would repeat it. A value
            # that is there (waiting on the Village's call, or on applicability) keeps the
            # caveats it rests on.
            if f.get("measured") is None:
                row["caveats"] = []
            row["supply"] = how_to_supply(
                f, report, (missing or {}).get(f.get("rule_id", ""), ()), fact_sources
            )
            row["owner"] = OWNER_WORDS.get(owner.get(f.get("rule_id", ""), ""), "")
        row["message"] = _rerounded(str(row["message"]), f, row)
        _untag(row, f, interpretations)
        if is_determination(f) and f["status"] != "needs_info":
            if f["status"] == "not_applicable":
                row["label"] = "Does not apply"
                not_applicable.append(row)
            else:
                row["label"] = determination_label(f)
                determinations.append(row)
        elif f["status"] == "not_applicable":
            row["label"] = "Not applicable"
            not_applicable.append(row)
        else:
            row["label"] = COMPLIANCE_LABEL.get(f["status"], f["status"])
            rows.setdefault(f["status"], []).append(row)
    counts = {s: len(rows[s]) for s in COMPLIANCE_ORDER}
    # a pass on the applicant's word is counted apart from a measured or computed one
    counts["declared"] = sum(1 for r in rows.get("pass", []) if r["f"].get("declared"))
    counts["determinations"] = len(determinations)
    counts["not_applicable"] = len(not_applicable)
    return {
        "compliance": rows,
        "determinations": determinations,
        "not_applicable": not_applicable,
        "counts": counts,
        "caveats": cav,
        "engineering": engineering_view(report),
        "source_name": _source_name(report),
    }


def _source_name(report: Mapping[str, Any]) -> str:
    """The ordinance's title for the footer (its file path stays in report.json)."""
    o = report.get("ordinance") or {}
    return str(o.get("title") or o.get("short_name") or "")
