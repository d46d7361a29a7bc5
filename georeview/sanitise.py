"""Text from submissions made safe for the places it is written to.

Names and attribute values come from applicants (SECURITY.md). Before one becomes a
folder name, a link in a results page or a spreadsheet cell it passes through one of
these functions; each says what it guards against.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

import pandas as pd

#: Characters a browser drops from a URL before it reads the scheme (WHATWG URL
#: standard: leading and trailing C0 controls and space, and every tab or newline).
_CONTROLS = re.compile(r"[\x00-\x20\x7f-\x9f]")
#: A link that names a scheme (``javascript:``, ``data:``) or a host (``//evil``).
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^[/\\]{2}")
#: Relative link schemes allowed: none. A results page links only to its own files.
ALLOWED_SCHEMES: frozenset[str] = frozenset()
#: Characters kept in a folder name; everything else becomes ``_``.
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
#: Longest folder name written (well under the 255 bytes of common file systems).
MAX_NAME_CHARS = 80
#: Spreadsheet programs read a cell starting with one of these as a formula
#: (OWASP "CSV Injection"); tab and carriage return start one in some of them too.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_name(text: str, *, default: str = "submission") -> str:
    """Return ``text`` as one safe folder name: ASCII letters, digits, ``.``, ``_``, ``-``.

    Leading dots and dashes are dropped (no ``..``, no hidden folder, no option-like
    name), runs of other characters become one ``_``, and the result is at most
    :data:`MAX_NAME_CHARS` characters; nothing left gives ``default``.
    """
    text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")
    name = _UNSAFE_NAME.sub("_", text).lstrip(".-_")[:MAX_NAME_CHARS].rstrip("._-")
    return name or default


def unique_names(names: Iterable[str], *, reserved: Iterable[str] = ()) -> list[str]:
    """Make each of ``names`` safe and distinct (case-insensitively, for macOS and Windows).

    A repeat gets ``-2``, ``-3``, ... in the order given; ``reserved`` names (the
    batch's own files) are never handed out.
    """
    used = {r.lower() for r in reserved}
    out = []
    for raw in names:
        base = safe_name(raw)
        name, k = base, 1
        while name.lower() in used:
            k += 1
            name = f"{base}-{k}"
        used.add(name.lower())
        out.append(name)
    return out


def safe_link(value: Any) -> str | None:
    r"""Return ``value`` as a relative link, or ``None`` when it could point elsewhere.

    Control characters and spaces are removed first, as a browser would, so
    ``"\x01javascript:alert(1)"`` is seen as the ``javascript:`` link it becomes. Links
    naming a scheme (none is allowed, :data:`ALLOWED_SCHEMES`), a host (``//``), an
    absolute path or a parent folder (``..``) are refused.
    """
    if value is None or (isinstance(value, float) and value != value):
        return None
    text = str(value)
    seen = _CONTROLS.sub("", text)
    if not seen:
        return None
    m = _SCHEME.match(seen)
    if m and seen.split(":", 1)[0].lower() not in ALLOWED_SCHEMES:
        return None
    if seen.startswith(("/", "\\")) or ".." in re.split(r"[/\\]", seen):
        return None
    if seen != text:  # a link the page would show differently from what it follows
        return None
    return text


def csv_cell(value: Any) -> Any:
    """Neutralise a text cell a spreadsheet would run as a formula (prefix ``'``).

    Numbers are left alone (``-3.5`` is a number, not a formula); text starting with
    ``=``, ``+``, ``-``, ``@``, tab or carriage return gets a leading apostrophe, which
    spreadsheets show as text. Carriage returns become newlines, so the cell is quoted.
    """
    if not isinstance(value, str):
        return value
    if "\r" in value:
        # The csv module quotes a cell holding "\n" (the line terminator) but not a
        # lone "\r", which readers take as a line break: the row would split in two.
        value = value.replace("\r\n", "\n").replace("\r", "\n")
    if value.startswith(_FORMULA_START):
        return "'" + value
    return value


def neutralise_formulas(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`csv_cell` over every text column of ``table`` at once (numbers untouched)."""
    out = table.copy()
    for col in out.columns:
        s = out[col]
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            continue
        text = s.astype("string")
        cr = text.str.contains("\r", regex=False).fillna(False).to_numpy(dtype=bool)
        if cr.any():
            text = text.str.replace("\r\n", "\n", regex=False).str.replace("\r", "\n", regex=False)
        hit = text.str.match(r"[=+\-@\t]").fillna(False).to_numpy(dtype=bool)
        if hit.any() or cr.any():
            s = s.astype(object)
            s[cr] = text[cr].astype(str)
            s[hit] = "'" + text[hit].astype(str)
            out[col] = s
    return out


class SafeWriter:
    """A :func:`csv.writer` whose every text cell passes through :func:`csv_cell`."""

    def __init__(self, buf: Any, **kwargs: Any):
        import csv

        self._w = csv.writer(buf, **kwargs)

    def writerow(self, row: Iterable[Any]) -> Any:
        """Write one row, formulas neutralised."""
        return self._w.writerow([csv_cell(v) for v in row])
