"""``georeview ordinance new NAME --from M``: a new municipality's folder, copied from another's.

The copy renames what ties the data to the source municipality, and only that:

* rule ids ``<m>.xxx`` -> ``<name>.xxx`` wherever they appear (rules, coverage map,
  interpretations, the words of messages that name a rule, comments);
* the ``municipality`` key of every file;
* the municipality's name where it prefixes a data citation (``"Deerfield 31.10(1)"``,
  calendar.toml and money.toml) and in ``label``;
* ``title`` and ``short_name`` (marked as a copy until edited).

Every other value stays the source's until edited, and the copy says so: a notice at the top
of each TOML file and a ``NOTICE.md`` in the folder. ``ordinance.txt`` is copied byte for byte:
``coverage.toml`` finds its paragraphs by its headings or line numbers, and the rules quote it.
The folder is written beside its destination and renamed into place, so a failed copy leaves
nothing half written.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from georeview.errors import InputError, OutputError

__all__ = ["NAME_PATTERN", "Copied", "default_out", "display_name", "new_ordinance", "rename"]

#: A municipality's name: the folder name, the rule-id prefix and ``municipality`` in every file.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")

#: What stays the source's, in words (the notice and the command's output say it).
KEPT = (
    "thresholds, reaches and rates ([parameters] of ordinance.toml)",
    "rule limits, conditions and the ordinance's words quoted in every rule",
    "fees, security and forfeitures (money.toml)",
    "how days are counted, deadlines and inspections (calendar.toml)",
    "the letterhead, signer and letters' words (record.toml; its case-number code is renamed)",
    "design rainfall (rainfall.toml) and the USLE R factor (usle.toml)",
    "the adopted text (ordinance.txt) and its paragraph map (coverage.toml)",
    "section numbers in citations",
)


@dataclass
class Copied:
    """What :func:`new_ordinance` wrote: the folder and the count of each renaming."""

    folder: Path
    files: int = 0
    counts: dict[str, int] = field(default_factory=dict)


def display_name(name: str) -> str:
    """How a name is written in citations and labels (``pleasant_prairie``: Pleasant Prairie)."""
    return name.replace("_", " ").title()


def check_name(name: str) -> str:
    """Return ``name`` if it is a safe municipality name (:data:`NAME_PATTERN`).

    Raises
    ------
    georeview.errors.InputError
        A name with capitals, spaces, dots, slashes or other characters.
    """
    if not NAME_PATTERN.fullmatch(name):
        raise InputError(
            f"{name!r} is not a municipality name: use lower-case letters, digits and _ "
            "(starting with a letter, at most 40), e.g. waunakee or pleasant_prairie",
            field="NAME",
        )
    return name


def default_out(environ: dict[str, str] | None = None) -> Path:
    """Where a new folder goes without ``--out``.

    The first ``$GEOREVIEW_ORDINANCES`` folder, else ``./ordinances``: never the installed
    package, whose folders an upgrade replaces.
    """
    from georeview.ordinances import ENV_VAR

    env = (os.environ if environ is None else environ).get(ENV_VAR, "")
    first = next((p for p in env.split(os.pathsep) if p.strip()), "")
    return Path(first).expanduser() if first else Path("ordinances")


def rename(text: str, source: str, name: str) -> tuple[str, dict[str, int]]:
    """Rename ``source``'s ids, keys, citation prefixes and labels in TOML text to ``name``'s.

    Returns the new text and how many of each kind were renamed.
    """
    old, new = display_name(source), display_name(name)
    subs = {
        # an id prefix: deerfield.31.06.1.C, deerfield.sitemap.adjacent, municipalities.deerfield.
        "rule ids": (rf"(?<![\w-]){re.escape(source)}\.(?=\w)", f"{name}."),
        "municipality keys": (
            rf'(?m)^(\s*municipality\s*=\s*)"{re.escape(source)}"',
            rf'\g<1>"{name}"',
        ),
        # a table key path naming the municipality, as a note says it
        "key paths": (rf"\bmunicipalities\.{re.escape(source)}\b", f"municipalities.{name}"),
        # "Deerfield 31.10(1)": the name before a section number, at the start of a string
        "citation prefixes": (rf'(?<="){re.escape(old)} (?=\d)', f"{new} "),
        "labels": (rf'(?m)^(\s*label\s*=\s*"[^"\n]*?)\b{re.escape(old)}\b', rf"\g<1>{new}"),
    }
    counts: dict[str, int] = {}
    for what, (pattern, repl) in subs.items():
        text, counts[what] = re.subn(pattern, repl, text)
    return text, counts


def _retitle(text: str, source: str, name: str) -> str:
    """``title`` and ``short_name`` say the folder is a copy of the source's until edited."""
    new = display_name(name)

    def title(m: re.Match[str]) -> str:
        return f'{m.group(1)}"{new}: copy of {m.group(2)} (edit until it is {new}\'s own)"'

    def short(m: re.Match[str]) -> str:
        return f'{m.group(1)}"{new} (copy of {m.group(2)})"'

    text = re.sub(r'(?m)^(title\s*=\s*)"([^"\n]*)"', title, text, count=1)
    return re.sub(r'(?m)^(short_name\s*=\s*)"([^"\n]*)"', short, text, count=1)


def _recode(text: str, name: str) -> str:
    """The case-number prefix becomes the new folder's name in capitals (WAUNAKEE-2026-0001).

    Two municipalities' cases must never share a number: the source's prefix (SOM) stays
    the source's, and the folder's name is unique among the municipalities.
    """
    return re.sub(
        r'(?m)^(code\s*=\s*)"[^"\n]*"', lambda m: f'{m.group(1)}"{name.upper()}"', text, count=1
    )


def _notice(source: str, name: str, where: Path) -> str:
    """The comment block at the top of every copied TOML file."""
    kept = "".join(f"#   - {k}\n" for k in KEPT)
    return (
        f"# COPIED by `georeview ordinance new {name} --from {source}` on "
        f"{dt.date.today().isoformat()}\n"
        f"# from {where}.\n"
        f"# Renamed: rule ids ({source}.* -> {name}.*), municipality keys, citation prefixes and\n"
        f"# labels. Everything else below is still {source}'s until you edit it:\n"
        f"{kept}"
        f"# Then run: georeview rules {name} --check\n\n"
    )


def _notice_md(source: str, name: str, where: Path) -> str:
    kept = "".join(f"- {k}\n" for k in KEPT)
    return (
        f"# {display_name(name)}: a copy of {source}'s ordinance folder\n\n"
        f"Made by `georeview ordinance new {name} --from {source}` from `{where}`.\n\n"
        f"Rule ids, `municipality` keys, citation prefixes and labels are renamed to {name}.\n"
        f"**Everything else is still {source}'s until you edit it:**\n\n{kept}\n"
        "Replace `ordinance.txt` with the adopted text and map its paragraphs in `coverage.toml`"
        " (`[text]` says how its sections are found), set the values and words to the"
        f" ordinance's own, then run `georeview rules {name} --check` until it reports no"
        " error.\n"
    )


def new_ordinance(
    name: str, source: str, out: Path | None = None, *, overwrite: bool = False
) -> Copied:
    """Copy municipality ``source``'s folder to ``out/name``, renamed (module docstring).

    Parameters
    ----------
    name : str
        The new municipality (:data:`NAME_PATTERN`).
    source : str
        A municipality on the search path (:func:`georeview.ordinances.folder`).
    out : Path, optional
        The parent folder (default :func:`default_out`); never the installed package's.
    overwrite : bool
        Replace an existing ``out/name`` folder.

    Raises
    ------
    georeview.errors.InputError
        A bad name, an unknown source, a destination inside the package, or a name that
        is already another folder's on the search path.
    georeview.errors.OutputError
        ``out/name`` exists and ``overwrite`` is False, or it cannot be written.
    """
    from georeview.ordinances import folder, municipalities

    check_name(name)
    src = folder(source)
    source = src.name.lower()
    if name == source:
        raise InputError(f"the new name is the source's ({source!r})", field="NAME")
    parent = Path(out) if out is not None else default_out()
    dest = parent / name
    package = Path(__file__).resolve().parent
    if parent.resolve() == package or package in parent.resolve().parents:
        raise InputError(
            "will not write into the installed package; give --out DIR (and list DIR in "
            "$GEOREVIEW_ORDINANCES)",
            path=parent,
            field="--out",
        )
    other = municipalities().get(name)
    if other is not None and other.resolve() != dest.resolve():
        raise InputError(
            f"a municipality {name!r} is already on the search path ({other}); choose another name",
            field="NAME",
        )
    if dest.exists() and not overwrite:
        raise OutputError("folder exists; give --overwrite to replace it", path=dest)
    return _write(src, source, name, dest)


def _write(src: Path, source: str, name: str, dest: Path) -> Copied:
    """Write the renamed copy beside ``dest`` and rename it into place."""
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=dest.parent))
    except OSError as exc:
        raise OutputError(f"cannot create the folder ({exc.strerror})", path=dest.parent) from None
    copied = Copied(dest)
    try:
        for f in sorted(src.iterdir()):
            if not f.is_file() or f.name.startswith((".", "NOTICE")):
                continue
            if f.suffix == ".toml":
                text, counts = rename(f.read_text(encoding="utf-8"), source, name)
                if f.name == "ordinance.toml":
                    text = _retitle(text, source, name)
                if f.name == "record.toml":
                    text = _recode(text, name)
                for k, n in counts.items():
                    copied.counts[k] = copied.counts.get(k, 0) + n
                (tmp / f.name).write_text(_notice(source, name, src) + text, encoding="utf-8")
            else:
                shutil.copyfile(f, tmp / f.name)
            copied.files += 1
        (tmp / "NOTICE.md").write_text(_notice_md(source, name, src), encoding="utf-8")
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 would hide the folder from the Village's others
        _replace(tmp, dest)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise OutputError(f"cannot write the folder ({exc.strerror})", path=dest) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return copied


def _replace(tmp: Path, dest: Path) -> None:
    """Rename ``tmp`` to ``dest``; an existing ``dest`` is moved aside first, then removed."""
    old = None
    if dest.exists():
        old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
        dest.rename(old)
    try:
        tmp.rename(dest)
    except OSError:
        if old is not None:
            old.rename(dest)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
