"""Judge stage: the ordinance turns columns of facts into cited findings.

One judge, :func:`judge_frame`, evaluates every rule over every row of a frame of
facts; a review is a frame of one row (:func:`judge` adds the findings' words), a
screening a frame of many. Rule kinds:

reach
    Whether the ordinance reaches the site from its jurisdiction (``[reach]``).
exemption
    An exclusion or exemption: when its condition holds the site is not regulated.
trigger
    An applicability test: the site is regulated when any trigger holds (and it is
    reached and not exempt).
classify
    Sets a classification flag (``major``, ``larger_site``, ``extraordinary``).
limit
    A standard compared with a measured value: pass, fail or needs_info.
required
    An item the plan or map must contain: pass (true), fail (false), needs_info.
info
    A procedure the reviewer must know (review clock, permit length, fees).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from georeview.measure.jurisdiction import SLIVER_SHARE
from georeview.rules.evaluate import Facts, Tri, evaluate, evaluate_frame, frame_of, kleene_or
from georeview.rules.model import DETERMINATION_KINDS, Allowance, Condition, Ordinance, Rule

__all__ = [
    "JURISDICTIONS",
    "STATUSES",
    "Finding",
    "FrameJudgement",
    "Judgement",
    "Verdicts",
    "judge",
    "judge_frame",
    "verdicts",
]

Status = Literal["pass", "fail", "needs_info", "not_applicable"]
#: Finding statuses, by small-integer code (built as codes, named once).
STATUSES = np.array(["pass", "fail", "needs_info", "not_applicable"], dtype=object)
_PASS, _FAIL, _NEEDS_INFO, _NOT_APPLICABLE = range(4)
#: Jurisdiction categories, in the order the reach considers them.
JURISDICTIONS = ("village", "extraterritorial", "outside")
#: What makes an activity a subdivision when a reach rule does not say (subdivision_when);
#: the screening's reasons read it too.
DEFAULT_SUBDIVISION = Condition(fact="activity.kinds", op="contains_any", value=["subdivision"])


@dataclass(frozen=True)
class Verdicts:
    """What the judge decided for every row, as arrays (rule id -> truth / status codes)."""

    n: int
    applies: dict[str, Tri]
    codes: dict[str, np.ndarray]
    reached: Tri
    exempt: Tri
    regulated: Tri
    category: np.ndarray
    larger_site: Tri
    flags: dict[str, Tri]
    #: Per jurisdiction category the ordinance reaches: the site lies there and is reached.
    reach_terms: dict[str, Tri]


@dataclass(frozen=True)
class FrameJudgement:
    """Per rule ``applies`` and ``status`` columns, and the classification columns."""

    applies: pd.DataFrame
    status: pd.DataFrame
    reached: pd.Series
    exempt: pd.Series
    regulated: pd.Series
    category: pd.Series
    larger_site: pd.Series
    flags: dict[str, pd.Series]


def _reach_terms(ordinance: Ordinance, facts: Facts) -> dict[str, Tri]:
    """For each jurisdiction category the ordinance reaches: is the site there and reached."""
    r = ordinance.reach
    sub = evaluate_frame(r.subdivision_when or DEFAULT_SUBDIVISION, facts)
    terms: dict[str, Tri] = {}
    for s in JURISDICTIONS:
        how = getattr(r, s)
        if how == "none":
            continue
        name = f"jurisdiction.share.{s}"
        if name in facts:
            # an unknown share (the extraterritorial area undetermined) is unknown, not 0
            _, share, known = facts.column(name)
            present = known & (np.nan_to_num(share.astype(float)) >= SLIVER_SHARE)
        else:
            present = np.zeros(facts.n, dtype=bool)
            known = np.ones(facts.n, dtype=bool)
        term = Tri(present, known)
        terms[s] = term & sub if how == "subdivision" else term
    return terms


def _of_kind(ordinance: Ordinance, kind: str) -> list[Rule]:
    return [r for r in ordinance.rules if r.kind == kind]


def _determination_codes(v: Tri) -> np.ndarray:
    return np.where(v.known, _PASS, _NEEDS_INFO).astype(np.int8)


def verdicts(ordinance: Ordinance, facts: Facts | pd.DataFrame) -> Verdicts:
    """Apply every rule of ``ordinance`` to every row of ``facts`` (arrays out).

    Order: reach, exemptions, triggers (regulated = reached AND NOT exempt AND any
    trigger), classification flags (``major`` gives the category), then the standards,
    which may read ``classification.*``.
    """
    if not isinstance(facts, Facts):
        facts = Facts(facts)
    n = facts.n
    applies: dict[str, Tri] = {}
    codes: dict[str, np.ndarray] = {}
    terms = _reach_terms(ordinance, facts)
    reached = kleene_or(terms.values(), n)
    reach_id = f"{ordinance.municipality}.reach"
    applies[reach_id], codes[reach_id] = reached, _determination_codes(reached)

    def determine(kind: str) -> Tri:
        out = Tri.const(False, n)
        for rule in _of_kind(ordinance, kind):
            v = evaluate_frame(rule.when, facts)
            applies[rule.id], codes[rule.id] = v, _determination_codes(v)
            out = out | v
        return out

    exempt = determine("exemption")
    triggered = determine("trigger")
    regulated = reached & ~exempt & triggered
    facts.set("classification.regulated", _tri_column(regulated))
    not_reg = regulated.false
    # A trigger of a site the ordinance does not reach, or exempts, decides nothing: it
    # asks nothing either (a trigger only the Village can decide included). Nor does one
    # still open while another trigger already brings the site under the ordinance.
    moot = reached.false | exempt.true
    for rule in _of_kind(ordinance, "trigger"):
        v = applies[rule.id]
        codes[rule.id][moot & ~v.true] = _NOT_APPLICABLE
        codes[rule.id][regulated.true & ~v.known] = _NOT_APPLICABLE
    flags: dict[str, Tri] = {}
    for rule in _of_kind(ordinance, "classify"):
        v = evaluate_frame(rule.when, facts)
        c = _determination_codes(v)
        c[not_reg] = _NOT_APPLICABLE
        applies[rule.id], codes[rule.id] = v, c
        key = rule.sets or rule.id
        flags[key] = (flags[key] | v) if key in flags else v
    category = np.full(n, None, dtype=object)
    major = flags.get("major")
    if major is not None:
        decided = major.known & regulated.true
        category[decided] = np.where(major.value[decided], "major", "minor")
    larger = flags.get("larger_site")
    # unknown (not false) while a fact that decides it is missing
    larger_site = regulated & larger if larger is not None else regulated & Tri.const(False, n)
    facts.set("classification.category", category)
    facts.set("classification.larger_site", _tri_column(larger_site))
    for key, v in flags.items():
        facts.set(f"classification.{key}", _tri_column(v))
    for rule in ordinance.rules:
        if rule.kind not in DETERMINATION_KINDS:
            applies[rule.id], codes[rule.id] = _standard(rule, facts, not_reg)
    return Verdicts(
        n=n,
        applies=applies,
        codes=codes,
        reached=reached,
        exempt=exempt,
        regulated=regulated,
        category=category,
        larger_site=larger_site,
        flags=flags,
        reach_terms=terms,
    )


def _tri_column(v: Tri) -> pd.arrays.BooleanArray:
    return pd.arrays.BooleanArray(v.value.copy(), ~v.known)


def judge_frame(ordinance: Ordinance, facts: pd.DataFrame) -> FrameJudgement:
    """Apply every rule of ``ordinance`` to every row of ``facts`` at once.

    Parameters
    ----------
    ordinance : Ordinance
        From :func:`georeview.rules.load_ordinance`.
    facts : pandas.DataFrame
        One column per fact (:mod:`georeview.facts`); a missing column is unknown.

    Returns
    -------
    FrameJudgement
        ``applies``/``status`` columns per rule id (plus ``<municipality>.reach``) and
        the classification, indexed like ``facts``.
    """
    idx = facts.index
    v = verdicts(ordinance, facts)
    return FrameJudgement(
        applies=pd.DataFrame({k: t.series(idx) for k, t in v.applies.items()}, index=idx),
        status=pd.DataFrame(
            {k: STATUSES[c] for k, c in v.codes.items()}, index=idx, dtype=object
        ),
        reached=v.reached.series(idx),
        exempt=v.exempt.series(idx),
        regulated=v.regulated.series(idx),
        category=pd.Series(v.category, index=idx, dtype=object),
        larger_site=v.larger_site.series(idx),
        flags={k: t.series(idx) for k, t in v.flags.items()},
    )


def _standard(rule: Rule, facts: Facts, not_reg: np.ndarray) -> tuple[Tri, np.ndarray]:
    """A limit, required or info rule over every row: (applies, status codes)."""
    n = facts.n
    name = rule.verdict_fact
    m_known = facts.column(name)[2] if name and name in facts else np.zeros(n, dtype=bool)
    applies = evaluate_frame(rule.applies_when, facts)
    code = np.full(n, _NEEDS_INFO, dtype=np.int8)
    if rule.kind == "info":
        code[applies.true & (m_known if name else True)] = _PASS
    else:
        if rule.kind == "limit" and rule.op is not None and name:
            res = evaluate_frame(Condition(fact=name, op=rule.op, value=rule.limit), facts)
        elif rule.kind == "required" and rule.when is not None:
            # a verdict resting on more than one fact (a declared item, or the Village's
            # acceptance of another measure)
            res = evaluate_frame(rule.when, facts)
        elif rule.kind == "required" and name:
            res = evaluate_frame(Condition(fact=name, op="is_true"), facts)
        else:
            res = Tri.unknown(n)
        decided = res.known & applies.true
        code[decided] = np.where(res.value[decided], _PASS, _FAIL)
        if rule.escape is not None:
            way_out = evaluate_frame(rule.escape.when, facts)
            _escape(code, way_out)
            if rule.escape.stands_alone:
                # another measure the text accepts meets it, whatever the standard's own
                code[applies.true & way_out.true] = _PASS
        if rule.allowance is not None:
            _allow(code, rule.allowance, facts, applies)
    code[applies.false | not_reg] = _NOT_APPLICABLE
    applies = Tri(applies.value & ~not_reg, applies.known | not_reg)
    return applies, code


def _allow(code: np.ndarray, allowance: Allowance, facts: Facts, applies: Tri) -> None:
    """Decide the rows whose plan marks the item not applicable, as the text allows (in place).

    An item the text allows no exception for fails; one the Village settles is
    not_applicable, fail or needs_info by its decision; one conditional by nature is
    not_applicable unless the project shows its condition, which fails.
    """
    said = evaluate_frame(Condition(fact=allowance.fact, op="present"), facts).true & applies.true
    if allowance.allows == "none":
        code[said] = _FAIL
        return
    if allowance.allows == "village":
        decided = evaluate_frame(Condition(fact=allowance.decided_by, op="is_true"), facts)
        code[said] = np.where(
            decided.true[said],
            _NOT_APPLICABLE,
            np.where(decided.known[said], _FAIL, _NEEDS_INFO),
        )
        return
    shown = (
        evaluate_frame(allowance.contradicted_when, facts).true
        if allowance.contradicted_when is not None
        else np.zeros(len(code), dtype=bool)
    )
    code[said] = np.where(shown[said], _FAIL, _NOT_APPLICABLE)


def _escape(code: np.ndarray, way_out: Tri) -> None:
    """Let a standard's way out decide the rows that fail it (in place).

    A fail whose way out holds passes; one whose way out is unknown is needs_info.
    """
    failed = code == _FAIL
    code[failed & way_out.true] = _PASS
    code[failed & ~way_out.known] = _NEEDS_INFO


# --------------------------------------------------------------------------- one record


@dataclass(frozen=True)
class Finding:
    """One cited finding (report.json ``findings[]``)."""

    rule_id: str
    citation: str
    status: Status
    message: str
    measured: Any = None
    limit: Any = None
    kind: str = ""
    title: str = ""
    text: str = ""
    units: str | None = None
    applies: bool | None = None
    #: What the verdict rests on: the sources of the facts it read (fact registry).
    evidence: tuple[str, ...] = ()
    #: A declared item's own words and where the plan set shows them (``words``,
    #: ``where``: "Sheet C-3", a page or a document, or None), for the reviewer to verify.
    declared: dict[str, str | None] | None = None

    @property
    def determination(self) -> bool:
        """A determination of applicability or classification, not a compliance result."""
        return self.kind in DETERMINATION_KINDS

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict."""
        return {
            "rule_id": self.rule_id,
            "citation": self.citation,
            "status": self.status,
            "message": self.message,
            "measured": self.measured,
            "limit": self.limit,
            "kind": self.kind,
            "title": self.title,
            "text": self.text,
            "units": self.units,
            "applies": self.applies,
            "evidence": list(self.evidence),
            "determination": self.determination,
            "declared": self.declared,
        }


@dataclass(frozen=True)
class Judgement:
    """The findings of one record and the classification they add up to."""

    findings: tuple[Finding, ...]
    regulated: bool | None
    category: str | None
    larger_site: bool | None
    flags: dict[str, bool | None] = field(default_factory=dict)
    reached: bool | None = None
    exempt: bool | None = None


def _show(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v).lower() if isinstance(v, bool) else "not given"
    if isinstance(v, float):
        return f"{v:,.0f}" if v.is_integer() or abs(v) >= 100 else f"{v:,.2f}"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v)) or "none"
    return str(v)


def _fmt(template: str, **kw: Any) -> str:
    """Fill a message template; numbers get thousands separators."""
    shown = {k: _show(v) for k, v in kw.items()}
    measured, limit = kw.get("measured"), kw.get("limit")
    # bools are ints: a true/false fact is never a number shown beside a limit
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (measured, limit))
    if numbers and measured != limit:
        shown["measured"] = _apart(float(measured), float(limit), shown["measured"])  # type: ignore[arg-type]
    return template.format(**shown)


def _apart(measured: float, limit: float, shown: str) -> str:
    """``measured`` with as many decimals as it takes not to read as ``limit``.

    The verdict compares unrounded values: 399.6 cu yd is under 400, and must not be
    shown as "400 cu yd ..., under 400 cu yd".
    """
    for places in range(1, 7):
        if float(shown.replace(",", "")) != limit:
            break
        shown = f"{measured:,.{places}f}"
    return shown


def _reach_finding(ordinance: Ordinance, v: Verdicts, facts: Mapping[str, Any]) -> Finding:
    r = ordinance.reach
    parts = []
    undetermined = facts.get("jurisdiction.undetermined_reason")
    if undetermined:
        parts.append(f"the extraterritorial area is undetermined ({undetermined})")
    for s in JURISDICTIONS:
        share = facts.get(f"jurisdiction.share.{s}") or 0.0
        if share < SLIVER_SHARE:
            continue
        term = v.reach_terms.get(s)
        how, on = getattr(r, s), (False if term is None else term.at(0))
        if how == "all":
            parts.append(f"{share:.0%} {s}: reached")
        elif how == "subdivision" and on is True:
            parts.append(f"{share:.0%} {s}: reached (subdivision)")
        elif how == "subdivision" and on is None:
            ask = f": {r.subdivision_question}" if r.subdivision_question else " (unknown)"
            parts.append(f"{share:.0%} {s}: reached only for a subdivision{ask}")
        elif how == "subdivision":
            parts.append(f"{share:.0%} {s}: reached only for a subdivision; this is not one")
        else:
            parts.append(f"{share:.0%} {s}: not reached")
    status = facts.get("jurisdiction.status")
    citation = r.citation_village
    if status == "extraterritorial":
        citation = r.citation_extraterritorial or citation
    reached = v.reached.at(0)
    return Finding(
        rule_id=f"{ordinance.municipality}.reach",
        citation=citation,
        status="pass" if reached is not None else "needs_info",
        message=f"Jurisdiction: {'; '.join(parts) or 'no share'}.",
        measured=status,
        kind="reach",
        title="Geographic reach of the ordinance",
        applies=reached,
        evidence=("measured",),
    )


def evidence_of(rule: Rule, sources: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The sources of the facts a rule's verdict reads, in the registry's order.

    A determination rests on the facts of its condition; a standard on its verdict fact
    (and, while that is unknown, on what decides whether it applies). ``sources``
    overrides the registry's source of a fact for this record (a disturbed area the
    applicant declared where the registry expects a measurement).
    """
    from georeview.facts.registry import SOURCES, registry

    reg = registry()
    if rule.kind in DETERMINATION_KINDS:
        names = rule.when.facts() if rule.when is not None else set()
    else:
        names = {rule.verdict_fact} if rule.verdict_fact else set()
        if rule.kind == "required" and rule.when is not None:
            names |= rule.when.facts()
        if rule.escape is not None:
            names |= rule.escape.when.facts()
        names |= set(rule.waits_on)
    over = sources or {}
    found = {over.get(n) or reg.source(n) for n in names} - {None}
    # a procedure that reads no fact rests on the ordinance's own text
    return tuple(s for s in SOURCES if s in found) or ("ordinance",)


def _finding(
    rule: Rule,
    status: str,
    applies: bool | None,
    facts: Mapping[str, Any],
    sources: Mapping[str, str] | None = None,
) -> Finding:
    """The words of one rule's finding, from its status and the record's facts."""
    shown = rule.measure or rule.fact
    measured = facts.get(shown) if shown else None
    kw = {
        "measured": measured,
        "limit": rule.limit,
        "units": rule.units or "",
        "reason": (facts.get(rule.reason) if rule.reason else None) or "not given",
    }
    evidence = evidence_of(rule, sources)
    if rule.kind in ("exemption", "trigger", "classify"):
        template = {True: rule.message_pass, False: rule.message_fail, None: rule.message_unknown}[
            applies
        ]
        msg = _fmt(template or rule.title, **kw)
        moot = applies is None and facts.get("classification.regulated")
        if status == "not_applicable" and moot:
            msg = f"Not needed: the ordinance applies under another paragraph ({rule.title})."
        elif status == "not_applicable":
            msg = f"Not regulated: {msg}"
    elif status == "not_applicable" and facts.get("classification.regulated") is False:
        msg = "Not applicable: the ordinance does not regulate this site."
    elif (allowed := _allowed(rule, status, applies, facts)) is not None:
        msg, evidence = allowed, _allowance_evidence(rule, status)
    elif status == "not_applicable":
        msg = _fmt(rule.message_na or "Not applicable to this site.", **kw)
    elif rule.kind == "info":
        template = rule.message_pass if status == "pass" else rule.message_unknown
        msg = _fmt(template or rule.message_pass or rule.title, **kw)
    else:
        msg = _fmt(_escaped(rule, status, facts) or _template(rule, status), **kw)
        if status == "needs_info" and applies is None and rule.applies_when is not None:
            msg = _undecided(rule, facts, **kw)
    declared = _declared(rule, status, facts)
    if declared is not None:
        where = declared["where"] or "the plan set"
        msg = f"Declared: \u201c{declared['words']}\u201d; verify on {where}."
    return Finding(
        rule_id=rule.id,
        citation=rule.citation,
        status=status,  # type: ignore[arg-type]
        message=msg,
        measured=measured,
        limit=rule.limit,
        kind=rule.kind,
        title=rule.title,
        text=rule.text,
        units=rule.units,
        applies=applies,
        evidence=evidence,
        declared=declared,
    )


def _declared(rule: Rule, status: str, facts: Mapping[str, Any]) -> dict[str, str | None] | None:
    """The applicant's own words a passing declared item rests on, and where they are."""
    from georeview.facts.plan import sheet_of

    words = facts.get(rule.declared) if rule.declared and status == "pass" else None
    if not isinstance(words, str) or not words.strip():
        return None
    return {"words": words.strip(), "where": sheet_of(words)}


def _allowed(
    rule: Rule, status: str, applies: bool | None, facts: Mapping[str, Any]
) -> str | None:
    """The words of a plan item the plan marks not applicable, else None."""
    a = rule.allowance
    reason = facts.get(a.fact) if a is not None else None
    if a is None or reason is None or applies is not True:
        return None
    said = f"The plan marks it not applicable (\u201c{reason}\u201d)"
    words = f"\u201c{a.words}\u201d"
    if a.allows == "none":
        return f"{said}, but the text allows no exception: {words}. Show it on the plan."
    if a.allows == "village":
        return {
            "not_applicable": f"Not applicable: the Village accepts the plan's reason "
            f"(\u201c{reason}\u201d); the text leaves it to the Village: {words}.",
            "fail": f"{said}; the Village does not accept that reason ({words}): show it on "
            "the plan.",
        }.get(
            status,
            f"{said}; the text leaves that to the Village: {words}. For the Village to "
            f"decide ({a.decided_by}).",
        )
    if status == "fail" and a.contradicted_when is not None:
        return (
            f"{said}, but {condition_words(a.contradicted_when)}: it applies ({words}). "
            "Show it on the plan."
        )
    return f"Not applicable, as the plan says: \u201c{reason}\u201d ({words})."


def _allowance_evidence(rule: Rule, status: str) -> tuple[str, ...]:
    """What a not_applicable plan item rests on: the applicant's word, and who settled it."""
    a = rule.allowance
    out = ["declared"]
    if a is not None and a.allows == "village" and status in ("not_applicable", "fail"):
        out.append("village")
    from georeview.facts.registry import SOURCES, registry

    if a is not None and a.contradicted_when is not None and status == "fail":
        # what contradicts the plan: the maps (measured) or another declaration
        out += [registry().source(n) or "" for n in a.contradicted_when.facts()]
    return tuple(s for s in SOURCES if s in out)


def _template(rule: Rule, status: str) -> str:
    """A standard's own words for ``status`` (pass, fail or needs_info)."""
    return {
        "pass": rule.message_pass or rule.title,
        "fail": rule.message_fail or rule.title,
        "needs_info": rule.message_unknown or f"{rule.title}: not given.",
    }[status]


def _met(rule: Rule, facts: Mapping[str, Any]) -> bool | None:
    """Whether the site meets a standard, whatever its applicability (``None`` = unknown)."""
    if rule.kind == "limit" and rule.op is not None and rule.measure:
        return evaluate(Condition(fact=rule.measure, op=rule.op, value=rule.limit), facts)
    if rule.kind == "info" or (rule.when is None and rule.fact is None):
        return None
    return evaluate(rule.when or Condition(fact=rule.fact, op="is_true"), facts)


def _undecided(rule: Rule, facts: Mapping[str, Any], **kw: Any) -> str:
    """A standard that waits on its own applicability: when it applies, and what it would find.

    Its ``message_unknown`` speaks of a missing measure, which is not why it waits
    ("scale not given" while the scale is given), so it is said only when that holds too.
    """
    met = _met(rule, facts)
    status = "needs_info" if met is None else ("pass" if met else "fail")
    if rule.kind == "info":
        status = "pass" if kw.get("measured") is not None or not rule.verdict_fact else "needs_info"
    regulated = facts.get("classification.regulated")
    why = (
        "whether the ordinance regulates the site is not settled"
        if regulated is None
        else "that is not settled"
    )
    return (
        f"Applies if {condition_words(rule.applies_when)}; {why} (see the applicability "
        f"and classification findings). If it applies: {_fmt(_template(rule, status), **kw)}"
    )


def condition_words(cond: Condition | None) -> str:
    """A condition in words, from the fact registry's descriptions.

    >>> condition_words(Condition(fact="classification.category", op="==", value="major"))
    'category of the land disturbing activity (major or minor) is major'
    """
    from georeview.facts.registry import registry

    if cond is None:
        return "always"
    if cond.all or cond.any:
        parts, joint = (cond.all, " and ") if cond.all else (cond.any, " or ")
        # a combination inside another is bracketed: "a and (b or c)"
        return joint.join(
            f"({condition_words(c)})" if c.all or c.any else condition_words(c)
            for c in parts or ()
        )
    if cond.not_ is not None:
        return f"not ({condition_words(cond.not_)})"
    known = registry().get(cond.fact or "")
    name = known.description if known else (cond.fact or "")
    name = name[:1].lower() + name[1:]
    op = cond.op or ""
    if op == "is_true":
        return name
    if op == "is_false":
        return f"not {name}"
    if op == "present":
        return f"it is known whether {name}"
    words = {"==": "is", "!=": "is not", "contains": "includes", "contains_any": "includes any of"}
    value = ", ".join(map(_show, cond.value)) if isinstance(cond.value, list) else _show(cond.value)
    return f"{name} {words.get(op, op)} {value}"


def _escaped(rule: Rule, status: str, facts: Mapping[str, Any]) -> str | None:
    """The message of a standard not met whose way out decided its status, else None."""
    if rule.escape is None or status not in ("pass", "needs_info"):
        return None
    met = _met(rule, facts)
    way_out = evaluate(rule.escape.when, facts)
    if met is True or (met is None and not (rule.escape.stands_alone and way_out is True)):
        return None  # met, or the measure itself is unknown: the rule's own words
    words = rule.escape.message_pass if way_out is True else rule.escape.message_unknown
    return f"{words} (\u201c{rule.escape.text}\u201d)"


def _caveated(rule: Rule, found: Finding, facts: Mapping[str, Any]) -> Finding:
    """Add the rule's caveats whose condition holds to the finding's message."""
    from dataclasses import replace

    notes = [c.text for c in rule.caveats if evaluate(c.when, facts) is True]
    if not notes:
        return found
    return replace(found, message=" ".join((found.message, *notes)))


def _interpreted(
    ordinance: Ordinance, rule: Rule, found: Finding, facts: Mapping[str, Any]
) -> Finding:
    """Label a finding that rests on a local interpretation (``[interpretations]``).

    While the Village has not decided (its determination fact is unknown) the finding says
    it follows the interpretation; once decided, that it follows the Village.
    """
    from dataclasses import replace

    for interp in ordinance.interpretations.values():
        if rule.id not in interp.rules and not (rule.facts() & set(interp.reads)):
            continue
        decided = facts.get(interp.determined_by)
        if decided is None:
            # said in full once, where it is made; the findings that follow it name it
            words = interp.label if rule.id in interp.rules else (interp.short or interp.label)
            note = f" [Local interpretation: {words}]"
            found = replace(found, message=found.message + note)
        else:
            note = (
                f" [The Village's determination ({interp.determined_by} = "
                f"{_show(decided)}) replaces the local interpretation.]"
            )
            evidence = tuple(dict.fromkeys((*found.evidence, "village")))
            found = replace(found, message=found.message + note, evidence=evidence)
    return found


def judge(
    ordinance: Ordinance, facts: Mapping[str, Any], *, sources: Mapping[str, str] | None = None
) -> Judgement:
    """Judge one record of facts: the one judge on a frame of one row, with words.

    ``sources`` names facts whose source in this record is not the registry's (see
    :func:`evidence_of`).

    Returns
    -------
    Judgement
        Findings in ordinance order (reach, exemptions, triggers, classification,
        standards, plan content, procedures) and the classification.
    """
    v = verdicts(ordinance, frame_of(facts))
    row = dict(facts)
    row["classification.regulated"] = v.regulated.at(0)
    row["classification.category"] = v.category[0]
    findings = [_reach_finding(ordinance, v, row)]
    order = ("exemption", "trigger", "classify")
    ranked = [r for k in order for r in _of_kind(ordinance, k)]
    ranked += [r for r in ordinance.rules if r.kind not in order and r.kind != "reach"]
    for rule in ranked:
        status = STATUSES[v.codes[rule.id][0]]
        found = _finding(rule, status, v.applies[rule.id].at(0), row, sources)
        if status != "not_applicable":
            found = _caveated(rule, found, row)
        if row["classification.regulated"] is not False:
            found = _interpreted(ordinance, rule, found, row)
        findings.append(found)
    return Judgement(
        findings=tuple(findings),
        regulated=v.regulated.at(0),
        category=v.category[0],
        larger_site=v.larger_site.at(0),
        flags={k: t.at(0) for k, t in v.flags.items()},
        reached=v.reached.at(0),
        exempt=v.exempt.at(0),
    )
