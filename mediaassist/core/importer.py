"""Task files: CSV, XLSX, JSON, JSONL and TXT into validated ``NewTask`` rows.

A bad row becomes a ``RowError`` (row number as the operator sees it, and why) while the good rows
still import. A file that cannot be read at all raises ``ImportFileError`` and yields nothing, so a
half-read file is never enqueued.

Besides the fixed columns, each model's media inputs (``inputs`` in the config) are columns: a
cell names a local file (relative to the task file's folder) or an http(s) URL, checked here by
content and size (see ``core/media.py``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import secrets
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mediaassist.core.config import TASK_COLUMNS, AppConfig, InputSpec, ModelConfig, did_you_mean
from mediaassist.core.encoding import decode_task_text
from mediaassist.core.errors import ImportFileError
from mediaassist.core.hours import parse_not_before
from mediaassist.core.media import LIST_SEPARATOR, MediaCache, MediaInputError, check_input_value, split_cell
from mediaassist.core.messages import Message, each_of, msg, verbatim
from mediaassist.core.store import NewTask

FORMATS = {".csv": "csv", ".xlsx": "xlsx", ".json": "json", ".jsonl": "jsonl", ".txt": "txt"}
COLUMNS = TASK_COLUMNS
TEXT_COLUMNS = ("model", "prompt", "task_id", "account", "system_prompt")
MAX_TASK_ID = 64
MAX_PROMPT = 100_000
PRIORITY_RANGE = (-1_000_000, 1_000_000)
CSV_DELIMITERS = (",", ";", "\t")

# A row as read from the file: (operator-visible row number, column -> raw value).
RawRow = tuple[int, dict[str, Any]]
# A defect a reader found in one row (a JSONL line that is not JSON), carried to validation
# under a key no column can have.
_ROW_PROBLEM = "\0problem"


@dataclass(frozen=True)
class _BadCell:
    """A cell whose value cannot be used (an XLSX formula nobody calculated); the reason says why."""

    reason: Message


@dataclass(frozen=True)
class _Source:
    path: Path
    columns: frozenset[str]  # the fixed columns and every configured model's input names
    encoding: str | None  # --encoding, or None to detect


@dataclass(frozen=True)
class RowError:
    row: int
    reason: str  # in English; ``message`` renders it in the reader's language
    message: Message | None = field(default=None, compare=False)

    @classmethod
    def of(cls, row: int, reasons: list[Message]) -> RowError:
        message = each_of(reasons)
        return cls(row, str(message), message)

    @property
    def text(self) -> Message:
        """"row 3: why" as a message."""
        return msg("row {row}: {reason}", row=self.row, reason=self.message or verbatim(self.reason))

    def __str__(self) -> str:
        return str(self.text)


@dataclass
class ImportReport:
    source: Path
    format: str
    tasks: list[NewTask] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    total_rows: int = 0
    warnings: list[Message] = field(default_factory=list)


def new_batch_id(source: Path) -> str:
    """``<file stem>-<UTC time>-<8 hex>``: readable in the task table, unique across imports."""
    stem = re.sub(r"[^\w.-]+", "-", source.stem).strip("-")[:40] or "batch"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stem}-{stamp}-{secrets.token_hex(4)}"


def derive_missing_ids(report: ImportReport) -> None:
    """Rows without a task_id get one derived from the file's bytes, their model and their
    position, so running the same file again (say, after a crash) resumes it instead of
    duplicating it -- while the same prompts sent to another model are new tasks."""
    if all(task.task_id for task in report.tasks):
        return
    content = report.source.read_bytes()
    stem = "".join(c for c in report.source.stem if c.isalnum() or c in "-_")[:24] or "task"
    digests: dict[str, str] = {}  # per model: hashing the whole file per row is quadratic
    for position, task in enumerate(report.tasks, start=1):
        if not task.task_id:
            if task.model not in digests:
                digests[task.model] = hashlib.sha1(content + b"\0" + task.model.encode()).hexdigest()[:10]
            task.task_id = f"{stem}-{digests[task.model]}-{position:05d}"


def read_task_file(path: Path, config: AppConfig, default_model: str | None = None,
                   encoding: str | None = None, fan_out: list[str] | None = None) -> ImportReport:
    """Read and validate one task file; raises ``ImportFileError`` if it cannot be read at all.

    ``default_model`` (``--model``) is the model of TXT lines and of rows whose model cell is empty;
    ``encoding`` (``--encoding``) names a text file's encoding instead of detecting it;
    ``fan_out`` (``--models a,b``) runs every row without a ``models`` cell on each of these models.
    """
    path = Path(path)
    fmt = _format_of(path)
    for name in ([default_model] if default_model is not None else []) + list(fan_out or []):
        if config.model(name) is None:
            raise ImportFileError(msg("{path}: {reason}", path=path, reason=_unknown_model(name, config)))
    if fan_out:
        default_model = default_model or fan_out[0]
    if fmt == "txt" and default_model is None:
        raise ImportFileError(msg("{path}: a TXT file holds only prompts; name the model (--model NAME)", path=path))
    report = ImportReport(source=path, format=fmt)
    input_names = {name for model in config.models for name in model.inputs}
    # the columns the naming templates name ({col:NAME}) are kept for naming, not ignored
    source = _Source(path, frozenset(COLUMNS) | input_names | config.outputs.columns, encoding)
    rows = _READERS[fmt](source, report)
    if not rows:
        raise ImportFileError(msg("{path}: the file holds no tasks", path=path))
    if default_model is None and not any("model" in values or "models" in values for _, values in rows):
        raise ImportFileError(msg("{path}: no model given; add a 'model' column or name a default model (--model "
                                  "NAME)",
                                  path=path))
    _Validator(config, default_model, path.resolve().parent, fan_out).run(rows, report)
    return report


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".xls":
        raise ImportFileError(msg("{path}: old .xls workbooks are not supported; save it as .xlsx or CSV", path=path))
    if suffix not in FORMATS:
        raise ImportFileError(msg("{path}: unsupported file type {suffix} (supported: {formats})",
                                  path=path, suffix=repr(suffix or '(none)'), formats=', '.join(FORMATS)))
    return FORMATS[suffix]


def _once_each(reasons: list[Message]) -> list[Message]:
    """The reasons without repeats (a fanned-out row meets its cells' problems once per model)."""
    unique: list[Message] = []
    for reason in reasons:
        if reason not in unique:
            unique.append(reason)
    return unique


def _unknown_model(name: str, config: AppConfig) -> Message:
    """unknown model 'demo-writr'; did you mean "demo-writer"? (known models: ...) -- the likely
    one first: in a long list of models a one-letter typo is easy to miss."""
    hint = did_you_mean(name, [m.name for m in config.models])
    return msg("unknown model {model}{hint} ({known})", model=repr(name), hint=hint, known=_known_models(config))


def _known_models(config: AppConfig) -> Message:
    names = ", ".join(m.name for m in config.models)
    return msg("known models: {names}", names=names) if names else msg("no models are configured")


# --- reading: each reader returns the non-blank rows and notes unknown columns ----------------

def _read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ImportFileError(msg("{path}: file not found", path=path)) from None
    except OSError as exc:
        raise ImportFileError(msg("{path}: cannot read the file ({reason})",
                                  path=path, reason=exc.strerror or exc)) from None
    if not data.strip():
        raise ImportFileError(msg("{path}: the file is empty", path=path))
    return data


def _read_text(source: _Source, report: ImportReport) -> str:
    """UTF-8 (with or without BOM), UTF-16 with BOM, or a legacy CJK code page that the text's
    characters make believable (``core/encoding.py``); ``--encoding`` overrides the guess."""
    decoded = decode_task_text(_read_bytes(source.path), str(source.path), source.encoding)
    if "\0" in decoded.text:  # a binary file, or UTF-16 without its BOM
        raise ImportFileError(msg("{path}: not readable as text (it holds NUL bytes); save it as UTF-8",
                                  path=source.path))
    if decoded.note:
        report.warnings.append(decoded.note)
    # Excel puts CRLF between rows but a bare LF inside multi-line cells; keep one style.
    return decoded.text.replace("\r\n", "\n")


def _read_csv(source: _Source, report: ImportReport) -> list[RawRow]:
    text = _read_text(source, report)
    first_line = next((line for line in io.StringIO(text) if line.strip()), "")  # not a list of every line
    delimiter = max(CSV_DELIMITERS, key=first_line.count)
    # No cell can be longer than the file: lift the csv module's 128 KiB field limit so a long
    # prompt is that row's error (too long), not the whole file's.
    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
    # strict: an unclosed quote is an error, not a cell that silently swallows the rest of the file
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    records: list[list[str]] = []
    try:
        # A loop, not list(reader): one C call over 100,000 rows would hold the GIL -- and so the
        # window's loop, while this runs in a worker thread -- for the whole parse (~0.3-0.5 s).
        for record in reader:
            records.append(record)
    except csv.Error as exc:
        raise ImportFileError(msg("{path}: not a valid CSV file (line {line}: {detail})",
                                  path=source.path, line=reader.line_num, detail=exc)) from None
    return _table_rows(source, enumerate(records, start=1), report)


def _read_xlsx(source: _Source, report: ImportReport) -> list[RawRow]:
    _read_bytes(source.path)  # same messages for missing/empty files as the other formats
    try:
        values = _xlsx_records(source.path, data_only=True)
        # A formula with no saved result reads as an empty cell; the formulas pass tells them apart.
        formulas = _xlsx_records(source.path, data_only=False) if _has_formulas(source.path) else values
        # Both passes read the same sheet XML, so rows and cells pair one to one.
        records = [(number, [_uncalculated(value, formula) for value, formula in zip(cells, formula_cells,
                                                                                     strict=True)])
                   for (number, cells), (_, formula_cells) in zip(values, formulas, strict=True)]
    except Exception as exc:  # a damaged workbook can fail anywhere inside openpyxl's XML parsing
        raise ImportFileError(msg("{path}: not a readable XLSX workbook ({detail})",
                                  path=source.path, detail=exc)) from None
    return _table_rows(source, iter(records), report)


def _xlsx_records(path: Path, data_only: bool) -> list[tuple[int, tuple[Any, ...]]]:
    from openpyxl import load_workbook  # imported here: slow to load, and only XLSX needs it

    # openpyxl warns about styles and extensions it ignores; they do not affect cell values.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        workbook = load_workbook(path, read_only=True, data_only=data_only)
        try:
            return list(enumerate(workbook.worksheets[0].iter_rows(values_only=True), start=1))
        finally:
            workbook.close()


def _has_formulas(path: Path) -> bool:
    """Whether any worksheet holds a formula element -- most task workbooks have none, and then
    the second (formulas) pass is skipped."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        sheets = (archive.read(name) for name in archive.namelist() if name.startswith("xl/worksheets/"))
        return any(b"<f>" in xml or b"<f " in xml for xml in sheets)


def _uncalculated(value: Any, formula: Any) -> Any:
    if value is None and isinstance(formula, str) and formula.startswith("="):
        return _BadCell(msg("holds the formula {formula} with no saved value (the program that wrote the file did "
                            "not calculate it); open and save it in Excel, or paste it as values",
                            formula=formula[:40]))
    return value


def _table_rows(source: _Source, records: Iterator[tuple[int, Any]], report: ImportReport) -> list[RawRow]:
    """Header = first non-blank row; later rows keep their spreadsheet row number."""
    header: list[str] | None = None
    rows: list[RawRow] = []
    for number, cells in records:
        if all(_is_blank(cell) for cell in cells):
            continue
        if header is None:
            header = _header(source, cells, report)
            continue
        # not strict: a CSV row may be shorter or longer than the header (missing cells are blank)
        rows.append((number, {name: cell for name, cell in zip(header, cells, strict=False)
                              if name in source.columns and not _is_blank(cell)}))
    return rows


def _header(source: _Source, cells: Any, report: ImportReport) -> list[str]:
    names = [str(cell).strip().lower() if cell is not None else "" for cell in cells]
    for name in source.columns:
        if names.count(name) > 1:
            raise ImportFileError(msg("{path}: column {column} appears more than once in the header",
                                      path=source.path, column=repr(name)))
    _warn_unknown(report, {name for name in names if name}, source.columns)
    return names


def _read_json(source: _Source, report: ImportReport) -> list[RawRow]:
    path = source.path
    try:
        data = json.loads(_read_text(source, report), parse_constant=_NonFinite)
    except json.JSONDecodeError as exc:
        raise ImportFileError(msg("{path}: not valid JSON ({detail})", path=path, detail=exc)) from None
    except RecursionError:  # nesting deeper than Python's parser can follow
        raise ImportFileError(msg("{path}: JSON nested too deeply to be a task list", path=path)) from None
    if not isinstance(data, list) or (data and not any(isinstance(item, dict) for item in data)):
        raise ImportFileError(msg("{path}: JSON must be a list of objects, one per task", path=path))
    return _object_rows(source, enumerate(data, start=1), report)


def _read_jsonl(source: _Source, report: ImportReport) -> list[RawRow]:
    items: list[tuple[int, Any]] = []
    for number, line in enumerate(_read_text(source, report).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append((number, json.loads(line, parse_constant=_NonFinite)))
        except json.JSONDecodeError as exc:
            items.append((number, _BadLine(msg("not valid JSON ({msg})", msg=exc.msg))))
        except RecursionError:
            items.append((number, _BadLine(msg("JSON nested too deeply"))))
    if not any(isinstance(item, dict) for _, item in items):
        raise ImportFileError(msg("{path}: JSONL must hold one JSON object per line", path=source.path))
    return _object_rows(source, iter(items), report)


@dataclass(frozen=True)
class _BadLine:
    reason: Message


@dataclass(frozen=True)
class _NonFinite:
    """``NaN``, ``Infinity`` or ``-Infinity`` in a JSON file: Python's parser takes them, but JSON
    has no such values (a prompt would be stored and sent as 'nan')."""
    literal: str


def _non_finite_in(value: Any) -> str | None:
    """The first NaN/Infinity literal anywhere inside a parsed value, or None."""
    if isinstance(value, _NonFinite):
        return value.literal
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return next((found for child in children if (found := _non_finite_in(child)) is not None), None)


def _non_finite_reason(literal: str) -> Message:
    return msg("{literal} is not a JSON value (JSON has no NaN or Infinity): write a number or a text in quotes",
               literal=literal)


def _object_rows(source: _Source, items: Iterator[tuple[int, Any]], report: ImportReport) -> list[RawRow]:
    """Keys are matched like CSV headers; a non-object item becomes that row's error."""
    rows: list[RawRow] = []
    seen_keys: set[str] = set()
    for number, item in items:
        if not isinstance(item, dict):
            reason = item.reason if isinstance(item, _BadLine) else msg("item is not a JSON object")
            rows.append((number, {_ROW_PROBLEM: reason}))
            continue
        values: dict[str, Any] = {}
        for key, value in item.items():
            name = str(key).strip().lower()
            seen_keys.add(name)
            if name in source.columns and not _is_blank(value):
                values[name] = value
        rows.append((number, values))
    _warn_unknown(report, seen_keys, source.columns)
    return rows


def _read_txt(source: _Source, report: ImportReport) -> list[RawRow]:
    return [(number, {"prompt": line})
            for number, line in enumerate(_read_text(source, report).splitlines(), start=1) if line.strip()]


_READERS = {"csv": _read_csv, "xlsx": _read_xlsx, "json": _read_json, "jsonl": _read_jsonl,
            "txt": _read_txt}


def _warn_unknown(report: ImportReport, names: set[str], known: frozenset[str]) -> None:
    unknown = sorted(names - known)
    if unknown:
        inputs = sorted(known - set(COLUMNS))
        report.warnings.append(msg("ignored unknown column(s): {columns} (known: {known})",
                                   columns=', '.join(unknown), known=', '.join(COLUMNS + tuple(inputs))))


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


# --- validation: one RowError per bad row, all its reasons together ----------------------------

class _Validator:
    def __init__(self, config: AppConfig, default_model: str | None, base_dir: Path,
                 fan_out: list[str] | None = None) -> None:
        self.config = config
        self.default_model = default_model
        self.fan_out = fan_out
        self.base_dir = base_dir  # relative input paths are relative to the task file
        self.first_row_of_id: dict[str, int] = {}
        self.media_cache = MediaCache()  # a frame named by many rows is sniffed and hashed once

    def run(self, rows: list[RawRow], report: ImportReport) -> None:
        report.total_rows = len(rows)
        for number, values in rows:
            reasons: list[Message] = []
            models = self.models(values, reasons)
            if models is None:
                tasks = [self.task(number, values, reasons)]
            else:  # one task per model, all from this row
                tasks = [self.task(number, {**values, "model": model}, reasons, fan_out=True) for model in models]
            if reasons or None in tasks:
                report.errors.append(RowError.of(number, _once_each(reasons)))
            else:
                report.tasks.extend(task for task in tasks if task is not None)

    def models(self, values: dict[str, Any], reasons: list[Message]) -> list[str] | None:
        """The models a row fans out to (its ``models`` cell, else ``--models``), or None."""
        raw = values.get("models")
        if raw is None:
            return list(self.fan_out) if self.fan_out else None
        cells = [str(item) for item in raw] if isinstance(raw, list) else str(raw).replace(",", LIST_SEPARATOR).split(
            LIST_SEPARATOR)
        names = [name.strip() for name in cells]
        names = list(dict.fromkeys(name for name in names if name))
        if not names:
            reasons.append(msg("models names no model (write them as a|b|c)"))
        return names

    def task(self, number: int, values: dict[str, Any], reasons: list[Message], fan_out: bool = False
             ) -> NewTask | None:
        if _ROW_PROBLEM in values:
            reasons.append(values[_ROW_PROBLEM])
            return None
        reasons.extend(msg("column {column}: {reason}", column=name, reason=value.reason)
                       for name, value in values.items() if isinstance(value, _BadCell))
        reasons.extend(msg("column {column}: {reason}", column=name, reason=_non_finite_reason(literal))
                       for name, value in values.items() if (literal := _non_finite_in(value)) is not None)
        reasons.extend(msg("{name} must be text, not {type}", name=name, type=_json_type(values[name]))
                       for name in TEXT_COLUMNS
                       if isinstance(values.get(name), (list, dict, bool)))
        if reasons:
            return None
        task_id = self.task_id(number, values.get("task_id"), reasons, suffix=values.get("model") if fan_out else None)
        params = _params(values.get("params"), reasons)
        priority = _priority(values.get("priority"), reasons)
        not_before = _not_before(values.get("not_before"), reasons)
        system_prompt = _text(values.get("system_prompt"))
        prompt = _text(values.get("prompt")) or ""
        if len(prompt) > MAX_PROMPT:
            reasons.append(msg("prompt has {n} characters (at most {limit})",
                               n=format(len(prompt), ","), limit=format(MAX_PROMPT, ",")))
        model = self.model(values.get("model"), reasons)
        if model is None:
            return None
        if not prompt and _needs_prompt(model):
            reasons.append(msg("prompt is empty (model {model} needs one)", model=repr(model.name)))
        account = self.account(values.get("account"), model, reasons)
        inputs = self.inputs(values, model, reasons)
        cells = {name: str(_text(values[name])) for name in self.config.outputs.columns
                 if _text(values.get(name)) is not None}
        return NewTask(model=model.name, model_kind=model.kind, route=model.route, prompt=prompt,
                       task_id=task_id, account=account, system_prompt=system_prompt,
                       params=params, priority=priority, inputs=inputs, not_before=not_before, row=number,
                       group=f"row-{number}", cells=cells)

    def inputs(self, values: dict[str, Any], model: ModelConfig,
               reasons: list[Message]) -> dict[str, list[dict[str, Any]]]:
        """Each of the model's inputs checked; a filled input column the model lacks is an error
        too (the operator meant that file to be used)."""
        for name in values:
            if name not in COLUMNS and name not in model.inputs and name not in self.config.outputs.columns:
                takes = ", ".join(model.inputs) or "none"
                reasons.append(msg("column {column}: model {model} takes no input {name} (its inputs: {inputs})",
                                   column=name, model=repr(model.name), name=repr(name), inputs=takes))
        provider = self.config.provider(model.provider) if model.provider else None
        max_bytes = provider.max_upload_bytes if provider else None
        checked: dict[str, list[dict[str, Any]]] = {}
        for name, spec in model.inputs.items():
            try:
                entries = self.input_entries(values.get(name), spec, max_bytes)
            except MediaInputError as exc:
                reasons.append(msg("column {column}: {reason}", column=name, reason=exc.message))
                continue
            if entries:
                checked[name] = entries
            elif spec.required:
                reasons.append(msg("column {column}: required by model {model} (a file path or URL)",
                                   column=name, model=repr(model.name)))
        return checked

    def input_entries(self, raw: Any, spec: InputSpec, max_bytes: int | None) -> list[dict[str, Any]]:
        if raw is None:
            return []
        if isinstance(raw, list) and spec.multiple and all(isinstance(item, str) for item in raw):
            values = [item.strip() for item in raw if item.strip()]  # a JSON list of files
        elif isinstance(raw, str):
            values = split_cell(raw, spec)
        else:
            raise MediaInputError(msg("must be a file path or URL, not {type}", type=_json_type(raw)))
        return [check_input_value(value, self.base_dir, spec, max_bytes, self.media_cache) for value in values]

    def model(self, raw: Any, reasons: list[Message]) -> ModelConfig | None:
        name = _text(raw) or self.default_model
        if name is None:
            reasons.append(msg("model is empty and no default model was given"))
            return None
        model = self.config.model(name)
        if model is None:
            reasons.append(_unknown_model(name, self.config))
        return model

    def task_id(self, number: int, raw: Any, reasons: list[Message], suffix: Any = None) -> str | None:
        task_id = _text(raw)
        if task_id is None:
            return None
        if suffix is not None:  # a row fanned out: one id per model
            task_id = f"{task_id}-{suffix}"
        if len(task_id) > MAX_TASK_ID:
            reasons.append(msg("task_id is {n} characters long (at most {limit})", n=len(task_id), limit=MAX_TASK_ID))
        first = self.first_row_of_id.setdefault(task_id, number)
        if first != number:
            reasons.append(msg("duplicate task_id {task_id} (first on row {row})", task_id=repr(task_id), row=first))
        return task_id

    def account(self, raw: Any, model: ModelConfig, reasons: list[Message]) -> str | None:
        name = _text(raw)
        if name is None:
            return None
        if model.kind != "web":
            reasons.append(msg("account {account} given for {kind} model {model} (only web models run on an "
                               "account)",
                               account=repr(name), kind=model.kind, model=repr(model.name)))
            return None
        account = self.config.account(name)
        if account is None or account.site != model.site:
            site_accounts = ", ".join(a.name for a in self.config.accounts if a.site == model.site) or "none"
            runs_on = msg("model {model} runs on site {site} (accounts: {accounts})",
                          model=repr(model.name), site=repr(model.site), accounts=site_accounts)
            # no "; " inside: that joins a row's reasons
            reasons.append(msg("account {account} is not configured, but {runs_on}",
                               account=repr(name), runs_on=runs_on) if account is None else
                           msg("account {account} belongs to site {other}, but {runs_on}",
                               account=repr(name), other=repr(account.site), runs_on=runs_on))
        return name


def _json_type(value: Any) -> Message:
    if isinstance(value, bool):
        return msg("true/false")
    if isinstance(value, list):
        return msg("a list")
    if isinstance(value, dict):
        return msg("an object")
    return verbatim(type(value).__name__)


def _needs_prompt(model: ModelConfig) -> bool:
    """A poll workflow runs on its own node values unless it maps the prompt into a node."""
    return model.kind != "poll" or "prompt_node_id" in model.options


def _text(value: Any) -> str | None:
    """A cell as text: ``None`` when blank; Excel's whole floats (``7.0``) lose the ``.0``."""
    if _is_blank(value):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _params(raw: Any, reasons: list[Message]) -> dict[str, Any]:
    if raw is None or isinstance(raw, dict):
        return raw or {}
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw, parse_constant=_NonFinite)
        except (json.JSONDecodeError, RecursionError):
            reasons.append(msg("params is not valid JSON"))
            return {}
        if (literal := _non_finite_in(parsed)) is not None:
            reasons.append(msg("column {column}: {reason}", column="params", reason=_non_finite_reason(literal)))
            return {}
        if isinstance(parsed, dict):
            return parsed
    reasons.append(msg("params is not a JSON object"))
    return {}


def _not_before(raw: Any, reasons: list[Message]) -> float:
    """The ``not_before`` cell as epoch seconds (0: at once)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return 0.0
    if isinstance(raw, datetime):  # an XLSX date cell: local time
        return raw.timestamp()
    try:
        return parse_not_before(str(raw), datetime.now()).timestamp()
    except ValueError:
        reasons.append(msg("not_before {value} is not a time (allowed: 2026-12-03 23:00, an ISO 8601 time with its "
                           "offset, or 23:00 for the next time the clock shows it)", value=repr(str(raw))))
        return 0.0


def _priority(raw: Any, reasons: list[Message]) -> int:
    if raw is None:
        return 0
    value: int | None = None
    if isinstance(raw, int) and not isinstance(raw, bool):
        value = raw
    elif isinstance(raw, float) and raw.is_integer():
        value = int(raw)
    elif isinstance(raw, str) and re.fullmatch(r"[+-]?\d+", raw.strip()):
        value = int(raw.strip())
    if value is None:
        reasons.append(msg("priority {value} is not an integer", value=repr(raw)))
        return 0
    if not PRIORITY_RANGE[0] <= value <= PRIORITY_RANGE[1]:
        reasons.append(msg("priority {value} is out of range ({low}..{high})",
                           value=value, low=PRIORITY_RANGE[0], high=PRIORITY_RANGE[1]))
        return 0
    return value
