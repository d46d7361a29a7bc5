"""No ordinance knowledge in Python: section numbers and parameter values live in the data.

Every string literal of georeview/**/*.py that is not a docstring is scanned (comments are not
string literals, so they may cite sections). A section number of either chapter (17.xx or
31.xx) or a "§" must not appear, and no module may define a constant holding one of the
parameter values listed in the issue (1,320 ft trace, 20 % steep threshold, 1,500 gal/sq ft/day,
3 ft basin depth, 4 ft fence, 5 ft contour interval, 1.5 / 3 mile reaches): they are read from
``georeview/ordinances/<m>/ordinance.toml`` ``[parameters]``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import georeview

PACKAGE = Path(georeview.__file__).parent
SECTION = re.compile(r"§\s?\d|\b(?:17|31)\.\d{2}\b")
#: Values of the ordinances' parameters (trace length, steep threshold, settling rate, basin
#: depth and fence, contour interval, extraterritorial reaches, larger-site acres).
PARAMETER_VALUES = {1320.0, 20.0, 1500.0, 3.0, 4.0, 5.0, 1.5}
#: A constant named like a measure (unit or quantity in its name) holding one of those values
#: is an ordinance parameter in disguise.
MEASURE_NAME = re.compile(r"(_PCT|_FT|FT_|MILES|ACRES|_GPD|STORM|SLOPE|DEPTH|FENCE|INTERVAL)")
#: Constants that were ordinance parameters and must not come back, whatever their value.
FORBIDDEN = {"QUARTER_MILE_FT", "STEEP_SLOPE_PCT", "ETJ_MILES_SMALL", "ETJ_MILES_LARGE",
             "MIN_DEPTH_FT", "MIN_FENCE_HEIGHT_FT", "BASIN_STORM", "PEAK_STORMS", "CONTEXT_M"}
#: (module, constant) pairs allowed to hold such a value, with the reason.
ALLOWED_CONSTANTS = {
    # the contract default of DESIGN §2.5 sediment.basin_area_sqft(..., settling_rate=1500)
    ("sediment.py", "SETTLING_RATE_GPD_PER_SQFT"),
}


def _docstring_nodes(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstring_nodes(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
    ]


def test_no_section_number_in_python():
    offenders = [
        f"{p.relative_to(PACKAGE)}:{line}: {text[:60]!r}"
        for p in sorted(PACKAGE.rglob("*.py"))
        for line, text in _strings(p)
        if SECTION.search(text)
    ]
    assert not offenders, "\n".join(offenders)


def test_no_parameter_constants_in_python():
    offenders = []
    for p in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in tree.body:
            if not isinstance(node, (ast.Assign, ast.AnnAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            value = node.value
            for name in names:
                if (p.name, name) in ALLOWED_CONSTANTS:
                    continue
                if name in FORBIDDEN:
                    offenders.append(f"{p.relative_to(PACKAGE)}: {name}")
                    continue
                number = (
                    isinstance(value, ast.Constant)
                    and isinstance(value.value, (int, float))
                    and not isinstance(value.value, bool)
                )
                if number and MEASURE_NAME.search(name) and float(value.value) in PARAMETER_VALUES:
                    offenders.append(f"{p.relative_to(PACKAGE)}: {name} = {value.value}")
    assert not offenders, "\n".join(offenders)


def test_the_guard_can_fail(tmp_path):
    # the scanner sees a section number in a plain string and ignores it in a docstring
    f = tmp_path / "m.py"
    f.write_text('"""Deerfield 31.06(3)(B)."""\nX = "Deerfield 31.06(3)(B)"\n', encoding="utf-8")
    hits = [t for _, t in _strings(f) if SECTION.search(t)]
    assert hits == ["Deerfield 31.06(3)(B)"]
