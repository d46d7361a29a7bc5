"""The category filter shared by the deadlines and the money of a permit.

Outside values: hand-written tables, and the ``categories`` keys of Deerfield's
``calendar.toml`` and ``money.toml`` read here with :mod:`tomllib` (31.11 and 31.12
set fees, securities and deadlines for major or minor activities only).
"""

from __future__ import annotations

import datetime as dt
import tomllib
from pathlib import Path

import pytest

from georeview.calendar import deadlines
from georeview.errors import InputError
from georeview.procedure.categories import for_category, only_for
from georeview.procedure.fees import money

DEERFIELD = Path(__file__).resolve().parents[1] / "georeview" / "ordinances" / "deerfield"
LINES = [
    {"id": "every"},
    {"id": "major", "categories": ["major"]},
    {"id": "minor", "categories": ["minor"]},
    {"id": "empty", "categories": []},  # empty: every category
    {"id": "both", "categories": ["major", "minor"]},
]


def _ids(chosen: list[tuple[dict, tuple[str, ...]]]) -> list[tuple[str, tuple[str, ...]]]:
    return [(line["id"], only) for line, only in chosen]


def test_known_category_keeps_its_lines_unmarked() -> None:
    assert _ids(for_category(LINES, "major")) == [
        ("every", ()),
        ("major", ()),
        ("empty", ()),
        ("both", ()),
    ]
    assert [i for i, _ in _ids(for_category(LINES, "minor"))] == ["every", "minor", "empty", "both"]


def test_unknown_category_keeps_every_line_marked_with_its_categories() -> None:
    assert _ids(for_category(LINES, None)) == [
        ("every", ()),
        ("major", ("major",)),
        ("minor", ("minor",)),
        ("empty", ()),
        ("both", ("major", "minor")),
    ]


@pytest.mark.parametrize("category", ["huge", "Major", ""])
def test_other_category_is_refused(category: str) -> None:
    with pytest.raises(InputError, match="category must be 'major', 'minor' or None") as err:
        for_category(LINES, category)
    assert err.value.field == "category"


def test_only_for_words() -> None:
    assert only_for("Security", ["major"]) == "Security [major only]"
    assert only_for("Fee", ("major", "minor")) == "Fee [major, minor only]"


def _limited(table: str, key: str) -> dict[str, list[str]]:
    data = tomllib.loads((DEERFIELD / f"{table}.toml").read_text(encoding="utf-8"))
    return {e["id"]: e["categories"] for e in data[key] if e.get("categories")}


def test_deadlines_and_money_mark_the_same_lines_as_their_tables() -> None:
    """Category unknown: each line limited to a category in the table says so in its name."""
    listed = deadlines("deerfield", application_date=dt.date(2025, 11, 20), category=None)
    marked = {d.id for d in listed if d.name.endswith(" only]")}
    assert marked == set(_limited("calendar", "deadlines"))
    assert marked  # Deerfield limits some deadlines (31.12) to one category

    items = money("deerfield", category=None).items
    limited = _limited("money", "items")
    assert {i.id for i in items if i.name.endswith(" only]")} == set(limited)
    for i in items:
        if i.id in limited:
            assert i.name.endswith(only_for("", limited[i.id]))
            assert i.status == "needs_info"
