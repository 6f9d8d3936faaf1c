"""Who-is-Spy's configuration: seats, variants, roles and phases, the config and the deal as data,
their checks, and how roles are dealt."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum, StrEnum

from games import deals, decks
from games.base import MAX_TEXT_CHARS, ConfigError, Seat, flag, one_of, rng, whole_number

MIN_SEATS = 3
MAX_SEATS = 12


class Variant(StrEnum):
    CLASSIC = "classic"
    SPYGAME = "spygame"  # the SpyGame paper's setting, fixed


class TieRule(StrEnum):
    RUNOFF = "runoff"  # the tied players face a run-off vote; still tied: nobody is out
    NONE = "none"  # a tie eliminates nobody


class Role(Enum):
    VILLAGER = "villager"
    SPY = "spy"
    MR_WHITE = "mr_white"


ROLE_NAMES = {Role.VILLAGER: "a villager", Role.SPY: "a spy", Role.MR_WHITE: "Mr. White"}


class Phase(Enum):
    DESCRIBE = "describe"
    DISCUSS = "discuss"
    VOTE = "vote"
    RUNOFF = "runoff"
    WHITE_GUESS = "white_guess"
    OVER = "over"


class Team(Enum):
    VILLAGERS = "villagers"
    INFILTRATORS = "infiltrators"
    MR_WHITE = "mr_white"


# --------------------------------------------------------------------------- config


@dataclass(frozen=True, slots=True)
class SpyConfig:
    """Options of a Who-is-Spy game. ``spies``/``max_rounds`` of None mean "from the seat count"."""

    variant: Variant = Variant.CLASSIC
    spies: int | None = None
    blank: bool = False
    max_words: int = 12
    tie_rule: TieRule = TieRule.RUNOFF
    discussion: bool = False
    max_rounds: int | None = None
    deck: tuple[tuple[str, str], ...] | None = None
    deal: SpyDeal | None = None
    """Word pair, roles and speaking orders fixed in advance (the rest drawn); see ``SpyDeal``."""


@dataclass(frozen=True, slots=True)
class SpyDeal:
    """A Who-is-Spy deal as data: ``{"pair": [villager word, spy word], "spies": [seats],
    "blank": [Mr. White's seat] or [], "order": [[round 1 speaking order], ...]}``.

    Every key may be left out to draw it from the seed. Each speaking order lists every seat
    of the table once; players already voted out are skipped when the round begins. Rounds
    beyond the listed orders are shuffled from the seed.
    """

    pair: tuple[str, str] | None = None
    spies: tuple[Seat, ...] | None = None
    blank: tuple[Seat, ...] | None = None
    order: tuple[tuple[Seat, ...], ...] = ()


def parse_deal(raw: object, cfg: SpyConfig) -> SpyDeal:
    if isinstance(raw, SpyDeal):
        raw = dataclasses.asdict(raw)
    given = deals.mapping(raw, ("pair", "spies", "blank", "order"))
    pair = None
    if given.get("pair") is not None:
        p = given["pair"]
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise deals.error(f"pair must be [villager word, spy word], not {p!r}")
        pair = (deals.word("the villager word", p[0]), deals.word("the spy word", p[1]))
        if deals.same(*pair):
            raise deals.error("the two words of the pair must differ")
    spies = None if given.get("spies") is None else deals.seats("spies", given["spies"])
    blank = None if given.get("blank") is None else deals.seats("blank", given["blank"])
    if spies is not None:
        if not spies:
            raise deals.error("a game needs at least one spy")
        if cfg.spies is not None and len(spies) != cfg.spies:
            raise deals.error(f"the config asks for {cfg.spies} spies but the deal names {len(spies)}")
        if cfg.variant is Variant.SPYGAME and len(spies) != 1:
            raise deals.error("the spygame variant is played with exactly 1 spy")
    if blank is not None:
        if len(blank) != int(cfg.blank):
            want = "one seat (blank=true)" if cfg.blank else "no seat (blank=false)"
            raise deals.error(f"blank must name {want}, not {list(blank)}")
        if spies is not None and set(blank) & set(spies):
            raise deals.error("Mr. White cannot also be a spy")
    orders = given.get("order") or ()
    if not isinstance(orders, (list, tuple)):
        raise deals.error("order must be a list of speaking orders, one per round")
    order = tuple(deals.seats(f"order of round {r}", o) for r, o in enumerate(orders, start=1))
    if cfg.max_rounds is not None and len(order) > cfg.max_rounds:
        raise deals.error(f"{len(order)} speaking orders for a game of at most {cfg.max_rounds} rounds")
    return SpyDeal(pair, spies, blank, order)


def check_deal_seats(deal: SpyDeal, cfg: SpyConfig, seats: int) -> None:
    """What a deal can only be checked against once the table's size is known."""
    n_spies = spies_for(cfg, seats)
    if deal.spies is not None:
        deals.in_range("spies", deal.spies, seats)
        if len(deal.spies) != n_spies:
            raise deals.error(f"a table of {seats} plays with {n_spies} spies, but the deal names {len(deal.spies)}")
    if deal.blank is not None:
        deals.in_range("blank", deal.blank, seats)
    if len(deal.order) > (cfg.max_rounds if cfg.max_rounds is not None else seats):
        raise deals.error(f"{len(deal.order)} speaking orders for a game of at most {seats} rounds")
    for r, o in enumerate(deal.order, start=1):
        if sorted(o) != list(range(seats)):
            raise deals.error(f"the order of round {r} must list every seat 0 to {seats - 1} once, not {list(o)}")


def description_chars(max_words: int) -> int:
    """The character limit of a description: 20 a word (240 for the default 12 words), at most
    ``MAX_TEXT_CHARS``. The spec carries it; forms take it from there, never from a constant."""
    return min(MAX_TEXT_CHARS, 20 * max_words)


def default_spies(seats: int) -> int:
    """1 spy up to 6 seats, 2 up to 10, 3 above."""
    return 1 if seats <= 6 else 2 if seats <= 10 else 3


def spies_for(cfg: SpyConfig, seats: int) -> int:
    return cfg.spies if cfg.spies is not None else default_spies(seats)


def seats_ok(cfg: SpyConfig, seats: int) -> bool:
    if not MIN_SEATS <= seats <= MAX_SEATS:
        return False
    if cfg.variant is Variant.SPYGAME:
        return seats == 4
    # The infiltrators (spies and Mr. White) must start as a minority, or the
    # game would be decided before anyone speaks.
    return 2 * (spies_for(cfg, seats) + int(cfg.blank)) < seats


def _check_deck(raw: object) -> tuple[tuple[str, str], ...]:
    return decks.custom(decks.parse_pairs, raw)


def validate(cfg: SpyConfig) -> SpyConfig:
    cfg = dataclasses.replace(
        cfg,
        variant=one_of(Variant, "variant", cfg.variant),
        spies=None if cfg.spies is None else whole_number("spies", cfg.spies, 1, MAX_SEATS),
        blank=flag("blank", cfg.blank),
        discussion=flag("discussion", cfg.discussion),
        max_words=whole_number("max_words", cfg.max_words, 1, 50),
        tie_rule=one_of(TieRule, "tie_rule", cfg.tie_rule),
        max_rounds=None if cfg.max_rounds is None else whole_number("max_rounds", cfg.max_rounds, 1, 50),
    )
    if cfg.variant is Variant.SPYGAME:
        # The benchmark variant is the paper's setting exactly; refuse changes to it.
        if cfg.spies not in (None, 1):
            raise ConfigError("the spygame variant is played with exactly 1 spy")
        if cfg.blank:
            raise ConfigError("the spygame variant has no Mr. White; use the classic variant for blank=true")
        if cfg.discussion:
            raise ConfigError("the spygame variant has no discussion phase; use the classic variant")
    cfg = dataclasses.replace(cfg, deck=None if cfg.deck is None else _check_deck(cfg.deck))
    if cfg.deal is not None:
        cfg = dataclasses.replace(cfg, deal=parse_deal(cfg.deal, cfg))
    if not any(seats_ok(cfg, n) for n in range(MIN_SEATS, MAX_SEATS + 1)):
        raise ConfigError(
            f"with {cfg.spies} spies{' and a Mr. White' if cfg.blank else ''} no table of "
            f"{MIN_SEATS}-{MAX_SEATS} seats works: spies (and Mr. White) must be fewer than half the seats"
        )
    return cfg


def deal_roles(cfg: SpyConfig, deal: SpyDeal, seats: int, seed: int) -> list[Role]:
    """Spies and Mr. White: as dealt, or drawn from the seed among the seats the deal leaves."""
    n_spies = spies_for(cfg, seats)
    if deal.spies is None and deal.blank is None:
        picked = rng(seed, "roles").sample(range(seats), n_spies + int(cfg.blank))
        spies, whites = picked[:n_spies], picked[n_spies:]
    else:
        taken = set(deal.spies or ()) | set(deal.blank or ())
        rest = [x for x in range(seats) if x not in taken]
        spies = list(deal.spies) if deal.spies is not None else rng(seed, "roles").sample(rest, n_spies)
        rest = [x for x in rest if x not in spies]
        whites = list(deal.blank) if deal.blank is not None else rng(seed, "blank").sample(rest, int(cfg.blank))
    roles = [Role.VILLAGER] * seats
    for x in spies:
        roles[x] = Role.SPY
    for x in whites:
        roles[x] = Role.MR_WHITE
    return roles
