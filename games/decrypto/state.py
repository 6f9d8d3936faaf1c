"""Decrypto's state: phases, roles, the frozen records of a game, and the questions every rule asks of them
(who encodes, decodes and intercepts, the tokens, the result, the deal so far)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from games.base import ABSTAIN, Event, Result, Seat, normalize
from games.decrypto.config import BENCH_DECODER, BENCH_ENCODER, BENCH_INTERCEPTOR, DIGITS, TEAM_LABELS, DecryptoConfig, Variant, code_id


class Phase(Enum):
    ENCODE = "encode"  # encoders write hints
    DECODE = "decode"  # one team's hints are being guessed (decoder and interceptor at once)
    TIEBREAK = "tiebreak"  # teams only: each team guesses the other's keywords
    OVER = "over"


class Role(Enum):
    ENCODER = "encoder"
    DECODER = "decoder"
    INTERCEPTOR = "interceptor"  # benchmark only; in teams the other team's decoder intercepts
    TEAMMATE = "teammate"  # teams: neither encoding nor decoding this round


# --------------------------------------------------------------------------- state


@dataclass(frozen=True)
class GuessRecord:
    """One guess at a team's code: by its decoder, or by an interceptor."""

    seat: Seat
    role: Role  # DECODER or INTERCEPTOR (in teams: the other team's decoder intercepting)
    guess: str  # a code id "3-1-4" or "abstain"


@dataclass(frozen=True)
class TurnRecord:
    """One resolved set of hints: what everyone learns when the code is revealed."""

    round: int
    team: int
    encoder: Seat
    code: tuple[int, ...]
    hints: tuple[str, ...]
    guesses: tuple[GuessRecord, ...]
    miscommunication: bool
    interception: bool

    def guess_of(self, role: Role) -> GuessRecord | None:
        return next((g for g in self.guesses if g.role is role), None)

    def to_json(self) -> dict[str, Any]:
        dec, itc = self.guess_of(Role.DECODER), self.guess_of(Role.INTERCEPTOR)
        return {
            "round": self.round,
            "team": TEAM_LABELS[self.team],
            "encoder": self.encoder,
            "code": code_id(self.code),
            "hints": list(self.hints),
            "hints_by_digit": {str(d): h for d, h in zip(self.code, self.hints, strict=False)},
            "decoder": dec.seat if dec else None,
            "decoder_guess": dec.guess if dec else None,
            "interceptor": itc.seat if itc else None,
            "interceptor_guess": itc.guess if itc else None,
            "miscommunication": self.miscommunication,
            "interception": self.interception,
        }


@dataclass(frozen=True)
class Outcome:
    winning_team: int | None  # None: benchmark interceptor wins, or a draw (see ``draw``)
    interceptor_wins: bool
    draw: bool
    reason: str  # a machine-readable reason: interceptions, miscommunications, both, survived, tokens, score, tiebreak, tie
    summary: str


@dataclass(frozen=True)
class DecryptoState:
    config: DecryptoConfig
    seats: int
    seed: int
    phase: Phase
    keywords: tuple[tuple[str, ...], ...]  # per team, keyword i+1 at index i
    round: int  # 1-based; the benchmark calls it a turn
    codes: tuple[tuple[int, ...], ...]  # this round's code per team
    hints: tuple[tuple[str, ...] | None, ...]  # this round's hints per team, None until written
    decoding: int  # the team whose hints are being guessed (DECODE)
    pending: tuple[tuple[Seat, str], ...]  # guesses submitted in this DECODE or TIEBREAK step
    tiebreak: tuple[tuple[Seat, tuple[str, ...]], ...]  # tie-break keyword guesses so far
    history: tuple[TurnRecord, ...]
    outcome: Outcome | None
    log: tuple[Event, ...]
    decided: Outcome | None = None  # play_on: the outcome the tokens decided, while play goes on
    decided_turn: int | None = None  # play_on: the turn that decided it


# --------------------------------------------------------------------------- seats and tokens


def members(s: DecryptoState, team: int) -> tuple[Seat, ...]:
    if s.config.variant is Variant.BENCHMARK:
        return (BENCH_ENCODER, BENCH_DECODER)
    return tuple(seat for seat in range(s.seats) if seat % 2 == team)


def team_of(s: DecryptoState, seat: Seat) -> int | None:
    if s.config.variant is Variant.BENCHMARK:
        return 0 if seat in (BENCH_ENCODER, BENCH_DECODER) else None
    return seat % 2


def encoder(s: DecryptoState, team: int) -> Seat:
    if s.config.variant is Variant.BENCHMARK:
        return BENCH_ENCODER
    m = members(s, team)
    return m[(s.round - 1) % len(m)]


def decoder(s: DecryptoState, team: int) -> Seat:
    if s.config.variant is Variant.BENCHMARK:
        return BENCH_DECODER
    m = members(s, team)
    return m[s.round % len(m)]


def interceptor(s: DecryptoState, team: int) -> Seat | None:
    """Who tries to intercept ``team``'s code this round (None in the teams' first round)."""
    if s.config.variant is Variant.BENCHMARK:
        return BENCH_INTERCEPTOR
    return decoder(s, 1 - team) if s.round >= 2 else None


def role_of(s: DecryptoState, seat: Seat) -> Role:
    team = team_of(s, seat)
    if team is None:
        return Role.INTERCEPTOR
    if seat == encoder(s, team):
        return Role.ENCODER
    if seat == decoder(s, team):
        return Role.DECODER
    return Role.TEAMMATE


def tiebreak_guesser(s: DecryptoState, team: int) -> Seat:
    return decoder(s, team)


def interceptions(s: DecryptoState, team: int | None) -> int:
    """Interception tokens won by ``team`` (None: the benchmark interceptor)."""
    if team is None:
        return sum(r.interception for r in s.history)
    return sum(r.interception for r in s.history if r.team != team)


def miscommunications(s: DecryptoState, team: int) -> int:
    return sum(r.miscommunication for r in s.history if r.team == team)


def tokens(s: DecryptoState) -> dict[str, Any]:
    if s.config.variant is Variant.BENCHMARK:
        return {"interceptions": interceptions(s, None), "miscommunications": miscommunications(s, 0)}
    return {
        TEAM_LABELS[t]: {"interceptions": interceptions(s, t), "miscommunications": miscommunications(s, t)}
        for t in range(2)
    }


def team_score(s: DecryptoState, team: int) -> int:
    return interceptions(s, team) - miscommunications(s, team)


def used_codes(s: DecryptoState, team: int) -> tuple[tuple[int, ...], ...]:
    return tuple(r.code for r in s.history if r.team == team)


def hint_history(s: DecryptoState, team: int) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {str(d): [] for d in DIGITS}
    for r in s.history:
        if r.team == team:
            for d, h in zip(r.code, r.hints, strict=False):
                out[str(d)].append(h)
    return out


def when(s: DecryptoState) -> dict[str, int]:
    """Event key for the current round, in the variant's own word (the paper says "turn")."""
    return {"turn": s.round} if s.config.variant is Variant.BENCHMARK else {"round": s.round}


def keyword_map(words: Sequence[str]) -> dict[str, str]:
    return {str(i + 1): w for i, w in enumerate(words)}


def guessers(s: DecryptoState) -> tuple[tuple[Seat, Role], ...]:
    out: list[tuple[Seat, Role]] = [(decoder(s, s.decoding), Role.DECODER)]
    itc = interceptor(s, s.decoding)
    if itc is not None:
        out.append((itc, Role.INTERCEPTOR))
    return tuple(out)


def tiebreak_correct(s: DecryptoState, team: int, guesses: tuple[str, ...]) -> int:
    if guesses == (ABSTAIN,):
        return 0
    target = s.keywords[1 - team]
    return sum(normalize(g) == normalize(k) for g, k in zip(guesses, target, strict=False))


def all_keywords(s: DecryptoState) -> dict[str, Any]:
    if s.config.variant is Variant.BENCHMARK:
        return keyword_map(s.keywords[0])
    return {TEAM_LABELS[t]: keyword_map(s.keywords[t]) for t in range(2)}


def result(s: DecryptoState) -> Result | None:
    o = s.outcome
    if o is None:
        return None
    if o.draw:
        winners: frozenset[Seat] = frozenset()
    elif o.interceptor_wins:
        winners = frozenset({BENCH_INTERCEPTOR})
    else:
        assert o.winning_team is not None
        winners = frozenset(members(s, o.winning_team))
    scores = {seat: (0.5 if o.draw else 1.0 if seat in winners else 0.0) for seat in range(s.seats)}
    details: dict[str, Any] = {
        "variant": s.config.variant.value,
        "reason": o.reason,
        "keywords": all_keywords(s),
        "history": [r.to_json() for r in s.history],
    }
    if s.config.variant is Variant.BENCHMARK:
        # With play_on the game is measured where it was decided; the turns played on stay in the history.
        upto = s.decided_turn if s.decided_turn is not None else s.round
        decided = s.history[:upto]
        details.update(
            turns=upto,
            miscommunications=sum(r.miscommunication for r in decided),
            interceptions=sum(r.interception for r in decided),
            played_on=s.round - upto,
            team_won=not o.interceptor_wins,
            codes=[code_id(r.code) for r in s.history],
            hints=[list(r.hints) for r in s.history],
            decoder_guesses=[g.guess if (g := r.guess_of(Role.DECODER)) else None for r in s.history],
            interceptor_guesses=[g.guess if (g := r.guess_of(Role.INTERCEPTOR)) else None for r in s.history],
        )
    else:
        by_seat = dict(s.tiebreak)
        details.update(
            rounds=s.round,
            tokens=tokens(s),
            team_scores={TEAM_LABELS[t]: team_score(s, t) for t in range(2)},
            teams={TEAM_LABELS[t]: list(members(s, t)) for t in range(2)},
            winning_team=None if o.winning_team is None else TEAM_LABELS[o.winning_team],
            tiebreak=(
                {
                    TEAM_LABELS[t]: {
                        "guesses": list(by_seat[tiebreak_guesser(s, t)]),
                        "correct": tiebreak_correct(s, t, by_seat[tiebreak_guesser(s, t)]),
                    }
                    for t in range(2)
                }
                if len(by_seat) == 2
                else None
            ),
        )
    details["deal"] = deal_of(s)  # exports carry the result: with the deal they replay without a seed
    return Result(winners=winners, summary=o.summary, scores=scores, details=details)


def deal_of(s: DecryptoState) -> dict[str, Any]:
    codes = {f"{TEAM_LABELS[r.team]}:{r.round}": list(r.code) for r in s.history}
    for t, c in enumerate(s.codes):
        codes.setdefault(f"{TEAM_LABELS[t]}:{s.round}", list(c))
    return {"keywords": [list(k) for k in s.keywords], "codes": codes}


def to_act(s: DecryptoState) -> frozenset[Seat]:
    """Seats that owe a move now: encoders without hints, guessers without a guess; empty when over."""
    if s.phase is Phase.ENCODE:
        return frozenset(encoder(s, t) for t, h in enumerate(s.hints) if h is None)
    if s.phase is Phase.DECODE:
        done = {seat for seat, _ in s.pending}
        return frozenset(seat for seat, _ in guessers(s) if seat not in done)
    if s.phase is Phase.TIEBREAK:
        done = {seat for seat, _ in s.tiebreak}
        return frozenset(tiebreak_guesser(s, t) for t in range(2)) - done
    return frozenset()
