"""Which layers folder a submission is reviewed with.

A submission names its municipality; the Village's reference layers for it are found
here (``--layers``, ``$GEOREVIEW_LAYERS``, ``./layers``, and the sample layers of a source
checkout when the package runs from one), never in or above the submission or its batch
folder: a ``layers/`` folder in a shared inbox that holds the submissions could have
been put there by an applicant.
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


def _planted(candidate: Path, folders: tuple[Path, ...], *, above: bool) -> Path | None:
    """The submission or batch folder ``candidate`` lies in (or, with ``above``, above).

    ``candidate`` is ``<holder>/layers/<municipality>``: it is in a folder when it lies
    inside it, above it when its holder holds the folder.
    """
    real = candidate.resolve()
    holder = real.parent.parent
    for f in folders:
        f = f.resolve()
        if real.is_relative_to(f) or (above and f.is_relative_to(holder)):
            return f
    return None


def find_layers_dir(
    municipality: str, start: Path | None = None, *, also_not_in: tuple[Path, ...] = ()
) -> Path:
    """Find ``layers/<municipality>`` for a submission that names no layers folder.

    Looks in ``$GEOREVIEW_LAYERS``, then ``./layers`` (the reviewer's working folder),
    then the source checkout that holds this package, if it runs from one (an installed
    package has no layers of its own). Never in or above the submission (``start``) or
    the batch folder (``also_not_in``): reference layers are the Village's data, and a
    submission (an extracted zip above all), or a ``layers/`` folder an applicant put
    beside it in a shared inbox, must not bring its own wetlands and floodplain. Such a
    candidate is skipped with a warning, and named if no other is found.
    """
    # (folder, whether it is looked up): $GEOREVIEW_LAYERS and the checkout's own sample
    # layers are the Village's or the package's settings; ./layers is a look-up, refused
    # above a submission too (a shared inbox)
    candidates: list[tuple[Path, bool]] = []
    env = os.environ.get("GEOREVIEW_LAYERS")
    if env:
        candidates.append((Path(env) / municipality, False))
    checkout = source_checkout()
    own = None if checkout is None else (checkout / "layers" / municipality).resolve()
    cwd = Path.cwd() / "layers" / municipality
    candidates.append((cwd, own is None or cwd.resolve() != own))
    if checkout is not None:
        candidates.append((checkout / "layers" / municipality, False))
    folders = tuple(Path(f) for f in ((start,) if start is not None else ()) + also_not_in)
    skipped: list[str] = []
    for c, looked_up in candidates:
        if not (c / "layers.toml").is_file():
            continue
        inside = _planted(c, folders, above=looked_up)
        if inside is not None:
            log.warning("layers folder %s is in or above %s: not used", c, inside)
            skipped.append(f"{c}, in or above {inside}")
            continue
        return c
    looked = ", ".join(str(c) for c, _ in candidates)
    why = f"; not used: {'; '.join(skipped)}" if skipped else ""
    raise DataSourceError(
        f"no layers folder for {municipality!r} (looked in {looked}{why}): pass --layers DIR"
        f" (a folder holding layers.toml), or set GEOREVIEW_LAYERS to a folder holding"
        f" {municipality}/layers.toml, or run from a folder holding"
        f" layers/{municipality}/layers.toml (not one above the submissions);"
        " `georeview layers build` makes one",
        field="municipality",
    )


def resolve_layers(
    submission_dir: Path, layers_dir: Path | None, *, also_not_in: tuple[Path, ...] = ()
) -> tuple[Path, str]:
    """Return the layers folder and municipality for a submission.

    ``also_not_in`` names other folders the layers must not be in or above (a batch's).
    """
    cfg = load_submission_config(Path(submission_dir) / "submission.toml", folder=submission_dir)
    folder = (
        Path(layers_dir)
        if layers_dir
        else find_layers_dir(cfg.municipality, submission_dir, also_not_in=also_not_in)
    )
    return folder, cfg.municipality
