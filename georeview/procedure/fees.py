"""Money a permit involves: fees, security, appeal fees and forfeiture ranges.

All amounts, percentages, waivers and citations are data in each municipality's
``ordinances/<m>/money.toml``; this module only applies the kinds of item found there. Each
``[[items]]`` is one line of the money section of the report, of a kind:

``fee``
    A fixed ``amount_usd``; ``waived_by`` names a fact (``plat_fee_paid``,
    ``building_permit_fee_paid``) that waives it when true. No ``amount_usd``: the amount is
    not in the ordinance (see ``status``).
``actual_cost``
    An amount the ordinance leaves to actual costs (no number to compute);
    ``interest_percent_per_year`` is the interest the ordinance adds to it.
``percent_of_control_cost``
    A percent of the estimated cost of the control measures. ``determined_by`` names the
    Village's fact that holds the estimate the ordinance rests it on (the Village
    Engineer's); until it is recorded, the amount on the applicant's estimate is shown
    as provisional (``needs_info``), never as due.
``forfeiture_per_day``
    A range ``min_usd``..``max_usd`` per offence, each day a separate offence.
``discretionary``
    Something the official "may require"; no amount.

``when = "appeal"``: owed only if an appeal or variance is filed (status ``if_appealed``);
``categories``: the categories it applies to (empty: every one); ``quote``: the ordinance's
words, shown in the report; ``fact``: the fact (fact registry) whose value the item's amount
is, read by the ordinance's rules (``fees.application_usd``), so no item id is looked up in
code.

A top-level ``[waiver]`` (``fact``, ``kinds``, ``citation``, ``quote``) waives every item of
those kinds when the Village's fact is true (the Village's own activity, which needs no
permit or fees).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from georeview.errors import ConfigError, InputError
from georeview.procedure.categories import for_category, only_for

__all__ = ["MoneyItem", "MoneyResult", "money"]

logger = logging.getLogger(__name__)

_CENT = Decimal("0.01")


def _usd(value: Decimal) -> float:
    """Round to whole cents, half up, and return a float."""
    return float(value.quantize(_CENT, rounding=ROUND_HALF_UP))


@dataclass(frozen=True)
class MoneyItem:
    """One line of the money section of a report.

    Attributes
    ----------
    id : str
        Stable identifier from ``money.toml``.
    name : str
        What the money is.
    amount_usd : float or None
        The amount due, in US dollars; None when the ordinance gives no number (set by resolution,
        actual costs, discretionary) or a fact is missing.
    status : str
        ``due``, ``waived``, ``needs_info``, ``see_schedule``, ``actual_cost``,
        ``discretionary``, ``if_appealed`` or ``range``.
    citation : str
        Ordinance section.
    note : str
        Conditions and what is missing, in words.
    min_usd, max_usd : float or None
        Range of a forfeiture per offense (per day of violation).
    quote : str
        The ordinance's words.
    """

    id: str
    name: str
    amount_usd: float | None
    status: str
    citation: str
    note: str
    min_usd: float | None = None
    max_usd: float | None = None
    quote: str = ""
    #: The fact the amount gives the rules (``fact`` in money.toml), or None.
    fact: str | None = None

    @property
    def fact_value(self) -> float | None:
        """The amount as the value of :attr:`fact`: known only when due or waived."""
        return self.amount_usd if self.status in ("due", "waived") else None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "id": self.id,
            "name": self.name,
            "amount_usd": self.amount_usd,
            "status": self.status,
            "citation": self.citation,
            "note": self.note,
            "min_usd": self.min_usd,
            "max_usd": self.max_usd,
            "quote": self.quote,
        }


@dataclass(frozen=True)
class MoneyResult:
    """The money items of one permit.

    Attributes
    ----------
    municipality : str
        Municipality the items come from.
    category : str or None
        ``major``, ``minor`` or None (unknown).
    items : tuple of MoneyItem
        In the order of ``money.toml``.
    """

    municipality: str
    category: str | None
    items: tuple[MoneyItem, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "municipality": self.municipality,
            "category": self.category,
            "items": [item.to_dict() for item in self.items],
        }


def _check_cost(control_cost_usd: float | None) -> Decimal | None:
    """Validate the estimated control-measure cost."""
    if control_cost_usd is None:
        return None
    if isinstance(control_cost_usd, bool) or not isinstance(control_cost_usd, int | float):
        raise InputError(
            f"control_cost_usd must be a number, got {control_cost_usd!r}",
            field="control_cost_usd",
        )
    if not math.isfinite(control_cost_usd) or control_cost_usd < 0:
        raise InputError(
            f"control_cost_usd must be a finite amount >= 0, got {control_cost_usd!r}",
            field="control_cost_usd",
        )
    return Decimal(str(control_cost_usd))


def _item(
    spec: dict[str, Any],
    facts: dict[str, Any],
    cost: Decimal | None,
    decided: Mapping[str, Any],
) -> MoneyItem:
    """Turn one configured money rule into a report line."""
    kind = spec["kind"]
    common = {
        "id": spec["id"],
        "name": spec["name"],
        "citation": spec["citation"],
        "quote": spec.get("quote", ""),
        "fact": spec.get("fact"),
    }
    note = spec.get("note", "")
    if kind == "fee":
        if "amount_usd" not in spec:
            status = spec.get("status", "see_schedule")
            return MoneyItem(**common, amount_usd=None, status=status, note=note)
        amount = float(spec["amount_usd"])
        if spec.get("when") == "appeal":
            return MoneyItem(**common, amount_usd=amount, status="if_appealed", note=note)
        waiver = spec.get("waived_by")
        if waiver is None:
            return MoneyItem(**common, amount_usd=amount, status="due", note=note)
        if facts.get(waiver) is None:
            asked = waiver.replace("_", " ")
            return MoneyItem(
                **common,
                amount_usd=amount,
                status="needs_info",
                note=f"{note} Not known whether {asked}: ${amount:,.2f} unless waived.",
            )
        if facts[waiver]:
            return MoneyItem(**common, amount_usd=0.0, status="waived", note=note)
        return MoneyItem(**common, amount_usd=amount, status="due", note=note)
    if kind == "actual_cost":
        if "interest_percent_per_year" in spec:
            note = f"{note} Plus interest at {spec['interest_percent_per_year']}% per year."
        return MoneyItem(**common, amount_usd=None, status="actual_cost", note=note)
    if kind == "discretionary":
        return MoneyItem(**common, amount_usd=None, status="discretionary", note=note)
    if kind == "percent_of_control_cost":
        return _percent_item(spec, common, note, cost, decided)
    if kind == "forfeiture_per_day":
        return MoneyItem(
            **common,
            amount_usd=None,
            status="range",
            note=note,
            min_usd=float(spec["min_usd"]),
            max_usd=float(spec["max_usd"]),
        )
    raise ConfigError(
        f"unknown money rule kind {kind!r}",
        path="money.toml",
        field=f"items.{spec['id']}.kind",
    )


def _percent_item(
    spec: dict[str, Any],
    common: dict[str, Any],
    note: str,
    cost: Decimal | None,
    decided: Mapping[str, Any],
) -> MoneyItem:
    """A percent of the control cost: on the Village's estimate, or provisional."""
    percent = Decimal(str(spec["percent"]))
    by = spec.get("determined_by")
    village_cost = _check_cost(decided.get(by)) if by else None
    if village_cost is not None:
        amount = _usd(village_cost * percent / 100)
        return MoneyItem(
            **common,
            amount_usd=amount,
            status="due",
            note=f"{note} {percent}% of the Village's estimate ${_usd(village_cost):,.2f} "
            f"= ${amount:,.2f}.",
        )
    if cost is None:
        return MoneyItem(
            **common,
            amount_usd=None,
            status="needs_info",
            note=f"{note} Give the estimated control-measure cost to compute it.",
        )
    amount = _usd(cost * percent / 100)
    if by is None:
        return MoneyItem(
            **common,
            amount_usd=amount,
            status="due",
            note=f"{note} {percent}% of ${_usd(cost):,.2f} = ${amount:,.2f}.",
        )
    return MoneyItem(
        **common,
        amount_usd=amount,
        status="needs_info",
        note=f"{note} Provisional: {percent}% of the applicant's estimate ${_usd(cost):,.2f} "
        f"= ${amount:,.2f}; the amount is set on the Village's estimate ({by}), not yet "
        "recorded.",
    )


def _waived(item: MoneyItem, waiver: Mapping[str, Any], spec: Mapping[str, Any]) -> MoneyItem:
    """The item waived by the money table's ``[waiver]`` (the Village's own activity)."""
    if spec["kind"] not in waiver.get("kinds", ()):
        return item
    why = f"Waived ({waiver['citation']}): \u201c{waiver['quote']}\u201d"
    return replace(item, amount_usd=0.0, status="waived", note=f"{why} {item.note}".strip())


def money(
    municipality: str,
    *,
    category: str | None,
    control_cost_usd: float | None = None,
    plat_fee_paid: bool | None = None,
    building_permit_fee_paid: bool | None = None,
    decided: Mapping[str, Any] | None = None,
) -> MoneyResult:
    """List the fees, security, appeal fees and forfeiture ranges of a permit.

    Parameters
    ----------
    municipality : str
        ``"somers"`` or ``"deerfield"`` (an entry of ``money.toml``).
    category : {"major", "minor"} or None
        The activity's category; None lists every category's items, each ``needs_info``
        unless it applies to every category.
    control_cost_usd : float, optional
        Estimated cost of all required control measures (Deerfield 31.12(2)(A)), US dollars.
    plat_fee_paid : bool, optional
        Plat or certified survey map review fees paid for the same project (31.11(1) waiver).
    building_permit_fee_paid : bool, optional
        Building permit fee paid for the same activity (31.11(2) waiver).
    decided : mapping, optional
        The Village's determinations (``village.*`` facts): the control-cost estimate an
        item is ``determined_by``, and the fact of the table's ``[waiver]``.

    Returns
    -------
    MoneyResult
        One item per applicable line of ``money.toml``.

    Raises
    ------
    georeview.errors.ConfigError
        Unknown municipality.
    georeview.errors.InputError
        Unknown category or an invalid control cost.
    """
    from georeview.ordinances import table

    spec_table = table(municipality, "money")
    listed = for_category(spec_table.get("items", []), category)
    cost = _check_cost(control_cost_usd)
    facts = {"plat_fee_paid": plat_fee_paid, "building_permit_fee_paid": building_permit_fee_paid}
    decided = decided or {}
    waiver = spec_table.get("waiver") or {}
    items = []
    for spec, only in listed:
        item = _item(spec, facts, cost, decided)
        if waiver and decided.get(waiver["fact"]) is True:
            item = _waived(item, waiver, spec)
        if only and item.status != "waived":
            item = replace(
                item,
                name=only_for(item.name, only),
                status="needs_info",
                note=f"{item.note} Applies only to {' or '.join(only)} activities; "
                "the category is not known.",
            )
        items.append(item)
    logger.debug("%d money items for %s (%s)", len(items), municipality, category)
    key = str(municipality).strip().lower()
    return MoneyResult(municipality=key, category=category, items=tuple(items))
