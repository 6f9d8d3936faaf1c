"""The SNEAK human study through /hushtable judge: scripted members on the real Bolt app and the fake Slack."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from models.eval.decoys import FixedDecoys
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.live import score_games
from models.eval.study import study_report
from models.worker.embedding_backend import embedder_for
from tests.bot.slack.conftest import Stack
from tests.bot.slack.fake_slack import TEAM
from tests.eval.logging_helpers import log_random_game

CHANNEL = "CGAMES"


async def _say(st: Stack, user: str, text: str) -> dict[str, Any]:
    before = len(st.fake.responses)
    assert await st.sim.command(user, CHANNEL, text) == 200
    for _ in range(400):
        await st.idle()
        if len(st.fake.responses) > before:
            break
        await asyncio.sleep(0.02)
    answer: dict[str, Any] = st.fake.responses[before]
    assert answer["response_type"] == "ephemeral"
    return answer


async def test_five_members_judge_each_item_and_see_their_running_score(stack: Stack) -> None:
    st = stack
    await log_random_game(st.store, "chameleon", "sneak", 4, seed=6, humans=(0,), agent="random",
                          platform="slack", user_keys={0: "slack:UADA"}, tenant=f"slack:{TEAM}")
    await score_games(st.store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")],
                      FixedDecoys(["outdoors", "everyday", "colourful", "household", "popular", "classic"]))
    assert (await _say(st, "UADA", "judge"))["text"].startswith("No item to judge right now")  # she played it
    members = [f"UM{k}" for k in range(6)]
    answers = {m: 0 for m in members}
    for m in members:
        text = (await _say(st, m, "judge"))["text"]
        while "Answer with the option&#39;s number: judge 1-" in text or "Answer with the option's number: judge 1-" in text:
            n = len(re.findall(r"^\d+\. ", text, re.M))
            bad = (await _say(st, m, "judge abc"))["text"]
            assert "nothing was recorded" in bad and f"from 1 to {n}" in bad
            text = (await _say(st, m, "judge 1"))["text"]
            answers[m] += 1
            assert "Your score: " in text and f"of {answers[m]} right" in text
    assert list(answers.values()) == [6, 6, 6, 6, 6, 0]
    report = await study_report(st.store)
    assert re.search(r"ally\s+3\s+3\s+15", report) and re.search(r"chameleon\s+3\s+3\s+15", report)
