"""Which layers folder a submission is reviewed with.

A submission names its municipality; the Village's reference layers for it are found
here (``--layers``, ``$GEOREVIEW_LAYERS``, ``./layers``, and the sample layers of a source
checkout when the package runs from one), never inside the submission itself.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from georeview.config import load_submission_config
from georeview.errors import DataSourceError

__all__ = ["find_layers_dir", "resolve_layers", "source_checkout"]

log = logging.getLogger(__name__)


def source_checkout() -> Path | None:
    """The source checkout this package runs from, or None for an installed package.

    A checkout holds ``pyproject.toml`` and ``layers/`` beside the ``georeview`` package;
    an installed package's parent is ``site-packages``, which holds neither, so its
    sample layers (which the wheel does not ship) are never looked for there.
    """
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "layers").is_dir():
        return root
    return None


def find_layers_dir(municipality: str, start: Path | None = None) -> Path:
    """Find ``layers/<municipality>`` for a submission that names no layers folder.

    Looks in ``$GEOREVIEW_LAYERS``, then ``./layers`` (the reviewer's working folder),
    then the source checkout that holds this package, if it runs from one (an installed
    package has no layers of its own). Never in the submission or the folders above it:
    reference layers are the Village's data, and a submission (an extracted zip above
    all) must not bring its own wetlands and floodplain. A candidate inside ``start``
    (the submission folder) is skipped.
    """
    candidates: list[Path] = []
    env = os.environ.get("GEOREVIEW_LAYERS")
    if env:
        candidates.append(Path(env) / municipality)
    candidates.append(Path.cwd() / "layers" / municipality)
    checkout = source_checkout()
    if checkout is not None:
        candidates.append(checkout / "layers" / municipality)
    sub = None if start is None else Path(start).resolve()
    for c in candidates:
        if sub is not None and c.resolve().is_relative_to(sub):
            log.warning("layers folder %s is inside the submission: not used", c)
            continue
        if (c / "layers.toml").is_file():
            return c
    looked = ", ".join(str(c) for c in candidates)
    raise DataSourceError(
        f"no layers folder for {municipality!r} (looked in {looked}): pass --layers DIR"
        f" (a folder holding layers.toml), or set GEOREVIEW_LAYERS to a folder holding"
        f" {municipality}/layers.toml, or run from a folder holding"
        f" layers/{municipality}/layers.toml; `georeview layers build` makes one",
        field="municipality",
    )


def resolve_layers(submission_dir: Path, layers_dir: Path | None) -> tuple[Path, str]:
    """Return the layers folder and municipality for a submission."""
    cfg = load_submission_config(Path(submission_dir) / "submission.toml", folder=submission_dir)
    folder = Path(layers_dir) if layers_dir else find_layers_dir(cfg.municipality, submission_dir)
    return folder, cfg.municipality
