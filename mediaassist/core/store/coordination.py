"""Coordination between the processes and machines sharing one store: gates (one holder at a
time, with a lease), presence, heartbeats, and the checks of running rows.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterable, Iterator, Sequence

import peewee as pw

from mediaassist.core.errors import FAULT_FULL, StorageFault
from mediaassist.core.location import host_id
from mediaassist.core.messages import msg
from mediaassist.core.owners import owner_host, owner_is_dead
from mediaassist.core.store.connection import StoreConnection
from mediaassist.core.store.database import (
    BUSY_TIMEOUT_S,
    CHUNK,
    PROBE_BUSY_TIMEOUT_MS,
    SqliteStoreDatabase,
    checkpoint,
    fault_message,
)
from mediaassist.core.store.tables import RUNNING_ROW, Gate, Presence, Task

PROBE_GATE = "storage-probe"  # the row probe_write touches; no process ever takes this gate
PROBE_HEADROOM_PAGES = 64  # the room probe_write wants: a few results' worth, not an update in place
FORGET_ABSENT_S = 86400.0  # a presence row not renewed for this long is dropped (forget_long_absent)


class Coordination(StoreConnection):
    """What processes sharing the store agree through it: gates, presence, heartbeats,
    the running rows that need attention, and the probe that the store takes writes again."""

    # --- the store taking writes again ------------------------------------------------------
    def probe_write(self) -> None:
        """One small real write; raises ``StorageFault`` while the store still refuses writes.

        A small write alone proves little: an update in place fits in pages (or WAL frames) the
        file already has while the disk stays full. So the probe also wants room to grow.

        While another process holds the write lock (stopped mid-write) the probe gives up after
        ``PROBE_BUSY_TIMEOUT_MS``, not the ``BUSY_TIMEOUT_S`` every other write waits: it is
        repeated every few seconds for as long as the lock is held."""
        self.check_file()
        if isinstance(self.db, pw.SqliteDatabase) and not self._has_room_to_grow():
            raise StorageFault(FAULT_FULL, str(self.path),
                               fault_message(FAULT_FULL, self.path, msg("no room to grow")))
        with self._busy_timeout_ms(PROBE_BUSY_TIMEOUT_MS):
            self.set_gate_not_before(PROBE_GATE, self.now())
        if self.wal_pending and isinstance(self.db, SqliteStoreDatabase):
            self.wal_pending = not checkpoint(self.db, self.path)

    @contextlib.contextmanager
    def _busy_timeout_ms(self, ms: int) -> Iterator[None]:
        """This thread's connection waits ``ms`` for another process's write lock, then the usual."""
        if not isinstance(self.db, pw.SqliteDatabase):  # PostgreSQL has no such wait here
            yield
            return
        self.db.execute_sql(f"PRAGMA busy_timeout = {int(ms)}")
        try:
            yield
        finally:
            self.db.execute_sql(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")

    def _has_room_to_grow(self) -> bool:
        """Room for ``PROBE_HEADROOM_PAGES`` more pages: on the disk, and under SQLite's own
        ``max_page_count`` (which gives the same 'database or disk is full')."""
        page_size, pages, max_pages = (self.db.execute_sql(f"PRAGMA {name}").fetchone()[0]
                                       for name in ("page_size", "page_count", "max_page_count"))
        try:
            free = shutil.disk_usage(self.path.parent).free
        except OSError:
            return False
        return bool(max_pages - pages >= PROBE_HEADROOM_PAGES and free >= PROBE_HEADROOM_PAGES * page_size)

    # --- running rows: heartbeats, cancel flags, stalls -------------------------------------
    def heartbeat(self, task_ids: Iterable[str], owner: str) -> None:
        ids = list(task_ids)
        now = self.now()
        for start in range(0, len(ids), CHUNK):
            (Task.update(heartbeat_at=now)
             .where(Task.task_id.in_(ids[start:start + CHUNK]) & RUNNING_ROW
                    & (Task.owner == owner))
             .execute())

    def running_needing_attention(self, stall_cutoff: float) -> tuple[set[str], bool]:
        """The running rows flagged for cancel (their ids) and whether any running row's heartbeat
        is older than ``stall_cutoff``: the scheduler's frequent check, one indexed query that
        reads only the running rows (plain SQL: peewee's query building would cost more)."""
        mark = self.db.param
        rows = self.db.execute_sql(
            f'SELECT task_id, cancel_requested, heartbeat_at < {mark} FROM "task" WHERE {RUNNING_ROW.sql} '
            f'AND (cancel_requested = {mark} OR heartbeat_at < {mark})',
            (stall_cutoff, True, stall_cutoff)).fetchall()
        flagged = {task_id for task_id, cancel_requested, _stalled in rows if cancel_requested}
        return flagged, any(stalled for _id, _flag, stalled in rows)

    def cancel_requested_among(self, task_ids: Iterable[str]) -> set[str]:
        ids = list(task_ids)
        found: set[str] = set()
        for start in range(0, len(ids), CHUNK):
            found.update(t.task_id for t in Task.select(Task.task_id).where(
                Task.task_id.in_(ids[start:start + CHUNK]) & (Task.cancel_requested == True)))  # noqa: E712
        return found

    def stalled(self, cutoff: float) -> list[Task]:
        """Running rows whose heartbeat is older than ``cutoff``."""
        return list(Task.select().where(RUNNING_ROW & (Task.heartbeat_at < cutoff)))

    def running_owners(self) -> set[str]:
        return {t.owner for t in Task.select(Task.owner).where(RUNNING_ROW).distinct()
                if t.owner}

    def running_of_owner(self, owner: str) -> list[Task]:
        return list(Task.select().where(RUNNING_ROW & (Task.owner == owner)))

    # --- presence: the processes at work on this store -------------------------------------
    def announce(self, owner: str, batch_ids: Sequence[str] | None = None) -> None:
        """``owner`` is at work now, on every batch or only on ``batch_ids`` (call it with every
        heartbeat)."""
        now = self.now()
        batches = None if batch_ids is None else json.dumps(sorted(batch_ids))
        (Presence.insert(owner=owner, host=owner_host(owner) or host_id(), beat_at=now, batches=batches)
         .on_conflict(conflict_target=[Presence.owner],
                      update={Presence.beat_at: now, Presence.batches: batches}).execute())

    def silent_owners(self, owners: Iterable[str], cutoff: float) -> set[str]:
        """Those of ``owners`` whose presence row was last renewed before ``cutoff`` (a process
        that withdrew, or never announced, has no row and is not among them)."""
        wanted = list(owners)
        if not wanted:
            return set()
        query = Presence.select(Presence.owner).where(Presence.owner.in_(wanted) & (Presence.beat_at < cutoff))
        return {row.owner for row in query}

    def withdraw(self, owner: str) -> None:
        Presence.delete().where(Presence.owner == owner).execute()

    def forget_long_absent(self) -> None:
        """Drop the rows of processes that died without withdrawing, a day on: only clutter."""
        Presence.delete().where(Presence.beat_at < self.now() - FORGET_ABSENT_S).execute()

    def hosts_present(self, cutoff: float, batch_ids: Iterable[str] | None = None) -> dict[str, int]:
        """{machine: processes} with a heartbeat newer than ``cutoff`` -- only the processes that
        take work of one of ``batch_ids``, when given."""
        wanted = None if batch_ids is None else set(batch_ids)
        present: dict[str, int] = {}
        for row in Presence.select().where(Presence.beat_at >= cutoff).order_by(Presence.host):
            if wanted is None or row.batches is None or wanted & set(json.loads(row.batches)):
                present[row.host] = present.get(row.host, 0) + 1
        return present

    # --- gates: one holder at a time, across processes --------------------------------------
    def try_gate(self, name: str, owner: str, ttl_s: float) -> bool:
        """Take the gate ``name`` for ``owner`` for ``ttl_s`` seconds (renew before it ends).

        True if ``owner`` holds it now (taking it again renews it). The gate is free when nobody
        holds it, when the holder's lease has ended, or when the holder is a process on this host
        that is proven dead (then at once, without waiting for the lease).
        """
        now = self.now()
        with self.db.atomic():
            Gate.insert(name=name).on_conflict_ignore().execute()
            free = (Gate.owner.is_null() | (Gate.owner == owner) | (Gate.expires_at < now))
            if Gate.update(owner=owner, expires_at=now + ttl_s).where((Gate.name == name) & free).execute():
                return True
            holder = Gate.get_or_none(Gate.name == name)
            if holder is None or holder.owner is None or not owner_is_dead(holder.owner):
                return False
            # The holder died: take it over, unless someone else just did.
            return bool(Gate.update(owner=owner, expires_at=now + ttl_s)
                        .where((Gate.name == name) & (Gate.owner == holder.owner)).execute())

    def renew_gate(self, name: str, owner: str, ttl_s: float) -> bool:
        """Extend ``owner``'s lease; False if it no longer holds the gate (the lease ran out and
        another process took it)."""
        return bool(Gate.update(expires_at=self.now() + ttl_s)
                    .where((Gate.name == name) & (Gate.owner == owner)).execute())

    def release_gate(self, name: str, owner: str) -> bool:
        return bool(Gate.update(owner=None, expires_at=0.0)
                    .where((Gate.name == name) & (Gate.owner == owner)).execute())

    def gate_holder(self, name: str) -> str | None:
        gate = Gate.get_or_none(Gate.name == name)
        return gate.owner if gate is not None and gate.expires_at >= self.now() else None

    def set_gate_not_before(self, name: str, at: float) -> None:
        """A back-off for everyone using the gate: nobody should pass it before ``at``."""
        (Gate.insert(name=name, not_before=at)
         .on_conflict(conflict_target=[Gate.name], update={Gate.not_before: at}).execute())

    def defer_gate(self, name: str, at: float) -> None:
        """Nobody should pass the gate before ``at`` (store clock); a later back-off already
        there stands: two processes told different waits both get theirs."""
        later = pw.Case(None, [(Gate.not_before < at, at)], Gate.not_before)
        (Gate.insert(name=name, not_before=at)
         .on_conflict(conflict_target=[Gate.name], update={Gate.not_before: later}).execute())

    def gate_not_before(self, name: str) -> float:
        gate = Gate.get_or_none(Gate.name == name)
        return gate.not_before if gate is not None else 0.0
