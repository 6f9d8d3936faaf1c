"""The Chameleon's configuration: seats, card sizes, variants, modes, phases and roles, the config and
the deal as data, and their checks."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

from games import deals, decks
from games.base import ConfigError, Seat, flag, one_of, whole_number

Card = tuple[str, tuple[str, ...]]
"""A category card: the category and its words, most typical first."""

MIN_SEATS, MAX_SEATS = 3, 10
MIN_CARD_SIZE, MAX_CARD_SIZE = 6, 16
CLUE_MAX_CHARS = 30


class Phase(Enum):
    CLUES = "clues"
    DISCUSSION = "discussion"
    VOTE = "vote"
    RUNOFF = "runoff"
    GUESS = "guess"
    OVER = "over"


class Role(Enum):
    CHAMELEON = "chameleon"
    PLAYER = "player"


class Variant(StrEnum):
    CLASSIC = "classic"  # the published party game, 16-word cards
    SNEAK = "sneak"  # the SNEAK benchmark's setting, 12 candidate words per card


class Mode(StrEnum):
    SINGLE = "single"
    MATCH = "match"


class TieRule(StrEnum):
    RUNOFF = "runoff"
    CHAMELEON_ESCAPES = "chameleon_escapes"


class BallotKind(Enum):
    FIRST = "first"
    RUNOFF = "runoff"


class Outcome(Enum):
    ESCAPED = "escaped"  # not caught: chameleon +2
    GUESSED = "guessed"  # caught, named the secret: chameleon +1
    CAUGHT = "caught"  # caught and wrong: every other seat +2


VARIANT_CARD_SIZE: Mapping[Variant, int] = {Variant.CLASSIC: 16, Variant.SNEAK: 12}


# --------------------------------------------------------------------------- config


@dataclass(frozen=True, slots=True)
class ChameleonConfig:
    """A validated Chameleon configuration; build it with ``GAME.make_config``."""

    variant: Variant = Variant.CLASSIC
    card_size: int = 16
    mode: Mode = Mode.SINGLE
    target_points: int = 5
    tie_rule: TieRule = TieRule.RUNOFF
    discussion: bool = False
    max_rounds: int = 20
    deck: tuple[Card, ...] | None = None
    """None plays the bundled cards; otherwise the custom cards themselves, so replay is exact."""
    deal: tuple[RoundDeal, ...] | None = None
    """Card, secret, chameleon and first player fixed per round (the rest drawn); see ``RoundDeal``."""


@dataclass(frozen=True, slots=True)
class RoundDeal:
    """One round of a Chameleon deal: ``{"card": category name or [category, [words]], "secret":
    word, "chameleon": seat, "first": seat}``; any key may be left out to draw it from the seed.

    A deal is one such mapping (the first round) or a list of them (rounds 1, 2, ... of a match).
    A named card comes from the game's deck; a listed card is played as given (its first
    ``card_size`` words). The secret must be a word of the card; a match never reuses a card.
    """

    card: Card | None = None
    secret: str | None = None
    chameleon: Seat | None = None
    first: Seat | None = None


def with_defaults(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The variant decides the default card size: 16 words (classic) or 12 (sneak)."""
    out = {"variant": Variant.CLASSIC.value, **raw}
    if "card_size" not in out and out["variant"] in VARIANT_CARD_SIZE:
        out["card_size"] = VARIANT_CARD_SIZE[Variant(out["variant"])]
    return out


def _parse_card(where: str, raw: object, cfg: ChameleonConfig) -> Card:
    if isinstance(raw, str):
        found = [c for c in deck_of(cfg) if deals.same(c[0], raw)]
        if not found:
            raise deals.error(f"{where}: no card {raw!r} in the deck; name a card of the deck or give [category, [words]]")
        category, words = found[0]
    else:
        try:
            ((category, words),) = decks.parse_cards([raw], size=cfg.card_size)
        except decks.DeckError as exc:
            raise deals.error(f"{where}: {str(exc).removeprefix('entry 1: ')}") from None
    return category, words[: cfg.card_size]


def _parse_round(where: str, raw: object, cfg: ChameleonConfig) -> RoundDeal:
    if isinstance(raw, RoundDeal):
        raw = {f: getattr(raw, f) for f in ("card", "secret", "chameleon", "first")}
    given = deals.mapping(raw, ("card", "secret", "chameleon", "first"))
    card = None if given.get("card") is None else _parse_card(where, given["card"], cfg)
    secret = None
    if given.get("secret") is not None:
        secret = deals.word(f"{where}: the secret", given["secret"])
        if card is not None:
            on_card = [w for w in card[1] if deals.same(w, secret)]
            if not on_card:
                raise deals.error(f"{where}: the secret {secret!r} is not a word of the {card[0]} card")
            secret = on_card[0]
    chameleon = None if given.get("chameleon") is None else deals.seat(f"{where}: chameleon", given["chameleon"])
    first = None if given.get("first") is None else deals.seat(f"{where}: first", given["first"])
    return RoundDeal(card, secret, chameleon, first)


def parse_deal(raw: object, cfg: ChameleonConfig) -> tuple[RoundDeal, ...]:
    rounds = list(raw) if isinstance(raw, (list, tuple)) else [raw]
    if not rounds:
        raise deals.error("an empty list deals nothing; leave the deal out instead")
    if cfg.mode is Mode.SINGLE and len(rounds) > 1:
        raise deals.error(f"{len(rounds)} rounds dealt for a single-round game; use mode=match")
    if len(rounds) > cfg.max_rounds:
        raise deals.error(f"{len(rounds)} rounds dealt for a match of at most {cfg.max_rounds} rounds")
    out = tuple(_parse_round(f"round {i}", r, cfg) for i, r in enumerate(rounds, start=1))
    cards = [(i, d.card[0]) for i, d in enumerate(out, start=1) if d.card is not None]
    for k, (i, name) in enumerate(cards):
        again = next((j for j, other in cards[:k] if deals.same(other, name)), None)
        if again is not None:
            raise deals.error(f"round {i} deals the {name} card of round {again} again; a match never reuses a card")
    return out


def round_deal(cfg: ChameleonConfig, round_no: int) -> RoundDeal:
    return cfg.deal[round_no - 1] if cfg.deal is not None and round_no <= len(cfg.deal) else RoundDeal()


def validate(cfg: ChameleonConfig) -> ChameleonConfig:
    card_size = whole_number("card_size", cfg.card_size, MIN_CARD_SIZE, MAX_CARD_SIZE)
    cfg = dataclasses.replace(
        cfg,
        variant=one_of(Variant, "variant", cfg.variant),
        mode=one_of(Mode, "mode", cfg.mode),
        tie_rule=one_of(TieRule, "tie_rule", cfg.tie_rule),
        target_points=whole_number("target_points", cfg.target_points, 1, 50),
        max_rounds=whole_number("max_rounds", cfg.max_rounds, 1, 100),
        discussion=flag("discussion", cfg.discussion),
        deck=None if cfg.deck is None else decks.custom(decks.parse_cards, cfg.deck, size=card_size),
    )
    if cfg.deal is not None:
        cfg = dataclasses.replace(cfg, deal=parse_deal(cfg.deal, cfg))
    available = len(deck_of(cfg))
    if cfg.mode is Mode.MATCH and available < cfg.max_rounds:
        # A match never reuses a card, so the deck must outlast the round limit.
        raise ConfigError(
            f"a match of up to {cfg.max_rounds} rounds needs at least {cfg.max_rounds} cards; "
            f"the deck has {available}: lower max_rounds or add cards"
        )
    return cfg


def deck_of(cfg: ChameleonConfig) -> tuple[Card, ...]:
    return decks.cards() if cfg.deck is None else cfg.deck
