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
from georeview.errors import ConfigError
from georeview.rules.model import Condition, Ordinance, Parameter, Rule, RulePart

__all__ = ["load_ordinance", "load_ordinance_folder"]


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
    """Load and check the ordinance held in folder ``path`` (see the module docstring)."""
    from georeview.ordinances import MAIN_FILE

    main = Path(path) / MAIN_FILE
    ordinance: Ordinance = parse_model(Ordinance, read_toml(main), main)
    if ordinance.municipality != Path(path).name.lower():
        raise ConfigError(
            f"municipality {ordinance.municipality!r} does not match its folder "
            f"{Path(path).name!r}",
            path=main,
            field="municipality",
        )
    sources: list[tuple[Path, Rule]] = [(main, r) for r in ordinance.rules]
    for name in ordinance.rule_files:
        part_path = Path(path) / name
        part: RulePart = parse_model(RulePart, read_toml(part_path), part_path)
        if part.municipality != ordinance.municipality:
            raise ConfigError(
                f"part is for {part.municipality!r}", path=part_path, field="municipality"
            )
        sources += [(part_path, r) for r in part.rules]
    rules = tuple(_resolve(rule, ordinance.parameters, file) for file, rule in sources)
    _check(sources, rules)
    _check_facts(ordinance, main)
    return ordinance.model_copy(update={"rules": rules})


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


def _check_facts(ordinance: Ordinance, main: Path) -> None:
    """The reach's subdivision condition and the interpretations read declared facts."""
    from georeview.facts.registry import registry

    reg = registry()
    where: list[tuple[str, set[str]]] = []
    if ordinance.reach.subdivision_when is not None:
        where.append(("reach.subdivision_when", ordinance.reach.subdivision_when.facts()))
    for key, interp in ordinance.interpretations.items():
        where.append(
            (f"interpretations.{key}", {interp.determined_by, *interp.reads})
        )
    for field, names in where:
        unknown = sorted(n for n in names if not reg.knows(n))
        if unknown:
            raise ConfigError(
                f"reads unknown fact(s) {', '.join(unknown)} "
                "(declare them in georeview/facts/registry.toml)",
                path=main,
                field=field,
            )


def _check(sources: list[tuple[Path, Rule]], rules: tuple[Rule, ...]) -> None:
    from georeview.facts.registry import registry

    reg = registry()
    seen: set[str] = set()
    for (file, _), rule in zip(sources, rules, strict=True):
        if rule.id in seen:
            raise ConfigError(f"rule id {rule.id!r} appears twice", path=file, field="rules")
        seen.add(rule.id)
        unknown = sorted(n for n in rule.facts() if not reg.knows(n))
        if unknown:
            raise ConfigError(
                f"rule {rule.id!r} reads unknown fact(s) {', '.join(unknown)} "
                "(declare them in georeview/facts/registry.toml)",
                path=file,
                field=f"rules.{rule.id}",
            )
        if rule.kind == "limit" and (rule.op is None or rule.limit is None or not rule.measure):
            raise ConfigError(
                f"limit rule {rule.id!r} needs measure, op and limit (or limit_param)",
                path=file,
                field=f"rules.{rule.id}",
            )
