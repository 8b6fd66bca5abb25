"""The store's schema version: created on first use, migrated forward, never guessed backward.

``schema_version`` holds one number. A store without it is either empty (created at the current
version) or from before versions existed (version 1). Each version adds columns (the list lives
with the models, in ``store.SCHEMA_COLUMNS``); new tables and indexes then come from
``create_tables``, which skips what exists -- run when the version changes or a table is missing,
so a new index on an existing table needs a new version (an entry with no columns will do). Two processes starting
at once on one store migrate it once: the whole step runs under the store's write lock
(SQLite's BEGIN IMMEDIATE, a PostgreSQL advisory lock held to the end of the transaction).
A store newer than this program is refused: writing to it could lose what the newer one keeps.
"""

from __future__ import annotations

from collections.abc import Sequence

import peewee as pw

from mediaassist.core.location import FAULT_SCHEMA, StoreUnavailable
from mediaassist.core.messages import msg

VERSION_TABLE = "schema_version"
LEGACY_VERSION = 1  # the tables as they were before schema_version existed
_PG_LOCK_KEY = 0x6D656469  # "medi": any constant shared by every mediaassist process
# version -> [(table, column, SQL type)]: the columns that version adds (see store.SCHEMA_COLUMNS)
Columns = dict[int, list[tuple[str, str, str]]]
# version -> [index name]: the indexes that version drops (replaced by ones create_tables makes)
DroppedIndexes = dict[int, list[str]]


class SchemaVersion(pw.Model):
    version = pw.IntegerField()

    class Meta:
        table_name = VERSION_TABLE


def ensure_schema(db: pw.Database, models: Sequence[type[pw.Model]], columns: Columns, where: str,
                  dropped: DroppedIndexes | None = None) -> int:
    """Bring the store at ``db`` to the newest version in ``columns``; returns the version found."""
    current = max(columns)
    with SchemaVersion.bind_ctx(db), db.atomic(*_write_lock(db)):
        if isinstance(db, pw.PostgresqlDatabase):
            # peewee-stubs leave Database.execute_sql unannotated
            db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK_KEY,))  # type: ignore[no-untyped-call]
        found = _stored_version(db)
        if found > current:
            raise StoreUnavailable(
                msg("{where}: the store's schema is version {found}, newer than this program knows ({current}); "
                    "upgrade mediaassist on this machine before using that store",
                    where=where, found=found, current=current), where, FAULT_SCHEMA)
        if found:
            _add_columns(db, found, columns)
            _drop_indexes(db, found, max(columns), dropped or {})
        if found != current or not set(_table_names(models)) <= set(db.get_tables()):
            # Only when something is missing: CREATE INDEX IF NOT EXISTS takes a SHARE lock on
            # its table even when the index is there, and PostgreSQL then found deadlocks with
            # the claims of processes already at work (a process starting beside them failed).
            db.create_tables([*models, SchemaVersion])
        if found != current:
            SchemaVersion.delete().execute()
            SchemaVersion.create(version=current)
    return found


def _table_names(models: Sequence[type[pw.Model]]) -> list[str]:
    return [model._meta.table_name for model in [*models, SchemaVersion]]  # type: ignore[attr-defined]  # peewee's Metadata: not in peewee-stubs


def _write_lock(db: pw.Database) -> tuple[str, ...]:
    # SQLite: take the write lock at BEGIN, so a second process waits instead of reading an
    # old version and migrating again.
    return ("IMMEDIATE",) if isinstance(db, pw.SqliteDatabase) else ()


def _stored_version(db: pw.Database) -> int:
    """0 for an empty store, LEGACY_VERSION for one from before schema_version existed."""
    if db.table_exists(VERSION_TABLE):
        return SchemaVersion.select(pw.fn.MAX(SchemaVersion.version)).scalar() or LEGACY_VERSION
    return LEGACY_VERSION if db.table_exists("task") else 0


def _drop_indexes(db: pw.Database, found: int, current: int, dropped: DroppedIndexes) -> None:
    for version in range(found + 1, current + 1):
        for name in dropped.get(version, []):
            db.execute_sql(f'DROP INDEX IF EXISTS "{name}"')  # type: ignore[no-untyped-call]  # unannotated in peewee-stubs


def _add_columns(db: pw.Database, found: int, columns: Columns) -> None:
    tables = set(db.get_tables())
    for version in range(found + 1, max(columns) + 1):
        for table, column, sql_type in columns.get(version, []):
            # A table that is not there yet is created whole by create_tables.
            if table in tables and column not in {c.name for c in db.get_columns(table)}:
                db.execute_sql(f'ALTER TABLE "{table}" ADD COLUMN "{column}" {sql_type}')  # type: ignore[no-untyped-call]
