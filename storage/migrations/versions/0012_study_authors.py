"""The human study's authors: each logged clue's item records the member whose seat made the move
(null for an AI seat), so ``serve`` shows a member's clue only while that member's words may go
into research. Existing items are filled in from the actions and seats tables in one statement
(two primary-key lookups per logged item).

Types are spelled out here (as in 0001) so the revision keeps describing the schema
it created after the models move on.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _seq(dialect: str) -> str:
    """The move's action number in a logged item's key (``log:GAME:SEQ:PART:ROLE``), in the database's words."""
    if dialect == "postgresql":
        return """CAST(split_part(annotation_items."key", ':', 3) AS INTEGER)"""
    rest = """substr(substr(annotation_items."key", 5), instr(substr(annotation_items."key", 5), ':') + 1)"""  # SEQ:PART:ROLE
    return f"CAST(substr({rest}, 1, instr({rest}, ':') - 1) AS INTEGER)"


def upgrade() -> None:
    op.add_column("annotation_items", sa.Column("author", sa.String(), nullable=True))
    # One statement (it renders offline too): each logged item's move by the primary keys of actions and seats.
    op.execute(
        "UPDATE annotation_items SET author = ("
        " SELECT seats.user_key FROM actions JOIN seats ON seats.game_id = actions.game_id AND seats.seat = actions.seat"
        f" WHERE actions.game_id = annotation_items.game_id AND actions.seq = {_seq(op.get_context().dialect.name)}"
        " AND seats.kind = 'human')"
        " WHERE annotation_items.source = 'log' AND annotation_items.game_id IS NOT NULL"
        """ AND annotation_items."key" LIKE 'log:%'""")


def downgrade() -> None:
    op.drop_column("annotation_items", "author")
