"""The workspace's other pages, through a live server: screenings, inspections, the register.

Each compares what the page gives with the same computation run directly (``georeview
screen``, :func:`georeview.procedure.inspections.run`), so the web adds no answer of its own.
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._web_server import SAMPLES, Client, Server, case_of, job_of, web_server, zip_folder

# the inspection log and the five-parcel file the installed CLI's test uses
from tests.test_wheel import LOG, RAIN, _parcels

__all__ = ["web_server"]  # the fixture, imported for pytest

REPO = Path(__file__).resolve().parents[1]


def test_a_screening_from_the_page_gives_the_cli_s_answers(
    web_server: Server, tmp_path: Path
) -> None:
    """Upload, progress, results: the same rows and statuses as ``georeview screen``."""
    rita = Client(web_server, "rita")
    n = _parcels(tmp_path / "parcels.gpkg")
    parcels = tmp_path / "parcels.gpkg"
    page = rita.get("screenings/").text
    assert 'value="deerfield"' in page
    with parcels.open("rb") as f:
        r = rita.post(
            "screenings/new/",
            {"municipality": "deerfield", "assume": "disturb=whole"},
            files={"parcels": ("parcels.gpkg", f)},
            allow_redirects=True,
        )
    assert r.status_code == 200
    assert "/screenings/" in r.url
    here = r.url.replace(web_server.base, "")
    job = rita.wait_job(job_of(r.text))
    assert job["total"] >= 1
    assert job["done"] == job["total"]
    got = rita.get(f"{here}screening.csv")
    assert got.status_code == 200
    web_rows = list(csv.DictReader(io.StringIO(got.content.decode("utf-8-sig"))))
    out = tmp_path / "cli.csv"
    subprocess.run(
        [sys.executable, "-m", "georeview", "screen", str(parcels), "--layers",
         str(REPO / "layers" / "deerfield"), "--out", str(out), "-q"],
        check=True, cwd=REPO, capture_output=True,
    )  # fmt: skip
    with out.open(encoding="utf-8-sig") as f:
        cli_rows = list(csv.DictReader(f))
    assert len(web_rows) == n
    assert web_rows == cli_rows
    index = rita.get(f"{here}index.html")
    assert index.status_code == 200
    assert "sandbox" in index.headers["Content-Security-Policy"]
    # an applicant reaches neither the page nor its files
    alice = Client(web_server, "alice")
    assert alice.get(here).status_code == 403
    assert alice.get(f"{here}screening.csv").status_code == 403


def _approved_case(web_server: Server, tmp_path: Path) -> str:
    """alice's minor home, the Village's one determination recorded, approved."""
    alice, rita = Client(web_server, "alice"), Client(web_server, "rita")
    r = alice.upload("cases/new/", zip_folder(SAMPLES / "deerfield_minor_home", tmp_path / "m.zip"))
    number = case_of(r.url)
    rita.wait_job(job_of(r.text))
    rita.post(f"cases/{number}/determine/", {
        "fact": "master_plan_area", "value": "no", "reason": "outside the corridors of the plan",
        "revision": rita.case_revision(number)})  # fmt: skip
    rita.post(f"cases/{number}/review/")
    page = rita.get(f"cases/{number}/").text
    rita.wait_job(job_of(page))
    r = rita.post(f"cases/{number}/decide/", {
        "outcome": "approved", "reason": "", "revision": rita.case_revision(number)},
        allow_redirects=True)  # fmt: skip
    assert "Decision recorded" in r.text, re.findall(r'role="status">([^<]*)', r.text)
    return number


def test_an_inspection_log_checked_from_the_page_is_the_check_itself(
    web_server: Server, tmp_path: Path
) -> None:
    """The page's counts are those of georeview.procedure.inspections.run on the same files."""
    from georeview.procedure.inspections import run

    number = _approved_case(web_server, tmp_path)
    (tmp_path / "log.csv").write_text(LOG)
    (tmp_path / "rain.csv").write_text(RAIN)
    expected = run(tmp_path / "log.csv", tmp_path / "rain.csv", "deerfield")
    rita = Client(web_server, "rita")
    with (tmp_path / "log.csv").open("rb") as lg, (tmp_path / "rain.csv").open("rb") as rn:
        r = rita.post(f"cases/{number}/inspections/", files={"log": ("log.csv", lg),
                      "rain": ("rain.csv", rn)}, allow_redirects=True)  # fmt: skip
    assert f"Inspection check 1: {expected.status}." in r.text
    assert (
        f"{expected.n_inspections} inspections, {len(expected.missed_rain)} rains without one"
        f" in time, {len(expected.missed_weeks)} weeks without one" in r.text
    )
    report = rita.get(f"cases/{number}/inspections/1/report.html")
    assert report.status_code == 200
    assert "sandbox" in report.headers["Content-Security-Policy"]
    audit = rita.get(f"cases/{number}/audit/").text
    assert "inspections" in audit
    assert "is intact" in audit
    # a case not approved takes no inspection log
    bad = rita.upload(
        "cases/new/", zip_folder(SAMPLES / "deerfield_minor_home", tmp_path / "n.zip")
    )
    other = case_of(bad.url)
    with (tmp_path / "log.csv").open("rb") as lg, (tmp_path / "rain.csv").open("rb") as rn:
        r = rita.post(f"cases/{other}/inspections/", files={"log": ("log.csv", lg),
                      "rain": ("rain.csv", rn)}, allow_redirects=True)  # fmt: skip
    assert "inspections follow an approval" in r.text


def test_the_register_map_has_every_site_and_the_village_limits(web_server: Server) -> None:
    """Sites as WGS 84 points with their status; the limits from the layers' boundary."""
    rita = Client(web_server, "rita")
    sites = rita.get("register/sites.geojson").json()["features"]
    limits = rita.get("register/limits.geojson").json()["features"]
    names = {f["properties"]["name"] for f in limits}
    assert {"Village of Deerfield", "Village of Somers"} <= names
    for f in sites:
        lon, lat = f["geometry"]["coordinates"]
        assert -92.9 < lon < -86.8
        assert 42.4 < lat < 47.1
        assert f["properties"]["url"] == f"/cases/{f['properties']['number']}/"


def test_the_queue_filters_and_searches(web_server: Server, tmp_path: Path) -> None:
    """Search by case number, applicant and address; filter by status and who owes."""
    rita = Client(web_server, "rita")
    r = rita.upload("cases/new/", zip_folder(SAMPLES / "somers_bad_map", tmp_path / "s.zip"))
    number = case_of(r.url)
    rita.wait_job(job_of(r.text))
    assert number in rita.get("cases/", params={"q": number}).text
    assert number in rita.get("cases/", params={"q": number.lower()}).text
    assert number not in rita.get("cases/", params={"q": "no such applicant"}).text
    assert number not in rita.get("cases/", params={"status": "withdrawn"}).text
    assert number in rita.get("cases/", params={"owes": "village"}).text


def test_bad_uploads_say_why_and_leave_nothing(web_server: Server, tmp_path: Path) -> None:
    """A file that is not a zip, a zip with a path out of it: one line on the page, no case."""
    alice = Client(web_server, "alice")
    before = alice.get("").text.count("/cases/")
    (tmp_path / "plan.pdf").write_bytes(b"%PDF-1.4 not a submission")
    r = alice.upload("cases/new/", tmp_path / "plan.pdf")
    assert r.status_code == 400
    assert "upload the submission as a .zip file" in r.text
    import zipfile

    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../outside/submission.toml", "municipality = 'deerfield'\n")
    r = alice.upload("cases/new/", evil)
    assert r.status_code == 400
    assert 'role="alert"' in r.text
    assert alice.get("").text.count("/cases/") == before
    leftovers = list((web_server.workspace / "files" / ".uploads").iterdir())
    assert leftovers == []


def test_a_password_set_on_first_login_through_its_one_time_link(web_server: Server) -> None:
    """``users add --set-on-first-login`` prints a link; it sets the password once."""
    requests = pytest.importorskip("requests")
    done = subprocess.run(
        [sys.executable, "-m", "georeview", "users", "add", "carol", "--role", "applicant",
         "--set-on-first-login", "--workspace", str(web_server.workspace),
         "--url", web_server.base],
        capture_output=True, text=True, check=True, cwd=REPO,
    )  # fmt: skip
    link = re.search(r"(http://\S+/welcome/\S+/)", done.stdout)
    assert link is not None, done.stdout
    s = requests.Session()
    r = s.get(link.group(1))
    assert r.url.endswith("/set-password/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', r.text).group(1)
    r = s.post(r.url, data={"csrfmiddlewaretoken": token, "new_password1": "gravel-orchard-42x",
                            "new_password2": "gravel-orchard-42x"})  # fmt: skip
    assert r.url == web_server.url("login/")
    assert "expired" in requests.get(link.group(1)).text  # used once
    carol = Client.__new__(Client)
    carol.server, carol.name, carol.s = web_server, "carol", requests.Session()
    assert carol.login("carol", "gravel-orchard-42x").url == web_server.base
