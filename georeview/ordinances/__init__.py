"""Where the municipalities live: one folder of data each, found on a search path.

A municipality is a folder ``<name>/`` holding everything georeview knows about its
ordinance, as data:

``ordinance.toml``
    Title, source, reach, category labels, the parameters the measures use
    (``[parameters]``, each with its citation) and the first rules.
``plan.toml``, ``sitemap.toml``, ``engineering.toml`` (named in ``rule_files``)
    More rules.
``calendar.toml``, ``money.toml``, ``rainfall.toml``, ``usle.toml``
    How its days are counted and its deadlines; fees and forfeitures; design rainfall;
    the USLE R factor.
``coverage.toml``
    Every paragraph of the adopted text mapped to the rules that check it.

Folders listed in ``$GEOREVIEW_ORDINANCES`` (path-separated, like ``PATH``) are
searched before the folders shipped in this package, so a Village keeps its own rule
pack outside the package, with no fork and no reinstall. A folder on the path either
is a municipality (it holds ``ordinance.toml``) or holds municipality folders.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from georeview.errors import ConfigError

__all__ = ["ENV_VAR", "MAIN_FILE", "folder", "municipalities", "search_path", "table"]

#: Environment variable naming extra folders of municipalities.
ENV_VAR = "GEOREVIEW_ORDINANCES"
#: The file that makes a folder a municipality.
MAIN_FILE = "ordinance.toml"


def search_path(environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The folders searched for municipalities, first match wins.

    Parameters
    ----------
    environ : mapping, optional
        Environment to read ``$GEOREVIEW_ORDINANCES`` from (default ``os.environ``).
    """
    env = (os.environ if environ is None else environ).get(ENV_VAR, "")
    extra = [Path(p).expanduser() for p in env.split(os.pathsep) if p.strip()]
    return (*extra, Path(__file__).resolve().parent)


def _candidates(root: Path) -> list[Path]:
    if (root / MAIN_FILE).is_file():
        return [root]
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / MAIN_FILE).is_file())


def municipalities(environ: Mapping[str, str] | None = None) -> dict[str, Path]:
    """Every municipality on the search path: name -> folder (the first one found wins)."""
    found: dict[str, Path] = {}
    for root in search_path(environ):
        for p in _candidates(root):
            found.setdefault(p.name.lower(), p)
    return dict(sorted(found.items()))


def folder(name: str, environ: Mapping[str, str] | None = None) -> Path:
    """The data folder of municipality ``name``.

    Raises
    ------
    georeview.errors.ConfigError
        No folder of that name on the search path (the known ones are listed).
    """
    known = municipalities(environ)
    key = str(name).strip().lower()
    if key not in known:
        raise ConfigError(
            f"no ordinance folder for municipality {name!r}; known: {', '.join(known) or 'none'}"
            f" (searched {os.pathsep.join(map(str, search_path(environ)))})",
            field="municipality",
        )
    return known[key]


def table(name: str, part: str) -> dict[str, Any]:
    """Read ``<folder of name>/<part>.toml`` (cached; callers must not mutate it).

    Raises
    ------
    georeview.errors.ConfigError
        Unknown municipality, or its folder lacks the file (named).
    """
    return _read(folder(name) / f"{part}.toml")


@functools.cache
def _read(path: Path) -> dict[str, Any]:
    from georeview.config import read_toml

    if not path.is_file():
        raise ConfigError("the municipality's folder has no such file", path=path)
    return read_toml(path)
