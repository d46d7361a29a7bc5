"""Report stage: one result dict → report.json and report.html.

Both outputs are rendered from :meth:`georeview.pipeline.result.Review.to_dict`; the HTML
uses a Jinja2 template shipped in the package with autoescaping on, so text
from a submission (names, descriptions, attribute values) is always escaped.
Files are written to a temporary name and renamed, so a failed write never
leaves a partial file that looks complete.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from georeview.report.files import write_atomic
from georeview.report.numbers import number_text

STATUS_ORDER = ("fail", "needs_info", "pass", "not_applicable")


def _jsonable(value: Any) -> Any:
    """Make a value strict-JSON safe: numpy scalars become Python, NaN becomes null."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def css_string(text: Any) -> Any:
    """Quote text as a CSS string literal, every character outside [A-Za-z0-9 ] escaped.

    The printed page's running header (``@page`` margin boxes) can only take its text
    from the stylesheet, where HTML escaping does not apply; a hex escape for every
    other character keeps a quote, a backslash or ``</style>`` from an applicant's
    submission name inert.
    """
    from markupsafe import Markup

    out = "".join(
        c if c.isascii() and (c.isalnum() or c == " ") else f"\\{ord(c):x} "
        for c in str(text or "")
    )
    return Markup(f'"{out}"')


def to_json(report: dict[str, Any]) -> str:
    """Serialise a report dict as strict JSON (no NaN), two-space indented."""
    return json.dumps(_jsonable(report), indent=2, ensure_ascii=False, allow_nan=False)


def _compile_settings(env: Any) -> str:
    """What a template's compiled code depends on besides its source and Python.

    Jinja's cache checks the source's digest and Python's version only; the
    environment's syntax and whitespace settings, its extensions, its autoescaping
    of each template and Jinja's own version are read here, so a change to any of
    them reads from another folder of the cache.
    """
    import jinja2

    names = env.list_templates()
    escapes = [
        bool(env.autoescape(n)) if callable(env.autoescape) else env.autoescape for n in names
    ]
    return repr(
        (
            jinja2.__version__,
            env.block_start_string,
            env.block_end_string,
            env.variable_start_string,
            env.variable_end_string,
            env.comment_start_string,
            env.comment_end_string,
            env.line_statement_prefix,
            env.line_comment_prefix,
            env.trim_blocks,
            env.lstrip_blocks,
            env.newline_sequence,
            env.keep_trailing_newline,
            env.optimized,
            sorted(env.extensions),
            list(zip(names, escapes, strict=True)),
        )
    )


def _bytecode_cache(env: Any) -> Any:
    """Jinja's cache of ``env``'s compiled templates in georeview's cache folder, or None.

    Compiling report.html takes about 0.1 s, a tenth of writing a review's reports;
    loading it compiled takes a millisecond. The folder's name is a digest of
    :func:`_compile_settings`; Jinja checks each entry's source and Python version.
    No cache folder (``GEOREVIEW_CACHE_DIR=off``) or one that cannot be written
    leaves the templates compiled each time, as without a cache.
    """
    import hashlib

    from jinja2 import FileSystemBytecodeCache

    from georeview.pipeline.jurisdictions import cache_dir, private_folder

    root = cache_dir()
    if root is None:
        return None
    key = hashlib.sha256(_compile_settings(env).encode()).hexdigest()[:16]
    # Jinja loads the cached code and runs it: whoever could write a folder on the way
    # could run code as the reviewer, so each level passes the jurisdictions cache's check
    # (a real folder, this user's, writable by nobody else) or the templates are compiled
    if private_folder(root / "templates") is None:
        return None
    folder = private_folder(root / "templates" / key)
    if folder is None:
        return None

    class QuietCache(FileSystemBytecodeCache):
        """A failed write of the cache is no failure of the report."""

        def dump_bytecode(self, bucket: Any) -> None:
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)

    return QuietCache(str(folder))


@cache
def template_env() -> Any:
    """The Jinja environment of the package templates (autoescaped), one per process.

    One environment keeps each template compiled once: a batch renders report.html
    for every submission from the same compiled template.
    """
    from jinja2 import Environment, PackageLoader, select_autoescape

    from georeview.report import reader

    env = Environment(
        loader=PackageLoader("georeview", "templates"),
        autoescape=select_autoescape(["html", "xml"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.bytecode_cache = _bytecode_cache(env)
    env.filters["num"] = number_text  # None shows as an em dash
    env.filters["pct"] = lambda v: "" if v is None else f"{100 * v:.1f} %"
    env.filters["qty"] = reader.quantity
    env.filters["plain"] = lambda text: reader.plain(str(text or ""))[0]
    # a local interpretation's tag: said in the caveats and on the rows resting on it
    env.filters["untag"] = reader.untag
    env.filters["css_string"] = css_string
    return env


def render_html(
    report: dict[str, Any],
    *,
    map_file: str | None = "map.html",
    map_html: str | None = None,
    review: Any = None,
    exhibit: Any = None,
    record: dict[str, str | None] | None = None,
) -> str:
    """Render report.html from the report dict.

    Parameters
    ----------
    report : dict
        ``Review.to_dict()`` (plus ``deadlines`` and ``fees`` when known).
    map_file : str or None
        Relative link to map.html (``None``: no map section unless ``map_html``).
    map_html : str, optional
        The complete map page; embedded in the report (``<iframe srcdoc>``) so
        that report.html alone shows the map, e.g. when it is e-mailed.
    review : georeview.pipeline.result.Review, optional
        The review the dict came from: with it, each finding's evidence and the
        facts a needs-information finding lacks are read from the rules (a
        finding's own ``evidence`` field wins when report.json carries one).
    exhibit : georeview.report.exhibit.Exhibit, optional
        The static site exhibit the print carries instead of the interactive map.
    record : dict, optional
        The Village's record of this review for the printed header and sign-off:
        ``case_number`` and ``reviewer`` (blank lines to fill in by hand when absent).
    """
    from georeview.report import reader
    from georeview.report.rule_reads import rule_facts
    from georeview.report.village import village_facts_read, village_view

    evidence: dict[str, list[str]] = {}
    missing: dict[str, list[str]] = {}
    sources: dict[str, str] = {}
    village_read: dict[str, dict[str, Any]] = {}
    extra: dict[str, Any] = {}
    if review is not None:
        from georeview.facts.registry import registry

        village_read = village_facts_read(review)
        evidence = reader.derive_evidence(review)
        missing = reader.missing_facts(review)
        reg = registry()
        sources = {f: reg.source(f) or "" for names in missing.values() for f in names}
        # what each finding's number is, the comparisons' values, the rows a local
        # interpretation changes and the Village facts nobody decided (reader.view)
        extra = {
            "measures": reader.rule_measures(review),
            "facts": review.facts,
            "interpretations": reader.interpretation_uses(review),
            "undecided": reader.village_undecided(review),
            "reads": rule_facts(review.ordinance),
        }
    v = reader.view(report, evidence=evidence, missing=missing, fact_sources=sources, **extra)
    tech = {}
    for rows in (*v["compliance"].values(), v["determinations"], v["not_applicable"]):
        for row in rows:
            tech[row["f"]["rule_id"]] = row["technical"] + (
                row.get("supply", {}).get("keys", []) if row.get("supply") else []
            )
    return (
        template_env()
        .get_template("report.html")
        .render(
            r=report,
            v=v,
            village=village_view(report, village_read),
            tech=tech,
            ev_words=reader.EVIDENCE_WORDS,
            fee_status={"due": "due", "actual_cost": "actual cost", "waived": "waived"},
            map_file=map_file,
            map_html=map_html,
            exhibit=exhibit,
            record=record or {},
            today=dt.date.today().isoformat(),
        )
    )


def write_reports(
    review: Any,
    out_dir: Path,
    *,
    with_map: bool = True,
    with_layers: bool = True,
    record: dict[str, str | None] | None = None,
    exhibit_aside: bool = False,
) -> dict[str, Path]:
    """Write report.json, report.html, layers.gpkg and (optionally) map.html for one review.

    The map is built once: written as map.html and embedded in report.html. With the
    map, report.html also embeds the static site exhibit its print carries
    (:mod:`georeview.report.exhibit`). layers.gpkg holds the review's geometry for a
    GIS (:mod:`georeview.report.gpkg`). ``record`` is the case number and reviewer
    printed on every page and in the sign-off block (:func:`render_html`).

    ``exhibit_aside`` draws the exhibit in a forked child while this process writes
    the rest (:mod:`georeview.report.aside`): the same bytes, sooner on a second core.
    It is for a process that writes one review and ends (the CLI's): the child's log
    records go to the handlers it inherited, not to ones added later.
    """
    out_dir = Path(out_dir)
    draw: Callable[[], Any] | None = None
    if with_map:
        from functools import partial

        from georeview.report.exhibit import draw_exhibit

        draw = partial(draw_exhibit, review)
        if exhibit_aside:
            from georeview.report.aside import aside

            draw = aside(draw)
    report = review.to_dict()
    paths = {
        "json": write_atomic(out_dir / "report.json", to_json(report)),
    }
    map_html = None
    exhibit = None
    if with_map:
        from georeview.report.webmap import build_map, render_map

        map_html = render_map(build_map(review, report))
        paths["map"] = write_atomic(out_dir / "map.html", map_html)
    if with_layers:
        from georeview.report.gpkg import write_layers_gpkg

        paths["gpkg"] = write_layers_gpkg(review, report, out_dir / "layers.gpkg")
    if draw is not None:
        exhibit = draw()
    paths["html"] = write_atomic(
        out_dir / "report.html",
        render_html(
            report,
            map_file="map.html" if with_map else None,
            map_html=map_html,
            review=review,
            exhibit=exhibit,
            record=record,
        ),
    )
    return paths
