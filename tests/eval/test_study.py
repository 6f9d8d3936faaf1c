"""The SNEAK human study with scripted members on a real SQLite log: items from scored clues, five
different members per item, never a player of that game, bad answers recording nothing."""

from __future__ import annotations

import re
from pathlib import Path

from models.eval.decoys import FixedDecoys
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.human import Item, Task
from models.eval.live import score_games
from models.eval.study import HumanStudy, study_report
from models.worker.embedding_backend import embedder_for
from storage import annotations as notes
from storage.annotations import Scope
from storage.people import set_research
from storage.store import Store
from tests.eval.logging_helpers import log_random_game

CONSOLE = Scope("console", None, operator=True)  # the operator's CLI

DECOYS = FixedDecoys(["outdoors", "everyday", "colourful", "household", "popular", "classic"])


def options(text: str) -> int:
    """How many numbered options an item shows."""
    return len(re.findall(r"^\d+\. ", text, re.M))


async def scored_game(store: Store, seed: int, player: str) -> int:
    gid, _ = await log_random_game(store, "chameleon", "sneak", 4, seed=seed, humans=(0,), agent="random",
                                   user_keys={0: player}, tenant="console")
    await score_games(store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")], DECOYS, game_id=gid)
    await set_research(store, player, True)  # the study shows a member's clues only with their consent (opt-in)
    return gid


async def test_scripted_members_judge_items_five_times_each_never_their_own_game(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'log.db'}")
    try:
        gid = await scored_game(store, 3, "console:ada")
        study = HumanStudy(store, ["embed:minilm"])
        assert await study.refresh() > 0
        raw, _ = await notes.study(store)
        items = [Item.from_json(d) for d in raw]
        # Three informed clues (the chameleon's bluff is no item), each an ally and a chameleon item.
        assert {i.task for i in items} == {Task.ALLY, Task.CHAMELEON} and len(items) == 6
        assert all(i.game_id == gid and "embed:minilm" in i.probs for i in items)
        assert all(len(i.options) == (6 if i.task is Task.ALLY else 12) for i in items)
        # Ada played that game: nothing for her.
        assert (await study.turn("console:ada", CONSOLE)).startswith("No item to judge right now")
        members = [f"console:m{k}" for k in range(11)]
        answered: dict[str, int] = {}
        for m in members:
            text = await study.turn(m, CONSOLE)
            while text.startswith("SNEAK human study") or "Your score" in text:
                if "No item to judge" in text:
                    break
                n = options(text)
                # Bad input: one sentence, nothing recorded, the same item still open.
                bad = await study.turn(m, CONSOLE, "seven")
                assert bad == f"Answer with the option's number, from 1 to {n}; nothing was recorded."
                assert await study.turn(m, CONSOLE, str(n + 1)) == bad
                text = await study.turn(m, CONSOLE, "1")
                assert "Your score: " in text
                answered[m] = answered.get(m, 0) + 1
        # Every item got five answers; nobody answered both roles of one clue, so a member judges at most
        # one item per clue (three), and thirty answers need ten members: the eleventh found nothing left.
        assert [answered.get(m, 0) for m in members] == [3] * 10 + [0]
        _, votes = await notes.study(store)
        assert sorted(len(v) for v in votes.values()) == [5] * 6
        shown = await notes.shown(store)
        for m in members[:10]:
            clues = [notes.clue_of(k) for k in shown[m]]
            assert len(clues) == len(set(clues)) == 3
            # balanced between the roles: one role twice at most, the other at least once
            assert {k.rsplit(":", 1)[1] for k in shown[m]} == {"ally", "chameleon"}
        report = await study_report(store)
        assert "Table 6" in report and "embed:minilm" in report
    finally:
        await store.aclose()


async def notes_text(store: Store, member: str) -> str:
    from models.eval.human import running_score

    return running_score(await notes.record(store, member))


def test_the_console_judges_and_the_report_adds_benchmark_items(tmp_path: Path) -> None:
    import asyncio

    from typer.testing import CliRunner

    from bot.cli import app

    url = f"sqlite+aiosqlite:///{tmp_path / 'log.db'}"

    async def setup() -> None:
        store = await Store.open(url)
        try:
            await scored_game(store, 5, "console:ada")
        finally:
            await store.aclose()

    asyncio.run(setup())
    runner = CliRunner()
    res = runner.invoke(app, ["sneak", "human", "--add-bench", "2", "--database", url])
    assert res.exit_code == 0, res.output
    assert "added 4 benchmark item(s)" in res.output and "Table 6" in res.output and "Table 7" in res.output
    # At the console: one item, a bad answer (nothing recorded), an answer with the score, then stop.
    res = runner.invoke(app, ["sneak", "judge", "--member", "zed", "--database", url], input="nine\n2\n\n")
    assert res.exit_code == 0, res.output
    assert "SNEAK human study" in res.output and "nothing was recorded" in res.output
    assert "type N (1-" in res.output  # the console's own way to answer, not a chat command
    assert "Your score: " in res.output and "of 1 right" in res.output
    bad = runner.invoke(app, ["sneak", "judge", "--member", "ze d", "--database", url])
    assert bad.exit_code != 0 and "--member" in bad.output
    res = runner.invoke(app, ["sneak", "human", "--database", url])
    table6 = res.output.split("Table 6")[1].split("Table 7")[0]
    rows = [line.split() for line in table6.splitlines() if line.strip().startswith(("ally", "chameleon"))]
    assert sum(int(r[3]) for r in rows) == 1  # zed's one answer, counted once


async def test_the_console_and_chat_members_see_only_their_tenant_and_never_the_legacy_one(db_url: str) -> None:
    store = await Store.open(db_url)  # SQLite and PostgreSQL: each reads a place's channel its own way
    try:
        ev = [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")]
        at_console, _ = await log_random_game(store, "chameleon", "sneak", 4, seed=3, humans=(), agent="random",
                                              tenant="console", host="console:watcher")
        legacy, _ = await log_random_game(store, "chameleon", "sneak", 4, seed=4, humans=(), agent="random",
                                          platform="discord", place="C1")
        elsewhere, _ = await log_random_game(store, "chameleon", "sneak", 4, seed=5, humans=(), agent="random",
                                             platform="discord", place="C1", tenant="discord:9")
        from storage.tables import GameRow, table_of

        async with store.write() as conn:  # a game from before tenants
            import sqlalchemy as sa

            await conn.execute(sa.update(table_of(GameRow)).where(table_of(GameRow).c.id == legacy).values(tenant=""))
        await score_games(store, ev, DECOYS)
        study = HumanStudy(store, ["embed:minilm"])

        async def games_of(member: str, scope: notes.Scope) -> set[int]:
            text = await study.turn(member, scope)
            while "No item to judge" not in text:
                text = await study.turn(member, scope, "1")
            return {int(k.split(":")[1]) for k in (await notes.shown(store)).get(member, [])}

        # The operator's CLI: the console's games and those from before tenants, never a guild's.
        assert await games_of("console:op", CONSOLE) == {at_console, legacy}
        # The console game's host watched it: nothing from it, only the legacy game's clues.
        assert await games_of("console:watcher", CONSOLE) == {legacy}
        # A guild member who reads C1: that guild's game only; without C1, nothing; with no tenant, nothing.
        assert await games_of("discord:a", notes.Scope("discord:9", frozenset({"C1"}))) == {elsewhere}
        assert await games_of("discord:b", notes.Scope("discord:9", frozenset({"C2"}))) == set()
        assert await games_of("discord:c", notes.Scope(None)) == set()
    finally:
        await store.aclose()
