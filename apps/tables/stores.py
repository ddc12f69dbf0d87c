"""Opening a tables' store by where it is (kept apart from :mod:`.store` and
:mod:`.pgstore`, which both build on :mod:`.store`'s definitions)."""

from __future__ import annotations

from battlejudge.apps.tables.store import DirTableStore, TableStore


def open_table_store(where: str) -> TableStore:
    """The store at ``where``: a ``postgresql://`` URL (the ``postgres`` extra), or a
    directory (made if missing)."""
    if where.startswith(("postgresql://", "postgres://")):
        from battlejudge.apps.tables.pgstore import PgTableStore

        return PgTableStore(where)
    return DirTableStore(where)
