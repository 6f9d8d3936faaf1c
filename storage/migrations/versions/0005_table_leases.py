"""Table leases: which bot process drives each running game, with a fencing token.

Types are spelled out here (as in 0001) so the revision keeps describing the schema
it created after the models move on.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "table_leases",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("token", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.PrimaryKeyConstraint("game_id"),
    )
    op.create_index("ix_table_leases_owner", "table_leases", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_table_leases_owner", table_name="table_leases")
    op.drop_table("table_leases")
