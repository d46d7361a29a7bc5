"""Which facts each rule of an ordinance reads.

The reviewer's page (:mod:`~georeview.report.reader`: a finding's evidence and what it
misses), the Village's determinations (:mod:`~georeview.report.village`) and the map
popups (:mod:`~georeview.report.webmap`: the findings of the rules that read a layer)
all start from this one answer, so it lives apart from each of them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["rule_facts"]


def _condition_facts(cond: Any, out: set[str]) -> None:
    """Add to ``out`` every fact a rule condition (and the conditions it nests) reads."""
    if cond is None:
        return
    if cond.fact:
        out.add(cond.fact)
    for c in (cond.all or ()) + (cond.any or ()):
        _condition_facts(c, out)
    _condition_facts(cond.not_, out)


def rule_facts(ordinance: Any) -> dict[str, set[str]]:
    """Return, for every rule id of ``ordinance``, the fact names the rule reads.

    Parameters
    ----------
    ordinance : georeview.rules.Ordinance
        The loaded ordinance.

    Returns
    -------
    dict of str to set of str
        Rule id -> the facts of its ``when`` and ``applies_when`` conditions, its
        ``measure``, its ``fact`` and the facts it ``waits_on``.
    """
    out: dict[str, set[str]] = {}
    for rule in ordinance.rules:
        facts: set[str] = set()
        _condition_facts(rule.when, facts)
        _condition_facts(rule.applies_when, facts)
        facts.update(f for f in (rule.measure, rule.fact) if f)
        facts.update(getattr(rule, "waits_on", ()))
        out[rule.id] = facts
    return out
