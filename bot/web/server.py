"""The web view's HTTP server: aiohttp routes rendering Jinja2 templates, nothing but GET.

Every page lives under ``/s/<token>/``: the token (``bot.web.links``) is checked on each request,
so a link works without cookies and stops working when it expires. A refusal is a plain page (403
for a bad or expired link, 404 for anything the link does not reach, whether it exists or not) and
changes nothing. Responses are never cached, send no referrer (the token is in the address) and may
load nothing from outside the site.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from datetime import date
from importlib.resources import files
from typing import Any

import jinja2
from aiohttp import web

from bot.web import views
from bot.web.links import LinkRefused, Scope, verify
from storage.ports import ExportSource

log = logging.getLogger(__name__)

HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "X-Robots-Tag": "noindex",
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
}


@dataclass(frozen=True)
class Site:
    """What the pages need: the log as an export reads it, the link key and the export key (for pseudonyms)."""

    store: ExportSource
    key: bytes
    secret: str


def _templates() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("bot.web", "data"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env


ENV = _templates()
SITE: web.AppKey[Site] = web.AppKey("site", Site)


def _page(name: str, status: int = 200, **ctx: Any) -> web.Response:
    html = ENV.get_template(name).render(**ctx)
    return web.Response(text=html, status=status, content_type="text/html", charset="utf-8", headers=HEADERS)


def _refusal(status: int, why: str) -> web.Response:
    return _page("refused.html", status, why=why)


def _scope(request: web.Request) -> Scope:
    try:
        return verify(request.app[SITE].key, request.match_info["token"])
    except LinkRefused as exc:
        raise web.HTTPForbidden(text=str(exc)) from None


def _int(request: web.Request, name: str) -> int:
    raw = request.match_info[name]
    if not raw.isdigit() or len(raw) > 18:
        raise views.NotShown(raw)
    return int(raw)


def _date(text: str | None) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


async def games_page(request: web.Request) -> web.Response:
    scope = _scope(request)
    site = request.app[SITE]
    if scope.game is not None:
        raise web.HTTPFound(f"/s/{request.match_info['token']}/game/{scope.game}")
    q = request.query
    f = views.Filters(q.get("game") or None, _date(q.get("since")), _date(q.get("until")), q.get("player") or None,
                      q.get("agent") or None)
    if q.get("mine") and scope.member:
        f = views.Filters(f.game, f.since, f.until, scope.member, f.agent)
    items = await views.game_list(site.store, scope, site.secret, f)
    import games

    return _page("games.html", scope=scope, token=request.match_info["token"], items=items, f=f,
                 game_ids=sorted(games.registry()),
                 mine=bool(q.get("mine")))


async def replay_page(request: web.Request) -> web.Response:
    scope = _scope(request)
    site = request.app[SITE]
    rep = await views.replay(site.store, scope, _int(request, "game"), site.secret)
    return _page("replay.html", scope=scope, token=request.match_info["token"], r=rep)


async def clues_page(request: web.Request) -> web.Response:
    scope = _scope(request)
    site = request.app[SITE]
    row, clues = await views.clue_report(site.store, scope, _int(request, "game"))
    return _page("clues.html", scope=scope, token=request.match_info["token"], row=row, clues=clues)


async def live_page(request: web.Request) -> web.Response:
    scope = _scope(request)
    site = request.app[SITE]
    lv = await views.live(site.store, scope, _int(request, "game"), site.secret)
    return _page("live.html", scope=scope, token=request.match_info["token"], lv=lv)


async def tournaments_page(request: web.Request) -> web.Response:
    scope = _scope(request)
    if scope.game is not None:
        raise views.NotShown(0)
    site = request.app[SITE]
    return _page("tournaments.html", scope=scope, token=request.match_info["token"],
                 items=await views.tournament_list(site.store, scope))


async def board_page(request: web.Request) -> web.Response:
    scope = _scope(request)
    site = request.app[SITE]
    b = await views.board(site.store, scope, _int(request, "tournament"))
    return _page("board.html", scope=scope, token=request.match_info["token"], b=b)


async def study_page(request: web.Request) -> web.Response:
    scope = _scope(request)
    site = request.app[SITE]
    return _page("study.html", scope=scope, token=request.match_info["token"], tasks=await views.study(site.store, scope))


async def script(request: web.Request) -> web.Response:
    body = files("bot.web").joinpath("data", "replay.js").read_text(encoding="utf-8")
    return web.Response(text=body, content_type="text/javascript", headers=HEADERS)


async def style(request: web.Request) -> web.Response:
    body = files("bot.web").joinpath("data", "site.css").read_text(encoding="utf-8")
    return web.Response(text=body, content_type="text/css", headers=HEADERS)


async def nothing(request: web.Request) -> web.Response:
    return _refusal(404, "Nothing here: open the link you were given.")


@web.middleware
async def refusals(request: web.Request, handler: Any) -> web.StreamResponse:
    """Every refusal as a plain page; an unexpected failure is logged without the address (it holds the token)."""
    try:
        return await handler(request)  # type: ignore[no-any-return]
    except views.NotShown:
        return _refusal(404, "Nothing here for this link.")
    except web.HTTPForbidden as exc:
        return _refusal(403, exc.text or "This link is not valid.")
    except web.HTTPMethodNotAllowed:
        return _refusal(405, "This site is read-only.")
    except web.HTTPNotFound:
        return _refusal(404, "Nothing here: open the link you were given.")
    except web.HTTPException:
        raise
    except Exception as exc:  # noqa: BLE001 - one line in the log, a plain page for the reader
        log.error("web view: %s on %s %s", type(exc).__name__, request.method, request.match_info.route.name or "?")
        return _refusal(500, "Something went wrong; nothing was changed.")


def make_app(site: Site) -> web.Application:
    app = web.Application(middlewares=[refusals])
    app[SITE] = site
    r = app.router
    r.add_get("/s/{token}/", games_page, name="games")
    r.add_get("/s/{token}/game/{game}", replay_page, name="replay")
    r.add_get("/s/{token}/game/{game}/clues", clues_page, name="clues")
    r.add_get("/s/{token}/live/{game}", live_page, name="live")
    r.add_get("/s/{token}/tournaments", tournaments_page, name="tournaments")
    r.add_get("/s/{token}/tournament/{tournament}", board_page, name="board")
    r.add_get("/s/{token}/study", study_page, name="study")
    r.add_get("/static/replay.js", script, name="script")
    r.add_get("/static/site.css", style, name="style")
    r.add_get("/", nothing, name="root")
    return app


class WebServer:
    """The running site; ``port`` is the bound port (0 in tests picks a free one)."""

    def __init__(self, runner: web.AppRunner, host: str, port: int) -> None:
        self.runner = runner
        self.host = host
        self.port = port

    @classmethod
    async def start(cls, site: Site, *, host: str = "127.0.0.1", port: int = 0, sock: socket.socket | None = None) -> WebServer:
        runner = web.AppRunner(make_app(site), access_log=None)  # the access log would hold every token
        await runner.setup()
        where: web.BaseSite = web.SockSite(runner, sock) if sock is not None else web.TCPSite(runner, host, port)
        await where.start()
        bound = (sock or where._server.sockets[0]).getsockname()  # type: ignore[union-attr]
        log.info("web view on http://%s:%s", host, bound[1])
        return cls(runner, str(bound[0]), int(bound[1]))

    async def aclose(self) -> None:
        await self.runner.cleanup()
