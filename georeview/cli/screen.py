"""``georeview screen PARCELS --layers DIR --out FILE``: every parcel against the ordinance."""

from __future__ import annotations

import argparse
import sys

from georeview.cli.options import EXIT_OK, EXIT_SOME_FAILED
from georeview.cli.progress import progress_bar, show_progress
from georeview.pipeline.partitions import PARTITION_SIZE

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``georeview screen`` arguments to ``parser``."""
    parser.add_argument(
        "parcels",
        help="parcel polygons: GeoPackage, shapefile (or .zip), GeoJSON, FlatGeobuf,"
        " File Geodatabase (.gdb folder or .zip), KML/KMZ, GeoParquet, CSV with WKT or x/y"
        " columns (CRS from the .prj beside it, or --crs)",
    )
    parser.add_argument("--layers", required=True, help="layers folder (with layers.toml)")
    parser.add_argument(
        "--out", required=True, help="output .csv, .xlsx, .gpkg, .parquet, .fgb, .geojson or .shp"
    )
    parser.add_argument(
        "--crs",
        help="CRS of a CSV parcel file, e.g. EPSG:4326 (a .prj beside the CSV gives it too;"
        " given both, they must agree)",
    )
    parser.add_argument(
        "--no-bom", action="store_true", help="write a CSV output without the UTF-8 BOM"
    )
    parser.add_argument(
        "--assume",
        default="disturb=whole",
        help='assumed activity, e.g. "disturb=whole" or "disturb_acres=1.5,kinds=subdivision"',
    )
    parser.add_argument("--id-field", help="parcel id field (default PARCELID)")
    parser.add_argument(
        "--columns",
        help='column map for other schemas: "id=ML,propclass=CLASS,owner=OWNER,..."',
    )
    parser.add_argument("--layer", help="layer of a multi-layer parcel file")
    parser.add_argument(
        "--threads",
        type=int,
        help="partitions screened at once in this process (default: one per core; 1: one"
        " after another)",
    )
    parser.add_argument("--workers", type=int, default=1, help="local Dask worker processes")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://...)")
    parser.add_argument(
        "--partition-size", type=int, default=PARTITION_SIZE, help="parcels per partition"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output")
    parser.add_argument(
        "--index",
        metavar="FILE.html",
        help="also write a results page: sortable table and map of every parcel",
    )


def main(args: argparse.Namespace) -> int:
    """Run ``georeview screen``; print progress (on a terminal) and the summary."""
    # imported here: the parser (and ``--help``) needs none of pandas, shapely or the rules
    from georeview.pipeline.assume import parse_columns
    from georeview.pipeline.run import run_screen

    quiet = bool(getattr(args, "quiet", False))
    columns = parse_columns(args.columns, args.id_field)
    kw = {
        "assume": args.assume,
        "columns": columns,
        "layer": args.layer,
        "workers": args.workers,
        "scheduler": args.scheduler,
        "threads": args.threads,
        "partition_size": args.partition_size,
        "overwrite": args.overwrite,
        "index": args.index,
        "crs": args.crs,
        "csv_bom": not args.no_bom,
    }
    with progress_bar("partitions", show=show_progress(quiet)) as tick:
        summary = run_screen(args.parcels, args.layers, args.out, on_partition=tick, **kw)
    if not quiet:
        print("\n".join(summary.lines()))
    n_bad = summary.counts.get("status", {}).get("error", 0)
    if n_bad:
        # The output is complete (error rows included); the exit code says it has errors.
        print(
            f"georeview: error: {n_bad:,} of {summary.rows:,} parcels could not be screened"
            f" (status = error in {summary.out})",
            file=sys.stderr,
        )
        return EXIT_SOME_FAILED
    return EXIT_OK
