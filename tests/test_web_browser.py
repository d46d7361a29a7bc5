"""The web workspace in a real browser (Debian chromium): one case from upload to approval.

One live ``georeview serve`` for the module (tests/_web_server.py). The flow runs twice, at
desktop size and at phone size (touch, mobile viewport), each on a case of its own: the
applicant uploads the zip and waits on the page for the review; the reviewer records a
determination, reviews again, comments on a finding and on the whole submission, adds an
internal note and returns the case with a comment letter; the applicant reads the comments
(not the note) and the letter (PDF), and resubmits; the reviewer reads the round diff
(one comment resolved, one open), adds a condition and approves with conditions; the
applicant downloads the approval letter.

Every page is watched: no console error, no Content-Security-Policy violation, no request
to any host but the server's own loopback address; the map's frame loads. Screenshots go
to ``$GEOREVIEW_SCREENSHOTS`` when set, else to pytest's tmp folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from _web_helpers import CHROMIUM
from _web_server import (
    PASSWORD,
    SCALE_RULE,
    Server,
    first_zip,
    fixed_zip,
    web_server,  # noqa: F401  (the module's live server)
)

pytestmark = [pytest.mark.browser]

if not CHROMIUM.exists() and os.environ.get("CI"):
    pytest.fail(f"{CHROMIUM} is not installed in CI: the browser tests must run", pytrace=False)

SIZES = {
    "desktop": {"viewport": {"width": 1280, "height": 900}},
    "phone": {
        "viewport": {"width": 390, "height": 844},
        "is_mobile": True,
        "has_touch": True,
        "device_scale_factor": 2,
    },
}
LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")
#: Reported to the test by every page (and frame) that breaks its policy.
CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", function (e) {
  window.__georeviewCsp(e.violatedDirective + " blocked " + e.blockedURI + " in " + e.documentURI);
});
"""
REVIEW_S = 180_000  # ms a review may take on a loaded 2-core machine

COMMENT_FINDING = "Redraw the site map at 1 in = 100 ft or larger."
COMMENT_GENERAL = "Show the concrete washout area and its sign."
NOTE = "Engineer called: resubmittal next week."
CONDITION = "Install the concrete washout before the first pour."


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go."""
    env = os.environ.get("GEOREVIEW_SCREENSHOTS")
    folder = Path(env) if env else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Watch:
    """What a browser context did wrong: console errors, page errors, CSP, foreign hosts."""

    def __init__(self, context: Any) -> None:
        self.errors: list[str] = []
        self.csp: list[str] = []
        self.foreign: list[str] = []
        self.urls: list[str] = []
        context.expose_function("__georeviewCsp", lambda text: self.csp.append(str(text)))
        context.add_init_script(CSP_LISTENER)
        context.route("**/*", self._route)
        context.on("page", self.page)
        context.on("request", lambda r: self.urls.append(r.url))

    def page(self, page: Any) -> None:
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))

    def _console(self, msg: Any) -> None:
        if msg.type == "error":
            self.errors.append(f"console error: {msg.text} at {msg.location.get('url', '')}")

    def _route(self, route: Any) -> None:
        url = route.request.url
        host = urlsplit(url).hostname or ""
        if url.startswith(("http:", "https:", "ws:", "wss:")) and host not in LOOPBACK:
            self.foreign.append(url)
            route.abort()
        else:
            route.continue_()

    def check(self) -> None:
        """Nothing went wrong."""
        assert self.errors == []
        assert self.csp == []
        assert self.foreign == []


class Session:
    """One user's browser context and page, signed in."""

    def __init__(self, browser: Any, server: Server, size: str, name: str) -> None:
        self.server = server
        self.size = size
        self.context = browser.new_context(accept_downloads=True, **SIZES[size])
        self.context.set_default_timeout(30_000)
        self.watch = Watch(self.context)
        self.page = self.context.new_page()
        self.go("login/")
        self.page.fill("input[name=username]", name)
        self.page.fill("input[name=password]", PASSWORD)
        with self.page.expect_navigation():
            self.page.click("button[type=submit]")
        assert urlsplit(self.page.url).path in ("/", "/cases/"), self.page.url

    def go(self, path: str) -> Any:
        response = self.page.goto(self.server.url(path))
        assert response is not None, path
        assert response.status == 200, (path, response.status)
        return response

    def submit(self, form: Any, button: str = "button[type=submit]") -> None:
        """Submit ``form`` with its button; wait for the page it leads to."""
        with self.page.expect_navigation():
            form.locator(button).first.click()

    def message(self) -> str:
        return self.page.locator("ul.messages").inner_text()

    def wait_review(self) -> None:
        """Wait on the case page for its job: the page polls and reloads when it is done."""
        self.page.wait_for_selector("#job[data-state='done']", timeout=REVIEW_S, state="attached")
        assert "Reviewed" in self.page.locator("#job").inner_text()

    def map_loads(self) -> None:
        """The map's frame (lazy) is loaded and drew Leaflet's map."""
        frame = self.page.locator("iframe[title='map of the site']")
        frame.scroll_into_view_if_needed()
        self.page.frame_locator("iframe[title='map of the site']").locator(
            ".leaflet-container"
        ).first.wait_for(timeout=30_000)

    def shot(self, folder: Path, what: str) -> Path:
        path = folder / f"{what}-{self.size}.png"
        self.page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 5_000
        return path

    def pdf(self, href: str) -> bytes:
        """A letter's PDF as the browser downloads it (the session's cookies)."""
        r = self.context.request.get(self.server.url(href))
        assert r.status == 200
        assert r.headers["content-type"] == "application/pdf"
        body = r.body()
        assert body.startswith(b"%PDF-")
        return body  # type: ignore[no-any-return]


def _letter_links(page: Any) -> list[tuple[str, str]]:
    links = page.locator("#letters a[href$='.pdf']")
    return [
        (links.nth(i).inner_text(), links.nth(i).get_attribute("href"))
        for i in range(links.count())
    ]


@pytest.mark.parametrize("size", list(SIZES))
def test_a_case_from_upload_to_approval(
    browser: Any,
    web_server: Server,  # noqa: F811
    tmp_path: Path,
    shots: Path,
    size: str,
) -> None:
    alice = Session(browser, web_server, size, "alice")
    rita = Session(browser, web_server, size, "rita")
    try:
        _flow(alice, rita, tmp_path, shots)
    finally:
        alice.context.close()
        rita.context.close()
    for who in (alice, rita):
        who.watch.check()


def _flow(alice: Session, rita: Session, tmp: Path, shots: Path) -> None:
    # the applicant uploads the zip; the case page follows the review until it is done
    alice.go("cases/new/")
    alice.page.set_input_files("input[name=submission]", str(first_zip(tmp)))
    alice.submit(alice.page.locator("main form"))
    assert re.search(r"/cases/[A-Z]+-\d{4}-\d{4}/$", alice.page.url), alice.page.url
    number = alice.page.url.rstrip("/").rsplit("/", 1)[-1]
    assert f"Case {number} opened" in alice.message()
    alice.wait_review()
    alice.map_loads()

    # the reviewer's queue lists it
    rita.go("cases/")
    row = rita.page.locator("table.queue tbody tr", has_text=number)
    assert row.count() == 1
    rita.shot(shots, "queue")
    with rita.page.expect_navigation():
        row.locator(f"a:text('{number}')").click()
    assert rita.page.url.endswith(f"/cases/{number}/")
    rita.map_loads()

    # a determination, through its form; the decision then waits for a review that read it
    question = rita.page.locator(
        "#determinations form.question",
        has=rita.page.locator("input[name=fact][value=full_plan_required]"),
    )
    assert question.count() == 1
    question.locator("select[name=value]").select_option("yes")
    question.locator("input[name=reason]").fill(
        "Two acres and more disturbed: the full plan applies"
    )
    rita.submit(question)
    assert "Determination of full_plan_required recorded" in rita.message()
    rita.submit(rita.page.locator("form", has=rita.page.locator("button:text('Review again')")))
    rita.wait_review()

    # a comment on the failing scale finding, one on the whole submission, an internal note
    finding = rita.page.locator(f"article[id='{SCALE_RULE}']")
    finding.locator("details.act > summary").click()
    act = finding.locator("details.act form")
    act.locator("select[name=kind]").select_option("comment")
    act.locator("input[name=sheet]").fill("C-1")
    act.locator("textarea[name=text]").fill(COMMENT_FINDING)
    rita.submit(act)
    assert "Comment recorded" in rita.message()
    for kind, sheet, text in (("comment", "C-6", COMMENT_GENERAL), ("note", "", NOTE)):
        general = rita.page.locator("form.general")
        general.locator("select[name=kind]").select_option(kind)
        general.locator("input[name=sheet]").fill(sheet)
        general.locator("textarea[name=text]").fill(text)
        rita.submit(general)
        assert f"{kind.title()} recorded" in rita.message()
    assert COMMENT_FINDING in rita.page.locator(f"article[id='{SCALE_RULE}']").inner_text()
    assert NOTE in rita.page.locator("#findings").inner_text()
    rita.shot(shots, "case-reviewer")

    # returned, with its comment letter
    decide = rita.page.locator("#decide form").first
    decide.locator("select[name=outcome]").select_option("returned")
    decide.locator("textarea[name=reason]").fill("Site map corrections requested before a decision")
    rita.submit(decide)
    assert "Decision recorded and its letter written" in rita.message()
    assert rita.page.locator("h1 .status.s-returned").count() == 1

    # the applicant reads the comments (never the note) and the comment letter
    alice.go(f"cases/{number}/")
    text = alice.page.locator("main").inner_text()
    assert COMMENT_FINDING in text
    assert COMMENT_GENERAL in text
    assert NOTE not in text
    assert NOTE not in alice.page.content()
    letters = _letter_links(alice.page)
    assert len(letters) == 1, letters
    assert "comment" in letters[0][0].lower(), letters
    assert alice.pdf(letters[0][1])
    alice.map_loads()
    alice.shot(shots, "case-applicant-returned")

    # the resubmission fixes the site map
    resubmit = alice.page.locator("#resubmit form")
    resubmit.locator("input[type=file]").set_input_files(str(fixed_zip(tmp)))
    alice.submit(resubmit)
    assert "Round 2 received" in alice.message()
    alice.wait_review()
    assert alice.page.locator("#resubmit").count() == 0

    # the reviewer reads what changed: the finding's comment resolved, the general one open
    rita.go(f"cases/{number}/")
    with rita.page.expect_navigation():
        rita.page.click("#rounds a:text('What changed from round 1 to round 2')")
    assert rita.page.url.endswith(f"/cases/{number}/diff/1/2/")
    main = rita.page.locator("main").inner_text()
    assert "Resolved since round 1 (1)" in main
    assert "Still open (1)" in main
    resolved = rita.page.locator(".action.a-comment.resolved")
    assert resolved.count() == 1
    assert COMMENT_FINDING in resolved.inner_text()
    still = rita.page.locator(".action.a-comment:not(.resolved)")
    assert still.count() == 1
    assert COMMENT_GENERAL in still.inner_text()
    rita.shot(shots, "diff")

    # a condition (the open comment's washout); plain approval refused, with conditions taken
    rita.go(f"cases/{number}/")
    general = rita.page.locator("form.general")
    general.locator("select[name=kind]").select_option("condition")
    general.locator("input[name=sheet]").fill("C-6")
    general.locator("textarea[name=text]").fill(CONDITION)
    rita.submit(general)
    assert "Condition recorded" in rita.message()
    decide = rita.page.locator("#decide form").first
    decide.locator("select[name=outcome]").select_option("approved")
    rita.submit(decide)
    assert "approved_with_conditions" in rita.message()  # refused: a condition is open
    decide = rita.page.locator("#decide form").first
    decide.locator("select[name=outcome]").select_option("approved_with_conditions")
    rita.submit(decide)
    assert "Decision recorded and its letter written" in rita.message()
    assert rita.page.locator("h1 .status.s-approved_with_conditions").count() == 1

    # the applicant downloads the approval letter
    alice.go(f"cases/{number}/")
    letters = _letter_links(alice.page)
    assert [href.rsplit("/", 1)[-1] for _, href in letters] == ["1.pdf", "2.pdf"]
    assert "approval" in letters[1][0].lower(), letters
    assert alice.pdf(letters[1][1])
    assert CONDITION in alice.page.locator("main").inner_text()
    alice.shot(shots, "case-applicant")
    alice.go("")
    assert number in alice.page.locator("table.queue").inner_text()


def test_the_watch_sees_csp_violations_and_foreign_requests(
    browser: Any,
    web_server: Server,  # noqa: F811
) -> None:
    """The checks above are not vacuous: a blocked image and a foreign host are both seen."""
    rita = Session(browser, web_server, "desktop", "rita")
    try:
        rita.go("cases/")
        rita.page.evaluate(
            "() => { const i = document.createElement('img');"
            " i.src = 'https://tile.openstreetmap.org/0/0/0.png'; document.body.appendChild(i); }"
        )
        rita.page.wait_for_timeout(500)
        with pytest.raises(Exception, match=r"net::ERR_"):
            rita.page.goto("http://192.0.2.1/")
    finally:
        rita.context.close()
    assert any("img-src" in v and "openstreetmap" in v for v in rita.watch.csp), rita.watch.csp
    assert "http://192.0.2.1/" in rita.watch.foreign
    assert any("Content Security Policy" in e for e in rita.watch.errors), rita.watch.errors
