"""`georeview ordinance new NAME --from M` and `georeview rules NAME --check`.

A copy made by the command is a working municipality with no hand edit: `rules --check` finds
no error, and a shipped sample reviewed under the new name (its layers folder copied with
`municipality` changed) gives the same findings, one to one, as under the source, with only
the id prefix changed. Defects seeded into a copy (a rule the code looks up removed, a fact the
registry lacks, values out of range or of the wrong type, a coverage entry naming a missing
rule, a missing file) are each reported, naming the file and the key. The folders live in
tmp_path, found through $GEOREVIEW_ORDINANCES (monkeypatched).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest

import georeview
from georeview.cli import main
from georeview.rules.expected import CODE_PARAMETERS, CODE_RULES

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(georeview.__file__).parent


@pytest.fixture
def packs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "packs"
    monkeypatch.setenv("GEOREVIEW_ORDINANCES", str(folder))
    return folder


def _new(name: str, source: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["ordinance", "new", name, "--from", source]) == 0
    return capsys.readouterr().out


def _check(name: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    code = main(["rules", name, "--check"])
    cap = capsys.readouterr()
    lines = [ln for ln in cap.out.splitlines() if ln and not ln.startswith("#")]
    return code, lines, cap.err


def _errors(lines: list[str]) -> list[str]:
    return [ln for ln in lines if ": warning: " not in ln]


# --- ordinance new ------------------------------------------------------------------------


def test_new_copies_renames_and_says_what_is_still_the_sources(packs, capsys):
    out = _new("waunakee", "deerfield", capsys)
    pack = packs / "waunakee"
    # the default destination is the first $GEOREVIEW_ORDINANCES folder
    assert (pack / "ordinance.toml").is_file()
    shipped = sorted(p.name for p in (PACKAGE / "ordinances" / "deerfield").iterdir())
    assert sorted(p.name for p in pack.iterdir()) == sorted([*shipped, "NOTICE.md"])
    assert "STILL DEERFIELD'S" in out
    assert "money.toml" in out
    assert "ordinance.txt" in out
    assert "rules waunakee --check" in out
    # the adopted text is copied byte for byte (coverage.toml maps its headings)
    src = PACKAGE / "ordinances" / "deerfield" / "ordinance.txt"
    assert (pack / "ordinance.txt").read_bytes() == src.read_bytes()
    for f in pack.glob("*.toml"):
        text = f.read_text(encoding="utf-8")
        assert text.startswith("# COPIED by `georeview ordinance new waunakee --from deerfield`")
        assert "still deerfield's until you edit it" in text
        # no id, key or data citation of Deerfield is left; only quoted words and sources
        assert not re.search(r"(?<![\w-])deerfield\.\w", text.split("\n\n", 1)[1]), f.name
        assert 'municipality = "deerfield"' not in text
        assert not re.search(r'"Deerfield \d', text), f.name
    # the shipped ids each have their renamed twin: 1 ordinance.toml + 3 rule files
    shipped_ids = re.findall(
        r'(?m)^id = "deerfield\.([^"]+)"',
        "".join(
            (PACKAGE / "ordinances" / "deerfield" / n).read_text(encoding="utf-8")
            for n in ("ordinance.toml", "plan.toml", "sitemap.toml", "engineering.toml")
        ),
    )
    copied_ids = re.findall(
        r'(?m)^id = "waunakee\.([^"]+)"',
        "".join(
            (pack / n).read_text(encoding="utf-8")
            for n in ("ordinance.toml", "plan.toml", "sitemap.toml", "engineering.toml")
        ),
    )
    assert copied_ids == shipped_ids
    assert len(shipped_ids) > 70
    calendar = (pack / "calendar.toml").read_text(encoding="utf-8")
    assert 'label = "Village of Waunakee"' in calendar
    assert 'citation = "Waunakee 31.10(1)"' in calendar
    o = georeview.load_ordinance("waunakee")
    assert o.title.startswith("Waunakee: copy of Village of Deerfield")
    # values are the source's: the same parameters, to the digit
    assert o.parameters == georeview.load_ordinance("deerfield").parameters


def test_new_refuses_an_existing_folder_unless_overwrite(packs, capsys):
    _new("waunakee", "deerfield", capsys)
    marker = packs / "waunakee" / "edited.txt"
    marker.write_text("kept?", encoding="utf-8")
    assert main(["ordinance", "new", "waunakee", "--from", "deerfield"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "folder exists; give --overwrite" in err[0]
    assert str(packs / "waunakee") in err[0]
    assert marker.is_file()
    assert main(["ordinance", "new", "waunakee", "--from", "deerfield", "--overwrite", "-q"]) == 0
    assert not marker.exists()
    assert (packs / "waunakee" / "ordinance.toml").is_file()
    # no temporary or moved-aside folder left beside it
    assert [p.name for p in packs.iterdir()] == ["waunakee"]


@pytest.mark.parametrize(
    "name", ["Waunakee", "waunakee town", "../waunakee", "w.aunakee", "1waunakee", ""]
)
def test_new_refuses_an_unsafe_name(packs, capsys, name):
    assert main(["ordinance", "new", name, "--from", "deerfield"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "NAME: " in err[0]
    assert "not a municipality name" in err[0]
    assert not packs.exists()


def test_new_refuses_the_package_and_a_known_name(tmp_path, packs, capsys):
    argv = ["ordinance", "new", "waunakee", "--from", "deerfield"]
    assert main([*argv, "--out", str(PACKAGE / "ordinances")]) == 2
    assert "will not write into the installed package" in capsys.readouterr().err
    assert not (PACKAGE / "ordinances" / "waunakee").exists()
    # somers is shipped: a second folder of that name would shadow or be shadowed
    assert main(["ordinance", "new", "somers", "--from", "deerfield"]) == 2
    assert "already on the search path" in capsys.readouterr().err
    # --out elsewhere: written there, and the command says how to put it on the path
    assert main([*argv, "--out", str(tmp_path / "elsewhere")]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "elsewhere" / "waunakee" / "ordinance.toml").is_file()
    assert "export GEOREVIEW_ORDINANCES=" in out


# --- the copy works: rules --check, and a review gives the source's findings --------------


def _sample_under(name: str, source: str, sample: str, tmp: Path) -> tuple[Path, Path]:
    """The sample and the source's layers, copied with ``municipality`` set to ``name``."""
    layers = tmp / "layers" / name
    shutil.copytree(ROOT / "layers" / source, layers)
    sub = tmp / "submissions" / sample
    shutil.copytree(ROOT / "sample_sites" / sample, sub)
    for f in (layers / "layers.toml", sub / "submission.toml"):
        text = f.read_text(encoding="utf-8")
        assert f'municipality = "{source}"' in text
        f.write_text(text.replace(f'municipality = "{source}"', f'municipality = "{name}"'))
    return sub, layers


def _review(sub: Path, layers: Path, out: Path) -> dict:
    argv = ["review", str(sub), "--layers", str(layers), "--out", str(out), "--no-map", "-q"]
    assert main(argv) == 0
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("name", "source", "sample"),
    [
        ("waunakee", "deerfield", "deerfield_wetland_floodplain"),
        # another name than waunakee: calendar closures are cached by municipality name
        ("paddock_lake", "somers", "somers_bad_map"),
    ],
)
def test_a_copy_checks_clean_and_reviews_like_its_source(
    packs, tmp_path, capsys, name, source, sample
):
    _new(name, source, capsys)
    code, lines, err = _check(name, capsys)
    assert code == 0, _errors(lines)
    assert _errors(lines) == []
    assert err == ""
    # the warnings say the text is still the source's
    text_warning = f"{packs / name / 'ordinance.txt'}: warning: is the text of {source} "
    assert any(ln.startswith(text_warning) for ln in lines)
    assert any(
        ln.startswith(f"{packs / name / 'ordinance.toml'}: title: warning: ") for ln in lines
    )
    sub, layers = _sample_under(name, source, sample, tmp_path)
    new = _review(sub, layers, tmp_path / "out_new")
    old = _review(ROOT / "sample_sites" / sample, ROOT / "layers" / source, tmp_path / "out_old")
    assert new["municipality"] == name
    renamed = [
        (f["rule_id"].replace(f"{source}.", f"{name}.", 1), f["status"], f["citation"])
        for f in old["findings"]
    ]
    assert [(f["rule_id"], f["status"], f["citation"]) for f in new["findings"]] == renamed
    assert len(renamed) > 70
    # a sample with failures and passes (and not-applicable rows), so the comparison can fail
    assert {"pass", "fail", "not_applicable"} <= {s for _, s, _ in renamed}
    assert new["measures"] == old["measures"]
    assert new["classification"] == old["classification"]
    amounts = [(i["id"], i.get("amount_usd")) for i in new["fees"]["items"]]
    assert amounts == [(i["id"], i.get("amount_usd")) for i in old["fees"]["items"]]
    dates = [(d["id"], d["date"]) for d in new["deadlines"]]
    assert dates == [(d["id"], d["date"]) for d in old["deadlines"]]
    # the data citations name the new municipality, never the source
    assert source.title() not in json.dumps([new["fees"], new["deadlines"]])


# --- rules --check finds every seeded defect, naming file and key --------------------------


def _edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path.name, old)
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _drop_rule(path: Path, rule_id: str) -> None:
    """Remove the ``[[rules]]`` block of ``rule_id`` from a rule file."""
    text = path.read_text(encoding="utf-8")
    blocks = text.split("\n[[rules]]\n")
    kept = [b for b in blocks if not b.startswith(f'id = "{rule_id}"')]
    assert len(kept) == len(blocks) - 1
    path.write_text("\n[[rules]]\n".join(kept), encoding="utf-8")


def test_check_reports_every_seeded_defect(packs, capsys):
    _new("waunakee", "deerfield", capsys)
    pack = packs / "waunakee"
    main_toml, sitemap, plan = pack / "ordinance.toml", pack / "sitemap.toml", pack / "plan.toml"
    # 1. the rule the site-map facts look up, removed
    _drop_rule(sitemap, "waunakee.sitemap.adjacent")
    # 2. a fact the registry does not have
    _edit(plan, 'fact = "plan.has.schedule"', 'fact = "plan.has.schedules"')
    # 3. values out of range or of the wrong type: a negative area (disturbed_area_sqft is
    #    in sq ft), a text for a limit in sq ft, a share above 1, a required parameter
    #    missing, one of the wrong type, and a reach table without a kind
    area = 'when = { fact = "disturbed_area_sqft", op = ">=", value = 4000.0 }'
    _edit(main_toml, area, area.replace("4000.0", "-4000.0"))
    _edit(main_toml, "limit = 4000.0", 'limit = "4,000"')
    _edit(
        main_toml,
        "[parameters.downstream_trace_ft]\nvalue = 1320.0",
        '[parameters.downstream_trace_ft]\nvalue = "a quarter mile"',
    )
    _edit(main_toml, "[parameters.steep_slope_pct]", "[parameters.steep_slope_percent]")
    _edit(main_toml, "village = 1.5, town = 0.0", "village = 1.5")
    major = 'applies_when = { fact = "classification.category", op = "==", value = "major" }'
    share = 'applies_when = { fact = "jurisdiction.share.village", op = ">", value = 1.5 }'
    _edit(
        sitemap,
        f'{major}\nfact = "site_map.shows.adjacent_lands"',
        f'{share}\nfact = "site_map.shows.adjacent_lands"',
    )
    # 4. a coverage entry pointing to a rule that does not exist
    _edit(pack / "coverage.toml", 'rules = ["waunakee.31.04"]', 'rules = ["waunakee.31.04.x"]')
    # 5. a file missing, a design depth below 0
    (pack / "usle.toml").unlink()
    _edit(pack / "rainfall.toml", "depths_in = {}", 'depths_in = { "2yr" = -2.9 }')

    code, lines, err = _check("waunakee", capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("georeview: error: waunakee:")
    errors = "\n".join(_errors(lines))

    def said(file: Path, key: str, *words: str) -> None:
        hit = [ln for ln in _errors(lines) if ln.startswith(f"{file}: {key}: ")]
        assert hit, f"nothing on {file.name}: {key} in\n{errors}"
        assert all(w in hit[0] for w in words), hit[0]

    said(sitemap, "rules.waunakee.sitemap.adjacent", "missing rule", "georeview/facts/sitemap.py")
    said(pack / "coverage.toml", "paragraph 31.09(1)(A)", "no rule 'waunakee.sitemap.adjacent'")
    said(plan, "rules.waunakee.31.09.1.C.3", "unknown fact(s) plan.has.schedules")
    said(main_toml, "rules.waunakee.31.06.1.C.when", "sq ft, never negative", "-4000.0")
    said(main_toml, "rules.waunakee.31.06.1.C.limit", "is a number", "'4,000'")
    said(main_toml, "parameters.downstream_trace_ft", "positive number", "'a quarter mile'")
    said(main_toml, "parameters.steep_slope_pct", "missing parameter", "steep-slope")
    said(main_toml, "parameters.etj_miles", "no reach (miles) for town")
    said(sitemap, "rules.waunakee.31.09.1.A.1.adjacent.applies_when", "fraction (0 to 1)", "1.5")
    said(pack / "coverage.toml", "paragraph 31.04", "no rule 'waunakee.31.04.x'")
    said(pack / "rainfall.toml", "depths_in.2yr", "inches above 0", "-2.9")
    assert f"{pack / 'usle.toml'}: file not found; it holds the USLE R factor" in errors
    # each problem once, and all of them: the loader stopped at the first before
    assert len(_errors(lines)) == len(set(_errors(lines))) >= 10


def test_check_names_a_rule_citing_a_paragraph_the_text_lacks(packs, capsys):
    _new("waunakee", "deerfield", capsys)
    plan = packs / "waunakee" / "plan.toml"
    text = plan.read_text(encoding="utf-8")
    first = re.search(r'(?m)^id = "(waunakee\.[^"]+)"\nkind = "\w+"\ncitation = "([^"]+)"', text)
    assert first is not None
    _edit(plan, f'citation = "{first.group(2)}"', 'citation = "§ 31.99(9)"')
    code, lines, _ = _check("waunakee", capsys)
    assert code == 2
    assert (
        f"{plan}: rules.{first.group(1)}.citation: cites 31.99(9), not a paragraph of the "
        "text" in lines
    )


def test_a_missing_ordinance_text_is_named_not_an_internal_error(packs, capsys):
    _new("waunakee", "deerfield", capsys)
    text = packs / "waunakee" / "ordinance.txt"
    text.unlink()
    code, lines, _ = _check("waunakee", capsys)
    assert code == 2
    assert _errors(lines) == [f"{text}: file not found; it holds the adopted text"]


def test_review_without_the_adjacent_rule_names_the_file_and_the_fix(packs, tmp_path, capsys):
    _new("waunakee", "deerfield", capsys)
    sitemap = packs / "waunakee" / "sitemap.toml"
    _drop_rule(sitemap, "waunakee.sitemap.adjacent")
    sub, layers = _sample_under("waunakee", "deerfield", "deerfield_major_commercial", tmp_path)
    argv = ["review", str(sub), "--layers", str(layers), "--out", str(tmp_path / "o"), "-q"]
    assert main([*argv, "--no-map"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"georeview: error: {sitemap}: rules.waunakee.sitemap.adjacent: ")
    assert "no rule 'waunakee.sitemap.adjacent'" in err[0]
    assert "limit = the distance in ft" in err[0]
    assert "rules waunakee --check" in err[0]


def test_the_shipped_municipalities_check_without_error(capsys):
    for name in ("deerfield", "somers"):
        code, lines, err = _check(name, capsys)
        assert (code, _errors(lines), err) == (0, [], "")


# --- the lookups declared in georeview.rules.expected are the code's -----------------------

_PARAM_CALL = re.compile(r"\b(?:param|citation_of|val)\(\s*[\"']([a-z0-9_]+)[\"']\s*\)")


def test_every_parameter_and_rule_the_code_looks_up_is_declared():
    params: set[str] = set()
    suffixes: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        params |= set(_PARAM_CALL.findall(text))
        for node in ast.walk(ast.parse(text)):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", "")) == "rule_id"
                and len(node.args) == 2
                and isinstance(node.args[1], ast.Constant)
            ):
                suffixes.add(node.args[1].value)
    assert {"etj_miles", "steep_slope_pct", "downstream_trace_ft"} <= params
    assert params <= set(CODE_PARAMETERS), params - set(CODE_PARAMETERS)
    assert suffixes == set(CODE_RULES)
    # the rule ids are looked up through rule_id(), not spelled in an f-string
    for path in PACKAGE.rglob("*.py"):
        assert '.sitemap.adjacent"' not in path.read_text(encoding="utf-8"), path
