"""The command line's small contracts: --version, rules, broken pipes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from georeview import __version__
from georeview.cli import main
from georeview.rules import load_ordinance
from tests._build import shipped_municipalities


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"georeview {__version__}"


@pytest.mark.parametrize("municipality", shipped_municipalities())
def test_rules_lists_every_rule_with_its_citation(municipality, capsys):
    assert main(["rules", municipality]) == 0
    out = capsys.readouterr().out
    for rule in load_ordinance(municipality).rules:
        line = next(ln for ln in out.splitlines() if f" {rule.id} " in ln)
        assert line.startswith(rule.citation)
    assert f"{municipality}.reach" in out


def test_unknown_municipality_is_one_line(capsys):
    assert main(["rules", "springfield"]) == 2
    err = capsys.readouterr().err
    assert "no ordinance folder for municipality 'springfield'" in err


def test_closed_pipe_is_not_a_traceback():
    proc = subprocess.run(
        f"{sys.executable} -m georeview rules | head -1",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.stdout.startswith("# ")
    assert "Traceback" not in proc.stderr


def test_import_stays_light():
    # STYLE.md: importing georeview (and building the CLI) loads no map, plotting,
    # cluster or flow-routing library; the stage that needs one imports it.
    code = (
        "import sys, georeview, georeview.pipeline.review, georeview.cli;"
        "georeview.cli.build_parser();"
        "heavy = {'folium', 'dask', 'distributed', 'matplotlib', 'pyflwdir', 'numba',"
        " 'playwright'};"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


def test_each_command_line_imports_only_its_command():
    # Issue 16: start-up counts in every review. A command line naming no subcommand
    # (--version, --help) loads no subcommand module, and `review --help` none of the
    # screening's (pandas, pyarrow, the screening pipeline).
    code = (
        "import sys\n"
        "from georeview.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "names = {'pandas', 'pyarrow', 'geopandas', 'georeview.pipeline.screen',"
        " 'georeview.cli.screen', 'georeview.cli.sitemap'}\n"
        "print(sorted(names & set(sys.modules)), file=sys.stderr)\n"
    )
    for argv in (["--version"], ["--help"], ["review", "--help"]):
        proc = subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True
        )
        assert proc.stderr.strip().splitlines()[-1] == "[]", argv
