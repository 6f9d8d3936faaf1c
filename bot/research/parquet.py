"""The log as Parquet: one file per record kind, keyed by ``game_id``, for a researcher's one-line load.

Built from the very objects the JSON Lines export writes (``storage.export.game_records``), so
pseudonyms, the export key, dropped display names and free text are handled exactly as there.
A folder holds ``games``, ``seats``, ``actions``, ``events``, ``agent_calls`` and ``evaluations``
``.parquet``; each file carries ``hushtable.schema = hushtable.parquet/1`` and a description per
column in its metadata (``docs/export-schema.md`` lists them).

Columns keep their JSONL names and values. Objects whose shape depends on the game (``config``,
``result``, an event's ``data``, a call's ``prompt`` and ``label_probs``, an evaluation's
``settings_json`` and ``instance``) are JSON text; timestamps are UTC microseconds; an event's
audience is ``audience_seats``, null for a public event. ``records_from_parquet`` rebuilds the
``hushtable.game/1`` objects, which is how the tests show nothing is lost.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from storage.export import SCHEMA, Withhold, game_records, resolve_secret
from storage.outfiles import create_new
from storage.ports import ExportSource

PARQUET_SCHEMA = "hushtable.parquet/1"
_TS = pa.timestamp("us", tz="UTC")
_JSON = pa.string()  # JSON text: parsed with json.loads

# (column, type, description); a "json" column holds JSON text.
_Col = tuple[str, pa.DataType, str, bool]


def _c(name: str, typ: pa.DataType, doc: str, *, json_text: bool = False) -> _Col:
    return (name, typ, doc, json_text)


_GAME_KEY = _c("game_id", pa.int64(), "the game's id in the log it came from (key of every table)")

COLUMNS: dict[str, list[_Col]] = {
    "games": [
        _GAME_KEY,
        _c("game", pa.string(), "engine id"),
        _c("variant", pa.string(), "variant"),
        _c("config", _JSON, "engine config as started", json_text=True),
        _c("seed", pa.int64(), "the game's seed; null for a game aborted in the lobby"),
        _c("rules_version", pa.string(), "rules version recorded at start"),
        _c("platform", pa.string(), "discord, slack or console"),
        _c("place", pa.string(), "channel or thread: pseudonym c_... unless exported raw"),
        _c("place_name", pa.string(), "channel name; only in raw exports (null otherwise)"),
        _c("host", pa.string(), "who opened the game: pseudonym u_... unless exported raw"),
        _c("status", pa.string(), "finished or aborted"),
        _c("created_at", _TS, "when the table was opened"),
        _c("started_at", _TS, "when play started; null if never"),
        _c("finished_at", _TS, "when the game ended"),
        _c("result", _JSON, "the engine's result (winners, summary, scores, details); null if aborted", json_text=True),
        _c("withheld", pa.int32(), "texts of members who did not consent to research, replaced; null if none were asked"),
    ],
    "seats": [
        _GAME_KEY,
        _c("seat", pa.int32(), "seat number"),
        _c("kind", pa.string(), "human or ai"),
        _c("player", pa.string(), "a human's pseudonym (user key if raw); null for an AI seat"),
        _c("display_name", pa.string(), "only in raw exports (null otherwise)"),
        _c("agent_spec", pa.string(), "the AI seat's agent; null for a human"),
    ],
    "actions": [
        _GAME_KEY,
        _c("seq", pa.int32(), "position in play order, from 1"),
        _c("seat", pa.int32(), "seat that acted"),
        _c("kind", pa.string(), "action kind (hint, guess, vote, ...)"),
        _c("value", pa.list_(pa.string()), "the action's words or choices"),
        _c("source", pa.string(), "human, ai, timeout, fallback or takeover"),
        _c("actor", pa.string(), "who acted: a pseudonym for a person, else the agent spec"),
        _c("created_at", _TS, "when it was logged"),
    ],
    "events": [
        _GAME_KEY,
        _c("seq", pa.int32(), "position in the game's event log"),
        _c("action_seq", pa.int32(), "the action that caused it; null for the deal and end-of-game events"),
        _c("kind", pa.string(), "event kind"),
        _c("data", _JSON, "the event's data", json_text=True),
        _c("audience_seats", pa.list_(pa.int32()), "the seats that saw it; null for a public event"),
    ],
    "agent_calls": [
        _GAME_KEY,
        _c("seat", pa.int32(), "the AI seat"),
        _c("action_seq", pa.int32(), "the action the call produced; null if none"),
        _c("agent_spec", pa.string(), "agent"),
        _c("model_id", pa.string(), "model behind it"),
        _c("operation", pa.string(), "generate, score or none"),
        _c("prompt", _JSON, "what the model was given", json_text=True),
        _c("raw_output", pa.string(), "what it answered"),
        _c("label_probs", _JSON, "probability per option when scored; null otherwise", json_text=True),
        _c("latency_ms", pa.float64(), "time of the call"),
        _c("retries", pa.int32(), "retries before an answer"),
        _c("fallback", pa.bool_(), "whether the fallback answered instead"),
        _c("error", pa.string(), "what went wrong; null if nothing"),
        _c("created_at", _TS, "when it was logged"),
    ],
    "evaluations": [
        _GAME_KEY,
        _c("action_seq", pa.int32(), "the scored clue's action"),
        _c("part", pa.int32(), "which part of the action (a Decrypto hint has three)"),
        _c("game", pa.string(), "engine id"),
        _c("evaluator", pa.string(), "evaluator spec"),
        _c("settings", pa.string(), "digest of the scoring settings"),
        _c("settings_json", _JSON, "the scoring settings", json_text=True),
        _c("instance", _JSON, "category, candidates, secret and message (never the speaker)", json_text=True),
        _c("decoys", pa.list_(pa.string()), "the decoy secrets drawn"),
        _c("perm_seed", pa.int64(), "seed of the option order"),
        _c("ally_probs", pa.list_(pa.float64()), "ally's probabilities in the stored option order"),
        _c("cham_probs", pa.list_(pa.float64()), "chameleon's probabilities in the stored option order"),
        _c("utility", pa.float64(), "0-1; null when the judgement failed"),
        _c("leakage", pa.float64(), "0-1"),
        _c("soft", pa.float64(), "SoftScore, 0-1"),
        _c("binary", pa.float64(), "BinaryScore, 0 or 1"),
        _c("error", pa.string(), "why the judgement failed; null if it did not"),
        _c("metric", _JSON, "what else the evaluation holds: a theory-of-mind answer's question, reply, parsed answer "
                            "and score", json_text=True),
        _c("created_at", _TS, "when it was scored"),
    ],
}
TABLES: tuple[str, ...] = tuple(COLUMNS)
_BATCH = 5_000  # rows buffered per table before a row group is written


def schema_of(table: str) -> pa.Schema:
    """The Arrow schema of one table, with its column descriptions."""
    fields = [pa.field(name, typ, metadata={"description": doc + (" (JSON text)" if js else "")}) for name, typ, doc, js in COLUMNS[table]]
    return pa.schema(fields, metadata={"hushtable.schema": PARQUET_SCHEMA, "hushtable.table": table})


def _ts(iso: str | None) -> datetime | None:
    return datetime.fromisoformat(iso) if iso is not None else None


def _js(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def rows_of(rec: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """One ``hushtable.game/1`` object as rows of each table."""
    gid = rec["id"]
    game = {
        "game_id": gid, "game": rec["game"], "variant": rec["variant"], "config": _js(rec["config"]),
        "seed": rec["seed"], "rules_version": rec["rules_version"], "platform": rec["platform"],
        "place": rec["place"], "place_name": rec.get("place_name"), "host": rec["host"], "status": rec["status"],
        "created_at": _ts(rec["created_at"]), "started_at": _ts(rec["started_at"]),
        "finished_at": _ts(rec["finished_at"]), "result": _js(rec["result"]), "withheld": rec.get("withheld"),
    }  # fmt: skip
    seats = [
        {"game_id": gid, "seat": s["seat"], "kind": s["kind"], "player": s["player"], "display_name": s.get("display_name"), "agent_spec": s["agent_spec"]}
        for s in rec["seats"]
    ]
    actions = [{"game_id": gid, **a, "created_at": _ts(a["created_at"])} for a in rec["actions"]]
    events = [
        {
            "game_id": gid,
            "seq": e["seq"],
            "action_seq": e["action_seq"],
            "kind": e["kind"],
            "data": _js(e["data"]),
            "audience_seats": None if e["audience"] == "public" else list(e["audience"]),
        }
        for e in rec["events"]
    ]
    calls = [
        {"game_id": gid, **c, "prompt": _js(c["prompt"]), "label_probs": _js(c["label_probs"]), "created_at": _ts(c["created_at"])} for c in rec["agent_calls"]
    ]
    evals = [
        {"game_id": gid, **v, "settings_json": _js(v["settings_json"]), "instance": _js(v["instance"]),
         "metric": _js(v.get("metric") or {}), "created_at": _ts(v["created_at"])}
        for v in rec.get("evaluations", [])
    ]
    return {"games": [game], "seats": seats, "actions": actions, "events": events, "agent_calls": calls, "evaluations": evals}


async def write_parquet(records: AsyncIterable[Mapping[str, Any]], folder: Path) -> int:
    """Write the records' tables into ``folder`` (made if missing); returns how many games.

    Each file is written beside its final name and renamed once complete, so a failed export
    leaves the previous files as they were. The temporaries are made fresh, never through a link
    planted in ``folder`` (storage/outfiles.py: `UnsafeOutput`, nothing written).
    """
    folder.mkdir(parents=True, exist_ok=True)
    schemas = {t: schema_of(t) for t in TABLES}
    temps = {t: folder / f".{t}.parquet.partial" for t in TABLES}
    sinks: dict[str, BinaryIO] = {}
    try:
        for t in TABLES:
            sinks[t] = os.fdopen(create_new(temps[t]), "wb")
    except BaseException:
        for t, sink in sinks.items():
            sink.close()
            temps[t].unlink(missing_ok=True)
        raise
    writers = {t: pq.ParquetWriter(sinks[t], schemas[t]) for t in TABLES}
    buffers: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}
    count = 0
    done = False

    def flush(table: str) -> None:
        if buffers[table]:
            writers[table].write_table(pa.Table.from_pylist(buffers[table], schema=schemas[table]))
            buffers[table] = []

    try:
        async for rec in records:
            for table, rows in rows_of(rec).items():
                buffers[table].extend(rows)
                if len(buffers[table]) >= _BATCH:
                    flush(table)
            count += 1
        for t in TABLES:
            flush(t)
        done = True
    finally:
        for w in writers.values():
            w.close()
        for sink in sinks.values():
            sink.close()
        for t in TABLES:
            if done:
                os.replace(temps[t], folder / f"{t}.parquet")
            else:
                temps[t].unlink(missing_ok=True)
    return count


async def export_parquet(
    store: ExportSource,
    folder: Path,
    *,
    game: str | None = None,
    since: datetime | None = None,
    pseudonymise: bool = True,
    secret: str | None,
    withhold: Withhold | None = None,
) -> int:
    """``hushtable export --format parquet``: the ended games into ``folder``; returns how many.
    ``withhold``: the words of members who did not consent to research replaced (``storage.export``)."""
    key = resolve_secret(store, pseudonymise=pseudonymise, secret=secret)  # refused before a file is made
    return await write_parquet(game_records(store, game=game, since=since, pseudonymise=pseudonymise, secret=key,
                                            withhold=withhold), folder)


def _iso(ts: datetime | None) -> str | None:
    return ts.isoformat() if ts is not None else None


def _unjs(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _by_game(rows: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r.pop("game_id"), []).append(r)
    return out


def records_from_parquet(folder: Path) -> Iterator[dict[str, Any]]:
    """The ``hushtable.game/1`` objects back from a Parquet export, in the exported order."""
    tables = {t: pq.read_table(folder / f"{t}.parquet").to_pylist() for t in TABLES}
    seats, actions = _by_game(tables["seats"]), _by_game(tables["actions"])
    events, calls, evals = _by_game(tables["events"]), _by_game(tables["agent_calls"]), _by_game(tables["evaluations"])
    for g in tables["games"]:
        gid = g["game_id"]
        rec: dict[str, Any] = {
            "schema": SCHEMA, "id": gid, "game": g["game"], "variant": g["variant"], "config": _unjs(g["config"]),
            "seed": g["seed"], "rules_version": g["rules_version"], "platform": g["platform"], "place": g["place"],
        }  # fmt: skip
        raw = g["place_name"] is not None
        if raw:
            rec["place_name"] = g["place_name"]
        rec |= {
            "host": g["host"],
            "status": g["status"],
            "created_at": _iso(g["created_at"]),
            "started_at": _iso(g["started_at"]),
            "finished_at": _iso(g["finished_at"]),
            "result": _unjs(g["result"]),
        }
        rec["seats"] = [
            {"seat": s["seat"], "kind": s["kind"], "player": s["player"]}
            | ({"display_name": s["display_name"]} if raw else {})
            | {"agent_spec": s["agent_spec"]}
            for s in seats.get(gid, [])
        ]
        rec["actions"] = [a | {"created_at": _iso(a["created_at"])} for a in actions.get(gid, [])]
        rec["events"] = [
            {
                "seq": e["seq"],
                "action_seq": e["action_seq"],
                "kind": e["kind"],
                "data": _unjs(e["data"]),
                "audience": "public" if e["audience_seats"] is None else e["audience_seats"],
            }
            for e in events.get(gid, [])
        ]
        rec["agent_calls"] = [
            c | {"prompt": _unjs(c["prompt"]), "label_probs": _unjs(c["label_probs"]), "created_at": _iso(c["created_at"])} for c in calls.get(gid, [])
        ]
        rec["evaluations"] = [
            v | {"settings_json": _unjs(v["settings_json"]), "instance": _unjs(v["instance"]), "metric": _unjs(v["metric"]),
                 "created_at": _iso(v["created_at"])} for v in evals.get(gid, [])
        ]
        if g.get("withheld") is not None:
            rec["withheld"] = g["withheld"]
        yield rec


__all__ = ["COLUMNS", "PARQUET_SCHEMA", "TABLES", "export_parquet", "records_from_parquet", "rows_of", "schema_of", "write_parquet"]
