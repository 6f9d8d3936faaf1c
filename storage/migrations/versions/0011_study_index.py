"""The human study's walk: an index on annotation items by (tenant, task, key), so ``serve`` finds a
member's next fresh item by an index range that stops at the first match, whatever the log's size.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_annotation_items_tenant_task_key", "annotation_items", ["tenant", "task", "key"])


def downgrade() -> None:
    op.drop_index("ix_annotation_items_tenant_task_key", table_name="annotation_items")
