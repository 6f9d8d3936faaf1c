"""SNEAK evaluation rows keyed per move, evaluator and settings.

Adds to ``evaluations`` what a SNEAK score needs (part of the action, game,
settings digest and settings, instance, decoys, ordering seed, both
probability vectors, the four metrics, the failure reason) and the unique key
(game_id, action_seq, part, evaluator, settings) that makes re-scoring
idempotent. Existing rows keep their values; new columns get defaults.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# A function, not a tuple of columns: a Column object belongs to one table once added.
def _columns() -> list[sa.Column[object]]:
    return [
        sa.Column("part", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("game", sa.String(), nullable=False, server_default=""),
        sa.Column("settings", sa.String(), nullable=False, server_default=""),
        sa.Column("settings_json", sa.JSON(), nullable=False, server_default="{}"),
        sa.Column("instance", sa.JSON(), nullable=False, server_default="{}"),
        sa.Column("decoys", sa.JSON(), nullable=False, server_default="[]"),
        sa.Column("perm_seed", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("ally_probs", sa.JSON(), nullable=True),
        sa.Column("cham_probs", sa.JSON(), nullable=True),
        sa.Column("utility", sa.Float(), nullable=True),
        sa.Column("leakage", sa.Float(), nullable=True),
        sa.Column("soft", sa.Float(), nullable=True),
        sa.Column("binary", sa.Float(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
    ]


def upgrade() -> None:
    # Batch mode: SQLite cannot add a constraint to an existing table in place.
    with op.batch_alter_table("evaluations") as batch:
        for column in _columns():
            batch.add_column(column)
        batch.create_unique_constraint("uq_evaluations_move", ["game_id", "action_seq", "part", "evaluator", "settings"])


def downgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_constraint("uq_evaluations_move", type_="unique")
        for column in reversed(_columns()):
            batch.drop_column(column.name)
