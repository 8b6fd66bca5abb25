"""``mediaassist --help`` and every command's help, usage line and argument error, read from the
real ``mediaassist`` process: Chinese under a zh_* locale or ``--lang zh_CN``, English otherwise."""

from __future__ import annotations

import re

import pytest

from mediaassist.core.columns import width
from tests.helpers import cli

CHINESE_LOCALE = {"LANG": "zh_CN.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}
ENGLISH_LOCALES = ({"LANG": "C", "LC_ALL": "", "LC_MESSAGES": ""},
                   {"LANG": "en_US.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""})
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
COLUMNS = 80

# (the command line, a line of its own help in English, the same in Chinese)
HELPS = [
    ((), "Open the desktop app (files go to the import preview).", "打开桌面应用（给出的文件进入导入预览）。"),
    (("run",), "import task files (CSV, XLSX, JSON, JSONL, TXT) and run them",
     "导入任务文件（CSV、XLSX、JSON、JSONL、TXT）"),
    (("accounts", "login"), "give up waiting for the login after S seconds", "等待登录超过 S 秒后放弃"),
    (("sites", "learn"), "Open URL in a browser window; click the prompt box",
     "在浏览器窗口中打开 URL；依次点击提示词输入框"),
    (("status",), "per lane: limit, running, pending", "按通道列出：上限、运行中、待处理"),
]
HELP_IDS = [" ".join(args) or "mediaassist" for args, _english, _chinese in HELPS]


def help_text(*args: str, env: dict[str, str]) -> str:
    result = cli(*args, "--help", env={**env, "COLUMNS": str(COLUMNS)})
    assert result.returncode == 0, result.stderr
    return result.stdout


def squeezed(text: str) -> str:
    """``text`` without its whitespace: the help wraps its sentences (a Chinese one between any two characters)."""
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize(("args", "english", "chinese"), HELPS, ids=HELP_IDS)
def test_help_is_chinese_under_a_chinese_locale_or_lang_zh_cn(args: tuple[str, ...], english: str,
                                                              chinese: str) -> None:
    for shown in (help_text(*args, env=CHINESE_LOCALE),
                  help_text(*args, "--lang", "zh_CN", env=ENGLISH_LOCALES[0]),
                  help_text("--lang=zh_CN", *args, env=ENGLISH_LOCALES[1])):
        assert shown.startswith("用法：mediaassist")
        assert "\n选项:\n" in shown and "显示此帮助信息并退出" in shown
        assert squeezed("提示信息和本帮助的语言：en 或 zh_CN") in squeezed(shown)
        assert squeezed(chinese) in squeezed(shown)
        assert "usage:" not in shown and "show this help" not in shown and squeezed(english) not in squeezed(shown)


@pytest.mark.parametrize(("args", "english", "chinese"), HELPS, ids=HELP_IDS)
def test_help_stays_english_under_c_or_english_locale_or_lang_en(args: tuple[str, ...], english: str,
                                                                 chinese: str) -> None:
    for shown in (*(help_text(*args, env=env) for env in ENGLISH_LOCALES),
                  help_text(*args, "--lang", "en", env=CHINESE_LOCALE)):
        assert shown.startswith("usage: mediaassist")
        assert "\noptions:\n" in shown and "show this help message and exit" in shown
        assert english in " ".join(shown.split())
        assert CJK.search(shown) is None, shown


def test_chinese_help_lines_fit_the_terminal_and_line_up() -> None:
    """A Chinese character takes two columns: the help wraps by columns, and the usage line's
    continuation lines start under its first option, as in English."""
    shown = help_text("run", env=CHINESE_LOCALE)
    assert max(width(line) for line in shown.splitlines()) <= COLUMNS
    usage = shown.split("\n\n")[0].splitlines()
    first_option = width(usage[0].split("[")[0])
    assert all(width(line) - width(line.lstrip()) == first_option for line in usage[1:]), usage


def test_the_top_level_help_names_every_headless_command() -> None:
    from mediaassist.entry import COMMANDS

    shown = " ".join(help_text(env=ENGLISH_LOCALES[0]).split())
    assert f"Headless commands: {', '.join(COMMANDS)} (mediaassist COMMAND --help)." in shown


@pytest.mark.parametrize(("args", "english", "chinese"), [
    (("run", "--speed", "0"), "mediaassist run: error: argument --speed: 0: must be a number in (0, 10000]",
     "mediaassist run：错误：参数 --speed：0：必须是 (0, 10000] 之间的数"),
    (("run", "--speed", "fast"), "argument --speed: fast: must be a number in (0, 10000]",
     "参数 --speed：fast：必须是 (0, 10000] 之间的数"),
    (("rerun", "t1", "--param", "seconds"), "argument --param: 'seconds': write KEY=VALUE, e.g. --param seconds=8",
     "参数 --param：'seconds'：请写成 KEY=VALUE，例如 --param seconds=8"),
    (("run", "--models", ","), "argument --models: name at least one model: --models a,b",
     "参数 --models：请至少指定一个模型：--models a,b"),
    (("run", "--not-before", "tonight"), "argument --not-before: 'tonight' is not a time (allowed: 2026-12-03 23:00",
     "参数 --not-before：'tonight' 不是时间（可用：2026-12-03 23:00"),
    (("status", "--lang", "fr_FR"), "argument --lang: unknown language 'fr_FR' (known: en, zh_CN)",
     "参数 --lang：未知语言 'fr_FR'（可用：en, zh_CN）"),
    (("sites", "learn", "http://x"), "mediaassist sites learn: error: the following arguments are required: --name",
     "mediaassist sites learn：错误：缺少以下必需参数：--name"),
    (("status", "--bogus"), "mediaassist: error: unrecognized arguments: --bogus",
     "mediaassist：错误：无法识别的参数：--bogus"),
], ids=lambda value: " ".join(value) if isinstance(value, tuple) else "")
def test_argument_errors_are_in_the_command_lines_language(args: tuple[str, ...], english: str,
                                                           chinese: str) -> None:
    chinese_run = cli(*args, env=CHINESE_LOCALE)
    assert chinese_run.returncode == 2
    assert chinese_run.stderr.startswith("用法：mediaassist") and chinese in chinese_run.stderr, chinese_run.stderr
    english_run = cli(*args, "--lang", "en", env=CHINESE_LOCALE)
    assert english_run.returncode == 2
    assert english_run.stderr.startswith("usage: mediaassist") and english in english_run.stderr, english_run.stderr
