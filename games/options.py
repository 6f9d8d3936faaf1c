"""Game options: a config dataclass from a mapping and back, and the checks every config's
``validate`` runs its fields through. ``games.base`` re-exports every name here."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


class ConfigError(ValueError):
    """A game configuration that cannot be played. The message says what to change."""


C = TypeVar("C", bound="DataclassInstance")


def config_from_dict(cls: type[C], raw: Mapping[str, Any]) -> C:
    """Build a frozen config dataclass from a mapping, refusing unknown keys with a clear message."""
    names = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - set(names))
    if unknown:
        raise ConfigError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    kwargs: dict[str, Any] = {}
    for k, v in raw.items():
        # JSON has no tuples: lists come back as lists.
        kwargs[k] = tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list) else v
    try:
        return cls(**kwargs)
    except TypeError as exc:  # pragma: no cover - dataclass signature errors
        raise ConfigError(str(exc)) from exc


E = TypeVar("E", bound=StrEnum)


def whole_number(name: str, value: object, low: int, high: int) -> int:
    """An option that is a whole number in ``low..high`` (true/false are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be a whole number, not {value!r}")
    if not low <= value <= high:
        raise ConfigError(f"{name} must be between {low} and {high}, not {value}")
    return value


def flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be true or false, not {value!r}")
    return value


def one_of(kind: type[E], name: str, value: object) -> E:
    """An option naming one member of an enum (by its value): ``one_of(Mode, "mode", "match")``."""
    if isinstance(value, str) and value in {m.value for m in kind}:
        return kind(value)
    choices = ", ".join(m.value for m in kind)
    if name == "variant":
        raise ConfigError(f"unknown variant {value!r}; choose one of {choices}")
    raise ConfigError(f"{name} must be one of {choices}, not {value!r}")


def config_to_dict(cfg: object) -> dict[str, Any]:
    if not dataclasses.is_dataclass(cfg) or isinstance(cfg, type):
        raise TypeError(f"a config is a dataclass instance, not {type(cfg).__name__}")
    return dataclasses.asdict(cfg)
