"""``georeview review SUBMISSION --out DIR``: one submission, or a folder of them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from georeview.cli.options import EXIT_OK, EXIT_SOME_FAILED, settle_heap
from georeview.errors import OutputError

__all__ = ["add_arguments", "main"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``georeview review`` arguments to a (sub)parser."""
    p.add_argument(
        "submission",
        help="submission folder (submission.toml + geometry files), or a folder of them "
        "(and zip files of them) for a batch",
    )
    p.add_argument("--out", required=True, help="output folder for report.json/html and map.html")
    p.add_argument("--layers", help="layers folder (default: layers/<municipality>)")
    p.add_argument(
        "--determinations",
        metavar="FILE",
        help="the Village's determinations, kept outside the submission (for a batch, a "
        "folder of <submission name>.toml); a determinations.toml inside a submission "
        "is never read",
    )
    p.add_argument(
        "--case-number",
        metavar="TEXT",
        help="the Village's case or permit number, printed on every page of report.html",
    )
    p.add_argument(
        "--reviewer",
        metavar="NAME",
        help="who reviews it, printed in report.html's sign-off block (else a blank line)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace existing reports")
    p.add_argument("--no-map", action="store_true", help="skip map.html")
    p.add_argument(
        "--no-terrain",
        action="store_true",
        help="skip the DEM (slopes, contours, downstream trace): their findings say needs_info",
    )


def main(args: argparse.Namespace) -> int:
    """Run ``georeview review``; print the verdict line (unless --quiet)."""
    # Only what the command runs is imported: a batch check first (standard library),
    # then the one-submission or the batch pipeline.
    from georeview.pipeline.submissions import is_batch

    target = Path(args.submission)
    determinations = Path(args.determinations) if args.determinations else None
    if is_batch(target):
        return _batch(args, target, determinations)
    return _one(args, target, determinations)


def _batch(args: argparse.Namespace, target: Path, determinations: Path | None) -> int:
    """Review a folder of submissions; a bar on a terminal, then the summary and error rows."""
    from georeview.cli.progress import progress_bar, show_progress
    from georeview.pipeline.batch import review_many

    quiet = bool(getattr(args, "quiet", False))
    with progress_bar("submissions", show=show_progress(quiet)) as tick:
        res = review_many(
            target,
            Path(args.out),
            layers_dir=Path(args.layers) if args.layers else None,
            overwrite=args.overwrite,
            on_submission=tick,
            determinations_dir=determinations,
        )
    if not quiet:
        print(
            f"{target.name}: {len(res.rows)} submissions, {res.n_ok} reviewed, "
            f"{res.n_error} errors, {res.seconds:.1f} s; summary {res.summary_csv}"
        )
        print("\n".join(_outcome_lines(res.rows, res.out)))
        for r in res.rows:
            if r["status"] == "error":
                print(f"  error: {r.get('name')}: {r.get('error')}")
    if res.n_error:
        # Every other submission was reviewed and written; the exit code still says
        # that the batch is not complete, so a script cannot take it for success.
        print(
            f"georeview: error: {res.n_error} of {len(res.rows)} submissions could not be"
            f" reviewed (error rows in {res.summary_csv})",
            file=sys.stderr,
        )
        return EXIT_SOME_FAILED
    return EXIT_OK


def _outcome_lines(rows: tuple[dict, ...], out: Path) -> list[str]:
    """The batch's counts by outcome, and the tables written beside the reports."""
    from collections import Counter

    from georeview.pipeline.submissions import RESERVED

    counts = Counter(str(r.get("outcome") or r.get("status") or "-") for r in rows)
    lines = ["  outcome: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    lines += [f"  wrote {out / name}" for name in RESERVED if (out / name).exists()]
    return lines


def _one(args: argparse.Namespace, target: Path, determinations: Path | None) -> int:
    """Review one submission; print its verdict line and the files written."""
    from georeview.report.files import claim_folder

    with claim_folder(Path(args.out)) as out:  # a second run on the same --out is refused
        if (out / "report.json").exists() and not args.overwrite:
            raise OutputError("report.json exists; pass --overwrite to replace it", path=out)
        from georeview.pipeline.review import review
        from georeview.report import write_reports

        settle_heap(args)  # the libraries just imported live to the end
        result = review(
            target,
            Path(args.layers) if args.layers else None,
            with_terrain=not args.no_terrain,
            determinations=determinations,
        )
        settle_heap(args)  # and so do the result and the flow kernels, if the trace ran
        record = {"case_number": args.case_number, "reviewer": args.reviewer}
        paths = write_reports(
            result,
            out,
            with_map=not args.no_map,
            record=record,
            # a process of its own: the exhibit drawn beside the other reports
            exhibit_aside=bool(getattr(args, "one_shot", False)),
        )
    from georeview.facts.determinations import IGNORED_NOTE

    if IGNORED_NOTE in result.warnings:  # said on the terminal too: it changes the verdict
        sys.stderr.write(f"georeview: warning: {target}: {IGNORED_NOTE}\n")
    c = result.judgement
    verdict = (
        "cannot be determined (needs information)"
        if c.regulated is None
        else ("regulated" if c.regulated else "not regulated")
    )
    counts = result.counts()
    if not args.quiet:
        print(
            f"{target.name}: {result.ordinance.short_name}: {verdict}"
            + (f", {c.category}" if c.category else "")
            + (", larger site" if c.larger_site else "")
            + f"; jurisdiction {result.jurisdiction.status}; "
            f"{counts['fail']} fail, {counts['needs_info']} need information"
        )
        for p in paths.values():
            print(f"  wrote {p}")
    return EXIT_OK
