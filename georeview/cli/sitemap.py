"""``georeview sitemap SUBMISSION --out sheet.pdf``: a true-scale site-map sheet."""

from __future__ import annotations

import argparse
from pathlib import Path

from georeview.errors import OutputError

__all__ = ["add_arguments", "main"]




def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``georeview sitemap`` arguments to a (sub)parser."""
    parser.add_argument("submission", help="submission folder (submission.toml + geometry)")
    parser.add_argument("--out", required=True, help="PDF to write (e.g. sheet.pdf)")
    parser.add_argument("--layers", help="layers folder (default: layers/<municipality>)")
    parser.add_argument(
        "--sheet",
        choices=("auto", "ledger", "ansi_d"),
        default="auto",
        help="ledger (17 x 11 in), ANSI D (34 x 22 in), or auto: ledger when the site fits "
        "at 1 in = 100 ft or finer (default)",
    )
    parser.add_argument(
        "--contour-interval",
        type=float,
        default=2.0,
        help="contour interval in ft (default 2; at most the ordinance's maximum)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing PDF")


def main(args: argparse.Namespace) -> int:
    """Run ``georeview sitemap`` from parsed arguments; return the exit code.

    Errors (:class:`georeview.errors.GeoReviewError`) propagate to the CLI, which
    prints one line and exits 2.
    """
    out = Path(args.out)
    if out.exists() and not args.overwrite:
        raise OutputError("exists; pass --overwrite to replace it", path=out)
    from georeview.report.sheet import make_sheet

    info = make_sheet(
        Path(args.submission),
        out,
        layers_dir=Path(args.layers) if args.layers else None,
        sheet=args.sheet,
        contour_interval_ft=args.contour_interval,
    )
    if not getattr(args, "quiet", False):
        w, h = info.page_size_in
        print(
            f"wrote {info.path}: {info.sheet} {w:g} x {h:g} in at 1 in = "
            f"{info.scale_ft_per_inch} ft; grid {info.grid_columns[0]}-{info.grid_columns[-1]}"
            f" x 1-{info.grid_rows}; site in {', '.join(info.site_cells)}"
        )
    return 0
