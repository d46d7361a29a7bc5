"""Who owes what, and the outcome a reviewer would write (report.json ``summary``).

A needs_info finding is owed by whoever supplies the facts it is missing (the fact
registry's ``supplied_by``): the applicant (their files, their words and what is computed
from them) before the Village (its determinations, its layers and DEM), since the Village
decides on what the applicant gives. A finding that waits only on the classification is
owed by whoever owes the classification's own findings. A failing finding is the
applicant's to correct. A rule's ``action`` is the Village's to do when its finding holds;
its ``condition`` is a condition of approval.

The outcome follows the ordinance's procedure, in the words of its ``[outcomes]`` table:
not regulated; return to the applicant while they owe anything (an incomplete application:
the failing findings are corrections to make with it); disapprove with the written reasons
when the application is complete and something fails; awaiting the Village while only
its own decisions or actions are open; else ready to approve, with conditions when a
finding sets one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["owed_by", "summary_owes"]


def owed_by(missing: Iterable[str], supplied_by: Mapping[str, str | None]) -> str | None:
    """Who owes a finding missing ``missing`` facts: applicant first, then the Village."""
    who = {supplied_by.get(f) for f in missing}
    if "applicant" in who:
        return "applicant"
    return "village" if "village" in who else None


def _item(f: Any, what: str) -> dict[str, Any]:
    return {"rule_id": f.rule_id, "citation": f.citation, "title": f.title, "what": what}


def belongs_on(names: Iterable[str], belongs: Mapping[str, str | None]) -> list[str]:
    """The sheets or documents facts ``names`` belong on, each once, in the order read."""
    return list(dict.fromkeys(d for n in names if (d := belongs.get(n))))


def _plain(message: str) -> str:
    from georeview.report.reader import plain

    prose = plain(message)[0]
    return prose or message


def summary_owes(
    findings: Sequence[Any],
    rules: Mapping[str, Any],
    missing: Mapping[str, Iterable[str]],
    supplied_by: Mapping[str, str | None],
    regulated: bool | None,
    outcome_words: Mapping[Any, str],
    reads: Mapping[str, Iterable[str]] | None = None,
    belongs: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """``summary.owes`` and ``summary.outcome`` of one review.

    Parameters
    ----------
    findings : list of georeview.rules.judge.Finding
        The judged findings.
    rules : mapping
        Rule id -> rule (its ``action`` and ``condition``).
    missing : mapping
        Rule id -> the facts it reads that have no value.
    supplied_by : mapping
        Fact name -> ``applicant``, ``village`` or None (the fact registry).
    regulated : bool or None
        Whether the ordinance regulates the site.
    outcome_words : mapping
        The ordinance's ``[outcomes]`` words by code.
    reads : mapping, optional
        Rule id -> every fact it reads (where a failing finding's correction belongs).
    belongs : mapping, optional
        Fact name -> the sheet or document of the submission it belongs on (the
        registry's ``[documents]``), for the facts the applicant supplies.

    Returns
    -------
    dict
        ``owes`` ({applicant: [...], village: [...]}, items with rule_id, citation, title
        and what; an applicant's item also ``on``, the sheets or documents it belongs
        on: the sheet a declared item names, else the registry's documents of its facts)
        and ``outcome`` (code, words, reasons, conditions).
    """
    reads = reads or {}
    belongs = belongs or {}
    from georeview.report.reader import quantity

    owner: dict[str, str | None] = {
        f.rule_id: owed_by(missing.get(f.rule_id, ()), supplied_by)
        for f in findings
        if f.status == "needs_info"
    }
    classifying = {
        owner[f.rule_id]
        for f in findings
        if f.status == "needs_info" and f.determination and owner.get(f.rule_id)
    }
    inherited = "applicant" if "applicant" in classifying else "village"
    owes: dict[str, list[dict[str, Any]]] = {"applicant": [], "village": []}
    conditions: list[str] = []
    for f in findings:
        rule = rules.get(f.rule_id)
        if f.status == "needs_info":
            who = owner[f.rule_id] or inherited
            item = _item(f, _plain(f.message))
            if who == "applicant":
                item["on"] = belongs_on(missing.get(f.rule_id, ()), belongs)
            owes[who].append(item)
        elif f.status == "fail":
            where = (f.declared or {}).get("where")
            on = [where] if where else belongs_on(reads.get(f.rule_id, ()), belongs)
            owes["applicant"].append({**_item(f, _plain(f.message)), "correct": True, "on": on})
        elif f.status == "pass" and rule is not None:
            if rule.action:
                owes["village"].append({**_item(f, rule.action), "action": True})
            if rule.condition:
                amount = quantity(f.measured, f.units)
                conditions.append(rule.condition.format(measured=amount))
    fails = [f"{f.citation}: {_plain(f.message)}" for f in findings if f.status == "fail"]
    asked = [i for i in owes["applicant"] if not i.get("correct")]
    if regulated is False:
        code = "not_regulated"
    elif asked:
        code = "return_to_applicant"
    elif fails:
        code = "disapprove"
    elif owes["village"]:
        code = "awaiting_village"
    else:
        code = "approve_with_conditions" if conditions else "approve"
    return {
        "owes": owes,
        "outcome": {
            "code": code,
            "words": outcome_words.get(code, code.replace("_", " ")),
            "reasons": fails if code in ("disapprove", "return_to_applicant") else [],
            "conditions": conditions if regulated is not False else [],
        },
    }
