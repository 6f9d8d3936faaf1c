"""Decrypto's transitions: a round starts, hints are revealed and guessed, tokens decide, the tie-break, the end."""

from __future__ import annotations

import dataclasses

from games.base import Audience, Event, rng
from games.decrypto.config import ALL_CODES, TEAM_LABELS, Variant, code_id, team_count
from games.decrypto.state import (
    DecryptoState,
    GuessRecord,
    Outcome,
    Phase,
    Role,
    TurnRecord,
    all_keywords,
    decoder,
    encoder,
    guessers,
    interceptions,
    miscommunications,
    result,
    team_score,
    tiebreak_correct,
    tiebreak_guesser,
    tokens,
    used_codes,
    when,
)

# --------------------------------------------------------------------------- transitions


def start_round(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    teams = range(team_count(s.config))
    codes = []
    deal = s.config.deal
    for t in teams:
        fixed = deal.code(t, s.round) if deal else None
        if fixed is not None:
            codes.append(fixed)
            continue
        # Codes a deal fixes for later turns are never drawn: the team would get them twice.
        used = set(used_codes(s, t)) | (deal.reserved(t) if deal else frozenset())
        fresh = [c for c in ALL_CODES if c not in used]
        codes.append(rng(s.seed, "code", t, s.round).choice(fresh))
    s = dataclasses.replace(
        s, phase=Phase.ENCODE, codes=tuple(codes), hints=tuple(None for _ in teams), decoding=0, pending=()
    )
    events: list[Event] = [
        Event(
            "round",
            {
                **when(s),
                "encoders": {TEAM_LABELS[t]: encoder(s, t) for t in teams},
                "decoders": {TEAM_LABELS[t]: decoder(s, t) for t in teams},
            },
        )
    ]
    for t in teams:
        enc = encoder(s, t)
        events.append(
            Event("code", {**when(s), "team": TEAM_LABELS[t], "code": code_id(s.codes[t])}, Audience.of(enc))
        )
    return s, events


def start_decode(s: DecryptoState, team: int) -> tuple[DecryptoState, list[Event]]:
    s = dataclasses.replace(s, phase=Phase.DECODE, decoding=team, pending=())
    hints = s.hints[team]
    assert hints is not None
    return s, [
        Event(
            "hints",
            {**when(s), "team": TEAM_LABELS[team], "encoder": encoder(s, team), "hints": list(hints)},
        )
    ]


def resolve(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    team = s.decoding
    code = s.codes[team]
    hints = s.hints[team]
    assert hints is not None
    pending = dict(s.pending)
    guesses = tuple(GuessRecord(seat, role, pending[seat]) for seat, role in guessers(s))
    dec = next(g for g in guesses if g.role is Role.DECODER)
    itc = next((g for g in guesses if g.role is Role.INTERCEPTOR), None)
    record = TurnRecord(
        round=s.round,
        team=team,
        encoder=encoder(s, team),
        code=code,
        hints=hints,
        guesses=guesses,
        miscommunication=dec.guess != code_id(code),
        interception=itc is not None and itc.guess == code_id(code),
    )
    s = dataclasses.replace(s, history=(*s.history, record), pending=())
    events = [Event("reveal", {**record.to_json(), "tokens": tokens(s)})]
    if s.config.variant is Variant.BENCHMARK:
        s, more = _after_benchmark_turn(s)
    elif team == 0:
        s, more = start_decode(s, 1)
    else:
        s, more = _after_teams_round(s)
    return s, events + more


def _next_round(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    return start_round(dataclasses.replace(s, round=s.round + 1))


def _benchmark_outcome(s: DecryptoState) -> Outcome | None:
    cfg = s.config
    itc, mis = interceptions(s, None), miscommunications(s, 0)
    caught, lost = itc >= cfg.max_interceptions, mis >= cfg.max_miscommunications
    if caught and lost:
        return Outcome(None, True, False, "both", f"The interceptor wins: {itc} interceptions and {mis} miscommunications on turn {s.round}.")
    if caught:
        return Outcome(None, True, False, "interceptions", f"The interceptor wins with {itc} interceptions on turn {s.round}.")
    if lost:
        return Outcome(None, True, False, "miscommunications", f"The interceptor wins: the team made {mis} miscommunications by turn {s.round}.")
    if s.round >= cfg.max_turns:
        return Outcome(0, False, False, "survived", f"The encoder and decoder win: they survived all {s.round} turns.")
    return None


def _after_benchmark_turn(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    if s.decided is not None:  # play_on, already decided: the later turns change nothing
        return _finish(s, s.decided) if s.round >= s.config.max_turns else _next_round(s)
    outcome = _benchmark_outcome(s)
    if outcome is None:
        return _next_round(s)
    if not s.config.play_on or s.round >= s.config.max_turns:
        return _finish(s, outcome)
    s = dataclasses.replace(s, decided=outcome, decided_turn=s.round)
    s, events = _next_round(s)
    note = Event("decided", {"summary": outcome.summary, "reason": outcome.reason, "turn": s.decided_turn,
                             "max_turns": s.config.max_turns})
    return s, [note, *events]


def _after_teams_round(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    cfg = s.config
    wins = [
        interceptions(s, t) >= cfg.max_interceptions or miscommunications(s, 1 - t) >= cfg.max_miscommunications
        for t in range(2)
    ]
    if wins[0] != wins[1]:
        t = 0 if wins[0] else 1
        if interceptions(s, t) >= cfg.max_interceptions:
            why = f"Team {TEAM_LABELS[t]} wins with {interceptions(s, t)} interceptions in round {s.round}."
        else:
            why = f"Team {TEAM_LABELS[t]} wins: Team {TEAM_LABELS[1 - t]} made {miscommunications(s, 1 - t)} miscommunications by round {s.round}."
        return _finish(s, Outcome(t, False, False, "tokens", why))
    if not wins[0] and s.round < cfg.max_rounds:
        return _next_round(s)
    a, b = team_score(s, 0), team_score(s, 1)
    cause = "both teams reached the token limit" if wins[0] else f"after {s.round} rounds nobody won on tokens"
    if a != b:
        t = 0 if a > b else 1
        return _finish(
            s,
            Outcome(t, False, False, "score", f"Team {TEAM_LABELS[t]} wins on score {max(a, b)} to {min(a, b)} ({cause})."),
        )
    s = dataclasses.replace(s, phase=Phase.TIEBREAK, pending=(), tiebreak=())
    tiebreakers = {TEAM_LABELS[t]: tiebreak_guesser(s, t) for t in range(2)}
    return s, [Event("tiebreak", {**when(s), "scores": {"A": a, "B": b}, "cause": cause, "guessers": tiebreakers})]


def resolve_tiebreak(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    by_seat = dict(s.tiebreak)
    guesses = {t: by_seat[tiebreak_guesser(s, t)] for t in range(2)}
    correct = {t: tiebreak_correct(s, t, guesses[t]) for t in range(2)}
    event = Event(
        "tiebreak_result",
        {
            "guesses": {TEAM_LABELS[t]: list(guesses[t]) for t in range(2)},
            "correct": {TEAM_LABELS[t]: correct[t] for t in range(2)},
            "keywords": {TEAM_LABELS[t]: list(s.keywords[t]) for t in range(2)},
        },
    )
    if correct[0] != correct[1]:
        t = 0 if correct[0] > correct[1] else 1
        outcome = Outcome(
            t, False, False, "tiebreak",
            f"Team {TEAM_LABELS[t]} wins the tie-break, naming {correct[t]} of the other team's keywords against {correct[1 - t]}.",
        )
    else:
        outcome = Outcome(None, False, True, "tie", f"A draw: tied on score and on the tie-break ({correct[0]} keywords each).")
    s, more = _finish(s, outcome)
    return s, [event, *more]


def _finish(s: DecryptoState, outcome: Outcome) -> tuple[DecryptoState, list[Event]]:
    s = dataclasses.replace(s, phase=Phase.OVER, outcome=outcome, pending=())
    res = result(s)
    assert res is not None
    return s, [
        Event(
            "game_over",
            {
                "summary": outcome.summary,
                "reason": outcome.reason,
                "winners": sorted(res.winners),
                "keywords": all_keywords(s),
                "tokens": tokens(s),
            },
        )
    ]
