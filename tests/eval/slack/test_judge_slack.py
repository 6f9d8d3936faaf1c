"""The SNEAK human study through /hushtable judge: scripted members on the real Bolt app and the fake Slack."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from models.eval.decoys import FixedDecoys
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.live import score_games
from models.eval.study import study_report
from models.worker.embedding_backend import embedder_for
from storage import annotations as notes
from storage.people import set_research
from tests.bot.slack.conftest import Stack
from tests.bot.slack.fake_slack import TEAM
from tests.eval.human_agreement_check import check_agreement_command, varied_answer
from tests.eval.logging_helpers import log_random_game

CHANNEL = "CGAMES"
DECOYS = FixedDecoys(["outdoors", "everyday", "colourful", "household", "popular", "classic"])


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


async def _judge_all(st: Stack, user: str) -> int:
    """The member answers 1 to every item shown; how many they answered."""
    answered = 0
    text = (await _say(st, user, "judge"))["text"]
    while "/hushtable judge N (1-" in text:
        text = (await _say(st, user, "judge 1"))["text"]
        answered += 1
    return answered


async def test_members_judge_each_item_five_times_never_both_roles_of_a_clue(stack: Stack) -> None:
    st = stack
    await log_random_game(st.store, "chameleon", "sneak", 4, seed=6, humans=(0,), agent="random",
                          platform="slack", place=CHANNEL, user_keys={0: "slack:UADA"}, tenant=f"slack:{TEAM}")
    await score_games(st.store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")], DECOYS)
    await set_research(st.store, "slack:UADA", True)  # her clue is shown to others only with her consent (opt-in)
    assert (await _say(st, "UADA", "judge"))["text"].startswith("No item to judge right now")  # she played it
    text = (await _say(st, "UM0", "judge"))["text"]
    n = len(re.findall(r"^\d+\. ", text, re.M))
    bad = (await _say(st, "UM0", "judge abc"))["text"]
    assert "nothing was recorded" in bad and f"from 1 to {n}" in bad
    answers = [await _judge_all(st, f"UM{k}") for k in range(11)]
    assert answers == [3] * 10 + [0]  # one role of each of three clues per member; ten fill 30 answers
    report = await study_report(st.store)
    assert re.search(r"ally\s+3\s+3\s+15", report) and re.search(r"chameleon\s+3\s+3\s+15", report)


async def test_items_stay_in_the_workspace_in_channels_the_member_is_in_away_from_its_watchers(stack: Stack) -> None:
    st = stack
    st.fake.channel_members["CSTAFF"] = {"UIN"}  # a private channel with one member
    tenant = f"slack:{TEAM}"
    staff, _ = await log_random_game(st.store, "chameleon", "sneak", 4, seed=6, humans=(), agent="random",
                                     platform="slack", place="CSTAFF/1700000000.000100", tenant=tenant)
    await log_random_game(st.store, "chameleon", "sneak", 4, seed=7, humans=(), agent="random",
                          platform="slack", place=CHANNEL, tenant="slack:TOTHER")
    watched, _ = await log_random_game(st.store, "chameleon", "sneak", 4, seed=8, humans=(), agent="random",
                                       platform="slack", place=CHANNEL, tenant=tenant, host="slack:UHOST")
    await score_games(st.store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")], DECOYS)
    assert await _judge_all(st, "UOUT") == 3
    assert await _judge_all(st, "UIN") == 6
    assert await _judge_all(st, "UHOST") == 0
    shown = await notes.shown(st.store)
    games = {who: {int(k.split(":")[1]) for k in keys} for who, keys in shown.items()}
    assert games == {"slack:UOUT": {watched}, "slack:UIN": {watched, staff}}
    # Without channels:read Slack lists nothing: no logged clue at all, and the member is told plainly.
    st.fake.scopes = [s for s in st.fake.scopes if s != "channels:read"]
    assert (await _say(st, "UNEW", "judge"))["text"].startswith("No item to judge right now")


async def test_the_agreement_command_compares_the_evaluator_with_the_members_answers(stack: Stack,
                                                                                       tmp_path: Path) -> None:
    st = stack
    for seed in (6, 7):  # two games, three informed clues each
        await log_random_game(st.store, "chameleon", "sneak", 4, seed=seed, humans=(), agent="random",
                              platform="slack", place=CHANNEL, tenant=f"slack:{TEAM}")
    await score_games(st.store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")], DECOYS)
    for k in range(10):  # each member judges one role of each of the six clues: ten fill every item
        text = (await _say(st, f"UM{k}", "judge"))["text"]
        turn = 0
        while "/hushtable judge N (1-" in text:
            n = len(re.findall(r"^\d+\. ", text, re.M))
            text = (await _say(st, f"UM{k}", f"judge {varied_answer(k, turn, n)}"))["text"]
            turn += 1
        assert turn == 6
    await check_agreement_command(st.store, st.settings.database_url, tmp_path / "agree", 6)
