"""JSON-lines records of games: written by ``hushtable sim --json``, read by ``hushtable replay``.

A record is one object per line:
- ``{"type": "game", "game", "variant", "config", "seats", "seed", "deal"}`` first;
  ``deal`` is the complete deal the game was played with (``Game.deal_of``): with it
  the record replays exactly without ``seed``; records written before deals existed have no
  ``deal`` and replay from their seed as before;
- then ``{"type": "action", "seat", "action": {"kind", "value"}}`` and
  ``{"type": "event", "kind", "data", "audience"}`` lines in play order;
- ``{"type": "result", ...}`` last (optional when replaying).
An exported game (``hushtable export``, schema ``hushtable.game/1``: one line holding
the whole game) is accepted too; its deal comes from ``deal`` or, for a finished game, from
``result.details.deal`` (every engine's result carries the deal).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from games import get
from games.base import Action, ConfigError, Event, Game, IllegalAction, Result, Seat, config_to_dict, replay


class RecordError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class Record:
    game: Game
    config: Any
    seats: int
    seed: int
    actions: tuple[tuple[Seat, Action], ...]
    result: dict[str, Any] | None
    lines: tuple[int, ...] = ()  # the line each action came from
    deal: Any = None  # the recorded deal, already part of ``config``; None in older records


def deal_for(game: Game, cfg: Any, seats: int, seed: int, actions: Sequence[tuple[Seat, Action]]) -> Any:
    """The complete deal of a played game (replayed from its seed): what a record or an export
    carries so that it replays without the seed."""
    state, _ = replay(game, cfg, seats, seed, actions)
    return game.deal_of(state)


def to_lines(game: Game, cfg: Any, seats: int, seed: int, actions: Sequence[tuple[Seat, Action]],
             events: Sequence[Event], result: Result | None, action_of_event: Sequence[int] | None = None,
             deal: Any = None) -> list[dict[str, Any]]:
    """Interleave actions and the events they caused (``action_of_event[i]`` = index of the action, -1 for the deal).

    The header carries the game's complete deal (``deal``, or replayed from the seed when not given)."""
    if deal is None:
        deal = deal_for(game, cfg, seats, seed, actions)
    out: list[dict[str, Any]] = [{"type": "game", "game": game.id, "variant": str(cfg.variant),
                                  "config": config_to_dict(cfg), "seats": seats, "seed": seed, "deal": deal}]
    if action_of_event is None:
        out += [{"type": "action", "seat": s, "action": a.to_json()} for s, a in actions]
        out += [{"type": "event", **e.to_json()} for e in events]
    else:
        cursor = -1
        for e, owner in zip(events, action_of_event, strict=False):
            while cursor < owner:
                cursor += 1
                s, a = actions[cursor]
                out.append({"type": "action", "seat": s, "action": a.to_json()})
            out.append({"type": "event", **e.to_json()})
        for s, a in actions[cursor + 1:]:
            out.append({"type": "action", "seat": s, "action": a.to_json()})
    if result is not None:
        out.append({"type": "result", **result.to_json()})
    return out


def _header(no: int, raw: dict[str, Any]) -> tuple[Game, Any, int, int, Any]:
    try:
        game = get(str(raw["game"]))
    except KeyError as exc:
        raise RecordError(no, f"unknown or missing game ({exc.args[0]})") from None
    config = dict(raw.get("config") or {"variant": raw.get("variant")})
    deal = raw.get("deal")
    if deal is None and isinstance(raw.get("result"), dict):
        # An exported game carries its result, and every result's details carry the deal.
        deal = (raw["result"].get("details") or {}).get("deal")
    try:
        # The complete deal replaces any partial one the config held.
        cfg = game.with_deal(game.config_from_dict(config), deal)
    except (ConfigError, TypeError, ValueError) as exc:
        raise RecordError(no, f"bad config: {exc}") from None
    seats, seed = raw.get("seats"), raw.get("seed")
    if isinstance(seats, list):
        seats = len(seats)
    if seed is None and deal is not None:
        seed = 0  # a complete deal leaves nothing for the seed to draw
    if not isinstance(seats, int) or not isinstance(seed, int):
        raise RecordError(no, "the game line needs integer 'seats' and 'seed' (or a 'deal')")
    return game, cfg, seats, seed, deal


def parse(lines: Iterable[str]) -> Record:
    """Read a record, naming the first bad line."""
    header = None
    actions: list[tuple[Seat, Action]] = []
    at: list[int] = []
    result = None
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RecordError(no, f"not JSON ({exc.msg})") from None
        if not isinstance(raw, dict):
            raise RecordError(no, "each line must be a JSON object")
        if raw.get("schema", "").startswith("hushtable.game/"):
            game, cfg, seats, seed, deal = _header(no, raw)
            try:
                acts = tuple((int(a["seat"]), Action(a["kind"], tuple(a["value"]))) for a in raw.get("actions", []))
            except (KeyError, TypeError, ValueError) as exc:
                raise RecordError(no, f"bad action in the exported game: {exc}") from None
            return Record(game, cfg, seats, seed, acts, raw.get("result"), (no,) * len(acts), deal)
        kind = raw.get("type")
        if header is None:
            if kind != "game":
                raise RecordError(no, "the first line must describe the game (type 'game')")
            header = _header(no, raw)
        elif kind == "action":
            try:
                actions.append((int(raw["seat"]), Action.from_json(raw["action"])))
                at.append(no)
            except (KeyError, TypeError, ValueError) as exc:
                raise RecordError(no, f"bad action: {exc}") from None
        elif kind == "result":
            result = raw
        elif kind != "event":
            raise RecordError(no, f"unknown line type {kind!r}")
    if header is None:
        raise RecordError(1, "the record is empty")
    game, cfg, seats, seed, deal = header
    return Record(game, cfg, seats, seed, tuple(actions), result, tuple(at), deal)


def replay_record(rec: Record) -> tuple[Any, list[Event], Result | None]:
    """Replay, raising RecordError naming the line of the first action that breaks the rules."""
    state, events = rec.game.new(rec.config, rec.seats, rec.seed)
    log = list(events)
    for i, (seat, action) in enumerate(rec.actions, start=1):
        try:
            state, evs = rec.game.apply(state, seat, action)
        except IllegalAction as exc:
            line = rec.lines[i - 1] if len(rec.lines) >= i else i
            raise RecordError(line, f"action {i} (seat {seat}, {action.kind}) is illegal: {exc}") from None
        log.extend(evs)
    return state, log, rec.game.result(state)
