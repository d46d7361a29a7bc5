"""Which lines of a procedure table apply to an activity's category.

A deadline of ``calendar.toml`` and an item of ``money.toml`` may carry ``categories``:
the categories of land disturbing activity it applies to (empty or absent: every one).
:func:`for_category` is the one reading of that key, for the deadlines
(:func:`georeview.calendar.deadlines`) and the money (:func:`georeview.procedure.fees.money`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from georeview.errors import InputError

__all__ = ["CATEGORIES", "for_category", "only_for"]

#: The categories an activity may be classified in (``classification.category``).
CATEGORIES = ("major", "minor")

_Line = TypeVar("_Line", bound=Mapping[str, Any])


def for_category(
    lines: Iterable[_Line], category: str | None
) -> list[tuple[_Line, tuple[str, ...]]]:
    """The lines that apply to ``category``, each with the categories it is limited to.

    Parameters
    ----------
    lines : iterable of mapping
        Table entries, each with an optional ``categories`` list.
    category : {"major", "minor"} or None
        The activity's category; None (not known yet) keeps every line.

    Returns
    -------
    list of (line, categories)
        In the given order, without the lines of other categories. ``categories`` is
        what the line is limited to when ``category`` is None and the line does not
        apply to every category (the caller marks it), else ``()``.

    Raises
    ------
    georeview.errors.InputError
        ``category`` is neither one of :data:`CATEGORIES` nor None.
    """
    if category is not None and category not in CATEGORIES:
        raise InputError(
            f"category must be 'major', 'minor' or None, got {category!r}", field="category"
        )
    out = []
    for line in lines:
        cats = tuple(line.get("categories", ()))
        if cats and category is not None and category not in cats:
            continue
        out.append((line, cats if category is None else ()))
    return out


def only_for(name: str, categories: Iterable[str]) -> str:
    """``name`` marked as applying to ``categories`` only: ``"Permit fee [major only]"``."""
    return f"{name} [{', '.join(categories)} only]"
