"""One whole case from intake to approval, through ``georeview case``, on SQLite and PostgreSQL.

The sample somers_bad_map fails three site-map rules of 17.10(B)(4) (scale 1 in = 200 ft,
10-ft contours, no grid). The reviewer records a determination, two comments (one on the
scale finding, one general) and an internal note, returns it with a comment letter; the
resubmission fixes the site map, which resolves the first comment; the round diff says so;
the second comment becomes a condition; the case is approved with conditions, the approval
letter written, the case archived with a manifest of checksums and its audit trail checked.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from _cases import BACKENDS, SAMPLES, resubmission, run_case

pytest.importorskip("django")
pytest.importorskip("weasyprint")
pypdf = pytest.importorskip("pypdf")

CASE = "SOM-2026-0001"
SCALE = "somers.17.10.B.4.scale"
#: US Letter in PDF points (8.5 x 11 in at 72 pt/in)
LETTER_PT = (612.0, 792.0)


def _zip(folder: Path, dest: Path) -> Path:
    """The submission as an applicant uploads it: a zip of its folder."""
    with zipfile.ZipFile(dest, "w") as zf:
        for p in sorted(folder.rglob("*")):
            zf.write(p, f"{folder.name}/{p.relative_to(folder).as_posix()}")
    return dest


def _pdf_pages(path: Path) -> list[str]:
    reader = pypdf.PdfReader(str(path))
    for page in reader.pages:
        box = page.mediabox
        assert (float(box.width), float(box.height)) == pytest.approx(LETTER_PT, abs=0.5)
    return [" ".join((page.extract_text() or "").split()) for page in reader.pages]


def _every_page_carries(pages: list[str], case: str) -> None:
    n = len(pages)
    for k, text in enumerate(pages, start=1):
        assert case in text, f"page {k} lacks the case number"
        assert f"Page {k} of {n}" in text, f"page {k} lacks 'Page {k} of {n}'"


def _letter_path(stdout: str) -> Path:
    return Path(stdout.strip().rsplit(": ", 1)[-1])


@pytest.mark.slow
@pytest.mark.parametrize("database", BACKENDS, indirect=True)
def test_case_from_intake_to_approval(tmp_path: Path, database: str | None) -> None:
    ws = tmp_path / "workspace"
    upload = _zip(SAMPLES / "somers_bad_map", tmp_path / "somers_bad_map.zip")

    # intake and review of round 1 (a zip, as uploaded)
    out = run_case(
        ws,
        database,
        "open",
        str(upload),
        "--received",
        "2026-12-01",
        "--address",
        "4700 County Road E",
        "--parcel",
        "80-4-222-011-0101",
    ).stdout
    assert out.startswith(f"{CASE}: opened (under_review)")
    assert "decision due 2026-12-22" in out  # 15 business days from 2026-12-01

    # a determination, then the review again: the decision waits for a review that read it
    run_case(
        ws,
        database,
        "determine",
        CASE,
        "full_plan_required",
        "yes",
        "--reason",
        "Two acres disturbed: the full plan applies",
        "--date",
        "2026-12-02",
    )
    refused = run_case(ws, database, "decide", CASE, "returned", "--reason", "x", ok=False)
    assert refused.returncode == 2
    assert "predates determinations" in refused.stderr
    run_case(ws, database, "review", CASE)

    # two comments and an internal note
    run_case(
        ws,
        database,
        "comment",
        CASE,
        "Redraw the site map at 1 in = 100 ft or larger.",
        "--finding",
        SCALE,
        "--sheet",
        "C-1",
    )
    run_case(
        ws,
        database,
        "comment",
        CASE,
        "Show the concrete washout area and its sign.",
        "--sheet",
        "C-6",
    )
    run_case(ws, database, "note", CASE, "Engineer called 12/3: resubmittal next week.")

    # return with a comment letter
    run_case(
        ws,
        database,
        "decide",
        CASE,
        "returned",
        "--reason",
        "Site map corrections requested before a decision",
    )
    letter = _letter_path(run_case(ws, database, "letter", CASE).stdout)
    assert letter.suffix == ".pdf"
    assert letter.is_file()
    pages = _pdf_pages(letter)
    _every_page_carries(pages, CASE)
    text = " ".join(pages)
    assert "Redraw the site map at 1 in = 100 ft or larger." in text
    assert "Show the concrete washout area and its sign." in text
    assert "C-1" in text
    assert "C-6" in text
    assert "Engineer called" not in text  # an internal note never reaches the applicant
    assert "Correction needed" in text  # the failing contour and grid findings
    assert "replaces the local interpretation" not in text  # the judge's note stays inside
    assert "Village of Somers" in text

    # the resubmission fixes the site map: the first comment resolves, the second stays
    fixed = resubmission(
        tmp_path, "somers_bad_map", scale_ft_per_inch=100, contour_interval_ft=2, grid=True
    )
    out = run_case(ws, database, "resubmit", CASE, str(fixed), "--received", "2026-12-10").stdout
    assert "round 2" in out
    diff = json.loads(run_case(ws, database, "diff", CASE, "--json").stdout)
    assert (diff["from_round"], diff["to_round"]) == (1, 2)
    changed = {f["rule_id"]: (f["before"], f["after"]) for f in diff["findings"]["changed"]}
    assert changed[SCALE] == ("fail", "pass")
    assert diff["files"]["replaced"] == ["submission.toml"]
    assert [c["number"] for c in diff["comments"]["resolved"]] == [1]
    assert [c["number"] for c in diff["comments"]["open"]] == [2]
    assert "resolved since round 1" in run_case(ws, database, "diff", CASE).stdout

    # the open comment becomes a condition; a declared item is verified on its sheet
    run_case(
        ws,
        database,
        "condition",
        CASE,
        "Install the concrete washout before the first pour.",
        "--sheet",
        "C-6",
    )
    run_case(ws, database, "resolve", CASE, "2", "--resolution", "made condition 4 of approval")
    run_case(ws, database, "verify", CASE, "somers.17.06", "--sheet", "C-0")
    measured = run_case(ws, database, "verify", CASE, "somers.reach", "--sheet", "C-0", ok=False)
    assert measured.returncode == 2
    assert "not verified or changed" in measured.stderr

    # approval: plain approval is refused while a condition is open
    refused = run_case(ws, database, "decide", CASE, "approved", ok=False)
    assert refused.returncode == 2
    assert "approved_with_conditions" in refused.stderr
    run_case(ws, database, "decide", CASE, "approved_with_conditions")
    run_case(ws, database, "issue", CASE, "--date", "2026-12-15")
    approval = _letter_path(run_case(ws, database, "letter", CASE).stdout)
    pages = _pdf_pages(approval)
    _every_page_carries(pages, CASE)
    text = " ".join(pages)
    assert "Install the concrete washout before the first pour." in text
    # the permit's term: 180 days or the building permit's 365, whichever is longer, from
    # issue on 2026-12-15 (17.09(G)); 365 days later is 2027-12-15 (2027 is no leap year)
    assert "180 days" in text
    assert "December 15, 2027" in text
    assert "Resolved since round 1" in text
    assert "Redraw the site map at 1 in = 100 ft or larger." in text

    # the case as the applicant sees it, and as the Village does
    mine = json.loads(run_case(ws, database, "show", CASE, "--json", "--as", "applicant").stdout)
    assert mine["status"] == "permit_issued"
    assert mine["owes"] == "applicant"
    assert all(a["kind"] != "note" for a in mine["actions"])
    assert "audit" not in mine
    village = json.loads(run_case(ws, database, "show", CASE, "--json").stdout)
    verified = {f["rule_id"]: f["verified"] for f in village["findings"] if f["verified"]}
    assert verified["somers.17.06"]["sheet"] == "C-0"
    history = [d for d in village["determinations"] if d["fact"] == "village.full_plan_required"]
    assert len(history) == 1
    assert history[0]["in_force"]
    assert [lt["kind"] for lt in village["letters"]] == ["comment", "approval"]

    # the archive: every file with its checksum, the received files intact
    archive = tmp_path / f"{CASE}.zip"
    run_case(ws, database, "export", CASE, "--out", str(archive))
    with zipfile.ZipFile(archive) as zf:
        manifest = json.loads(zf.read(f"{CASE}/manifest.json"))
        assert manifest["received_files_intact"] is True
        names = set(zf.namelist())
        for entry in manifest["files"]:
            data = zf.read(f"{CASE}/{entry['path']}")
            assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["path"]
    assert f"{CASE}/round-1/submission/submission.toml" in names
    assert f"{CASE}/round-2/review-1/report.json" in names
    assert any(n.endswith("-approval.pdf") for n in names)
    record = json.loads(zipfile.ZipFile(archive).read(f"{CASE}/case.json"))
    assert [e["action"] for e in record["audit"]][:2] == ["opened", "reviewed"]

    # the audit trail is whole, and the register lists the case
    assert "audit trail intact" in run_case(ws, database, "audit", CASE).stdout
    for suffix in (".csv", ".xlsx"):
        run_case(ws, database, "list", "--out", str(tmp_path / f"register{suffix}"))
    assert CASE in (tmp_path / "register.csv").read_text()
