"""The stretches of lines a chunk holds, when it holds more than one (a class skeleton or
a window of one: its own lines and its members' signatures, not their bodies), so that a
context entry's range is the lines it shows (``ContextChunk.shown_parts``). NULL for a
chunk of one stretch: its ``start_line``-``end_line``. Adding a nullable column rewrites
no rows; files indexed before it are read again (``LINK_VERSION`` 13).

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("code_chunks", sa.Column("segments", ARRAY(sa.Integer()), nullable=True))


def downgrade() -> None:
    op.drop_column("code_chunks", "segments")
