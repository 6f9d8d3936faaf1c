"""Write a whole simulated game into a real Store, the way the TableService logs one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import games
from games.base import Result
from games.play import play_random
from models.types import Inference, InferenceError
from storage.store import ActionRecord, EventRecord, SeatRecord, Store
from storage.tables import ActionSource, GameStatus, SeatKind

if TYPE_CHECKING:
    from bot.core.service import TableService
    from bot.sneak import SneakService


async def no_models(spec: str) -> Inference:
    raise InferenceError("the chat tests use the embedding evaluator only")


def chat_sneak(store: Store, service: TableService) -> SneakService:
    """The SNEAK service as the startup point makes it for a chat bot (MiniLM's evaluator, no language
    model): it reports after each of ``service``'s games, and the adapter is handed it."""
    from bot.sneak import SneakService
    from models.worker.embedding_backend import embedder_for

    return SneakService(store, client_for=no_models, embedder_for=embedder_for, evaluators=["embed:minilm"]).attach(service.ai_tables)


async def log_random_game(
    store: Store, game: str, variant: str, seats: int, seed: int, *, humans: Sequence[int] = (0,),
    agent: str = "llm:default", options: dict[str, Any] | None = None, platform: str = "console", place: str = "tty",
    user_keys: dict[int, str] | None = None, tenant: str | None = None, host: str | None = None,
    lobby: dict[str, Any] | None = None,
) -> tuple[int, Result | None]:
    """Play ``game`` with random moves and log it: seats in ``humans`` are people (user key
    ``platform:user<seat>`` unless ``user_keys`` names it), the rest ``agent``."""
    keys = {s: (user_keys or {}).get(s, f"{platform}:user{s}") for s in humans}
    engine = games.get(game)
    cfg = engine.make_config(variant, **(options or {}))
    pt = play_random(engine, cfg, seats, seed)
    gid = await store.create_game(game=engine.id, variant=cfg.variant, config={}, platform=platform, place=place,
                                  place_name="", host=host or f"{platform}:host", lobby=lobby or {},
                                  tenant=tenant or platform)
    assert gid is not None
    from games.base import config_to_dict

    roster = [
        SeatRecord(s, SeatKind.HUMAN, f"Human {s}", user_key=keys[s]) if s in humans
        else SeatRecord(s, SeatKind.AI, f"AI {s}", agent_spec=agent)
        for s in range(seats)
    ]
    state, deal = engine.new(cfg, seats, seed)
    await store.start_game(gid, seed=seed, config=config_to_dict(cfg), seats=roster,
                           events=[EventRecord.of(e) for e in deal], rules_version="test")
    for i, (seat, action) in enumerate(pt.actions):
        state, evs = engine.apply(state, seat, action)
        human = seat in humans
        await store.append_turn(
            gid,
            action=ActionRecord.of(seat, action, source=ActionSource.HUMAN if human else ActionSource.AI,
                                   actor=keys[seat] if human else agent),
            events=[EventRecord.of(e) for e in evs],
            inbound_key=f"{gid}:{i}",
        )
    result = engine.result(state)
    await store.finish_game(gid, status=GameStatus.FINISHED, result=result.to_json() if result else None)
    return gid, result
