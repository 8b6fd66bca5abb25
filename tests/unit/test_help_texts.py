"""The CLI parsers' texts are message ids with Chinese translations, translated only when shown
(mediaassist/arguments.py), and wrapped by terminal columns (mediaassist/core/columns.py)."""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Iterator

import pytest

from mediaassist import __version__
from mediaassist.arguments import ARGPARSE_WORDS, asked_language
from mediaassist.core.columns import width, wrapped
from mediaassist.core.messages import CHINESE, catalogue
from mediaassist.entry import _command_parser, _gui_parser, parse_arguments


def parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and the parsers of its commands and their sub-commands."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from parsers(sub)


def shown_texts(parser: argparse.ArgumentParser) -> Iterator[str]:
    """Every text ``--help`` shows for ``parser``: its description, section titles, option help
    and its commands' summaries."""
    yield parser.description or ""
    for group in parser._action_groups:
        yield group.title or ""
    for action in parser._actions:
        yield action.help or ""
        if isinstance(action, argparse._SubParsersAction):
            yield from (summary.help or "" for summary in action._get_subactions())


def test_every_text_of_every_parser_has_a_chinese_translation() -> None:
    chinese = catalogue(CHINESE)
    texts = {text for top in (_gui_parser(), _command_parser()) for parser in parsers(top)
             for text in shown_texts(parser) if text}
    assert len(texts) > 60  # the walk reached the sub-commands
    assert sorted(text for text in texts if not chinese.has(text)) == []


def percent_placeholders(text: str) -> list[str]:
    return re.findall(r"%(?:\(\w+\))?[sr]", text)


@pytest.mark.parametrize("word", ARGPARSE_WORDS)
def test_argparse_asks_gettext_for_each_word_and_its_chinese_keeps_the_placeholders(word: str) -> None:
    assert f"_({word!r})" in inspect.getsource(argparse)  # argparse still writes it so
    chinese = catalogue(CHINESE).translated(word)
    assert chinese != word and percent_placeholders(chinese) == percent_placeholders(word)


def test_lang_is_read_before_parsing_the_last_one_winning() -> None:
    assert asked_language(["--help", "--lang", "zh_CN"]) == "zh_CN"
    assert asked_language(["run", "--lang=en", "--lang", "zh"]) == "zh"
    assert asked_language(["run", "--", "--lang", "zh"]) is None
    assert asked_language(["run", "--lang"]) is None
    assert asked_language([]) is None
    assert parse_arguments([]).command is None  # the window, started with no argument at all


def test_version_loads_no_catalogue_help_does(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in (("LANG", "zh_CN.UTF-8"), ("LC_ALL", ""), ("LC_MESSAGES", "")):
        monkeypatch.setenv(name, value)
    catalogue.cache_clear()
    with pytest.raises(SystemExit) as version:
        parse_arguments(["--version", "--lang", "zh_CN"])
    assert version.value.code == 0 and capsys.readouterr().out == f"mediaassist {__version__}\n"
    assert catalogue.cache_info().currsize == 0
    with pytest.raises(SystemExit):
        parse_arguments(["--help"])
    assert capsys.readouterr().out.startswith("用法：mediaassist")
    assert catalogue.cache_info().currsize == 1


def test_argparse_gettext_is_its_own_again_after_parsing(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_arguments(["--help", "--lang", "zh_CN"])
    assert "用法：" in capsys.readouterr().out
    assert argparse.ArgumentParser(prog="x").format_usage() == "usage: x [-h]\n"


def test_chinese_wraps_by_columns_between_characters_never_before_closing_punctuation() -> None:
    text = "导入任务文件（CSV、XLSX、JSON）并运行，直到每个任务都结束；再次运行同一文件会接着上次继续。"
    for columns in range(8, 40):
        lines = wrapped(text, columns)
        assert "".join(lines) == text
        assert all(width(line) <= columns for line in lines), (columns, lines)
        assert not any(line[0] in "，。；：、）" or line[-1] == "（" for line in lines), (columns, lines)


def test_english_wraps_at_spaces_and_keeps_a_long_word_whole() -> None:
    assert wrapped("give up waiting  for the\nlogin after S seconds", 16) == [
        "give up waiting", "for the login", "after S seconds"]
    assert wrapped("see postgresql://USER@HOST/DATABASE now", 10) == ["see", "postgresql://USER@HOST/DATABASE", "now"]
    assert wrapped("", 10) == []
