"""Decrypto's configuration: constants, variants, the config and the deal as data, and their checks."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import permutations

from games import deals, decks
from games.base import MAX_TEXT_CHARS, ConfigError, flag, one_of, whole_number
from games.text import typed_number

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
    play_on: bool = False
    """Benchmark only: once the tokens decide the game, play goes on to ``max_turns`` as the benchmark's
    human-play loop does (its recorded games hold those later turns); the result stays the one decided, with
    its turn and tokens, and the later turns are kept in the game's history."""
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


def parse_code(where: str, raw: object) -> tuple[int, ...]:
    """``[3, 4, 1]``, ``"3-4-1"`` or ``"341"``: three different digits from 1 to 4."""
    if isinstance(raw, str):
        digits = [ch for ch in raw if not ch.isspace() and ch != "-"]
        raw = [int(ch) if ch in "0123456789" else ch for ch in digits]
    if (
        not isinstance(raw, (list, tuple))
        or len(raw) != 3
        or any(isinstance(d, bool) or d not in DIGITS for d in raw)
        or len(set(raw)) != 3
    ):
        raise deals.error(f"{where} must be three different digits from 1 to 4, not {raw!r}")
    return tuple(int(d) for d in raw)


def parse_deal(raw: object, cfg: DecryptoConfig) -> DecryptoDeal:
    if isinstance(raw, DecryptoDeal):
        raw = dataclasses.asdict(raw)
    given = deals.mapping(raw, ("keywords", "codes"))
    n_teams = team_count(cfg)
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
        index, turn_no = typed_number(label), typed_number(turn)
        label = labels[index] if index is not None and index < n_teams else label  # "0:1" is "A:1"
        if label not in labels or turn_no is None or not 1 <= turn_no <= limit:
            raise deals.error(
                f"code key {key!r} must be '<team>:<turn>' with team {' or '.join(labels)} (or its index) and turn 1 to {limit}"
            )
        code = parse_code(f"code {key}", value)
        earlier = next((k for k, c in codes.items() if c == code and k.split(":")[0] == label), None)
        if earlier is not None:
            raise deals.error(
                f"team {label} gets code {code_id(code)} on {earlier} and {label}:{int(turn)}; a team never gets the same code twice"
            )
        codes[f"{label}:{int(turn)}"] = code
    return DecryptoDeal(keywords, dict(sorted(codes.items(), key=lambda kv: (kv[0][0], int(kv[0][2:])))))


_DEFAULTS = DecryptoConfig()


def validate(cfg: DecryptoConfig) -> DecryptoConfig:
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
        play_on=flag("play_on", cfg.play_on),
        hint_max_words=whole_number("hint_max_words", cfg.hint_max_words, 1, 20),
        hint_max_chars=whole_number("hint_max_chars", cfg.hint_max_chars, 1, MAX_TEXT_CHARS),
    )
    if cfg.variant is Variant.BENCHMARK and cfg.max_rounds != _DEFAULTS.max_rounds:
        raise ConfigError("max_rounds belongs to the teams variant; the benchmark variant counts turns with max_turns")
    if cfg.variant is Variant.TEAMS and cfg.play_on:
        raise ConfigError("play_on belongs to the benchmark variant")
    if cfg.variant is Variant.TEAMS and cfg.max_turns != _DEFAULTS.max_turns:
        raise ConfigError("max_turns belongs to the benchmark variant; the teams variant counts rounds with max_rounds")
    if cfg.deck is not None:
        cfg = dataclasses.replace(cfg, deck=_validate_deck(cfg.deck, 4 * team_count(cfg)))
    if cfg.deal is not None:
        cfg = dataclasses.replace(cfg, deal=parse_deal(cfg.deal, cfg))
    return cfg


def _validate_deck(deck: object, minimum: int) -> tuple[str, ...]:
    return decks.custom(decks.parse_keywords, deck, minimum=minimum)


def team_count(cfg: DecryptoConfig) -> int:
    return 1 if cfg.variant is Variant.BENCHMARK else 2
