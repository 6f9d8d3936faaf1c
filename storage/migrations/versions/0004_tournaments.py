"""Tournaments, their matches and ratings, and the scheduler's lease.

Types are spelled out here (as in 0001) so the revision keeps describing the schema
it created after the models move on.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _ts() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tenant", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("game", sa.String(), nullable=False),
        sa.Column("variant", sa.String(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("entrants", sa.JSON(), nullable=False),
        sa.Column("format", sa.String(), nullable=False),
        sa.Column("seats", sa.Integer(), nullable=False),
        sa.Column("games_per_pairing", sa.Integer(), nullable=False),
        sa.Column("duplicate", sa.Boolean(), nullable=False),
        sa.Column("spectate", sa.Boolean(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("schedule", sa.String(), nullable=True),
        sa.Column("concurrency", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("platform", sa.String(), nullable=False),
        sa.Column("place", sa.String(), nullable=False),
        sa.Column("status_message", sa.JSON(), nullable=True),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("started_at", _ts(), nullable=True),
        sa.Column("finished_at", _ts(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_tournaments_tenant", "tournaments", ["tenant"])
    op.create_index("ix_tournaments_status", "tournaments", ["status"])

    op.create_table(
        "tournament_matches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("seats", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("deal_group", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("roles", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("started_at", _ts(), nullable=True),
        sa.Column("finished_at", _ts(), nullable=True),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"]),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "idx", name="uq_tournament_matches_idx"),
    )
    op.create_index("ix_tournament_matches_tournament_id", "tournament_matches", ["tournament_id"])
    op.create_index("ix_tournament_matches_game_id", "tournament_matches", ["game_id"])

    op.create_table(
        "tournament_ratings",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("entrant", sa.String(), nullable=False),
        sa.Column("game", sa.String(), nullable=False),
        sa.Column("variant", sa.String(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("lo", sa.Float(), nullable=False),
        sa.Column("hi", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("updated_at", _ts(), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"]),
        sa.PrimaryKeyConstraint("tournament_id", "entrant"),
    )

    op.create_table(
        "scheduler_leases",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("expires_at", _ts(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade() -> None:
    op.drop_table("scheduler_leases")
    op.drop_table("tournament_ratings")
    op.drop_index("ix_tournament_matches_game_id", table_name="tournament_matches")
    op.drop_index("ix_tournament_matches_tournament_id", table_name="tournament_matches")
    op.drop_table("tournament_matches")
    op.drop_index("ix_tournaments_status", table_name="tournaments")
    op.drop_index("ix_tournaments_tenant", table_name="tournaments")
    op.drop_table("tournaments")
