"""The core's message ids, their catalogue and its rendering (mediaassist/core/messages.py).

Every ``msg("...")`` written outside mediaassist/ui must have a Chinese entry with the same
placeholders, every entry must render in both languages with its values put in, and the
committed .mo must be compiled from the committed .po."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from mediaassist.core.errors import KIND_TEXTS, ErrorKind
from mediaassist.core.messages import (
    CHINESE,
    ENGLISH,
    Catalogue,
    Message,
    catalogue,
    catalogue_file,
    each_of,
    either,
    language_from_environment,
    msg,
    normalized_language,
    render,
)
from mediaassist.core.paths import RESOURCES
from tests.translation_build import build_script

BUILD = build_script()
ZH = BUILD.core_catalogue(CHINESE)
LIVE_ENTRIES = [m for m in ZH if m.id]


def placeholders(template: str) -> set[str]:
    return {name for _text, name, _spec, _conv in string.Formatter().parse(template) if name}


def test_every_message_id_in_the_source_has_a_chinese_translation() -> None:
    ids = BUILD.core_message_ids()
    assert len(ids) >= 1
    missing = [f"{where[0]}:{where[1]}: {message_id!r}" for message_id, places in ids.items()
               for where in places[:1] if not (ZH.get(message_id) and ZH.get(message_id).string)]
    assert missing == [], "translate these in resources/translations/core_zh_CN.po (docs/development-messages.md)"


def test_a_translation_uses_exactly_the_placeholders_of_its_id() -> None:
    wrong = [(m.id, m.string) for m in LIVE_ENTRIES if placeholders(m.id) != placeholders(m.string)]
    assert wrong == []


@pytest.mark.parametrize("entry", LIVE_ENTRIES, ids=lambda m: m.id[:50])
def test_every_entry_renders_in_both_languages_with_its_values(entry: object) -> None:
    message_id = entry.id  # type: ignore[attr-defined]
    params = {name: f"<{name}-value>" for name in placeholders(message_id)}
    message = Message(message_id, params)
    english, chinese = render(message, ENGLISH), render(message, CHINESE)
    assert english == message_id.format(**params)
    assert chinese == entry.string.format(**params)  # type: ignore[attr-defined]
    for value in params.values():
        assert value in english and value in chinese


def test_the_committed_mo_is_compiled_from_the_committed_po() -> None:
    assert catalogue_file(CHINESE).read_bytes() == BUILD.compiled(ZH), (
        "run resources/translations/build_translations.py and commit core_zh_CN.mo")


def test_nested_messages_render_in_the_same_language() -> None:
    line = msg("attempt {attempt} failed ({kind}): {message}; will retry",
               attempt=2, kind=msg("provider"), message=msg("simulated failure"))
    assert str(line) == "attempt 2 failed (provider): simulated failure; will retry"
    assert render(line, CHINESE) == "第 2 次尝试失败（服务方错误）：模拟失败；将重试"


def test_values_that_are_not_messages_are_shown_as_they_are() -> None:
    line = msg("attempt {attempt} started on {lane}", attempt=1, lane="web:demo-a")
    assert render(line, CHINESE) == "第 1 次尝试已在 web:demo-a 上开始"


def test_joined_phrases_use_the_languages_words() -> None:
    kinds = either([msg("an image"), msg("a video"), msg("an audio")])
    assert str(kinds) == "an image or a video or an audio"
    assert render(kinds, CHINESE) == "图片或视频或音频"
    reasons = each_of([msg("params is not valid JSON"), msg("priority {value} is not an integer", value="x")])
    assert str(reasons) == "params is not valid JSON; priority x is not an integer"
    assert render(reasons, CHINESE).count("；") == 1
    assert each_of([msg("params is not valid JSON")]) == msg("params is not valid JSON")
    with pytest.raises(ValueError):
        either([])


def test_a_text_without_a_translation_reads_in_english() -> None:
    line = msg("no such text {x} yet", x=3)
    assert render(line, CHINESE) == "no such text 3 yet"
    assert not catalogue(CHINESE).has(line.id) and catalogue(CHINESE).has("simulated failure")


def test_a_missing_value_stays_visible_and_a_broken_translation_falls_back_to_english() -> None:
    assert str(msg("attempt {attempt} started on {lane}", attempt=1)) == "attempt 1 started on {lane}"

    class Broken:
        def gettext(self, template: str) -> str:
            return "第 {attempt 次"

    broken = Catalogue(CHINESE, Broken())  # type: ignore[arg-type]
    assert broken.render(msg("attempt {attempt} started on {lane}", attempt=1, lane="x")) == "attempt 1 started on x"


def test_a_message_survives_its_json_and_old_or_damaged_rows_read_as_none() -> None:
    line = msg("back in the queue: {reason}", reason=msg("paused by operator"))
    stored = line.to_json()
    assert Message.from_json(stored) == line
    assert "paused by operator" in stored and "中" not in stored
    for text in (None, "", "attempt 1 started on x", "{", '{"id": 3}', '[1, 2]', '{"params": {}}'):
        assert Message.from_json(text) is None


@pytest.mark.parametrize(("name", "language"), [
    ("zh_CN", CHINESE), ("zh_CN.UTF-8", CHINESE), ("zh-CN", CHINESE), ("zh", CHINESE), ("zh_TW.UTF-8", CHINESE),
    ("en_US.UTF-8", ENGLISH), ("C", ENGLISH), ("POSIX", ENGLISH), ("C.UTF-8", ENGLISH), ("en", ENGLISH),
])
def test_language_names_are_normalized(name: str, language: str) -> None:
    assert normalized_language(name) == language


def test_an_unknown_language_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=re.escape("unknown language 'fr_FR' (known: en, zh_CN)")):
        normalized_language("fr_FR")


@pytest.mark.parametrize(("environ", "language"), [
    ({}, ENGLISH),
    ({"LANG": "zh_CN.UTF-8"}, CHINESE),
    ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, CHINESE),
    ({"LANG": "zh_CN.UTF-8", "LC_ALL": "C"}, ENGLISH),  # LC_ALL wins over everything
    ({"LANG": "zh_CN.UTF-8", "LC_ALL": ""}, CHINESE),  # set but empty counts as unset
    ({"LANG": "fr_FR.UTF-8"}, ENGLISH),  # no French catalogue
])
def test_the_locale_variables_choose_the_language(environ: dict[str, str], language: str) -> None:
    assert language_from_environment(environ) == language


def test_the_catalogue_is_a_shipped_resource() -> None:
    assert catalogue_file(CHINESE) == Path(RESOURCES) / "translations" / "core_zh_CN.mo"


def test_every_error_kind_has_a_text() -> None:
    # A kind without one broke the end of every attempt that failed with it (download did).
    assert set(KIND_TEXTS) == set(ErrorKind)
