"""Bot processes: each live process of several on one database, what it serves (the tenants
whose commands reach it) and until when, so a table taken over while its tenant's process was
down goes back to that process once it is alive again.

Types are spelled out here (as in 0001) so the revision keeps describing the schema
it created after the models move on.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "bot_processes",
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("serves", sa.JSON(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("owner"),
    )


def downgrade() -> None:
    op.drop_table("bot_processes")
