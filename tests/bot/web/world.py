"""A real bot database for the web view's tests: games of all five kinds played by the real table
service into a SQLite file, one with people (pseudonymised on the pages), one still running (its
secrets must stay hidden), another tenant's game, a tournament played by the runner, and a clue
report scored by the real SNEAK evaluator."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

import games
from bot.core.messages import Command, CommandKind, Place, UserRef
from bot.tournaments import manage
from bot.tournaments.runner import TournamentRunner
from games.catalog import descriptors
from storage.export import pseudonym
from storage.export_secret import export_secret
from storage.store import Store
from tests.bot.core.conftest import make_harness
from tests.tournaments.agents import open_service, spec

TENANT, OTHER = "discord:1", "discord:2"
KINDS = tuple(d.id for d in descriptors())  # every game of the catalog
# The two people, by display names no deck holds (a card's word such as the hairstyle "Bob" is shown on a finished
# game's page, so a real first name could be found there without any leak of who played).
ALICE, BOB = UserRef("memory", "100", "Zqalicex"), UserRef("memory", "200", "Zqbobx")
DECOYS = ["outdoors", "everyday", "colourful", "household", "popular", "classic"]


@dataclass
class World:
    url: str
    path: Path
    ai: dict[str, int] = field(default_factory=dict)  # game kind -> an AI-only finished game of TENANT
    people: int = 0  # a finished chameleon game with two people and two AI seats
    running: int = 0  # a started game with people, still running: its secrets are never served
    running_secrets: list[str] = field(default_factory=list)
    other: int = 0  # OTHER tenant's finished game
    tournament: int = 0
    alice: str = ""  # Alice's export pseudonym
    study_items: int = 0


async def build(folder: Path, *, clues: bool = True) -> World:
    path = folder / "hush.db"
    url = f"sqlite+aiosqlite:///{path}"
    w = World(url, path)
    h = await make_harness(url)
    ids = iter(range(1, 10_000))

    async def send(kind: CommandKind, user: UserRef, place: Place, **args: object) -> None:
        reply = await h.service.handle(Command(kind, user, place, dict(args), inbound_id=f"w{next(ids)}", tenant=TENANT))
        assert reply.ok, reply.text

    try:
        for i, kind in enumerate(KINDS):
            engine = games.get(kind)
            cfg = engine.make_config(None)
            n = engine.seat_range(cfg)[0]
            w.ai[kind] = await h.service.ai_tables.open_ai_table(tenant=TENANT, place=Place("memory", f"ai-{kind}"), game=kind,
                                                       variant=str(cfg.variant), options={}, agents=["random"] * n,
                                                       seed=100 + i, spectate=False)
        w.other = await h.service.ai_tables.open_ai_table(tenant=OTHER, place=Place("memory", "elsewhere"), game="chameleon",
                                                variant="classic", options={}, agents=["random"] * 4, seed=7,
                                                spectate=False)
        await asyncio.wait_for(asyncio.gather(*(h.service.ai_tables.wait_finished(g) for g in [*w.ai.values(), w.other])), 120)
        # A game with people: created, joined, filled with AI seats, played to its end.
        here = Place("memory", "people")
        await send(CommandKind.CREATE, ALICE, here, game="chameleon")
        await send(CommandKind.JOIN, BOB, here)
        await send(CommandKind.ADD_AI, ALICE, here, agent="random", count=2)
        await send(CommandKind.START, ALICE, here)
        row = await h.store.lobby_at("memory", here.key)
        assert row is not None and row.id is not None
        w.people = row.id
        await h.play_humans()
        # A game that is still running when the site is read.
        there = Place("memory", "running")
        await send(CommandKind.CREATE, ALICE, there, game="spy")
        await send(CommandKind.JOIN, BOB, there)
        await send(CommandKind.ADD_AI, ALICE, there, agent="random", count=2)
        await send(CommandKind.START, ALICE, there)
        await h.service.wait_idle()
        row = await h.store.lobby_at("memory", there.key)
        assert row is not None and row.id is not None and row.status == "running"
        w.running = row.id
        table = h.service.tables[w.running]
        w.running_secrets = [s.value for s in table.engine.secrets(table.state)]
    finally:
        await h.close()
    async with open_service(url) as b:
        w.tournament = await manage.create(b.service, TENANT, spec(game="spy", variant="classic",
                                           entrants=["random", "random:b"], seats=4, games_per_pairing=2, seed=5))
        await TournamentRunner(b.service, concurrency=2, rounds=50).run(w.tournament)
    store = await Store.open(url)
    try:
        w.alice = pseudonym(export_secret(store.plan), ALICE.key, tenant=TENANT)
        if clues:
            from models.eval.decoys import FixedDecoys
            from models.eval.evaluators import EmbeddingEvaluator
            from models.eval.live import score_games
            from models.worker.embedding_backend import embedder_for

            await score_games(store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")], FixedDecoys(DECOYS),
                              game_id=w.ai["chameleon"])
            # The study's items come from those judgements; one member answers one item.
            from models.eval.study import HumanStudy
            from storage import annotations

            w.study_items = await HumanStudy(store, ["embed:minilm"]).refresh()
            served = await annotations.serve(store, BOB.key, annotations.Scope(TENANT, None), per_item=3)
            assert served is not None
            assert await annotations.answer(store, BOB.key, 0, True) == served.key
    finally:
        await store.aclose()
    return w
