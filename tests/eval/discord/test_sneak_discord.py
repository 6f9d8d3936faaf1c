"""The SNEAK clue report and /sneak through the real bot and the fake Discord."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.core.messages import Place
from models.eval.decoys import FixedDecoys
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.live import score_games
from models.worker.embedding_backend import embedder_for
from tests.bot.discord.conftest import Harness
from tests.eval.logging_helpers import log_random_game


async def test_clue_report_is_posted_after_the_result(harness: Harness) -> None:
    fake = harness.fake
    assert harness.service is not None and harness.store is not None
    place = Place("discord", str(fake.channel_id))
    gid = await harness.service.ai_tables.open_ai_table(tenant=f"discord:{fake.guild_id}", place=place, game="chameleon",
                                              variant="sneak", options={}, agents=["random"] * 4, seed=2)
    assert await harness.service.ai_tables.wait_finished(gid) is not None
    for _ in range(100):
        await harness.idle()
        texts = [str(m.get("content") or "") + str(m.get("embeds") or "") for m in fake.messages.values()]
        if any("SNEAK clue report" in t for t in texts):
            break
        await asyncio.sleep(0.05)
    report = next(t for t in texts if "SNEAK clue report" in t)
    over = next(i for i, t in enumerate(texts) if "Game over" in t)
    assert over < texts.index(report)  # the result first, then the report
    clues = [a.value[0] for a in (await harness.store.load_game(gid)).actions if a.kind == "clue"]
    assert all(c in report for c in clues) and "Best SoftScore" in report


async def test_slash_sneak_answers_my_averages_only_to_me(harness: Harness) -> None:
    fake = harness.fake
    assert harness.store is not None and harness.service is not None
    uid = fake.add_member(name="ada")
    gid, _ = await log_random_game(harness.store, "chameleon", "sneak", 4, seed=6, humans=(0,), agent="embed:minilm",
                                   platform="discord", user_keys={0: f"discord:{uid}"},
                                   tenant=f"discord:{fake.guild_id}")
    await score_games(harness.store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")],
                      FixedDecoys(["outdoors", "everyday", "colourful", "household", "popular", "classic"]))
    cmd = next(c for c in fake.commands if c["name"] == "sneak")
    data: dict[str, Any] = {"id": cmd["id"], "name": "sneak", "type": 1}
    ix = await fake._interact(uid, fake.channel_id, 2, data)
    await asyncio.wait_for(ix.done.wait(), 30)
    assert ix.ephemeral and "Your SNEAK averages" in ix.text and "embed:minilm: utility" in ix.text
    other = fake.add_member(name="bo")
    ix2 = await fake._interact(other, fake.channel_id, 2, data)
    await asyncio.wait_for(ix2.done.wait(), 30)
    assert ix2.ephemeral and "No scored clues" in ix2.text
