"""Judge stage: the ordinance as data turns measured facts into cited findings.

A *rule kind* is code (this module); a *rule instance* (threshold, citation,
wording) is data in ``georeview/ordinances/<municipality>.toml``. Adding a
village whose rules are of kinds we already have needs a new TOML file only.

Facts are a flat dict of dotted names (``disturbed_area_sqft``,
``activity.kinds``, ``classification.category``). A fact that is ``None`` is
*unknown*: conditions use three-valued (Kleene) logic, so an unknown fact that
matters yields ``needs_info`` rather than a guess.

Rule kinds
----------
reach
    Whether the ordinance reaches the site from its jurisdiction.
exemption
    An exclusion or exemption: when its condition holds the site is not regulated.
trigger
    An applicability test (a threshold or activity): the site is regulated when
    any trigger holds (and it is reached and not exempt).
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

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import Field

from georeview.config import _Strict, parse_model, read_toml
from georeview.errors import ConfigError

Status = Literal["pass", "fail", "needs_info", "not_applicable"]
Tri = bool | None

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}


class Condition(_Strict):
    """A test on facts: ``{fact, op, value}`` or a combination with all/any/not."""

    fact: str | None = None
    op: (
        Literal[
            ">=",
            ">",
            "<=",
            "<",
            "==",
            "!=",
            "contains",
            "contains_any",
            "is_true",
            "is_false",
            "present",
        ]
        | None
    ) = None
    value: Any = None
    all: tuple[Condition, ...] | None = Field(default=None, strict=False)
    any: tuple[Condition, ...] | None = Field(default=None, strict=False)
    not_: Condition | None = Field(default=None, alias="not")


class Rule(_Strict):
    """One rule instance of an ordinance file."""

    id: str
    kind: Literal["reach", "exemption", "trigger", "classify", "limit", "required", "info"]
    citation: str
    title: str
    #: The ordinance's own words (quoted in reports).
    text: str = ""
    #: Condition for reach/exemption/trigger/classify; for limit/required the
    #: rule is not_applicable unless ``applies_when`` holds.
    when: Condition | None = None
    applies_when: Condition | None = None
    #: For classify: the classification key the rule sets.
    sets: str | None = None
    #: For limit: fact measured, comparison and limit.
    measure: str | None = None
    op: Literal[">=", ">", "<=", "<", "==", "!="] | None = None
    limit: Any = None
    units: str | None = None
    #: For required: the fact that says the item is there.
    fact: str | None = None
    #: Messages; ``{measured}``, ``{limit}`` and ``{units}`` are filled in.
    message_pass: str = ""
    message_fail: str = ""
    message_unknown: str = ""
    message_na: str = ""


class Reach(_Strict):
    """How far the ordinance reaches by jurisdiction status."""

    village: Literal["all", "subdivision", "none"] = "all"
    extraterritorial: Literal["all", "subdivision", "none"] = "none"
    outside: Literal["all", "subdivision", "none"] = "none"
    citation_village: str = ""
    citation_extraterritorial: str = ""


class Ordinance(_Strict):
    """A whole ordinance file."""

    municipality: str
    title: str
    short_name: str
    source: str
    notes: str = ""
    reach: Reach
    category_labels: dict[str, str] = Field(default_factory=dict, strict=False)
    constants: dict[str, Any] = Field(default_factory=dict, strict=False)
    rules: tuple[Rule, ...] = Field(strict=False)


def _lookup(facts: Mapping[str, Any], name: str) -> Any:
    """Return fact ``name`` (dotted names are flat keys), ``None`` when unknown."""
    return facts.get(name)


def evaluate(cond: Condition | None, facts: Mapping[str, Any]) -> Tri:
    """Evaluate a condition with Kleene logic: True, False or None (unknown)."""
    if cond is None:
        return True
    if cond.all is not None:
        vals = [evaluate(c, facts) for c in cond.all]
        if any(v is False for v in vals):
            return False
        return None if any(v is None for v in vals) else True
    if cond.any is not None:
        vals = [evaluate(c, facts) for c in cond.any]
        if any(v is True for v in vals):
            return True
        return None if any(v is None for v in vals) else False
    if cond.not_ is not None:
        v = evaluate(cond.not_, facts)
        return None if v is None else not v
    if cond.fact is None or cond.op is None:
        raise ConfigError("a condition needs fact and op, or all/any/not")
    x = _lookup(facts, cond.fact)
    if cond.op == "present":
        return x is not None
    return compare(cond.op, x, cond.value)


def compare(op: str, x: Any, value: Any) -> Tri:
    """The leaf test of a condition on one known-or-unknown value (``None`` = unknown).

    Shared by :func:`evaluate` and the vectorised screening (georeview.pipeline.screen), so a
    rule means the same thing for one review and for a million parcels.
    """
    if x is None:
        return None
    if op == "is_true":
        return bool(x)
    if op == "is_false":
        return not bool(x)
    if op == "contains":
        return value in x
    if op == "contains_any":
        return any(v in x for v in value)
    return bool(_OPS[op](x, value))


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
        }


@dataclass(frozen=True)
class Judgement:
    """The findings and the classification they add up to."""

    findings: tuple[Finding, ...]
    regulated: bool | None
    category: str | None
    larger_site: bool
    flags: dict[str, bool | None] = field(default_factory=dict)
    reached: bool | None = None
    exempt: bool | None = None


class RulePart(_Strict):
    """An extra rule file of a municipality (``<municipality>.<part>.toml``)."""

    municipality: str
    part: str
    rules: tuple[Rule, ...] = Field(strict=False)


@cache
def load_ordinance(municipality: str) -> Ordinance:
    """Load an ordinance: ``<municipality>.toml`` plus its ``<municipality>.*.toml`` parts.

    Parts (site map, engineering, plan content) hold only ``[[rules]]``; they are
    appended in file-name order. Rule ids must be unique across the files.
    The result is cached and frozen.
    """
    pkg = resources.files("georeview.ordinances")
    res = pkg.joinpath(f"{municipality}.toml")
    if not res.is_file():
        known = sorted(
            p.name[:-5]
            for p in pkg.iterdir()
            if p.name.endswith(".toml") and p.name.count(".") == 1
        )
        raise ConfigError(
            f"no ordinance file for municipality {municipality!r}; known: {', '.join(known)}",
            field="municipality",
        )
    with resources.as_file(res) as path:
        ordinance: Ordinance = parse_model(Ordinance, read_toml(path), path)
    rules = list(ordinance.rules)
    parts = sorted(
        p.name
        for p in pkg.iterdir()
        if p.name.startswith(f"{municipality}.")
        and p.name.endswith(".toml")
        and p.name.count(".") == 2
    )
    for name in parts:
        with resources.as_file(pkg.joinpath(name)) as path:
            part: RulePart = parse_model(RulePart, read_toml(path), path)
            if part.municipality != municipality:
                raise ConfigError(
                    f"part is for {part.municipality!r}", path=path, field="municipality"
                )
            rules += part.rules
    seen: set[str] = set()
    for r in rules:
        if r.id in seen:
            raise ConfigError(f"rule id {r.id!r} appears twice", field="rules")
        seen.add(r.id)
    return ordinance.model_copy(update={"rules": tuple(rules)})


def _fmt(template: str, **kw: Any) -> str:
    """Fill a message template; numbers get thousands separators."""

    def show(v: Any) -> str:
        if isinstance(v, bool) or v is None:
            return str(v).lower() if isinstance(v, bool) else "not given"
        if isinstance(v, float):
            return f"{v:,.0f}" if v.is_integer() or abs(v) >= 100 else f"{v:,.2f}"
        if isinstance(v, int):
            return f"{v:,}"
        if isinstance(v, (list, tuple)):
            return ", ".join(map(str, v)) or "none"
        return str(v)

    return template.format(**{k: show(v) for k, v in kw.items()})


def _reach(ordinance: Ordinance, facts: Mapping[str, Any]) -> tuple[Tri, Finding]:
    """Decide whether the ordinance reaches the site from its jurisdiction shares."""
    r = ordinance.reach
    shares = {
        s: facts.get(f"jurisdiction.share.{s}") or 0.0
        for s in ("village", "extraterritorial", "outside")
    }
    status = facts.get("jurisdiction.status")
    subdivision = evaluate(
        Condition(fact="activity.kinds", op="contains_any", value=["subdivision"]), facts
    )
    reached: Tri = False
    parts = []
    for s, how in (
        ("village", r.village),
        ("extraterritorial", r.extraterritorial),
        ("outside", r.outside),
    ):
        if shares[s] < 0.001:
            continue
        if how == "all":
            reached = True
            parts.append(f"{shares[s]:.0%} {s}: reached")
        elif how == "subdivision":
            if subdivision is True:
                reached = True
                parts.append(f"{shares[s]:.0%} {s}: reached (subdivision)")
            elif subdivision is None and reached is not True:
                reached = None
                parts.append(f"{shares[s]:.0%} {s}: reached only for a subdivision (unknown)")
            else:
                parts.append(
                    f"{shares[s]:.0%} {s}: reached only for a subdivision; this is not one"
                )
        else:
            parts.append(f"{shares[s]:.0%} {s}: not reached")
    citation = r.citation_village
    if status == "extraterritorial":
        citation = r.citation_extraterritorial or citation
    msg = f"Jurisdiction: {'; '.join(parts) or 'no share'}."
    finding = Finding(
        rule_id=f"{ordinance.municipality}.reach",
        citation=citation,
        status="pass" if reached is not None else "needs_info",
        message=msg,
        measured=status,
        limit=None,
        kind="reach",
        title="Geographic reach of the ordinance",
        applies=reached,
    )
    return reached, finding


def judge(ordinance: Ordinance, facts: Mapping[str, Any]) -> Judgement:
    """Apply every rule of ``ordinance`` to ``facts``.

    Returns
    -------
    Judgement
        Findings in ordinance order (reach, exemptions, triggers, classification,
        standards, plan content, procedures) and the classification.
    """
    facts = dict(facts)
    reached, reach_finding = _reach(ordinance, facts)
    findings: list[Finding] = [reach_finding]

    def determination(rule: Rule) -> tuple[Tri, Finding]:
        v = evaluate(rule.when, facts)
        measured = _lookup(facts, rule.measure) if rule.measure else None
        msg = {True: rule.message_pass, False: rule.message_fail, None: rule.message_unknown}[v]
        msg = _fmt(msg or rule.title, measured=measured, limit=rule.limit, units=rule.units or "")
        return v, Finding(
            rule_id=rule.id,
            citation=rule.citation,
            status="pass" if v is not None else "needs_info",
            message=msg,
            measured=measured,
            limit=rule.limit,
            kind=rule.kind,
            title=rule.title,
            text=rule.text,
            units=rule.units,
            applies=v,
        )

    def any_holds(kind: str) -> Tri:
        """Kleene OR of the rules of one kind, recording each rule's finding."""
        result: Tri = False
        for rule in (r for r in ordinance.rules if r.kind == kind):
            v, f = determination(rule)
            findings.append(f)
            result = _or(result, v)
        return result

    exempt = any_holds("exemption")
    triggered = any_holds("trigger")

    regulated = _and(reached, _and(_not(exempt), triggered))
    facts["classification.regulated"] = regulated
    flags: dict[str, Tri] = {}
    for rule in (r for r in ordinance.rules if r.kind == "classify"):
        v, f = determination(rule)
        if regulated is False:
            f = Finding(
                **{
                    **f.__dict__,
                    "status": "not_applicable",
                    "message": f"Not regulated: {f.message}",
                }
            )
        findings.append(f)
        key = rule.sets or rule.id
        flags[key] = _or(flags.get(key, False), v)
    major = flags.get("major")
    category = None if regulated is not True or major is None else ("major" if major else "minor")
    larger = bool(flags.get("larger_site")) and regulated is True
    facts["classification.category"] = category
    facts["classification.larger_site"] = larger
    for key, v in flags.items():
        facts[f"classification.{key}"] = v

    for rule in ordinance.rules:
        if rule.kind in ("reach", "exemption", "trigger", "classify"):
            continue
        findings.append(_standard(rule, facts, regulated))
    return Judgement(
        findings=tuple(findings),
        regulated=regulated,
        category=category,
        larger_site=larger,
        flags=flags,
        reached=reached,
        exempt=exempt,
    )


def _standard(rule: Rule, facts: Mapping[str, Any], regulated: Tri) -> Finding:
    """Evaluate a limit, required or info rule."""
    base = {
        "rule_id": rule.id,
        "citation": rule.citation,
        "kind": rule.kind,
        "title": rule.title,
        "text": rule.text,
        "units": rule.units,
        "limit": rule.limit,
    }
    measured = (
        _lookup(facts, rule.measure or rule.fact or "") if (rule.measure or rule.fact) else None
    )
    kw = {"measured": measured, "limit": rule.limit, "units": rule.units or ""}
    if regulated is False:
        return Finding(
            **base,
            status="not_applicable",
            measured=measured,
            applies=False,
            message="Not applicable: the ordinance does not regulate this site.",
        )
    applies = evaluate(rule.applies_when, facts) if rule.applies_when else True
    if applies is False:
        msg = _fmt(rule.message_na or "Not applicable to this site.", **kw)
        return Finding(
            **base, status="not_applicable", measured=measured, applies=False, message=msg
        )
    if rule.kind == "info":
        known = applies is True and (measured is not None or not (rule.measure or rule.fact))
        status: Status = "pass" if known else "needs_info"
        msg = rule.message_pass if status == "pass" else (rule.message_unknown or rule.message_pass)
        return Finding(
            **base,
            status=status,
            measured=measured,
            applies=applies,
            message=_fmt(msg or rule.title, **kw),
        )
    if rule.kind == "limit":
        if measured is None or rule.op is None:
            ok: Tri = None
        else:
            ok = bool(_OPS[rule.op](measured, rule.limit))
    else:  # required
        ok = None if measured is None else bool(measured)
    if ok is None or applies is None:
        status, msg = "needs_info", rule.message_unknown or f"{rule.title}: not given."
    elif ok:
        status, msg = "pass", rule.message_pass or rule.title
    else:
        status, msg = "fail", rule.message_fail or rule.title
    return Finding(
        **base, status=status, measured=measured, applies=applies, message=_fmt(msg, **kw)
    )


def _and(a: Tri, b: Tri) -> Tri:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _or(a: Tri, b: Tri) -> Tri:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def _not(a: Tri) -> Tri:
    return None if a is None else not a
