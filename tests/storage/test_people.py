"""A member's data out and a member erased, on SQLite and PostgreSQL: after ``forget`` neither
their words, their id nor their display name is left in the database's bytes (the WAL too) or in
any export; every game still replays to its outcome; another member's data is byte-identical."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

import games
from bot.core.privacy import finish_pending, forget, member_export
from bot.core.replays import record_of
from games.base import Action, Text, config_to_dict
from games.catalog import descriptors
from games.play import FILLER, random_turns
from games.record import replay_record
from storage import annotations as study
from storage import people
from storage.export import export_games
from storage.records import OutboxRecord
from storage.store import ActionRecord, AgentCallRecord, EventRecord, SeatRecord, Store
from storage.tables import ALL_TABLES, ActionSource, GameStatus, SeatKind, table_of

GAMES = tuple(d.id for d in descriptors())  # every game of the catalog
MEMBER, NAME = "discord:7770001234", "Zelda Quorn"
OTHER, OTHER_NAME = "discord:8880005678", "Bob"
LONER, LONER_NAME = "discord:9990004321", "Yorick Plumb"
# Words nobody else writes and no deck holds: one per field the member fills in a turn.
UNIQUE = ("zorblaxian", "quexiform", "vrombulate", "plinxter", "glorpwise", "snarfidel", "wubbledorn", "crimbolix")
LONER_WORDS = ("mirthquake", "fennorath", "dribbleton")


def _member_text(spec: Text, step: int, words: tuple[str, ...], r: random.Random) -> Action:
    out = []
    for i, _ in enumerate(spec.fields):
        w = words[(step + i) % len(words)]
        out.append(w if spec.max_words == 1 else f"{w} {r.choice(FILLER)}")
    return Action(spec.kind, tuple(out))


async def log_game(store: Store, game_id: str, seed: int, humans: tuple[tuple[str, str, tuple[str, ...]], ...],
                   *, finish: bool = True) -> tuple[int, Any]:
    """Play a real engine: the humans write their own words, the rest at random; logged as the bot does,
    with the messages sent (quoting texts and names), AI prompts (quoting the table so far) and the lobby."""
    game = games.get(game_id)
    cfg = game.make_config()
    n = game.seat_range(cfg)[0]
    seats = [SeatRecord(i, SeatKind.HUMAN, humans[i][1], user_key=humans[i][0]) if i < len(humans)
             else SeatRecord(i, SeatKind.AI, f"AI-{i}", agent_spec="random") for i in range(n)]
    lobby = {"seats": [{"kind": "human", "user": {"platform": "discord", "user_id": k.split(":")[1], "name": nm}}
                       for k, nm, _ in humans]}
    gid = await store.create_game(game=game.id, variant=cfg.variant, config=config_to_dict(cfg), platform="discord",
                                  place="chan-1", place_name="#games", host=humans[0][0], lobby=lobby,
                                  tenant="discord:guild")
    assert gid is not None
    state, deal = game.new(cfg, n, seed)
    await store.start_game(gid, seed=seed, config=config_to_dict(cfg), seats=seats,
                           events=[EventRecord.of(e) for e in deal], rules_version=f"{game.id}/1")
    said: list[str] = []

    def own_words(seat: int, spec: Text, r: random.Random, step: int, attempt: int) -> Action | None:
        return _member_text(spec, step + attempt, humans[seat][2], r) if seat < len(humans) else None

    for turn in random_turns(game, state, seed, salt="people", max_steps=2000, write=own_words):
        state, seat, action, step = turn.state, turn.seat, turn.action, turn.step
        human = seat < len(humans)
        said += list(action.value)
        body = {"text": f"{seats[seat].display_name} said: {' / '.join(action.value)}", "to": f"<@{seat}>"}
        calls = [] if human else [AgentCallRecord(seat, "random", prompt=[{"role": "user", "content": "So far: " + ", ".join(said)}],
                                                  raw_output=" ".join(action.value))]
        ok = await store.append_turn(gid, action=ActionRecord.of(seat, action, source=ActionSource.HUMAN if human else ActionSource.AI,
                                                                 actor=humans[seat][0] if human else "random"),
                                     events=[EventRecord.of(e) for e in turn.events], inbound_key=f"discord:ev-{gid}-{step}",
                                     agent_calls=calls, outbox=[OutboxRecord(f"{gid}:{step}", None, body)])
        assert ok
        if not finish and step >= 3 and game.to_act(state):
            return gid, None
    result = game.result(state)
    assert result is not None
    if finish:
        await store.finish_game(gid, status=GameStatus.FINISHED, result=result.to_json())
    return gid, result.to_json()


async def dump(store: Store) -> str:
    """Every row of every table, as text (what a byte search of a server database reads)."""
    out = []
    async with store.connect() as conn:
        for model in ALL_TABLES:
            table = table_of(model)
            for row in (await conn.execute(sa.select(table))).all():
                out.append(repr(tuple(row)))
    return "\n".join(out)


async def exports(store: Store, folder: Path) -> bytes:
    """Every export format's bytes: JSONL and CSV, pseudonymised and raw, and Parquet."""
    from bot.research.parquet import export_parquet

    parts = []
    for fmt in ("jsonl", "csv"):
        for pseudo in (True, False):
            buf = io.StringIO()
            await export_games(store, out=buf, fmt=fmt, pseudonymise=pseudo, secret="k")
            parts.append(buf.getvalue().encode())
    folder.mkdir(exist_ok=True)
    await export_parquet(store, folder, pseudonymise=False, secret="k")
    parts += [p.read_bytes() for p in sorted(folder.iterdir())]
    return b"\n".join(parts)


def db_bytes(store: Store) -> bytes:
    path = store.plan.sqlite_file
    assert path is not None
    return b"".join(p.read_bytes() for p in path.parent.iterdir() if p.name.startswith(path.name))


async def test_forget_leaves_no_word_id_or_name_and_every_game_replays(store: Store, tmp_path: Path) -> None:
    played: dict[int, Any] = {}
    for i, g in enumerate(GAMES):
        gid, result = await log_game(store, g, 100 + i, ((MEMBER, NAME, UNIQUE), (OTHER, OTHER_NAME, ("plainword",))))
        played[gid] = result
    loner_gid, _ = await log_game(store, "spy", 7, ((LONER, LONER_NAME, LONER_WORDS),))
    # A study item quoting the member's clue (judged by the loner), and the member's own study answer.
    first = min(played)
    await study.add_items(store, [
        study.NewItem("log:1", "ally", "log", first, "discord:guild", {"clue": UNIQUE[0], "by": NAME}, author=MEMBER),
        study.NewItem("bench:1", "ally", "bench", None, "", {"clue": "bench clue"})])
    served = await study.serve(store, MEMBER, study.Scope("discord:guild"), per_item=3)
    assert served is not None and served.key == "bench:1"
    assert await study.answer(store, MEMBER, 1, True) == "bench:1"
    await people.audit(store, actor="cli:op", action="export", scope="all games", rows=6)

    before = await exports(store, tmp_path / "before")
    assert b"zorblaxian" in before and NAME.encode() in before  # the raw export carries them before
    mine = json.loads(await member_export(store, MEMBER, actor=MEMBER))
    assert mine["member"] == MEMBER and len(mine["games"]) == len(GAMES)
    assert any("zorblaxian" in " ".join(a["value"]) for g in mine["games"] for a in g["actions"])
    assert [(a["item"], a["choice"]) for a in mine["study_answers"]] == [("bench:1", 1)]
    [item] = mine["study_items_from_my_moves"]  # the study's question made from the member's clue, not its answers
    assert (item["item"], item["game"], item["question"]["clue"], item["answers"]) == ("log:1", first, UNIQUE[0], 0)
    assert json.loads(await member_export(store, OTHER, actor="cli:op"))["study_items_from_my_moves"] == []
    loner_before = await member_export(store, LONER, actor="cli:op")
    other_before = json.loads(await member_export(store, OTHER, actor="cli:op"))

    report = await forget(store, MEMBER, actor=MEMBER)
    assert sorted(report.erased) == sorted(played) and not report.waiting and not report.not_replaying
    assert report.scrubbed

    # Every game replays to the same outcome.
    for gid, result in played.items():
        log = await store.load_game(gid)
        _, _, again = replay_record(record_of(log))
        assert again is not None and again.to_json() == log.row.result, gid
        assert (again.to_json()["winners"], again.to_json()["scores"]) == (result["winners"], result["scores"]), gid
        assert all(s.user_key != MEMBER for s in log.seats)

    secrets_ = [*UNIQUE, MEMBER, MEMBER.split(":")[1], NAME]
    after = await exports(store, tmp_path / "after")
    text = await dump(store)
    for s in secrets_:
        assert s.encode() not in after, s
        assert s not in text, s
    if store.plan.sqlite_file is not None:
        raw = db_bytes(store)
        for s in secrets_:
            assert s.encode() not in raw, s

    assert await study.record(store, MEMBER) == []  # study answers removed

    # Others untouched: the loner's export is byte-identical, the other member keeps their words.
    assert await member_export(store, LONER, actor="cli:op") == loner_before
    other_after = json.loads(await member_export(store, OTHER, actor="cli:op"))
    assert [a["value"] for g in other_after["games"] for a in g["actions"]] == \
        [a["value"] for g in other_before["games"] for a in g["actions"]]
    assert any(w.encode() in after for w in LONER_WORDS) and LONER_NAME.encode() in after

    # The audit lists the requests and the erasure, with no subject left for the erased member.
    entries = await people.audit_log(store)
    actions = [e.action for e in entries]
    assert "erasure" in actions and "erasure done" in actions and "data export" in actions
    assert loner_gid not in report.erased


async def test_a_running_game_is_erased_when_it_ends(store: Store) -> None:
    gid, _ = await log_game(store, "spy", 3, ((MEMBER, NAME, UNIQUE),), finish=False)
    done, _ = await log_game(store, "chameleon", 4, ((MEMBER, NAME, UNIQUE),))
    report = await forget(store, MEMBER, actor="cli:op")
    assert report.erased == (done,) and report.waiting == (gid,)
    assert await people.pending_erasures(store) == [MEMBER]
    assert NAME in await dump(store)  # the running game keeps its seats while it runs
    await store.finish_game(gid, status=GameStatus.ABORTED, result=None)
    assert await finish_pending(store) == 1
    assert await people.pending_erasures(store) == []
    text = await dump(store)
    for s in (*UNIQUE, MEMBER, NAME):
        assert s not in text, s


def test_a_scrubber_passes_over_stored_text_only_when_nothing_in_it_is_replaced() -> None:
    """An erasure decodes only the rows whose stored JSON text ``Scrubber.may_hold`` picks: it must pick
    every row the scrubber changes, spelled as SQLite stores JSON (ASCII, escaped) or as PostgreSQL prints it."""
    scrub = people.Scrubber([(NAME, people.ERASED_NAME), ('Say "hi" \\ bye', "withheld"), ("kelvin", "erased"),
                             ("zorblaxian", "redacted")])
    values: list[Any] = [
        {"text": "Zelda Quorn said: zorblaxian"}, {"text": "ZELDA QUORN"}, ["say \"HI\" \\ bye"], {"Zorblaxian": 1},
        {"text": "\u212aelvin"},  # the Kelvin sign: a case-blind match of "kelvin" outside ASCII
        {"text": "Zelda\nQuorn"}, {"text": "caf\u00e9 zorblaxian"}, {"text": "nothing of hers"}, {"n": 3, "t": None},
        "zorblaxians", {"text": "Zelda Quorns"}]
    changed = 0
    for v in values:
        for stored in (json.dumps(v), json.dumps(v, ensure_ascii=False), json.dumps(v, separators=(",", ":"))):
            if scrub.json(v) != v:
                changed += 1
                assert scrub.may_hold(stored), stored
    assert changed >= 6 * 3
    assert not scrub.may_hold(json.dumps({"text": "nothing of hers", "by": "Bob"}))  # passed over, not decoded
    assert not people.Scrubber([]).may_hold(json.dumps({"text": "Zelda Quorn"}))


def test_bad_member_is_one_sentence() -> None:
    for bad in ("", "123", "discord", "erased:abc", "discord: 1"):
        with pytest.raises(people.BadMember, match="PLATFORM:ID"):
            people.parse_member(bad)
    assert people.parse_member(" slack:T1:U2 ") == "slack:T1:U2"


async def test_research_exports_carry_only_consenting_members_words(store: Store, tmp_path: Path) -> None:
    from bot.core.privacy import research_filter
    from bot.research.parquet import export_parquet

    played = {}
    for i, g in enumerate(GAMES):
        gid, result = await log_game(store, g, 300 + i, ((MEMBER, NAME, UNIQUE), (LONER, LONER_NAME, LONER_WORDS)))
        played[gid] = result
    await people.set_research(store, LONER, True)

    words = await research_filter(store, "opt-in")
    buf = io.StringIO()
    assert await export_games(store, out=buf, fmt="jsonl", secret="k", withhold=words) == len(GAMES)
    records = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert words.total == sum(r["withheld"] for r in records) > 0
    folder = tmp_path / "pq"
    folder.mkdir()
    await export_parquet(store, folder, secret="k", withhold=await research_filter(store, "opt-in"))
    out = buf.getvalue().encode() + b"".join(p.read_bytes() for p in folder.iterdir())
    for w in UNIQUE:
        assert w.encode() not in out, w
    assert any(w.encode() in out for w in LONER_WORDS)  # the consenting member's words stay
    # Structure kept: every exported game replays to its outcome.
    from games.record import parse

    for r in records:
        _, _, again = replay_record(parse([json.dumps(r)]))
        assert again is not None and again.to_json()["winners"] == played[r["id"]]["winners"]

    # notice: everyone but those who said no; off: everyone.
    await people.set_research(store, MEMBER, False)
    assert (await research_filter(store, "notice")).consents(LONER)
    assert not (await research_filter(store, "notice")).consents(MEMBER)
    assert (await research_filter(store, "off")).consents(MEMBER)
    assert not (await research_filter(store, "opt-in")).consents("discord:never-asked")


async def test_retention_removes_free_text_of_old_games_and_keeps_outcomes(store: Store) -> None:
    from datetime import UTC, datetime, timedelta

    from bot.core.privacy import expire_texts

    played = {}
    for i, g in enumerate(GAMES):
        gid, result = await log_game(store, g, 500 + i, ((MEMBER, NAME, UNIQUE), (LONER, LONER_NAME, LONER_WORDS)))
        played[gid] = result
    assert await expire_texts(store, 30) == 0  # nothing is that old yet
    later = datetime.now(UTC) + timedelta(days=31)
    assert await expire_texts(store, 30, now=later) == len(GAMES)
    assert await expire_texts(store, 30, now=later) == 0  # done once
    text = await dump(store)
    for w in (*UNIQUE, *LONER_WORDS):
        assert w not in text, w
    assert MEMBER in text and NAME in text  # retention removes words, not who played
    for gid, result in played.items():
        log = await store.load_game(gid)
        _, _, again = replay_record(record_of(log))
        assert again is not None and again.to_json()["winners"] == result["winners"], gid
    assert "retention" in [e.action for e in await people.audit_log(store)]


async def test_a_retention_run_cut_short_still_audits_the_games_it_expired(store: Store,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop can cancel retention between two games: the games already expired are never picked
    again, so their audit row is written on the way out."""
    import asyncio
    from datetime import UTC, datetime, timedelta

    from bot.core.privacy import expire_texts

    for i, g in enumerate(GAMES[:3]):
        await log_game(store, g, 700 + i, ((MEMBER, NAME, UNIQUE), (LONER, LONER_NAME, LONER_WORDS)))
    real = people.expire_game
    calls = 0

    async def cut_on_the_second(db: Store, plan: people.GameErasure) -> int:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise asyncio.CancelledError  # where a stop's cancellation lands
        return await real(db, plan)

    monkeypatch.setattr(people, "expire_game", cut_on_the_second)
    later = datetime.now(UTC) + timedelta(days=31)
    with pytest.raises(asyncio.CancelledError):
        await expire_texts(store, 30, now=later)
    (entry,) = [e for e in await people.audit_log(store) if e.action == "retention"]
    assert entry.scope == "1 game(s) older than 30 day(s)" and entry.rows > 0
    monkeypatch.setattr(people, "expire_game", real)
    assert await expire_texts(store, 30, now=later) == 2  # the next run does the rest
