"""The Village's decision letters: HTML from one context, a Letter PDF to sign and file.

Every kind of letter is rendered for both villages from :func:`sample_context`; the PDF's
pages are read back with pypdf (size, "Page k of n" and the case number on every page).
The ordinance's words in record.toml are held to the adopted text (ordinance.txt). Nothing
is fetched: a local HTTP server counts the requests a letter's PDF makes (none).
"""

from __future__ import annotations

import copy
import http.server
import logging
import re
import sys
import threading
import tomllib
import unicodedata
from pathlib import Path
from typing import ClassVar

import pytest
from _web_helpers import CHROMIUM

from georeview.cases.letters import KINDS, render_letter, signer_title, write_pdf
from georeview.errors import ConfigError, DependencyError, InputError
from georeview.ordinances import folder

MUNICIPALITIES = ("somers", "deerfield")
CODES = {"somers": "SOM", "deerfield": "DEE"}
#: The outcome each kind is written for in these tests.
OUTCOME = {
    "comment": "returned",
    "approval": "approved_with_conditions",
    "disapproval": "disapproved",
}
#: Text a hostile applicant puts in their name: markup, and what would end a CSS string.
HOSTILE = '<script>alert(1)</script>"}</style><b>x</b>\\'
#: US Letter in PDF points.
LETTER_PT = (612, 792)


#: Citations of each village's findings, as the review gives them (report.json).
CITES = {
    "somers": {
        "items": ["§ 17.10(B)(5)(b)", "§ 17.10(B)(4)(h)", "§ 17.10(B)(5)(a)", "§ 17.10(B)(4)(c)",
                  "§ 17.09(B)", "§ 17.10(B)(3)"],
        "resolved": "§ 17.10(B)(5)(c)",
        "conditions": ["§ 17.08(B)", "§ 17.09(F)"],
        "reasons": ["§ 17.08(C)(2)", "§ 17.10(B)(5)"],
        "deadlines": ["Somers 17.09(G)", "Somers 17.14"],
        "fees": ["Somers 17.09(B), 17.11", "Somers 17.09(D)", "Somers 17.11"],
    },
    "deerfield": {
        "items": ["§ 31.09(1)(C)2", "§ 31.09(1)(A)8", "§ 31.09(1)(A)2", "§ 31.09(1)(A)6",
                  "§ 31.11(1)", "§ 31.09(1)(C)3"],
        "resolved": "§ 31.09(1)(C)2",
        "conditions": ["§ 31.07(2)(A)", "§ 31.10(1)"],
        "reasons": ["§ 31.07(1)", "§ 31.09(1)(A)2"],
        "deadlines": ["Deerfield 31.12(1)", "Deerfield 31.15(1)(C)"],
        "fees": ["Deerfield 31.11(1)", "Deerfield 31.12(2)(A)", "Deerfield 31.11(1)"],
    },
}  # fmt: skip


def _items(n: int = 6, municipality: str = "somers") -> list[dict]:
    """Open items on two sheets, a document and none, numbered and not."""
    cites = CITES[municipality]["items"]
    base = [
        {"sheet": "Sheet C-10", "on": None, "citation": cites[0],
         "text": "Show the stone tracking pad at the construction entrance.", "source": "comment",
         "number": 3},
        {"sheet": "Sheet C-2", "on": None, "citation": cites[1],
         "text": "Give the contour interval of the existing topography.", "source": "owed",
         "number": None},
        {"sheet": None, "on": "On the site map.", "citation": cites[2],
         "text": "Show the wetland boundary within 50 feet of the disturbance.", "source": "fail",
         "number": None},
        {"sheet": "Sheet C-2", "on": "On the site map.", "citation": cites[3],
         "text": "Label the receiving water.", "source": "comment", "number": 4},
        {"sheet": None, "on": None, "citation": cites[4],
         "text": "Pay the application fee.", "source": "owed", "number": None},
        {"sheet": None, "on": None, "citation": cites[5],
         "text": "Give the schedule of the land disturbing activities.", "source": "comment",
         "number": 5},
    ]  # fmt: skip
    out = []
    for k in range(n):
        item = dict(base[k % len(base)])
        if k >= len(base):
            item["text"] = f"Item {k + 1}: " + item["text"] + " " + "Explain how. " * (k % 7)
            item["number"] = None if item["number"] is None else 10 + k
        out.append(item)
    return out


def sample_context(kind: str = "comment", municipality: str = "somers", **over) -> dict:
    """A letter's context as the case service builds it (georeview.cases.letters docstring)."""
    cites = CITES[municipality]
    ctx = {
        "kind": kind,
        "municipality": municipality,
        "category": "major",
        "case": {
            "number": f"{CODES[municipality]}-2026-0001",
            "title": "Lakeview Townhomes, Phase 2",
            "applicant": "Lakeview Builders LLC",
            "contact": "Jane Doe, P.E.\n123 Main Street\nKenosha, WI 53140",
            "site_address": "1234 County Road E",
            "parcel_id": "80-4-222-123-0456",
            "received_on": "2026-12-01",
        },
        "round": {"number": 2, "received_on": "2026-12-10"},
        "letter": {"number": 1, "date": "2026-12-11"},
        "decision": {"outcome": OUTCOME[kind], "by": "A. Reviewer", "decided_on": "2026-12-11",
                     "reason": "The plan does not meet the performance standards listed."},
        "items": _items(6, municipality),
        "resolved": [{"number": 1, "text": "Show the silt fence on the site map.",
                      "citation": cites["resolved"], "round": 2, "resolution": "fixed"}],
        "conditions": [
            {"number": 2, "text": "Install the silt fence before any grading.",
             "citation": cites["conditions"][0]},
            {"number": None, "text": "Inspect the sediment basin after every rain of 0.5 in.",
             "citation": cites["conditions"][1]},
        ],
        "reasons": [
            {"citation": cites["reasons"][0],
             "text": "The soil loss exceeds 7.5 tons per acre per year."},
            {"citation": cites["reasons"][1], "text": "The site map does not show the wetlands."},
        ],
        "deadlines": [
            {"id": "permit_expiry", "name": "Permit expires", "date": "2027-06-09",
             "citation": cites["deadlines"][0], "rule": "180 days after 2026-12-11"},
            {"id": "appeal_filing", "name": "Last day to file an appeal of the decision",
             "date": None, "citation": cites["deadlines"][1], "rule": "needs issue_date"},
        ],
        "fees": [
            {"name": "Permit application fee", "amount_usd": 35.0, "status": "due",
             "citation": cites["fees"][0], "note": ""},
            {"name": "Security (letter of credit, certificate of deposit or certified check)",
             "amount_usd": 15625.0, "status": "needs_info", "citation": cites["fees"][1],
             "note": "125 % of the estimated cost of the control measures."},
            {"name": "Village engineering and legal fees", "amount_usd": None,
             "status": "actual_cost", "citation": cites["fees"][2], "note": ""},
        ],
        "payments": [
            {"kind": "fee", "amount_usd": 35.0, "received_on": "2026-12-01"},
            {"kind": "security", "amount_usd": 15625.0, "received_on": "2026-12-09"},
        ],
        "signer": {"name": "A. Reviewer", "title": None},
    }  # fmt: skip
    return {**ctx, **over}


def _record(municipality: str) -> dict:
    return tomllib.loads((folder(municipality) / "record.toml").read_text(encoding="utf-8"))


def _flat(text: str) -> str:
    """One line, ligatures undone (the PDF's "ﬁ" is "fi")."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def _text(html: str) -> str:
    """The HTML with its no-break spaces (a citation's "§ 17.09") as plain spaces."""
    return html.replace("\u00a0", " ")


def _pages(pdf: Path) -> list:
    from pypdf import PdfReader

    return list(PdfReader(str(pdf)).pages)


def _paragraph_entries(rec: dict):
    """Every paragraph-like table of record.toml, with where it is."""
    for kind, spec in rec["letters"].items():
        for part in ("opening", "closing"):
            for k, entry in enumerate(spec.get(part, ())):
                yield f"letters.{kind}.{part}[{k}]", entry
    for part in ("intro", "requirements", "term", "security"):
        for k, entry in enumerate(rec["permit"].get(part, ())):
            yield f"permit.{part}[{k}]", entry


# ------------------------------------------------------------------------------ the record


@pytest.mark.parametrize("municipality", MUNICIPALITIES)
def test_every_quote_is_the_ordinance_text(municipality):
    text = _flat((folder(municipality) / "ordinance.txt").read_text(encoding="utf-8"))
    quotes = [
        (where, e["quote"])
        for where, e in _paragraph_entries(_record(municipality))
        if e.get("quote")
    ]
    assert len(quotes) > 10
    wrong = [where for where, q in quotes if _flat(q) not in text]
    assert wrong == []


@pytest.mark.parametrize("municipality", MUNICIPALITIES)
def test_the_record_cites_what_the_brief_names(municipality):
    rec = _record(municipality)
    assert rec["case"]["code"] == CODES[municipality]
    assert rec["village"]["address"] == []  # set by the Village, never guessed
    cites = {e.get("citation") for _, e in _paragraph_entries(rec)}
    if municipality == "somers":
        expected = {
            "§ 17.09(C)(4)",
            "§ 17.09(C)(2)",
            "§ 17.09(F)",
            "§ 17.09(C)(3)",
            "§ 17.09(G)",
            "§ 17.09(D)",
        } | {f"§ 17.09(E)({k})" for k in range(1, 9)}
    else:
        expected = {"§ 31.10(1)", "§ 31.10(2)", "§ 31.12(1)", "§ 31.12(2)(A)"}
        expected |= {f"§ 31.12(2)({c})" for c in "ABCDEFGHI"}
        expected |= {f"§ 31.12(3)({c})" for c in "ABCDEF"}
    assert expected <= cites
    for req in rec["permit"]["requirements"]:
        assert isinstance(req["categories"], list)


def test_signer_titles_by_category():
    assert {signer_title("somers", c) for c in ("major", "minor", None)} == {
        "Village Administrator"
    }
    assert signer_title("deerfield", "major") == "Village Engineer"
    assert signer_title("deerfield", "minor") == "Building Inspector"
    assert signer_title("deerfield", None) == "Village Engineer"


# -------------------------------------------------------------------------------- the HTML


@pytest.mark.parametrize("municipality", MUNICIPALITIES)
@pytest.mark.parametrize("kind", KINDS)
def test_html_carries_the_citations_of_its_kind(kind, municipality):
    ctx = sample_context(kind, municipality)
    html = _text(render_letter(ctx))
    rec = _record(municipality)
    spec = rec["letters"][kind]
    outcome = OUTCOME[kind]
    for part in ("opening", "closing"):
        for e in spec[part]:
            cats, outs = e.get("categories") or ["major"], e.get("outcomes") or [outcome]
            if "major" in cats and outcome in outs and e.get("citation"):
                assert f"({e['citation']})" in html, (part, e["citation"])
    assert ctx["case"]["number"] in html
    assert f"cc: file {ctx['case']['number']}" in html
    assert signer_title(municipality, "major") in html
    assert "December 11, 2026" in html
    assert "December 10, 2026" in html
    if kind == "comment":
        for item in ctx["items"]:
            assert item["citation"] in html
        assert "Resolved since round 1" in html
    if kind == "approval":
        for req in rec["permit"]["requirements"]:
            if not req["categories"] or "major" in req["categories"]:
                assert req["citation"] in html
        for c in ctx["conditions"]:
            assert c["citation"] in html
            assert c["text"] in html
        assert rec["permit"]["term"][0]["citation"] in html
        assert "June 9, 2027" in html  # the term's expiry, from its deadline
        assert "$35.00 on December 1, 2026" in html
        assert "$15,625.00 on December 9, 2026" in html
    if kind == "disapproval":
        for r in ctx["reasons"]:
            assert r["citation"] in html
            assert r["text"] in html
        assert ctx["decision"]["reason"] in html


def test_minor_letters_read_as_the_building_inspectors():
    html = _text(render_letter(sample_context("approval", "deerfield", category="minor")))
    assert "Building Inspector" in html
    assert "§ 31.12(3)(F)" in html
    assert "§ 31.12(2)(B)" not in html
    assert "Village Engineer</p>" not in html


def test_items_are_grouped_by_sheet_then_document_then_general():
    html = render_letter(sample_context("comment"))
    heads = re.findall(r"<h3>(.*?)</h3>", html)
    assert heads == ["Sheet C-2", "Sheet C-10", "On the site map", "General"]
    # comments keep their case numbers; the rest are lettered in the order given
    c2 = html[html.index("<h3>Sheet C-2</h3>") : html.index("<h3>Sheet C-10</h3>")]
    assert re.findall(r'<span class="n">(.*?)</span>', c2) == ["A.", "4."]
    general = html[html.index("<h3>General</h3>") :]
    assert re.findall(r'<span class="n">(.*?)</span>', general)[:2] == ["C.", "5."]
    assert "Information needed" in c2
    assert "Correction needed" in html


@pytest.mark.parametrize("municipality", MUNICIPALITIES)
def test_a_hostile_applicant_is_escaped(municipality):
    ctx = sample_context("comment", municipality)
    ctx["case"] = {**ctx["case"], "applicant": HOSTILE, "title": HOSTILE}
    ctx["items"] = [{**ctx["items"][0], "text": HOSTILE}]
    html = render_letter(ctx)
    assert "<script>" not in html
    assert "<b>x</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    style = html[html.index("<style>") : html.index("</style>")]
    # in the running header the name is a CSS string of hex escapes: no quote, brace or
    # "</style>" of the applicant's survives in the stylesheet
    assert '"}' not in style
    assert "<script" not in style
    assert r'"\3c script\3e alert\28 1\29' in style
    assert html.count("</style>") == 1


def test_kind_outcome_and_category_must_fit():
    with pytest.raises(InputError, match="approval letter reports"):
        render_letter(sample_context("approval", decision={"outcome": "returned"}))
    with pytest.raises(InputError, match="kind"):
        render_letter({**sample_context("comment"), "kind": "notice"})
    with pytest.raises(InputError, match="category"):
        render_letter(sample_context("comment", category="huge"))
    with pytest.raises(InputError, match="needs the activity's category"):
        render_letter(sample_context("approval", "deerfield", category=None))
    with pytest.raises(InputError, match="YYYY-MM-DD"):
        render_letter(sample_context("comment", letter={"number": 1, "date": "11/12/2026"}))


def test_an_unclassified_comment_letter_reads_as_the_village_engineers():
    html = render_letter(sample_context("comment", "deerfield", category=None))
    assert "The Village Engineer has reviewed the control plan" in html
    assert "Building Inspector has reviewed" not in html


def test_a_copied_folder_writes_its_own_villages_letters(tmp_path, monkeypatch):
    from georeview.ordinances.scaffold import new_ordinance

    new_ordinance("waunakee", "somers", tmp_path)
    monkeypatch.setenv("GEOREVIEW_ORDINANCES", str(tmp_path))
    html = render_letter({**sample_context("comment"), "municipality": "waunakee"})
    assert "Village of Waunakee" in html
    assert "Village of Somers" not in html
    # its cases are numbered WAUNAKEE-..., never SOM-... (two villages, one number)
    import tomllib

    copied = tomllib.loads((tmp_path / "waunakee" / "record.toml").read_text())
    assert copied["case"]["code"] == "WAUNAKEE"
    # a folder without record.toml writes no letter, and says which file it lacks
    new_ordinance("pleasant", "somers", tmp_path)
    (tmp_path / "pleasant" / "record.toml").unlink()
    with pytest.raises(ConfigError, match="no such file"):
        render_letter({**sample_context("comment"), "municipality": "pleasant"})


# --------------------------------------------------------------------------------- the PDF


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    """Every kind's letter for both villages, as HTML and PDF (rendered once)."""
    pytest.importorskip("weasyprint")
    base = tmp_path_factory.mktemp("letters")
    out = {}
    for m in MUNICIPALITIES:
        for kind in KINDS:
            ctx = sample_context(kind, m)
            ctx["case"] = {**ctx["case"], "applicant": HOSTILE}
            html = render_letter(ctx)
            path = base / f"{m}-{kind}.pdf"
            out[m, kind] = (ctx, path, write_pdf(html, path))
    return out


def _assert_every_page_is_marked(path: Path, case_number: str) -> int:
    pages = _pages(path)
    n = len(pages)
    for k, page in enumerate(pages, start=1):
        box = page.mediabox
        assert (round(float(box.width)), round(float(box.height))) == LETTER_PT
        text = _flat(page.extract_text())
        assert f"Page {k} of {n}" in text, k
        assert case_number in text, k
    return n


@pytest.mark.parametrize("municipality", MUNICIPALITIES)
@pytest.mark.parametrize("kind", KINDS)
def test_pdf_is_letter_with_every_page_marked(pdfs, kind, municipality):
    ctx, path, n = pdfs[municipality, kind]
    assert n > 0
    assert _assert_every_page_is_marked(path, ctx["case"]["number"]) == n
    text = _flat(" ".join(p.extract_text() for p in _pages(path)))
    assert HOSTILE[:25] in text  # the applicant's markup is printed as text
    assert "cc: file " + ctx["case"]["number"] in text
    assert (folder(municipality) / "record.toml").is_file()
    assert _record(municipality)["village"]["label"] in text


def test_a_long_comment_letter_paginates_without_splitting_an_item(tmp_path):
    pytest.importorskip("weasyprint")
    ctx = sample_context("comment", "deerfield", items=_items(40, "deerfield"))
    path = tmp_path / "long.pdf"
    n = write_pdf(render_letter(ctx), path)
    assert n >= 3
    assert _assert_every_page_is_marked(path, ctx["case"]["number"]) == n
    texts = [_flat(p.extract_text()) for p in _pages(path)]
    for item in ctx["items"]:
        # each item's words are whole on one page (entries never break across pages)
        assert any(_flat(item["text"]) in t for t in texts), item["text"]
    # the continuation pages name the Village and the addressee in their header
    assert all("Village of Deerfield" in t and "To Lakeview Builders LLC" in t for t in texts[1:])


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self):
        type(self).hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Counter.hits = []
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Counter)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", _Counter.hits
    httpd.shutdown()
    httpd.server_close()


def test_nothing_is_fetched(tmp_path, server, caplog):
    pytest.importorskip("weasyprint")
    url, hits = server
    img = f'<img src="{url}/tracker.png">'
    ctx = sample_context("comment", items=[{**_items(1)[0], "text": "See " + img}])
    html = render_letter(ctx)
    assert img not in html
    assert "&lt;img src=&#34;" in html
    path = tmp_path / "letter.pdf"
    write_pdf(html, path)
    assert img in _flat(_pages(path)[0].extract_text())
    # markup that would fetch, given to write_pdf as it is, is refused before any request
    raw = html.replace("</body>", f'{img}<link rel="stylesheet" href="{url}/x.css"></body>')
    with caplog.at_level(logging.WARNING, logger="weasyprint"):
        write_pdf(raw, tmp_path / "raw.pdf")
    assert hits == []
    assert "refused" in caplog.text


def test_pdf_needs_weasyprint_said_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "weasyprint", None)  # import weasyprint raises
    with pytest.raises(DependencyError, match=r'pip install "georeview\[workspace\]"') as err:
        write_pdf("<p>x</p>", tmp_path / "x.pdf")
    assert err.value.field == "pdf"
    assert not (tmp_path / "x.pdf").exists()


def test_weasyprint_loggers_are_quiet_then_restored(tmp_path):
    pytest.importorskip("weasyprint")
    logger = logging.getLogger("fontTools")
    before = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        write_pdf(render_letter(sample_context("disapproval")), tmp_path / "d.pdf")
        assert logger.level == logging.DEBUG
    finally:
        logger.setLevel(before)


# ---------------------------------------------------------------------- chromium's print


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium not installed")
def test_chromium_prints_the_same_pages(browser, tmp_path):
    ctx = sample_context("comment", "somers", items=_items(40, "somers"))
    html_path = tmp_path / "letter.html"
    html_path.write_text(render_letter(copy.deepcopy(ctx)), encoding="utf-8")
    page = browser.new_page()
    try:
        page.goto(html_path.as_uri())
        pdf = tmp_path / "chromium.pdf"
        pdf.write_bytes(page.pdf(format="Letter", prefer_css_page_size=True))
    finally:
        page.close()
    n = _assert_every_page_is_marked(pdf, ctx["case"]["number"])
    assert n >= 3


def test_no_addressee_no_to_in_the_running_header():
    ctx = sample_context("comment")
    ctx["case"] = {**ctx["case"], "applicant": "", "contact": ""}
    html = render_letter(ctx)
    assert '"To "' not in html
    assert '<p class="addressee"></p>' in html


def test_the_decisions_reason_is_said_once():
    ctx = sample_context("disapproval")
    reason = ctx["decision"]["reason"]
    html = render_letter(ctx)
    assert html.count(reason) == 1
    # the service may also list it among the reasons: still once
    ctx["reasons"] = [*ctx["reasons"], {"citation": "", "text": reason}]
    assert render_letter(ctx).count(reason) == 1


def test_a_bare_sheet_number_reads_as_a_sheet():
    item = {**_items(1)[0], "sheet": "C-6"}
    named = {**_items(1)[0], "sheet": "Grading plan G-1"}
    html = render_letter(sample_context("comment", items=[item, named]))
    assert re.findall(r"<h3>(.*?)</h3>", html) == ["Grading plan G-1", "Sheet C-6"]
