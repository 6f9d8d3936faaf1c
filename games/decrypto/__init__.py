"""Decrypto: the code-guessing word game (the benchmark paper's three-player game and the
board game's teams), as a pure engine.

One job per module: ``config`` (constants, variants, the config and deal as data),
``state`` (the frozen records and the questions rules ask of them), ``transitions``
(rounds, reveals, tokens, the tie-break, the end), ``rules`` (the engine, opening with the
rules it plays in prose), ``view`` (the typed view a seat reads), ``narration`` (events and
rules in words), ``metrics`` (numbers over finished games). ``DESCRIPTOR`` registers it.
"""

from __future__ import annotations

from games.decrypto.config import (
    ALL_CODE_IDS,
    ALL_CODES,
    BENCH_DECODER,
    BENCH_ENCODER,
    BENCH_INTERCEPTOR,
    BENCHMARK_SEATS,
    DIGITS,
    HINT_MAX_CHARS,
    HINT_MAX_WORDS,
    KEYWORD_GUESS_MAX_CHARS,
    KEYWORD_GUESS_MAX_WORDS,
    TEAM_LABELS,
    TEAMS_MAX_SEATS,
    TEAMS_MIN_SEATS,
    VARIANTS,
    DecryptoConfig,
    DecryptoDeal,
    Variant,
    code_id,
)
from games.decrypto.metrics import read_seats, summarize
from games.decrypto.rules import GAME, Decrypto
from games.decrypto.state import DecryptoState, GuessRecord, Outcome, Phase, Role, TurnRecord
from games.decrypto.view import CurrentHints, DecryptoView
from games.descriptor import (
    ClueScoring,
    DealFormat,
    GameDescriptor,
    Golden,
    MenuEntry,
    Metric,
    MetricScope,
    SeatRole,
    SeatShape,
    Side,
    SneakScoring,
)

_TEAM = (SeatRole.TEAM_MEMBER,)
_BENCH = (SeatRole.ENCODER, SeatRole.DECODER, SeatRole.INTERCEPTOR)
_BOTH = (*_BENCH, *_TEAM)
_GAMES = MetricScope.GAMES

DESCRIPTOR = GameDescriptor(
    id=Decrypto.id,
    title="Decrypto",
    blurb="give hints so your teammate decodes a 3-digit code; the interceptor listens in",
    engine=GAME,
    seats=(BENCHMARK_SEATS, TEAMS_MAX_SEATS),
    variants=tuple(Variant),
    roles=_BOTH,
    sides=(Side.TEAM, Side.INTERCEPTOR, Side.TEAM_A, Side.TEAM_B),
    seat_shapes={Variant.BENCHMARK.value: SeatShape(_BENCH, sides=((BENCH_ENCODER, BENCH_DECODER), (BENCH_INTERCEPTOR,)))},
    metrics=(
        Metric("miscommunications", "miscommunication tokens of the game (benchmark) or of the seat's team",
               MetricScope.SEAT, _BOTH, "misc"),
        Metric("interceptions", "interception tokens of the game (benchmark) or of the seat's team",
               MetricScope.SEAT, _BOTH, "int"),
        Metric("turns", "turns the game lasted", MetricScope.SEAT, _BENCH, "turns"),
        Metric("rounds", "rounds the game lasted", MetricScope.SEAT, _TEAM),
        Metric("encoded", "rounds the seat was its team's encoder", MetricScope.SEAT, _TEAM),
        Metric("decoded", "rounds the seat was its team's decoder", MetricScope.SEAT, _TEAM),
        Metric("games", "games", _GAMES),
        Metric("miscommunications", "miscommunications (total)", _GAMES),
        Metric("interceptions", "interceptions (total)", _GAMES),
        Metric("miscommunications_per_game", "miscommunications per game", _GAMES),
        Metric("interceptions_per_game", "interceptions per game", _GAMES),
        Metric("team_win_rate", "encoder-decoder win rate", _GAMES, _BENCH[:2]),
        Metric("mean_turns", "mean turns per game", _GAMES),
        Metric("ended_by", "games ended by", _GAMES),
        Metric("win_rate", "win rate", _GAMES, _TEAM),
        Metric("draw_rate", "draw rate", _GAMES),
        Metric("mean_rounds", "mean rounds per game", _GAMES),
    ),
    read_seats=read_seats,
    summarize=summarize,
    clue_kinds=frozenset({"hints"}),
    sneak=SneakScoring.ON_REQUEST,
    clue_scoring=ClueScoring.ONE_SECRET,
    menu=MenuEntry(order=1),
    view=DecryptoView,
    deal=DealFormat(("keywords", "codes"), "keywords: each team's four keywords in order; codes: {\"A:3\": [d, d, d]} "
                    "per team and turn (the benchmark's one team is A); any key left out is drawn from the seed"),
    golden=(Golden("benchmark", 3, 1), Golden("benchmark", 3, 2), Golden("teams", 4, 1), Golden("teams", 5, 2)),
)
"""What the rest of the system knows of Decrypto (``games.catalog``)."""

__all__ = [
    "ALL_CODES", "ALL_CODE_IDS", "BENCHMARK_SEATS", "BENCH_DECODER", "BENCH_ENCODER", "BENCH_INTERCEPTOR", "DESCRIPTOR",
    "DIGITS", "GAME", "HINT_MAX_CHARS", "HINT_MAX_WORDS", "KEYWORD_GUESS_MAX_CHARS", "KEYWORD_GUESS_MAX_WORDS",
    "TEAMS_MAX_SEATS", "TEAMS_MIN_SEATS", "TEAM_LABELS", "VARIANTS", "CurrentHints", "Decrypto", "DecryptoConfig",
    "DecryptoDeal", "DecryptoState", "DecryptoView", "GuessRecord", "Outcome", "Phase", "Role", "TurnRecord", "Variant",
    "code_id",
]
