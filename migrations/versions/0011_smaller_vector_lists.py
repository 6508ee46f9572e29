"""Vector indexes at a hundred rows a list, from 2,000 chunks, with calibrated probes.

``app.db.vector_index`` now indexes every repository above 2,000 embedded chunks (it was
20,000) and gives an index ``rows / 100`` lists (it was ``rows / 1000``), with ``probes``
calibrated up to every list. Existing repositories are brought to the new rule here:
those between the thresholds get an index, larger ones are rebuilt with ten times the
lists and calibrated. This takes as long as those builds (bench/RESULTS.md).

Downgrading changes nothing: the earlier rule rebuilds or drops these indexes at each
repository's next index run.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

from app.db.vector_index import index_repositories

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    index_repositories(op.get_bind())


def downgrade() -> None:
    pass
