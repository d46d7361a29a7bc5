"""The report modules import one another without a cycle.

Two modules that import each other (even inside functions, where Python lets the
cycle pass unnoticed) mean a piece sits in the wrong one: ``rule_facts`` once lived
in map_popups, which itself read the reviewer's wording from reader, while reader
took ``rule_facts`` from map_popups. The outside value is the import statements in
the source, read with :mod:`ast` (nothing is imported).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPORT = Path(__file__).resolve().parents[1] / "georeview" / "report"
PACKAGE = "georeview.report"


def _imports(path: Path) -> set[str]:
    """The ``georeview.report.<module>`` modules that ``path`` imports, anywhere in it."""
    names = {p.stem for p in REPORT.glob("*.py") if p.stem != "__init__"}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == PACKAGE:  # from georeview.report import reader
                found |= {a.name for a in node.names if a.name in names}
            elif node.module.startswith(PACKAGE + "."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names if a.name.startswith(PACKAGE + ".")}
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (module -> the modules it imports), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return [*path[path.index(n) :], n]
            if n not in state and (found := visit(n)) is not None:
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)) is not None:
            return found
    return None


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_report_modules_import_no_cycle() -> None:
    # the package's __init__ importing its own modules is the layout, not a cycle
    graph = {p.stem: _imports(p) for p in REPORT.glob("*.py") if p.stem != "__init__"}
    assert "rule_reads" in graph["reader"]
    assert _cycle(graph) is None


def test_reader_does_not_load_the_map_modules() -> None:
    """The reviewer's wording is read without the map's popups (nor geopandas)."""
    code = (
        "import sys, georeview.report.reader; "
        "print(sorted(m for m in sys.modules if m.startswith('georeview.report.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "georeview.report.map_popups" not in out
    assert "georeview.report.rule_reads" in out
