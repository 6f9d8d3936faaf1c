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
``exclude_used_codes`` hides the codes the team already used. The option
``play_on`` plays on to ``max_turns`` once the game is decided, as the
benchmark's human-play loop does (its recorded games hold those turns): the
result is the one decided, measured at its turn, and the later turns are kept.

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
from typing import Any, ClassVar

from games import decks
from games.base import (
    ABSTAIN,
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
    contains_word,
    is_abstain,
    rng,
    text_values,
)
from games.decrypto.config import (
    ALL_CODE_IDS,
    ALL_CODES,
    BENCH_DECODER,
    BENCH_ENCODER,
    BENCH_INTERCEPTOR,
    BENCHMARK_SEATS,
    DIGITS,
    KEYWORD_GUESS_MAX_CHARS,
    KEYWORD_GUESS_MAX_WORDS,
    TEAM_LABELS,
    TEAMS_MAX_SEATS,
    TEAMS_MIN_SEATS,
    VARIANTS,
    DecryptoConfig,
    Variant,
    code_id,
    team_count,
    validate,
)
from games.decrypto.narration import event_text, rules_text
from games.decrypto.state import DecryptoState, Phase, deal_of, encoder, keyword_map, members, result, team_of, to_act, used_codes, when
from games.decrypto.transitions import resolve, resolve_tiebreak, start_decode, start_round
from games.decrypto.view import observe_seat
from games.engine import Engine, Setup
from games.text import has_number, reveals_secret

# --------------------------------------------------------------------------- the game


def _seat_range(cfg: DecryptoConfig) -> tuple[int, int]:
    if cfg.variant is Variant.BENCHMARK:
        return (BENCHMARK_SEATS, BENCHMARK_SEATS)
    return (TEAMS_MIN_SEATS, TEAMS_MAX_SEATS)


class Decrypto(Engine[DecryptoState, DecryptoConfig]):
    """The Decrypto engine; stateless, every method is a pure function of its arguments."""

    id: ClassVar[str] = "decrypto"
    variants: ClassVar[tuple[str, ...]] = VARIANTS

    def __init__(self) -> None:
        super().__init__(Setup(DecryptoConfig, validate, _seat_range, "Decrypto", event_text, rules_text))

    # ----------------------------------------------------------------- deal

    def new(self, cfg: DecryptoConfig, seats: int, seed: int) -> tuple[DecryptoState, tuple[Event, ...]]:
        cfg = validate(cfg)
        self.check_seats(cfg, seats)
        deck = cfg.deck if cfg.deck is not None else decks.keywords()
        n_teams = team_count(cfg)
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
            setup = {"variant": cfg.variant.value, "teams": {TEAM_LABELS[t]: list(members(s, t)) for t in range(2)}}
        events: list[Event] = [Event("setup", setup)]
        for t in range(n_teams):
            events.append(
                Event(
                    "keywords",
                    {"variant": cfg.variant.value, "team": TEAM_LABELS[t], "keywords": keyword_map(s.keywords[t])},
                    Audience.of(members(s, t)),
                )
            )
        s, more = start_round(s)
        events.extend(more)
        s = dataclasses.replace(s, log=tuple(events))
        return s, tuple(events)

    # ----------------------------------------------------------------- turn structure

    def to_act(self, s: DecryptoState) -> frozenset[Seat]:
        return to_act(s)

    def legal(self, s: DecryptoState, seat: Seat) -> Choice | Text | None:
        if seat not in self.to_act(s):
            return None
        if s.phase is Phase.ENCODE:
            team = team_of(s, seat)
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
            used = set(used_codes(s, team)) if s.config.exclude_used_codes else set()
            options = tuple(Option(code_id(c), code_id(c)) for c in ALL_CODES if c not in used)
            own = team_of(s, seat) == team
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
        team = team_of(s, seat)
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
        team = team_of(s, seat)
        assert team is not None
        s = dataclasses.replace(s, hints=tuple(hints if t == team else h for t, h in enumerate(s.hints)))
        events: list[Event] = []
        if s.config.variant is Variant.TEAMS:
            # Team B's hints stay hidden until team A's have been resolved.
            events.append(Event("hints_written", {**when(s), "team": TEAM_LABELS[team], "hints": list(hints)}, Audience.of(seat)))
            events.append(Event("hints_ready", {**when(s), "team": TEAM_LABELS[team], "encoder": seat}))
        if any(h is None for h in s.hints):
            return s, events
        s, more = start_decode(s, 0)
        return s, events + more

    def _apply_guess(self, s: DecryptoState, seat: Seat, guess: str) -> tuple[DecryptoState, list[Event]]:
        team = TEAM_LABELS[s.decoding]
        events = [
            Event("guess", {**when(s), "team": team, "guess": guess}, Audience.of(seat)),
            Event("guessed", {**when(s), "team": team, "seat": seat}),
        ]
        s = dataclasses.replace(s, pending=(*s.pending, (seat, guess)))
        if self.to_act(s):
            return s, events
        s, more = resolve(s)
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
        s, more = resolve_tiebreak(s)
        return s, events + more


    # ----------------------------------------------------------------- views and text

    def observe(self, s: DecryptoState, seat: Seat) -> Observation:
        """What ``seat`` may know (``games.decrypto.view``)."""
        return observe_seat(self.id, s, seat)

    # ----------------------------------------------------------------- results

    def result(self, s: DecryptoState) -> Result | None:
        return result(s)

    def deal_of(self, s: DecryptoState) -> dict[str, Any]:
        """The complete deal this game was played with: every keyword and every code drawn so far."""
        return deal_of(s)

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
                out.append(Secret(w, frozenset(members(s, t)) | extra))
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
                holders = {encoder(s, t) for t, c in enumerate(s.codes) if code_id(c) == value}
                typers = {seat for seat, g in s.pending if g == value}
                out.append(Secret(value, frozenset(holders | typers), among=ALL_CODE_IDS))
        return tuple(out)


GAME = Decrypto()
"""The registered engine."""
