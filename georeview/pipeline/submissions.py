"""The submissions of a batch folder: submission folders and zip files of them."""

from __future__ import annotations

import tempfile
from pathlib import Path

from georeview.errors import DataSourceError, GeoReviewError
from georeview.pipeline.zipsafe import extract_zip, reason_of

__all__ = ["RESERVED", "find_submissions", "is_batch"]


def is_batch(path: Path | str) -> bool:
    """Whether ``path`` is a folder of submissions rather than one submission.

    True for a folder without its own submission.toml that holds at least one
    sub-folder with a submission.toml, or a zip file.
    """
    path = Path(path)
    if not path.is_dir() or (path / "submission.toml").exists():
        return False
    return any(
        (p.is_dir() and (p / "submission.toml").is_file())
        or (p.is_file() and p.suffix.lower() == ".zip")
        for p in path.iterdir()
    )


#: Names in ``--out`` that belong to the batch itself, never given to a submission.
RESERVED = ("summary.csv", "summary.xlsx", "sites.gpkg", "index.html")


def find_submissions(folder: Path, scratch: Path) -> list[tuple[str, str, Path | None, str]]:
    """``(name, source, submission_dir or None, error)`` for each entry of a batch folder.

    ``name`` is the output folder: the entry's name made safe
    (:func:`georeview.sanitise.safe_name`) and unique among the rows (a folder and a
    zip of one stem, two zips' inner folders). ``source`` says where the row came
    from: the entry's own name, and for a zip holding several submissions the
    folder inside it (``batch.zip:inner/folder``). Each zip is extracted into its own
    new folder under ``scratch``; whatever goes wrong with one entry is its error row.
    """
    raw: list[tuple[str, str, Path | None, str]] = []
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise DataSourceError(
            f"cannot list the batch folder ({reason_of(exc)})", path=folder
        ) from None
    for entry in entries:
        try:
            raw += _entry_submissions(entry, scratch)
        except GeoReviewError as exc:
            raw.append((entry.stem, entry.name, None, exc.one_line()))
        except (OSError, ValueError, RuntimeError, RecursionError) as exc:
            raw.append((entry.stem, entry.name, None, f"{entry.name}: {reason_of(exc)}"))
    # imported here: the CLI's batch check (is_batch) needs no pandas
    from georeview.sanitise import unique_names

    names = unique_names([r[0] for r in raw], reserved=RESERVED)
    return [(n, *r[1:]) for n, r in zip(names, raw, strict=True)]


def _entry_submissions(entry: Path, scratch: Path) -> list[tuple[str, str, Path | None, str]]:
    """The submissions of one batch entry (a submission folder or a zip file)."""
    if entry.is_dir() and (entry / "submission.toml").exists():
        if entry.is_symlink():
            # Not followed: a link could make the batch read a folder elsewhere. Listed
            # as an error row so the submission is not silently lost.
            return [(entry.name, entry.name, None, "is a symbolic link; not followed")]
        return [(entry.name, entry.name, entry, "")]
    if not (entry.is_file() and entry.suffix.lower() == ".zip"):
        return []
    # A private folder per zip: the zip's own name never becomes a path (a stem of
    # ".." would otherwise extract into the parent of the scratch folder).
    dest = Path(tempfile.mkdtemp(prefix="zip-", dir=scratch))
    extract_zip(entry, dest)
    subs = sorted({p.parent for p in dest.rglob("submission.toml")})
    if not subs:
        return [(entry.stem, entry.name, None, "no submission.toml in the zip file")]
    out: list[tuple[str, str, Path | None, str]] = []
    for sub in subs:
        inner = sub.relative_to(dest).as_posix()
        if len(subs) == 1:
            out.append((entry.stem, entry.name, sub, ""))
        else:
            label = inner if inner != "." else "root"
            out.append((f"{entry.stem}-{label}", f"{entry.name}:{inner}", sub, ""))
    return out
