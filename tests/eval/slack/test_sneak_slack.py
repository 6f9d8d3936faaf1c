"""The SNEAK clue report and /hushtable sneak through the real Bolt app and the fake Slack."""

from __future__ import annotations

import asyncio

from bot.core.messages import Place
from models.eval.decoys import FixedDecoys
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.live import score_games
from models.worker.embedding_backend import embedder_for
from tests.bot.slack.conftest import Stack
from tests.bot.slack.fake_slack import TEAM
from tests.eval.logging_helpers import log_random_game

CHANNEL, ADA, BO = "CGAMES", "UADA", "UBO"


async def test_clue_report_is_posted_after_the_result(stack: Stack) -> None:
    st = stack
    gid = await st.service.ai_tables.open_ai_table(tenant=f"slack:{TEAM}", place=Place("slack", CHANNEL), game="chameleon",
                                         variant="sneak", options={}, agents=["random"] * 4, seed=4)
    assert await st.service.ai_tables.wait_finished(gid) is not None
    for _ in range(200):
        await st.idle()
        texts = [str(m.get("text") or "") + str(m.get("blocks") or "") for m in st.fake.methods("chat.postMessage")]
        if any("SNEAK clue report" in t for t in texts):
            break
        await asyncio.sleep(0.05)
    report = next(i for i, t in enumerate(texts) if "SNEAK clue report" in t)
    assert any("Game over" in t for t in texts[:report])
    clues = [a.value[0] for a in (await st.store.load_game(gid)).actions if a.kind == "clue"]
    assert all(c in texts[report] for c in clues)


async def test_hushtable_sneak_answers_my_averages_only_to_me(stack: Stack) -> None:
    st = stack
    await log_random_game(st.store, "chameleon", "sneak", 4, seed=6, humans=(0,), agent="embed:minilm",
                          platform="slack", user_keys={0: f"slack:{ADA}"}, tenant=f"slack:{TEAM}")
    await score_games(st.store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")],
                      FixedDecoys(["outdoors", "everyday", "colourful", "household", "popular", "classic"]))
    assert await st.sim.command(ADA, CHANNEL, "sneak") == 200
    assert await st.sim.command(BO, CHANNEL, "sneak") == 200
    for _ in range(200):
        await st.idle()
        if len(st.fake.responses) >= 2:
            break
        await asyncio.sleep(0.02)
    answers = st.fake.responses[:2]
    assert all(r["response_type"] == "ephemeral" for r in answers)
    (mine,) = [r for r in answers if "Your SNEAK averages" in r["text"]]  # Ada played and was scored
    assert "embed:minilm: utility" in mine["text"]
    assert sum("No scored clues" in r["text"] for r in answers) == 1  # Bo has none, and sees nobody else's
