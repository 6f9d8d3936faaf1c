"""`hushtable web`: serve the read-only site alone; `hushtable web link`: print signed links to it."""

from __future__ import annotations

import asyncio

import typer

app = typer.Typer(add_completion=False, invoke_without_command=True,
                  help="The read-only web view of finished games: serve it, or print a signed link.")


def _refuse(text: str) -> typer.Exit:
    typer.echo(f"error: {text}", err=True)
    return typer.Exit(2)


def _open_url(database: str | None) -> str:
    from bot.research.logbook import database_problem
    from bot.settings import Settings

    url = database or Settings().database_url
    problem = database_problem(url)
    if problem is not None:
        raise _refuse(problem)
    return url


@app.callback()
def serve(
    ctx: typer.Context,
    port: int | None = typer.Option(None, "--port", min=0, max=65535, help="Port (default: HUSHTABLE_WEB_PORT, else 8080)."),
    host: str | None = typer.Option(None, "--host", help="Address to listen on (default: HUSHTABLE_WEB_HOST, 127.0.0.1)."),
    database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
) -> None:
    """Serve the site alone until stopped (Ctrl-C)."""
    if ctx.invoked_subcommand is not None:
        return
    from bot.settings import Settings
    from bot.web.wiring import base_url, site_for
    from storage.export_secret import ExportSecretMissing
    from storage.store import Store

    settings = Settings()
    if host is not None:
        settings = settings.model_copy(update={"web_host": host})
    listen = port if port is not None else (settings.web_port if settings.web_port is not None else 8080)
    url = _open_url(database)

    async def go() -> None:
        from bot.web.server import WebServer

        store = await Store.open(url, create=False, must_exist=True)
        try:
            try:
                site = site_for(settings, store)
            except ExportSecretMissing as exc:
                raise _refuse(str(exc)) from None
            try:
                server = await WebServer.start(site, host=settings.web_host, port=listen)
            except OSError as exc:
                raise _refuse(f"cannot listen on {settings.web_host}:{listen} ({exc.strerror or type(exc).__name__}); "
                              "pick a free port with --port") from None
            typer.echo(f"web view on {base_url(settings, server.port)} (pages only through signed links: "
                       "`hushtable web link`); Ctrl-C stops it", err=True)
            try:
                await asyncio.Event().wait()
            finally:
                await server.aclose()
        finally:
            await store.aclose()

    try:
        asyncio.run(go())
    except KeyboardInterrupt:
        typer.echo("stopped", err=True)


@app.command("link")
def link_command(
    tenant: str | None = typer.Option(None, "--tenant", help="The tenant (discord:<guild>, slack:<team>, console); default: every tenant."),
    game: int | None = typer.Option(None, "--game", help="Only this game."),
    port: int | None = typer.Option(None, "--port", min=0, max=65535, help="The port the site listens on, for the address."),
    database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
) -> None:
    """Print signed links (an admin's: the tenant's games and the study) that expire after HUSHTABLE_WEB_LINK_HOURS."""
    from bot.settings import Settings
    from bot.web import links
    from bot.web.wiring import base_url, data_dir, link
    from storage.store import Store

    settings = Settings()
    url = _open_url(database)

    async def go() -> list[str]:
        store = await Store.open(url, create=False, must_exist=True)
        try:
            if game is not None:
                row = await store.game(game)
                if row is None or (tenant is not None and row.tenant != tenant):
                    raise _refuse(f"no game #{game}" + (f" in tenant {tenant!r}" if tenant is not None else ""))
                tenants = [row.tenant]
            elif tenant is not None:
                tenants = [tenant]
            else:
                tenants = sorted({r.tenant for r in await store.games()})
                if not tenants:
                    raise _refuse("the log holds no game yet: nothing to link to")
            key = links.signing_key(links.key_path(store.plan, data_dir(settings)))
            base = base_url(settings, port)
            return [f"{t or '(no tenant)'}: {link(settings, key, base, t, game=game, admin=True)}" for t in tenants]
        finally:
            await store.aclose()

    for line in asyncio.run(go()):
        typer.echo(line)
    typer.echo(f"each link expires in {settings.web_link_hours:g} h; anyone holding it can read what it shows", err=True)
