"""How a reported value reads in report.html and in the map's popups."""

from __future__ import annotations

from typing import Any


def number_text(value: Any, digits: int = 0, *, units: str = "", missing: str = "—") -> str:
    """A value as text: numbers with thousands separators and *digits* decimals.

    Parameters
    ----------
    value : Any
        ``None`` (shown as *missing*), a bool (``yes`` / ``no``), a number, or anything
        else (shown with ``str``).
    digits : int
        Decimals of a number.
    units : str
        Appended to a number after a space (``"ft"``), never to the other kinds.
    missing : str
        The text of ``None``.
    """
    if value is None:
        return missing
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value:,.{digits}f}" + (f" {units}" if units else "")
    return str(value)
