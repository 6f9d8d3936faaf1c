"""Who-is-Spy descriptions as SNEAK instances.

m = each description, w_s = the speaker's word (Mr. White, who has none, is
scored as a bluff against the villagers' word). W = both words of the pair plus
``SPY_DISTRACTORS`` words, one from each of as many other pairs of the game's
deck, drawn with ``rng(seed, "sneak-spy-candidates", villager word, spy word)``.
Leakage then means "an outsider who sees the description among plausible game
words could name the speaker's word"; telling apart the two words of the pair
is exactly what both sides try to do. Category: ``SPY_CATEGORY``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from games import decks
from games.base import normalize, rng
from models.eval.games import SneakGame, clue_kinds
from models.eval.instances import ActionLike, EventLike, Instance, LogLike, only_seat, speaker_of, walk

GAME = "spy"
SPY_DISTRACTORS = 10
SPY_CATEGORY = "Who-is-Spy secret words"


class Role(StrEnum):
    VILLAGER = "villager"
    SPY = "spy"
    MR_WHITE = "mr_white"



def _pair_deck(config: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    raw = config.get("deck")
    return decks.parse_pairs(raw) if raw else decks.pairs()


def spy_candidates(villager: str, spy: str, seed: int, deck: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """Both words of the pair, then one word of each of ``SPY_DISTRACTORS`` other pairs (seeded)."""
    taken = {normalize(villager), normalize(spy)}
    others = [p for p in deck if not ({normalize(p[0]), normalize(p[1])} & taken)]
    r = rng(seed, "sneak-spy-candidates", villager, spy)
    words: list[str] = []
    for a, b in r.sample(others, min(SPY_DISTRACTORS, len(others))):
        w = a if r.random() < 0.5 else b
        if normalize(w) not in taken:
            taken.add(normalize(w))
            words.append(w)
    return (villager, spy, *words)


def spy_instances(log: LogLike) -> list[Instance]:
    words: dict[int, str | None] = {}
    out: list[Instance] = []
    seed = log.row.seed or 0
    clues = clue_kinds(GAME)  # which actions are clues: the game's descriptor says
    pending: list[ActionLike] = []

    def on_event(e: EventLike) -> None:
        if e.kind == "word":
            seat = only_seat(e.audience)
            if seat is not None:
                words[seat] = None if e.data.get("blank") else e.data.get("word")

    def on_action(a: ActionLike) -> None:
        if a.kind in clues and a.value:
            pending.append(a)

    walk(log, on_event, on_action)
    given = [w for w in words.values() if w]
    distinct = sorted(set(given), key=lambda w: (-given.count(w), given.index(w)))
    if len(distinct) != 2:
        return []  # a log without both words of the pair has nothing to score against
    villager, spy = distinct
    cands = spy_candidates(villager, spy, seed, _pair_deck(log.row.config))
    for a in pending:
        word = words.get(a.seat)
        role = Role.MR_WHITE if word is None else Role.VILLAGER if word == villager else Role.SPY
        who, kind = speaker_of(a)
        out.append(Instance(
            game=GAME, category=SPY_CATEGORY, candidates=cands, secret=word or villager,
            message=a.value[0], role=role.value, bluff=role is Role.MR_WHITE, seat=a.seat, speaker=who,
            speaker_kind=kind, game_id=log.row.id, action_seq=a.seq, seed=seed,
        ))
    return out


SNEAK = SneakGame(GAME, spy_instances)
