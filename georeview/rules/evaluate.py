"""One evaluator of conditions over columns of facts, with three-valued (Kleene) logic.

Facts are columns named by dotted fact names (``disturbed_area_sqft``,
``activity.kinds``), given as a :class:`pandas.DataFrame` or a mapping of equal-length
arrays. A missing value (``None``, ``NaN``, ``pd.NA``) or a missing column is
*unknown*: an unknown fact that matters stays unknown through AND, OR and NOT, and
the rule that reads it says needs_info. A review is a frame of one row
(:func:`frame_of`), a screening a frame of many: both go through
:func:`evaluate_frame`. Truth values are :class:`Tri` pairs of numpy arrays (value,
known), so one row costs microseconds and a million rows stay vectorised.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from georeview.errors import ConfigError
from georeview.rules.model import Condition

__all__ = [
    "OPS",
    "Facts",
    "Tri",
    "compare",
    "evaluate",
    "evaluate_frame",
    "frame_of",
    "kleene_or",
    "tri_array",
]

#: Comparison operators of conditions and limits.
OPS: dict[str, Callable[[Any, Any], Any]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}


@dataclass(frozen=True)
class Tri:
    """Kleene truth values of many rows: ``value`` where ``known`` (``value`` False elsewhere)."""

    value: np.ndarray
    known: np.ndarray

    @classmethod
    def const(cls, value: bool, n: int) -> Tri:
        """The same known value on ``n`` rows."""
        return cls(np.full(n, value, dtype=bool), np.ones(n, dtype=bool))

    @classmethod
    def unknown(cls, n: int) -> Tri:
        """Unknown on ``n`` rows."""
        return cls(np.zeros(n, dtype=bool), np.zeros(n, dtype=bool))

    def __and__(self, other: Tri) -> Tri:
        false = (self.known & ~self.value) | (other.known & ~other.value)
        both = self.known & other.known
        return Tri(self.value & other.value & both, both | false)

    def __or__(self, other: Tri) -> Tri:
        true = self.value | other.value
        return Tri(true, (self.known & other.known) | true)

    def __invert__(self) -> Tri:
        return Tri(~self.value & self.known, self.known)

    @property
    def true(self) -> np.ndarray:
        """Rows known to be true."""
        return self.value

    @property
    def false(self) -> np.ndarray:
        """Rows known to be false."""
        return self.known & ~self.value

    def series(self, index: pd.Index | None = None) -> pd.Series:
        """As a pandas nullable-boolean column (NA = unknown)."""
        return pd.Series(pd.arrays.BooleanArray(self.value.copy(), ~self.known), index=index)

    def at(self, i: int) -> bool | None:
        """Row ``i`` as True, False or None."""
        return bool(self.value[i]) if self.known[i] else None


class Facts:
    """Columns of facts, read once each into numpy arrays (cached per name)."""

    def __init__(self, facts: pd.DataFrame | Mapping[str, Any], n: int | None = None) -> None:
        if isinstance(facts, pd.DataFrame):
            self._src: Mapping[str, Any] = {c: facts[c] for c in facts.columns}
            self.n = len(facts)
        else:
            self._src = dict(facts)
            self.n = n if n is not None else len(next(iter(self._src.values()), ()))
        self._arrays: dict[str, tuple[str, np.ndarray, np.ndarray]] = {}
        self._uniques: dict[str, tuple[np.ndarray, Any]] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._src

    def set(self, name: str, values: Any) -> None:
        """Add or replace a column (the judge adds its classification)."""
        self._src = {**self._src, name: values}
        self._arrays.pop(name, None)
        self._uniques.pop(name, None)

    def raw(self, name: str) -> Any:
        """The column as given (``None`` when absent)."""
        return self._src.get(name)

    def column(self, name: str) -> tuple[str, np.ndarray, np.ndarray]:
        """``(kind, values, known)`` with kind ``number``, ``bool`` or ``object``."""
        if name not in self._arrays:
            self._arrays[name] = _as_arrays(self._src[name], self.n)
        return self._arrays[name]

    def uniques(self, name: str) -> tuple[np.ndarray, Any]:
        """Factorised object column: (codes, distinct values), NA coded -1."""
        if name not in self._uniques:
            _, values, known = self.column(name)
            codes, uniq = pd.factorize(pd.Series(values, dtype=object).where(known, None))
            self._uniques[name] = (codes, uniq)
        return self._uniques[name]


def _as_arrays(col: Any, n: int) -> tuple[str, np.ndarray, np.ndarray]:
    if isinstance(col, pd.Series):
        dtype = col.dtype
        if pd.api.types.is_bool_dtype(dtype):
            known = col.notna().to_numpy()
            return "bool", col.to_numpy(dtype=bool, na_value=False) & known, known
        if pd.api.types.is_numeric_dtype(dtype):
            x = col.to_numpy(dtype=float, na_value=np.nan)
            return "number", x, ~np.isnan(x)
        col = col.to_numpy(dtype=object)
    if isinstance(col, pd.arrays.BooleanArray):
        known = ~col.isna()
        return "bool", col.to_numpy(dtype=bool, na_value=False) & known, known
    arr = np.asarray(col)
    if arr.shape == ():
        arr = np.full(n, col, dtype=object)
    if arr.dtype == bool:
        return "bool", arr, np.ones(len(arr), dtype=bool)
    if arr.dtype.kind in "iuf":
        x = arr.astype(float)
        return "number", x, ~np.isnan(x)
    obj = arr.astype(object)
    # pandas' C null test (None, NaN, NA, NaT) over the whole column, not a Python
    # call per row and fact (a screening has hundreds of thousands of rows)
    known = ~pd.isna(obj)
    return "object", obj, known


def frame_of(facts: Mapping[str, Any]) -> Facts:
    """The facts of one record as columns of one row (lists become tuples)."""
    cols = {}
    for k, v in facts.items():
        arr = np.empty(1, dtype=object)
        arr[0] = tuple(v) if isinstance(v, list) else v
        cols[k] = arr
    return Facts(cols, n=1)


def compare(op: str, x: Any, value: Any) -> bool | None:
    """The leaf test of a condition on one known-or-unknown value (``None`` = unknown)."""
    if x is None:
        return None
    if op == "is_true":
        return bool(x)
    if op == "is_false":
        return not bool(x)
    if op == "contains":
        return value in x
    if op == "contains_any":
        return any(v in x for v in value)
    return bool(OPS[op](x, value))


def tri_array(values: Any, known: Any, index: pd.Index) -> pd.Series:
    """A nullable-boolean column: ``values`` where ``known``, NA elsewhere."""
    known = np.asarray(known, dtype=bool)
    return pd.Series(
        pd.arrays.BooleanArray(np.asarray(values, dtype=bool) & known, ~known), index=index
    )


def kleene_or(values: Iterable[Tri], n: int) -> Tri:
    """Kleene OR of truth values (False when there are none)."""
    out = Tri.const(False, n)
    for v in values:
        out = out | v
    return out


def _leaf(cond: Condition, facts: Facts) -> Tri:
    n = facts.n
    if cond.fact is None or cond.op is None:
        raise ConfigError("a condition needs fact and op, or all/any/not")
    if cond.fact not in facts:
        # A fact nobody gave: unknown everywhere, and "present" is false everywhere.
        return Tri.const(False, n) if cond.op == "present" else Tri.unknown(n)
    kind, x, known = facts.column(cond.fact)
    if cond.op == "present":
        return Tri(known.copy(), np.ones(n, dtype=bool))
    value = cond.value
    if kind == "number" and cond.op in OPS and isinstance(value, (int, float)):
        with np.errstate(invalid="ignore"):
            return Tri(OPS[cond.op](x, value) & known, known)
    if kind == "bool" and cond.op in ("is_true", "is_false"):
        return Tri((x if cond.op == "is_true" else ~x) & known, known)
    if kind == "bool" and cond.op in ("==", "!=") and isinstance(value, bool):
        return Tri(OPS[cond.op](x, value) & known, known)
    codes, uniq = facts.uniques(cond.fact)
    res = [compare(cond.op, u, value) for u in uniq]  # one test per distinct value
    v = np.array([r is True for r in res] + [False])
    k = np.array([r is not None for r in res] + [False])
    return Tri(v[codes], k[codes])


def evaluate_frame(cond: Condition | None, facts: Facts | pd.DataFrame) -> Tri:
    """Evaluate a condition over every row of ``facts``.

    Parameters
    ----------
    cond : Condition or None
        ``None`` holds everywhere.
    facts : Facts or pandas.DataFrame
        One column per fact.
    """
    if not isinstance(facts, Facts):
        facts = Facts(facts)
    if cond is None:
        return Tri.const(True, facts.n)
    if cond.all is not None:
        out = Tri.const(True, facts.n)
        for c in cond.all:
            out = out & evaluate_frame(c, facts)
        return out
    if cond.any is not None:
        return kleene_or((evaluate_frame(c, facts) for c in cond.any), facts.n)
    if cond.not_ is not None:
        return ~evaluate_frame(cond.not_, facts)
    return _leaf(cond, facts)


def evaluate(cond: Condition | None, facts: Mapping[str, Any]) -> bool | None:
    """Evaluate a condition on one record of facts: True, False or None (unknown)."""
    return evaluate_frame(cond, frame_of(facts)).at(0)
