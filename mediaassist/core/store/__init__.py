"""The durable task store: one row per task, peewee over SQLite (WAL) or PostgreSQL.

Every state change is a *conditional* UPDATE (``WHERE state = 'running' AND owner = ? AND
attempt = ?``), so a late writer -- a reaped attempt, a cancelled one, a second process -- can
never overwrite a newer truth, and a result is never written twice (it is upserted by task_id
inside the same transaction that ends the attempt).

Limits are held here, not in any process's memory: a claim counts the lane's running rows and
its remote tasks still at the service, and takes at most ``lane_limit`` minus those in the same
transaction, so every process sharing the store stays inside one API concurrency, one polling
cap and one running task per web account. Gates (``try_gate``) serialise one kind of step (a
poll provider's creates) across processes.

Faults of the file itself (disk full, read-only, corrupt, replaced) come out of every statement
as one ``StorageFault`` naming the file and what to do, never as a bare sqlite3 error.

One ``Store`` for its callers, built of rooms (each a class the façade inherits, each room's
module importing only the rooms below it -- an import-linter contract):

- ``database``: peewee's SQLite and PostgreSQL databases as the store uses them, file faults;
- ``tables``: the models, the schema versions (``SCHEMA_COLUMNS``, applied by ``core.schema``);
- ``connection``: opening the store, its clock, transactions and locks (the database-specific
  code is there, in ``database`` and in the claim's ``_take``);
- ``reads``, ``coordination`` (gates, presence, heartbeats), ``accounts`` (lanes, web accounts);
- ``lifecycle``: enqueue, claim, what an attempt saves, its end; ``money`` on top of it;
- ``commands``: the operator's cancel, retry, delete, pick.

Providers see only ``core.lane_store.LaneStore``. Where the store lives is ``core.location``.
"""

from mediaassist.core.store.accounts import LanesAndAccounts
from mediaassist.core.store.commands import OperatorCommands
from mediaassist.core.store.coordination import Coordination
from mediaassist.core.store.database import (
    BUSY_TIMEOUT_S,
    PROBE_BUSY_TIMEOUT_MS,
    check_sqlite_file,
    classify_fault,
    fault_message,
    faults_as_storage,
)
from mediaassist.core.store.money import BudgetStop, Limit, Reservation, Spending
from mediaassist.core.store.tables import (
    AUTO_RETRIES,
    CANCELED,
    CANCELED_BY_OPERATOR,
    CRASH_RETRIES,
    FAILED,
    FINAL_STATES,
    PAUSED_BY_OPERATOR,
    PENDING,
    PENDING_ROW,
    RUNNING,
    RUNNING_ROW,
    SCHEMA_COLUMNS,
    SCHEMA_VERSION,
    SPEND_SETTLED,
    STATES,
    SUCCESS,
    Account,
    LaneState,
    NewTask,
    Notice,
    Output,
    Presence,
    Result,
    Spend,
    SpendTotal,
    Task,
    TaskLog,
    Upload,
    iso,
    settled_cost,
    stored_message,
)

__all__ = [
    "AUTO_RETRIES", "BUSY_TIMEOUT_S", "CANCELED", "CANCELED_BY_OPERATOR", "CRASH_RETRIES", "FAILED", "FINAL_STATES",
    "PAUSED_BY_OPERATOR", "PENDING", "PENDING_ROW", "PROBE_BUSY_TIMEOUT_MS", "RUNNING", "RUNNING_ROW",
    "SCHEMA_COLUMNS", "SCHEMA_VERSION",
    "SPEND_SETTLED", "STATES", "SUCCESS", "Account", "BudgetStop", "LaneState", "Limit", "NewTask", "Notice", "Output",
    "Presence", "Reservation", "Result", "Spend", "SpendTotal", "Store", "Task", "TaskLog", "Upload",
    "check_sqlite_file", "classify_fault", "fault_message", "faults_as_storage", "iso", "settled_cost",
    "stored_message",
]


class Store(Spending, OperatorCommands, LanesAndAccounts, Coordination):
    """Synchronous store; each call is a short statement, cheap enough for the event loop."""
