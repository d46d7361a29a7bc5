"""The package's modules import one another without a cycle.

Two modules that import each other (even inside functions, where Python lets the
cycle pass unnoticed) mean a piece sits in the wrong one: ``rule_facts`` once lived
in map_popups, which itself read the reviewer's wording from reader, while reader
took ``rule_facts`` from map_popups; the version once sat in ``georeview/__init__``,
which imports the public functions, whose modules stamped their outputs with it;
``NEAR_FEATURES`` once sat in facts.sitemap, which reads the ordinance, whose loader
checks every rule against the fact registry, which expanded its families from
``NEAR_FEATURES``. The outside value is the import statements in the source, read
with :mod:`ast` (nothing is imported): module-level, function-level and
``TYPE_CHECKING`` imports all count. ``importlib.import_module`` calls (the command
line's subcommands) are not statements and are not seen; ``__main__`` is skipped.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "georeview"


def _modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package (``__main__`` left out): dotted name -> file."""
    found: dict[str, Path] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module an ``import from`` names (relative ones resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The package module that defines ``name`` (a module, or the longest that holds it)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``module`` imports, anywhere in its source.

    ``from georeview.report import reader`` imports the module ``reader``;
    ``from georeview.report import write_reports`` imports the package
    ``georeview.report`` itself. A submodule's parents, which Python runs first, are
    not counted: a package's ``__init__`` importing its own modules is the layout.
    """
    path = modules[module]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, path.name == "__init__.py")
            for alias in node.names:
                found.add(_owner(f"{source}.{alias.name}", modules) or "")
        elif isinstance(node, ast.Import):
            found |= {_owner(alias.name, modules) or "" for alias in node.names}
    return found - {"", module}


def _graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    modules = _modules(root)
    return {m: _imports(m, modules) for m in modules}


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


def test_import_reader_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A hand-written package: each import form gives the edge written beside it."""
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__main__.py").write_text("from georeview import a\n")
    (pkg / "__init__.py").write_text("from georeview.a import f\n")  # -> georeview.a
    (pkg / "a.py").write_text(
        "import os\n"  # outside the package: no edge
        "def f():\n"
        "    from georeview.sub import b\n"  # a module named in a from-import
        "    return b\n"
    )
    (pkg / "sub" / "__init__.py").write_text("from .b import g\n")  # relative, in a package
    (pkg / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import georeview.a.missing\n"  # an attribute: its module, georeview.a
        "from . import c\n"  # relative, in a module
        "from georeview.sub import g\n"  # a name of the package: the package
    )
    (pkg / "sub" / "c.py").write_text("")
    assert _graph(tmp_path) == {
        "georeview": {"georeview.a"},
        "georeview.a": {"georeview.sub.b"},
        "georeview.sub": {"georeview.sub.b"},
        "georeview.sub.b": {"georeview.a", "georeview.sub.c", "georeview.sub"},
        "georeview.sub.c": set(),
    }
    assert _cycle(_graph(tmp_path)) == ["georeview.a", "georeview.sub.b", "georeview.a"]


def test_package_modules_import_no_cycle() -> None:
    graph = _graph()
    # the reader sees the package's own edges, function-level ones included
    assert "georeview.report.rule_reads" in graph["georeview.report.reader"]
    assert "georeview.rules" in graph["georeview.facts.sitemap"]
    assert "georeview.pipeline.review" in graph["georeview._api"]
    assert _cycle(graph) is None


def test_the_version_is_written_once() -> None:
    """pyproject.toml takes the version from georeview/_version.py; the package re-exports it."""
    import georeview
    from georeview import _version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "georeview._version.__version__"}
    assert georeview.__version__ == _version.__version__


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
