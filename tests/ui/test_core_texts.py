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
from mediaassist.ui.core_texts import TEMPLATES, translated, translated_reasons
from mediaassist.ui.i18n import Translations

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


def written_texts(path: Path) -> Iterator[tuple[str, int]]:
    """The message argument of ctx.log / store.log, TaskError, Requeue and pause_lane calls."""
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
        args += [k.value for k in node.keywords if k.arg in ("pause_lane", "error", "reason", "last_error")]
        for arg in args:
            text = normalized(arg)
            if text is not None and text.strip("{}"):
                yield text, node.lineno


def source_corpus() -> set[str]:
    found = set()
    for path in WRITERS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = normalized(node)
            if text:
                found.add(text)
    return found


def shape(template: str) -> str:
    return re.sub(r"\{\w+\}", "{}", template)


def test_every_text_the_core_writes_has_a_template() -> None:
    shapes = {shape(t) for t in TEMPLATES}
    missing = [f"{path.relative_to(PACKAGE)}:{line}: {text!r}" for path in WRITERS
               for text, line in written_texts(path) if text not in shapes]
    assert missing == [], "add these to mediaassist/ui/core_texts.py and translate them"


def test_every_template_is_still_written_somewhere() -> None:
    corpus = source_corpus() | COMPOSED
    assert [t for t in TEMPLATES if shape(t) not in corpus] == []


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
    assert translated("an operator's own words") == "an operator's own words"  # not a core text


def test_import_reasons_are_translated_one_by_one(chinese: None) -> None:
    text = translated_reasons("column first_frame: file not found: /x/a.png; prompt is empty (model 'v' needs one)")
    assert text == "第 first_frame 列：文件不存在：/x/a.png；提示词为空（模型 'v' 需要提示词）"


def test_english_stays_as_written(qtbot: object) -> None:
    Translations().apply("en")
    assert translated("attempt 2 failed (provider): boom") == "attempt 2 failed (provider): boom"
