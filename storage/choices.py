"""A member's own choices and the privacy audit: research consent (``members``), the privacy
notice shown once per tenant (``privacy_notices``), and every export, data request and erasure
(``privacy_audit``: who, when, what scope, how many rows; never content). Re-exported by
``storage.people``, whose erasure removes a member's choices and notices and unlinks their audit rows.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from storage.tables import MemberRow, PrivacyAuditRow, PrivacyNoticeRow, table_of, utcnow

_members = table_of(MemberRow)
_notices = table_of(PrivacyNoticeRow)
_audit = table_of(PrivacyAuditRow)


class Database(Protocol):
    """The units of work these functions use (``storage.database.Database`` has them)."""

    def write(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

    def connect(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

async def set_research(db: Database, key: str, research: bool) -> None:
    """Record a member's research choice."""
    async with db.write() as conn:
        done = await conn.execute(sa.update(_members).where(_members.c.user_key == key)
                                  .values(research=research, updated_at=utcnow()))
        if done.rowcount == 0:
            await conn.execute(sa.insert(_members).values(user_key=key, research=research, updated_at=utcnow()))


async def research_choices(db: Database) -> dict[str, bool]:
    """Every member's recorded research choice."""
    async with db.connect() as conn:
        rows = (await conn.execute(sa.select(_members.c.user_key, _members.c.research)
                                   .where(_members.c.research.is_not(None)))).all()
    return {str(k): bool(r) for k, r in rows}


async def notice_due(db: Database, tenant: str, key: str) -> bool:
    """Whether the member has not yet been shown the privacy notice in this tenant; records it shown
    (so two joins at once show it once)."""
    async with db.write() as conn:
        seen = (await conn.execute(sa.select(_notices.c.user_key).where(
            _notices.c.tenant == tenant, _notices.c.user_key == key))).first()
        if seen is not None:
            return False
        await conn.execute(sa.insert(_notices).values(tenant=tenant, user_key=key, shown_at=utcnow()))
        return True


@dataclass(frozen=True, slots=True)
class AuditEntry:
    at: datetime
    actor: str
    action: str
    scope: str
    rows: int


async def audit(db: Database, *, actor: str, action: str, scope: str, rows: int, subject: str | None = None) -> None:
    """Record one export, data request or erasure (never its content)."""
    async with db.write() as conn:
        await conn.execute(sa.insert(_audit).values(at=utcnow(), actor=actor, action=action, scope=scope,
                                                    subject=subject, rows=rows))


async def audit_log(db: Database, *, limit: int = 50) -> list[AuditEntry]:
    """The newest audit entries first."""
    async with db.connect() as conn:
        rows = (await conn.execute(sa.select(_audit.c.at, _audit.c.actor, _audit.c.action, _audit.c.scope, _audit.c.rows)
                                   .order_by(_audit.c.id.desc()).limit(limit))).all()
    return [AuditEntry(r.at, r.actor, r.action, r.scope, int(r.rows)) for r in rows]
