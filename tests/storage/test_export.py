"""Export: a played game goes out as one JSONL record that the lead's replay accepts, or as CSV
rows per action; identities are pseudonymised with a keyed hash unless asked otherwise."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from games import get
from games.base import config_to_dict
from games.play import play_random
from games.record import parse, replay_record
from storage.export import CSV_COLUMNS, SCHEMA, export_games, pseudonym
from storage.store import ActionRecord, AgentCallRecord, EventRecord, SeatRecord, Store
from storage.tables import ActionSource, GameStatus, SeatKind

SECRET = "s3cret"
PSEUDO = re.compile(r"^u_[0-9a-f]{16}$")

async def create(store: Store, **kw: Any) -> int:
    """``create_game`` for a key never seen: the id is always there."""
    gid = await store.create_game(**kw)
    assert gid is not None
    return gid



async def record_played_game(
    store: Store, game_id: str = "spy", *, seed: int = 5, place: str = "chan-1", humans: tuple[str, ...] = ("discord:111", "discord:222"),
    tenant: str = "",
) -> tuple[int, dict[str, Any]]:
    """Play a real engine at random and log it through the store the way the bot does."""
    game = get(game_id)
    cfg = game.make_config()
    n = game.seat_range(cfg)[0]
    play = play_random(game, cfg, n, seed)
    names = ["Alice", "Bob"]
    seats = [
        SeatRecord(i, SeatKind.HUMAN, names[i], user_key=humans[i]) if i < len(humans) else SeatRecord(i, SeatKind.AI, f"Player {i + 1}", agent_spec="random")
        for i in range(n)
    ]
    gid = await create(store,
        game=game.id, variant=cfg.variant, config=config_to_dict(cfg), platform="discord", place=place,
        place_name="#word-games", host=humans[0], lobby={}, tenant=tenant,
    )
    state, deal = game.new(cfg, n, seed)
    await store.start_game(
        gid, seed=seed, config=config_to_dict(cfg), seats=seats, events=[EventRecord.of(e) for e in deal], rules_version=f"{game.id}/1"
    )
    for i, (seat, action) in enumerate(play.actions):
        state, evs = game.apply(state, seat, action)
        human = seat < len(humans)
        await store.append_turn(
            gid,
            action=ActionRecord.of(seat, action, source=ActionSource.HUMAN if human else ActionSource.AI, actor=humans[seat] if human else "random"),
            events=[EventRecord.of(e) for e in evs],
            inbound_key=f"discord:ev-{gid}-{i}",
            agent_calls=[] if human else [AgentCallRecord(seat, "random", prompt=[{"role": "user", "content": "your move"}])],
        )
    result = game.result(state)
    assert result is not None
    await store.finish_game(gid, status=GameStatus.FINISHED, result=result.to_json())
    return gid, result.to_json()


async def export_text(store: Store, **kw: Any) -> str:
    buf = io.StringIO()
    kw.setdefault("secret", SECRET)
    await export_games(store, out=buf, **kw)
    return buf.getvalue()


async def test_jsonl_record_is_pseudonymised_and_replays(store: Store) -> None:
    gid, result = await record_played_game(store)
    text = await export_text(store, fmt="jsonl")
    lines = text.splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    assert rec["schema"] == SCHEMA and rec["id"] == gid and rec["game"] == "spy" and rec["status"] == "finished"
    assert rec["result"] == result and rec["seed"] == 5
    assert datetime.fromisoformat(rec["finished_at"]).tzinfo is not None

    # Nobody's platform id, display name or channel appears; pseudonyms stand in.
    for private in ("discord:111", "discord:222", "Alice", "Bob", "chan-1", "#word-games"):
        assert private not in text
    players = [s["player"] for s in rec["seats"]]
    assert players[:2] == [pseudonym(SECRET, "discord:111"), pseudonym(SECRET, "discord:222")]
    assert all(PSEUDO.match(p) for p in players[:2]) and all(p is None for p in players[2:])
    assert rec["host"] == players[0] and rec["place"].startswith("c_")
    assert all("display_name" not in s for s in rec["seats"])
    assert {s["agent_spec"] for s in rec["seats"][2:]} == {"random"}
    for a in rec["actions"]:
        assert a["actor"] == (players[a["seat"]] if a["seat"] < 2 else "random")
    assert [a["seq"] for a in rec["actions"]] == list(range(1, len(rec["actions"]) + 1))
    assert rec["events"][0]["action_seq"] is None and rec["events"][-1]["action_seq"] == len(rec["actions"])
    assert {c["action_seq"] for c in rec["agent_calls"]} <= {a["seq"] for a in rec["actions"] if a["seat"] >= 2}

    # The record is accepted by the replay reader and rebuilds the same result.
    replayed = parse(lines)
    assert replayed.seats == len(rec["seats"]) and len(replayed.actions) == len(rec["actions"])
    _, events, again = replay_record(replayed)
    assert again is not None and again.to_json() == result
    assert [e.to_json() for e in events] == [{k: e[k] for k in ("kind", "data", "audience")} for e in rec["events"]]


async def test_pseudonyms_stable_per_secret_and_unrelated_across_secrets(store: Store) -> None:
    await record_played_game(store, seed=1, place="a")
    await record_played_game(store, seed=2, place="b", humans=("discord:222", "discord:333"))
    first = [json.loads(x) for x in (await export_text(store, fmt="jsonl")).splitlines()]
    again = [json.loads(x) for x in (await export_text(store, fmt="jsonl")).splitlines()]
    other = [json.loads(x) for x in (await export_text(store, fmt="jsonl", secret="another")).splitlines()]
    assert first == again
    bob = pseudonym(SECRET, "discord:222")
    # The same person is linkable across games under one secret...
    assert first[0]["seats"][1]["player"] == first[1]["seats"][0]["player"] == bob
    # ...and not under another.
    assert other[0]["seats"][1]["player"] == other[1]["seats"][0]["player"] != bob
    mine = {s["player"] for r in first for s in r["seats"] if s["player"]}
    theirs = {s["player"] for r in other for s in r["seats"] if s["player"]}
    assert len(mine) == 3 and not mine & theirs
    assert first[0]["place"] != other[0]["place"]


async def test_raw_export_keeps_identities(store: Store) -> None:
    await record_played_game(store)
    rec = json.loads(await export_text(store, fmt="jsonl", pseudonymise=False, secret=""))
    assert [s["player"] for s in rec["seats"][:2]] == ["discord:111", "discord:222"]
    assert [s["display_name"] for s in rec["seats"][:2]] == ["Alice", "Bob"]
    assert rec["place"] == "chan-1" and rec["place_name"] == "#word-games" and rec["host"] == "discord:111"


async def test_filters_by_game_and_since_and_skips_unended(store: Store) -> None:
    spy_id, _ = await record_played_game(store, "spy", place="a")
    cut = datetime.now(UTC)
    cham_id, _ = await record_played_game(store, "chameleon", place="b")
    aborted = await create(store,
        game="spy", variant="classic", config={}, platform="discord", place="c", place_name="", host="discord:9", lobby={}
    )
    await store.finish_game(aborted, status=GameStatus.ABORTED, result=None)
    await create(store,   # still in the lobby: not exported
        game="spy", variant="classic", config={}, platform="discord", place="d", place_name="", host="discord:9", lobby={}
    )

    def ids(text: str) -> list[int]:
        return [json.loads(x)["id"] for x in text.splitlines()]

    assert ids(await export_text(store, fmt="jsonl")) == [spy_id, cham_id, aborted]
    assert ids(await export_text(store, fmt="jsonl", game="spy")) == [spy_id, aborted]
    assert ids(await export_text(store, fmt="jsonl", since=cut)) == [cham_id, aborted]
    # A naive date is read as UTC, as the command line passes it.
    assert ids(await export_text(store, fmt="jsonl", since=cut.replace(tzinfo=None), game="chameleon")) == [cham_id]
    buf = io.StringIO()
    assert await export_games(store, out=buf, fmt="jsonl", game="decrypto", secret=SECRET) == 0 and buf.getvalue() == ""


async def test_csv_has_one_row_per_action_with_game_columns(store: Store) -> None:
    gid, result = await record_played_game(store)
    empty = await create(store,
        game="spy", variant="classic", config={}, platform="discord", place="z", place_name="", host="discord:9", lobby={}
    )
    await store.finish_game(empty, status=GameStatus.ABORTED, result=None)
    rec = json.loads((await export_text(store, fmt="jsonl", game="spy")).splitlines()[0])
    rows = list(csv.DictReader(io.StringIO(await export_text(store, fmt="csv"))))
    assert tuple(rows[0].keys()) == CSV_COLUMNS
    played = [r for r in rows if r["game_id"] == str(gid)]
    assert len(played) == len(rec["actions"])
    assert {(r["game"], r["seed"], r["status"], r["n_seats"]) for r in played} == {("spy", "5", "finished", str(len(rec["seats"])))}
    assert json.loads(played[0]["winners"]) == result["winners"]
    for row, a in zip(played, rec["actions"], strict=False):
        assert int(row["seq"]) == a["seq"] and json.loads(row["value"]) == a["value"] and row["actor"] == a["actor"]
        assert row["player"] == (rec["seats"][a["seat"]]["player"] or "random")
    assert "discord:111" not in "".join(",".join(r.values()) for r in rows)
    [lone] = [r for r in rows if r["game_id"] == str(empty)]
    assert lone["status"] == "aborted" and lone["seq"] == "" and lone["value"] == ""


async def test_export_refuses_bad_arguments(store: Store) -> None:
    with pytest.raises(ValueError, match="secret"):
        await export_games(store, out=io.StringIO(), fmt="jsonl", secret="")
    with pytest.raises(ValueError, match="format"):
        await export_games(store, out=io.StringIO(), fmt="xml", secret=SECRET)  # type: ignore[arg-type]


async def test_pseudonyms_are_keyed_per_tenant_and_survive_a_db_copy(store: Store, tmp_path: Any) -> None:
    """One person in two workspaces is two unrelated pseudonyms: two tenants' exports cannot be joined on a person."""
    from bot.ops.dbcopy import copy_log

    await record_played_game(store, seed=1, place="a", tenant="discord:1")
    await record_played_game(store, seed=2, place="b", tenant="discord:1", humans=("discord:222", "discord:333"))
    await record_played_game(store, seed=3, place="a", tenant="discord:2")
    recs = [json.loads(x) for x in (await export_text(store, fmt="jsonl")).splitlines()]
    bob = [r["seats"][1]["player"] if i != 1 else r["seats"][0]["player"] for i, r in enumerate(recs)]
    assert bob[0] == bob[1] == pseudonym(SECRET, "discord:222", tenant="discord:1")
    assert bob[2] == pseudonym(SECRET, "discord:222", tenant="discord:2") != bob[0]
    assert recs[0]["place"] != recs[2]["place"]  # the same channel id under two tenants
    assert pseudonym(SECRET, "discord:222") not in bob  # the tenant-free form is for games from before tenants
    if store.plan.is_sqlite and store.plan.sqlite_file is not None:
        # with the log's own key, which `db copy` carries beside the copy
        mine = [json.loads(x) for x in (await export_text(store, fmt="jsonl", secret=None)).splitlines()]
        copy = tmp_path / "copy.db"
        await copy_log(db_url_of(store), f"sqlite+aiosqlite:///{copy}")
        async with await Store.open(f"sqlite+aiosqlite:///{copy}") as copied:
            again = [json.loads(x) for x in (await export_text(copied, fmt="jsonl", secret=None)).splitlines()]
        assert [[s["player"] for s in r["seats"]] for r in again] == [[s["player"] for s in r["seats"]] for r in mine]
        assert mine[0]["seats"][1]["player"] != mine[2]["seats"][1]["player"]


def db_url_of(store: Store) -> str:
    return f"sqlite+aiosqlite:///{store.plan.sqlite_file}"
