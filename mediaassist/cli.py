"""``mediaassist``: the desktop app with no command, the headless tools with one.

Exit codes: 0 all succeeded, 1 something failed, was canceled or could not run, 2 bad input or
config (a bad row is reported with its row number; the good rows still run) or a store that
cannot be used (a database file read-only, damaged, not a database, deleted or replaced while
running; a shared server out of reach; a schema newer than this program), 3 the disk is full
(queued and running tasks stay queued), 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import logging
import logging.handlers
import os
import signal
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from mediaassist import __version__
from mediaassist.core.config import AppConfig
from mediaassist.core.errors import ConfigError, ImportFileError, StorageFault, TaskError
from mediaassist.core.importer import ImportReport, read_task_file
from mediaassist.core.location import refuse_url_as_path
from mediaassist.core.messages import (
    ENGLISH,
    LANGUAGES,
    Message,
    language_from_environment,
    listed,
    msg,
    normalized_language,
    render,
)
from mediaassist.core.paths import default_config_path
from mediaassist.core.secrets import install_log_filter
from mediaassist.core.store import FINAL_STATES, PAUSED_BY_OPERATOR, Store, Task, classify_fault, iso
from mediaassist.runtime import Runtime, RuntimeOptions, load_app_config, open_store
from mediaassist.status import lane_status, poll_account_checks, processes_at_work

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_DISK_FULL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
COMMANDS = ("run", "status", "cancel", "retry", "accounts", "lanes", "sites")


def main(argv: list[str] | None = None) -> int:
    argv = _command_first(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        args = _command_parser().parse_args(argv)
    else:
        args = _gui_parser().parse_args(argv)
        args.command = None
    _OUT.language = args.lang or language_from_environment()
    _setup_logging(args)
    # A warning (say, a config file others can read) is a message to the operator, not a trace.
    warnings.formatwarning = lambda message, *_rest, **_kw: f"mediaassist: warning: {message}\n"
    try:
        return _dispatch(args)
    except ConfigError as exc:
        say(msg("mediaassist: config error: {reason}", reason=exc.message))
        return EXIT_BAD_INPUT
    except ImportFileError as exc:
        say(msg("mediaassist: cannot import: {reason}", reason=exc.message))
        return EXIT_BAD_INPUT
    except StorageFault as fault:
        return report_storage_fault(fault)
    except OSError as exc:  # preparing the data dir on a read-only or full file system
        classified = classify_fault(exc, Path(exc.filename or "."))
        if classified is None:
            raise
        return report_storage_fault(classified)


def report_storage_fault(fault: StorageFault) -> int:
    """The one line for a store that cannot be used, and its exit code (also used by the window)."""
    say(msg("mediaassist: {reason}", reason=fault.message))
    return EXIT_DISK_FULL if fault.disk_full else EXIT_BAD_INPUT


@dataclass
class _Output:
    language: str = ENGLISH  # --lang, else the locale's (LC_ALL, LC_MESSAGES, LANG)


_OUT = _Output()


def say(message: Message, *, to: TextIO | None = None, end: str = "\n") -> None:
    """One line for the operator in the CLI's language; on stderr unless ``to`` says otherwise."""
    print(render(message, _OUT.language), file=to or sys.stderr, end=end, flush=True)


def _command_first(argv: list[str]) -> list[str]:
    """``mediaassist --data-dir D run tasks.csv`` means ``mediaassist run --data-dir D tasks.csv``:
    the common options are the commands' too, so a command named after them moves to the front
    instead of opening the window on a file called "run" (a file of that name still opens)."""
    for index, word in enumerate(argv):
        if word in COMMANDS and not Path(word).exists():
            return [word, *argv[:index], *argv[index + 1:]]
        if not word.startswith("-") and (index == 0 or argv[index - 1] not in _VALUE_OPTIONS):
            return argv  # a file for the window came first
    return argv


_VALUE_OPTIONS = ("--config", "--data-dir", "--speed", "--store", "--lang")


# --- parsers ----------------------------------------------------------------------------------

def _common(parser: argparse.ArgumentParser, speed: bool = True) -> None:
    parser.add_argument("--config", type=Path, metavar="PATH",
                        help="config TOML (default: the user config dir's config.toml)")
    parser.add_argument("--data-dir", type=_data_dir, metavar="DIR",
                        help="database, profiles and outputs (default: $MEDIAASSIST_HOME or the user data dir)")
    parser.add_argument("--store", metavar="URL",
                        help="a team's shared queue: postgresql://USER@HOST[:PORT]/DATABASE (default: "
                             "$MEDIAASSIST_STORE_URL, the config's [store] url, else the data dir's SQLite file)")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output on stderr")
    parser.add_argument("--demo", action="store_true",
                        help="use the built-in demo providers (kept apart in DATA_DIR/demo)")
    _lang_option(parser)
    if speed:
        parser.add_argument("--speed", type=_positive_float, default=1.0, metavar="N",
                            help="divide every demo duration and scheduler timer by N")


def _lang_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lang", type=_language, metavar="LANG",
                        help=f"language of the messages: {', '.join(LANGUAGES)} (default: from LC_ALL/LANG)")


def _language(text: str) -> str:
    try:
        return normalized_language(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _data_dir(text: str) -> Path:
    try:
        refuse_url_as_path(text, "--data-dir")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return Path(text)


def _positive_float(text: str) -> float:
    value = float(text)
    if not 0 < value <= 10000:
        raise argparse.ArgumentTypeError(f"{text}: must be a number in (0, 10000]")
    return value


def _gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mediaassist",
        description="Open the desktop app (files go to the import preview). "
                    f"Headless commands: {', '.join(COMMANDS)} (mediaassist COMMAND --help).")
    parser.add_argument("--version", action="version", version=f"mediaassist {__version__}")
    _common(parser)
    parser.add_argument("files", nargs="*", type=Path, metavar="FILE")
    return parser


def _command_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mediaassist", description="Headless commands; with no command "
                                     "mediaassist opens the desktop app.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, speed: bool = True) -> argparse.ArgumentParser:
        leaf = sub.add_parser(name, help=summary, description=summary)
        _common(leaf, speed=speed)
        return leaf

    run = command("run", "import task files (CSV, XLSX, JSON, JSONL, TXT) and run them until every task "
                  "has ended; running the same file again resumes it. Only the files' own tasks are "
                  "taken: other work queued on the same lanes is left to whoever runs it (the window)")
    run.add_argument("files", nargs="*", type=Path, metavar="FILE")
    run.add_argument("--all", action="store_true",
                     help="also run every other task queued on the lanes (with no FILE: the whole queue)")
    run.add_argument("--model", help="model for TXT files (and rows without one)")
    run.add_argument("--encoding", metavar="NAME",
                     help="text encoding of the task files (e.g. gb18030, shift_jis, big5, euc_kr); "
                          "default: detect UTF-8/UTF-16, or a legacy CJK code page when unambiguous")
    run.add_argument("--json", action="store_true", help="print one final JSON object on stdout")

    status = command("status", "per lane: limit, running, pending, success, failed, canceled "
                     "(and the polling pool)", speed=False)
    status.add_argument("--json", action="store_true", help="one JSON object on stdout")

    cancel = command("cancel", "cancel tasks: pending ones at once, running ones at their next checkpoint",
                     speed=False)
    cancel.add_argument("task_ids", nargs="*", metavar="TASK_ID")
    cancel.add_argument("--batch", metavar="ID", help="every unfinished task of the batch")

    retry = command("retry", "queue finished tasks again on the same row: failed or canceled ones, "
                    "or any named by id (a success is generated again)", speed=False)
    retry.add_argument("task_ids", nargs="*", metavar="TASK_ID")
    retry.add_argument("--failed", action="store_true", help="every failed task")
    retry.add_argument("--batch", metavar="ID", help="the failed and canceled tasks of the batch")

    accounts = sub.add_parser("accounts", help="web accounts: list, enable, disable, log in",
                              description="web accounts").add_subparsers(dest="action", required=True)
    _common(accounts.add_parser("list", help="every account with its site, toggle and login state"),
            speed=False)
    for action, summary in (("enable", "let the account take work again"),
                            ("disable", "take no new work on the account (running work finishes)")):
        leaf = accounts.add_parser(action, help=summary, description=summary)
        leaf.add_argument("name")
        _common(leaf, speed=False)
    login = accounts.add_parser("login", help="open the account's browser profile to log in by hand")
    login.add_argument("name")
    login.add_argument("--timeout", type=_positive_float, default=600.0, metavar="S",
                       help="give up waiting for the login after S seconds (default 600)")
    _common(login, speed=False)

    sites = sub.add_parser("sites", help="web site profiles: check which selectors match")
    sites_sub = sites.add_subparsers(dest="action", required=True)
    check = sites_sub.add_parser("check", help="open SITE as an account and report which selectors match")
    _common(check)
    check.add_argument("site")
    check.add_argument("--account", required=True, metavar="NAME", help="whose logged-in profile to use")
    learn = sites_sub.add_parser("learn", help="write a site profile from three clicks on a chat page (opens a window)",
                                 description="Open URL in a browser window; click the prompt box, the send "
                                 "button and the finished answer; a profile is written to the config dir's "
                                 "sites/ folder and checked.")
    _common(learn, speed=False)
    learn.add_argument("url")
    learn.add_argument("--name", required=True, metavar="SITE", help="the profile's name (sites/SITE.toml)")
    learn.add_argument("--account", required=True, metavar="NAME",
                       help="whose browser profile to use (log in there first if the site asks)")
    learn.add_argument("--force", action="store_true", help="replace an existing profile of that name")

    lanes = sub.add_parser("lanes", help="pause or resume a lane (e.g. api:openai, web:alice)")
    lane_sub = lanes.add_subparsers(dest="action", required=True)
    for action, summary in (("pause", "the lane takes no new work until resumed"),
                            ("resume", "the lane takes work again (after fixing a quota or key)")):
        leaf = lane_sub.add_parser(action, help=summary, description=summary)
        leaf.add_argument("name", help="as `mediaassist status` lists it, e.g. api:openai")
        _common(leaf, speed=False)
    return parser


# --- dispatch ---------------------------------------------------------------------------------

def _options(args: argparse.Namespace) -> RuntimeOptions:
    demo = getattr(args, "demo", False)
    data = args.data_dir
    if demo:
        from mediaassist.core.paths import demo_data_dir

        data = demo_data_dir(data)  # demo work never mixes with the operator's real queue
    return RuntimeOptions(config_path=args.config, data_dir=data, demo=demo,
                          speed=getattr(args, "speed", 1.0), store_url=args.store)


def _dispatch(args: argparse.Namespace) -> int:
    options = _options(args)
    if args.command is None:
        return _gui(args, options)
    if args.command == "run":
        return _run_with_signals(args, options)
    if args.command == "status":
        return asyncio.run(_status(args, options))
    if args.command == "sites":
        return asyncio.run(_sites_learn(args, options) if args.action == "learn" else _sites_check(args, options))
    if args.command == "accounts" and args.action == "login":
        return asyncio.run(_account_login(args, options))
    with _open_store(options) as store:
        if args.command == "cancel":
            return _cancel(args, store)
        if args.command == "retry":
            return _retry(args, store)
        if args.command == "accounts":
            return _accounts(args, options, store)
        return _lanes(args, options, store)


def _gui(args: argparse.Namespace, options: RuntimeOptions) -> int:
    if sys.platform.startswith("linux") and not any(
            os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")):
        # Qt would abort the process with a misleading hint about xcb libraries.
        print("mediaassist: no display to open the window on (DISPLAY is not set). Start it from a "
              "desktop session or under xvfb-run, or use the headless commands: "
              "mediaassist run|status|cancel|retry|accounts|lanes", file=sys.stderr)
        return EXIT_FAILED
    try:
        from mediaassist.ui.app import run_gui
    except ImportError as exc:
        print(f"mediaassist: the desktop app is not available here ({exc}); "
              "use the headless commands: mediaassist run|status|cancel|retry|accounts", file=sys.stderr)
        return EXIT_FAILED
    return run_gui(list(args.files), options)


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


# --- run --------------------------------------------------------------------------------------

def _run_with_signals(args: argparse.Namespace, options: RuntimeOptions) -> int:
    if not args.files and not args.all:
        say(msg("mediaassist run: give FILE... (or --all to run the whole queue)"))
        return EXIT_BAD_INPUT
    try:
        return asyncio.run(_run(args, options))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


async def _run(args: argparse.Namespace, options: RuntimeOptions) -> int:
    async with Runtime(options) as rt:
        reports = [read_task_file(path, rt.config, args.model, args.encoding)
                   for path in args.files]  # all or nothing
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
        progress = _Progress(rt.store, batch_ids)
        stop_events = (interrupted, faulted)
        waiter = await _until_done_or(rt.scheduler.wait_for_batches(batch_ids, progress.tick), stop_events)
        fault = _fault_of(waiter)
        if args.all and fault is None and not any(event.is_set() for event in stop_events):
            # --all may have started tasks of batches queued after it began: finish those too.
            fault = _fault_of(await _until_done_or(rt.scheduler.drain(), stop_events))
        await rt.scheduler.stop(cancel_running=False)
        fault = rt.scheduler.fault or fault
        if fault is not None:  # nothing below could be read or trusted: stop with the one line
            raise fault
        progress.finish()
        tasks = _tasks_by_id(rt.store, task_ids)
        if not interrupted.is_set():
            _report_blocked(rt, tasks)
        if args.json:
            print(json.dumps(_run_summary(rt.store, batch_ids, tasks), ensure_ascii=False, indent=1))
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
        outcome = rt.enqueue_report(report)
        task_ids += outcome.inserted + outcome.skipped
        batch_ids += sorted({t.batch_id for t in _tasks_by_id(rt.store, outcome.inserted + outcome.skipped)})
        parts = [msg("{tasks} queued as batch {batch}", tasks=_tasks(len(outcome.inserted)), batch=outcome.batch_id)
                 if outcome.inserted else msg("nothing new queued")]
        if outcome.skipped:
            parts.append(msg("{tasks} already in the store (resumed as they are)", tasks=_tasks(len(outcome.skipped))))
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


def _report_blocked(rt: Runtime, tasks: list[Task]) -> None:
    left = [t for t in tasks if t.state not in FINAL_STATES]
    if not left:
        return
    blocked = rt.scheduler.blocked_lanes()
    say(msg("mediaassist: {tasks} could not run and stay queued:", tasks=_tasks(len(left))))
    for lane, reason in sorted(blocked.items()):
        say(msg("  {lane}: {reason}", lane=lane, reason=reason) if lane.startswith("web:") else
            msg("  {lane}: {reason}; resume with: mediaassist lanes resume {lane}", lane=lane, reason=reason))
    if not blocked:
        say(msg("  no lane in the config can run their model"))


def _run_summary(store: Store, batch_ids: list[str], tasks: list[Task]) -> dict[str, Any]:
    counts = {state: sum(1 for t in tasks if t.state == state) for state in FINAL_STATES}
    return {
        "batch_ids": batch_ids, "total": len(tasks), "success": counts["success"],
        "failed": counts["failed"], "canceled": counts["canceled"],
        "pending": sum(1 for t in tasks if t.state not in FINAL_STATES),
        "tasks": [task_json(store, t) for t in tasks],
    }


def task_json(store: Store, task: Task) -> dict[str, Any]:
    result = store.result(task.task_id) if task.state == "success" else None
    return {
        "task_id": task.task_id, "batch_id": task.batch_id, "model": task.model,
        "model_kind": task.model_kind, "account": task.account, "lane": task.lane,
        "state": task.state, "attempt": task.attempt, "error_kind": task.error_kind,
        "error": task.error, "remote_id": task.remote_id,
        "result_text": result.text if result else None,
        "output_files": result.file_list if result else [],
        "created_at": iso(task.created_at), "started_at": iso(task.started_at),
        "finished_at": iso(task.finished_at),
    }


class _Progress:
    """Live progress on stderr: one rewritten line on a terminal, a line per change otherwise."""

    def __init__(self, store: Store, batch_ids: list[str]) -> None:
        self.store = store
        self.batch_ids = batch_ids
        self.started = time.monotonic()
        self.last_line = ""
        self.last_at = 0.0
        self.tty = sys.stderr.isatty()

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last_at < (0.5 if self.tty else 2.0):
            return
        self.last_at = now
        count = dict.fromkeys(("pending", "running", "success", "failed", "canceled"), 0)
        for (_route, _account, _pinned, state), n in self.store.batch_counts(self.batch_ids).items():
            count[state] += n
        done = count["success"] + count["failed"] + count["canceled"]
        line = render(msg("[{seconds}s] {done}/{total} done: {ok} ok, {failed} failed, {canceled} canceled; "
                          "{running} running, {pending} queued", seconds=format(now - self.started, "5.0f"),
                          done=done, total=sum(count.values()), ok=count["success"], failed=count["failed"],
                          canceled=count["canceled"], running=count["running"], pending=count["pending"]),
                      _OUT.language)
        if line[8:] == self.last_line[8:] and not self.tty:
            return
        self.last_line = line
        print(f"\r{line}" if self.tty else line, end="" if self.tty else "\n", file=sys.stderr, flush=True)

    def finish(self) -> None:
        self.last_at = 0.0
        self.tick()
        if self.tty:
            print(file=sys.stderr)


# --- status, cancel, retry, accounts, lanes ---------------------------------------------------

async def _status(args: argparse.Namespace, options: RuntimeOptions) -> int:
    options.read_only = True  # status only looks: no demo logins, no login states written
    if options.demo:
        async with Runtime(options) as rt:
            lanes, at_work = lane_status(rt.config, rt.store), processes_at_work(rt.store)
            checks = await poll_account_checks(rt.config)
    else:
        config = load_app_config(options)
        with _open_store(options) as store:
            lanes, at_work = lane_status(config, store), processes_at_work(store)
        checks = await poll_account_checks(config)
    for lane in lanes:
        if lane["lane"] in checks:
            lane["account_check"] = [str(line) for line in checks[lane["lane"]]]  # English in the JSON
    if args.json:
        print(json.dumps({"lanes": lanes, "at_work": at_work}, ensure_ascii=False, indent=1))
        return EXIT_OK
    for lane in lanes:
        line = (f"{lane['lane']:<28} {lane['kind']:<5} running {lane['running']}/{lane['limit']}  "
                f"pending {lane['pending']}  success {lane['success']}  failed {lane['failed']}  "
                f"canceled {lane['canceled']}")
        if lane["kind"] == "poll":
            line += f"  polling {lane['currentPollingTasks']}, waiting {lane['waitingQueueSize']}"
        if lane.get("adaptive"):
            line += f"  (auto: learned limit {lane['limit']}, max {lane['max_concurrency']})"
        if lane.get("paused"):
            line += f"  PAUSED: {lane['paused']}"
        if lane.get("enabled") is False:
            line += "  DISABLED"
        if lane["kind"] == "web" and "host" in lane:
            line += f"  on {lane['host'] or 'any machine'}"
        if lane.get("login_state") == "needs_login":
            line += f"  NEEDS LOGIN (mediaassist accounts login {lane['lane'].split(':', 1)[1]})"
        print(line)
        for check in checks.get(lane["lane"], []):
            print("    " + render(check, _OUT.language))
    if not lanes:
        where = options.config_path or default_config_path()
        say(msg("no lanes: add [[providers]] and [[accounts]] to {where} (see the README), or try --demo",
                where=where), to=sys.stdout)
    hosts = [msg("{host} ({processes})", host=host, processes=_processes(n)) for host, n in at_work.items()]
    say(msg("at work on this store: {hosts}", hosts=listed(hosts) if hosts else msg("no mediaassist process")),
        to=sys.stdout)
    return EXIT_OK


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


def _accounts(args: argparse.Namespace, options: RuntimeOptions, store: Store) -> int:
    config = load_app_config(options)
    store.sync_accounts(config.accounts)
    if args.action == "list":
        for acct in store.accounts():
            state = "enabled" if acct.enabled else "disabled"
            error = f"  ({acct.last_error})" if acct.last_error else ""
            print(f"{acct.name:<20} site {acct.site:<16} {state:<9} login {acct.login_state:<11} "
                  f"on {acct.host or 'any machine'}{error}")
        if not store.accounts():
            say(msg("no accounts: add [[accounts]] to the config"), to=sys.stdout)
        return EXIT_OK
    if not store.set_account_enabled(args.name, args.action == "enable"):
        say(msg("mediaassist: no account named {name}", name=repr(args.name)))
        return EXIT_BAD_INPUT
    print(f"{args.name}: {args.action}d")
    return EXIT_OK


async def _sites_check(args: argparse.Namespace, options: RuntimeOptions) -> int:
    from mediaassist.providers.web import check_site
    from mediaassist.providers.web.browser import ProfileInUse

    async with Runtime(options) as rt:
        rt.store.sync_accounts(rt.config.accounts)
        try:
            report = await check_site(args.site, args.account, rt.config, rt.data_dir, rt.store)
        except ProfileInUse as exc:
            return _profile_busy("sites check", exc)
    print(report.format())
    return EXIT_OK if report.usable else EXIT_FAILED


def _profile_busy(command: str, busy: Any) -> int:
    """The one line for a command that found its account's browser profile held elsewhere
    (``busy``: a ProfileInUse, whose module is imported only when a browser is wanted)."""
    say(msg("mediaassist: {command}: {busy}; close that program (or let its run end), then try again",
            command=command, busy=busy.busy))
    return EXIT_FAILED


async def _sites_learn(args: argparse.Namespace, options: RuntimeOptions) -> int:
    from mediaassist.providers.web.browser import ProfileInUse
    from mediaassist.providers.web.learn import learn_site

    async with Runtime(options) as rt:
        rt.store.sync_accounts(rt.config.accounts)
        try:
            result = await learn_site(args.name, args.url, args.account, rt.config, rt.data_dir, force=args.force,
                                      store=rt.store)
        except TaskError as exc:
            say(msg("mediaassist: sites learn: {reason}", reason=exc.message))
            return EXIT_FAILED
        except ProfileInUse as exc:
            return _profile_busy("sites learn", exc)
    print(result.check.format())
    return EXIT_OK if result.check.usable else EXIT_FAILED


async def _account_login(args: argparse.Namespace, options: RuntimeOptions) -> int:
    from mediaassist.providers.web import login_account
    from mediaassist.providers.web.tools import no_display_message

    if (blocked := no_display_message(args.name)) is not None:
        say(msg("mediaassist: {reason}", reason=blocked))
        return EXIT_FAILED
    async with Runtime(options) as rt:
        rt.store.sync_accounts(rt.config.accounts)
        say(msg("{name}: log in in the browser window, then close it (waiting up to {seconds} s)",
                name=args.name, seconds=format(args.timeout, ".0f")), to=sys.stdout)
        result = await login_account(args.name, rt.config, rt.data_dir, rt.store, timeout_s=args.timeout)
    if result.ok:
        say(msg("{name}: login ok (checked again after relaunching the browser)", name=args.name), to=sys.stdout)
        return EXIT_OK
    say(msg("{name}: login not confirmed: {reason}", name=args.name, reason=result.message))
    return EXIT_FAILED


def _lanes(args: argparse.Namespace, options: RuntimeOptions, store: Store) -> int:
    known = _known_lanes(options, store)
    if args.name not in known:
        say(msg("mediaassist: no lane named {name} (lanes: {lanes})", name=repr(args.name),
                lanes=", ".join(sorted(known)) or msg("none yet")))
        return EXIT_BAD_INPUT
    if args.action == "pause":
        store.pause_lane(args.name, PAUSED_BY_OPERATOR)
    else:
        store.resume_lane(args.name)
    print(f"{args.name}: {args.action}d")
    return EXIT_OK


def _known_lanes(options: RuntimeOptions, store: Store) -> set[str]:
    """Lanes of the config, plus any the store has seen (the demo's, a config since edited)."""
    config = load_app_config(options) if not options.demo else None
    names = {p.lane for p in config.providers} | {a.lane for a in config.accounts} if config else set()
    names |= {route for (route, _account, _state) in store.counts() if not route.startswith("web:")}
    names |= {f"web:{acct.name}" for acct in store.accounts()}
    return names | set(store.paused_lanes())


# --- logging ----------------------------------------------------------------------------------

def _setup_logging(args: argparse.Namespace) -> None:
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)]
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(level)
    console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.setLevel(logging.DEBUG if args.verbose > 1 else logging.INFO)
    root.addHandler(console)
    # A log line that cannot be written (disk full) is dropped, not printed as a traceback: the
    # operator gets the one line that says what is wrong.
    logging.raiseExceptions = False
    options = _options(args)
    try:
        from mediaassist.core.paths import data_dir

        log_dir = data_dir(options.data_dir) / "logs"
        log_dir.mkdir(exist_ok=True)
        file_handler = logging.handlers.RotatingFileHandler(
            log_dir / "mediaassist.log", maxBytes=5_000_000, backupCount=3, encoding="utf-8")
        file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        file_handler.setLevel(logging.INFO)
        root.addHandler(file_handler)
    except OSError as exc:
        # A read-only or full file system is reported once, by the store, with what to do.
        if exc.errno not in (errno.EROFS, errno.ENOSPC):
            say(msg("mediaassist: no log file ({reason})", reason=exc))
    # Third-party chatter (httpx logs every request URL at INFO) stays out of our logs.
    for noisy in ("httpx", "httpcore", "asyncio", "peewee"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    install_log_filter()
