"""The core's texts (log lines, errors, lane reasons, results) reach the window in its language.

The core, the providers, the runtime and the CLI write every user-facing text as a message
(``msg("...", **params)``, mediaassist/core/messages.py); the store keeps it beside its English,
and the window renders it through the core's catalogue (mediaassist/ui/core_texts.py) -- no
English is parsed back. tests/unit/test_messages.py checks that every id is translated; here: no
call site writes a bare English sentence, and real core functions' texts read in Chinese."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

import mediaassist
from mediaassist.core import errors
from mediaassist.core.config import InputSpec, parse_config
from mediaassist.core.encoding import decode_task_text
from mediaassist.core.errors import ImportFileError
from mediaassist.core.importer import read_task_file
from mediaassist.core.media import MediaInputError, check_input_value, split_cell
from mediaassist.core.messages import msg
from mediaassist.core.money import Money, Produced
from mediaassist.core.policy import ACCOUNT_NEEDS_LOGIN
from mediaassist.core.progress import Blocked
from mediaassist.core.store import Store, TaskLog, fault_message
from mediaassist.providers.poll.adapter import status_text
from mediaassist.providers.poll.runninghub import RunningHubAdapter
from mediaassist.ui.core_texts import translated
from mediaassist.ui.i18n import Translations, labelled
from mediaassist.ui.panels import blocked_text

from ..media_helpers import MAGIC

PACKAGE = Path(mediaassist.__file__).parent
WRITERS = [p for p in sorted(PACKAGE.rglob("*.py")) if p.parts[-2] in ("core", "providers", "web", "poll")
           and "demo_servers" not in p.parts] + [PACKAGE / "cli.py", PACKAGE / "runtime.py"]
# Calls whose argument is a text an operator reads: (call name, positional index or "last").
TEXT_ARGUMENTS = {"log": "last", "TaskError": 1, "Requeue": 0, "pause_lane": 1, "set_login_state": 2,
                  "MediaInputError": 0, "ImportFileError": 0, "ConfigError": 0, "StoreUnavailable": 0,
                  "ImportFailed": 1, "Failure": 1, "LoginResult": 1}
TEXT_KEYWORDS = ("pause_lane", "text", "cancel_note", "error", "reason", "last_error")
# Lists of texts shown to the operator (a row's reasons, a file's warnings, an account check).
TEXT_LISTS = ("reasons", "warnings", "problems", "notes")


def is_english_literal(node: ast.AST) -> bool:
    """A plain string or an f-string: a sentence only English readers could read."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return is_english_literal(node.left) or is_english_literal(node.right)
    return (isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(node.value.strip())) or \
        isinstance(node, ast.JoinedStr)


def text_arguments(tree: ast.AST) -> Iterator[ast.AST]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        where = TEXT_ARGUMENTS.get(name)
        if where == "last" and isinstance(node.func, ast.Attribute) and node.args:
            yield node.args[-1]
        elif isinstance(where, int) and len(node.args) > where:
            yield node.args[where]
        elif name == "append" and isinstance(node.func, ast.Attribute) and node.args and (
                getattr(node.func.value, "id", None) in TEXT_LISTS or getattr(node.func.value, "attr", None)
                in TEXT_LISTS):
            yield node.args[0]
        if name in TEXT_ARGUMENTS or name == "TaskResult":
            yield from (k.value for k in node.keywords if k.arg in TEXT_KEYWORDS)


def test_no_core_text_is_written_as_a_bare_english_sentence() -> None:
    """Each text an operator reads is a message with an id the catalogue translates; an f-string
    there would reach a Chinese window (and the CLI under a zh_* locale) in English."""
    found = []
    for path in WRITERS:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(PACKAGE)}:{node.lineno}" for node in text_arguments(tree)
                  if is_english_literal(node)]
    assert found == [], "write these as msg(\"...\", name=value) (docs/development-messages.md)"


def test_the_scan_finds_an_english_sentence() -> None:
    tree = ast.parse('ctx.log(f"uploaded {n} files")\nraise TaskError(kind, "boom")\nreasons.append(msg("ok"))')
    assert [is_english_literal(node) for node in text_arguments(tree)] == [True, True, False]


def test_a_stored_log_line_reads_in_chinese_with_its_values(chinese: None, store: Store) -> None:
    line = msg("attempt {attempt} failed ({kind}): {message}; will retry", attempt=2,
               kind=errors.KIND_TEXTS[errors.ErrorKind.PROVIDER], message=msg("simulated failure"))
    store.log("t1", line)
    store.log("t1", msg("back in the queue: {reason}", reason=msg("paused by operator")))
    first, second = store.logs("t1")
    assert first.line == "attempt 2 failed (provider): simulated failure; will retry"  # English for every reader
    assert translated(first.text) == "第 2 次尝试失败（服务方错误）：模拟失败；将重试"
    assert translated(second.text) == "回到队列：已被操作员暂停"


def test_why_a_batch_waits_uses_the_full_width_colon_with_no_space_after_it(chinese: None) -> None:
    login = blocked_text(Blocked("web:acct-a", 4, (("web:acct-a", ACCOUNT_NEEDS_LOGIN),)))
    assert "4 个网页任务在等待：账号 acct-a 需要登录" in login
    paused = blocked_text(Blocked("poll:rh", 3, (("poll:rh", msg("paused by operator")),)))
    assert "3 个轮询任务在等待：poll:rh：已被操作员暂停" in paused and "： " not in paused


def test_a_row_of_an_older_version_shows_its_english_as_it_is(chinese: None, store: Store) -> None:
    store.db.execute_sql('INSERT INTO "task_log" (task_id, at, line) VALUES (?, ?, ?)', ("t1", 0.0, "success"))
    (row,) = store.logs("t1")
    assert isinstance(row, TaskLog) and translated(row.text) == "success"  # no message kept: not guessed at


def test_result_texts_of_providers_are_translated_and_answers_are_not(chinese: None) -> None:
    items = [{"consumeCoins": 12, "taskCostTime": 31}, {}]
    charged = RunningHubAdapter._summary("19", Produced(reported=Money(Decimal(12), "coins")), items)
    assert translated(charged) == "RunningHub 任务 19：2 个输出，用时 31 秒，12 个币"
    assert translated(RunningHubAdapter._summary("19", Produced(), items)) == (
        "RunningHub 任务 19：2 个输出，用时 31 秒，未报告扣费")
    assert translated("success") == "success"  # a chat answer is the model's words
    failed = msg("{task} failed: {reason}", task=msg("{service} task {remote_id}", service="openai-videos",
                                                     remote_id="video_1"), reason="generation failed (demo)")
    assert translated(failed) == "openai-videos 任务 video_1 失败：generation failed (demo)"  # the service's words


def test_a_services_status_words_are_translated_and_unknown_ones_kept(chinese: None) -> None:
    def line(word: str) -> str:
        return translated(msg("{service} task {remote_id}: {status}", service="openai-videos", remote_id="v1",
                              status=status_text(word)))

    assert line("in_progress") == "openai-videos 任务 v1：进行中"
    assert line("QUEUED") == "openai-videos 任务 v1：排队中"
    assert line("warming_up") == "openai-videos 任务 v1：warming_up"


def test_import_reasons_are_translated_one_by_one(chinese: None, tmp_path: Path) -> None:
    config = parse_config({"providers": [{"name": "sim", "kind": "api", "type": "simulated"}],
                           "models": [{"name": "v", "kind": "api", "provider": "sim", "inputs": ["first_frame"]}]})
    tasks = tmp_path / "t.csv"
    tasks.write_text("model,prompt,first_frame\nv,,/x/a.png\nnope,hi,\n", encoding="utf-8")
    first, second = read_task_file(tasks, config).errors
    assert translated(first.text) == ("第 2 行：提示词为空（模型 'v' 需要提示词）；"
                                      "第 first_frame 列：文件不存在：/x/a.png")
    assert translated(second.text) == "第 3 行：未知模型 'nope'（已知模型：v）"


def test_english_stays_as_written(qtbot: object) -> None:
    Translations().apply("en")
    assert translated(msg("attempt {attempt} started on {lane}", attempt=2, lane="api:x")) == (
        "attempt 2 started on api:x")


def media_reason(value: str, base_dir: Path, spec: InputSpec, max_bytes: int | None = None) -> str:
    """The reason the importer gives for this cell (it splits the cell, then checks each value)."""
    with pytest.raises(MediaInputError) as caught:
        for part in split_cell(value, spec):
            check_input_value(part, base_dir, spec, max_bytes)
    return translated(msg("column {column}: {reason}", column="first_frame", reason=caught.value.message))


def test_rarer_import_reasons_reach_the_window_in_chinese(chinese: None, tmp_path: Path) -> None:
    """Written by the real core functions, so a reworded core text fails here, not on an operator's screen."""
    image_only = InputSpec("first_frame", media=("image",))
    image_or_video = InputSpec("reference", media=("image", "video"))
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(MAGIC["video/mp4"])
    big = tmp_path / "big.png"
    big.write_bytes(MAGIC["image/png"] + bytes(3000))
    (tmp_path / "frames").mkdir()
    (tmp_path / "notes.png").write_text("plain text")
    cases = [
        ("clip.mp4", image_only, "clip.mp4 是视频（video/mp4），但 first_frame 只接受图片"),
        ("frames", image_only, f"{tmp_path / 'frames'} 是文件夹"),
        ("notes.png", image_or_video, "notes.png 从内容看不是图片或视频文件（已知格式："),
        ("https://h/a.mp3", image_or_video, "https://h/a.mp3 从名称看是音频，但 reference 只接受图片或视频"),
        ("a.png|b.png", image_only, "给出了多个文件（|），但 first_frame 只接受一个"),
    ]
    for value, spec, chinese_start in cases:
        shown = media_reason(value, tmp_path, spec)
        assert shown.startswith("第 first_frame 列：" + chinese_start), (value, shown)
    too_big = media_reason("big.png", tmp_path, image_only, 1000)
    assert re.search(r"big.png 大小为 3,\d{3} 字节，超过图片的上限 1,000 字节", too_big), too_big


def test_encoding_errors_and_notes_reach_the_window_in_chinese(chinese: None) -> None:
    with pytest.raises(ImportFileError) as caught:
        decode_task_text(b"\xef\xbb\xbfok \xff\xfe", "batch.csv")
    assert translated(caught.value.message).startswith("batch.csv：以 UTF-8 字节序标记开头，但不是 UTF-8")
    with pytest.raises(ImportFileError) as caught:
        decode_task_text(b"model,prompt\n", "batch.csv", encoding="klingon")
    assert translated(caught.value.message) == ("batch.csv：未知编码 'klingon'（例如 utf-8、gb18030、shift_jis、big5、"
                                                "euc_kr）")
    note = decode_task_text("模型,提示詞\n寫一首詩,春天的早晨\n".encode("big5"), "batch.csv").note
    assert note is not None and translated(note).startswith("已按 Big5 读取（自动识别）")


FAULT_KINDS = {value for name, value in vars(errors).items() if name.startswith("FAULT_")}


@pytest.mark.parametrize("kind", sorted(FAULT_KINDS))
def test_every_storage_fault_reads_in_chinese_on_the_banner(chinese: None, tmp_path: Path, kind: str) -> None:
    path = tmp_path / "mediaassist.sqlite3"
    message = fault_message(kind, path, "Input/output error")
    shown = translated(message)
    assert str(path) in shown and shown != str(message)
    assert not re.search(r"\b(?:the|and|move|choose|start|free|queued)\b", shown), shown


def test_a_label_and_its_text_are_joined_with_the_languages_colon(chinese: None) -> None:
    """The detail pane's error, the status-bar notices and the lane reasons of a blocked batch."""
    shown = translated(msg("model {model} is not in the config", model="retired"))
    assert labelled("输入有误", shown) == "输入有误：配置中没有模型 retired"
