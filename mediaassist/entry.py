"""``mediaassist``: the desktop app with no command, the headless tools with one.

The entry point, and the top layer: it parses the arguments with little more than argparse
loaded (``--version`` and ``--help`` cost about what the interpreter's own start does), then
imports only what the chosen path needs -- the window (``mediaassist.ui``) or one headless
command (``mediaassist.cli``).

Exit codes: 0 all succeeded, 1 something failed, was canceled or could not run, 2 bad input or
config (a bad row is reported with its row number; the good rows still run) or a store that
cannot be used (a database file read-only, damaged, not a database, deleted or replaced while
running; a shared server out of reach; a schema newer than this program), 3 the disk is full
(queued and running tasks stay queued), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mediaassist import __version__
from mediaassist.arguments import Parser, VersionAction, argument_error, command_line_language
from mediaassist.core.errors import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_DISK_FULL,
    EXIT_FAILED,
    EXIT_OK,
    ConfigError,
    ImportFileError,
    StorageFault,
)
from mediaassist.core.messages import LANGUAGES, deferred, msg, normalized_language

if TYPE_CHECKING:
    import logging
    from collections.abc import Callable

    from mediaassist.core.messages import Message
    from mediaassist.core.options import RuntimeOptions

COMMANDS = ("run", "estimate", "status", "cancel", "retry", "rerun", "outputs", "accounts", "lanes", "sites",
            "profiles", "doctor")


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(sys.argv[1:] if argv is None else argv)  # --version and --help end here
    from mediaassist.core.options import RuntimeOptions

    options = RuntimeOptions.from_arguments(args)
    _setup_logging(args, options)
    # A warning (say, a config file others can read) is a message to the operator, not a trace.
    warnings.formatwarning = lambda message, *_rest, **_kw: _warning_line(args, message)
    try:
        if args.command is None:
            return _window(args, options)
        if args.command == "accounts" and args.action == "login":
            handed = _login_in_window(args, options)
            if handed is not None:
                return handed
        from mediaassist.cli import run_command

        code = run_command(args, options)
        sys.stdout.flush()  # a reader gone away shows here, not as a warning at exit
        return code
    except ConfigError as exc:
        from mediaassist.core.messages import msg

        for problem in exc.problems:  # every problem, one a line: all typos are fixed in one go
            _tell(args, msg("mediaassist: config error: {reason}", reason=problem))
        return EXIT_BAD_INPUT
    except ImportFileError as exc:
        from mediaassist.core.messages import msg

        _tell(args, msg("mediaassist: cannot import: {reason}", reason=exc.message))
        return EXIT_BAD_INPUT
    except StorageFault as fault:
        return report_storage_fault(fault, args)
    except BrokenPipeError:
        return _reader_went_away()
    except OSError as exc:  # preparing the data dir on a read-only or full file system
        from mediaassist.core.store import classify_fault

        classified = classify_fault(exc, _where_it_failed(exc, options))
        if classified is None:
            raise
        return report_storage_fault(classified, args)


def _reader_went_away() -> int:
    """``mediaassist status | head``: the reader had enough, which is no error and no traceback.
    Python would try the flush again at exit and complain, so stdout now writes to nowhere."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


def _warning_line(args: argparse.Namespace, warning: Warning | str) -> str:
    """A warning as the operator reads it, in the language of ``--lang`` or the locale."""
    from mediaassist.core.messages import Message, language_from_environment, msg, render, verbatim

    reason = getattr(warning, "message", None)
    if not isinstance(reason, Message):
        reason = verbatim(str(warning))
    line = msg("mediaassist: warning: {reason}", reason=reason)
    return render(line, getattr(args, "lang", None) or language_from_environment()) + "\n"


def _where_it_failed(exc: OSError, options: RuntimeOptions) -> Path:
    """The file an OS error names, else the store file in the data dir -- never the working
    directory, whose disk may not be the full one."""
    if exc.filename:
        return Path(exc.filename)
    from mediaassist.core.options import DB_NAME
    from mediaassist.core.paths import data_dir

    try:
        return data_dir(options.data_dir) / DB_NAME
    except OSError:
        return Path(options.data_dir or ".").expanduser().resolve() / DB_NAME


def report_storage_fault(fault: StorageFault, args: argparse.Namespace | None = None) -> int:
    """The one line for a store that cannot be used, and its exit code."""
    from mediaassist.core.messages import msg

    _tell(args, msg("mediaassist: {reason}", reason=fault.message))
    return EXIT_DISK_FULL if fault.disk_full else EXIT_BAD_INPUT


def _tell(args: argparse.Namespace | None, message: Message) -> None:
    """A line on stderr in the language of ``--lang`` or the locale (LC_ALL, LC_MESSAGES, LANG)."""
    from mediaassist.core.messages import language_from_environment, render

    print(render(message, getattr(args, "lang", None) or language_from_environment()), file=sys.stderr)


def _window(args: argparse.Namespace, options: RuntimeOptions) -> int:
    if sys.platform.startswith("linux") and not any(
            os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")):
        # Qt would abort the process with a misleading hint about xcb libraries.
        from mediaassist.core.messages import msg

        _tell(args, msg("mediaassist: no display to open the window on (DISPLAY is not set). Start it from a "
                        "desktop session or under xvfb-run, or use the headless commands: "
                        "mediaassist run|status|cancel|retry|accounts|lanes"))
        return EXIT_FAILED
    try:
        from mediaassist.ui.app import run_gui
    except ImportError as exc:
        from mediaassist.core.messages import msg

        _tell(args, msg("mediaassist: the desktop app is not available here ({reason}); use the headless "
                        "commands: mediaassist run|status|cancel|retry|accounts", reason=exc))
        return EXIT_FAILED
    return run_gui(list(args.files), options)


def _login_in_window(args: argparse.Namespace, options: RuntimeOptions) -> int | None:
    """``accounts login`` while the window runs on this data dir: its lane's browser holds the
    account's profile, so the login is handed to the window (its single-instance channel; the
    window's display, not ours) and its answer printed. None when no window runs (or no Qt)."""
    try:
        from mediaassist.ui.app import hand_login_to_window
    except ImportError:
        return None
    handed = hand_login_to_window(options, args.name, args.timeout, args.keep_login)
    if handed is None:
        return None
    ok, message = handed
    from mediaassist.core.messages import language_from_environment, msg, render

    line = msg("{name}: {reason} (in the running window's lane)", name=args.name, reason=message)
    print(render(line, args.lang or language_from_environment()), file=sys.stdout if ok else sys.stderr)
    return EXIT_OK if ok else EXIT_FAILED


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """The command's arguments (``command`` None: the window's). Help, usage lines and argument
    errors are printed in the language of ``--lang`` or the locale."""
    argv = _command_first(argv)
    is_command = bool(argv) and argv[0] in COMMANDS
    parser = _command_parser() if is_command else _gui_parser()
    with command_line_language(argv):
        args = parser.parse_args(argv)
    if not is_command:
        args.command = None
    return args


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


# --- arguments ----------------------------------------------------------------------------------
# Every text is a message id (deferred: translated only when help is printed, mediaassist/arguments.py).

def _common(parser: argparse.ArgumentParser, speed: bool = True) -> None:
    parser.add_argument("--config", type=Path, metavar="PATH",
                        help=deferred("config TOML (default: the user config dir's config.toml)"))
    parser.add_argument("--data-dir", type=_data_dir, metavar="DIR",
                        help=deferred("database, profiles and outputs (default: $MEDIAASSIST_HOME or the user "
                                      "data dir)"))
    parser.add_argument("--store", metavar="URL",
                        help=deferred("a team's shared queue: postgresql://USER@HOST[:PORT]/DATABASE (default: "
                                      "$MEDIAASSIST_STORE_URL, the config's [store] url, else the data dir's "
                                      "SQLite file)"))
    parser.add_argument("-v", "--verbose", action="count", default=0, help=deferred("more log output on stderr"))
    parser.add_argument("--demo", action="store_true",
                        help=deferred("use the built-in demo providers (kept apart in DATA_DIR/demo)"))
    parser.add_argument("--lang", type=_language, metavar="LANG",
                        help=deferred("language of the messages and of this help: en or zh_CN (default: from "
                                      "LC_ALL, LC_MESSAGES or LANG)"))
    if speed:
        parser.add_argument("--speed", type=_positive_float, default=1.0, metavar="N",
                            help=deferred("divide every demo duration and scheduler timer by N"))


def _language(text: str) -> str:
    try:
        return normalized_language(text)
    except ValueError:
        raise argument_error(msg("unknown language {name} (known: {known})", name=repr(text),
                                 known=", ".join(LANGUAGES))) from None


def _data_dir(text: str) -> Path:
    from mediaassist.core.errors import ConfigError
    from mediaassist.core.location import refuse_url_as_path

    try:
        refuse_url_as_path(text, "--data-dir")
    except ConfigError as exc:
        raise argument_error(exc.message) from None
    return Path(text)


def _not_before(text: str) -> float:
    from datetime import datetime

    from mediaassist.core.hours import not_a_time, parse_not_before

    try:
        return parse_not_before(text, datetime.now()).timestamp()
    except ValueError:
        raise argument_error(not_a_time(text)) from None


def _model_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argument_error(msg("name at least one model: --models a,b"))
    return names


def _param(text: str) -> tuple[str, Any]:
    """``KEY=VALUE``: the value as JSON when it reads as JSON (8, true, "x"), else as text."""
    import json

    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argument_error(msg("{text}: write KEY=VALUE, e.g. --param seconds=8", text=repr(text)))
    try:
        value: Any = json.loads(raw)
    except ValueError:
        value = raw
    return key.strip(), value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0  # not a number: the same line as a number out of range
    if not 0 < value <= 10000:
        raise argument_error(msg("{text}: must be a number in (0, 10000]", text=text))
    return value


def _gui_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="mediaassist",
        description=deferred("Open the desktop app (files go to the import preview). Headless commands: run, "
                             "estimate, status, cancel, retry, rerun, outputs, accounts, lanes, sites, profiles, "
                             "doctor (mediaassist COMMAND --help)."))
    parser.add_argument("--version", action=VersionAction, version=f"mediaassist {__version__}",
                        help=deferred("print the version and exit"))
    _common(parser)
    parser.add_argument("files", nargs="*", type=Path, metavar="FILE",
                        help=deferred("task files to open in the import preview"))
    return parser


def _command_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="mediaassist",
                    description=deferred("Headless commands; with no command mediaassist opens the desktop app."))
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, speed: bool = True) -> argparse.ArgumentParser:
        leaf = sub.add_parser(name, help=summary, description=summary)
        _common(leaf, speed=speed)
        return leaf

    run = command("run", deferred("import task files (CSV, XLSX, JSON, JSONL, TXT) and run them until every task "
                                  "has ended; running the same file again resumes it. Only the files' own tasks "
                                  "are taken: other work queued on the same lanes is left to whoever runs it "
                                  "(the window)"))
    run.add_argument("files", nargs="*", type=Path, metavar="FILE")
    run.add_argument("--all", action="store_true",
                     help=deferred("also run every other task queued on the lanes (with no FILE: the whole queue)"))
    run.add_argument("--model", help=deferred("model for TXT files (and rows without one)"))
    run.add_argument("--models", type=_model_list, metavar="A,B",
                     help=deferred("run every row on each of these models (one task per model, sharing the row's "
                                   "group); a row's own 'models' cell (a|b) wins"))
    run.add_argument("--encoding", metavar="NAME",
                     help=deferred("text encoding of the task files (e.g. gb18030, shift_jis, big5, euc_kr); "
                                   "default: detect UTF-8/UTF-16, or a legacy CJK code page when unambiguous"))
    run.add_argument("--json", action="store_true",
                     help=deferred("print one final JSON object on stdout, and the progress lines on stderr as "
                                   "JSON"))
    run.add_argument("--not-before", type=_not_before, metavar="WHEN",
                     help=deferred("start no task before WHEN (local time: 23:00, 2026-12-03 23:00, or ISO 8601 "
                                   "with an offset); a task file's not_before column wins for its rows"))

    estimate = command("estimate", deferred("what task files would cost, per model and in total (per currency), "
                                            "from the config's price tables and the models' record; nothing is "
                                            "queued"), speed=False)
    estimate.add_argument("files", nargs="+", type=Path, metavar="FILE")
    estimate.add_argument("--model", help=deferred("model for TXT files (and rows without one)"))
    estimate.add_argument("--encoding", metavar="NAME", help=deferred("text encoding of the task files"))
    estimate.add_argument("--json", action="store_true", help=deferred("one JSON object on stdout"))

    status = command("status", deferred("per lane: limit, running, pending, success, failed, canceled "
                                        "(and the polling pool)"), speed=False)
    status.add_argument("--json", action="store_true", help=deferred("one JSON object on stdout"))

    command("doctor", deferred("look after the local store file: back it up (with its -wal and -shm), check it "
                               "(PRAGMA integrity_check), write a healthy one's -wal back, and save the rows a "
                               "damaged one can still read into a new file beside it; the file itself is never "
                               "changed or moved"), speed=False)

    cancel = command("cancel", deferred("cancel tasks: pending ones at once, running ones at their next "
                                        "checkpoint"), speed=False)
    cancel.add_argument("task_ids", nargs="*", metavar="TASK_ID")
    cancel.add_argument("--batch", metavar="ID", help=deferred("every unfinished task of the batch"))

    retry = command("retry", deferred("queue finished tasks again on the same row: failed or canceled ones, "
                                      "or any named by id (a success is generated again)"), speed=False)
    retry.add_argument("task_ids", nargs="*", metavar="TASK_ID")
    retry.add_argument("--failed", action="store_true", help=deferred("every failed task"))
    retry.add_argument("--batch", metavar="ID", help=deferred("the failed and canceled tasks of the batch"))

    rerun = command("rerun", deferred("queue an edited copy of a finished task as its child (parent_id); the "
                                      "old task and its files stay"), speed=False)
    rerun.add_argument("task_id", metavar="TASK_ID")
    rerun.add_argument("--prompt", help=deferred("the new prompt (default: the old one)"))
    rerun.add_argument("--model", help=deferred("another model (default: the same)"))
    rerun.add_argument("--param", action="append", default=[], type=_param, metavar="KEY=VALUE",
                       help=deferred("set one param (a JSON value, else text); repeat for more"))
    rerun.add_argument("--remix", action="store_true",
                       help=deferred("a /v1/videos model: remake the parent's video with the service's remix "
                                     "route (no new create)"))

    outputs = sub.add_parser("outputs", help=deferred("output files: manifest, pick, deliver"),
                             description=deferred("output files")).add_subparsers(dest="action", required=True)
    manifest = outputs.add_parser("manifest", help=deferred("write the batch's manifest.json and manifest.csv now"))
    manifest.add_argument("batch", metavar="BATCH")
    _common(manifest, speed=False)
    pick = outputs.add_parser("pick", help=deferred("mark a task's outputs as picked (for deliver --picked)"))
    pick.add_argument("task_id", metavar="TASK_ID")
    pick.add_argument("--n", type=int, metavar="N",
                      help=deferred("only output N (1-based; default: all of the task's)"))
    pick.add_argument("--unpick", action="store_true", help=deferred("remove the mark instead"))
    _common(pick, speed=False)
    deliver = outputs.add_parser("deliver", help=deferred("copy a batch's files, under their template names, to a "
                                                          "folder with a manifest of only those files"))
    deliver.add_argument("batch", metavar="BATCH")
    deliver.add_argument("--to", required=True, type=Path, metavar="DIR", help=deferred("the folder to deliver to"))
    deliver.add_argument("--picked", action="store_true", help=deferred("only the picked outputs"))
    deliver.add_argument("--task", action="append", dest="tasks", metavar="TASK_ID",
                         help=deferred("only these tasks' outputs (repeat for more)"))
    _common(deliver, speed=False)

    accounts = sub.add_parser("accounts", help=deferred("web accounts: list, enable, disable, log in"),
                              description=deferred("web accounts")).add_subparsers(dest="action", required=True)
    _common(accounts.add_parser("list", help=deferred("every account with its site, toggle and login state")),
            speed=False)
    for action, summary in (("enable", deferred("let the account take work again")),
                            ("disable", deferred("take no new work on the account (running work finishes)"))):
        leaf = accounts.add_parser(action, help=summary, description=summary)
        leaf.add_argument("name")
        _common(leaf, speed=False)
    login = accounts.add_parser("login", help=deferred("open the account's browser profile to log in by hand"))
    login.add_argument("name")
    login.add_argument("--timeout", type=_positive_float, default=600.0, metavar="S",
                       help=deferred("give up waiting for the login after S seconds (default 600)"))
    login.add_argument("--keep-login", action="store_true",
                       help=deferred("keep what you type into the login form in the OS keyring (never a file), so "
                                     "the lane logs in again by itself when a new browser finds the page logged "
                                     "out (a login kept only in the page session, such as Streamlit's password "
                                     "gate)"))
    _common(login, speed=False)

    sites = sub.add_parser("sites", help=deferred("web site profiles: check which selectors match"))
    sites_sub = sites.add_subparsers(dest="action", required=True)
    check = sites_sub.add_parser("check", help=deferred("open SITE as an account and report which selectors match"))
    _common(check)
    check.add_argument("site")
    check.add_argument("--account", required=True, metavar="NAME", help=deferred("whose logged-in profile to use"))
    learn = sites_sub.add_parser("learn", help=deferred("write a site profile from three clicks on a chat page "
                                                        "(opens a window)"),
                                 description=deferred("Open URL in a browser window; click the prompt box, the "
                                                      "send button and the finished answer; a profile is written "
                                                      "to the config dir's sites/ folder and checked."))
    _common(learn, speed=False)
    learn.add_argument("url")
    learn.add_argument("--name", required=True, metavar="SITE",
                       help=deferred("the profile's name (sites/SITE.toml)"))
    learn.add_argument("--account", required=True, metavar="NAME",
                       help=deferred("whose browser profile to use (log in there first if the site asks)"))
    learn.add_argument("--force", action="store_true", help=deferred("replace an existing profile of that name"))
    learn.add_argument("--error-turn", action="store_true",
                       help=deferred("end with a turn you make fail (stop the service, or send a prompt the site "
                                     "refuses): the error the page shows is learned as the error role"))

    profiles = sub.add_parser("profiles", help=deferred("task-API profiles: show the requests a task would make"))
    profiles_sub = profiles.add_subparsers(dest="action", required=True)
    show = profiles_sub.add_parser("check", help=deferred("show the requests a task on profile NAME would make "
                                                          "(nothing is sent; secrets masked)"),
                                   description=deferred("Read a task-API profile (a shipped name or a .toml path) "
                                                        "and show the create, status, result and cancel requests a "
                                                        "task would make against a base URL, with the key and "
                                                        "secrets masked. Nothing is sent."))
    show.add_argument("name", metavar="NAME",
                      help=deferred("a shipped profile (kling, runway, ...) or a .toml path"))
    show.add_argument("--base-url", metavar="URL",
                      help=deferred("the service's address (default: the profile's base_url)"))
    _common(show, speed=False)

    lanes = sub.add_parser("lanes", help=deferred("pause or resume a lane (e.g. api:openai, web:alice)"))
    lane_sub = lanes.add_subparsers(dest="action", required=True)
    for action, summary in (("pause", deferred("the lane takes no new work until resumed")),
                            ("resume", deferred("the lane takes work again (after fixing a quota or key)"))):
        leaf = lane_sub.add_parser(action, help=summary, description=summary)
        leaf.add_argument("name", help=deferred("as `mediaassist status` lists it, e.g. api:openai"))
        _common(leaf, speed=False)
    return parser


# --- logging ----------------------------------------------------------------------------------

def _setup_logging(args: argparse.Namespace, options: RuntimeOptions) -> None:
    import errno
    import logging.handlers  # not before: --version and --help need no logging

    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)]
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(level)
    console.setFormatter(_console_formatter("%(levelname)s %(name)s: %(message)s"))
    from mediaassist.core.messages import ENGLISH, language_from_environment

    language = getattr(args, "lang", None) or language_from_environment()
    if language != ENGLISH:  # before the secret filter (install_log_filter) flattens the record to English
        console.addFilter(_console_language(language))
    root = logging.getLogger()
    root.setLevel(logging.DEBUG if args.verbose > 1 else logging.INFO)
    root.addHandler(console)
    # A log line that cannot be written (disk full) is dropped, not printed as a traceback: the
    # operator gets the one line that says what is wrong.
    logging.raiseExceptions = False
    from mediaassist.core.paths import data_dir
    from mediaassist.core.secrets import install_log_filter

    try:
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
            from mediaassist.core.messages import msg

            _tell(args, msg("mediaassist: no log file ({reason})", reason=exc))
    # Third-party chatter (httpx logs every request URL at INFO) stays out of our logs.
    for noisy in ("httpx", "httpcore", "asyncio", "peewee"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    install_log_filter()


def _console_language(language: str) -> Callable[[logging.LogRecord], bool]:
    """A console filter that writes a record's messages (a task's failure, a lane's pause) in
    ``language`` as its ``console_text``; the record itself, and so the log file, stays English."""
    from mediaassist.core.messages import Message, render
    from mediaassist.core.secrets import redact

    def filter_record(record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and any(isinstance(arg, Message) for arg in args):
            shown = tuple(render(arg, language) if isinstance(arg, Message) else arg for arg in args)
            try:
                record.console_text = redact(str(record.msg) % shown)
            except (TypeError, ValueError):
                pass
        return True

    return filter_record


def _console_formatter(form: str) -> logging.Formatter:
    """The console's formatter: a record's ``console_text`` (``_console_language``), when it has
    one, is its message there."""
    import logging

    class ConsoleFormatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            text = getattr(record, "console_text", None)
            if text is None:
                return super().format(record)
            return super().format(logging.makeLogRecord({**record.__dict__, "msg": text, "args": None}))

    return ConsoleFormatter(form)
