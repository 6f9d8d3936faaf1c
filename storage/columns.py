"""Column types and helpers under the tables: aware UTC timestamps, enums stored as text, the
typed way to a model's ``sa.Table``, the key of an inserted row.

``storage.tables`` re-exports them (callers have always imported ``utcnow`` from there).
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.types import TypeDecorator
from sqlmodel import SQLModel
from sqlmodel.sql.sqltypes import AutoString


def utcnow() -> datetime:
    return datetime.now(UTC)


def inserted_id(result: sa.CursorResult[Any]) -> int:
    """The integer key of the one row a single-row INSERT just wrote.

    SQLAlchemy types ``inserted_primary_key`` as optional (it is None after an
    executemany or a statement that is no INSERT); that would be a bug here.
    """
    key = result.inserted_primary_key
    if key is None or key[0] is None:
        raise RuntimeError("the INSERT reported no primary key (not a single-row INSERT?)")
    return int(key[0])


def table_of(model: type[SQLModel]) -> sa.Table:
    """The ``sa.Table`` of a table model, for Core statements (``sa.insert``, ``sa.update``).

    SQLModel's metaclass adds ``__table__`` without declaring it, so a type checker cannot see it;
    this is the one place that reaches for it.
    """
    table = getattr(model, "__table__", None)
    if not isinstance(table, sa.Table):
        raise TypeError(f"{model.__name__} is not a table model")
    return table


E = TypeVar("E", bound=StrEnum)


class EnumText(TypeDecorator[E]):
    """A ``StrEnum`` column stored as its plain string (SQL reading the database needs no Python):
    a value going in must be a member (or a member's string), and comes back out as the member."""

    impl = AutoString
    cache_ok = True

    def __init__(self, enum: type[E]) -> None:
        super().__init__()
        self.enum = enum

    def process_bind_param(self, value: E | str | None, dialect: sa.Dialect) -> str | None:
        return None if value is None else self.enum(value).value

    def process_result_value(self, value: str | None, dialect: sa.Dialect) -> E | None:
        return None if value is None else self.enum(value)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that goes in and comes out as aware UTC.

    SQLite has no time zones: SQLAlchemy writes the wall time and reads back a
    naive datetime. Normalising to UTC on the way in and tagging UTC on the
    way out makes SQLite and Postgres (``timestamptz``) behave the same.
    Naive datetimes handed in are taken to be UTC already.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        # SQLite's DateTime would drop the offset anyway; dropping it here keeps strings sortable.
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
