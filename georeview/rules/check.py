"""``georeview rules NAME --check``: everything a review of a municipality would trip on, at once.

Loading an ordinance stops at its first problem (a review must not run on half an ordinance);
this module collects them all, each naming its file and key, so a new municipality's folder
is fixed in one pass. It reuses the loader's checks (:func:`georeview.rules.load.folder_problems`)
and the coverage map's (:func:`georeview.rules.coverage.problems`), and adds:

* the files of the folder (:data:`georeview.rules.expected.FILES`, the ``rule_files``, the text);
* the rules and parameters the code looks up by name (:mod:`georeview.rules.expected`);
* values of the wrong type or out of range: a parameter or a rule's limit or condition value
  against the fact it is compared with (type and units of ``georeview/facts/registry.toml``:
  a ``fraction`` within 0 to 1, areas, lengths and percentages not negative);
* the calendar, money, rainfall and USLE tables read as a review reads them;
* warnings (the review runs): facts of the registry no rule reads, parameters nothing reads,
  rule ids without the municipality's prefix, an ordinance text still another municipality's.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from georeview.errors import GeoReviewError
from georeview.rules.expected import (
    CODE_PARAMETERS,
    CODE_RULES,
    ETJ_KEYS,
    FILES,
    JUDGE_FACTS,
    ParamSpec,
)
from georeview.rules.model import Condition, Ordinance, Rule

__all__ = ["Problem", "check_municipality", "errors"]

#: Comparison operators whose value must be of the fact's type.
_COMPARE = (">=", ">", "<=", "<", "==", "!=")
#: Units whose values cannot be negative (areas, lengths, times, money, rates, slopes).
_NOT_NEGATIVE = ("sq ft", "acres", "ft", "%", "cfs", "USD", "days", "ft per in", "tons/acre/year")
#: Units of a parameter's own ``units`` that ask for a non-negative number.
_PARAM_UNITS = (*_NOT_NEGATIVE, "mi", "in", "gal/sq ft/day")


@dataclass(frozen=True)
class Problem:
    """One problem: the file and key it is in, what is wrong, and whether a review trips."""

    file: str
    key: str
    message: str
    level: Literal["error", "warning"] = "error"

    def line(self) -> str:
        """``FILE: KEY: what is wrong`` (a warning says so before the message)."""
        said = self.message if self.level == "error" else f"warning: {self.message}"
        return ": ".join(p for p in (self.file, self.key, " ".join(said.split())) if p)


def errors(problems: list[Problem]) -> list[Problem]:
    """The problems a review trips on (not the warnings)."""
    return [p for p in problems if p.level == "error"]


def check_municipality(name: str) -> list[Problem]:
    """Every problem of municipality ``name``'s folder on the search path, errors first.

    Raises
    ------
    georeview.errors.ConfigError
        No folder of that name on the search path.
    """
    from georeview.ordinances import MAIN_FILE, folder
    from georeview.rules.load import folder_problems, rule_files

    path = folder(name)
    municipality = path.name.lower()
    missing = _missing_files(path)
    if not (path / MAIN_FILE).is_file():
        return missing
    ordinance, loaded = folder_problems(path)
    out = [_from_error(e, path / MAIN_FILE) for e in loaded]
    if ordinance is not None:
        files = {rid: str(f) for rid, f in rule_files(path).items()}
        out += _code_lookups(ordinance, path, files)
        out += _values(ordinance, path, files)
        out += _tables(municipality, path)
        out += _table_values(path)
        out += _coverage(municipality, ordinance, path, files)
        out += _warnings(ordinance, path, files)
    # A missing file is said once, not again by each reader of it; each problem once;
    # errors first.
    gone = {p.file for p in missing}
    out = [p for p in out if not (p.file in gone and p.key == "")]
    unique = list(dict.fromkeys([*missing, *out]))
    return sorted(unique, key=lambda p: p.level != "error")


def _from_error(exc: GeoReviewError, default: Path) -> Problem:
    return Problem(exc.path or str(default), exc.field or "", exc.message)


def _missing_files(path: Path) -> list[Problem]:
    """ordinance.toml, its rule files, the tables of :data:`FILES` and the coverage text."""
    from georeview.config import read_toml
    from georeview.ordinances import MAIN_FILE

    main = path / MAIN_FILE
    if not main.is_file():
        return [Problem(str(main), "", "file not found: every municipality's folder needs it")]
    names: dict[str, str] = dict(FILES)
    try:
        data = read_toml(main)
        names.update(
            {str(n): "rules (rule_files of ordinance.toml)" for n in data.get("rule_files", ())}
        )
    except GeoReviewError:
        pass  # reported by the loader
    try:
        cov = read_toml(path / "coverage.toml")
        names[str(cov.get("text", {}).get("file", "ordinance.txt"))] = "the adopted text"
    except GeoReviewError:
        names["ordinance.txt"] = "the adopted text"
    return [
        Problem(str(path / n), "", f"file not found; it holds {what}")
        for n, what in names.items()
        if not (path / n).is_file()
    ]


def _code_lookups(ordinance: Ordinance, path: Path, files: dict[str, str]) -> list[Problem]:
    """The rules and parameters the code reads by name (:mod:`georeview.rules.expected`)."""
    from georeview.ordinances import MAIN_FILE

    out: list[Problem] = []
    sitemap = next((n for n in ordinance.rule_files if "sitemap" in n), MAIN_FILE)
    for suffix, what in CODE_RULES.items():
        rid = f"{ordinance.municipality}.{suffix}"
        rule = ordinance.rule(rid)
        if rule is None:
            out.append(Problem(str(path / sitemap), f"rules.{rid}", f"missing rule: {what}"))
        elif not _positive(rule.limit):
            out.append(
                Problem(
                    files.get(rid, str(path / sitemap)),
                    f"rules.{rid}.limit",
                    f"must be a positive number, got {rule.limit!r}: {what}",
                )
            )
    main = str(path / MAIN_FILE)
    for name, spec in CODE_PARAMETERS.items():
        key = f"parameters.{name}"
        if name not in ordinance.parameters:
            if spec.required:
                out.append(
                    Problem(main, key, f"missing parameter, read by the code ({spec.used_by})")
                )
            continue
        wrong = _param_problem(spec, ordinance.parameters[name].value)
        if wrong:
            out.append(Problem(main, key, wrong))
    return out


def _param_problem(spec: ParamSpec, value: Any) -> str:
    """What is wrong with a parameter the code reads (``""`` when nothing)."""
    if spec.kind == "number":
        return "" if _positive(value) else f"must be a positive number, got {value!r}"
    if spec.kind == "storm":
        ok = value in storm_keys()
        return "" if ok else f"must be one of {', '.join(storm_keys())}, got {value!r}"
    if spec.kind == "storms":
        ok = isinstance(value, list) and all(v in storm_keys() for v in value)
        return "" if ok else f"must be a list of {', '.join(storm_keys())}, got {value!r}"
    if not isinstance(value, dict):
        return f"must be a table of miles by {', '.join(ETJ_KEYS)}, got {value!r}"
    missing = [k for k in ETJ_KEYS if k not in value]
    if missing:
        return f"gives no reach (miles) for {', '.join(missing)}"
    bad = {k: v for k, v in value.items() if not _number(v) or v < 0}
    return f"reach must be miles, 0 or more, got {bad}" if bad else ""


def storm_keys() -> tuple[str, ...]:
    """The storm keys a parameter may name (``1yr`` ... ``100yr``, the engineering inputs')."""
    from typing import get_args

    from georeview.measure.engineering_inputs import StormKey

    return tuple(get_args(StormKey))


def _number(value: Any) -> bool:
    """A finite real number (a TOML bool is not one)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _positive(value: Any) -> bool:
    return _number(value) and value > 0


def _values(ordinance: Ordinance, path: Path, files: dict[str, str]) -> list[Problem]:
    """Parameters by their units; rule limits and condition values by the fact they compare."""
    from georeview.ordinances import MAIN_FILE

    main = str(path / MAIN_FILE)
    out: list[Problem] = []
    for name, p in ordinance.parameters.items():
        values = p.value.values() if isinstance(p.value, dict) else [p.value]
        if p.units in _PARAM_UNITS and not all(_number(v) and v >= 0 for v in values):
            out.append(
                Problem(
                    main,
                    f"parameters.{name}",
                    f"must be a number of {p.units}, 0 or more, got {p.value!r}",
                )
            )
        if p.units == "fraction" and not all(_number(v) and 0 <= v <= 1 for v in values):
            out.append(
                Problem(main, f"parameters.{name}", f"a fraction must be 0 to 1, got {p.value!r}")
            )
    for rule in ordinance.rules:
        file = files.get(rule.id, main)
        if rule.measure and rule.limit is not None:
            where = (
                (main, f"parameters.{rule.limit_param}")
                if rule.limit_param
                else (file, f"rules.{rule.id}.limit")
            )
            wrong = _value_problem(rule.measure, rule.limit)
            if wrong:
                out.append(Problem(*where, f"{wrong} (rule {rule.id})"))
        for key, cond in _conditions(rule):
            wrong = _value_problem(cond.fact or "", cond.value) if cond.op in _COMPARE else ""
            if wrong:
                where = (
                    (main, f"parameters.{cond.param}")
                    if cond.param
                    else (file, f"rules.{rule.id}.{key}")
                )
                out.append(Problem(*where, f"{wrong} (rule {rule.id})"))
    return out


def _conditions(rule: Rule) -> Iterator[tuple[str, Condition]]:
    """Every leaf condition of a rule with the key it hangs from."""

    def walk(c: Condition | None, key: str) -> Iterator[tuple[str, Condition]]:
        if c is None:
            return
        if c.fact:
            yield key, c
        for sub in (*(c.all or ()), *(c.any or ()), *((c.not_,) if c.not_ else ())):
            yield from walk(sub, key)

    yield from walk(rule.when, "when")
    yield from walk(rule.applies_when, "applies_when")
    for k, caveat in enumerate(rule.caveats):
        yield from walk(caveat.when, f"caveats[{k}].when")


def _value_problem(fact_name: str, value: Any) -> str:
    """What is wrong with comparing fact ``fact_name`` with ``value`` (``""`` when nothing)."""
    from georeview.facts.registry import registry

    fact = registry().get(fact_name)
    if fact is None or value is None:
        return ""  # an unknown fact is the loader's problem
    if fact.type in ("number", "integer"):
        if not _number(value):
            return f"{fact_name} is a number ({fact.units or 'no units'}); got {value!r}"
        if fact.units == "fraction" and not 0 <= value <= 1:
            return f"{fact_name} is a fraction (0 to 1); got {value!r}"
        if fact.units in _NOT_NEGATIVE and value < 0:
            return f"{fact_name} is in {fact.units}, never negative; got {value!r}"
    expected = {"bool": bool, "text": str, "date": dt.date}.get(fact.type)
    if expected is not None and not isinstance(value, expected):
        return f"{fact_name} is {fact.type}; got {value!r}"
    return ""


def _tables(municipality: str, path: Path) -> list[Problem]:
    """Calendar, money, rainfall and USLE tables, read the way a review reads them."""
    from georeview.calendar import deadlines
    from georeview.measure.runoff import design_rainfall_in
    from georeview.procedure.fees import money
    from georeview.soil_loss import r_factor_for

    reads = {
        "calendar.toml": lambda: deadlines(
            municipality, application_date=dt.date(2000, 1, 3), category=None
        ),
        "money.toml": lambda: money(municipality, category=None),
        "rainfall.toml": lambda: design_rainfall_in(municipality),
        "usle.toml": lambda: r_factor_for(municipality),
    }
    out: list[Problem] = []
    for name, read in reads.items():
        if not (path / name).is_file():
            continue  # reported as a missing file
        try:
            read()
        except GeoReviewError as exc:
            out.append(_from_error(exc, path / name))
        except (KeyError, TypeError, ValueError, AttributeError, OSError) as exc:
            # Tables a review reads without a schema of their own: a key or type the code
            # expects is missing; say which.
            out.append(Problem(str(path / name), "", f"cannot be read: {type(exc).__name__} {exc}"))
    return out


def _table_values(path: Path) -> list[Problem]:
    """Design depths (in) and the R factor: positive numbers, storms the code knows."""
    from georeview.config import read_toml

    out: list[Problem] = []
    rain, usle = path / "rainfall.toml", path / "usle.toml"
    try:
        depths = read_toml(rain).get("depths_in", {}) if rain.is_file() else {}
        r = read_toml(usle).get("r_factor", {}) if usle.is_file() else {}
    except GeoReviewError:
        return out  # said by _tables
    for storm, depth in depths.items() if isinstance(depths, dict) else ():
        if storm not in storm_keys() or not _positive(depth):
            out.append(
                Problem(
                    str(rain),
                    f"depths_in.{storm}",
                    f"must be a storm of {', '.join(storm_keys())} with a depth in inches "
                    f"above 0, got {depth!r}",
                )
            )
    value = r.get("value") if isinstance(r, dict) else None
    if value is not None and not _positive(value):
        out.append(Problem(str(usle), "r_factor.value", f"must be above 0, got {value!r}"))
    return out


def _coverage(
    municipality: str, ordinance: Ordinance, path: Path, files: dict[str, str]
) -> list[Problem]:
    """The coverage map's problems: unknown rules, citations of paragraphs the text lacks."""
    from georeview.rules.coverage import problems

    if not (path / "coverage.toml").is_file():
        return []
    try:
        found = problems(municipality, ordinance)
    except GeoReviewError as exc:
        return [_from_error(exc, path / "coverage.toml")]
    except (KeyError, TypeError, ValueError, AttributeError, OSError) as exc:
        return [
            Problem(str(path / "coverage.toml"), "", f"cannot be read: {type(exc).__name__} {exc}")
        ]
    out = []
    for p in found:
        rid = p.key.removeprefix("rules.").removesuffix(".citation")
        file = (
            files.get(rid, str(path / "ordinance.toml"))
            if p.file == "rules"
            else str(path / p.file)
        )
        out.append(Problem(file, p.key, p.message))
    return out


def _warnings(ordinance: Ordinance, path: Path, files: dict[str, str]) -> list[Problem]:
    """What a review does not trip on but a new folder should look at."""
    from georeview.facts.registry import registry
    from georeview.ordinances import MAIN_FILE, municipalities

    main = str(path / MAIN_FILE)
    m = ordinance.municipality
    out = [
        Problem(
            files.get(r.id, main), f"rules.{r.id}", f"id does not start with {m + '.'!r}", "warning"
        )
        for r in ordinance.rules
        if not r.id.startswith(f"{m}.")
    ]
    read: set[str] = set()
    for r in ordinance.rules:
        read |= r.facts()
    if ordinance.reach.subdivision_when is not None:
        read |= ordinance.reach.subdivision_when.facts()
    for interp in ordinance.interpretations.values():
        read |= {interp.determined_by, *interp.reads}
    unread: dict[str, list[str]] = {}
    for name in registry().facts:
        if name not in read and not name.startswith(JUDGE_FACTS):
            unread.setdefault(name.split(".")[0], []).append(name)
    out += [
        Problem(
            "georeview/facts/registry.toml",
            f"facts.{group}",
            f"{len(names)} fact(s) no rule of {m} reads: {', '.join(names)}",
            "warning",
        )
        for group, names in sorted(unread.items())
    ]
    used = {r.limit_param for r in ordinance.rules} | {
        c.param for r in ordinance.rules for _, c in _conditions(r)
    }
    out += [
        Problem(
            main,
            f"parameters.{name}",
            "no rule (limit_param, param) and no code reads it",
            "warning",
        )
        for name in ordinance.parameters
        if name not in used and name not in CODE_PARAMETERS
    ]
    if ": copy of " in ordinance.title:
        # set by `georeview ordinance new` (ordinances.scaffold), to be replaced
        out.append(Problem(main, "title", f"still says it is a copy: {ordinance.title}", "warning"))
    text = path / "ordinance.txt"
    for other, where in municipalities().items():
        theirs = where / "ordinance.txt"
        same = other != m and text.is_file() and theirs.is_file()
        if same and text.read_bytes() == theirs.read_bytes():
            out.append(
                Problem(
                    str(text),
                    "",
                    f"is the text of {other} (copied, not yet this municipality's)",
                    "warning",
                )
            )
    return out
