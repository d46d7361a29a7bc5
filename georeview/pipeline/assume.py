"""What a screening assumes, and which columns of the parcel file it reads.

``--assume`` states the activity assumed on every parcel (:func:`parse_assume`);
``--columns``/``--id-field`` map the parcel file's fields to roles (:func:`parse_columns`),
the Wisconsin statewide parcel schema by default.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from georeview.config import Activity, parse_model
from georeview.errors import (
    ConfigError,
)
from georeview.units import acres_to_sqft

#: Wisconsin statewide parcel schema (V6+, State Cartographer's Office): role -> field.
WISCONSIN_COLUMNS: dict[str, str] = {
    "id": "PARCELID",
    "propclass": "PROPCLASS",
    "auxclass": "AUXCLASS",
    "acres": "GISACRES",
    "owner": "OWNERNME1",
    "address": "SITEADRESS",
}


#: Roles a column map may name.
COLUMN_ROLES = tuple(WISCONSIN_COLUMNS)


#: Class codes (PROPCLASS / AUXCLASS tokens) that map to an activity kind of the
#: ordinances' exclusions: class 4 agricultural (Wis. Stat. § 70.32(2)(a)4), X2 state-owned
#: exempt land (AUXCLASS "X2" of the statewide schema).
CLASS_KINDS: dict[str, str] = {"4": "agricultural", "X2": "state_agency"}


#: What an assumed activity does not mention, it does not do (a screening states the
#: whole activity); other [activity] facts left out stay unknown.
SCREEN_DEFAULTS: dict[str, Any] = {
    "fill_cubic_yards": 0,
    "pipe_length_ft": 0,
    "lots_created": 0,
    "kinds": [],
}


@dataclass(frozen=True)
class Assumption:
    """The activity assumed on every parcel (``--assume``).

    Attributes
    ----------
    disturb : {"whole", "none", "sqft", "fraction"}
        How much of each parcel is disturbed: all of it, none, a stated area
        (``amount`` square feet, capped at the parcel's area) or a fraction.
    amount : float or None
        Square feet (``sqft``) or fraction (``fraction``).
    activity : Activity
        The other facts of the activity (kinds, fill, pipe length, lots, ...).
    text : str
        The option as given (recorded in the manifest).
    """

    disturb: str = "whole"
    amount: float | None = None
    activity: Activity = field(default_factory=Activity)
    text: str = "disturb=whole"


def _scalar(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    try:
        return int(low)
    except ValueError:
        pass
    try:
        return float(low)
    except ValueError:
        return text.strip()


def _assume_pairs(text: str) -> dict[str, Any]:
    """``key=value`` pairs of ``--assume`` (``kinds`` as a list; a bare word adds a kind)."""
    pairs: dict[str, Any] = {}
    last = None
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        if "=" not in token:
            if last == "kinds":
                pairs["kinds"].append(token)
                continue
            raise ConfigError(f"expected key=value, got {token!r}", field="--assume")
        key, value = (s.strip() for s in token.split("=", 1))
        if key == "kinds":
            pairs["kinds"] = [k for k in re.split(r"[+;|\s]+", value) if k]
        else:
            pairs[key] = _scalar(value)
        last = key
    return pairs


def _disturbance(pairs: dict[str, Any]) -> tuple[str, float | None]:
    """Take the disturbance keys out of ``pairs``: (kind, amount in sq ft or fraction)."""
    disturb, amount = "whole", None
    given = [
        k for k in ("disturb", "disturb_acres", "disturb_sqft", "disturb_fraction") if k in pairs
    ]
    if len(given) > 1:
        raise ConfigError(f"give one of {', '.join(given)}", field="--assume")
    if "disturb" in pairs:
        disturb = str(pairs.pop("disturb")).lower()
        if disturb not in ("whole", "none"):
            raise ConfigError(
                f"disturb must be 'whole' or 'none', got {disturb!r}", field="--assume"
            )
    for key, kind, factor in (
        ("disturb_acres", "sqft", acres_to_sqft(1.0)),
        ("disturb_sqft", "sqft", 1.0),
        ("disturb_fraction", "fraction", 1.0),
    ):
        if key in pairs:
            v = pairs.pop(key)
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or not math.isfinite(v)
                or v < 0
            ):
                raise ConfigError(
                    f"{key} must be a finite number >= 0, got {v!r}", field="--assume"
                )
            if kind == "fraction" and v > 1:
                raise ConfigError("disturb_fraction must be between 0 and 1", field="--assume")
            disturb, amount = kind, float(v) * factor
    return disturb, amount


def parse_assume(text: str | None) -> Assumption:
    """Parse ``--assume``: comma-separated ``key=value`` pairs.

    ``disturb`` is ``whole`` (default) or ``none``; ``disturb_acres``,
    ``disturb_sqft`` or ``disturb_fraction`` state a part of each parcel instead.
    Every other key is a field of ``[activity]`` in submission.toml; ``kinds`` takes
    several kinds joined by ``+`` (``kinds=subdivision+road``), and a bare word after
    ``kinds=...`` is one more kind (``kinds=subdivision,road``).

    Raises
    ------
    ConfigError
        Unknown key, bad number or unknown activity kind (field ``--assume``).
    """
    text = (text or "").strip() or "disturb=whole"
    pairs = _assume_pairs(text)
    disturb, amount = _disturbance(pairs)
    bad = [k for k in pairs if k not in Activity.model_fields]
    for key, default in SCREEN_DEFAULTS.items():
        pairs.setdefault(key, default)
    if bad:
        raise ConfigError(
            f"unknown key {bad[0]!r}; use disturb, disturb_acres, disturb_sqft, "
            f"disturb_fraction or an [activity] field",
            field="--assume",
        )
    try:
        activity = parse_model(Activity, pairs, Path("--assume"))
    except ConfigError as exc:
        raise ConfigError(exc.message, field=f"--assume {exc.field or ''}".strip()) from None
    return Assumption(disturb=disturb, amount=amount, activity=activity, text=text)


def parse_columns(text: str | None, id_field: str | None = None) -> dict[str, str]:
    """Parse ``--columns "id=ML,propclass=CLASS"`` into a role -> field map.

    Roles not named keep their Wisconsin statewide schema field (:data:`WISCONSIN_COLUMNS`);
    ``--id-field`` is a shortcut for ``id=FIELD``.
    """
    out = dict(WISCONSIN_COLUMNS)
    for token in (t.strip() for t in (text or "").split(",")):
        if not token:
            continue
        if "=" not in token:
            raise ConfigError(f"expected role=FIELD, got {token!r}", field="--columns")
        role, name = (s.strip() for s in token.split("=", 1))
        if role not in COLUMN_ROLES:
            raise ConfigError(
                f"unknown role {role!r}; roles: {', '.join(COLUMN_ROLES)}", field="--columns"
            )
        out[role] = name
    if id_field:
        out["id"] = id_field
    return out


def check_columns(columns: Mapping[str, str], fields: Sequence[str], *, path: object) -> None:
    """Refuse a column map naming a field the parcel file does not have.

    A role left at its Wisconsin statewide default may be absent (other schemas lack
    it); a field the reviewer named (``--columns``, ``--id-field``) must exist, since a
    misspelt class field would silently drop the exclusions it carries and change
    ``regulated``.

    Raises
    ------
    ConfigError
        Naming the role and the fields the file has.
    """
    have = set(fields)
    for role, name in columns.items():
        if name != WISCONSIN_COLUMNS.get(role) and name not in have:
            shown = ", ".join(sorted(have)[:20]) or "none"
            raise ConfigError(
                f"{role}={name!r}: the parcel file has no field {name!r} (its fields: {shown})",
                path=path,
                field="--id-field" if role == "id" else "--columns",
            )
