"""The SNEAK human study through /judge: scripted members on the real bot and the fake Discord, within the
guild's games in channels each member can read, never a game they played or watched."""

from __future__ import annotations

import re
from pathlib import Path

from models.eval.decoys import FixedDecoys
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.live import score_games
from models.eval.study import study_report
from models.worker.embedding_backend import embedder_for
from storage import annotations as notes
from storage.people import set_research
from tests.bot.discord.conftest import Harness
from tests.bot.discord.fake_discord import FakeDiscord
from tests.eval.human_agreement_check import check_agreement_command, varied_answer
from tests.eval.logging_helpers import log_random_game

DECOYS = FixedDecoys(["outdoors", "everyday", "colourful", "household", "popular", "classic"])
VIEW = 1 << 10


async def _score(h: Harness) -> None:
    assert h.store is not None
    await score_games(h.store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")], DECOYS)


async def _judge_all(fake: FakeDiscord, m: int) -> int:
    """The member answers 1 to every item they are shown; how many they answered."""
    n_answered = 0
    ix = await fake.slash(m, "judge")
    while "Answer with the option's number: /judge answer:N (1-" in ix.text:
        assert ix.ephemeral
        ix = await fake.slash(m, "judge", answer=1)
        n_answered += 1
    return n_answered


async def test_members_judge_each_item_five_times_never_both_roles_of_a_clue(harness: Harness) -> None:
    fake = harness.fake
    assert harness.store is not None and harness.service is not None
    player = fake.add_member(name="ada")
    await log_random_game(harness.store, "chameleon", "sneak", 4, seed=6, humans=(0,), agent="random",
                          platform="discord", place=str(fake.channel_id), user_keys={0: f"discord:{player}"},
                          tenant=f"discord:{fake.guild_id}")
    await _score(harness)
    await set_research(harness.store, f"discord:{player}", True)  # her clue is shown to others only with her consent
    mine = await fake.slash(player, "judge")
    assert mine.ephemeral and mine.text.startswith("No item to judge right now")  # she played that game
    members = [fake.add_member(name=f"m{k}") for k in range(11)]
    ix = await fake.slash(members[0], "judge")
    n = len(re.findall(r"^\d+\. ", ix.text, re.M))
    bad = await fake.slash(members[0], "judge", answer=n + 1)
    assert bad.ephemeral and bad.text == f"Answer with the option's number, from 1 to {n}; nothing was recorded."
    answers = [await _judge_all(fake, m) for m in members]
    # Three informed clues, an ally and a chameleon item each, five answers per item: a member judges one
    # role of each clue (three items), so ten members fill them and the eleventh has none.
    assert answers == [3] * 10 + [0]
    report = await study_report(harness.store)
    assert re.search(r"ally\s+3\s+3\s+15", report) and re.search(r"chameleon\s+3\s+3\s+15", report)


async def test_items_stay_in_the_guild_in_channels_the_member_reads_away_from_its_watchers(harness: Harness) -> None:
    fake = harness.fake
    assert harness.store is not None
    tenant = f"discord:{fake.guild_id}"
    insider, outsider, host = (fake.add_member(name=n) for n in ("insider", "outsider", "host"))
    # A private channel: @everyone may not view it, the insider may.
    private = fake.snowflake()
    fake.channels[private] = {
        "id": str(private), "type": 0, "guild_id": str(fake.guild_id), "name": "staff", "position": 1,
        "permission_overwrites": [{"id": str(fake.guild_id), "type": 0, "allow": "0", "deny": str(VIEW)},
                                  {"id": str(insider), "type": 1, "allow": str(VIEW), "deny": "0"}],
        "nsfw": False, "parent_id": None, "topic": None, "last_message_id": None, "rate_limit_per_user": 0}
    await fake.dispatch("CHANNEL_CREATE", fake.channels[private])
    # A game in a thread of the private channel, one in another guild, one the host watched (an AI table).
    staff, _ = await log_random_game(harness.store, "chameleon", "sneak", 4, seed=6, humans=(), agent="random",
                                     platform="discord", place=f"{private}/{fake.snowflake()}", tenant=tenant)
    await log_random_game(harness.store, "chameleon", "sneak", 4, seed=7, humans=(), agent="random",
                          platform="discord", place=str(fake.channel_id), tenant="discord:1")
    watched, _ = await log_random_game(harness.store, "chameleon", "sneak", 4, seed=8, humans=(), agent="random",
                                       platform="discord", place=str(fake.channel_id), tenant=tenant,
                                       host=f"discord:{host}")
    await _score(harness)
    assert await _judge_all(fake, outsider) == 3  # the watched game's three clues, one role each
    assert await _judge_all(fake, insider) == 6  # and the private channel's
    assert await _judge_all(fake, host) == 0  # the public game is the one they watched, the private one hidden
    shown = await notes.shown(harness.store)
    games = {who: {int(k.split(":")[1]) for k in keys} for who, keys in shown.items()}
    assert games[f"discord:{outsider}"] == {watched}
    assert games[f"discord:{insider}"] == {watched, staff}
    assert f"discord:{host}" not in games
    # A direct message has no guild: only benchmark items, none here.
    dm = await fake.slash(outsider, "judge", channel_id=fake.dm_channel(outsider))
    assert dm.text.startswith("No item to judge right now")


async def test_the_agreement_command_compares_the_evaluator_with_the_members_answers(harness: Harness,
                                                                                       tmp_path: Path) -> None:
    fake = harness.fake
    assert harness.store is not None
    tenant = f"discord:{fake.guild_id}"
    for seed in (6, 7):  # two games, three informed clues each
        await log_random_game(harness.store, "chameleon", "sneak", 4, seed=seed, humans=(), agent="random",
                              platform="discord", place=str(fake.channel_id), tenant=tenant)
    await _score(harness)
    for k in range(10):  # each member judges one role of each of the six clues: ten fill every item
        m = fake.add_member(name=f"m{k}")
        ix = await fake.slash(m, "judge")
        turn = 0
        while "Answer with the option's number: /judge answer:N (1-" in ix.text:
            n = len(re.findall(r"^\d+\. ", ix.text, re.M))
            ix = await fake.slash(m, "judge", answer=varied_answer(k, turn, n))
            turn += 1
        assert turn == 6
    text = await check_agreement_command(harness.store, harness.settings.database_url, tmp_path / "agree", 6)
    assert "embed:minilm: " in text  # where it is far from people, or that it is nowhere
