"""The SNEAK human study through /judge: scripted members on the real bot and the fake Discord."""

from __future__ import annotations

import re

from models.eval.decoys import FixedDecoys
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.live import score_games
from models.eval.study import study_report
from models.worker.embedding_backend import embedder_for
from tests.bot.discord.conftest import Harness
from tests.eval.logging_helpers import log_random_game


async def test_five_members_judge_each_item_and_see_their_running_score(harness: Harness) -> None:
    fake = harness.fake
    assert harness.store is not None and harness.service is not None
    player = fake.add_member(name="ada")
    await log_random_game(harness.store, "chameleon", "sneak", 4, seed=6, humans=(0,), agent="random",
                          platform="discord", user_keys={0: f"discord:{player}"}, tenant=f"discord:{fake.guild_id}")
    await score_games(harness.store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")],
                      FixedDecoys(["outdoors", "everyday", "colourful", "household", "popular", "classic"]))
    mine = await fake.slash(player, "judge")
    assert mine.ephemeral and mine.text.startswith("No item to judge right now")  # she played that game
    members = [fake.add_member(name=f"m{k}") for k in range(6)]
    answers = {m: 0 for m in members}
    for m in members:
        ix = await fake.slash(m, "judge")
        while "Answer with the option's number: judge 1-" in ix.text:
            assert ix.ephemeral
            n = len(re.findall(r"^\d+\. ", ix.text, re.M))
            bad = await fake.slash(m, "judge", answer=n + 1)
            assert bad.ephemeral and bad.text == f"Answer with the option's number, from 1 to {n}; nothing was recorded."
            ix = await fake.slash(m, "judge", answer=1)
            answers[m] += 1
            assert "Your score: " in ix.text and f"of {answers[m]} right" in ix.text
    # Three informed clues, an ally and a chameleon item each: five members judged all six, the sixth had none.
    assert list(answers.values()) == [6, 6, 6, 6, 6, 0]
    report = await study_report(harness.store)
    assert "ally" in report and "chameleon" in report and "embed:minilm" in report
    assert re.search(r"ally\s+3\s+3\s+15", report) and re.search(r"chameleon\s+3\s+3\s+15", report)
