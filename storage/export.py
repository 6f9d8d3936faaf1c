"""Export ended games from the log as JSON Lines or CSV, pseudonymised by default.

Only games that are over (``finished`` or ``aborted``) are exported; ``since``
keeps those that ended at or after that moment, ``game`` one game name.

JSONL: one object per game, schema ``hushtable.game/1``::

    {"schema": "hushtable.game/1", "id": 12, "game": "decrypto", "variant": "benchmark",
     "config": {...}, "seed": 123, "rules_version": "decrypto/1",
     "platform": "discord", "place": "c_<16 hex>", "host": "u_<16 hex>",
     "status": "finished", "created_at": ISO-8601 UTC, "started_at": ..., "finished_at": ...,
     "result": {...} | null,
     "seats": [{"seat": 0, "kind": "human", "player": "u_<16 hex>", "agent_spec": null}, ...],
     "actions": [{"seq": 1, "seat": 0, "kind": "hint", "value": ["..."], "source": "human",
                  "actor": "u_<16 hex>", "created_at": ...}, ...],
     "events": [{"seq": 1, "action_seq": null, "kind": "deal", "data": {...},
                 "audience": "public" | [seats]}, ...],
     "agent_calls": [{"seat": 1, "action_seq": 3, "agent_spec": "...", "model_id": "...",
                      "operation": "score", "prompt": ..., "raw_output": "...",
                      "label_probs": {...} | null, "latency_ms": 12.5, "retries": 0,
                      "fallback": false, "error": null, "created_at": ...}, ...]}

``hushtable replay`` needs only game, variant, config, seed, the number of
seats and each action's seat, kind and value.

Pseudonyms: ``"u_" + hex(HMAC-SHA256(secret, tenant + NUL + user_key))[:16]`` (the secret: see
``storage.export_secret``; a game from before tenants, tenant ``""``, uses the user key alone) for
players (and the host), ``"c_" + ...`` of ``"platform:place"`` for the channel. They
are stable for one secret and one tenant (the same person links across that tenant's games and
exports), unrelated between tenants (two workspaces' exports cannot be joined on a person) and
under another secret. ``hushtable db copy`` keeps them: it copies the games' tenants and the key
file beside a SQLite log. When pseudonymising, ``place_name`` and seat
``display_name`` are left out, and an action's ``actor`` is pseudonymised when
it is a person: the source is ``human``, or the actor is a user key of the
game's platform (``"discord:..."``) or of one of its seats. Agent specs stay
readable. Free text written by players (hints, descriptions) and model
prompts are exported as they are: they may mention names.

CSV: one row per action (a game with no action gets one row with empty action
columns), game columns repeated on each row; lists and objects are JSON text.
Columns, in order: ``CSV_COLUMNS``.

Parquet (``hushtable export --format parquet --out FOLDER``): one file per record kind, built
from these same objects; schema in ``bot.research.parquet``.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TextIO

from storage.evaluations import evaluations_json
from storage.export_secret import export_secret
from storage.ports import ExportSource
from storage.records import GameLog
from storage.tables import ENDED, ActionSource, AgentCallRow

SCHEMA = "hushtable.game/1"

CSV_COLUMNS: tuple[str, ...] = (
    "game_id",
    "game",
    "variant",
    "config",
    "seed",
    "rules_version",
    "platform",
    "place",
    "status",
    "created_at",
    "started_at",
    "finished_at",
    "n_seats",
    "winners",
    "seq",
    "seat",
    "seat_kind",
    "player",
    "action_kind",
    "value",
    "source",
    "actor",
    "action_created_at",
)


def pseudonym(secret: str, key: str, prefix: str = "u_", tenant: str = "") -> str:
    """A stable, secret-keyed stand-in for an identifier, keyed by its tenant too: the same person is unrelated
    across tenants (one workspace's export cannot be joined with another's). A game from before tenants (``""``)
    keeps the pseudonym it always had; a tenant never holds a NUL, so the two forms cannot meet."""
    message = f"{tenant}\x00{key}" if tenant else key
    return prefix + hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()[:16]


def _iso(ts: datetime | None) -> str | None:
    return ts.isoformat() if ts is not None else None


class _Names:
    """How identifiers of one game appear in the export."""

    def __init__(self, log: GameLog, *, pseudonymise: bool, secret: str) -> None:
        self.on = pseudonymise
        self.secret = secret
        self.tenant = log.row.tenant
        self.platform_prefix = f"{log.row.platform}:"
        self.people = {s.user_key for s in log.seats if s.user_key} | {log.row.host}

    def user(self, key: str | None) -> str | None:
        if key is None or not self.on:
            return key
        return pseudonym(self.secret, key, tenant=self.tenant)

    def place(self, platform: str, place: str) -> str:
        return pseudonym(self.secret, f"{platform}:{place}", "c_", self.tenant) if self.on else place

    def actor(self, actor: str, source: str) -> str:
        if self.on and (source == ActionSource.HUMAN or actor in self.people or actor.startswith(self.platform_prefix)):
            return pseudonym(self.secret, actor, tenant=self.tenant)
        return actor


def game_record(
    log: GameLog, agent_calls: Sequence[AgentCallRow] = (), *, pseudonymise: bool = True, secret: str = ""
) -> dict[str, Any]:
    """The ``hushtable.game/1`` object for one game (see the module docstring)."""
    if pseudonymise and not secret:
        raise ValueError("pseudonymising needs a non-empty secret")
    names = _Names(log, pseudonymise=pseudonymise, secret=secret)
    row = log.row
    rec: dict[str, Any] = {
        "schema": SCHEMA,
        "id": row.id,
        "game": row.game,
        "variant": row.variant,
        "config": row.config,
        "seed": row.seed,
        "rules_version": row.rules_version,
        "platform": row.platform,
        "place": names.place(row.platform, row.place),
    }
    if not pseudonymise:
        rec["place_name"] = row.place_name
    rec |= {
        "host": names.user(row.host),
        "status": row.status,
        "created_at": _iso(row.created_at),
        "started_at": _iso(row.started_at),
        "finished_at": _iso(row.finished_at),
        "result": row.result,
    }
    seats = []
    for s in log.seats:
        seat: dict[str, Any] = {"seat": s.seat, "kind": s.kind, "player": names.user(s.user_key)}
        if not pseudonymise:
            seat["display_name"] = s.display_name
        seat["agent_spec"] = s.agent_spec
        seats.append(seat)
    rec["seats"] = seats
    rec["actions"] = [
        {
            "seq": a.seq,
            "seat": a.seat,
            "kind": a.kind,
            "value": list(a.value),
            "source": a.source,
            "actor": names.actor(a.actor, a.source),
            "created_at": _iso(a.created_at),
        }
        for a in log.actions
    ]
    rec["events"] = [
        {"seq": e.seq, "action_seq": e.action_seq, "kind": e.kind, "data": e.data, "audience": e.audience}
        for e in log.events
    ]
    rec["agent_calls"] = [
        {
            "seat": c.seat,
            "action_seq": c.action_seq,
            "agent_spec": c.agent_spec,
            "model_id": c.model_id,
            "operation": c.operation,
            "prompt": c.prompt,
            "raw_output": c.raw_output,
            "label_probs": c.label_probs,
            "latency_ms": c.latency_ms,
            "retries": c.retries,
            "fallback": c.fallback,
            "error": c.error,
            "created_at": _iso(c.created_at),
        }
        for c in agent_calls
    ]
    return rec


def _csv_rows(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    result = rec.get("result") or {}
    winners = result.get("winners") if isinstance(result, Mapping) else None
    base = {
        "game_id": rec["id"],
        "game": rec["game"],
        "variant": rec["variant"],
        "config": json.dumps(rec["config"], sort_keys=True),
        "seed": rec["seed"],
        "rules_version": rec["rules_version"],
        "platform": rec["platform"],
        "place": rec["place"],
        "status": rec["status"],
        "created_at": rec["created_at"],
        "started_at": rec["started_at"],
        "finished_at": rec["finished_at"],
        "n_seats": len(rec["seats"]),
        "winners": json.dumps(winners) if winners is not None else "",
    }
    seats = {s["seat"]: s for s in rec["seats"]}
    if not rec["actions"]:
        return [base | {c: "" for c in CSV_COLUMNS if c not in base}]
    rows = []
    for a in rec["actions"]:
        seat = seats.get(a["seat"], {})
        rows.append(
            base
            | {
                "seq": a["seq"],
                "seat": a["seat"],
                "seat_kind": seat.get("kind", ""),
                "player": seat.get("player") or seat.get("agent_spec") or "",
                "action_kind": a["kind"],
                "value": json.dumps(a["value"], ensure_ascii=False),
                "source": a["source"],
                "actor": a["actor"],
                "action_created_at": a["created_at"],
            }
        )
    return rows


@dataclass(frozen=True, slots=True)
class Withheld:
    """One game as a research export may carry it: ``log`` with the words of members who did not
    consent replaced (actions, events, result), ``scrub`` for the rows derived from them (agent
    calls, evaluations), ``count`` texts withheld. Made by ``bot.core.privacy.ResearchFilter``."""

    log: GameLog
    scrub: Callable[[Any], Any]
    count: int


Withhold = Callable[[GameLog], Withheld]


def resolve_secret(store: ExportSource, *, pseudonymise: bool, secret: str | None) -> str:
    """The pseudonym key an export uses (checked before anything is written); "" when not pseudonymising."""
    if not pseudonymise:
        return ""
    if secret is None:
        secret = export_secret(store.plan)
    if not secret:
        raise ValueError("pseudonymising needs a non-empty secret (HMAC key)")
    return secret


async def game_records(
    store: ExportSource,
    *,
    game: str | None = None,
    since: datetime | None = None,
    pseudonymise: bool = True,
    secret: str | None,
    tenant: str | None = None,
    withhold: Withhold | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """The ``hushtable.game/1`` objects of the ended games, evaluations included, oldest first.

    Every export format reads its games from here, so pseudonyms and the key are the same in each.
    ``secret=None`` takes the log's own key (``storage.export_secret``: made on first use beside
    a SQLite file; refused for a server database until HUSHTABLE_EXPORT_SECRET is set).
    ``withhold``: each game goes through it first, and its record says how many texts it withheld
    (``"withheld"``).
    """
    secret = resolve_secret(store, pseudonymise=pseudonymise, secret=secret)
    rows = await store.games(status=ENDED, game=game, finished_since=since, tenant=tenant)
    for row in rows:
        assert row.id is not None
        log = await store.load_game(row.id)
        calls = await store.agent_calls(row.id)
        withheld = withhold(log) if withhold is not None else None
        rec = game_record(log if withheld is None else withheld.log, calls, pseudonymise=pseudonymise, secret=secret)
        rec["evaluations"] = await evaluations_json(store, row.id)  # SNEAK scores (storage/evaluations.py)
        if withheld is not None:
            rec["agent_calls"] = withheld.scrub(rec["agent_calls"])
            rec["evaluations"] = withheld.scrub(rec["evaluations"])
            rec["withheld"] = withheld.count
        yield rec


async def export_games(
    store: ExportSource,
    *,
    out: TextIO,
    fmt: Literal["jsonl", "csv"] = "jsonl",
    game: str | None = None,
    since: datetime | None = None,
    pseudonymise: bool = True,
    secret: str | None,
    tenant: str | None = None,  # only this tenant's games (the bot's per-guild export); None: all (the CLI)
    withhold: Withhold | None = None,
) -> int:
    """Write ended games (finished or aborted, ended at or after ``since``) to ``out``; returns how many.

    ``secret=None`` takes the log's own key (see ``game_records``).
    """
    if fmt not in ("jsonl", "csv"):
        raise ValueError(f"export format is jsonl or csv, not {fmt!r}")
    secret = resolve_secret(store, pseudonymise=pseudonymise, secret=secret)
    writer = None
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
        writer.writeheader()
    count = 0
    async for rec in game_records(store, game=game, since=since, pseudonymise=pseudonymise, secret=secret,
                                  tenant=tenant, withhold=withhold):
        if writer is None:
            out.write(json.dumps(rec, ensure_ascii=False, sort_keys=False) + "\n")
        else:
            writer.writerows(_csv_rows(rec))
        count += 1
    return count


__all__ = ["CSV_COLUMNS", "SCHEMA", "Withheld", "Withhold", "export_games", "game_record", "game_records", "pseudonym", "resolve_secret"]
