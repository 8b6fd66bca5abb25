"""Texts the core and the providers write (task log lines, error messages, lane reasons), shown
in the window's language.

The core stays free of Qt and writes English into the store (the store is shared by the CLI,
the logs and other windows). The window matches each text against this catalogue of the
templates the core uses and shows the translation, with the values it captured put back --
themselves translated when they are texts of the core (an error kind, a nested reason).
tests/ui/test_core_texts.py checks both ways that the catalogue and the source agree.
"""

from __future__ import annotations

import re
from functools import lru_cache

from mediaassist.core.messages import Message, render
from mediaassist.ui.i18n import clear_on_language_change, current_language, tr, tr_noop
from mediaassist.ui.labels import error_kind_labels

TEMPLATES = (
    # scheduler: attempts and lanes
    tr_noop("attempt {attempt} started on {lane}"),
    tr_noop("attempt {attempt} failed ({kind}): {message}"),
    tr_noop("attempt {attempt} failed ({kind}): {message}; will retry"),
    tr_noop("success"),
    tr_noop("canceled"),
    tr_noop("canceled by operator"),
    tr_noop("canceled before it ran"),
    tr_noop("heartbeat stalled; abandoning this attempt"),
    tr_noop("cancel requested; stopping at the next checkpoint"),
    tr_noop("finished after being reaped; result dropped (the retry owns the row)"),
    tr_noop("finished, but the row was no longer this attempt's; result not written"),
    tr_noop("app stopped; task goes back to the queue to resume on the next start"),
    tr_noop("back in the queue: {reason}"),
    tr_noop("model {model} is not in the config"),
    tr_noop("paused by operator"),
    tr_noop("account disabled"),
    tr_noop("account needs login"),
    tr_noop("remote task id {remote_id} saved"),
    tr_noop("uploaded {file} as {name}"),
    tr_noop("input file {path} is gone since import"),
    tr_noop("input file {path} cannot be read: {reason}"),
    tr_noop("input file {path} changed since import (size/hash differ); import the task again to send the new file"),
    tr_noop("simulated failure"),
    tr_noop("lane paused ({reason}); waits at the head of the queue until it is resumed"),
    # poll lane: the account check at lane start (the window's lane row shows it)
    tr_noop("account: {plan}, balance {balance} {currency}, {running} task(s) running"),
    tr_noop("queue: the key runs {limit} task(s) at once"),
    tr_noop("warning: max_polling_tasks = {polled} is above what the account runs at once ({limit}); "
            "the rest wait in RunningHub's queue or get 421"),
    tr_noop("warning: max_polling_tasks = {polled} is above the {limit} jobs {service} runs at once; "
            "the rest are refused with 429 and wait"),
    tr_noop("warning: accountStatus answered {code} {message}"),
    tr_noop("warning: account check failed: {reason}"),
    tr_noop("warning: account check gave no answer in {seconds} s"),
    # API lane
    tr_noop("no API key for provider {provider} (set {where}, the OS keyring or api_key)"),
    tr_noop("environment variable {name}"),
    tr_noop("HTTP {status}: {detail}"),
    tr_noop("HTTP {status}, API key rejected: {detail}"),
    tr_noop("HTTP 408: {detail}"),
    tr_noop("quota exhausted: {detail}"),
    tr_noop("API key rejected (HTTP {status}): {detail}"),
    tr_noop("HTTP {status} but the body is not a JSON object"),
    tr_noop("HTTP {status} but the body is not JSON: {detail}"),
    tr_noop("still rate limited after {n} waits"),
    tr_noop("{n} image(s) saved to {folder}"),
    tr_noop("image data[] entry has neither b64_json nor url"),
    tr_noop("image data[].b64_json is not valid base64"),
    tr_noop("image response has no data[] entries"),
    tr_noop("image download failed ({problem}); trying again"),
    tr_noop("the image was generated (and billed) but its download failed {n} times ({problem}); "
            "not retried, so it is not paid for twice: {detail}"),
    tr_noop("empty answer (finish_reason={reason})"),
    tr_noop("the prompt is empty"),
    tr_noop("model {model}: defaults must be a table"),
    tr_noop("response has no choices[0].message.content"),
    tr_noop("stopped ({reason}); the request in flight was dropped"),
    tr_noop("no response within {seconds} s (timeout_s)"),
    # poll lane (RunningHub)
    tr_noop("no API key for provider {provider} (set api_key_env, the OS keyring or api_key)"),
    tr_noop("RunningHub API key rejected ({code} {msg}); fix it, then resume the lane"),
    tr_noop("RunningHub balance or membership exhausted ({code} {msg}); fix it, then resume the lane"),
    tr_noop("RunningHub API key rejected ({code} {msg})"),
    tr_noop("RunningHub balance or membership exhausted ({code} {msg})"),
    tr_noop("RunningHub task {remote_id} succeeded but its outputs did not come; a retry fetches them "
            "again (no resubmission)"),
    tr_noop("downloaded {n} file(s) to {folder}"),
    tr_noop("node_info_list entry {n} needs nodeId, fieldName and fieldValue"),
    tr_noop("RunningHub task {remote_id} failed: {reason}"),
    tr_noop("{detail} (unknown to RunningHub under this key)"),
    tr_noop("{detail} (the remote task failed; submit it again as a new task to run it again)"),
    tr_noop("model {model} names neither workflow_id nor webapp_id"),
    tr_noop("create answered code 0 without a taskId; check {where} before retrying"),
    tr_noop("{path} for {remote_id}: {detail}"),
    tr_noop("download of {url} failed ({problem}); try {n} soon"),
    # importer: row reasons (several in one row are joined with "; ") and whole-file errors
    tr_noop("column {column}: {reason}"),
    tr_noop("column {column}: required by model {model} (a file path or URL)"),
    tr_noop("column {column}: model {model} takes no input {name} (its inputs: {inputs})"),
    tr_noop("file not found: {path}"),
    tr_noop("cannot read {path}: {reason}"),
    tr_noop("unknown model {model} ({known})"),
    tr_noop("known models: {names}"),
    tr_noop("no models are configured"),
    tr_noop("model is empty and no default model was given"),
    tr_noop("prompt is empty (model {model} needs one)"),
    tr_noop("prompt has {n} characters (at most {limit})"),
    tr_noop("duplicate task_id {task_id} (first on row {row})"),
    tr_noop("params is not valid JSON"),
    tr_noop("params is not a JSON object"),
    tr_noop("priority {value} is not an integer"),
    tr_noop("{path}: file not found"),
    tr_noop("{path}: the file is empty"),
    tr_noop("{path}: the file holds no tasks"),
    tr_noop("{path}: unknown model {model} ({known})"),
    tr_noop("{path}: a TXT file holds only prompts; name the model (--model NAME)"),
    tr_noop("{path}: no model given; add a 'model' column or name a default model (--model NAME)"),
    tr_noop("{path}: old .xls workbooks are not supported; save it as .xlsx or CSV"),
    tr_noop("{path}: unsupported file type {suffix} (supported: {formats})"),
    tr_noop("{path}: cannot read the file ({reason})"),
    # why the window's import process stopped (core/import_process.py)
    tr_noop("the import process ended early (exit code {code})"),
    tr_noop("the import process failed: {error}: {detail}"),
    tr_noop("unexpected reply from the import process: {reply}"),
    tr_noop("unreadable reply from the import process ({error}: {detail})"),
    tr_noop("{path}: not readable as text (it holds NUL bytes); save it as UTF-8"),
    tr_noop("{path}: not a valid CSV file (line {line}: {detail})"),
    tr_noop("{path}: not a readable XLSX workbook ({detail})"),
    tr_noop("{path}: column {column} appears more than once in the header"),
    tr_noop("{path}: not valid JSON ({detail})"),
    tr_noop("{path}: JSON nested too deeply to be a task list"),
    tr_noop("{path}: JSON must be a list of objects, one per task"),
    tr_noop("{path}: JSONL must hold one JSON object per line"),
    tr_noop("ignored unknown column(s): {columns} (known: {known})"),
    tr_noop("task_id is {n} characters long (at most {limit})"),
    tr_noop("priority {value} is out of range ({low}..{high})"),
    tr_noop("account {account} given for {kind} model {model} (only web models run on an account)"),
    tr_noop("account {account} is not configured, but {runs_on}"),
    tr_noop("account {account} belongs to site {other}, but {runs_on}"),
    tr_noop("model {model} runs on site {site} (accounts: {accounts})"),
    # importer: a file's text encoding
    tr_noop("{path}: starts with a UTF-8 byte-order mark but is not UTF-8 (invalid byte at offset {offset} "
            "after the mark); save it as UTF-8 again, or name its encoding with --encoding"),
    tr_noop("{path}: unknown encoding {encoding} (e.g. utf-8, gb18030, shift_jis, big5, euc_kr)"),
    tr_noop("{path}: not valid {encoding} (byte offset {offset}: {reason}); check --encoding, or save the file "
            "as UTF-8"),
    tr_noop("read as {encoding} (detected); name another with --encoding if that is wrong"),
    tr_noop("{path}: not UTF-8, and could be {encodings}; name the encoding with --encoding (e.g. --encoding "
            "gb18030), or save the file as UTF-8"),
    tr_noop("{path}: not readable as text (not UTF-8, and not clearly GB18030, Shift-JIS, Big5 or EUC-KR); "
            "save it as UTF-8, or name its encoding with --encoding"),
    # importer: a media input's value ({kinds}, {media}: "an image or a video", translated phrase by phrase)
    tr_noop("must be a file path or URL, not {type}"),
    tr_noop("several files given ({separator}) but {input} takes one"),
    tr_noop("an empty file name between '{separator}' separators"),
    tr_noop("{url} is not a valid URL"),
    tr_noop("{url} is not a valid http(s) URL"),
    tr_noop("{url} looks like {media} by its name, but {input} takes {kinds}"),
    tr_noop("{path} is a folder"),
    tr_noop("{path} is not a regular file"),
    tr_noop("{name} is not {kinds} file by its content (known: PNG, JPEG, GIF, WEBP, BMP, MP4, MOV, WEBM, MKV, "
            "MP3, WAV, M4A, AAC, OGG, FLAC)"),
    tr_noop("{name} is {media} ({mime}), but {input} takes {kinds}"),
    tr_noop("{name} is {size}, over the {limit} limit for {media}"),
    tr_noop("{n} bytes"),
    tr_noop("{size} MiB ({n} bytes)"),
    # web lane
    tr_noop("no Chromium executable found ({detail}); set app.chromium_path"),
    tr_noop("prompt read-back differs ({landed} of {total} characters); inserting again"),
    tr_noop("{site}: prompt box not found"),
    tr_noop("the prompt did not arrive whole in the page ({landed} of {total} characters landed)"),
    tr_noop("could not open {url}: {detail}"),
    tr_noop("{site} shows a rate-limit banner: {detail}"),
    tr_noop("{site} refused: {detail}"),
    tr_noop("rate limited by {site}: {detail}"),
    tr_noop("{site} logged the account out during the answer"),
    tr_noop("no complete answer within {seconds} s"),
    tr_noop("image {src} could not be fetched (HTTP {status})"),
    tr_noop("the answer started"),
    tr_noop("the answer did not start within {seconds} s after send (the send may have been swallowed)"),
    tr_noop("answer complete: {chars} characters, {images} image(s) in {seconds} s"),
    tr_noop("prompt entered ({chars} characters, {lines} lines)"),
    tr_noop("an earlier answer was still being generated on this account; clicked stop ({outcome})"),
    tr_noop("account {account} is logged out of {site}; log in with: mediaassist accounts login {name}"),
    tr_noop("clicked stop on the page; the answer ended"),
    tr_noop("a web task reached the provider without an account"),
    tr_noop("waiting: account {account} is still busy with another generation"),
    tr_noop("need_empty_prompt: cleared the page's default instructions"),
    tr_noop("need_empty_prompt: the system prompt is not sent"),
    tr_noop("stopping the generation failed ({error})"),
    tr_noop("browser error: {detail}"),
    tr_noop("recycling the browser after {n} tasks"),
    tr_noop("no generation was showing; nothing to stop"),
    # added with the streaming chat, media inputs, web attachments and the generic poll lane
    tr_noop("handed back to the queue after a storage fault"),
    tr_noop("canceled: {reason}"),
    tr_noop("stream read to the end: {n} characters"),
    tr_noop("stream error: {detail}"),
    tr_noop("the stream ended without [DONE] after {n} characters"),
    tr_noop("endpoint {endpoint} is not one of: {endpoints}"),
    tr_noop("HTTP {status} and the server says not to retry (x-should-retry: false): {detail}"),
    tr_noop("HTTP {status} (rate limited): the server asks for {seconds} s; no request to {provider} before then"),
    tr_noop("the stream broke after {n} characters ({error})"),
    tr_noop("HTTP {status} at {n} in flight: over the provider's limit; learned limit now {limit}, sent "
            "again when a slot frees"),
    tr_noop("HTTP {status} (rate limited, no usable header): one probe to {provider} in {seconds} s, the "
            "other requests wait for its answer"),
    tr_noop("receiving: {n} characters so far: …{tail}"),
    tr_noop("stream event is not JSON: {detail}"),
    tr_noop("images_edit needs at least one image input (declare inputs = [\"image\"] and fill its column)"),
    tr_noop("input {name} is {media}; a chat model takes images only"),
    tr_noop("input {name}: images_edit uploads local files; {url} is a URL"),
    tr_noop("dismissed {n} pop-up(s)"),
    tr_noop("{site} showed an error: {detail}"),
    tr_noop("{site}: file input not found (selectors.file_input)"),
    tr_noop("{site}: {what} not found"),
    tr_noop("send button"),
    tr_noop("the copy button gave no text; reading the answer from the page instead"),
    tr_noop("{site}: the page shows no login marker ({seen}); the site may have changed (check it with: "
            "mediaassist sites check {name} --account NAME)"),
    tr_noop("neither logged in nor logged out"),
    tr_noop("{site} rejected the attachment {names}: {detail}"),
    tr_noop("attached {names}"),
    tr_noop("{site}: the attachment {names} was not shown as ready within {seconds} s"),
    tr_noop("copy button {n} could not be clicked ({error})"),
    tr_noop("the stop button could not be clicked ({error})"),
    tr_noop("no click for the {step} within {seconds} s"),
    tr_noop("the clicked element has no stable selector (no data-testid, aria-label, id, role or stable "
            "class); write this role by hand"),
    tr_noop("reloading the page and checking again"),
    tr_noop("{detail}; reloading the page once"),
    tr_noop("an earlier answer on account {account} was still being generated {seconds} s after clicking "
            "stop, also after a reload"),
    tr_noop("clicked stop on the page, but the answer was still being generated {seconds} s later; the page "
            "is reloaded before the next task"),
    tr_noop("input {name}: {url} is a URL; a web model attaches local files only (download it and name the "
            "file instead)"),
    tr_noop("the session cookies could not be saved ({error})"),
    tr_noop("{site}: {detail}, also after a reload; add a selector for its close button to the profile's dismiss list"),
    tr_noop("created {service} task {remote_id} ({status})"),
    tr_noop("created {service} task {remote_id}, but the task already had remote id {other} (another attempt "
            "created it first): {detail}"),
    tr_noop("{service} is full ({detail}); keeping the head of the queue, next try in {seconds} s or when "
            "one of our tasks ends"),
    tr_noop("left {service} task {remote_id} running; polling resumes on the next start"),
    tr_noop("{service} task {remote_id} was created meanwhile; polling it, not creating"),
    tr_noop("{service} rejected the inputs: {detail}"),
    tr_noop("input {name}: {service} needs a local file to upload, not a URL ({url})"),
    tr_noop("{file} was uploaded as {name} already; not uploading it again"),
    tr_noop("{task} was canceled remotely ({reason})"),
    tr_noop("{task} failed: {reason}"),
    tr_noop("{failed} of {total} downloads of {service} task {remote_id} failed ({error}: {detail}); a retry "
            "downloads them again, the task is not resubmitted"),
    tr_noop("resuming {service} task {remote_id} (a task is never created twice)"),
    tr_noop("remote cancel of {service} task {remote_id} failed ({problem}); trying again"),
    tr_noop("create was sent but its reply was lost ({problem}); {service} may have created the task, so it "
            "is not resubmitted automatically: check {where} before retrying"),
    tr_noop("no result after {seconds} s; {service} task {remote_id} is still running remotely; check {where}"),
    tr_noop("{service} task {remote_id} canceled remotely (verified)"),
    tr_noop("{service} task {remote_id}: {status}"),
    tr_noop("{service} task {remote_id}: {progress} %"),
    tr_noop("create failed ({problem}); trying again"),
    tr_noop("{n} polls in a row failed (last: {problem}); {service} task {remote_id} may still be running: "
            "check {where}"),
    tr_noop("{service} create: {detail}"),
    tr_noop("RunningHub upload of {file}: {code} {msg}{why}"),
    tr_noop("model {model} input {name} names no nodeId (inputs = { name = { nodeId = \"39\", fieldName = "
            "\"image\" } })"),
    tr_noop("outputs of RunningHub task {remote_id} taken from the v2 query"),
    tr_noop("input file {path} is gone"),
    tr_noop("v2 query for {remote_id}: {detail}"),
    tr_noop("{service}: inputs travel inside the create request"),
    tr_noop("create answered HTTP {status} without a job id at {path}; check {where} before retrying"),
    tr_noop("{service} job {remote_id}: HTTP 404 {detail} (unknown to the service, or expired)"),
    tr_noop("{service} job {remote_id} completed without a result URL"),
    tr_noop("{service} task {remote_id}"),  # inside "{task} failed: {reason}" and "... canceled remotely"
    # web lane: a login from the Accounts tab or ``accounts login`` that did not happen
    tr_noop("no login was seen before the window closed or the time ran out"),
    tr_noop("no display to open the login window on (DISPLAY is not set); log in from a desktop session, or on a "
            "virtual screen: xvfb-run -a mediaassist accounts login {account}"),
    tr_noop("the login did not survive relaunching the browser (the site may keep it only in the open page, or the "
            "session expired at once); tasks on this account would find it logged out"),
    # the store: a storage fault (the window's banner and the tray notice)
    tr_noop("disk full: free space on {folder} is {free} ({reason} writing {path}); free some space -- queued "
            "and running tasks stay queued and resume when there is room"),
    tr_noop("cannot write {path} ({reason}): the file or its folder is read-only or not yours; make both "
            "writable by you (e.g. chmod u+w), or choose another --data-dir"),
    tr_noop("{path} is damaged ({reason}); move it aside together with its -wal and -shm files to start with an "
            "empty queue, or restore a backup"),
    tr_noop("{path} is not a mediaassist database ({reason}); move it aside, or choose another --data-dir"),
    tr_noop("{path} stays locked by another process ({reason} for {seconds} s): a mediaassist process that is "
            "stopped (Ctrl-Z, a debugger) or hung holds its write lock; resume or end it -- queued and running "
            "tasks stay queued and go on once the lock is free"),
    tr_noop("{path} was {reason} while in use; nothing more was written to it. Put the file back (or move the "
            "new one aside), then start again"),
    tr_noop("cannot read or write {path} ({reason}); check the disk and the file, then start again"),
)

# A finished task's result text as the providers write it (when it is not the answer itself).
# Kept apart from TEMPLATES: an answer is matched against these few shapes only, so a chat
# answer that happens to read "success" stays the model's words.
RESULT_TEMPLATES = (
    tr_noop("{service} job {remote_id}: {n} output(s)"),
    tr_noop("RunningHub task {remote_id}: {n} output(s), {seconds} s, {coins} coins"),
    tr_noop("[{model}] {prompt} ({seconds} s)"),  # the simulated providers
)

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
MEDIA_PLACEHOLDERS = ("media", "kinds")  # their values are media.py's phrases, not texts of their own
OPERATOR_PLACEHOLDERS = ("prompt",)  # the operator's own words: shown as written
# A service's own status words (the task-API profiles' [status.states], RunningHub's taskStatus,
# matched in lower case) in "{service} task {remote_id}: {status}"; an unknown word stays as sent.
REMOTE_STATUS_WORDS = frozenset((
    tr_noop("queued"), tr_noop("submitted"), tr_noop("pending"), tr_noop("not_start"), tr_noop("create"),
    tr_noop("in_progress"), tr_noop("processing"), tr_noop("running"),
    tr_noop("completed"), tr_noop("succeeded"), tr_noop("success"),
    tr_noop("failed"), tr_noop("failure"), tr_noop("expired"),
    tr_noop("cancelled"), tr_noop("canceled"), tr_noop("cancel"),
))


def _media_phrases() -> dict[str, str]:
    return {"an image": tr("an image"), "a video": tr("a video"), "an audio": tr("an audio file")}


def translated_media(phrase: str) -> str:
    """"an image or a video" in the window's language, one kind at a time."""
    phrases = _media_phrases()
    return tr(" or ").join(phrases.get(part, part) for part in phrase.split(" or "))


def _pattern(template: str) -> re.Pattern[str]:
    parts, last = [], 0
    for match in _PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[last:match.start()]))
        parts.append(f"(?P<{match.group(1)}>.+?)")
        last = match.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts), re.DOTALL)


def _literal_length(template: str) -> int:
    return len(_PLACEHOLDER.sub("", template))


@lru_cache(maxsize=2)
def _catalogue(templates: tuple[str, ...]) -> tuple[tuple[re.Pattern[str], str], ...]:
    """Compiled once; the most specific template (most fixed text) is tried first."""
    ordered = sorted(templates, key=_literal_length, reverse=True)
    return tuple((_pattern(t), t) for t in ordered)


def compile_catalogues() -> None:
    """Compile both catalogues now (~0.2 s of regex compiling): the window calls it in a thread
    at start, so the first text it translates does not stall the loop that long."""
    _catalogue(TEMPLATES)
    _catalogue(RESULT_TEMPLATES)


def translated_reasons(text: str) -> str:
    """An import row's reasons, joined with "; " by the importer, each translated (split first:
    a template ending in a placeholder would otherwise swallow the reasons after it)."""
    return tr("; ").join(_translated_text(part) for part in text.split("; "))


def translated(text: Message | str) -> str:
    """``text`` in the window's language when it is one of the core's texts, else unchanged."""
    if isinstance(text, Message):
        return render(text, current_language())
    return _translated_text(text)


@lru_cache(maxsize=4096)
def _translated_text(text: str) -> str:
    """Cached: the detail pane and the lane panels show the same lines every tick. The cache is
    cleared on a language switch."""
    return _translated_by(TEMPLATES, text)


@lru_cache(maxsize=4096)
def translated_result(text: str) -> str:
    """A result text in the window's language when a provider wrote it, else (an answer) unchanged."""
    return _translated_by(RESULT_TEMPLATES, text)


def _translated_by(templates: tuple[str, ...], text: str) -> str:
    if not text:
        return text
    kinds = error_kind_labels()
    for pattern, template in _catalogue(templates):
        match = pattern.fullmatch(text)
        if match is not None:
            values = {name: _translated_value(name, value, kinds) for name, value in match.groupdict().items()}
            return tr(template).format(**values)
    return text


def _translated_value(name: str, value: str, kinds: dict[str, str]) -> str:
    if name in OPERATOR_PLACEHOLDERS:
        return value
    if name in MEDIA_PLACEHOLDERS:
        return translated_media(value)
    if name == "status" and value.lower() in REMOTE_STATUS_WORDS:
        return tr(value.lower())
    return kinds.get(value) or translated(value)


clear_on_language_change(_translated_text.cache_clear)
clear_on_language_change(translated_result.cache_clear)
