"""``georeview layers build OUT_DIR ...``: a municipality's layers folder from public downloads."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from georeview.cli.options import EXIT_OK, common_parser
from georeview.cli.progress import progress_bar, show_progress

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``georeview layers`` arguments to ``parser``."""
    sub = parser.add_subparsers(dest="layers_command", required=True, metavar="build")
    p = sub.add_parser(
        "build",
        parents=[common_parser()],
        help="make a layers folder (layers.toml, provenance.json) from public downloads",
        description="Make a municipality's layers folder from the public downloads: the"
        " Wisconsin LTSB municipal boundaries, FEMA NFHL S_FLD_HAZ_AR (or a flood-depth grid),"
        " the Wisconsin Wetland Inventory, NHD/NHDPlus HR flowlines and waterbodies, SSURGO"
        " and DEM tiles. Each FILE may be any vector format georeview reads; name a layer of a"
        " multi-layer file with the matching --*-layer option.",
    )
    p.add_argument("out", help="layers folder to write")
    p.add_argument("--municipality", required=True, help="ordinance name, e.g. deerfield")
    p.add_argument("--name", required=True, help="LTSB MCD_NAME, e.g. Deerfield")
    p.add_argument("--kind", required=True, choices=["C", "V", "T"], help="LTSB CTV")
    p.add_argument("--boundaries", required=True, help="LTSB municipal boundaries file")
    for key, what in (
        ("floodplain", "FEMA NFHL S_FLD_HAZ_AR, or a FEMA flood-depth raster (.tif)"),
        ("wetlands", "Wisconsin Wetland Inventory polygons"),
        ("flowlines", "NHD / NHDPlus HR NHDFlowline"),
        ("waterbodies", "NHD / NHDPlus HR NHDWaterbody"),
        ("soils", "SSURGO soilmu_a with component and chorizon tables (gSSURGO database)"),
        ("roads", "road centrelines (Census TIGER/Line)"),
    ):
        p.add_argument(f"--{key}", help=what)
    for key in (
        "boundaries",
        "floodplain",
        "wetlands",
        "flowlines",
        "waterbodies",
        "soils",
        "roads",
    ):
        p.add_argument(f"--{key}-layer", help=f"layer of the --{key} file")
    p.add_argument("--dem", nargs="+", default=[], metavar="TILE", help="DEM tiles (one grid)")
    p.add_argument("--dem-vertical-units", choices=["m", "ft", "us_ft"], help="DEM z units")
    p.add_argument("--working-crs", default="EPSG:3071", help="projected CRS (EPSG:3071)")
    p.add_argument(
        "--city-class",
        action="append",
        default=[],
        metavar="NAME=N",
        help="class of a city (1 to 4), e.g. Madison=2; repeatable",
    )
    p.add_argument(
        "--vintage",
        action="append",
        default=[],
        metavar="KEY=TEXT",
        help="date or edition of a download, e.g. boundaries=2025-01; repeatable",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing folder's files")


def main(args: argparse.Namespace) -> int:
    """Run ``georeview layers build``; print what was written."""
    from georeview.errors import ConfigError
    from georeview.load.build import build_layers
    from georeview.load.downloads import Download

    def pairs(items: list[str], option: str) -> dict[str, str]:
        out = {}
        for item in items:
            key, sep, value = item.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise ConfigError(f"expected NAME=VALUE, got {item!r}", field=option)
            out[key.strip()] = value.strip()
        return out

    vintages = pairs(args.vintage, "--vintage")
    classes = {}
    for k, v in pairs(args.city_class, "--city-class").items():
        if v not in ("1", "2", "3", "4"):
            raise ConfigError(f"{k}: a city class is 1 to 4, got {v!r}", field="--city-class")
        classes[k] = int(v)

    def download(key: str) -> Download | None:
        path = getattr(args, key)
        if path is None:
            return None
        return Download(Path(path), getattr(args, f"{key}_layer"), vintages.get(key))

    quiet = bool(getattr(args, "quiet", False))
    started = time.monotonic()
    with progress_bar("layers build", show=show_progress(quiet)) as tick:
        prov = build_layers(
            args.out,
            municipality=args.municipality,
            name=args.name,
            kind=args.kind,
            boundaries=download("boundaries"),  # type: ignore[arg-type]
            floodplain=download("floodplain"),
            wetlands=download("wetlands"),
            flowlines=download("flowlines"),
            waterbodies=download("waterbodies"),
            soils=download("soils"),
            roads=download("roads"),
            dem_tiles=tuple(Path(t) for t in args.dem),
            dem_vertical_units=args.dem_vertical_units,
            working_crs=args.working_crs,
            city_class=classes,
            overwrite=args.overwrite,
            on_step=tick,
        )
    if not quiet:
        print("\n".join(summary_lines(prov, Path(args.out), time.monotonic() - started)))
    return EXIT_OK


def summary_lines(prov: dict[str, Any], out: Path, seconds: float) -> list[str]:
    """What was written: each layer and its source, then one summary line."""
    lines = [f"wrote {out / 'layers.toml'} and provenance.json"]
    n_features = 0
    for name, src in prov["layers"].items():
        kept = src.get("features_kept")
        n_features += kept or 0
        what = f"{kept:,} features" if kept is not None else f"{len(src['tiles'])} tiles"
        lines.append(f"  {name}: {what} from {Path(src.get('file', '') or 'tiles').name}")
    j = prov.get("jurisdictions", {})
    ceded = j.get("ceded_acres", {})
    lines.append(
        f"built {len(prov['layers'])} layers ({n_features:,} features) in {seconds:.1f} s;"
        f" extraterritorial area {j.get('extraterritorial_acres', 0):,.1f} acres"
        + (f", {sum(ceded.values()):,.1f} acres of it to {len(ceded)} neighbours" if ceded else "")
        + " by the equidistant line"
    )
    return lines
