"""Load a municipality's ordinance from its folder, and refuse what cannot be judged.

``<folder>/ordinance.toml`` holds the title, reach, parameters and first rules; the files
it names in ``rule_files`` add more. Loading resolves every ``limit_param`` and condition
``param`` from ``[parameters]`` and refuses, naming the file and the rule id:

* an unknown rule kind or key (strict schemas);
* a fact that the fact registry (:mod:`georeview.facts.registry`) does not declare;
* a parameter the ordinance does not set;
* a rule id used twice.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from georeview.config import parse_model, read_toml
from georeview.errors import ConfigError, GeoReviewError
from georeview.rules.model import Condition, Ordinance, Parameter, Rule, RulePart

__all__ = ["folder_problems", "load_ordinance", "load_ordinance_folder", "rule_files"]


def load_ordinance(municipality: str) -> Ordinance:
    """Load the ordinance of ``municipality`` from the first folder of that name.

    Folders in ``$GEOREVIEW_ORDINANCES`` come before the shipped ones
    (:func:`georeview.ordinances.folder`). The result is cached per folder and frozen.

    Raises
    ------
    georeview.errors.ConfigError
        Unknown municipality, or a rule file that cannot be judged (file, rule id named).
    """
    from georeview.ordinances import folder

    return load_ordinance_folder(folder(municipality))


@functools.cache
def load_ordinance_folder(path: Path) -> Ordinance:
    """Load and check the ordinance held in folder ``path`` (see the module docstring).

    Raises the first of :func:`folder_problems`' problems.
    """
    ordinance, problems = folder_problems(path)
    if problems:
        raise problems[0]
    assert ordinance is not None  # no problem means the main file parsed
    return ordinance


def folder_problems(path: Path) -> tuple[Ordinance | None, list[GeoReviewError]]:
    """Load the ordinance of folder ``path`` and collect every problem, not only the first.

    Returns
    -------
    ordinance : Ordinance or None
        The ordinance with every rule that could be read and resolved (``None`` when
        ``ordinance.toml`` itself cannot be read).
    problems : list of GeoReviewError
        Each names its file and key, in file order (empty when the folder loads).
    """
    from georeview.ordinances import MAIN_FILE

    main = Path(path) / MAIN_FILE
    try:
        ordinance: Ordinance = parse_model(Ordinance, read_toml(main), main)
    except GeoReviewError as exc:
        return None, [exc]
    problems: list[GeoReviewError] = []
    if ordinance.municipality != Path(path).name.lower():
        problems.append(
            ConfigError(
                f"municipality {ordinance.municipality!r} does not match its folder "
                f"{Path(path).name!r} (rename the folder or the municipality key)",
                path=main,
                field="municipality",
            )
        )
    sources: list[tuple[Path, Rule]] = [(main, r) for r in ordinance.rules]
    for name in ordinance.rule_files:
        part_path = Path(path) / name
        try:
            part: RulePart = parse_model(RulePart, read_toml(part_path), part_path)
        except GeoReviewError as exc:
            problems.append(exc)
            continue
        if part.municipality != ordinance.municipality:
            problems.append(
                ConfigError(
                    f"part is for {part.municipality!r}, its ordinance.toml for "
                    f"{ordinance.municipality!r}",
                    path=part_path,
                    field="municipality",
                )
            )
        sources += [(part_path, r) for r in part.rules]
    resolved: list[tuple[Path, Rule]] = []
    for file, rule in sources:
        try:
            resolved.append((file, _resolve(rule, ordinance.parameters, file)))
        except ConfigError as exc:
            problems.append(exc)
    problems += _check(resolved)
    problems += _check_facts(ordinance, main)
    return ordinance.model_copy(update={"rules": tuple(r for _, r in resolved)}), problems


def rule_files(path: Path) -> dict[str, Path]:
    """Rule id -> the file of folder ``path`` that defines it (ids of files that parse)."""
    from georeview.ordinances import MAIN_FILE

    out: dict[str, Path] = {}
    main = Path(path) / MAIN_FILE
    try:
        data = read_toml(main)
    except GeoReviewError:
        return out
    files = [main, *(Path(path) / str(n) for n in data.get("rule_files", ()))]
    for file in files:
        try:
            rules = read_toml(file).get("rules", []) if file != main else data.get("rules", [])
        except GeoReviewError:
            continue
        for r in rules if isinstance(rules, list) else []:
            if isinstance(r, dict) and isinstance(r.get("id"), str):
                out.setdefault(r["id"], file)
    return out


def _param(params: dict[str, Parameter], name: str, file: Path, rule_id: str) -> Any:
    if name not in params:
        raise ConfigError(
            f"rule {rule_id!r} uses parameter {name!r}, which [parameters] does not set",
            path=file,
            field=f"rules.{rule_id}",
        )
    return params[name].value


def _resolve_cond(
    cond: Condition | None, params: dict[str, Parameter], file: Path, rule_id: str
) -> Condition | None:
    if cond is None:
        return None
    update: dict[str, Any] = {}
    if cond.param is not None:
        update["value"] = _param(params, cond.param, file, rule_id)
    for key in ("all", "any"):
        subs = getattr(cond, key)
        if subs is not None:
            update[key] = tuple(_resolve_cond(c, params, file, rule_id) for c in subs)
    if cond.not_ is not None:
        update["not_"] = _resolve_cond(cond.not_, params, file, rule_id)
    return cond.model_copy(update=update) if update else cond


def _resolve(rule: Rule, params: dict[str, Parameter], file: Path) -> Rule:
    """Fill ``limit_param`` and condition ``param`` values from the parameters."""
    update: dict[str, Any] = {
        "when": _resolve_cond(rule.when, params, file, rule.id),
        "applies_when": _resolve_cond(rule.applies_when, params, file, rule.id),
    }
    if rule.limit_param is not None:
        update["limit"] = _param(params, rule.limit_param, file, rule.id)
    return rule.model_copy(update=update)


def _check_facts(ordinance: Ordinance, main: Path) -> list[ConfigError]:
    """The reach's subdivision condition and the interpretations read declared facts."""
    from georeview.facts.registry import registry

    reg = registry()
    where: list[tuple[str, set[str]]] = []
    if ordinance.reach.subdivision_when is not None:
        where.append(("reach.subdivision_when", ordinance.reach.subdivision_when.facts()))
    for key, interp in ordinance.interpretations.items():
        where.append((f"interpretations.{key}", {interp.determined_by, *interp.reads}))
    out: list[ConfigError] = []
    for field, names in where:
        unknown = sorted(n for n in names if not reg.knows(n))
        if unknown:
            out.append(
                ConfigError(
                    f"reads unknown fact(s) {', '.join(unknown)} "
                    "(declare them in georeview/facts/registry.toml)",
                    path=main,
                    field=field,
                )
            )
    return out


def _check(rules: list[tuple[Path, Rule]]) -> list[ConfigError]:
    from georeview.facts.registry import registry

    reg = registry()
    seen: set[str] = set()
    out: list[ConfigError] = []
    for file, rule in rules:
        if rule.id in seen:
            out.append(ConfigError(f"rule id {rule.id!r} appears twice", path=file, field="rules"))
        seen.add(rule.id)
        unknown = sorted(n for n in rule.facts() if not reg.knows(n))
        if unknown:
            out.append(
                ConfigError(
                    f"rule {rule.id!r} reads unknown fact(s) {', '.join(unknown)} "
                    "(declare them in georeview/facts/registry.toml)",
                    path=file,
                    field=f"rules.{rule.id}",
                )
            )
        if rule.kind == "limit" and (rule.op is None or rule.limit is None or not rule.measure):
            out.append(
                ConfigError(
                    f"limit rule {rule.id!r} needs measure, op and limit (or limit_param)",
                    path=file,
                    field=f"rules.{rule.id}",
                )
            )
    return out
