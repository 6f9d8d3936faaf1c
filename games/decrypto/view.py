"""The view a Decrypto seat reads: its typed keys and what each seat may know in each phase."""

from __future__ import annotations

from typing import Any, TypedDict

from games.base import Observation, Seat, visible
from games.decrypto.config import BENCH_INTERCEPTOR, TEAM_LABELS, Variant, code_id, team_count
from games.decrypto.state import (
    DecryptoState,
    Phase,
    decoder,
    encoder,
    hint_history,
    keyword_map,
    members,
    result,
    role_of,
    team_of,
    team_score,
    to_act,
    tokens,
    used_codes,
)

# --------------------------------------------------------------------------- the view a seat reads


class CurrentHints(TypedDict):
    team: str
    encoder: Seat
    hints: list[str]


class _VariantKeys(TypedDict, total=False):
    # total=False rather than NotRequired: with postponed annotations Python 3.11 cannot see
    # NotRequired inside a string, and would count these keys as required.
    interceptor: Seat
    """Benchmark only: the interceptor's seat."""
    scores: dict[str, int]
    """Teams only: interceptions minus miscommunications per team."""


class DecryptoView(_VariantKeys):
    """``Observation.view`` of Decrypto: what one seat may know (see ``Decrypto.observe``)."""

    variant: str
    seat: Seat
    role: str
    team: str | None
    teams: dict[str, list[Seat]]
    keywords: dict[str, str] | None
    round: int
    max_rounds: int
    code: str | None
    your_hints: list[str] | None
    current_hints: CurrentHints | None
    task: str | None
    your_guess: str | list[str] | None
    encoders: dict[str, Seat]
    decoders: dict[str, Seat]
    tokens: dict[str, Any]
    hint_history: dict[str, Any]
    code_history: list[str] | dict[str, list[str]]
    turns: list[dict[str, Any]]
    to_act: list[Seat]
    result: str | None


def observe_seat(game_id: str, s: DecryptoState, seat: Seat) -> Observation:
    """What ``seat`` may know. View keys:

    - ``variant``; ``seat``; ``role``: "encoder", "decoder", "interceptor" (benchmark seat 2)
      or "teammate" (teams: neither encoding nor decoding this round); roles rotate each
      round in teams, and a teams decoder also intercepts the other team from round 2.
    - ``team``: "A" or "B" (benchmark: "A" for encoder and decoder, None for the interceptor);
      ``teams``: {"A": [seats], "B": [seats]} (benchmark: {"A": [0, 1]}).
    - ``keywords``: {"1": word, ..., "4": word} of the seat's own team, or None
      (the interceptor, and nobody sees the other team's).
    - ``round`` (the benchmark's turn number, 1-based) and ``max_rounds`` (``max_turns`` in the benchmark).
    - ``code``: this round's code "3-1-4" for the encoder until it is revealed, else None.
    - ``your_hints``: hints this seat wrote this round and not yet revealed (teams), else None.
    - ``current_hints``: {"team", "encoder", "hints": [3 hints]} being guessed now, else None.
    - ``task``: what this seat must do now ("write hints", "guess your team's code",
      "intercept Team B's code", "guess the other team's keywords") or None.
    - ``your_guess``: this seat's guess submitted in the current step (hidden from others), else None.
    - ``encoders`` / ``decoders``: {team: seat} this round; ``interceptor``: benchmark seat 2.
    - ``tokens``: benchmark {"interceptions", "miscommunications"}; teams
      {"A": {"interceptions", "miscommunications"}, "B": {...}}.
    - ``hint_history``: benchmark {"1": [hints for keyword 1, oldest first], ..., "4": [...]};
      teams {"A": {"1": [...], ...}, "B": {...}}.
    - ``code_history``: benchmark ["3-1-4", ...]; teams {"A": [...], "B": [...]}.
    - ``turns``: every resolved set of hints, oldest first: round, team, encoder, code,
      hints, hints_by_digit, decoder, decoder_guess, interceptor, interceptor_guess,
      miscommunication, interception.
    - ``to_act``: seats that still owe a move; ``scores`` (teams): interceptions minus miscommunications.
    - ``result``: the result summary once the game is over, else None.
    """
    bench = s.config.variant is Variant.BENCHMARK
    n_teams = team_count(s.config)
    team = team_of(s, seat)
    playing = s.phase is not Phase.OVER
    revealed_now = {r.team for r in s.history if r.round == s.round}
    code = None
    if team is not None and playing and s.phase in (Phase.ENCODE, Phase.DECODE):
        if seat == encoder(s, team) and team not in revealed_now:
            code = code_id(s.codes[team])
    your_hints = None
    if not bench and team is not None and playing and s.phase in (Phase.ENCODE, Phase.DECODE):
        mine = s.hints[team]
        unread = s.phase is Phase.ENCODE or (s.decoding < team)
        if seat == encoder(s, team) and mine is not None and unread:
            your_hints = list(mine)
    current: CurrentHints | None = None
    if s.phase is Phase.DECODE:
        hints = s.hints[s.decoding]
        assert hints is not None
        current = {"team": TEAM_LABELS[s.decoding], "encoder": encoder(s, s.decoding), "hints": list(hints)}
    pending = dict(s.pending) if s.phase is Phase.DECODE else {}
    tb = dict(s.tiebreak) if s.phase is Phase.TIEBREAK else {}
    res = result(s)
    view: DecryptoView = {
        "variant": s.config.variant.value,
        "seat": seat,
        "role": role_of(s, seat).value,
        "team": None if team is None else TEAM_LABELS[team],
        "teams": {TEAM_LABELS[t]: list(members(s, t)) for t in range(n_teams)},
        "keywords": None if team is None else keyword_map(s.keywords[team]),
        "round": s.round,
        "max_rounds": s.config.max_turns if bench else s.config.max_rounds,
        "code": code,
        "your_hints": your_hints,
        "current_hints": current,
        "task": _task(s, seat),
        "your_guess": list(tb[seat]) if seat in tb else pending.get(seat),
        "encoders": {TEAM_LABELS[t]: encoder(s, t) for t in range(n_teams)},
        "decoders": {TEAM_LABELS[t]: decoder(s, t) for t in range(n_teams)},
        "tokens": tokens(s),
        "hint_history": hint_history(s, 0) if bench else {TEAM_LABELS[t]: hint_history(s, t) for t in range(2)},
        "code_history": (
            [code_id(c) for c in used_codes(s, 0)]
            if bench
            else {TEAM_LABELS[t]: [code_id(c) for c in used_codes(s, t)] for t in range(2)}
        ),
        "turns": [r.to_json() for r in s.history],
        "to_act": sorted(to_act(s)),
        "result": None if res is None else res.summary,
    }
    if bench:
        view["interceptor"] = BENCH_INTERCEPTOR
    else:
        view["scores"] = {TEAM_LABELS[t]: team_score(s, t) for t in range(2)}
    return Observation(game=game_id, seat=seat, phase=s.phase.value, view=view, events=visible(s.log, seat))

def _task(s: DecryptoState, seat: Seat) -> str | None:
    if seat not in to_act(s):
        return None
    if s.phase is Phase.ENCODE:
        return "write hints"
    if s.phase is Phase.DECODE:
        if team_of(s, seat) == s.decoding:
            return "guess your team's code"
        return "intercept the team's code" if s.config.variant is Variant.BENCHMARK else f"intercept Team {TEAM_LABELS[s.decoding]}'s code"
    if s.phase is Phase.TIEBREAK:
        return "guess the other team's keywords"
    return None
