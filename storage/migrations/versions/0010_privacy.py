"""People's choices and rights: research consent per member, the privacy notice shown once per
tenant, erasures waiting for a game to end, finished games whose text the retention job removed, and the audit of exports, data requests and erasures.

Types are spelled out here (as in 0001) so the revision keeps describing the schema
it created after the models move on.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "members",
        sa.Column("user_key", sa.String(), nullable=False),
        sa.Column("research", sa.Boolean(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("user_key"),
    )
    op.create_table(
        "privacy_notices",
        sa.Column("tenant", sa.String(), nullable=False),
        sa.Column("user_key", sa.String(), nullable=False),
        sa.Column("shown_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tenant", "user_key"),
    )
    op.create_index("ix_privacy_notices_user_key", "privacy_notices", ["user_key"])
    op.create_table(
        "pending_erasures",
        sa.Column("user_key", sa.String(), nullable=False),
        sa.Column("requested_by", sa.String(), nullable=False),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("user_key"),
    )
    op.create_table(
        "privacy_audit",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(), nullable=False),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("scope", sa.String(), nullable=False),
        sa.Column("subject", sa.String(), nullable=True),
        sa.Column("rows", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_privacy_audit_at", "privacy_audit", ["at"])
    op.create_index("ix_privacy_audit_subject", "privacy_audit", ["subject"])
    op.create_table(
        "text_expiry",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("expired_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.PrimaryKeyConstraint("game_id"),
    )


def downgrade() -> None:
    op.drop_table("text_expiry")
    op.drop_index("ix_privacy_audit_subject", table_name="privacy_audit")
    op.drop_index("ix_privacy_audit_at", table_name="privacy_audit")
    op.drop_table("privacy_audit")
    op.drop_table("pending_erasures")
    op.drop_index("ix_privacy_notices_user_key", table_name="privacy_notices")
    op.drop_table("privacy_notices")
    op.drop_table("members")
