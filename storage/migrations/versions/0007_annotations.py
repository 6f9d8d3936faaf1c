"""The SNEAK human study: items people judge and their answers.

Types are spelled out here (as in 0001) so the revision keeps describing the schema
it created after the models move on.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "annotation_items",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("task", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("tenant", sa.String(), nullable=False),
        sa.Column("item", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_index("ix_annotation_items_game_id", "annotation_items", ["game_id"])
    op.create_index("ix_annotation_items_tenant", "annotation_items", ["tenant"])
    op.create_table(
        "annotations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_key", sa.String(), nullable=False),
        sa.Column("annotator", sa.String(), nullable=False),
        sa.Column("tenant", sa.String(), nullable=False),
        sa.Column("choice", sa.Integer(), nullable=True),
        sa.Column("correct", sa.Boolean(), nullable=True),
        sa.Column("served_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["item_key"], ["annotation_items.key"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("item_key", "annotator", name="uq_annotations_item_annotator"),
    )
    op.create_index("ix_annotations_item_key", "annotations", ["item_key"])
    op.create_index("ix_annotations_annotator", "annotations", ["annotator"])


def downgrade() -> None:
    op.drop_index("ix_annotations_annotator", table_name="annotations")
    op.drop_index("ix_annotations_item_key", table_name="annotations")
    op.drop_table("annotations")
    op.drop_index("ix_annotation_items_tenant", table_name="annotation_items")
    op.drop_index("ix_annotation_items_game_id", table_name="annotation_items")
    op.drop_table("annotation_items")
