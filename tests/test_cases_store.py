"""The case store's rules, in one process on one SQLite workspace.

Django is configured once per process: these tests share the module's workspace (its
cases have numbers of their own). The two-database and two-process tests run the CLI in
subprocesses (test_cases_walkthrough.py, test_cases_concurrency.py).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from _cases import REPO, SAMPLES

from georeview.cases.intake import check_manifest, scan, stage
from georeview.cases.store import database_settings
from georeview.errors import ConfigError, ConflictError, DataSourceError, InputError

django = pytest.importorskip("django")

BY = "A. Reviewer"


# ----------------------------------------------------------------- no database needed


def test_migrations_hold_every_model_change() -> None:
    """A model change without its migration (makemigrations) fails here."""
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "makemigrations.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_database_urls(tmp_path: Path) -> None:
    own = database_settings(None, tmp_path)
    assert own["ENGINE"].endswith("sqlite3")
    assert own["NAME"] == str((tmp_path / "georeview.sqlite3").resolve())
    assert own["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    pg = database_settings("postgresql://rev:p%40ss@db.example:5433/permits", tmp_path)
    assert (pg["NAME"], pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"]) == (
        "permits",
        "rev",
        "p@ss",
        "db.example",
        "5433",
    )
    sock = database_settings("postgres:///permits?host=/var/run/postgresql", tmp_path)
    assert sock["HOST"] == "/var/run/postgresql"
    with pytest.raises(ConfigError, match="unknown database URL scheme"):
        database_settings("mysql://x/y", tmp_path)
    with pytest.raises(ConfigError, match="without a database name"):
        database_settings("postgresql://host/", tmp_path)


def test_intake_refuses_a_link(tmp_path: Path) -> None:
    src = tmp_path / "sub"
    shutil.copytree(SAMPLES / "deerfield_minor_home", src)
    (src / "wetlands.geojson").symlink_to("/etc/passwd")
    with pytest.raises(DataSourceError, match="symbolic link"):
        stage(src, tmp_path / "staged")


def test_intake_of_a_zip_of_one_folder(tmp_path: Path) -> None:
    z = tmp_path / "upload.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for p in sorted((SAMPLES / "deerfield_minor_home").iterdir()):
            zf.write(p, f"deerfield_minor_home/{p.name}")
    files = stage(z, tmp_path / "staged")
    assert "submission.toml" in {f.path for f in files}
    mine = {f.path: f.sha256 for f in scan(SAMPLES / "deerfield_minor_home")}
    assert {f.path: f.sha256 for f in files} == mine


def test_intake_without_submission_toml(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataSourceError, match=r"no submission\.toml"):
        stage(tmp_path / "empty", tmp_path / "staged")


def test_manifest_tells_a_changed_file(tmp_path: Path) -> None:
    folder = tmp_path / "sub"
    shutil.copytree(SAMPLES / "deerfield_minor_home", folder)
    listed = scan(folder)
    assert check_manifest(folder, listed) == []
    (folder / "submission.toml").write_text("changed")
    (folder / "extra.txt").write_text("x")
    assert check_manifest(folder, listed) == [
        "not received: extra.txt",
        "changed since received: submission.toml",
    ]


# ----------------------------------------------------------------- one workspace


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory):
    from georeview.cases.store import open_workspace

    os.environ.pop("GEOREVIEW_DATABASE_URL", None)
    return open_workspace(tmp_path_factory.mktemp("workspace"))


@pytest.fixture(scope="module")
def case(ws):
    """Deerfield's minor home, reviewed (round 1)."""
    from georeview.cases import service

    return service.open_case(
        ws, SAMPLES / "deerfield_minor_home", by=BY, received_on=dt.date(2026, 12, 1)
    ).number


def test_case_number_and_deadline(ws, case) -> None:
    from georeview.cases.views import case_view

    view = case_view(ws, case)
    assert case.startswith("DEE-2026-")
    assert view["status"] == "under_review"
    assert view["owes"] == "village"
    # a minor activity: 3 working days after receipt of the completed plan statement
    assert view["decision_due"]["date"] == "2026-12-04"
    assert view["site_lonlat"] is not None
    lon, lat = view["site_lonlat"]
    assert -89.2 < lon < -88.9
    assert 42.9 < lat < 43.2


def test_received_files_are_read_only_and_kept(ws, case) -> None:
    from georeview.cases.lookup import current_round, get_case

    rnd = current_round(get_case(case))
    folder = ws.path(rnd.folder)
    assert not os.access(folder / "submission.toml", os.W_OK) or os.geteuid() == 0
    assert oct((folder / "submission.toml").stat().st_mode & 0o777) == "0o444"
    assert {f.path for f in rnd.files.all()} == {
        p.name for p in (SAMPLES / "deerfield_minor_home").iterdir()
    }


def test_determinations_keep_their_history(ws, case) -> None:
    from georeview.cases import service
    from georeview.cases.views import case_view

    first = service.determine(case, "control_cost_usd", 2400.0, by=BY, reason="Engineer's estimate")
    second = service.determine(
        case, "village.control_cost_usd", 3100.0, by=BY, reason="Revised with the inlet protection"
    )
    assert second.supersedes_id == first.id
    rows = [
        d for d in case_view(ws, case)["determinations"] if d["fact"] == "village.control_cost_usd"
    ]
    assert [(d["value"], d["in_force"]) for d in rows] == [(2400.0, False), (3100.0, True)]
    with pytest.raises(ConfigError, match="type number"):
        service.determine(case, "control_cost_usd", "a lot", by=BY, reason="x")
    with pytest.raises(ConfigError, match="unknown determination"):
        service.determine(case, "applicant_is_nice", True, by=BY, reason="x")
    with pytest.raises(InputError, match="not a bool"):
        service.parse_value("basin_required", "perhaps")
    # the next review reads the one in force, as the case's
    review = service.review_round(ws, case, by=BY)
    from georeview.cases.lookup import report_of

    decided = report_of(ws, review)["determinations"]
    assert decided["source"] == f"case {case}"
    assert [(d["fact"], d["value"]) for d in decided["items"]] == [
        ("village.control_cost_usd", 3100.0)
    ]


def test_a_measured_result_is_not_verified(ws, case) -> None:
    from georeview.cases import service

    with pytest.raises(InputError, match="not verified or changed by a reviewer"):
        service.add_action(ws, case, "verified", "", by=BY, rule_id="deerfield.reach", sheet="C-1")
    with pytest.raises(InputError, match="no finding"):
        service.add_action(ws, case, "comment", "x", by=BY, rule_id="deerfield.nope")


def test_internal_notes_stay_with_the_village(ws, case) -> None:
    from georeview.cases import service
    from georeview.cases.views import case_view

    service.add_action(ws, case, "note", "Neighbour complained about mud on Main St.", by=BY)
    service.add_action(ws, case, "comment", "Label the tracking pad on C-3.", by=BY, sheet="C-3")
    village = case_view(ws, case)
    applicant = case_view(ws, case, audience="applicant")
    assert any(a["kind"] == "note" for a in village["actions"])
    assert all(a["kind"] != "note" for a in applicant["actions"])
    assert "Neighbour" not in str(applicant)
    assert "audit" not in applicant
    # a comment being drafted is the Village's until the round is decided (its letter sent)
    assert applicant["actions"] == []


def test_a_stale_view_is_told(ws, case) -> None:
    from georeview.cases import service
    from georeview.cases.lookup import get_case

    seen = get_case(case).revision
    service.add_action(
        ws, case, "comment", "First reviewer's comment.", by="Reviewer A", expected_revision=seen
    )
    with pytest.raises(ConflictError, match=r"changed since you opened it.*Reviewer A"):
        service.add_action(
            ws,
            case,
            "comment",
            "Second, from the old page.",
            by="Reviewer B",
            expected_revision=seen,
        )


def test_the_audit_trail_is_append_only(ws, case) -> None:
    from django.db import connection

    from georeview.cases.lookup import get_case
    from georeview.cases.models import AuditEvent
    from georeview.cases.service import verify_audit

    events = AuditEvent.objects.filter(case=get_case(case))
    first = events.order_by("seq").first()
    assert first is not None
    assert first.action == "opened"
    with pytest.raises(PermissionError):
        first.save()
    with pytest.raises(PermissionError):
        first.delete()
    with pytest.raises(PermissionError):
        events.update(actor="someone else")
    with pytest.raises(PermissionError):
        events.delete()
    assert verify_audit(case) == []
    # changed outside georeview (straight in the database): the hash chain tells
    with connection.cursor() as cur:
        cur.execute("UPDATE cases_auditevent SET actor = 'Mallory' WHERE id = %s", [first.id])
    assert verify_audit(case) == ["event 1 (opened) was changed outside georeview"]


def test_a_planted_determinations_file_is_kept_not_read(ws, tmp_path: Path) -> None:
    from georeview.cases import service
    from georeview.cases.lookup import current_round, latest_review, report_of

    src = tmp_path / "planted"
    shutil.copytree(SAMPLES / "deerfield_minor_home", src)
    (src / "determinations.toml").write_text(
        '[determinations.basin_required]\nvalue = false\nby = "Village Engineer"\n'
        'date = 2026-01-01\nreason = "trust me"\n'
    )
    opened = service.open_case(ws, src, by=BY, received_on=dt.date(2026, 12, 2))
    rnd = current_round(opened)
    assert "determinations.toml" in {f.path for f in rnd.files.all()}  # kept as received
    review = latest_review(rnd)
    assert review is not None
    report = report_of(ws, review)
    assert report["determinations"]["items"] == []  # never read as the Village's
    assert any("determinations.toml" in w for w in report["warnings"])
    # nor imported from the case's own files
    with pytest.raises(DataSourceError, match="lies in the submission"):
        service.import_determinations(
            ws, opened.number, ws.path(rnd.folder) / "determinations.toml", by=BY
        )
    service.withdraw(opened.number, by=BY, reason="applicant withdrew")
    with pytest.raises(ConflictError, match="withdrawn"):
        service.add_action(ws, opened.number, "comment", "late", by=BY)


def test_a_resubmission_for_another_village_is_refused(ws, case, tmp_path: Path) -> None:
    from georeview.cases import service

    with pytest.raises(InputError, match="the resubmission is for 'somers'"):
        service.resubmit(ws, case, SAMPLES / "somers_village_small", by=BY, review=False)


def test_register_filters(ws, case, tmp_path: Path) -> None:
    from georeview.cases.views import register, write_register

    everything = register(ws, today=dt.date(2026, 12, 3))
    assert case in [r["number"] for r in everything]
    late = register(ws, overdue=True, today=dt.date(2026, 12, 7))
    assert case in [r["number"] for r in late]
    assert register(ws, overdue=True, today=dt.date(2026, 12, 3)) == []
    assert [r["number"] for r in register(ws, search="example homes", status="under_review")] == [
        case
    ]
    assert [r["status"] for r in register(ws, search="example homes")] == [
        "under_review",
        "withdrawn",
    ]
    assert register(ws, status="approved") == []
    write_register(everything, tmp_path / "register.xlsx")
    from openpyxl import load_workbook

    sheet = load_workbook(tmp_path / "register.xlsx")["Register"]
    assert sheet["A1"].value == "Case"
    assert sheet["A2"].value == everything[0]["number"]
    with pytest.raises(InputError, match=r"\.csv or \.xlsx"):
        write_register(everything, tmp_path / "register.txt")


def test_a_verification_holds_while_the_words_do() -> None:
    from georeview.cases.views import findings_view

    finding = {
        "rule_id": "deerfield.x",
        "status": "pass",
        "evidence": ["declared"],
        "declared": {"words": "Silt fence on the downslope side (Sheet C-3)", "where": "C-3"},
    }
    verified = {
        "number": 4,
        "kind": "verified",
        "rule_id": "deerfield.x",
        "sheet": "C-3",
        "declared": "Silt fence on the downslope side (Sheet C-3)",
        "by": BY,
        "at": "2026-12-04",
    }
    same = findings_view({"findings": [finding]}, [verified])[0]
    assert same["verified"] == {"sheet": "C-3", "by": BY, "at": "2026-12-04"}
    changed = dict(finding, declared={"words": "Straw wattles instead", "where": "C-3"})
    assert findings_view({"findings": [changed]}, [verified])[0]["verified"] is None


def test_a_failed_intake_leaves_no_folder(ws, monkeypatch) -> None:
    """The database refuses the intake after the files were filed: neither stays."""
    from georeview.cases import service

    def refuse(*args, **kwargs):
        raise RuntimeError("database went away")

    before = sorted(p.name for p in ws.files.iterdir())
    monkeypatch.setattr(service, "_append_event", refuse)
    with pytest.raises(RuntimeError, match="database went away"):
        service.open_case(
            ws,
            SAMPLES / "deerfield_minor_home",
            by=BY,
            received_on=dt.date(2026, 12, 3),
            review=False,
        )
    assert sorted(p.name for p in ws.files.iterdir()) == before
    from georeview.cases.models import Case

    assert not Case.objects.filter(received_on=dt.date(2026, 12, 3)).exists()
