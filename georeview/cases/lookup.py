"""Finding a case, its rounds and reviews in the store (read only; shared by service and views)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from georeview.errors import InputError

if TYPE_CHECKING:
    from georeview.cases.models import Case, Review, Round
    from georeview.cases.store import Workspace

__all__ = ["current_determinations", "current_round", "get_case", "latest_review", "report_of"]


def get_case(number: str) -> Case:
    """The case of a number (``SOM-2026-0001``; case-insensitive).

    Raises
    ------
    georeview.errors.InputError
        No case has that number.
    """
    from georeview.cases.models import Case

    case = Case.objects.filter(number=str(number).strip().upper()).first()
    if case is None:
        raise InputError(f"no case {number!r} in this workspace", field="case")
    return case


def current_round(case: Case) -> Round:
    """The case's latest round."""
    rnd = case.rounds.order_by("-number").first()
    if rnd is None:  # pragma: no cover - every case opens with round 1
        raise InputError(f"case {case.number} has no round", field="case")
    return rnd


def latest_review(rnd: Round) -> Review | None:
    """The round's latest review, if it has one."""
    return rnd.reviews.order_by("-number").first()


def report_of(ws: Workspace, review: Review) -> dict[str, Any]:
    """A review's report.json."""
    return dict(json.loads((ws.path(review.folder) / "report.json").read_text()))


def current_determinations(case: Case) -> list[Any]:
    """The case's determinations in force: one per fact, the latest recorded."""
    return list(case.determinations.filter(superseded_by__isnull=True).order_by("fact"))
