"""Decrypto: the code-guessing word game, as a pure engine with two rule sets.

Both variants share the same turn shape. A team holds four secret keywords
numbered 1-4. Each turn its encoder receives a secret code of three distinct
digits from 1-4 (24 possible codes; a team never gets the same code twice in a
game) and writes three hints, one per digit, in code order. Each hint is one or
two words (at most 30 characters; a hyphen separates words) and may not contain
any of the team's own keywords, nor a form of one (plural, -ed, -ing, -er), as a
word after normalisation (``games.text``), nor a number (``3-4-1``, ``341``):
a hint is words. The options ``hint_max_words``/``hint_max_chars`` raise the
limits (to replay recorded games). The team's decoder then guesses the code while an opponent
tries to intercept it; both pick one of the 24 codes ``"d-d-d"`` at the same
time, and the code, both guesses and the hints are revealed to everyone. A
wrong decoder guess gives the team a miscommunication token; a right opponent
guess gives the opponent an interception token. The hint history per keyword
number and the code history are public; the keywords stay secret until the end.

**benchmark** (the Decrypto benchmark paper's three-player game, exactly 3 seats):
seat 0 is the encoder, seat 1 the decoder, seat 2 the interceptor; the table
decides who sits where. The interceptor guesses every turn from turn 1. The
interceptor wins at once when it holds ``max_interceptions`` (2) interception
tokens or the team holds ``max_miscommunications`` (2) miscommunication tokens;
when both happen on the same turn the interceptor wins too (each alone would
end the game in its favour; the paper reports this outcome as "both"). The
encoder and decoder win when they get through ``max_turns`` (8) turns. As in the
paper, all 24 codes are offered to the guessers every turn; the option
``exclude_used_codes`` hides the codes the team already used.

**teams** (the board game, 4-8 seats): even seats form team A, odd seats team B
(seats 0, 2, 4, ... and 1, 3, 5, ...; teams differ by at most one player).
Each team has its own four keywords, known only to its members until the end.
In round r the team's encoder is its (r-1)-th member in seat order (cycling),
and its decoder the member after the encoder (cycling), so both roles rotate
every round and never coincide. Both encoders get their codes and write hints
at the same time; team B's hints stay hidden until they are resolved. Team A's
hints are resolved first: A's decoder guesses A's code and, from round 2, B's
decoder tries to intercept it, simultaneously; then the same for team B's
hints. At the end of a round a team wins if it holds ``max_interceptions``
interception tokens or the other team holds ``max_miscommunications``
miscommunication tokens. If exactly one team wins, it wins. If both would win
(e.g. both teams reached two miscommunications), or nobody has won after
``max_rounds`` (8) rounds, the team with the higher score (interceptions minus
miscommunications) wins. Still tied: each team's decoder of the last round
writes four guesses for the other team's keywords 1-4; a guess counts when it
equals the keyword of that number (case-insensitive, word by word), and the
team with more correct guesses wins. Still tied: a draw (no winners).

Absent players: a guess may time out as ``Action("guess", ("abstain",))``,
which counts as a wrong guess for one's own code and a failed interception; a
tie-break guess may time out as ``Action("keywords", ("abstain",))`` (no
correct guesses). Hints have no neutral move: the table seats an AI for them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum
from itertools import permutations
from typing import Any, ClassVar, TypedDict

from games import deals, decks
from games.base import (
    ABSTAIN,
    MAX_TEXT_CHARS,
    Action,
    Audience,
    Choice,
    ConfigError,
    Event,
    IllegalAction,
    Observation,
    Option,
    Result,
    Seat,
    Secret,
    Text,
    check_choice,
    check_text,
    check_turn,
    config_from_dict,
    contains_word,
    flag,
    is_abstain,
    normalize,
    one_of,
    rng,
    text_values,
    visible,
    whole_number,
)
from games.descriptor import GameDescriptor, MenuEntry, Metric, MetricScope, SeatRole, Side, SneakScoring
from games.labels import fill_labels, seat_ref
from games.text import has_number, reveals_secret

TEAM_LABELS: tuple[str, str] = ("A", "B")
DIGITS: tuple[int, ...] = (1, 2, 3, 4)
ALL_CODES: tuple[tuple[int, ...], ...] = tuple(permutations(DIGITS, 3))
ALL_CODE_IDS: tuple[str, ...] = tuple("-".join(map(str, c)) for c in ALL_CODES)
HINT_MAX_WORDS = 2
HINT_MAX_CHARS = 30
KEYWORD_GUESS_MAX_WORDS = 3
KEYWORD_GUESS_MAX_CHARS = 40
BENCHMARK_SEATS = 3
TEAMS_MIN_SEATS, TEAMS_MAX_SEATS = 4, 8
# Benchmark seats are fixed by the paper's roles; the table decides who sits where.
BENCH_ENCODER, BENCH_DECODER, BENCH_INTERCEPTOR = 0, 1, 2


class Variant(StrEnum):
    BENCHMARK = "benchmark"  # the Decrypto benchmark paper's three-player game
    TEAMS = "teams"  # the board game: two teams of 2-4


VARIANTS: tuple[str, ...] = tuple(Variant)


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


def code_id(code: Sequence[int]) -> str:
    """The option id and display form of a code: ``(3, 1, 4)`` -> ``"3-1-4"``."""
    return "-".join(str(d) for d in code)


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class DecryptoConfig:
    """Options for one game. ``max_turns`` is the benchmark's limit, ``max_rounds`` the teams' one."""

    variant: Variant = Variant.BENCHMARK
    max_turns: int = 8
    max_rounds: int = 8
    max_interceptions: int = 2
    max_miscommunications: int = 2
    exclude_used_codes: bool = False
    hint_max_words: int = HINT_MAX_WORDS
    hint_max_chars: int = HINT_MAX_CHARS
    """Hint limits: the rules' 2 words and 30 characters unless raised (e.g. to import
    recorded games whose hints broke them, marked as such by the importer)."""
    deck: tuple[str, ...] | None = None
    deal: DecryptoDeal | None = None
    """Keywords and codes fixed in advance (the rest drawn from the seed); see ``DecryptoDeal``."""


@dataclass(frozen=True)
class DecryptoDeal:
    """A Decrypto deal as data: ``{"keywords": [[4 words] per team], "codes": {"A:3": [d, d, d]}}``.

    ``keywords`` (all teams, in keyword order) may be left out to draw them; ``codes`` fixes the
    code of any team and turn ("A:1", or by team index "0:1"; the benchmark's one team is "A"),
    the others are drawn
    and never repeat a fixed one. A team never gets the same code twice: such a deal is refused.
    """

    keywords: tuple[tuple[str, ...], ...] | None = None
    codes: Mapping[str, tuple[int, ...]] = dataclasses.field(default_factory=dict)

    def code(self, team: int, round_no: int) -> tuple[int, ...] | None:
        return self.codes.get(f"{TEAM_LABELS[team]}:{round_no}")

    def reserved(self, team: int) -> frozenset[tuple[int, ...]]:
        """Codes fixed for this team on any turn: the seed never draws them."""
        return frozenset(c for k, c in self.codes.items() if k.startswith(f"{TEAM_LABELS[team]}:"))


def _parse_code(where: str, raw: object) -> tuple[int, ...]:
    """``[3, 4, 1]``, ``"3-4-1"`` or ``"341"``: three different digits from 1 to 4."""
    if isinstance(raw, str):
        digits = [ch for ch in raw if not ch.isspace() and ch != "-"]
        raw = [int(ch) if ch.isdigit() else ch for ch in digits]
    if (
        not isinstance(raw, (list, tuple))
        or len(raw) != 3
        or any(isinstance(d, bool) or d not in DIGITS for d in raw)
        or len(set(raw)) != 3
    ):
        raise deals.error(f"{where} must be three different digits from 1 to 4, not {raw!r}")
    return tuple(int(d) for d in raw)


def _parse_deal(raw: object, cfg: DecryptoConfig) -> DecryptoDeal:
    if isinstance(raw, DecryptoDeal):
        raw = dataclasses.asdict(raw)
    given = deals.mapping(raw, ("keywords", "codes"))
    n_teams = _team_count(cfg)
    labels = TEAM_LABELS[:n_teams]
    keywords = None
    if given.get("keywords") is not None:
        kw = given["keywords"]
        if not isinstance(kw, (list, tuple)) or len(kw) != n_teams:
            raise deals.error(f"keywords must be {n_teams} list(s) of 4 words, one per team ({', '.join(labels)})")
        teams = []
        for label, words in zip(labels, kw, strict=True):
            if not isinstance(words, (list, tuple)) or len(words) != 4:
                raise deals.error(f"team {label} needs exactly 4 keywords, in keyword order, not {words!r}")
            teams.append(tuple(deals.word(f"team {label} keyword {i}", w) for i, w in enumerate(words, start=1)))
        flat = [w for team in teams for w in team]
        for i, w in enumerate(flat):
            if any(deals.same(w, other) for other in flat[:i]):
                raise deals.error(f"keyword {w!r} is dealt twice; every keyword of a game is different")
        keywords = tuple(teams)
    codes_raw = given.get("codes") or {}
    if not isinstance(codes_raw, Mapping):
        raise deals.error('codes must map "<team>:<turn>" to a code, e.g. {"A:1": [3, 4, 1]}')
    limit = cfg.max_turns if cfg.variant is Variant.BENCHMARK else cfg.max_rounds
    codes: dict[str, tuple[int, ...]] = {}
    for key, value in codes_raw.items():
        label, _, turn = str(key).partition(":")
        label = labels[int(label)] if label.isdigit() and int(label) < n_teams else label  # "0:1" is "A:1"
        if label not in labels or not turn.isdigit() or not 1 <= int(turn) <= limit:
            raise deals.error(
                f"code key {key!r} must be '<team>:<turn>' with team {' or '.join(labels)} (or its index) and turn 1 to {limit}"
            )
        code = _parse_code(f"code {key}", value)
        earlier = next((k for k, c in codes.items() if c == code and k.split(":")[0] == label), None)
        if earlier is not None:
            raise deals.error(
                f"team {label} gets code {code_id(code)} on {earlier} and {label}:{int(turn)}; a team never gets the same code twice"
            )
        codes[f"{label}:{int(turn)}"] = code
    return DecryptoDeal(keywords, dict(sorted(codes.items(), key=lambda kv: (kv[0][0], int(kv[0][2:])))))


_DEFAULTS = DecryptoConfig()


def _validate(cfg: DecryptoConfig) -> DecryptoConfig:
    # A team never repeats a code, so a game cannot outlast the 24 codes.
    most = len(ALL_CODES)
    cfg = dataclasses.replace(
        cfg,
        variant=one_of(Variant, "variant", cfg.variant),
        max_turns=whole_number("max_turns", cfg.max_turns, 1, most),
        max_rounds=whole_number("max_rounds", cfg.max_rounds, 1, most),
        max_interceptions=whole_number("max_interceptions", cfg.max_interceptions, 1, most),
        max_miscommunications=whole_number("max_miscommunications", cfg.max_miscommunications, 1, most),
        exclude_used_codes=flag("exclude_used_codes", cfg.exclude_used_codes),
        hint_max_words=whole_number("hint_max_words", cfg.hint_max_words, 1, 20),
        hint_max_chars=whole_number("hint_max_chars", cfg.hint_max_chars, 1, MAX_TEXT_CHARS),
    )
    if cfg.variant is Variant.BENCHMARK and cfg.max_rounds != _DEFAULTS.max_rounds:
        raise ConfigError("max_rounds belongs to the teams variant; the benchmark variant counts turns with max_turns")
    if cfg.variant is Variant.TEAMS and cfg.max_turns != _DEFAULTS.max_turns:
        raise ConfigError("max_turns belongs to the benchmark variant; the teams variant counts rounds with max_rounds")
    if cfg.deck is not None:
        cfg = dataclasses.replace(cfg, deck=_validate_deck(cfg.deck, 4 * _team_count(cfg)))
    if cfg.deal is not None:
        cfg = dataclasses.replace(cfg, deal=_parse_deal(cfg.deal, cfg))
    return cfg


def _validate_deck(deck: object, minimum: int) -> tuple[str, ...]:
    return decks.custom(decks.parse_keywords, deck, minimum=minimum)


def _team_count(cfg: DecryptoConfig) -> int:
    return 1 if cfg.variant is Variant.BENCHMARK else 2


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


# --------------------------------------------------------------------------- seats and tokens


def _members(s: DecryptoState, team: int) -> tuple[Seat, ...]:
    if s.config.variant is Variant.BENCHMARK:
        return (BENCH_ENCODER, BENCH_DECODER)
    return tuple(seat for seat in range(s.seats) if seat % 2 == team)


def _team_of(s: DecryptoState, seat: Seat) -> int | None:
    if s.config.variant is Variant.BENCHMARK:
        return 0 if seat in (BENCH_ENCODER, BENCH_DECODER) else None
    return seat % 2


def _encoder(s: DecryptoState, team: int) -> Seat:
    if s.config.variant is Variant.BENCHMARK:
        return BENCH_ENCODER
    m = _members(s, team)
    return m[(s.round - 1) % len(m)]


def _decoder(s: DecryptoState, team: int) -> Seat:
    if s.config.variant is Variant.BENCHMARK:
        return BENCH_DECODER
    m = _members(s, team)
    return m[s.round % len(m)]


def _interceptor(s: DecryptoState, team: int) -> Seat | None:
    """Who tries to intercept ``team``'s code this round (None in the teams' first round)."""
    if s.config.variant is Variant.BENCHMARK:
        return BENCH_INTERCEPTOR
    return _decoder(s, 1 - team) if s.round >= 2 else None


def _role(s: DecryptoState, seat: Seat) -> Role:
    team = _team_of(s, seat)
    if team is None:
        return Role.INTERCEPTOR
    if seat == _encoder(s, team):
        return Role.ENCODER
    if seat == _decoder(s, team):
        return Role.DECODER
    return Role.TEAMMATE


def _tiebreak_guesser(s: DecryptoState, team: int) -> Seat:
    return _decoder(s, team)


def _interceptions(s: DecryptoState, team: int | None) -> int:
    """Interception tokens won by ``team`` (None: the benchmark interceptor)."""
    if team is None:
        return sum(r.interception for r in s.history)
    return sum(r.interception for r in s.history if r.team != team)


def _miscommunications(s: DecryptoState, team: int) -> int:
    return sum(r.miscommunication for r in s.history if r.team == team)


def _tokens(s: DecryptoState) -> dict[str, Any]:
    if s.config.variant is Variant.BENCHMARK:
        return {"interceptions": _interceptions(s, None), "miscommunications": _miscommunications(s, 0)}
    return {
        TEAM_LABELS[t]: {"interceptions": _interceptions(s, t), "miscommunications": _miscommunications(s, t)}
        for t in range(2)
    }


def _team_score(s: DecryptoState, team: int) -> int:
    return _interceptions(s, team) - _miscommunications(s, team)


def _used_codes(s: DecryptoState, team: int) -> tuple[tuple[int, ...], ...]:
    return tuple(r.code for r in s.history if r.team == team)


def _hint_history(s: DecryptoState, team: int) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {str(d): [] for d in DIGITS}
    for r in s.history:
        if r.team == team:
            for d, h in zip(r.code, r.hints, strict=False):
                out[str(d)].append(h)
    return out


def _when(s: DecryptoState) -> dict[str, int]:
    """Event key for the current round, in the variant's own word (the paper says "turn")."""
    return {"turn": s.round} if s.config.variant is Variant.BENCHMARK else {"round": s.round}


def _keyword_map(words: Sequence[str]) -> dict[str, str]:
    return {str(i + 1): w for i, w in enumerate(words)}


# --------------------------------------------------------------------------- transitions


def _start_round(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    teams = range(_team_count(s.config))
    codes = []
    deal = s.config.deal
    for t in teams:
        fixed = deal.code(t, s.round) if deal else None
        if fixed is not None:
            codes.append(fixed)
            continue
        # Codes a deal fixes for later turns are never drawn: the team would get them twice.
        used = set(_used_codes(s, t)) | (deal.reserved(t) if deal else frozenset())
        fresh = [c for c in ALL_CODES if c not in used]
        codes.append(rng(s.seed, "code", t, s.round).choice(fresh))
    s = dataclasses.replace(
        s, phase=Phase.ENCODE, codes=tuple(codes), hints=tuple(None for _ in teams), decoding=0, pending=()
    )
    events: list[Event] = [
        Event(
            "round",
            {
                **_when(s),
                "encoders": {TEAM_LABELS[t]: _encoder(s, t) for t in teams},
                "decoders": {TEAM_LABELS[t]: _decoder(s, t) for t in teams},
            },
        )
    ]
    for t in teams:
        enc = _encoder(s, t)
        events.append(
            Event("code", {**_when(s), "team": TEAM_LABELS[t], "code": code_id(s.codes[t])}, Audience.of(enc))
        )
    return s, events


def _start_decode(s: DecryptoState, team: int) -> tuple[DecryptoState, list[Event]]:
    s = dataclasses.replace(s, phase=Phase.DECODE, decoding=team, pending=())
    hints = s.hints[team]
    assert hints is not None
    return s, [
        Event(
            "hints",
            {**_when(s), "team": TEAM_LABELS[team], "encoder": _encoder(s, team), "hints": list(hints)},
        )
    ]


def _guessers(s: DecryptoState) -> tuple[tuple[Seat, Role], ...]:
    out: list[tuple[Seat, Role]] = [(_decoder(s, s.decoding), Role.DECODER)]
    itc = _interceptor(s, s.decoding)
    if itc is not None:
        out.append((itc, Role.INTERCEPTOR))
    return tuple(out)


def _resolve(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    team = s.decoding
    code = s.codes[team]
    hints = s.hints[team]
    assert hints is not None
    pending = dict(s.pending)
    guesses = tuple(GuessRecord(seat, role, pending[seat]) for seat, role in _guessers(s))
    dec = next(g for g in guesses if g.role is Role.DECODER)
    itc = next((g for g in guesses if g.role is Role.INTERCEPTOR), None)
    record = TurnRecord(
        round=s.round,
        team=team,
        encoder=_encoder(s, team),
        code=code,
        hints=hints,
        guesses=guesses,
        miscommunication=dec.guess != code_id(code),
        interception=itc is not None and itc.guess == code_id(code),
    )
    s = dataclasses.replace(s, history=(*s.history, record), pending=())
    events = [Event("reveal", {**record.to_json(), "tokens": _tokens(s)})]
    if s.config.variant is Variant.BENCHMARK:
        s, more = _after_benchmark_turn(s)
    elif team == 0:
        s, more = _start_decode(s, 1)
    else:
        s, more = _after_teams_round(s)
    return s, events + more


def _next_round(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    return _start_round(dataclasses.replace(s, round=s.round + 1))


def _after_benchmark_turn(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    cfg = s.config
    itc, mis = _interceptions(s, None), _miscommunications(s, 0)
    caught, lost = itc >= cfg.max_interceptions, mis >= cfg.max_miscommunications
    if caught and lost:
        return _finish(s, Outcome(None, True, False, "both", f"The interceptor wins: {itc} interceptions and {mis} miscommunications on turn {s.round}."))
    if caught:
        return _finish(s, Outcome(None, True, False, "interceptions", f"The interceptor wins with {itc} interceptions on turn {s.round}."))
    if lost:
        return _finish(s, Outcome(None, True, False, "miscommunications", f"The interceptor wins: the team made {mis} miscommunications by turn {s.round}."))
    if s.round >= cfg.max_turns:
        return _finish(s, Outcome(0, False, False, "survived", f"The encoder and decoder win: they survived all {s.round} turns."))
    return _next_round(s)


def _after_teams_round(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    cfg = s.config
    wins = [
        _interceptions(s, t) >= cfg.max_interceptions or _miscommunications(s, 1 - t) >= cfg.max_miscommunications
        for t in range(2)
    ]
    if wins[0] != wins[1]:
        t = 0 if wins[0] else 1
        if _interceptions(s, t) >= cfg.max_interceptions:
            why = f"Team {TEAM_LABELS[t]} wins with {_interceptions(s, t)} interceptions in round {s.round}."
        else:
            why = f"Team {TEAM_LABELS[t]} wins: Team {TEAM_LABELS[1 - t]} made {_miscommunications(s, 1 - t)} miscommunications by round {s.round}."
        return _finish(s, Outcome(t, False, False, "tokens", why))
    if not wins[0] and s.round < cfg.max_rounds:
        return _next_round(s)
    a, b = _team_score(s, 0), _team_score(s, 1)
    cause = "both teams reached the token limit" if wins[0] else f"after {s.round} rounds nobody won on tokens"
    if a != b:
        t = 0 if a > b else 1
        return _finish(
            s,
            Outcome(t, False, False, "score", f"Team {TEAM_LABELS[t]} wins on score {max(a, b)} to {min(a, b)} ({cause})."),
        )
    s = dataclasses.replace(s, phase=Phase.TIEBREAK, pending=(), tiebreak=())
    guessers = {TEAM_LABELS[t]: _tiebreak_guesser(s, t) for t in range(2)}
    return s, [Event("tiebreak", {**_when(s), "scores": {"A": a, "B": b}, "cause": cause, "guessers": guessers})]


def _tiebreak_correct(s: DecryptoState, team: int, guesses: tuple[str, ...]) -> int:
    if guesses == (ABSTAIN,):
        return 0
    target = s.keywords[1 - team]
    return sum(normalize(g) == normalize(k) for g, k in zip(guesses, target, strict=False))


def _resolve_tiebreak(s: DecryptoState) -> tuple[DecryptoState, list[Event]]:
    by_seat = dict(s.tiebreak)
    guesses = {t: by_seat[_tiebreak_guesser(s, t)] for t in range(2)}
    correct = {t: _tiebreak_correct(s, t, guesses[t]) for t in range(2)}
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
    res = _result(s)
    assert res is not None
    return s, [
        Event(
            "game_over",
            {
                "summary": outcome.summary,
                "reason": outcome.reason,
                "winners": sorted(res.winners),
                "keywords": _all_keywords(s),
                "tokens": _tokens(s),
            },
        )
    ]


def _all_keywords(s: DecryptoState) -> dict[str, Any]:
    if s.config.variant is Variant.BENCHMARK:
        return _keyword_map(s.keywords[0])
    return {TEAM_LABELS[t]: _keyword_map(s.keywords[t]) for t in range(2)}


def _result(s: DecryptoState) -> Result | None:
    o = s.outcome
    if o is None:
        return None
    if o.draw:
        winners: frozenset[Seat] = frozenset()
    elif o.interceptor_wins:
        winners = frozenset({BENCH_INTERCEPTOR})
    else:
        assert o.winning_team is not None
        winners = frozenset(_members(s, o.winning_team))
    scores = {seat: (0.5 if o.draw else 1.0 if seat in winners else 0.0) for seat in range(s.seats)}
    details: dict[str, Any] = {
        "variant": s.config.variant.value,
        "reason": o.reason,
        "keywords": _all_keywords(s),
        "history": [r.to_json() for r in s.history],
    }
    if s.config.variant is Variant.BENCHMARK:
        details.update(
            turns=s.round,
            miscommunications=_miscommunications(s, 0),
            interceptions=_interceptions(s, None),
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
            tokens=_tokens(s),
            team_scores={TEAM_LABELS[t]: _team_score(s, t) for t in range(2)},
            teams={TEAM_LABELS[t]: list(_members(s, t)) for t in range(2)},
            winning_team=None if o.winning_team is None else TEAM_LABELS[o.winning_team],
            tiebreak=(
                {
                    TEAM_LABELS[t]: {
                        "guesses": list(by_seat[_tiebreak_guesser(s, t)]),
                        "correct": _tiebreak_correct(s, t, by_seat[_tiebreak_guesser(s, t)]),
                    }
                    for t in range(2)
                }
                if len(by_seat) == 2
                else None
            ),
        )
    details["deal"] = _deal_of(s)  # exports carry the result: with the deal they replay without a seed
    return Result(winners=winners, summary=o.summary, scores=scores, details=details)


def _deal_of(s: DecryptoState) -> dict[str, Any]:
    codes = {f"{TEAM_LABELS[r.team]}:{r.round}": list(r.code) for r in s.history}
    for t, c in enumerate(s.codes):
        codes.setdefault(f"{TEAM_LABELS[t]}:{s.round}", list(c))
    return {"keywords": [list(k) for k in s.keywords], "codes": codes}


# --------------------------------------------------------------------------- the game


class Decrypto:
    """The Decrypto engine; stateless, every method is a pure function of its arguments."""

    id: ClassVar[str] = "decrypto"
    variants: ClassVar[tuple[str, ...]] = VARIANTS

    # ----------------------------------------------------------------- config

    def make_config(self, variant: str | None = None, **options: Any) -> DecryptoConfig:
        return self.config_from_dict({"variant": variant or Variant.BENCHMARK.value, **options})

    def config_from_dict(self, raw: Mapping[str, Any]) -> DecryptoConfig:
        return _validate(config_from_dict(DecryptoConfig, raw))

    def seat_range(self, cfg: DecryptoConfig) -> tuple[int, int]:
        if cfg.variant is Variant.BENCHMARK:
            return (BENCHMARK_SEATS, BENCHMARK_SEATS)
        return (TEAMS_MIN_SEATS, TEAMS_MAX_SEATS)

    # ----------------------------------------------------------------- deal

    def new(self, cfg: DecryptoConfig, seats: int, seed: int) -> tuple[DecryptoState, tuple[Event, ...]]:
        cfg = _validate(cfg)
        low, high = self.seat_range(cfg)
        if not low <= seats <= high:
            span = f"exactly {low}" if low == high else f"{low} to {high}"
            raise ConfigError(f"Decrypto {cfg.variant} needs {span} players, not {seats}")
        deck = cfg.deck if cfg.deck is not None else decks.keywords()
        n_teams = _team_count(cfg)
        if len(deck) < 4 * n_teams:
            raise ConfigError(f"the deck needs at least {4 * n_teams} keywords")
        if cfg.deal is not None and cfg.deal.keywords is not None:
            drawn = [w for team in cfg.deal.keywords for w in team]
        else:
            drawn = rng(seed, "keywords").sample(list(deck), 4 * n_teams)
        s = DecryptoState(
            config=cfg,
            seats=seats,
            seed=seed,
            phase=Phase.ENCODE,
            keywords=tuple(tuple(drawn[4 * t : 4 * t + 4]) for t in range(n_teams)),
            round=1,
            codes=(),
            hints=(),
            decoding=0,
            pending=(),
            tiebreak=(),
            history=(),
            outcome=None,
            log=(),
        )
        if cfg.variant is Variant.BENCHMARK:
            setup = {"variant": cfg.variant.value, "encoder": BENCH_ENCODER, "decoder": BENCH_DECODER, "interceptor": BENCH_INTERCEPTOR}
        else:
            setup = {"variant": cfg.variant.value, "teams": {TEAM_LABELS[t]: list(_members(s, t)) for t in range(2)}}
        events: list[Event] = [Event("setup", setup)]
        for t in range(n_teams):
            events.append(
                Event(
                    "keywords",
                    {"variant": cfg.variant.value, "team": TEAM_LABELS[t], "keywords": _keyword_map(s.keywords[t])},
                    Audience.of(_members(s, t)),
                )
            )
        s, more = _start_round(s)
        events.extend(more)
        s = dataclasses.replace(s, log=tuple(events))
        return s, tuple(events)

    # ----------------------------------------------------------------- turn structure

    def to_act(self, s: DecryptoState) -> frozenset[Seat]:
        if s.phase is Phase.ENCODE:
            return frozenset(_encoder(s, t) for t, h in enumerate(s.hints) if h is None)
        if s.phase is Phase.DECODE:
            done = {seat for seat, _ in s.pending}
            return frozenset(seat for seat, _ in _guessers(s) if seat not in done)
        if s.phase is Phase.TIEBREAK:
            done = {seat for seat, _ in s.tiebreak}
            return frozenset(_tiebreak_guesser(s, t) for t in range(2)) - done
        return frozenset()

    def legal(self, s: DecryptoState, seat: Seat) -> Choice | Text | None:
        if seat not in self.to_act(s):
            return None
        if s.phase is Phase.ENCODE:
            team = _team_of(s, seat)
            assert team is not None
            code = s.codes[team]
            spec = Text(
                kind="hints",
                prompt=f"Your code is {code_id(code)}. Write one hint for each digit, in code order, about the meaning of that digit's keyword: ",
                fields=tuple(f"Hint for {d}" for d in code),
                max_words=s.config.hint_max_words,
                max_chars=s.config.hint_max_chars,
            )
            # The prompt states the spec's own limits, so it can never disagree with them.
            return dataclasses.replace(spec, prompt=f"{spec.prompt}{spec.limits()} each, never the keyword itself, never a number.")
        if s.phase is Phase.DECODE:
            team = s.decoding
            hints = s.hints[team]
            assert hints is not None
            used = set(_used_codes(s, team)) if s.config.exclude_used_codes else set()
            options = tuple(Option(code_id(c), code_id(c)) for c in ALL_CODES if c not in used)
            own = _team_of(s, seat) == team
            whose = "your team's" if own else ("the team's" if s.config.variant is Variant.BENCHMARK else f"Team {TEAM_LABELS[team]}'s")
            verb = "Guess" if own else "Intercept"
            return Choice(kind="guess", prompt=f"{verb} {whose} code from the hints: {', '.join(hints)}.", options=options)
        if s.phase is Phase.TIEBREAK:
            other = TEAM_LABELS[1 - (seat % 2)]
            return Text(
                kind="keywords",
                prompt=f"Tie-break: guess Team {other}'s four keywords, in keyword order 1 to 4.",
                fields=tuple(f"Team {other} keyword {d}" for d in DIGITS),
                max_words=KEYWORD_GUESS_MAX_WORDS,
                max_chars=KEYWORD_GUESS_MAX_CHARS,
            )
        return None

    def timeout_action(self, s: DecryptoState, seat: Seat) -> Action | None:
        if seat not in self.to_act(s):
            return None
        if s.phase is Phase.DECODE:
            return Action("guess", (ABSTAIN,))
        if s.phase is Phase.TIEBREAK:
            return Action("keywords", (ABSTAIN,))
        return None  # hints: the table seats an AI for the turn

    def apply(self, s: DecryptoState, seat: Seat, a: Action) -> tuple[DecryptoState, tuple[Event, ...]]:
        check_turn(over=s.phase is Phase.OVER, seats=s.seats, seat=seat, acting=self.to_act(s), not_yours="It is not your turn to act.")
        spec = self.legal(s, seat)
        assert spec is not None
        if s.phase is Phase.ENCODE:
            assert isinstance(spec, Text)
            self._check_hints(s, seat, text_values(spec, a))
            s, events = self._apply_hints(s, seat, check_text(spec, a))
        elif s.phase is Phase.DECODE:
            assert isinstance(spec, Choice)
            s, events = self._apply_guess(s, seat, self._check_abstainable(spec.kind, a) or check_choice(spec, a))
        else:
            assert isinstance(spec, Text)
            abstain = self._check_abstainable(spec.kind, a)
            s, events = self._apply_tiebreak(s, seat, (abstain,) if abstain else check_text(spec, a))
        return dataclasses.replace(s, log=s.log + tuple(events)), tuple(events)

    @staticmethod
    def _check_abstainable(kind: str, a: Action) -> str | None:
        """The timeout action ``(kind, ("abstain",))`` is accepted though ``legal`` does not list it."""
        return ABSTAIN if is_abstain(kind, a) else None

    def _check_hints(self, s: DecryptoState, seat: Seat, hints: tuple[str, ...]) -> None:
        """The rules a hint obeys beyond its limits; checked first, as the more useful reason."""
        team = _team_of(s, seat)
        assert team is not None
        for i, hint in enumerate(hints, start=1):
            # A number could only carry the code itself ("3-4-1", "341") or a keyword's number.
            if has_number(hint):
                raise IllegalAction(f"Hint {i} contains a number; hints are words, never numbers or codes.")
            for number, keyword in enumerate(s.keywords[team], start=1):
                # The message names the keyword's number, never the word: refusals reach logs.
                if reveals_secret(hint, keyword):
                    raise IllegalAction(f"Hint {i} contains keyword {number} (or a form of it); hint at its meaning without naming it.")

    def _apply_hints(self, s: DecryptoState, seat: Seat, hints: tuple[str, ...]) -> tuple[DecryptoState, list[Event]]:
        team = _team_of(s, seat)
        assert team is not None
        s = dataclasses.replace(s, hints=tuple(hints if t == team else h for t, h in enumerate(s.hints)))
        events: list[Event] = []
        if s.config.variant is Variant.TEAMS:
            # Team B's hints stay hidden until team A's have been resolved.
            events.append(Event("hints_written", {**_when(s), "team": TEAM_LABELS[team], "hints": list(hints)}, Audience.of(seat)))
            events.append(Event("hints_ready", {**_when(s), "team": TEAM_LABELS[team], "encoder": seat}))
        if any(h is None for h in s.hints):
            return s, events
        s, more = _start_decode(s, 0)
        return s, events + more

    def _apply_guess(self, s: DecryptoState, seat: Seat, guess: str) -> tuple[DecryptoState, list[Event]]:
        team = TEAM_LABELS[s.decoding]
        events = [
            Event("guess", {**_when(s), "team": team, "guess": guess}, Audience.of(seat)),
            Event("guessed", {**_when(s), "team": team, "seat": seat}),
        ]
        s = dataclasses.replace(s, pending=(*s.pending, (seat, guess)))
        if self.to_act(s):
            return s, events
        s, more = _resolve(s)
        return s, events + more

    def _apply_tiebreak(self, s: DecryptoState, seat: Seat, guesses: tuple[str, ...]) -> tuple[DecryptoState, list[Event]]:
        team = seat % 2
        events = [
            Event("tiebreak_written", {"team": TEAM_LABELS[team], "guesses": list(guesses)}, Audience.of(seat)),
            Event("tiebreak_guessed", {"team": TEAM_LABELS[team], "seat": seat}),
        ]
        s = dataclasses.replace(s, tiebreak=(*s.tiebreak, (seat, guesses)))
        if self.to_act(s):
            return s, events
        s, more = _resolve_tiebreak(s)
        return s, events + more

    # ----------------------------------------------------------------- views

    def observe(self, s: DecryptoState, seat: Seat) -> Observation:
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
        n_teams = _team_count(s.config)
        team = _team_of(s, seat)
        playing = s.phase is not Phase.OVER
        revealed_now = {r.team for r in s.history if r.round == s.round}
        code = None
        if team is not None and playing and s.phase in (Phase.ENCODE, Phase.DECODE):
            if seat == _encoder(s, team) and team not in revealed_now:
                code = code_id(s.codes[team])
        your_hints = None
        if not bench and team is not None and playing and s.phase in (Phase.ENCODE, Phase.DECODE):
            mine = s.hints[team]
            unread = s.phase is Phase.ENCODE or (s.decoding < team)
            if seat == _encoder(s, team) and mine is not None and unread:
                your_hints = list(mine)
        current: CurrentHints | None = None
        if s.phase is Phase.DECODE:
            hints = s.hints[s.decoding]
            assert hints is not None
            current = {"team": TEAM_LABELS[s.decoding], "encoder": _encoder(s, s.decoding), "hints": list(hints)}
        pending = dict(s.pending) if s.phase is Phase.DECODE else {}
        tb = dict(s.tiebreak) if s.phase is Phase.TIEBREAK else {}
        res = _result(s)
        view: DecryptoView = {
            "variant": s.config.variant.value,
            "seat": seat,
            "role": _role(s, seat).value,
            "team": None if team is None else TEAM_LABELS[team],
            "teams": {TEAM_LABELS[t]: list(_members(s, t)) for t in range(n_teams)},
            "keywords": None if team is None else _keyword_map(s.keywords[team]),
            "round": s.round,
            "max_rounds": s.config.max_turns if bench else s.config.max_rounds,
            "code": code,
            "your_hints": your_hints,
            "current_hints": current,
            "task": self._task(s, seat),
            "your_guess": list(tb[seat]) if seat in tb else pending.get(seat),
            "encoders": {TEAM_LABELS[t]: _encoder(s, t) for t in range(n_teams)},
            "decoders": {TEAM_LABELS[t]: _decoder(s, t) for t in range(n_teams)},
            "tokens": _tokens(s),
            "hint_history": _hint_history(s, 0) if bench else {TEAM_LABELS[t]: _hint_history(s, t) for t in range(2)},
            "code_history": (
                [code_id(c) for c in _used_codes(s, 0)]
                if bench
                else {TEAM_LABELS[t]: [code_id(c) for c in _used_codes(s, t)] for t in range(2)}
            ),
            "turns": [r.to_json() for r in s.history],
            "to_act": sorted(self.to_act(s)),
            "result": None if res is None else res.summary,
        }
        if bench:
            view["interceptor"] = BENCH_INTERCEPTOR
        else:
            view["scores"] = {TEAM_LABELS[t]: _team_score(s, t) for t in range(2)}
        return Observation(game=self.id, seat=seat, phase=s.phase.value, view=view, events=visible(s.log, seat))

    def _task(self, s: DecryptoState, seat: Seat) -> str | None:
        if seat not in self.to_act(s):
            return None
        if s.phase is Phase.ENCODE:
            return "write hints"
        if s.phase is Phase.DECODE:
            if _team_of(s, seat) == s.decoding:
                return "guess your team's code"
            return "intercept the team's code" if s.config.variant is Variant.BENCHMARK else f"intercept Team {TEAM_LABELS[s.decoding]}'s code"
        if s.phase is Phase.TIEBREAK:
            return "guess the other team's keywords"
        return None

    def result(self, s: DecryptoState) -> Result | None:
        return _result(s)

    def deal_of(self, s: DecryptoState) -> dict[str, Any]:
        """The complete deal this game was played with: every keyword and every code drawn so far."""
        return _deal_of(s)

    def secrets(self, s: DecryptoState) -> tuple[Secret, ...]:
        if s.phase is Phase.OVER:
            return ()
        out: list[Secret] = []
        # A seat that typed a secret itself (a right guess not yet revealed) has it in its
        # own view without having learnt it; a word check cannot tell the two apart.
        typed: dict[Seat, list[str]] = {}
        for seat, g in s.pending:
            typed.setdefault(seat, []).append(g)
        for seat, gs in s.tiebreak:
            typed.setdefault(seat, []).extend(gs)
        for t, words in enumerate(s.keywords):
            for w in words:
                extra = {seat for seat, texts in typed.items() if any(contains_word(x, w) for x in texts)}
                out.append(Secret(w, frozenset(_members(s, t)) | extra))
        if s.phase in (Phase.ENCODE, Phase.DECODE):
            revealed_now = {r.team for r in s.history if r.round == s.round}
            # Past codes and past guesses are public. When this code's string is among them
            # (an earlier guess, or the other team's earlier code) the string alone says nothing
            # about this team's code, so a word check has nothing left to look for.
            public_codes = {code_id(r.code) for r in s.history} | {g.guess for r in s.history for g in r.guesses}
            hidden = {code_id(c) for t, c in enumerate(s.codes) if t not in revealed_now} - public_codes
            for value in sorted(hidden):
                # Both teams may draw the same code in a round: each encoder holds the string
                # for its own reasons. A seat that guessed the string has typed it itself.
                holders = {_encoder(s, t) for t, c in enumerate(s.codes) if code_id(c) == value}
                typers = {seat for seat, g in s.pending if g == value}
                out.append(Secret(value, frozenset(holders | typers), among=ALL_CODE_IDS))
        return tuple(out)

    # ----------------------------------------------------------------- text

    def text(self, e: Event, names: Sequence[str]) -> str:
        return fill_labels(self._sentence(e), names)

    def _sentence(self, e: Event) -> str:
        """The event in words, seats as ``seat_ref`` tokens."""
        d = e.data
        # Benchmark events say "turn" (the paper's word) and have a single team.
        bench = "turn" in d or d.get("variant") == Variant.BENCHMARK

        def who(seat: object) -> str:
            return seat_ref(seat) if isinstance(seat, int) and seat >= 0 else f"seat {seat}"

        def team(label: object = d.get("team")) -> str:
            return "the team" if bench else f"Team {label}"

        def team_s(label: object = d.get("team")) -> str:
            return "the team's" if bench else f"Team {label}'s"

        at = f"turn {d['turn']}" if "turn" in d else f"round {d.get('round')}"
        k = e.kind
        if k == "setup":
            if bench:
                return (
                    f"Decrypto (benchmark): {who(d['encoder'])} is the encoder, {who(d['decoder'])} the decoder "
                    f"and {who(d['interceptor'])} the interceptor."
                )
            return "Decrypto (teams): " + "; ".join(
                f"Team {label} is {', '.join(who(x) for x in seats)}" for label, seats in d["teams"].items()
            ) + "."
        if k == "keywords":
            kws = ", ".join(f"{n}. {w}" for n, w in d["keywords"].items())
            return f"{_cap(team_s())} secret keywords: {kws}."
        if k == "round":
            if bench:
                return f"Turn {d['turn']} begins."
            enc, dec = d["encoders"], d["decoders"]
            parts = [f"Team {t}: {who(enc[t])} encodes, {who(dec[t])} decodes" for t in enc]
            return f"Round {d['round']} begins. " + "; ".join(parts) + "."
        if k == "code":
            return f"The secret code for {team_s()} {at} is {d['code']}."
        if k == "hints_written":
            return f"You wrote {team_s()} hints for {at}: {', '.join(d['hints'])}."
        if k == "hints_ready":
            return f"{who(d['encoder'])} has written {team_s()} hints."
        if k == "hints":
            return f"{who(d['encoder'])} gives {team_s()} hints for {at}: {', '.join(d['hints'])}."
        if k == "guess":
            if d["guess"] == ABSTAIN:
                return f"You abstained on {team_s()} code."
            return f"You guessed {d['guess']} for {team_s()} code."
        if k == "guessed":
            return f"{who(d['seat'])} has locked in a guess for {team_s()} code."
        if k == "reveal":
            bench = "interceptions" in d["tokens"]  # the reveal carries the record's "round"; tokens tell the variant
            hints = ", ".join(f"{n}: {h}" for n, h in d["hints_by_digit"].items())
            line = f"{_cap(team_s())} code was {d['code']} ({hints}). "
            dg = d["decoder_guess"]
            line += f"{who(d['decoder'])} guessed {dg}" if dg != ABSTAIN else f"{who(d['decoder'])} abstained"
            line += ": miscommunication." if d["miscommunication"] else ": correct."
            if d["interceptor"] is not None:
                ig = d["interceptor_guess"]
                line += f" {who(d['interceptor'])} tried {ig}" if ig != ABSTAIN else f" {who(d['interceptor'])} abstained"
                line += ": interception!" if d["interception"] else ": no interception."
            return line + " Tokens: " + _tokens_text(d["tokens"]) + "."
        if k == "tiebreak":
            sc, g = d["scores"], d["guessers"]
            return (
                f"Tied at {sc['A']} to {sc['B']} ({d['cause']}): {who(g['A'])} guesses Team B's keywords "
                f"and {who(g['B'])} guesses Team A's keywords."
            )
        if k == "tiebreak_written":
            other = "B" if d["team"] == "A" else "A"
            return f"You guessed Team {other}'s keywords: {', '.join(d['guesses'])}."
        if k == "tiebreak_guessed":
            return f"{who(d['seat'])} has written Team {d['team']}'s keyword guesses."
        if k == "tiebreak_result":
            c, g = d["correct"], d["guesses"]
            return (
                f"Tie-break: Team A guessed {', '.join(g['A'])} ({c['A']} right); "
                f"Team B guessed {', '.join(g['B'])} ({c['B']} right)."
            )
        if k == "game_over":
            kw = d["keywords"]
            if all(isinstance(v, dict) for v in kw.values()):
                shown = "; ".join(f"Team {t}: {', '.join(f'{n}. {w}' for n, w in m.items())}" for t, m in kw.items())
            else:
                shown = ", ".join(f"{n}. {w}" for n, w in kw.items())
            return f"{d['summary']} The keywords were {shown}."
        return f"{k}: {dict(d)}"

    def rules(self, cfg: DecryptoConfig) -> str:
        limits = (
            f"{cfg.max_interceptions} interceptions or {cfg.max_miscommunications} miscommunications"
        )
        codes = (
            "Codes already used by a team are left out of the guess options."
            if cfg.exclude_used_codes
            else "All 24 codes are offered when guessing, though a team never gets the same code twice."
        )
        common = (
            "Each turn the encoder secretly gets a code of three different digits from 1 to 4, such as 3-1-4, "
            "and gives one hint per digit, in code order: one or two words about the meaning of that keyword, "
            "never the keyword itself. Then the decoder guesses the code while an opponent tries to intercept it; "
            "the code, the guesses and the hints are then shown to all. A wrong decoder guess is a miscommunication; "
            "a right opponent guess is an interception. " + codes
        )
        if cfg.variant is Variant.BENCHMARK:
            return (
                "Decrypto, benchmark rules: three players. The encoder and the decoder share four secret keywords "
                "numbered 1 to 4; the interceptor does not know them.\n\n"
                + common
                + f"\n\nThe interceptor wins at once with {limits} (also when both happen on the same turn). "
                f"The encoder and decoder win by surviving {cfg.max_turns} turns. The interceptor also guesses on the "
                "first turn; the growing public hint history is its best clue."
            )
        return (
            "Decrypto, team rules: two teams (even seats are team A, odd seats team B), each with four secret "
            "keywords numbered 1 to 4. Each round a different player of each team encodes and the next one decodes.\n\n"
            + common
            + " Both teams write their hints at the same time; team A's hints are guessed first, then team B's. "
            "Interceptions start in round 2.\n\n"
            f"At the end of a round, a team with {cfg.max_interceptions} interceptions wins, and a team with "
            f"{cfg.max_miscommunications} miscommunications loses. If both teams would win, or nobody has won after "
            f"{cfg.max_rounds} rounds, the higher score (interceptions minus miscommunications) wins. If still tied, "
            "each team's decoder guesses the other team's four keywords; more right guesses wins, otherwise it is a draw."
        )


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _tokens_text(tokens: Mapping[str, Any]) -> str:
    if "interceptions" in tokens:
        return f"{_count(tokens['interceptions'], 'interception')}, {_count(tokens['miscommunications'], 'miscommunication')}"
    return "; ".join(
        f"Team {t} {_count(v['interceptions'], 'interception')}, {_count(v['miscommunications'], 'miscommunication')}"
        for t, v in tokens.items()
    )


GAME = Decrypto()
"""The registered engine."""


def _descriptor() -> GameDescriptor:
    from games.metrics import decrypto_metrics, decrypto_seats

    team, bench = (SeatRole.TEAM_MEMBER,), (SeatRole.ENCODER, SeatRole.DECODER, SeatRole.INTERCEPTOR)
    both = (*bench, *team)
    return GameDescriptor(
        id=Decrypto.id,
        title="Decrypto",
        blurb="give hints so your teammate decodes a 3-digit code; the interceptor listens in",
        engine=GAME,
        seats=(BENCHMARK_SEATS, TEAMS_MAX_SEATS),
        variants=tuple(Variant),
        roles=both,
        sides=(Side.TEAM, Side.INTERCEPTOR, Side.TEAM_A, Side.TEAM_B),
        seat_roles={Variant.BENCHMARK.value: bench},
        metrics=(
            Metric("miscommunications", "miscommunication tokens of the game (benchmark) or of the seat's team",
                   MetricScope.SEAT, both, "misc"),
            Metric("interceptions", "interception tokens of the game (benchmark) or of the seat's team",
                   MetricScope.SEAT, both, "int"),
            Metric("turns", "turns the game lasted", MetricScope.SEAT, bench, "turns"),
            Metric("rounds", "rounds the game lasted", MetricScope.SEAT, team),
            Metric("encoded", "rounds the seat was its team's encoder", MetricScope.SEAT, team),
            Metric("decoded", "rounds the seat was its team's decoder", MetricScope.SEAT, team),
            Metric("games", "games", MetricScope.GAMES),
            Metric("miscommunications", "miscommunications (total)", MetricScope.GAMES),
            Metric("interceptions", "interceptions (total)", MetricScope.GAMES),
            Metric("miscommunications_per_game", "miscommunications per game", MetricScope.GAMES),
            Metric("interceptions_per_game", "interceptions per game", MetricScope.GAMES),
            Metric("team_win_rate", "encoder-decoder win rate", MetricScope.GAMES, bench[:2]),
            Metric("mean_turns", "mean turns per game", MetricScope.GAMES),
            Metric("ended_by", "games ended by", MetricScope.GAMES),
            Metric("win_rate", "win rate", MetricScope.GAMES, team),
            Metric("draw_rate", "draw rate", MetricScope.GAMES),
            Metric("mean_rounds", "mean rounds per game", MetricScope.GAMES),
        ),
        read_seats=decrypto_seats,
        summarize=decrypto_metrics,
        clue_kinds=frozenset({"hints"}),
        sneak=SneakScoring.ON_REQUEST,
        menu=MenuEntry(order=1),
    )


DESCRIPTOR = _descriptor()
"""What the rest of the system knows of Decrypto (``games.catalog``)."""
