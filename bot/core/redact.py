"""Redacting one member's words from one logged game, so that the game still replays.

A text action (a clue, a description, a hint, a guess written out) is replayed through the
engine's ``apply``, which checks it (one word, not the secret, not a board word, no number in a
Decrypto hint) and, in some games, reads it (Just One compares clues with each other and the
guess with the secret). A bare marker such as ``[withheld]`` would be refused by some of those
checks, and the same marker for every text would change what the engine reads (two different
clues becoming duplicates). So each distinct text the member wrote (as the rules compare texts:
``games.text.fold``) gets its own stand-in word from ``STAND_INS``, the first the engine accepts
at that point of the replay; a text that is a form of a word the game itself dealt (a correct
guess) is replaced by that dealt word, which is the game's, not the member's. The redacted game
is then replayed whole and its result compared with the original's (``Redaction.replays``).

The events are rebuilt from that replay (they quote the texts, sometimes normalised), and the
texts with their stand-ins go to ``storage.people`` to scrub every derived row (messages
sent, agent prompts, evaluations, study items).

``withhold`` does the same for exports (``bot.core.privacy``): every text of members who did not
consent to research, replaced the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bot.core.replays import record_of
from games import text as gtext
from games.base import Action, IllegalAction, Text
from games.record import Record, RecordError
from storage.people import GameErasure
from storage.records import GameLog
from storage.tables import ActionSource

STAND_INS: tuple[str, ...] = (
    "withheld", "redacted", "erased", "unsaid", "omitted", "elided", "expunged", "blanked", "struck", "hushed",
    "veiled", "censored", "deleted", "removed", "cleared", "voided", "suppressed", "unspoken", "untold", "unnamed",
    "undisclosed", "unshared", "unvoiced", "unwritten", "unrecorded", "unlisted", "unstated", "unquoted",
)
MARKER = STAND_INS[0]


@dataclass(frozen=True, slots=True)
class Redaction:
    """One game's redacted actions (seq → value) and events (seq → data), the texts replaced (each
    with its stand-in), and whether the redacted game replays to the original's outcome."""

    actions: dict[int, tuple[str, ...]]
    events: dict[int, dict[str, Any]]
    texts: tuple[tuple[str, str], ...]
    replays: bool
    withheld: int  # how many texts were replaced
    result: dict[str, Any] | None = None  # the redacted replay's result (its details quote the texts)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _jsonable(data: Mapping[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(dict(data), default=list))
    return loaded


def redact_log(log: GameLog, whose: Callable[[int, int, str, str], bool]) -> Redaction:
    """The texts of the actions ``whose(seq, seat, source, actor)`` picks, replaced by stand-ins the
    engine accepts (see the module's docstring). A game that cannot be replayed (unknown, never
    dealt, broken) has every picked text replaced by ``MARKER`` and ``replays`` False."""
    picked = {a.seq for a in log.actions if whose(a.seq, a.seat, str(a.source), a.actor)}
    try:
        rec = record_of(log)
    except RecordError:
        return _blind(log, picked)
    dealt = [s for e in log.events if e.action_seq is None for s in _strings(e.data) if s.strip()]
    stored = log.row.result
    if isinstance(stored, Mapping) and "winners" in stored and "scores" in stored:
        original_outcome: Any = (stored["winners"], stored["scores"])  # the stored outcome: no second replay
    else:
        try:
            original_outcome = _outcome(_replay(rec))
        except (IllegalAction, RecordError):
            return _blind(log, picked)
    game = rec.game
    state, deal = game.new(rec.config, rec.seats, rec.seed)
    events = [e.to_json() for e in deal]
    chosen: dict[str, str] = {}  # folded text -> its stand-in
    actions: dict[int, tuple[str, ...]] = {}
    texts: list[tuple[str, str]] = []
    for seq, (seat, action) in zip(rec.lines, rec.actions, strict=True):
        redact = seq in picked and isinstance(game.legal(state, seat), Text)
        if not redact:
            try:
                state, evs = game.apply(state, seat, action)
            except IllegalAction:
                return _blind(log, picked)
            events += [e.to_json() for e in evs]
            continue
        done = False
        for attempt in _attempts(action, chosen, dealt):
            try:
                state, evs = game.apply(state, seat, Action(action.kind, attempt))
            except IllegalAction:
                continue
            for original_text, stand_in in zip(action.value, attempt, strict=True):
                chosen.setdefault(gtext.fold(original_text), stand_in)
                texts.append((original_text, stand_in))
                if gtext.clean(original_text) != original_text:
                    texts.append((gtext.clean(original_text), stand_in))
            actions[seq] = attempt
            events += [e.to_json() for e in evs]
            done = True
            break
        if not done:
            return _blind(log, picked)
    texts += _own_words(log, picked, texts, dealt)
    again = game.result(state)
    # The outcome is who won and the scores; the result's details quote the texts, redacted too.
    replays = _outcome(again) == original_outcome
    new_events: dict[int, dict[str, Any]] = {}
    logged = sorted(log.events, key=lambda e: e.seq)
    if len(logged) == len(events):
        for row, ev in zip(logged, events, strict=True):
            data = _jsonable(ev["data"])
            if data != row.data:
                new_events[row.seq] = data
    return Redaction(actions, new_events, tuple(texts), replays, sum(len(v) for v in actions.values()),
                     again.to_json() if again is not None and replays else None)


def _own_words(log: GameLog, picked: set[int], texts: list[tuple[str, str]], dealt: list[str]) -> list[tuple[str, str]]:
    """The single words of the member's texts that nobody else wrote in this game and the game did not
    deal, each with its text's stand-in: a derived row may quote one word of a longer text."""
    others = {w for a in log.actions if a.seq not in picked for v in a.value for w in gtext.words(v)}
    others |= {w for d in dealt for w in gtext.words(d)}
    out: list[tuple[str, str]] = []
    for text, stand_in in texts:
        parts = text.split()
        if len(parts) < 2:
            continue
        out += [(w, stand_in) for w in parts if len(w) >= 4 and not set(gtext.words(w)) & others]
    return out


def _outcome(result: Any) -> Any:
    if result is None:
        return None
    js = json.loads(json.dumps(result.to_json()))  # as stored: JSON keys and lists
    return js["winners"], js["scores"]


def _attempts(action: Action, chosen: Mapping[str, str], dealt: list[str]) -> Iterator[tuple[str, ...]]:
    """Stand-ins to try for an action's texts, best first: each text's own (a text seen before keeps
    its stand-in; a form of a dealt word becomes that word), then the next unused stand-ins."""
    taken = set(chosen.values())

    def own(t: str) -> str | None:
        f = gtext.fold(t)
        if f in chosen:
            return chosen[f]
        for d in dealt:
            if gtext.fold(d) == f or (" " not in d.strip() and " " not in t.strip() and gtext.is_variant(t, d)):
                return d
        return None

    fresh = [s for s in STAND_INS if s not in taken]
    for shift in range(len(fresh)):
        out: list[str] = []
        k = shift
        for t in action.value:
            o = own(t)
            if o is None:
                o = fresh[k % len(fresh)]
                k += 1
            out.append(o)
        yield tuple(out)


def _replay(rec: Record) -> Any:
    from games.record import replay_record

    _, _, result = replay_record(rec)
    return result


def _blind(log: GameLog, picked: set[int]) -> Redaction:
    actions = {a.seq: tuple(MARKER for _ in a.value) for a in log.actions if a.seq in picked and a.value}
    texts = tuple((v, MARKER) for a in log.actions if a.seq in picked for v in a.value)
    return Redaction(actions, {}, texts, False, sum(len(v) for v in actions.values()))


def member_erasure(log: GameLog, key: str) -> GameErasure:
    """The plan that erases member ``key`` from one game: their written texts redacted
    (``redact_log``), for ``storage.people.erase_games`` to write."""
    seats = {s.seat for s in log.seats if s.user_key == key}

    def whose(_seq: int, seat: int, source: str, actor: str) -> bool:
        return actor == key or (seat in seats and source == ActionSource.HUMAN)

    red = redact_log(log, whose)
    assert log.row.id is not None
    result = red.result if log.row.result is not None else None
    return GameErasure(log.row.id, red.actions, red.events, red.texts, red.replays, result)
