"""The core's texts (log lines, errors, lane reasons) reach the window translated (issue 11 item 6).

The catalogue in mediaassist/ui/core_texts.py and the source must agree both ways: every text
the core and the providers write has a template (or Chinese windows show it in English), and
every template is still written somewhere (or it is dead)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import mediaassist
from mediaassist.core import errors
from mediaassist.core.config import InputSpec
from mediaassist.core.encoding import decode_task_text
from mediaassist.core.errors import ImportFileError
from mediaassist.core.media import MediaInputError, check_input_value, split_cell
from mediaassist.core.store import fault_message
from mediaassist.ui.core_texts import RESULT_TEMPLATES, TEMPLATES, translated, translated_reasons, translated_result
from mediaassist.ui.i18n import Translations, labelled

from ..media_helpers import MAGIC

PACKAGE = Path(mediaassist.__file__).parent
WRITERS = [p for p in sorted(PACKAGE.rglob("*.py")) if p.parts[-2] in ("core", "providers", "web", "poll")
           and "demo_servers" not in p.parts] + [PACKAGE / "cli.py", PACKAGE / "runtime.py"]
# Templates put together from pieces in the source (a why + a suffix, a message + "; will retry").
COMPOSED = {
    "attempt {} failed ({}): {}; will retry",
    "RunningHub API key rejected ({} {}); fix it, then resume the lane",
    "RunningHub balance or membership exhausted ({} {}); fix it, then resume the lane",
    "RunningHub API key rejected ({} {})",
    "RunningHub balance or membership exhausted ({} {})",
    "no API key for provider {} (set api_key_env, the OS keyring or api_key)",
    "account disabled", "account needs login", "canceled by operator",
}


def normalized(node: ast.AST) -> str | None:
    """A string literal or f-string with every placeholder written as ``{}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = normalized(node.left), normalized(node.right)
        return left + right if left is not None and right is not None else None
    return None


FAULT_KINDS = {value for name, value in vars(errors).items() if name.startswith("FAULT_")}
# The import's texts the window shows: a row's reasons, a whole file's error, a file's encoding note.
IMPORT_ERRORS = ("MediaInputError", "ImportFileError")
IMPORT_FAILURES = ("ImportFailed", "Failure")


def written_texts(path: Path) -> Iterator[tuple[str, int]]:
    for text, line, _call in written_calls(path):
        yield text, line


def written_calls(path: Path) -> Iterator[tuple[str, int, str]]:
    """The message argument of ctx.log / store.log, TaskError, Requeue, pause_lane and failed LoginResult calls, of
    the import's errors (and of its process's failures) and of the reasons an import row collects."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        args: list[ast.AST] = []
        if name == "log" and isinstance(node.func, ast.Attribute) and node.args:
            args = [node.args[-1]]  # ctx.log(message), store.log(task_id, message)
        elif name == "TaskError" and len(node.args) >= 2:
            args = [node.args[1]]
        elif name == "Requeue" and node.args:
            args = [node.args[0]]
        elif name == "pause_lane" and len(node.args) >= 2:
            args = [node.args[1]]
        elif name == "LoginResult" and len(node.args) >= 2 and getattr(node.args[0], "value", None) is False:
            args = [node.args[1]]  # why a login did not happen: the account's last error, the window's message
        elif name in IMPORT_ERRORS and node.args:
            args = [node.args[0]]
        elif name in IMPORT_FAILURES and len(node.args) >= 2:
            args = [node.args[1]]  # (kind, text): why the window's import process stopped
        elif name == "append" and isinstance(node.func, ast.Attribute) and node.args and (
                getattr(node.func.value, "id", None) == "reasons"
                or getattr(node.func.value, "attr", None) == "warnings"):
            args = [node.args[0]]  # reasons.append(...) for a row, report.warnings.append(...) for the file
        args += [k.value for k in node.keywords if k.arg in ("pause_lane", "error", "reason", "last_error")]
        for arg in args:
            text = normalized(arg)
            if text is not None and text.strip("{}"):
                yield text, node.lineno, name


# A poll adapter's ``results`` returns (outputs, the result text), made here or by a helper.
RESULT_WRITERS = ("results", "_summary")


def result_texts(path: Path) -> Iterator[tuple[str, int]]:
    """The result texts a provider writes: ``TaskResult(text=...)`` and what ``results`` returns."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "TaskResult":
            values = [k.value for k in node.keywords if k.arg == "text"]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in RESULT_WRITERS:
            values = [r.value.elts[-1] if isinstance(r.value, ast.Tuple) else r.value
                      for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None]
        else:
            continue
        for value in values:
            text = normalized(value)
            if text is not None and text.strip("{}"):
                yield text, value.lineno


def test_every_result_text_a_provider_writes_has_a_template() -> None:
    shapes = {shape(t) for t in RESULT_TEMPLATES}
    written = [(path, text, line) for path in WRITERS for text, line in result_texts(path)]
    assert len(written) >= 3  # the task-API and RunningHub summaries, the simulated providers' text
    missing = [f"{path.relative_to(PACKAGE)}:{line}: {text!r}" for path, text, line in written if text not in shapes]
    assert missing == [], "add these to RESULT_TEMPLATES in mediaassist/ui/core_texts.py and translate them"


def source_corpus() -> set[str]:
    found = set()
    for path in WRITERS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = normalized(node)
            if text:
                found.update((text, shape(text)))  # shape: a msg("...") id names its placeholders
    return found


def shape(template: str) -> str:
    return re.sub(r"\{\w+\}", "{}", template)


def test_every_text_the_core_writes_has_a_template() -> None:
    shapes = {shape(t) for t in TEMPLATES}
    missing = [f"{path.relative_to(PACKAGE)}:{line}: {text!r}" for path in WRITERS
               for text, line in written_texts(path) if text not in shapes]
    assert missing == [], "add these to mediaassist/ui/core_texts.py and translate them"


def test_no_row_reason_holds_the_separator_of_a_rows_reasons() -> None:
    """The importer joins a row's reasons with "; " and the window splits them there to translate
    each: a "; " inside one reason would cut it in two untranslatable halves."""
    torn = [f"{path.relative_to(PACKAGE)}:{line}: {text!r}" for path in WRITERS
            for text, line, call in written_calls(path) if call in ("MediaInputError", "append") and "; " in text]
    assert torn == []


def test_every_template_is_still_written_somewhere() -> None:
    corpus = source_corpus() | COMPOSED
    assert [t for t in TEMPLATES + RESULT_TEMPLATES if shape(t) not in corpus] == []


@pytest.fixture
def chinese(qtbot: object) -> Iterator[None]:
    translations = Translations()
    translations.apply("zh_CN")
    yield
    translations.apply("en")


def test_texts_are_translated_with_their_values_put_back(chinese: None) -> None:
    line = translated("attempt 2 failed (provider): simulated failure; will retry")
    assert line == "第 2 次尝试失败（服务方错误）：模拟失败；将重试"
    assert translated("attempt 1 started on web:demo-a") == "第 1 次尝试已在 web:demo-a 上开始"
    assert translated("back in the queue: paused by operator") == "回到队列：已被操作员暂停"
    assert translated("the import process ended early (exit code -9)") == "导入进程意外结束（退出码 -9）"
    assert translated("an operator's own words") == "an operator's own words"  # not a core text


def test_result_texts_of_providers_are_translated_and_answers_are_not(chinese: None) -> None:
    assert translated_result("openai-videos job video_68d7: 1 output(s)") == "openai-videos 作业 video_68d7：1 个输出"
    assert translated_result("RunningHub task 19: 2 output(s), 31 s, 12 coins") == (
        "RunningHub 任务 19：2 个输出，用时 31 秒，12 个币")
    assert translated_result("[video] success (12 s)") == "[video] success（12 秒）"  # the prompt stays as written
    assert translated_result("success") == "success"  # a chat answer is the model's words
    assert translated("openai-videos task video_1 failed: generation failed (demo)") == (
        "openai-videos 任务 video_1 失败：generation failed (demo)")  # the service's words stay its own


def test_a_services_status_words_are_translated_and_unknown_ones_kept(chinese: None) -> None:
    assert translated("openai-videos task video_1: in_progress") == "openai-videos 任务 video_1：进行中"
    assert translated("RunningHub task 19: QUEUED") == "RunningHub 任务 19：排队中"
    assert translated("created newapi task 7 (not_start)") == "已创建 newapi 任务 7（未开始）"
    assert translated("newapi task 7: warming_up") == "newapi 任务 7：warming_up"
    assert translated("HTTP 503: busy") == "HTTP 503：busy"  # a status code is no status word


def test_import_reasons_are_translated_one_by_one(chinese: None) -> None:
    text = translated_reasons("column first_frame: file not found: /x/a.png; prompt is empty (model 'v' needs one)")
    assert text == "第 first_frame 列：文件不存在：/x/a.png；提示词为空（模型 'v' 需要提示词）"


def test_english_stays_as_written(qtbot: object) -> None:
    Translations().apply("en")
    assert translated("attempt 2 failed (provider): boom") == "attempt 2 failed (provider): boom"


def media_reason(value: str, base_dir: Path, spec: InputSpec, max_bytes: int | None = None) -> str:
    """The reason the importer gives for this cell (it splits the cell, then checks each value)."""
    with pytest.raises(MediaInputError) as caught:
        for part in split_cell(value, spec):
            check_input_value(part, base_dir, spec, max_bytes)
    return str(caught.value)


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
    cases = {
        media_reason("clip.mp4", tmp_path, image_only): "clip.mp4 是视频（video/mp4），但 first_frame 只接受图片",
        media_reason("frames", tmp_path, image_only): f"{tmp_path / 'frames'} 是文件夹",
        media_reason("notes.png", tmp_path, image_or_video): "notes.png 从内容看不是图片或视频文件（已知格式：",
        media_reason("big.png", tmp_path, image_only, 1000): "big.png 大小为 3,",
        media_reason("https://h/a.mp3", tmp_path, image_or_video):
            "https://h/a.mp3 从名称看是音频，但 reference 只接受图片或视频",
        media_reason("a.png|b.png", tmp_path, image_only): "给出了多个文件（|），但 first_frame 只接受一个",
    }
    for english, chinese_start in cases.items():
        shown = translated_reasons(f"column first_frame: {english}")
        assert shown.startswith("第 first_frame 列：" + chinese_start), (english, shown)
    assert "字节，超过图片的上限 1,000 字节" in translated(media_reason("big.png", tmp_path, image_only, 1000))


def test_encoding_errors_and_notes_reach_the_window_in_chinese(chinese: None) -> None:
    with pytest.raises(ImportFileError) as caught:
        decode_task_text(b"\xef\xbb\xbfok \xff\xfe", "batch.csv")
    assert translated(str(caught.value)).startswith("batch.csv：以 UTF-8 字节序标记开头，但不是 UTF-8")
    with pytest.raises(ImportFileError) as caught:
        decode_task_text(b"model,prompt\n", "batch.csv", encoding="klingon")
    assert translated(str(caught.value)) == ("batch.csv：未知编码 'klingon'（例如 utf-8、gb18030、shift_jis、big5、"
                                             "euc_kr）")
    note = decode_task_text("模型,提示詞\n寫一首詩,春天的早晨\n".encode("big5"), "batch.csv").note
    assert note is not None and translated(note).startswith("已按 Big5 读取（自动识别）")


@pytest.mark.parametrize("kind", sorted(FAULT_KINDS))
def test_every_storage_fault_reads_in_chinese_on_the_banner(chinese: None, tmp_path: Path, kind: str) -> None:
    path = tmp_path / "mediaassist.sqlite3"
    english = fault_message(kind, path, "Input/output error")
    shown = translated(english)
    assert str(path) in shown and shown != english
    assert not re.search(r"\b(?:the|and|move|choose|start|free|queued)\b", shown), shown


def test_a_label_and_its_text_are_joined_with_the_languages_colon(chinese: None) -> None:
    """The detail pane's error, the status-bar notices and the lane reasons of a blocked batch."""
    assert labelled("输入有误", translated("model retired is not in the config")) == "输入有误：配置中没有模型 retired"
