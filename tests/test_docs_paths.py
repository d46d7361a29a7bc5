"""Every file of the package that the documents name exists.

Before: README.md named `georeview/plan.py`, `georeview/coverage.py` and
`georeview/data/rainfall.toml`, SECURITY.md `georeview/config.py`, all moved by the layout
of subpackages by stage. A placeholder (`<municipality>`, `<m>`, `<name>`) stands for each
shipped municipality; a glob (`*.toml`) must match at least one file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "SECURITY.md", "docs/DESIGN.md", "layers/README.md", "sample_sites/README.md"]
#: A path under georeview/ as the documents write it, up to the first character no path has.
PATH = re.compile(r"(?<![\w./-])georeview/[\w./<>*@-]*[\w/*>]")
PLACEHOLDER = re.compile(r"<(municipality|m|name)>")
ORDINANCES = ROOT / "georeview" / "ordinances"
MUNICIPALITIES = sorted(p.name for p in ORDINANCES.iterdir() if (p / "ordinance.toml").is_file())


def _named(doc: str) -> list[str]:
    return sorted(set(PATH.findall((ROOT / doc).read_text(encoding="utf-8"))))


def _exists(path: str) -> bool:
    """Whether the path, each placeholder replaced by every municipality, names files."""
    names = [PLACEHOLDER.sub(m, path) for m in MUNICIPALITIES] if "<" in path else [path]
    return all(list(ROOT.glob(n.rstrip("/"))) for n in names)


@pytest.mark.parametrize("doc", DOCS)
def test_every_package_path_the_document_names_exists(doc: str) -> None:
    named = _named(doc)
    assert named  # the pattern finds the paths the document writes
    assert [p for p in named if not _exists(p)] == []


def test_the_pattern_reads_paths_as_written() -> None:
    text = "see `georeview/facts/plan.py`. In georeview/ordinances/<m>/ and (georeview/x.toml)"
    assert PATH.findall(text) == [
        "georeview/facts/plan.py",
        "georeview/ordinances/<m>/",
        "georeview/x.toml",
    ]
    assert not _exists("georeview/plan.py")
    assert _exists("georeview/ordinances/<municipality>/coverage.toml")
