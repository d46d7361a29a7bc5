"""One case as a single zip for the public record: every file, the record, a manifest.

The archive holds ``case.json`` (the whole record, :func:`georeview.cases.views.case_view`,
audit trail included), ``determinations.toml`` (those in force, as a determinations file),
every round's files as received (``round-N/submission/``), every review's outputs
(``round-N/review-K/``), every letter (``letters/``), and ``manifest.json``: each member's
path, size and SHA-256, and whether the received files still match what was recorded at
intake. It is written beside its destination and renamed into place.
"""

from __future__ import annotations

import datetime as dt
import json
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from georeview.errors import OutputError

if TYPE_CHECKING:
    from georeview.cases.store import Workspace

__all__ = ["MANIFEST", "export_case"]

#: The manifest's name inside the archive.
MANIFEST = "manifest.json"


def _members(ws: Workspace, case: Any) -> list[tuple[str, Path]]:
    """(name in the archive, file on disk) of every file the case keeps."""
    out: list[tuple[str, Path]] = []
    root = ws.files / case.number
    for rnd in case.rounds.order_by("number"):
        sub = ws.path(rnd.folder)
        out += [
            (f"round-{rnd.number}/submission/{f.path}", sub / f.path)
            for f in rnd.files.order_by("path")
        ]
        for review in rnd.reviews.order_by("number"):
            folder = ws.path(review.folder)
            out += [
                (f"round-{rnd.number}/{p.relative_to(folder.parent).as_posix()}", p)
                for p in sorted(folder.rglob("*"))
                if p.is_file()
            ]
    for letter in case.letters.order_by("number"):
        for rel in (letter.html_path, letter.pdf_path):
            if rel:
                p = ws.path(rel)
                out.append((p.relative_to(root).as_posix(), p))
    return out


def export_case(ws: Workspace, number: str, out: Path, *, overwrite: bool = False) -> Path:
    """Write one case as a zip archive with a manifest of checksums.

    Raises
    ------
    georeview.errors.OutputError
        ``out`` exists (without ``overwrite``) or cannot be written.
    """
    from georeview.cases.intake import FileEntry, check_manifest, sha256_of
    from georeview.cases.lookup import get_case
    from georeview.cases.service import export_determinations
    from georeview.cases.views import case_view
    from georeview.report.files import atomic_path

    out = Path(out)
    if out.exists() and not overwrite:
        raise OutputError("exists (pass --overwrite to replace it)", path=out)
    case = get_case(number)
    record = case_view(ws, case.number, audience="village")
    integrity = {
        f"round-{r.number}": check_manifest(
            ws.path(r.folder),
            [FileEntry(f.path, f.size_bytes, f.sha256) for f in r.files.all()],
        )
        for r in case.rounds.order_by("number")
    }
    texts = {
        "case.json": json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n",
        "determinations.toml": export_determinations(case.number),
    }
    members = _members(ws, case)
    entries: list[dict[str, Any]] = [
        {"path": name, "size_bytes": p.stat().st_size, "sha256": sha256_of(p)}
        for name, p in members
    ]
    import hashlib

    entries += [
        {
            "path": name,
            "size_bytes": len(text.encode()),
            "sha256": hashlib.sha256(text.encode()).hexdigest(),
        }
        for name, text in texts.items()
    ]
    manifest = {
        "case": case.number,
        "exported_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "revision": case.revision,
        "received_files_intact": all(not v for v in integrity.values()),
        "integrity": integrity,
        "files": sorted(entries, key=lambda e: e["path"]),
    }
    try:
        with atomic_path(out) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, p in members:
                zf.write(p, f"{case.number}/{name}")
            for name, text in texts.items():
                zf.writestr(f"{case.number}/{name}", text)
            zf.writestr(f"{case.number}/{MANIFEST}", json.dumps(manifest, indent=2) + "\n")
    except OSError as exc:
        raise OutputError(f"cannot write the archive ({exc.strerror or exc})", path=out) from None
    return out
