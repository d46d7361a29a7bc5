"""The one place optional dependencies are checked (as pyogrio's ``_compat``).

``import georeview`` loads none of them; a command that needs one calls
:func:`require` first, and a missing extra is one line naming what to install.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from georeview.errors import DependencyError

__all__ = ["EXTRAS", "has", "require"]

#: Optional module -> the pip extra that installs it.
EXTRAS: dict[str, str] = {
    "dask": "dask",
    "distributed": "dask",
    "dask_geopandas": "dask",
    "playwright": "test",
    "duckdb": "bench",
}


def has(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(module: str, *, what: str) -> ModuleType:
    """Import ``module`` or raise :class:`~georeview.errors.DependencyError` in one line.

    Parameters
    ----------
    module : str
        The module to import (``"distributed"``).
    what : str
        What needs it, for the message (``"--workers"``).
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS.get(module.split(".")[0])
        hint = f'pip install "georeview[{extra}]"' if extra else f"pip install {module}"
        raise DependencyError(
            f"{what} needs the optional package {module!r}, which is not installed: {hint}",
            field=what,
        ) from None
