"""The store's schema version: created on first use, migrated forward, never guessed backward.

``schema_version`` holds one number. A store without it is either empty (created at the current
version) or from before versions existed (version 1). Each migration adds columns; new tables
and indexes then come from ``create_tables``, which skips what exists. Two processes starting
at once on one store migrate it once: the whole step runs under the store's write lock
(SQLite's BEGIN IMMEDIATE, a PostgreSQL advisory lock held to the end of the transaction).
A store newer than this program is refused: writing to it could lose what the newer one keeps.
"""

from __future__ import annotations

from collections.abc import Sequence

import peewee as pw
from playhouse.migrate import SchemaMigrator, migrate

from mediaassist.core.location import StoreUnavailable

VERSION_TABLE = "schema_version"
LEGACY_VERSION = 1  # the tables as they were before schema_version existed
# version -> the columns it adds: (table, column, field). Only nullable or defaulted columns,
# so rows written by older versions stay valid.
MIGRATIONS: dict[int, list[tuple[str, str, pw.Field]]] = {
    2: [("account", "host", pw.CharField(null=True)),  # the machine the account's profile lives on
        ("task", "host", pw.CharField(null=True))],  # the machine that ran (or runs) the task
}
SCHEMA_VERSION = max(MIGRATIONS)
_PG_LOCK_KEY = 0x6D656469  # "medi": any constant shared by every mediaassist process


class SchemaVersion(pw.Model):
    version = pw.IntegerField()

    class Meta:
        table_name = VERSION_TABLE


def ensure_schema(db: pw.Database, models: Sequence[type[pw.Model]], where: str) -> int:
    """Bring the store at ``db`` to SCHEMA_VERSION; returns the version found before."""
    with SchemaVersion.bind_ctx(db), db.atomic(*_write_lock(db)):
        if isinstance(db, pw.PostgresqlDatabase):
            db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK_KEY,))
        found = _stored_version(db)
        if found > SCHEMA_VERSION:
            raise StoreUnavailable(
                f"{where}: the store's schema is version {found}, newer than this program knows "
                f"({SCHEMA_VERSION}); upgrade mediaassist on this machine before using that store")
        if found:
            _add_columns(db, found)
        db.create_tables([*models, SchemaVersion])
        if found != SCHEMA_VERSION:
            SchemaVersion.delete().execute()
            SchemaVersion.create(version=SCHEMA_VERSION)
    return found


def _write_lock(db: pw.Database) -> tuple[str, ...]:
    # SQLite: take the write lock at BEGIN, so a second process waits instead of reading an
    # old version and migrating again.
    return ("IMMEDIATE",) if isinstance(db, pw.SqliteDatabase) else ()


def _stored_version(db: pw.Database) -> int:
    """0 for an empty store, LEGACY_VERSION for one from before schema_version existed."""
    if db.table_exists(VERSION_TABLE):
        return SchemaVersion.select(pw.fn.MAX(SchemaVersion.version)).scalar() or LEGACY_VERSION
    return LEGACY_VERSION if db.table_exists("task") else 0


def _add_columns(db: pw.Database, found: int) -> None:
    migrator = SchemaMigrator.from_database(db)
    for version in range(found + 1, SCHEMA_VERSION + 1):
        for table, column, field in MIGRATIONS.get(version, []):
            if table in db.get_tables() and column not in {c.name for c in db.get_columns(table)}:
                migrate(migrator.add_column(table, column, field))
