"""The Village's determinations as a reviewer reads them (report.html ``#village``).

report.json's ``determinations`` section holds what the reviewer's file beside the
submission (``determinations.toml``, :mod:`georeview.facts.determinations`) gave: each
``village.*`` fact with its value, who decided, when and why. The page shows those, and
the Village facts the ordinance's rules read that nobody has given yet ("for the Village
to decide"), each with the findings that read it, so a reviewer sees what the review
still waits for from the Village and not only from the applicant.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["village_facts_read", "village_view"]

#: Prefix of the facts only the Village gives (the fact registry's source ``village``).
PREFIX = "village."


def village_facts_read(review: Any) -> dict[str, dict[str, Any]]:
    """Village fact → its description and the rule ids of this review's ordinance reading it.

    Parameters
    ----------
    review : georeview.pipeline.result.Review
        The review (its ordinance's rules and the fact registry are read).

    Returns
    -------
    dict
        ``{fact: {"description": str, "rules": [rule id, ...]}}``, facts in name order.
    """
    from georeview.facts.registry import registry
    from georeview.report.rule_reads import rule_facts

    reg = registry()
    out: dict[str, dict[str, Any]] = {}
    for rule_id, names in rule_facts(review.ordinance).items():
        for name in names:
            fact = reg.get(name)
            if fact is not None and fact.source == "village":
                entry = out.setdefault(name, {"description": fact.description, "rules": []})
                entry["rules"].append(rule_id)
    return dict(sorted(out.items()))


def _value_words(value: Any) -> str:
    if isinstance(value, bool):
        return "Yes" if value else "No"
    return "not given" if value is None else str(value)


def _cites(rule_ids: list[str], by_rule: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The citations of the findings of ``rule_ids``, once each, with their status.

    Several rules can share a citation (a paragraph checked in parts); the citation
    is listed once and "needs_info" wins, since that is what the page points out.
    """
    out: dict[str, str] = {}
    for rule_id in dict.fromkeys(rule_ids):
        f = by_rule.get(rule_id)
        if f is not None:
            cite, status = str(f["citation"]), str(f["status"])
            if out.get(cite) != "needs_info":
                out[cite] = status
    return [{"citation": c, "status": st} for c, st in out.items()]


def _question(fact: str, read: Mapping[str, Mapping[str, Any]]) -> str:
    """The fact's one-line description from the registry (its short name if unknown)."""
    from georeview.facts.registry import registry

    described = read.get(fact, {}).get("description")
    if not described:
        known = registry().get(fact)
        described = known.description if known is not None else ""
    return str(described or fact.removeprefix(PREFIX))


def village_view(
    report: Mapping[str, Any], read: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """What the Village determined and what is still for it to decide, in words.

    Parameters
    ----------
    report : mapping
        ``Review.to_dict()``; its ``determinations`` section (absent: none given).
    read : mapping, optional
        :func:`village_facts_read` of the review. Without it (a report rendered from
        report.json alone), the facts still to decide are not known by name and the
        needs-information findings resting on a Village decision stand for them.

    Returns
    -------
    dict
        ``file`` (the determinations file's name or None); ``given``: one row per
        determination (``question``, ``value``, ``by``, ``date``, ``reason``, ``key``,
        ``findings``); ``pending``: one row per fact not given (``question``, ``key``,
        ``findings``, ``waiting``: whether a finding needs it now).
    """
    section = report.get("determinations") or {}
    read = read or {}
    findings = list(report.get("findings") or [])
    by_rule = {str(f.get("rule_id")): f for f in findings}
    given = []
    for item in section.get("items") or []:
        fact = str(item.get("fact") or "")
        info = read.get(fact, {})
        given.append(
            {
                "question": _question(fact, read),
                "key": fact.removeprefix(PREFIX),
                "value": _value_words(item.get("value")),
                "by": item.get("by") or "",
                "date": item.get("date") or "",
                "reason": item.get("reason") or "",
                "findings": _cites(list(info.get("rules") or []), by_rule),
            }
        )
    decided = {str(item.get("fact")) for item in section.get("items") or []}
    pending = []
    for fact, info in read.items():
        if fact in decided:
            continue
        cites = _cites(list(info.get("rules") or []), by_rule)
        pending.append(
            {
                "question": _question(fact, read),
                "key": fact.removeprefix(PREFIX),
                "findings": cites,
                "waiting": any(c["status"] == "needs_info" for c in cites),
            }
        )
    if not read:
        # From report.json alone: each needs-information finding that rests on a
        # Village decision is one question still open.
        pending = [
            {
                "question": str(f.get("title") or ""),
                "key": "",
                "findings": _cites([str(f.get("rule_id"))], by_rule),
                "waiting": True,
            }
            for f in findings
            if f.get("status") == "needs_info" and "village" in (f.get("evidence") or [])
        ]
    pending.sort(key=lambda row: not row["waiting"])
    return {"file": section.get("file"), "given": given, "pending": pending}
