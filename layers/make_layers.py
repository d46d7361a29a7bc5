"""Build the reference layers shipped in ``layers/deerfield`` and ``layers/somers``.

Run from anywhere::

    /work/venv/bin/python layers/make_layers.py [--data ../shared/data] [--out layers]

Real inputs (read from ``--data``, default ``../shared/data`` relative to the repository root):

- ``wi_dane/dane_county_munis.geojson``: Wisconsin LTSB municipal boundaries (January 2025).
  The Village of Deerfield limit and its 59 Dane County neighbours are copied as they are.
- ``wi_places/tl_2019_55_place.zip``: Census TIGER/Line 2019 places, Wisconsin (public
  domain). The Village of Somers (GEOID 5574625) and the cities and villages within 4.5 miles
  of it are copied as they are (reprojected to EPSG:3071).
- ``wi_statewide/County_Boundaries_24K.shp``: WI DNR county outlines. The Kenosha (FIPS 59) and
  Racine (FIPS 101) land outside every TIGER city and village is the town land around Somers;
  the same outline is the synthetic Lake Michigan's shore.

Everything else is SYNTHETIC and says so in every file: a DEM, NHD-like hydrography, Wisconsin
Wetland Inventory-like wetlands, FEMA NFHL ``S_FLD_HAZ_AR``-like flood zones, SSURGO-like soil
map units and TIGER-like roads. They are made from fixed seeds and fixed control points, so a
re-run reproduces the files (GeoPackage timestamps are pinned with GDAL's ``OGR_CURRENT_DATE``).

The terrain is built around the creek so that water really drains to it: elevation is the creek's
longitudinal profile at the nearest point of the creek plus a valley-side rise that grows with the
distance from the creek, plus smooth noise that fades out near the creek (rolling glacial relief),
plus a drumlin with steep flanks (Deerfield), a closed kettle depression holding a pond (Deerfield)
and a lake bluff (Somers). Flood zones, wetlands and soils are derived from the same surface
(height above the creek, slope), so the layers agree with each other.

The recipes are in ``layers/recipes/`` (one module per municipality and per source kind);
this script checks the inputs and runs them. A missing input is one line naming the file
(exit 2), before anything is written.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from georeview.ordinances import municipalities

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"

Recipe = Callable[[Path, Path], None]


def load_recipes() -> dict[str, tuple[Recipe, tuple[Path, ...]]]:
    """Each municipality's recipe and the real inputs it reads under the data folder."""
    # imported here, once the bytecode switch is off: the recipes live beside the shipped
    # layers, and a run must not leave __pycache__ folders in them
    sys.dont_write_bytecode = True
    from recipes import deerfield, somers

    return {
        "deerfield": (deerfield.make_deerfield, deerfield.INPUTS),
        "somers": (somers.make_somers, somers.INPUTS),
    }


def missing_input(data: Path, inputs: tuple[Path, ...]) -> Path | None:
    """The first of ``inputs`` (relative to ``data``) that is not a file, or None."""
    return next((data / p for p in inputs if not (data / p).is_file()), None)


def fail(message: str) -> NoReturn:
    """Print ``make_layers: <message>`` on stderr and exit 2 (bad input, no traceback)."""
    print(f"make_layers: {message}", file=sys.stderr)
    raise SystemExit(2)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line: ``--data`` (the shared data folder) and ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="the shared data folder (default: ../shared/data from the repo root)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO_ROOT / "layers",
        help="where layers/<municipality>/ go (default: the repo's layers/)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Build both municipalities' layers.

    Raises
    ------
    SystemExit
        2, after one line on stderr, when a municipality has no recipe or an input file
        is missing (nothing is written then).
    """
    args = parse_args(argv)
    makers = load_recipes()
    # every shipped municipality (its ordinance folder) needs a recipe here
    for muni in municipalities():
        if muni not in makers:
            fail(f"no layers recipe for municipality {muni!r}: add one to layers/recipes/")
        if (path := missing_input(args.data, makers[muni][1])) is not None:
            fail(f"{path}: no such file (the shared data folder is --data)")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from recipes.common import pin_gpkg_dates  # loaded by load_recipes() already

    pin_gpkg_dates()
    for muni in municipalities():
        makers[muni][0](args.data, args.out / muni)
    for cache in args.out.glob("*/*.aux.xml"):
        cache.unlink()
    shutil.rmtree(args.out / "__pycache__", ignore_errors=True)


if __name__ == "__main__":
    main()
