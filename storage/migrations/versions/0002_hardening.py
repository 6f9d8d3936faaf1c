"""Tenants and broken games.

- ``games.tenant``: whose game it is ("discord:<guild>", "slack:<team>", "console");
  ids, lists and exports never cross tenants. Old rows get "" (no tenant: only the
  operator's CLI sees them).
- ``games.status_reason``: why a game was marked broken (a logged action no longer
  replays) or could not be resumed; shown by ``hushtable doctor``.

Host hand-over uses the existing ``games.host``; the deadline of a running game lives in
``games.lobby`` like the lobby's (written by ``Store.set_running_options``).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # batch mode: SQLite cannot add NOT NULL columns or indexes in place on every version.
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("tenant", sa.String(), nullable=False, server_default=""))
        batch.add_column(sa.Column("status_reason", sa.Text(), nullable=True))
        batch.create_index("ix_games_tenant_status", ["tenant", "status"])


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_index("ix_games_tenant_status")
        batch.drop_column("status_reason")
        batch.drop_column("tenant")
