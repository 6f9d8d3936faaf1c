"""Putting the web view together: its keys from the data folder, its address, its links."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

from bot.settings import Settings
from bot.web import links
from bot.web.server import Site, WebServer
from storage.export import pseudonym
from storage.export_secret import ExportSecretMissing, export_secret
from storage.store import Store

log = logging.getLogger(__name__)


def data_dir(settings: Settings) -> Path:
    """The ``.hushtable`` folder (the log folder's parent): where a server database's link key lives."""
    return Path(settings.log_dir).expanduser().parent


def site_for(settings: Settings, store: Store) -> Site:
    """The site over this store: the link key (made on first use) and the export key for pseudonyms.
    Raises ExportSecretMissing for a server database without HUSHTABLE_EXPORT_SECRET."""
    key = links.signing_key(links.key_path(store.plan, data_dir(settings)))
    return Site(store, key, export_secret(store.plan, settings.export_secret))


def base_url(settings: Settings, port: int | None = None) -> str:
    """Where people open the site: HUSHTABLE_WEB_URL, else the host and port it listens on."""
    if settings.web_url:
        return settings.web_url
    host = settings.web_host
    if host in ("0.0.0.0", "::", ""):
        host = socket.gethostname()
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port if port is not None else settings.web_port or 8080}"


def link(settings: Settings, key: bytes, base: str, tenant: str, *, game: int | None = None, member: str | None = None,
         admin: bool = False) -> str:
    """A signed address for this scope, valid for HUSHTABLE_WEB_LINK_HOURS."""
    token = links.make(key, tenant, hours=settings.web_link_hours, game=game, member=member, admin=admin)
    path = f"/game/{game}" if game is not None else "/"
    return f"{base}/s/{token}{path}"


async def start_web(settings: Settings, store: Store, sock: socket.socket | None = None) -> WebServer:
    """The site inside `hushtable run` (on ``sock`` when the start-up bound it already)."""
    return await WebServer.start(site_for(settings, store), host=settings.web_host, port=settings.web_port or 0, sock=sock)


class WebLinks:
    """What a chat command answers a member who asks for the site (``/hushtable web``): a link to their
    tenant's finished games with their own marked, and for admins the study too. The adapters hold one
    of these (None when the site is off) and show its answer to the member alone."""

    def __init__(self, settings: Settings, store: Store) -> None:
        self.settings = settings
        self.key = links.signing_key(links.key_path(store.plan, data_dir(settings)))
        self.secret = export_secret(store.plan, settings.export_secret)
        self.base = base_url(settings)

    def answer(self, tenant: str, user_key: str, *, admin: bool) -> str:
        url = link(self.settings, self.key, self.base, tenant, member=pseudonym(self.secret, user_key, tenant=tenant), admin=admin)
        scope = "this server's finished games, the ones you played marked" + (", and the study's progress" if admin else "")
        return (f"Your link to {scope}: {url}\nIt works for {self.settings.web_link_hours:g} h; "
                "anyone holding it can read what it shows, so keep it to yourself.")


def web_links(settings: Settings, store: Store) -> WebLinks | None:
    """The chat commands' link maker, or None when the site is not served (no port and no address set)."""
    if settings.web_port is None and not settings.web_url:
        return None
    try:
        return WebLinks(settings, store)
    except ExportSecretMissing as exc:  # a server database without the export key: no pseudonyms, no links
        log.warning("the web view's links are off: %s", exc)
        return None
