"""The headless commands (``mediaassist run|status|cancel|retry|accounts|lanes|sites|profiles``); the
entry point (mediaassist/entry.py) parses the arguments, calls ``run_command`` and documents the
exit codes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mediaassist.core.budget import Budgeter, estimate_batch, is_budget_pause, paused_batches
from mediaassist.core.columns import width
from mediaassist.core.config import AppConfig
from mediaassist.core.delivery import DeliveryError
from mediaassist.core.errors import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    ConfigError,
    StorageFault,
    TaskError,
)
from mediaassist.core.importer import ImportReport, read_task_file
from mediaassist.core.lanes import LOGIN_STATES, lane_names, login_state_message
from mediaassist.core.manifest import file_entry
from mediaassist.core.messages import (
    ENGLISH,
    Message,
    each_of,
    language_from_environment,
    listed,
    msg,
    render,
    verbatim,
)
from mediaassist.core.money import Totals, from_micros, money_message, totals_message
from mediaassist.core.options import RuntimeOptions, load_app_config, open_store, store_location
from mediaassist.core.order import order_message
from mediaassist.core.outputs import batch_folder
from mediaassist.core.paths import default_config_path
from mediaassist.core.progress import BatchEta, BatchProgress, Estimate, eta_message, slowest_eta
from mediaassist.core.store import (
    FINAL_STATES,
    PAUSED_BY_OPERATOR,
    SPEND_SETTLED,
    Spend,
    Store,
    Task,
    iso,
)
from mediaassist.status import lane_status, lanes_outside_hours, poll_account_checks, processes_at_work, spent_today

if TYPE_CHECKING:
    from mediaassist.runtime import Runtime

# --- what the operator reads -----------------------------------------------------------------

@dataclass
class _Output:
    language: str = ENGLISH  # --lang, else the locale's (LC_ALL, LC_MESSAGES, LANG)


_OUT = _Output()


def output_language(args: argparse.Namespace) -> str:
    return getattr(args, "lang", None) or language_from_environment()


def say(message: Message, *, to: TextIO | None = None, end: str = "\n") -> None:
    """One line for the operator in the CLI's language; on stderr unless ``to`` says otherwise."""
    print(shown(message), file=to or sys.stderr, end=end, flush=True)


def shown(message: Message) -> str:
    """``message`` in the CLI's language."""
    return render(message, _OUT.language)


def padded(text: str | Message, columns: int) -> str:
    """``text`` (a message in the CLI's language) filled with spaces to ``columns`` terminal columns."""
    text = shown(text) if isinstance(text, Message) else text
    return text + " " * max(0, columns - width(text))


# --- dispatch ---------------------------------------------------------------------------------


def run_command(args: argparse.Namespace, options: RuntimeOptions) -> int:
    """One headless command, as mediaassist/entry.py parsed it."""
    _OUT.language = output_language(args)
    if args.command == "run":
        return _run_with_signals(args, options)
    if args.command == "status":
        return asyncio.run(_status(args, options))
    if args.command == "estimate":
        return asyncio.run(_estimate(args, options))
    if args.command == "profiles":
        return _profiles_check(args)
    if args.command == "doctor":
        return _doctor(options)
    if args.command == "sites":
        return asyncio.run(_sites_learn(args, options) if args.action == "learn" else _sites_check(args, options))
    if args.command == "accounts" and args.action == "login":
        return asyncio.run(_account_login(args, options))
    if args.command in ("rerun", "outputs"):
        return asyncio.run(_outputs_command(args, options))
    with _open_store(options) as store:
        if args.command == "cancel":
            return _cancel(args, store)
        if args.command == "retry":
            return _retry(args, store)
        if args.command == "accounts":
            return _accounts(args, options, store)
        return _lanes(args, options, store)


class _open_store:
    def __init__(self, options: RuntimeOptions) -> None:
        self.options = options

    def __enter__(self) -> Store:
        from mediaassist.core.paths import data_dir

        config = load_app_config(self.options) if not self.options.demo else None
        self.store = open_store(self.options, config or AppConfig(), data_dir(self.options.data_dir))
        return self.store

    def __exit__(self, *exc: object) -> None:
        self.store.close()


# --- doctor -----------------------------------------------------------------------------------

def _doctor(options: RuntimeOptions) -> int:
    from mediaassist.core.doctor import examine
    from mediaassist.core.options import DB_NAME
    from mediaassist.core.paths import data_dir

    config = load_app_config(options) if not options.demo else AppConfig()
    path = data_dir(options.data_dir) / DB_NAME
    if store_location(options, config, path.parent) != path:
        say(msg("mediaassist doctor: the store is a shared PostgreSQL database; its server looks after it "
                "(pg_dump for a backup)"))
        return EXIT_BAD_INPUT
    if not path.is_file():
        say(msg("mediaassist doctor: there is no store file at {path}", path=path))
        return EXIT_BAD_INPUT
    try:
        report = examine(path, path.parent / "backups")
    except OSError as exc:
        say(msg("mediaassist doctor: could not back up {path} first ({reason}); nothing was changed -- free "
                "some space and run it again", path=path, reason=exc.strerror or exc))
        return EXIT_FAILED
    say(msg("backed up to {path}", path=report.backup), to=sys.stdout)
    if report.healthy:
        say(msg("{path}: PRAGMA integrity_check ok; its -wal is written back", path=path) if report.checkpointed
            else msg("{path}: PRAGMA integrity_check ok; another process is using it now", path=path),
            to=sys.stdout)
        return EXIT_OK
    say(msg("{path} is damaged: {problems}", path=path, problems=each_of(report.problems)), to=sys.stdout)
    if report.recovered_file is not None and report.recovered:
        saved = listed([msg("{table} {rows}", table=table, rows=n) for table, n in report.recovered.items()])
        say(msg("rows that could be read are saved in {file} ({saved}); to use them, move {name} and its -wal "
                "and -shm files aside and put that file in its place", file=report.recovered_file, saved=saved,
                name=path.name), to=sys.stdout)
    return EXIT_FAILED


# --- run --------------------------------------------------------------------------------------

def _run_with_signals(args: argparse.Namespace, options: RuntimeOptions) -> int:
    if not args.files and not args.all:
        say(msg("mediaassist run: give FILE... (or --all to run the whole queue)"))
        return EXIT_BAD_INPUT
    try:
        return asyncio.run(_run(args, dataclasses.replace(options, leave_held_accounts=True)))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


async def _run(args: argparse.Namespace, options: RuntimeOptions) -> int:
    from mediaassist.runtime import Runtime  # only the commands that run work load the scheduler

    async with Runtime(options) as rt:
        reports = [read_task_file(path, rt.config, args.model, args.encoding, args.models)
                   for path in args.files]  # all or nothing
        if args.not_before is not None:
            for task in (task for report in reports for task in report.tasks if not task.not_before):
                task.not_before = args.not_before
        task_ids, batch_ids, bad_rows = _enqueue(rt, reports)
        if args.all:
            batch_ids = sorted(set(batch_ids) | set(rt.store.open_batches()))
            task_ids = list(dict.fromkeys(task_ids + [t.task_id for t in rt.store.tasks(batch_ids)]))
        else:
            rt.scheduler.limit_to_batches(batch_ids)
        interrupted, faulted = asyncio.Event(), asyncio.Event()
        _on_signals(interrupted)
        rt.scheduler.add_fault_listener(lambda fault: faulted.set() if fault is not None else None)
        await rt.scheduler.start()
        progress = _Progress(rt, batch_ids, as_json=args.json)
        stop_events = (interrupted, faulted)
        waiter = await _until_done_or(rt.scheduler.wait_for_batches(batch_ids, progress.tick), stop_events)
        fault = _fault_of(waiter)
        if args.all and fault is None and not any(event.is_set() for event in stop_events):
            # --all may have started tasks of batches queued after it began: finish those too.
            fault = _fault_of(await _until_done_or(rt.scheduler.drain(), stop_events))
        if rt.scheduler.fault is None and fault is None:
            await rt.scheduler.refresh_balances()  # after the batch: what the accounts have left
        await rt.scheduler.stop(cancel_running=False)
        fault = rt.scheduler.fault or fault
        if fault is not None:  # nothing below could be read or trusted: stop with the one line
            raise fault
        progress.finish()
        tasks = _tasks_by_id(rt.store, task_ids)
        _report_cost(rt, batch_ids)
        if not interrupted.is_set():
            _report_failed(tasks)
            _report_blocked(rt, tasks)
        if args.json:
            print(json.dumps(_run_summary(rt, batch_ids, tasks), ensure_ascii=False, indent=1))
        if interrupted.is_set():
            say(msg("mediaassist: interrupted; unfinished tasks stay queued and resume on the next run"))
            return EXIT_INTERRUPTED
    if bad_rows:
        return EXIT_BAD_INPUT
    return EXIT_OK if all(t.state == "success" for t in tasks) else EXIT_FAILED


async def _until_done_or(work: Any, events: tuple[asyncio.Event, ...]) -> asyncio.Future[None]:
    """Run ``work`` until it ends or one of ``events`` is set; returns its (ended or cancelled) future."""
    future: asyncio.Future[None] = asyncio.ensure_future(work)
    stoppers = [asyncio.ensure_future(event.wait()) for event in events]
    every: list[asyncio.Future[Any]] = [future, *stoppers]
    await asyncio.wait(every, return_when=asyncio.FIRST_COMPLETED)
    for pending in every:
        pending.cancel()
    return future


def _fault_of(finished: asyncio.Future[None]) -> StorageFault | None:
    """The storage fault that ended ``finished``, if one did (any other error is raised)."""
    if not finished.done() or finished.cancelled() or finished.exception() is None:
        return None
    error = finished.exception()
    if isinstance(error, StorageFault):
        return error
    raise error  # type: ignore[misc]


def _enqueue(rt: Runtime, reports: list[ImportReport]) -> tuple[list[str], list[str], int]:
    task_ids: list[str] = []
    batch_ids: list[str] = []
    bad_rows = 0
    for report in reports:
        for warning in report.warnings:
            say(msg("{path}: warning: {reason}", path=report.source, reason=warning))
        for error in report.errors:
            say(msg("{path}: {reason}", path=report.source, reason=error.text))
        bad_rows += len(report.errors)
        batch = rt.enqueue(report)
        ids = [task.task_id for task in report.tasks if task.task_id]  # every row has one once enqueued
        task_ids += ids
        batch_ids += sorted({t.batch_id for t in _tasks_by_id(rt.store, ids)})
        parts = [msg("{tasks} queued as batch {batch}", tasks=_tasks(batch.inserted), batch=batch.batch_id)
                 if batch.inserted else msg("nothing new queued")]
        if batch.skipped:
            parts.append(msg("{tasks} already in the store (resumed as they are)", tasks=_tasks(batch.skipped)))
        if report.errors:
            parts.append(msg("{rows} skipped", rows=_bad_rows(len(report.errors))))
        say(msg("{path}: {reason}", path=report.source, reason=listed(parts)))
    return task_ids, sorted(set(batch_ids)), bad_rows


def _on_signals(event: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, event.set)
        except (NotImplementedError, RuntimeError):  # not on the main thread / platform
            pass


def _tasks_by_id(store: Store, task_ids: list[str]) -> list[Task]:
    found: dict[str, Task] = {}
    for start in range(0, len(task_ids), 500):
        chunk = task_ids[start:start + 500]
        found.update((t.task_id, t) for t in Task.select().where(Task.task_id.in_(chunk)))
    return [found[i] for i in task_ids if i in found]


def _report_failed(tasks: list[Task]) -> None:
    """Each batch's failures by kind, and the command that queues them again: the progress line
    only counts them, and a newcomer is left to find `retry` in the docs."""
    kinds_by_batch: dict[str, Counter[str]] = {}
    for task in tasks:
        if task.state == "failed":
            kinds_by_batch.setdefault(task.batch_id, Counter())[str(task.error_kind)] += 1
    for batch, kinds in sorted(kinds_by_batch.items()):
        say(msg("mediaassist: {tasks} failed ({kinds}); queue them again with: mediaassist retry --batch {batch}",
                tasks=_tasks(kinds.total()), batch=batch,
                kinds=", ".join(f"{kind} {n}" for kind, n in kinds.most_common())))


def _report_blocked(rt: Runtime, tasks: list[Task]) -> None:
    left = [t for t in tasks if t.state not in FINAL_STATES]
    if not left:
        return
    blocked = rt.scheduler.blocked_lanes()
    stopped = {batch: why for batch, why in paused_batches(rt.store.paused_lane_reasons()).items()
               if batch in {t.batch_id for t in left}}
    say(msg("mediaassist: {tasks} could not run and stay queued:", tasks=_tasks(len(left))))
    for batch, reason in sorted(stopped.items()):
        say(msg("  batch {batch}: {reason}; raise [budget] per_batch in the config, then run the file again",
                batch=batch, reason=reason))
    for lane, reason in sorted(blocked.items()):
        if is_budget_pause(reason):
            say(msg("  {lane}: {reason}; raise the budget in the config (or top up), or wait for the budget day "
                    "to turn", lane=lane, reason=reason))
        elif lane.startswith("web:"):
            say(msg("  {lane}: {reason}", lane=lane, reason=reason))
        else:
            say(msg("  {lane}: {reason}; resume with: mediaassist lanes resume {lane}", lane=lane, reason=reason))
    if not blocked and not stopped:
        say(msg("  no lane in the config can run their model"))


def _report_cost(rt: Runtime, batch_ids: list[str]) -> None:
    """The batch's estimate beside what it cost, and each provider's balance where known."""
    actual = rt.store.spend_totals(batch_ids=batch_ids, settled_only=True)
    estimate = rt.store.batch_estimates(batch_ids)
    if actual or estimate:
        say(msg("cost: {actual} (estimated {estimate})", actual=totals_message(actual),
                estimate=totals_message(estimate)))
    for route, (balance, _read_at) in sorted(rt.scheduler.budget.balances.items()):
        say(msg("balance: {route}: {money} left", route=route, money=money_message(balance)))


def _run_summary(rt: Runtime, batch_ids: list[str], tasks: list[Task]) -> dict[str, Any]:
    counts = {state: sum(1 for t in tasks if t.state == state) for state in FINAL_STATES}
    outputs = rt.store.outputs_of(t.task_id for t in tasks)
    spend = rt.store.task_spend([t.task_id for t in tasks])
    return {
        "batch_ids": batch_ids, "total": len(tasks), "success": counts["success"],
        "failed": counts["failed"], "canceled": counts["canceled"],
        "pending": sum(1 for t in tasks if t.state not in FINAL_STATES),
        "cost": rt.store.spend_totals(batch_ids=batch_ids, settled_only=True).to_json(),
        "estimate": rt.store.batch_estimates(batch_ids).to_json(),
        "tasks": [{**task_json(rt.store, t, spend.get(t.task_id, [])),
                   "files": _files_json(rt, t, outputs.get(t.task_id, []))} for t in tasks],
    }


def _files_json(rt: Runtime, task: Task, outputs: list[Any]) -> list[dict[str, Any]]:
    """The task's files with the manifest's fields (``file`` relative to the batch's manifest) and
    ``path``, absolute."""
    folder = batch_folder(rt.outputs_root, task.batch_id)
    return [{**file_entry(rt.config, task, output, folder), "path": output.path} for output in outputs]


def task_json(store: Store, task: Task, spend: list[Spend] | None = None) -> dict[str, Any]:
    """One task as ``run --json`` prints it; ``spend``: its spend rows (read here when None)."""
    result = store.result(task.task_id) if task.state == "success" else None
    rows = store.task_spend([task.task_id]).get(task.task_id, []) if spend is None else spend
    return {
        "task_id": task.task_id, "batch_id": task.batch_id, "model": task.model,
        "model_kind": task.model_kind, "account": task.account, "lane": task.lane,
        "state": task.state, "attempt": task.attempt, "error_kind": task.error_kind,
        "error": task.error, "remote_id": task.remote_id,
        "result_text": result.text if result else None,
        "output_files": result.file_list if result else [],
        "created_at": iso(task.created_at), "started_at": iso(task.started_at),
        "finished_at": iso(task.finished_at),
        "cost": [{"amount": str(r.money.amount), "currency": r.currency, "source": r.source, "attempt": r.attempt}
                 for r in rows if r.state == SPEND_SETTLED],
        "estimate": [{"amount": str(from_micros(r.estimate)), "currency": r.currency, "attempt": r.attempt}
                     for r in rows if r.estimate is not None],
    }


ETA_EVERY_S = 2.0  # the ETA reads the store's counts (one GROUP BY)...
ETA_BUDGET = 20  # ...at least this many times what one read costs apart (a big store reads slower)


class _Progress:
    """Live progress on stderr: one rewritten line on a terminal, a line per change of the counts
    otherwise; with the ETA of the run's slowest batch (core.progress.BatchEta, as the window's).
    ``as_json`` (``run --json``): each line is a JSON object -- the counts, ``eta_s`` (seconds,
    null while unknown or blocked) and the line as a person reads it."""

    def __init__(self, rt: Runtime, batch_ids: list[str], as_json: bool = False) -> None:
        self.rt = rt
        self.store = rt.store
        self.queries = rt.queries()
        self.batch_ids = batch_ids
        self.started = time.monotonic()
        self.last_line = ""
        self.last_at = 0.0
        self.tty = sys.stderr.isatty()
        self.etas = BatchEta(rt.scheduler.only_batches)  # a run FILE takes its own batches only
        self.as_json = as_json
        self.eta: Message | None = None
        self.eta_s: float | None = None  # the ETA in seconds, when one is known
        self.eta_at = float("-inf")
        self.eta_every = ETA_EVERY_S
        rt.add_listener(self._on_event)

    def _on_event(self, event: str, task: Task) -> None:
        self.etas.attempt_ended(event, task.route, task.started_at, self.rt.now())

    def _eta(self, now: float) -> Message | None:
        if now - self.eta_at < self.eta_every:
            return self.eta
        self.eta_at = now
        snap = self.queries.snapshot()
        self.eta_every = max(ETA_EVERY_S, ETA_BUDGET * (time.monotonic() - now))
        lanes, blocked, wall = self.rt.lane_views(), self.rt.blocked_lanes(), self.rt.now()
        found: list[tuple[Estimate, float | None]] = []
        for batch in self.batch_ids:
            progress = BatchProgress.of(batch, snap.by_batch.get(batch, {}))
            if progress.finished:
                self.etas.forget(batch)
                continue
            self.etas.record(batch, snap, now)
            found.append(self.etas.eta(batch, snap, lanes, blocked, now, wall))
        self.eta, self.eta_s = eta_message(found), slowest_eta(found)
        return self.eta

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last_at < (0.5 if self.tty else 2.0):
            return
        self.last_at = now
        count = dict.fromkeys(("pending", "running", "success", "failed", "canceled"), 0)
        for (_route, _account, _pinned, state), n in self.store.batch_counts(self.batch_ids).items():
            count[state] += n
        done = count["success"] + count["failed"] + count["canceled"]
        counts = render(msg("[{seconds}s] {done}/{total} done: {ok} ok, {failed} failed, {canceled} canceled; "
                            "{running} running, {pending} queued", seconds=format(now - self.started, "5.0f"),
                            done=done, total=sum(count.values()), ok=count["success"], failed=count["failed"],
                            canceled=count["canceled"], running=count["running"], pending=count["pending"]),
                        _OUT.language)
        if counts[8:] == self.last_line[8:] and not self.tty:
            return  # a log gets a line when the counts move, not for every new ETA
        self.last_line = counts
        eta = self._eta(now) if count["running"] + count["pending"] else None
        line = render(msg("{progress} · {eta}", progress=counts, eta=eta), _OUT.language) if eta else counts
        if self.as_json:
            line = json.dumps({"elapsed_s": round(now - self.started, 1), "done": done, "total": sum(count.values()),
                               **count, "eta_s": round(self.eta_s) if eta and self.eta_s is not None else None,
                               "line": line}, ensure_ascii=False)
        print(f"\r{line}\x1b[K" if self.tty and not self.as_json else line,
              end="" if self.tty and not self.as_json else "\n", file=sys.stderr, flush=True)

    def finish(self) -> None:
        self.last_at = 0.0
        self.tick()
        if self.tty and not self.as_json:
            print(file=sys.stderr)


# --- status, cancel, retry, accounts, lanes ---------------------------------------------------

async def _status(args: argparse.Namespace, options: RuntimeOptions) -> int:
    options.read_only = True  # status only looks: no demo logins, no login states written
    if options.demo:
        from mediaassist.runtime import Runtime

        async with Runtime(options) as rt:
            rt.store.verify()
            lanes, at_work = lane_status(rt.config, rt.store), processes_at_work(rt.store)
            spent, paused = spent_today(rt.config, rt.store), rt.store.paused_lane_reasons()
            closed = lanes_outside_hours(rt.config)
            checks = await poll_account_checks(rt.config)
    else:
        config = load_app_config(options)
        with _open_store(options) as store:
            store.verify()
            lanes, at_work = lane_status(config, store), processes_at_work(store)
            spent, paused = spent_today(config, store), store.paused_lane_reasons()
        closed = lanes_outside_hours(config)
        checks = await poll_account_checks(config)
    stopped = paused_batches(paused)
    for lane in lanes:
        if lane["lane"] in checks:
            lane["account_check"] = [str(line) for line in checks[lane["lane"]]]  # English in the JSON
    if args.json:
        print(json.dumps({"lanes": lanes, "at_work": at_work, "spent_today": spent.to_json(),
                          "stopped_batches": {batch: str(why) for batch, why in stopped.items()}},
                         ensure_ascii=False, indent=1))
        return EXIT_OK
    name_width = max([28, *(width(lane["lane"]) for lane in lanes)])
    for lane in lanes:
        print(_lane_line(lane, name_width, paused.get(lane["lane"]), closed.get(lane["lane"]),
                         spent.by_lane.get(lane["lane"])))
        for check in checks.get(lane["lane"], []):
            print("    " + shown(check))
    if not lanes:
        where = options.config_path or default_config_path()
        say(msg("no lanes: add [[providers]] and [[accounts]] to {where} (see docs/configuration.md), or try --demo",
                where=where), to=sys.stdout)
    say(msg("spent today ({day}): {spent}", day=spent.day, spent=totals_message(spent.total)), to=sys.stdout)
    for batch, reason in sorted(stopped.items()):
        say(msg("batch {batch} STOPPED: {reason}", batch=batch, reason=reason), to=sys.stdout)
    hosts = [msg("{host} ({processes})", host=host, processes=_processes(n)) for host, n in at_work.items()]
    say(msg("at work on this store: {hosts}", hosts=listed(hosts) if hosts else msg("no mediaassist process")),
        to=sys.stdout)
    return EXIT_OK


def _lane_line(lane: dict[str, Any], name_width: int, paused: Message | None, closed: Message | None,
               spent: Totals | None) -> str:
    """One lane of ``status``: its name and kind in columns, then its counts and conditions."""
    parts = [msg("running {running}/{limit}  pending {pending}  success {success}  failed {failed}  "
                 "canceled {canceled}", running=lane["running"], limit=lane["limit"], pending=lane["pending"],
                 success=lane["success"], failed=lane["failed"], canceled=lane["canceled"])]
    if "order" in lane:  # a lane of its own (a queue that waits for a free one has none)
        parts.append(order_message(lane["order"]))
    if lane["kind"] == "poll":
        parts.append(msg("polling {polling}, waiting {waiting}", polling=lane["currentPollingTasks"],
                         waiting=lane["waitingQueueSize"]))
    if lane.get("adaptive"):
        parts.append(msg("(auto: learned limit {limit}, max {max})", limit=lane["limit"],
                         max=lane["max_concurrency"]))
    if lane.get("paused"):
        parts.append(msg("PAUSED: {reason}", reason=paused or lane["paused"]))
    elif lane.get("closed"):
        parts.append(msg("RESTING: {reason}", reason=closed or lane["closed"]))
    if lane.get("enabled") is False:
        parts.append(msg("DISABLED"))
    if lane["kind"] == "web" and "host" in lane:
        parts.append(msg("on {host}", host=lane["host"] or msg("any machine")))
    if lane.get("login_state") == "needs_login":
        parts.append(msg("NEEDS LOGIN (mediaassist accounts login {account})", account=lane["lane"].split(":", 1)[1]))
    if spent is not None:
        parts.append(msg("spent today {spent}", spent=totals_message(spent)))
    return " ".join([padded(lane["lane"], name_width), padded(lane["kind"], 5), "  ".join(map(shown, parts))])


async def _estimate(args: argparse.Namespace, options: RuntimeOptions) -> int:
    options.read_only = True
    if options.demo:
        from mediaassist.runtime import Runtime

        async with Runtime(options) as rt:
            return _print_estimate(args, rt.config, rt.store)
    config = load_app_config(options)
    with _open_store(options) as store:
        return _print_estimate(args, config, store)


def _print_estimate(args: argparse.Namespace, config: AppConfig, store: Store) -> int:
    reports = [read_task_file(path, config, args.model, args.encoding) for path in args.files]
    for report in reports:
        for error in report.errors:
            say(msg("{path}: {reason}", path=report.source, reason=error.text))
    estimate = estimate_batch(Budgeter(store, config), [t for r in reports for t in r.tasks])
    if args.json:
        print(json.dumps(estimate.to_json(), ensure_ascii=False, indent=1))
    else:
        for line in estimate.lines():
            say(line, to=sys.stdout)
    return EXIT_BAD_INPUT if any(r.errors for r in reports) else EXIT_OK


async def _outputs_command(args: argparse.Namespace, options: RuntimeOptions) -> int:
    """rerun, outputs manifest|pick|deliver: on the config (or the demo's) and the store."""
    from mediaassist.runtime import Runtime  # only the commands that run work load the scheduler

    options.read_only = True  # no demo logins: nothing runs here
    async with Runtime(options) as rt:
        try:
            return _outputs_action(args, rt)
        except DeliveryError as exc:
            say(msg("mediaassist: {reason}", reason=exc.message))
            return EXIT_BAD_INPUT


def _outputs_action(args: argparse.Namespace, rt: Runtime) -> int:
    if args.command == "rerun":
        new_id = rt.rerun(args.task_id, prompt=args.prompt, model=args.model, params=dict(args.param),
                          remix=args.remix)
        say(msg("{new_id} queued as a rerun of {task_id}; it runs while the app is open, or with "
                "`mediaassist run --all`", new_id=new_id, task_id=args.task_id), to=sys.stdout)
        return EXIT_OK
    if args.action == "manifest":
        path, count = rt.rebuild_manifest(args.batch)
        say(msg("{path}: {files}", path=path, files=_files(count)), to=sys.stdout)
        return EXIT_OK
    if args.action == "pick":
        if _unknown_ids(rt.store, [args.task_id]):
            return EXIT_BAD_INPUT
        changed = rt.set_picked([(args.task_id, args.n)], not args.unpick)
        say(msg("{task_id}: {outputs} unpicked", task_id=args.task_id, outputs=_outputs(changed)) if args.unpick else
            msg("{task_id}: {outputs} picked", task_id=args.task_id, outputs=_outputs(changed)), to=sys.stdout)
        return EXIT_OK if changed else EXIT_FAILED
    delivery = rt.deliver(args.batch, args.to, args.picked, args.tasks)
    for gone in delivery.missing:
        say(msg("mediaassist: {path} is gone from disk; not delivered", path=gone))
    say(msg("{files} delivered to {folder} (with manifest.json and manifest.csv)", files=_files(len(delivery.files)),
            folder=delivery.folder), to=sys.stdout)
    return EXIT_FAILED if delivery.missing else EXIT_OK


def _cancel(args: argparse.Namespace, store: Store) -> int:
    if not args.task_ids and not args.batch:
        say(msg("mediaassist cancel: give TASK_ID... or --batch ID"))
        return EXIT_BAD_INPUT
    if _unknown_ids(store, args.task_ids):
        return EXIT_BAD_INPUT
    result = store.cancel(args.task_ids, args.batch)
    running = result["cancel_requested"]
    say(msg("{tasks} canceled, {running} asked to stop", tasks=_tasks(result["canceled"]),
            running=msg("1 running task") if running == 1 else msg("{n} running tasks", n=running)), to=sys.stdout)
    return EXIT_OK if sum(result.values()) else EXIT_FAILED


def _retry(args: argparse.Namespace, store: Store) -> int:
    if not (args.task_ids or args.failed or args.batch):
        say(msg("mediaassist retry: give TASK_ID..., --batch ID or --failed"))
        return EXIT_BAD_INPUT
    if _unknown_ids(store, args.task_ids):
        return EXIT_BAD_INPUT
    unfinished = [t for t in _tasks_by_id(store, args.task_ids) if t.state not in FINAL_STATES]
    for task in unfinished:
        say(msg("mediaassist: {task_id} is {state}; only finished tasks are run again",
                task_id=task.task_id, state=task.state))
    count = store.retry(args.task_ids, args.batch, all_failed=args.failed)
    if not count and not args.task_ids:  # nothing failed: good news, not an error
        if args.batch:
            say(msg("nothing to retry: no failed or canceled task in batch {batch}", batch=args.batch), to=sys.stdout)
        else:
            say(msg("nothing to retry: no failed task"), to=sys.stdout)
        return EXIT_OK
    say(msg("{tasks} queued again; they run while the app is open, or at the next `mediaassist run` of their file",
            tasks=_tasks(count)), to=sys.stdout)
    return EXIT_OK if count else EXIT_FAILED


def _unknown_ids(store: Store, task_ids: list[str]) -> bool:
    missing = store.missing(task_ids)
    for task_id in missing:
        say(msg("mediaassist: no task {task_id}", task_id=repr(task_id)))
    return bool(missing)


def _tasks(n: int) -> Message:
    return msg("1 task") if n == 1 else msg("{n} tasks", n=n)


def _bad_rows(n: int) -> Message:
    return msg("1 bad row") if n == 1 else msg("{n} bad rows", n=n)


def _processes(n: int) -> Message:
    return msg("1 process") if n == 1 else msg("{n} processes", n=n)


def _files(n: int) -> Message:
    return msg("1 file") if n == 1 else msg("{n} files", n=n)


def _outputs(n: int) -> Message:
    return msg("1 output") if n == 1 else msg("{n} outputs", n=n)


def _accounts(args: argparse.Namespace, options: RuntimeOptions, store: Store) -> int:
    config = load_app_config(options)
    store.sync_accounts(config.accounts)
    if args.action == "list":
        accounts = store.accounts()
        name_width = max([20, *(width(acct.name) for acct in accounts)])
        site_width = max([16, *(width(acct.site) for acct in accounts)])
        state_width = max(width(shown(m)) for m in (msg("enabled"), msg("disabled")))
        login_width = max(width(shown(state)) for state in LOGIN_STATES.values())
        for acct in accounts:
            line = msg("{name} site {site} {state} {login} on {host}", name=padded(acct.name, name_width),
                       site=padded(acct.site, site_width),
                       state=padded(msg("enabled") if acct.enabled else msg("disabled"), state_width),
                       login=padded(login_state_message(acct.login_state), login_width),
                       host=acct.host or msg("any machine"))
            error = acct.last_error_text
            say(msg("{line}  ({error})", line=line, error=error) if error else line, to=sys.stdout)
        if not store.accounts():
            say(msg("no accounts: add [[accounts]] to the config"), to=sys.stdout)
        return EXIT_OK
    if not store.set_account_enabled(args.name, args.action == "enable"):
        say(msg("mediaassist: no account named {name}", name=repr(args.name)))
        return EXIT_BAD_INPUT
    say(msg("{name}: enabled", name=args.name) if args.action == "enable" else msg("{name}: disabled", name=args.name),
        to=sys.stdout)
    return EXIT_OK


async def _sites_check(args: argparse.Namespace, options: RuntimeOptions) -> int:
    from mediaassist.providers.web import check_site
    from mediaassist.providers.web.browser import ProfileInUse
    from mediaassist.runtime import Runtime

    async with Runtime(options) as rt:
        rt.store.sync_accounts(rt.config.accounts)
        try:
            report = await check_site(args.site, args.account, rt.config, rt.data_dir, rt.store)
        except ProfileInUse as exc:
            return _profile_busy("sites check", exc)
    for line in report.lines():
        say(line, to=sys.stdout)
    return EXIT_OK if report.usable else EXIT_FAILED


def _profiles_check(args: argparse.Namespace) -> int:
    """The requests a task on the profile would make; a bad profile is a config error naming its key."""
    from mediaassist.core.task_profiles import load_profile
    from mediaassist.providers.poll.task_api import describe_requests

    profile = load_profile(args.name, "profiles check", Path.cwd())
    base_url = (args.base_url or profile.base_url or "").rstrip("/")
    if not base_url:
        raise ConfigError(msg("profiles check: {name} has no base_url; give --base-url URL (the service's address, "
                              "e.g. https://api.example.com/v1)", name=profile.name))
    for line in describe_requests(profile, base_url, _OUT.language):
        say(line, to=sys.stdout)
    return EXIT_OK


def _profile_busy(command: str, busy: Any) -> int:
    """The one line for a command that found its account's browser profile held elsewhere
    (``busy``: a ProfileInUse, whose module is imported only when a browser is wanted)."""
    say(msg("mediaassist: {command}: {busy}; close that program (or let its run end), then try again",
            command=command, busy=busy.busy))
    return EXIT_FAILED


async def _sites_learn(args: argparse.Namespace, options: RuntimeOptions) -> int:
    from mediaassist.providers.web.browser import ProfileInUse
    from mediaassist.providers.web.learn import learn_site
    from mediaassist.runtime import Runtime

    async with Runtime(options) as rt:
        rt.store.sync_accounts(rt.config.accounts)
        try:
            result = await learn_site(args.name, args.url, args.account, rt.config, rt.data_dir, force=args.force,
                                      store=rt.store, error_turn=args.error_turn)
        except TaskError as exc:
            say(msg("mediaassist: sites learn: {reason}", reason=exc.message))
            return EXIT_FAILED
        except ProfileInUse as exc:
            return _profile_busy("sites learn", exc)
    for line in result.check.lines():
        say(line, to=sys.stdout)
    return EXIT_OK if result.check.usable else EXIT_FAILED


async def _account_login(args: argparse.Namespace, options: RuntimeOptions) -> int:
    from mediaassist.providers.web import login_account
    from mediaassist.providers.web.tools import no_display_message

    if (blocked := no_display_message(args.name)) is not None:
        say(msg("mediaassist: {reason}", reason=blocked))
        return EXIT_FAILED
    from mediaassist.runtime import Runtime

    async with Runtime(options) as rt:
        rt.store.sync_accounts(rt.config.accounts)
        say(msg("{name}: log in in the browser window, then close it (waiting up to {seconds} s)",
                name=args.name, seconds=format(args.timeout, ".0f")), to=sys.stdout)
        result = await login_account(args.name, rt.config, rt.data_dir, rt.store, timeout_s=args.timeout,
                                     keep_login=args.keep_login)
    if result.ok:
        say(msg("{name}: login ok (checked again after relaunching the browser)", name=args.name), to=sys.stdout)
        return EXIT_OK
    say(msg("{name}: login not confirmed: {reason}", name=args.name, reason=result.message))
    return EXIT_FAILED


def _lanes(args: argparse.Namespace, options: RuntimeOptions, store: Store) -> int:
    known = _known_lanes(options, store)
    if args.name not in known:
        say(msg("mediaassist: no lane named {name} (lanes: {lanes})", name=repr(args.name),
                lanes=listed([verbatim(name) for name in sorted(known)]) if known else msg("none yet")))
        return EXIT_BAD_INPUT
    if args.action == "pause":
        store.pause_lane(args.name, PAUSED_BY_OPERATOR)
    else:
        store.resume_lane(args.name)
    say(msg("{name}: paused", name=args.name) if args.action == "pause" else msg("{name}: resumed", name=args.name),
        to=sys.stdout)
    return EXIT_OK


def _known_lanes(options: RuntimeOptions, store: Store) -> set[str]:
    """Lanes of the config, plus any the store has seen (the demo's, a config since edited)."""
    config = load_app_config(options) if not options.demo else None
    names = lane_names(config) if config else set()
    names |= {route for (route, _account, _state) in store.counts() if not route.startswith("web:")}
    names |= {f"web:{acct.name}" for acct in store.accounts()}
    return names | set(store.paused_lanes())
