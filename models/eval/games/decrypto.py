"""Decrypto hints as SNEAK instances.

Each hint of a hints action is one instance (``part`` = its position in the
code), w_s = the keyword the hint was written for (read from the encoder's
private code event), W = the team's four keywords plus ``DECRYPTO_DISTRACTORS``
keywords drawn from the game's keyword deck with ``rng(seed,
"sneak-decrypto-candidates", team)`` (never one of the game's keywords). This
measures what an interceptor who knew the candidates could learn from the one
hint, without the hint history. Category: ``DECRYPTO_CATEGORY``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games import decks
from games.base import normalize, rng
from models.eval.games import SneakGame, clue_kinds
from models.eval.instances import ActionLike, EventLike, Instance, LogLike, only_seat, speaker_of, walk

GAME = "decrypto"
DECRYPTO_DISTRACTORS = 8
DECRYPTO_CATEGORY = "Decrypto keywords"
ENCODER = "encoder"



def _keyword_deck(config: Mapping[str, Any]) -> tuple[str, ...]:
    raw = config.get("deck")
    return decks.parse_keywords(raw) if raw else decks.keywords()


def decrypto_candidates(team_keywords: Sequence[str], all_keywords: Sequence[str], team: str, seed: int,
                        deck: Sequence[str]) -> tuple[str, ...]:
    """The team's four keywords, then ``DECRYPTO_DISTRACTORS`` deck keywords not in the game (seeded per team)."""
    taken = {normalize(k) for k in all_keywords}
    pool = [w for w in deck if normalize(w) not in taken]
    picks = rng(seed, "sneak-decrypto-candidates", team).sample(pool, min(DECRYPTO_DISTRACTORS, len(pool)))
    return (*team_keywords, *picks)


def decrypto_instances(log: LogLike) -> list[Instance]:
    keywords: dict[str, tuple[str, ...]] = {}
    code_of: dict[int, tuple[str, list[int]]] = {}  # encoder seat -> (team, code) of its latest code
    out: list[Instance] = []
    seed = log.row.seed or 0
    clues = clue_kinds(GAME)  # which actions are clues: the game's descriptor says
    deck = _keyword_deck(log.row.config)

    def on_event(e: EventLike) -> None:
        if e.kind == "keywords":
            kw = e.data["keywords"]
            keywords[str(e.data["team"])] = tuple(kw[str(d)] for d in range(1, len(kw) + 1))
        elif e.kind == "code":
            seat = only_seat(e.audience)
            if seat is not None:
                code_of[seat] = (str(e.data["team"]), [int(x) for x in str(e.data["code"]).split("-")])

    def on_action(a: ActionLike) -> None:
        if a.kind not in clues or a.seat not in code_of:
            return
        team, code = code_of[a.seat]
        team_kw = keywords.get(team)
        if team_kw is None:
            return
        every = [k for ks in keywords.values() for k in ks]
        cands = decrypto_candidates(team_kw, every, team, seed, deck)
        who, kind = speaker_of(a)
        for part, (digit, hint) in enumerate(zip(code, a.value, strict=False)):
            out.append(Instance(
                game=GAME, category=DECRYPTO_CATEGORY, candidates=cands, secret=team_kw[digit - 1],
                message=hint, role=ENCODER, seat=a.seat, speaker=who, speaker_kind=kind,
                game_id=log.row.id, action_seq=a.seq, part=part, seed=seed,
            ))

    walk(log, on_event, on_action)
    return out


SNEAK = SneakGame(GAME, decrypto_instances)
