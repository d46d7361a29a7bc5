"""The review's procedure stage: deadlines and money for a regulated site."""

from __future__ import annotations

from typing import Any

from georeview.load import LoadedSubmission

__all__ = ["procedure"]


def procedure(
    sub: LoadedSubmission,
    category: str | None,
    municipality: str,
    facts: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Deadlines (georeview.calendar) and money (georeview.procedure.fees) for a regulated site.

    Returns the report sections ``deadlines`` and ``fees``, and under ``_facts``
    the amounts the fee and security rules read, ``schedule.starts_after_decision``
    (:func:`georeview.calendar.starts_after_decision`), ``schedule.ends_within_permit_term``
    (:func:`georeview.calendar.work_within_term`) and ``schedule.controls_in_time``
    (:func:`georeview.calendar.controls_in_time`). ``facts`` supplies the plan's
    ``plan.controls_install_date``.
    """
    from georeview.calendar import (
        controls_in_time,
        deadlines,
        starts_after_decision,
        work_within_term,
    )
    from georeview.procedure.fees import money

    act = sub.config.activity
    fees = money(
        municipality,
        category=category,
        control_cost_usd=act.control_cost_usd,
        plat_fee_paid=act.plat_fee_paid,
        building_permit_fee_paid=act.building_permit_fee_paid,
        decided={k: v for k, v in (facts or {}).items() if k.startswith("village.")},
    )
    # money.toml names the fact each item's amount gives (``fact``): the item that applies
    # to the category gives it, whatever its id in that municipality.
    money_facts: dict[str, Any] = {}
    for item in fees.items:
        if item.fact is not None and money_facts.get(item.fact) is None:
            money_facts[item.fact] = item.fact_value
    out: dict[str, Any] = {"fees": fees.to_dict(), "_facts": money_facts}
    if sub.config.application_date is not None:
        listed = deadlines(
            municipality,
            application_date=sub.config.application_date,
            category=category,
            building_permit_days=act.building_permit_days,
            start_date=act.start_date,
            controls_install_date=(facts or {}).get("plan.controls_install_date"),
        )
        out["deadlines"] = [d.to_dict() for d in listed]
        out["_facts"]["schedule.starts_after_decision"] = starts_after_decision(
            municipality, listed, sub.config.application_date, act.start_date
        )
        out["_facts"]["schedule.controls_in_time"] = controls_in_time(
            municipality, listed, (facts or {}).get("plan.controls_install_date")
        )
    else:
        out["deadlines"] = []
        out["_facts"]["schedule.starts_after_decision"] = None
        out["_facts"]["schedule.controls_in_time"] = None
    out["_facts"]["schedule.ends_within_permit_term"] = work_within_term(
        municipality,
        application_date=sub.config.application_date,
        start_date=act.start_date,
        end_date=act.end_date,
        category=category,
        building_permit_days=act.building_permit_days,
    )
    return out
