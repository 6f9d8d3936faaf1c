"""Tournament matches keep each seat's outcome (role, side, win, the game's numbers), written
with the match's finish, so standings read them instead of replaying every game.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tournament_matches") as batch:
        batch.add_column(sa.Column("outcomes", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tournament_matches") as batch:
        batch.drop_column("outcomes")
