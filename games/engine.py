"""The engine base: what every game's engine would otherwise repeat, held once.

A game's engine subclasses ``Engine[State, Config]`` and hands the base its setup
(``Setup``): the config dataclass and its ``validate``, how many seats a config plays
with, how its events and rules read in words. The base then answers the parts of the
``games.base.Game`` protocol that are the same everywhere: ``make_config`` (the first
variant by default), ``config_from_dict`` (unknown options refused), ``seat_range``,
``check_seats`` (one sentence naming the game and the span), ``board`` (None: no grid), ``with_deal`` (a complete
deal, as ``deal_of`` returns it, put into a config: how records and exports replay
without their seed), ``text`` and ``rules``. What remains for a game is its rules proper:
``new``, ``to_act``, ``legal``, ``apply``, ``observe``, ``result``, ``secrets``,
``timeout_action`` and ``deal_of``.

Every config has a ``deal`` field (None: everything drawn from the seed); the base checks
that once, when the engine is made, so a record's deal always has a place to go.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from games.base import Board, ConfigError, Event, Seat
from games.options import config_from_dict

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

S = TypeVar("S")
C = TypeVar("C", bound="DataclassInstance")


def _as_is(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    return raw


@dataclass(frozen=True, slots=True)
class Setup(Generic[C]):
    """What a game hands the engine base.

    - ``config``: the frozen config dataclass (with a ``deal`` field) and ``validate``, the
      one function that checks every field (and parses a deal given as data);
    - ``seats``: fewest and most seats, or a function of the config giving them;
    - ``title``: how a refusal names the game ("Who-is-Spy needs 3 to 12 players, not 2");
    - ``narrate``: an event as a sentence, seats named by ``names``; ``rules``: the rules of a
      config for players;
    - ``defaults``: options a variant implies before the fields are checked (the Chameleon's
      card size per variant); None when a config's own defaults suffice.
    """

    config: type[C]
    validate: Callable[[C], C]
    seats: tuple[int, int] | Callable[[C], tuple[int, int]]
    title: str
    narrate: Callable[[Event, Sequence[str]], str]
    rules: Callable[[C], str]
    defaults: Callable[[Mapping[str, Any]], Mapping[str, Any]] = _as_is


class Engine(Generic[S, C]):
    """The base of every game's engine; stateless, like the engines themselves."""

    id: ClassVar[str]
    variants: ClassVar[tuple[str, ...]]

    def __init__(self, setup: Setup[C]) -> None:
        if "deal" not in {f.name for f in dataclasses.fields(setup.config)}:
            raise TypeError(f"{setup.config.__name__} needs a 'deal' field (None: drawn from the seed)")
        self.setup = setup

    # ---- config

    def make_config(self, variant: str | None = None, **options: Any) -> C:
        """A validated config for a variant (the first by default) with options; raises ConfigError."""
        return self.config_from_dict({"variant": variant or self.variants[0], **options})

    def config_from_dict(self, raw: Mapping[str, Any]) -> C:
        raw = {"variant": self.variants[0], **raw}
        return self.setup.validate(config_from_dict(self.setup.config, self.setup.defaults(raw)))

    def with_deal(self, cfg: C, deal: object) -> C:
        """``cfg`` playing this deal (as ``deal_of`` gave it; a partial deal draws the rest from
        the seed). Raises ConfigError naming what is wrong with the deal."""
        if deal is None:
            return cfg
        return self.setup.validate(dataclasses.replace(cfg, deal=deal))

    # ---- seats

    def seat_range(self, cfg: C) -> tuple[int, int]:
        """Fewest and most seats this config can be played with."""
        seats = self.setup.seats
        return seats if isinstance(seats, tuple) else seats(cfg)

    def check_seats(self, cfg: C, seats: Seat) -> None:
        """Refuse a table of the wrong size with one sentence (the first check of every ``new``)."""
        lo, hi = self.seat_range(cfg)
        if not lo <= seats <= hi:
            span = f"exactly {lo}" if lo == hi else f"{lo} to {hi}"
            raise ConfigError(f"{self.setup.title} ({getattr(cfg, 'variant', '')}) needs {span} players, not {seats}")

    # ---- words for people

    def text(self, e: Event, names: Sequence[str]) -> str:
        """A sentence for humans describing an event, with seats named by ``names``."""
        return self.setup.narrate(e, names)

    def rules(self, cfg: C) -> str:
        """The rules of this config, in a few paragraphs for players."""
        return self.setup.rules(cfg)

    def board(self, s: S, seat: Seat) -> Board | None:
        """The table as ``seat`` sees it, drawn as a grid; None for games not played on a board."""
        return None
