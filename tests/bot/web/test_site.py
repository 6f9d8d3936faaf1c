"""The web view in a real browser (Debian's Chromium driven by Playwright) against `hushtable web` running as
its own process over a real bot database: games of all five kinds, a replay stepped through, a leaderboard
followed to its match, the clue report, and every way in that must be refused (other tenants, a running game's
secrets, guessed ids, expired and altered links), with nothing changed by any of it."""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.web import links
from games import catalog
from tests.bot.web.world import ALICE, BOB, OTHER, TENANT, World, build

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(os.environ.get("HUSHTABLE_WEB_SHOTS", Path(".hushtable") / "web-screens"))


@dataclass
class Site:
    world: World
    base: str
    key: bytes
    proc: subprocess.Popen[str]

    def link(self, tenant: str = TENANT, *, game: int | None = None, member: str | None = None, admin: bool = False,
             hours: float = 1.0, now: float | None = None) -> str:
        token = links.make(self.key, tenant, hours=hours, game=game, member=member, admin=admin, now=now)
        return f"{self.base}/s/{token}/"


def _snapshot(path: Path) -> list[tuple[object, ...]]:
    """Everything the pages read, to show that reading changed none of it."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        out: list[tuple[object, ...]] = []
        for table in ("games", "seats", "actions", "events", "tournaments", "tournament_matches", "evaluations"):
            out += [(table, *r) for r in db.execute(f"SELECT * FROM {table} ORDER BY 1, 2")]  # noqa: S608 - fixed names
        return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    assert CHROMIUM.exists(), "the browser tests need Debian's chromium: apt-get install -y chromium (.ci/run does)"
    folder = tmp_path_factory.mktemp("web")
    world = asyncio.run(build(folder))
    env = {**os.environ, "HUSHTABLE_DATABASE_URL": world.url, "HUSHTABLE_LOG_DIR": str(folder / "logs")}
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "web", "--port", "0"], cwd=folder, env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"web view on (http://\S+)", line)
    assert found, f"the site did not start: {line!r}"
    key = links.signing_key(links.key_path_for_sqlite(world.path))
    try:
        yield Site(world, found.group(1), key, proc)
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def browser(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    # Chromium keeps its crash-report settings under $HOME/.config/chromium whatever its profile folder:
    # a home of its own keeps the tests out of the user's.
    home = tmp_path_factory.mktemp("chromium-home")
    env: dict[str, str | float | bool] = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                                          "XDG_CACHE_HOME": str(home / ".cache")}
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"], headless=True, env=env)
        yield b
        b.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    from playwright.sync_api import Browser

    assert isinstance(browser, Browser)
    p = browser.new_page(viewport={"width": 1100, "height": 900})
    seen: list[str] = []
    p.on("request", lambda r: seen.append(r.url))
    yield p
    outside = [u for u in seen if not u.startswith("http://127.0.0.1")]
    assert not outside, f"a page loaded something from outside the site: {outside}"
    p.close()


def shot(page: object, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)  # type: ignore[attr-defined]


def _ids(page: object) -> set[int]:
    return {int(t.strip("#")) for t in page.locator("table.games td:first-child a").all_inner_texts()}  # type: ignore[attr-defined]


def test_the_games_list_filters_and_a_replay_steps_through_a_game(site: Site, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    w = site.world
    before = _snapshot(w.path)
    page.goto(site.link(member=w.alice))
    listed = _ids(page)
    assert set(w.ai.values()) | {w.people} <= listed, "every finished game of the tenant, all five kinds"
    assert w.other not in listed and w.running not in listed
    assert {t.split(" ")[0] for t in page.locator("table.games td:nth-child(2)").all_inner_texts()} >= set(catalog.ids())
    shot(page, "games")
    one = catalog.ids()[-1]  # any registered game: the filter keeps its games alone
    page.select_option("select[name=game]", one)
    page.click("button[type=submit]")
    assert _ids(page) == {w.ai[one]}
    page.goto(site.link(member=w.alice))
    page.fill("input[name=agent]", "random:b")
    page.click("button[type=submit]")
    tour = _ids(page)
    assert tour and not tour & (set(w.ai.values()) | {w.people}), "only the tournament's games seat random:b"
    page.click("text=Games I played")
    assert _ids(page) == {w.people}
    expect(page.locator("tr.mine")).to_have_count(1)
    # The replay: people by pseudonym, each move's source and rule, stepped with the buttons.
    page.click(f"table.games a[href$='/game/{w.people}']")
    expect(page.locator("h1")).to_contain_text(f"Game #{w.people}: chameleon")
    body = page.content()
    assert w.alice in body and ALICE.name not in body and BOB.name not in body, "people appear only as pseudonyms"
    expect(page.locator("#now")).to_have_text("0")
    last = int(page.locator("#stepper").get_attribute("data-last") or 0)
    assert last > 4
    for _ in range(3):
        page.click("#next")
    expect(page.locator("#now")).to_have_text("3")
    current = page.locator(".step.current")
    expect(current).to_have_count(1)
    expect(current).to_contain_text("clue")
    expect(current.locator(".rule")).to_contain_text("clue")
    later = page.locator("#public li[data-step='4']")
    if later.count():
        expect(later.first).to_be_hidden()
    expect(page.locator("#public li[data-step='3']").first).to_be_visible()
    expect(page.locator("#outcome")).to_be_hidden()
    shot(page, "replay-step-3")
    page.click("#last")
    expect(page.locator("#now")).to_have_text(str(last))
    expect(page.locator("#outcome")).to_be_visible()
    expect(page.locator("#outcome")).to_contain_text("Winners")
    # Each seat's private view on a toggle, and the secrets revealed.
    seat = page.locator("details.seat").first
    expect(seat.locator("ul")).to_be_hidden()
    seat.locator("summary").click()
    expect(seat.locator("ul")).to_be_visible()
    expect(page.locator("#secrets li").first).to_contain_text("known to")
    sources = page.locator(".step .source").all_inner_texts()
    assert any(s.startswith("played by u_") for s in sources) and any(s.startswith("AI move by random") for s in sources)
    shot(page, "replay-end")
    # Every kind of game replays to its end.
    for kind, gid in w.ai.items():
        page.goto(site.link() + f"game/{gid}")
        expect(page.locator("h1")).to_contain_text(kind)
        expect(page.locator(".refused")).to_have_count(0)
        page.click("#last")
        expect(page.locator("#outcome")).to_be_visible()
    assert _snapshot(w.path) == before, "reading the site changed nothing"


def test_a_leaderboard_links_each_match_to_its_replay(site: Site, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto(site.link())
    page.click("text=Tournaments")
    page.locator("ul.tournaments a").first.click()
    expect(page.locator("table.board tbody tr")).to_have_count(2)
    expect(page.locator("table.board")).to_contain_text("random:b")
    expect(page.locator("svg.chart circle")).to_have_count(2)
    matches = page.locator("a.match")
    expect(matches).to_have_count(4)
    shot(page, "leaderboard")
    matches.first.click()
    expect(page.locator("h1")).to_contain_text("spy (classic)")
    expect(page.locator(".step .source").nth(1)).to_contain_text("AI move by random")


def test_the_clue_report_explains_each_clue(site: Site, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    gid = site.world.ai["chameleon"]
    page.goto(site.link() + f"game/{gid}")
    page.click("text=Clue report")
    rows = page.locator("table.clues tbody tr")
    assert rows.count() >= 3
    expect(rows.first).to_contain_text("embed:minilm")
    expect(rows.first).to_contain_text("SoftScore")
    shot(page, "clues")
    page.goto(site.link() + f"game/{site.world.ai['spy']}/clues")
    expect(page.locator(".empty")).to_contain_text("No clue report")


def test_spectators_see_only_public_lines_and_the_study_is_for_admins(site: Site, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    w = site.world
    page.goto(site.link() + f"live/{w.ai['spy']}")
    expect(page.locator("h1")).to_contain_text("spy")
    text = page.locator("#public").inner_text()
    assert "Your word is" not in text, "a spectator never sees a private line"
    expect(page.locator("main")).to_contain_text("see the replay")
    page.goto(site.link(admin=True) + "study")
    expect(page.locator("h1")).to_contain_text("Human study")
    assert w.study_items >= 2
    items = sum(int(t) for t in page.locator("table.study tbody td:nth-child(2)").all_inner_texts())
    answers = sum(int(t) for t in page.locator("table.study tbody td:nth-child(4)").all_inner_texts())
    assert items == w.study_items and answers == 1
    shot(page, "study")
    page.goto(site.link(OTHER, admin=True) + "study")
    expect(page.locator(".empty")).to_contain_text("no items")  # another tenant's clues are not its study
    resp = page.goto(site.link() + "study")
    assert resp is not None and resp.status == 404


def test_what_a_link_does_not_reach_is_refused_and_nothing_changes(site: Site, page: object) -> None:
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    w = site.world
    before = _snapshot(w.path)
    mine = site.link()

    def refused(url: str, status: int) -> str:
        resp = page.goto(url)
        assert resp is not None and resp.status == status, (url, resp and resp.status)
        body = page.content()
        assert page.locator(".refused").count() == 1
        return body

    # A running game: neither its replay, its clue report nor (people sit at it) a spectator page.
    for path in (f"game/{w.running}", f"game/{w.running}/clues", f"live/{w.running}"):
        body = refused(mine + path, 404)
        assert not any(s in body for s in w.running_secrets)
    # Another tenant's game, and ids that do not exist, answer the same.
    for path in (f"game/{w.other}", f"live/{w.other}", "game/999999", "game/-1", "game/x", "tournament/999",
                 "game/99999999999999999999999"):
        refused(mine + path, 404)
    theirs = site.link(OTHER)
    for gid in (w.people, w.ai["spy"]):
        refused(theirs + f"game/{gid}", 404)
    refused(theirs + f"tournament/{w.tournament}", 404)
    page.goto(theirs)
    assert _ids(page) == {w.other}
    # A link for one game reaches that game only.
    one = site.link(game=w.ai["decrypto"])
    page.goto(one)
    assert page.url.endswith(f"/game/{w.ai['decrypto']}")
    refused(one + f"game/{w.ai['spy']}", 404)
    refused(one + "tournaments", 404)
    # Expired, altered, truncated, made-up links.
    refused(site.link(hours=1, now=time.time() - 7200), 403)
    token = mine.split("/s/")[1].rstrip("/")
    body, _, mac = token.partition(".")
    flipped = mac[:-2] + ("A" if mac[-2] != "A" else "B") + mac[-1]
    refused(f"{site.base}/s/{body}.{flipped}/", 403)
    forged = links.make(b"another key" * 4, TENANT)
    refused(f"{site.base}/s/{forged}/", 403)
    refused(f"{site.base}/s/{body}/", 403)
    refused(f"{site.base}/s/nonsense/game/{w.people}", 403)
    refused(f"{site.base}/", 404)
    shot(page, "refused")
    assert _snapshot(w.path) == before


def test_the_link_command_prints_one_link_per_tenant(site: Site) -> None:
    env = {**os.environ, "HUSHTABLE_DATABASE_URL": site.world.url}
    out = subprocess.run([sys.executable, "-m", "bot.cli", "web", "link", "--port", site.base.rsplit(":", 1)[1]],
                         env=env, capture_output=True, text=True, timeout=120, cwd=site.world.path.parent)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [ln.split(": ")[0] for ln in lines] == [TENANT, OTHER]
    token = lines[0].split("/s/")[1].rstrip("/")
    scope = links.verify(site.key, token)
    assert scope.tenant == TENANT and scope.admin and 23 * 3600 < scope.expires - time.time() <= 24 * 3600
    bad = subprocess.run([sys.executable, "-m", "bot.cli", "web", "link", "--game", "424242"], env=env,
                         capture_output=True, text=True, timeout=120, cwd=site.world.path.parent)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[0] == "error: no game #424242"
