"""Who may reach what in the web workspace: every route and every file, as every kind of user.

One live server for the module (tests/_web_server.py). Alice's case is taken through the
web to approval with conditions, so every kind of URL has something behind it: two rounds
and their files, two reviews and their outputs, a comment letter and an approval letter, a
round diff, an inspection check and a screening. Then each URL of :data:`ROUTES` (a table
that must name every route of georeview/web/urls.py) is requested, GET and POST (POST with
the session's CSRF token and a form that would change the case), as the anonymous, as Bob
(another applicant) and as Alice on the Village's pages; none answers with content, and
afterwards the case's audit trail, status and owner are as they were. Also: a POST without
the CSRF token is refused even for the reviewer, the sign-in is throttled, every page
carries the security headers (the review's own pages their sandbox), a path out of a round
folder answers 404, and a submission's HTML is escaped on the pages.
"""

from __future__ import annotations

import http.client
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest
from _web_server import (
    PASSWORD,
    REPO,
    SAMPLE,
    SAMPLES,
    SCALE_RULE,
    Client,
    Server,
    case_of,
    first_zip,
    fixed_zip,
    job_of,
    sample_copy,
    web_server,  # noqa: F401  (the module's live server)
    zip_folder,
)

pytest.importorskip("requests")

URLS_PY = REPO / "georeview" / "web" / "urls.py"
XSS = "<script>alert(1)</script>"
XSS_ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
#: Alice's case as the submission names it, and its applicant: never on another's page.
TITLE = "Retail building"
APPLICANT = "Example Retail"
REVIEW_FILES = ("report.html", "map.html", "report.json", "layers.gpkg")

INSPECTION_LOG = """date,inspector,phase
2025-06-02 09:00,A. Smith,rough grading
2025-06-05,A. Smith,rough grading
2025-06-10T14:30,B. Jones,utilities
"""
RAIN = """date,rain_in
2025-06-01,0.00
2025-06-04,0.62
2025-06-10,0.50
2025-06-17,1.10
"""


@dataclass(frozen=True)
class Route:
    """One URL of a route, who may reach it and how it is asked.

    ``access``: ``public`` (anyone), ``any`` (any signed-in user with a role), ``case``
    (the Village and the case's own applicant), ``village`` (reviewers and admins only).
    ``method``: ``GET`` for a page or file, ``POST`` for a form's action.
    """

    name: str
    path: str
    access: str
    method: str
    data: tuple[tuple[str, str], ...] = ()


@dataclass
class World:
    """What the setup made: Alice's case, its jobs, Bob's case, a screening."""

    number: str
    review_job: int
    screen_job: int
    bob_number: str
    revision: int


# ----------------------------------------------------------------- the setup, through the web


def _messages(page: str) -> list[str]:
    return re.findall(r'<li class="[^"]*" role="status">(.*?)</li>', page)


def _ok(r: Any, said: str) -> str:
    assert r.status_code == 200, (r.status_code, r.url)
    got = _messages(r.text)
    assert any(said in m for m in got), got
    return str(r.text)


@pytest.fixture(scope="module")
def world(web_server: Server) -> World:  # noqa: F811
    tmp = web_server.tmp
    alice, bob, rita = (Client(web_server, n) for n in ("alice", "bob", "rita"))

    # Alice's case: reviewed, a determination, comments, a note, returned with a letter
    r = alice.upload("cases/new/", first_zip(tmp))
    number, job = case_of(r.url), int(job_of(r.text))
    alice.wait_job(job)
    C = f"cases/{number}/"
    _ok(
        rita.post(
            C + "determine/",
            {
                "fact": "full_plan_required",
                "value": "yes",
                "reason": "two acres disturbed",
                "revision": rita.case_revision(number),
            },
            allow_redirects=True,
        ),
        "recorded",
    )
    rita.wait_job(job_of(_ok(rita.post(C + "review/", allow_redirects=True), "queued")))
    for kind, rule, text in (
        ("comment", SCALE_RULE, "Redraw the site map at 1 in = 100 ft."),
        ("comment", "", "Show the concrete washout area."),
        ("note", "", "Engineer called."),
    ):
        data = {"kind": kind, "rule_id": rule, "text": text}
        data["revision"] = str(rita.case_revision(number))
        _ok(rita.post(C + "actions/", data, allow_redirects=True), "recorded")
    decided = {"outcome": "returned", "reason": "site map", "revision": ""}
    decided["revision"] = str(rita.case_revision(number))
    _ok(rita.post(C + "decide/", decided, allow_redirects=True), "letter written")

    # the resubmission, a condition, approval with conditions (the second letter)
    alice.wait_job(job_of(_ok(alice.upload(C + "resubmit/", fixed_zip(tmp)), "Round 2")))
    condition = {"kind": "condition", "rule_id": "", "text": "Install the washout first."}
    condition["revision"] = str(rita.case_revision(number))
    _ok(rita.post(C + "actions/", condition, allow_redirects=True), "recorded")
    decided = {"outcome": "approved_with_conditions", "reason": "", "revision": ""}
    decided["revision"] = str(rita.case_revision(number))
    _ok(rita.post(C + "decide/", decided, allow_redirects=True), "letter written")

    # an inspection check of the approved case
    (tmp / "log.csv").write_text(INSPECTION_LOG)
    (tmp / "rain.csv").write_text(RAIN)
    with (tmp / "log.csv").open("rb") as log, (tmp / "rain.csv").open("rb") as rain:
        r = rita.post(
            C + "inspections/",
            files={"log": ("log.csv", log), "rain": ("rain.csv", rain)},
            allow_redirects=True,
        )
    _ok(r, "Inspection check 1")

    # a screening of the sample's site as a parcel file
    with (SAMPLES / SAMPLE / "site.geojson").open("rb") as parcels:
        r = rita.post(
            "screenings/new/",
            {"municipality": "somers", "assume": "disturb=whole"},
            files={"parcels": ("parcels.geojson", parcels)},
            allow_redirects=True,
        )
    assert r.status_code == 200, r.status_code
    assert "/screenings/" in r.url, r.url
    screen = int(r.url.rstrip("/").rsplit("/", 1)[-1])
    rita.wait_job(screen)

    # Bob's own case, whose project name is HTML
    folder = sample_copy(
        tmp, SAMPLE, "bobs_shed", name=XSS, applicant="B. Builder", description="A shed."
    )
    r = bob.upload("cases/new/", zip_folder(folder, tmp / "bobs_shed.zip"))
    bob_number = case_of(r.url)
    assert bob_number != number
    bob.wait_job(job_of(r.text))
    return World(number, job, screen, bob_number, rita.case_revision(number))


def routes(w: World) -> list[Route]:
    """Every route of urls.py, each URL of it that has something behind it."""
    C = f"cases/{w.number}/"
    rev = str(w.revision)
    return [
        Route("favicon", "favicon.ico", "public", "GET"),
        Route("login", "login/", "public", "GET"),
        Route("logout", "logout/", "public", "POST"),
        Route("welcome", "welcome/MQ/not-a-token/", "public", "GET"),
        Route("password", "password/", "any", "GET"),
        Route("home", "", "any", "GET"),
        Route("new_case", "cases/new/", "any", "GET"),
        Route("case", C, "case", "GET"),
        Route("resubmit", C + "resubmit/", "case", "POST"),
        Route("withdraw", C + "withdraw/", "case", "POST", (("reason", "not mine"),)),
        Route("round_file", C + "rounds/1/files/submission.toml", "case", "GET"),
        Route("round_file", C + "rounds/2/files/site.geojson", "case", "GET"),
        *(
            Route("review_file", C + f"rounds/{k}/reviews/{r}/{name}", "case", "GET")
            for k, r in ((1, 1), (1, 2), (2, 1))
            for name in REVIEW_FILES
        ),
        Route("letter_file", C + "letters/1.pdf", "case", "GET"),
        Route("letter_file", C + "letters/1.html", "case", "GET"),
        Route("letter_file", C + "letters/2.pdf", "case", "GET"),
        Route("letter_file", C + "letters/2.html", "case", "GET"),
        Route("job", f"jobs/{w.review_job}.json", "case", "GET"),
        Route("job", f"jobs/{w.screen_job}.json", "village", "GET"),
        Route("queue", "cases/", "village", "GET"),
        Route("review_again", C + "review/", "village", "POST"),
        Route(
            "determine",
            C + "determine/",
            "village",
            "POST",
            (("fact", "full_plan_required"), ("value", "no"), ("reason", "x"), ("revision", rev)),
        ),
        Route(
            "action_add",
            C + "actions/",
            "village",
            "POST",
            (("kind", "comment"), ("text", "intruder"), ("rule_id", ""), ("revision", rev)),
        ),
        Route(
            "action_resolve",
            C + "actions/2/resolve/",
            "village",
            "POST",
            (("reason", "intruder"), ("revision", rev)),
        ),
        Route(
            "decide",
            C + "decide/",
            "village",
            "POST",
            (("outcome", "disapproved"), ("reason", "intruder"), ("revision", rev)),
        ),
        Route("issue", C + "issue/", "village", "POST", (("what", "issue"),)),
        Route(
            "payment", C + "payments/", "village", "POST", (("kind", "fee"), ("amount_usd", "1"))
        ),
        Route("set_owner", C + "owner/", "village", "POST", (("owner", "bob"),)),
        Route("inspections", C + "inspections/", "village", "POST"),
        Route("diff", C + "diff/1/2/", "village", "GET"),
        Route("audit", C + "audit/", "village", "GET"),
        *(
            Route("inspection_file", C + f"inspections/1/{name}", "village", "GET")
            for name in ("log.csv", "rain.csv", "report.html")
        ),
        Route("register_map", "register/map/", "village", "GET"),
        Route("register_sites", "register/sites.geojson", "village", "GET"),
        Route("register_limits", "register/limits.geojson", "village", "GET"),
        Route("screens", "screenings/", "village", "GET"),
        Route("screen_new", "screenings/new/", "village", "POST", (("municipality", "somers"),)),
        Route("screen", f"screenings/{w.screen_job}/", "village", "GET"),
        *(
            Route("screen_file", f"screenings/{w.screen_job}/{name}", "village", "GET")
            for name in ("screening.csv", "index.html")
        ),
    ]


def _route_names() -> set[str]:
    return set(re.findall(r'\bname="(\w+)"', URLS_PY.read_text(encoding="utf-8")))


def _form(route: Route) -> dict[str, str]:
    return dict(route.data)


def _audit_rows(rita: Client, number: str) -> int:
    page = rita.get(f"cases/{number}/audit/").text
    return len(re.findall(r"<tr\b", page.split("<tbody>", 1)[1]))


def _state(rita: Client, number: str) -> dict[str, Any]:
    """What a refused request must not change: the trail, the status, owner, letters, job."""
    page = rita.get(f"cases/{number}/").text
    return {
        "audit": _audit_rows(rita, number),
        "status": re.search(r'class="status s-(\w+)"', page).group(1),  # type: ignore[union-attr]
        "owner": re.search(r"Linked to (\w+)", page).group(1),  # type: ignore[union-attr]
        "letters": len(re.findall(r"/letters/\d+\.pdf", page)),
        "job": job_of(page),
        "revision": rita.case_revision(number),
    }


def _no_case_content(r: Any, w: World, who: str, route: Route) -> None:
    body = r.text if r.headers.get("content-type", "").startswith(("text", "application/j")) else ""
    for secret in (w.number, TITLE, APPLICANT):
        assert secret not in body, (who, route.method, route.path, r.status_code, secret)
    if r.content[:5] == b"%PDF-" or r.content[:16].startswith(b"SQLite format"):
        pytest.fail(f"{who} got a file from {route.path}")


def _to_login(r: Any) -> bool:
    return r.status_code == 302 and urlsplit(r.headers["Location"]).path == "/login/"


# ----------------------------------------------------------------- the table is complete


def test_the_table_names_every_route(world: World) -> None:
    """A route added to urls.py without a line here fails: every route has its authz test."""
    assert _route_names() == {r.name for r in routes(world)}


def test_the_reviewer_reaches_every_page_and_file(web_server: Server, world: World) -> None:  # noqa: F811
    """Every GET URL of the table answers the reviewer (so a 404 below is not vacuous)."""
    rita = Client(web_server, "rita")
    for route in routes(world):
        if route.method != "GET":
            continue
        r = rita.get(route.path)
        expected = {"favicon": 301, "home": 302}.get(route.name, 200)
        if route.name == "welcome":
            expected = 200  # a page saying the link is not valid
        assert r.status_code == expected, (route.path, r.status_code)
        assert expected != 200 or len(r.content) > 0, route.path
    admin = Client(web_server, "adam")
    assert admin.get("cases/").status_code == 200
    assert admin.get(f"cases/{world.number}/audit/").status_code == 200


def test_the_applicant_reaches_her_own_case(web_server: Server, world: World) -> None:  # noqa: F811
    alice = Client(web_server, "alice")
    for route in routes(world):
        if route.access == "case" and route.method == "GET":
            r = alice.get(route.path)
            assert r.status_code == 200, (route.path, r.status_code)
    page = alice.get(f"cases/{world.number}/").text
    assert "Engineer called." not in page  # the internal note
    assert f"/cases/{world.number}/audit/" not in page


# ----------------------------------------------------------------- refused, and nothing changed


def test_the_anonymous_are_sent_to_sign_in(web_server: Server, world: World) -> None:  # noqa: F811
    anon = Client(web_server)
    before = _state(Client(web_server, "rita"), world.number)
    for route in routes(world):
        if route.access == "public":
            continue
        for method in ("GET", "POST"):
            r = anon.get(route.path) if method == "GET" else anon.post(route.path, _form(route))
            assert r.status_code != 200, (method, route.path)
            assert _to_login(r) or r.status_code in (403, 404), (method, route.path, r.status_code)
            _no_case_content(r, world, "anonymous", route)
    assert _state(Client(web_server, "rita"), world.number) == before


def test_another_applicant_sees_nothing_of_the_case(web_server: Server, world: World) -> None:  # noqa: F811
    bob = Client(web_server, "bob")
    rita = Client(web_server, "rita")
    before = _state(rita, world.number)
    for route in routes(world):
        if route.name in ("logout", "login"):
            continue
        for method in ("GET", "POST"):
            r = bob.get(route.path) if method == "GET" else bob.post(route.path, _form(route))
            where = (method, route.path, r.status_code)
            if method != route.method and route.access in ("case", "village"):
                # the method is checked before the case: a 405 says nothing of it
                assert r.status_code in (403, 404, 405), where
            elif route.access == "case":
                assert r.status_code == 404, where
            elif route.access == "village":
                assert r.status_code in (403, 404), where
            else:
                assert r.status_code < 500, where
            _no_case_content(r, world, "bob", route)
    assert _state(rita, world.number) == before
    assert bob.get("").status_code == 200  # still signed in: nothing above signed him out


def test_the_applicant_cannot_act_for_the_village(web_server: Server, world: World) -> None:  # noqa: F811
    alice = Client(web_server, "alice")
    rita = Client(web_server, "rita")
    before = _state(rita, world.number)
    for route in routes(world):
        if route.access != "village":
            continue
        for method in ("GET", "POST"):
            r = alice.get(route.path) if method == "GET" else alice.post(route.path, _form(route))
            refused = (403, 404) if method == route.method else (403, 404, 405)
            assert r.status_code in refused, (method, route.path, r.status_code)
            assert "Engineer called." not in r.text
    assert _state(rita, world.number) == before


def test_a_post_without_its_csrf_token_is_refused(web_server: Server, world: World) -> None:  # noqa: F811
    rita = Client(web_server, "rita")
    before = _state(rita, world.number)
    for route in routes(world):
        r = rita.post(route.path, _form(route), csrf=False)
        assert r.status_code == 403, (route.path, r.status_code)
    # a token of another session is no better
    other = Client(web_server, "adam").token()
    r = rita.s.post(
        web_server.url(f"cases/{world.number}/decide/"),
        data={
            **_form(next(x for x in routes(world) if x.name == "decide")),
            "csrfmiddlewaretoken": other,
        },
        allow_redirects=False,
    )
    assert r.status_code == 403
    assert _state(rita, world.number) == before
    assert rita.get("cases/").status_code == 200  # and still signed in


def test_sign_out_ends_the_session(web_server: Server, world: World) -> None:  # noqa: F811
    adam = Client(web_server, "adam")
    assert adam.get("cases/").status_code == 200
    assert adam.get("logout/").status_code == 405  # never a GET that signs out
    assert adam.get("cases/").status_code == 200
    r = adam.post("logout/")
    assert _to_login(r), r.status_code
    assert _to_login(adam.get("cases/"))


# ----------------------------------------------------------------- sign-in throttling


def test_five_wrong_passwords_lock_the_name(web_server: Server, world: World) -> None:  # noqa: F811
    who = Client(web_server)
    for _ in range(5):
        r = who.login("lockout", "not-the-password-1")
        assert urlsplit(r.url).path == "/login/", r.url
    r = who.login("lockout", PASSWORD)
    assert urlsplit(r.url).path == "/login/" or r.status_code in (403, 429), r.url
    assert "sessionid" not in who.s.cookies
    assert _to_login(who.get(""))
    # the lock is this name's: another user signs in from the same address
    assert Client(web_server, "alice").get("").status_code == 200


# ----------------------------------------------------------------- headers, files, escaping


def test_every_page_carries_the_security_headers(web_server: Server, world: World) -> None:  # noqa: F811
    rita = Client(web_server, "rita")
    pages = [
        "cases/",
        f"cases/{world.number}/",
        f"cases/{world.number}/diff/1/2/",
        f"cases/{world.number}/audit/",
        "register/map/",
        "screenings/",
    ]
    for path in pages:
        r = rita.get(path)
        assert r.status_code == 200, path
        csp = r.headers["Content-Security-Policy"]
        directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
        assert directives["script-src"] == ["'self'"], (path, csp)
        assert "'unsafe-inline'" not in csp, (path, csp)
        assert "'unsafe-eval'" not in csp, (path, csp)
        assert directives["object-src"] == ["'none'"], csp
        assert r.headers["X-Frame-Options"] in ("DENY", "SAMEORIGIN"), path
        assert r.headers["X-Content-Type-Options"] == "nosniff", path
        assert r.headers["Referrer-Policy"] in ("same-origin", "no-referrer", "strict-origin"), path
    login = Client(web_server).get("login/")
    assert "script-src 'self'" in login.headers["Content-Security-Policy"]
    assert login.headers["X-Content-Type-Options"] == "nosniff"
    cookie = next(c for c in rita.s.cookies if c.name == "sessionid")
    assert cookie.has_nonstandard_attr("HttpOnly")

    # the review's own pages (inline scripts) run in a sandbox without the app's origin
    for name in ("report.html", "map.html"):
        r = rita.get(f"cases/{world.number}/rounds/1/reviews/1/{name}")
        csp = r.headers["Content-Security-Policy"]
        assert csp.startswith("sandbox"), (name, csp)
        assert "allow-same-origin" not in csp
        assert "connect-src 'none'" in csp
        assert r.headers["X-Content-Type-Options"] == "nosniff"
    # what is downloaded is never rendered as a page of the app's
    r = rita.get(f"cases/{world.number}/rounds/1/files/submission.toml")
    assert r.headers["Content-Disposition"].startswith("attachment")
    assert r.headers["X-Content-Type-Options"] == "nosniff"


def _raw_get(server: Server, client: Client, path: str) -> tuple[int, bytes]:
    """GET ``path`` exactly as written (no client normalizes its dots)."""
    parts = urlsplit(server.base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    cookies = "; ".join(f"{c.name}={c.value}" for c in client.s.cookies)
    conn.request("GET", path, headers={"Cookie": cookies})
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, body


@pytest.mark.parametrize(
    "tail",
    [
        "../../../../georeview.sqlite3",
        "../../../../secret_key",
        "%2e%2e/%2e%2e/%2e%2e/%2e%2e/georeview.sqlite3",
        "..%2f..%2f..%2f..%2fgeoreview.sqlite3",
        "%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret_key",
        "/etc/passwd",
        "%2fetc%2fpasswd",
        "..\\..\\..\\..\\georeview.sqlite3",
    ],
)
def test_a_path_out_of_the_round_is_not_found(
    web_server: Server,  # noqa: F811
    world: World,
    tail: str,
) -> None:
    rita = Client(web_server, "rita")
    secret = (web_server.workspace / "secret_key").read_bytes()[:16]
    for prefix in (
        f"/cases/{world.number}/rounds/1/files/",
        f"/cases/{world.number}/rounds/1/reviews/1/",
    ):
        status, body = _raw_get(web_server, rita, prefix + tail)
        assert status in (400, 404), (prefix + tail, status)
        assert not body.startswith(b"SQLite format")
        assert secret not in body
        assert b"root:" not in body


def test_html_in_a_submission_is_escaped(web_server: Server, world: World) -> None:  # noqa: F811
    rita = Client(web_server, "rita")
    bob = Client(web_server, "bob")
    pages = [
        (rita, "cases/"),
        (rita, f"cases/?q={world.bob_number}"),
        (rita, f"cases/{world.bob_number}/"),
        (bob, ""),
        (bob, f"cases/{world.bob_number}/"),
    ]
    for who, path in pages:
        r = who.get(path)
        assert r.status_code == 200, path
        assert XSS not in r.text, path
        assert XSS_ESCAPED in r.text, path
    audit = rita.get(f"cases/{world.bob_number}/audit/")
    assert audit.status_code == 200
    assert XSS not in audit.text
    # the register's GeoJSON carries the text as data (the map's script sets textContent)
    sites = rita.get("register/sites.geojson").json()
    titles = {f["properties"]["number"]: f["properties"]["title"] for f in sites["features"]}
    assert titles[world.bob_number] == XSS
