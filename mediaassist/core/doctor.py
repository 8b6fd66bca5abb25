"""``mediaassist doctor``: look after the local store file without losing anything.

In this order, each step only after the one before it: **back up** the file with its -wal and
-shm as they are (nothing else touches them first), **check** it (``PRAGMA integrity_check``),
**checkpoint** a healthy one (write its -wal back, e.g. after a disk that was full), and for a
damaged one **recover** every row that can still be read into a new file beside it. The damaged
file itself is never changed or moved: that is the operator's decision, with the copy in hand.
"""

from __future__ import annotations

import itertools
import shutil
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from mediaassist.core.messages import Message, msg, verbatim

RECOVER_CHUNK = 200  # rows read at a time; a chunk that fails is read again row by row


@dataclass
class DoctorReport:
    backup: Path
    healthy: bool
    problems: list[Message] = field(default_factory=list)  # SQLite's own words are kept verbatim
    checkpointed: bool = False
    recovered_file: Path | None = None
    recovered: dict[str, int] = field(default_factory=dict)  # table -> rows saved
    lost: dict[str, int] = field(default_factory=dict)  # table -> rows (or ranges) unreadable


def examine(path: Path, backups: Path) -> DoctorReport:
    """Back up ``path`` (and its -wal/-shm) into a new folder under ``backups``, then check it;
    checkpoint it when healthy, recover its readable rows when not. Raises OSError when the copy
    cannot be made (no room): nothing else is tried then."""
    stamp = datetime.now(tz=UTC).strftime("%Y%m%dT%H%M%SZ")
    backup = _new_folder(backups, f"{path.name}-{stamp}")
    for companion in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if companion.exists():
            shutil.copy2(companion, backup / companion.name)
    problems = _integrity_problems(path)
    report = DoctorReport(backup=backup, healthy=not problems, problems=problems)
    if report.healthy:
        with sqlite3.connect(path) as conn:
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        report.checkpointed = busy == 0
        return report
    report.recovered_file = path.with_name(f"{path.stem}-recovered-{stamp}{path.suffix}")
    _recover(path, report)
    return report


def _integrity_problems(path: Path) -> list[Message]:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            rows = [row[0] for row in conn.execute("PRAGMA integrity_check(20)")]
    except sqlite3.DatabaseError as exc:
        return [msg("cannot be checked: {reason}", reason=exc)]
    return [] if rows == ["ok"] else [verbatim(row) for row in rows]


def _new_folder(parent: Path, name: str) -> Path:
    """A folder of its own: a second run within the same second gets ``NAME-2``, never the first's."""
    parent.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        folder = parent / (name if n == 1 else f"{name}-{n}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder
    raise AssertionError("unreachable")


def _recover(path: Path, report: DoctorReport) -> None:
    """Copy each table's readable rows into ``report.recovered_file`` (same schema)."""
    assert report.recovered_file is not None
    work = report.backup / f"{path.name}.reading"  # read from a copy: the damaged file stays as it is
    shutil.copyfile(path, work)
    _fit_page_count(work)
    try:
        source = sqlite3.connect(f"file:{work}?mode=ro", uri=True)
        tables = source.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                                "AND name NOT LIKE 'sqlite_%'").fetchall()
    except sqlite3.DatabaseError as exc:
        report.problems.append(msg("its table list cannot be read ({reason}); nothing could be recovered", reason=exc))
        return
    with sqlite3.connect(report.recovered_file) as target:
        for name, sql in tables:
            target.execute(sql)
            saved, lost = _copy_table(source, target, name)
            report.recovered[name], report.lost[name] = saved, lost
    source.close()
    work.unlink()


def _fit_page_count(path: Path) -> None:
    """A file cut short still says, in its header, how many pages it had; SQLite then calls every
    read past the end "malformed". Make the header say what the file holds."""
    with path.open("r+b") as handle:
        header = handle.read(100)
        if len(header) < 100:
            return
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        pages = path.stat().st_size // page_size
        if int.from_bytes(header[28:32], "big") > pages:
            handle.seek(28)
            handle.write(pages.to_bytes(4, "big"))


def _copy_table(source: sqlite3.Connection, target: sqlite3.Connection, table: str) -> tuple[int, int]:
    """Rows read by rowid ranges; a range that fails is tried row by row, so one bad page costs
    only its own rows. Returns (rows saved, rows lost)."""
    try:
        low, high = source.execute(f'SELECT MIN(rowid), MAX(rowid) FROM "{table}"').fetchone()
    except sqlite3.DatabaseError:
        return 0, 1
    if low is None:
        return 0, 0
    saved = lost = 0
    for start in range(low, high + 1, RECOVER_CHUNK):
        end = start + RECOVER_CHUNK - 1
        try:
            rows = source.execute(f'SELECT * FROM "{table}" WHERE rowid BETWEEN ? AND ?', (start, end)).fetchall()
        except sqlite3.DatabaseError:
            rows = []
            for rowid in range(start, end + 1):
                try:
                    rows += source.execute(f'SELECT * FROM "{table}" WHERE rowid = ?', (rowid,)).fetchall()
                except sqlite3.DatabaseError:
                    lost += 1
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            target.executemany(f'INSERT OR IGNORE INTO "{table}" VALUES ({marks})', rows)
            saved += len(rows)
    return saved, lost
