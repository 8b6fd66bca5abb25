"""Output naming templates: checked at load, rendered safe for Windows/macOS/Linux, never a taken name."""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from mediaassist.core.config import parse_config
from mediaassist.core.errors import ConfigError
from mediaassist.core.naming import MAX_PART, numbered, parse_template, render, safe_part
from mediaassist.core.outputs import NamingValues, batch_name

VALUES: dict[str, Any] = {"batch": "shots-20260101T000000Z", "batch_id": "shots-20260101T000000Z-0a1b2c3d",
                          "row": 7, "task_id": "t-1", "model": "sora", "provider": "gateway", "account": "gateway",
                          "n": 2, "ext": ".mp4", "date": date(2026, 3, 4), "original": "00_content.mp4"}


def rendered(text: str, cells: dict[str, str] | None = None, **values: Any) -> str:
    return render(parse_template(text, "outputs.naming"), {**VALUES, **values}, cells or {})


def test_fields_and_format_specs() -> None:
    assert rendered("{batch}/{row:03}_{model}_{n}{ext}") == "shots-20260101T000000Z/007_sora_2.mp4"
    assert rendered("{date:%Y%m%d}-{task_id}-{account}{ext}") == "20260304-t-1-gateway.mp4"
    assert rendered("{date}_{batch_id}_{provider}_{original}") == \
        "2026-03-04_shots-20260101T000000Z-0a1b2c3d_gateway_00_content.mp4"
    assert rendered("{col:Shot}_{row}{ext}", {"shot": "A12"}) == "A12_7.mp4"


def test_values_never_make_folders_or_unsafe_names() -> None:
    assert rendered("{col:scene}{ext}", {"scene": "a/b\\c:d?e*f<g>h|i\"j"}) == "a_b_c_d_e_f_g_h_i_j.mp4"
    assert rendered("{model}/{n}{ext}", model="..") == "_/2.mp4"  # trailing dots go: never '..'


@pytest.mark.parametrize("name, safe", [
    ("CON", "_CON"), ("nul.txt", "_nul.txt"), ("Com1.mp4", "_Com1.mp4"), ("LPT9", "_LPT9"),
    ("report. ", "report"), ("clip...", "clip"), ("a:b", "a_b"), ("", "_"), ("CONSOLE.mp4", "CONSOLE.mp4"),
    ("镜头一：日落.mp4", "镜头一：日落.mp4"),  # the full-width colon is an ordinary character
])
def test_safe_part_on_windows_reserved_and_chinese_names(name: str, safe: str) -> None:
    assert safe_part(name) == safe


def test_chinese_template_and_long_names_keep_their_extension() -> None:
    assert rendered("{col:镜头}_{row:02}{ext}", {"镜头": "日落"}) == "日落_07.mp4"
    long = rendered("{col:p}{ext}", {"p": "x" * 500})
    assert len(long) == MAX_PART and long.endswith(".mp4")


@pytest.mark.parametrize("text, words", [
    ("{row}_{colour}{ext}", "unknown field {colour}"),
    ("{row:xyz}{ext}", "cannot be rendered"),
    ("{row!r}", "conversions are not allowed"),
    ("{col}", "{col:NAME}"),
    ("../{row}", "relative path"),
    ("/abs/{row}", "relative path"),
    ("C:{row}", "relative path"),
    ("{row", "not a valid template"),
    ("", "non-empty string"),
])
def test_bad_templates_are_refused_naming_the_key(text: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_template(text, "outputs.naming")
    assert "outputs.naming" in str(caught.value) and words in str(caught.value)


def test_config_outputs_section_with_per_model_override_and_refusals(tmp_path: Path) -> None:
    base = """
[[providers]]
name = "sim"
kind = "poll"
type = "simulated"
[[models]]
name = "clip"
kind = "poll"
provider = "sim"
"""
    config = parse_config(tomllib.loads(base + """
[outputs]
folder = "deliveries"
naming = "{batch}/{row:03}_{col:shot}{ext}"
[outputs.models]
clip = "{row}-{n}{ext}"
"""), tmp_path)
    assert config.outputs.folder == tmp_path / "deliveries"
    assert config.outputs.columns == {"shot"}
    assert config.outputs.model_naming["clip"].text == "{row}-{n}{ext}"
    with pytest.raises(ConfigError, match=r"outputs\.models\.nope: no model named 'nope'"):
        parse_config(tomllib.loads(base + '[outputs.models]\nnope = "{row}"\n'))
    with pytest.raises(ConfigError, match=r"outputs\.colour: unknown key"):
        parse_config(tomllib.loads(base + '[outputs]\ncolour = "x"\n'))
    with pytest.raises(ConfigError, match=r"outputs\.models\.clip: unknown field \{size\}"):
        parse_config(tomllib.loads(base + '[outputs.models]\nclip = "{size}"\n'))


def test_numbered_and_batch_name() -> None:
    assert numbered(Path("/x/a.mp4"), 1) == Path("/x/a.mp4")
    assert numbered(Path("/x/a.mp4"), 3) == Path("/x/a-3.mp4")
    assert batch_name("shots-20260101T000000Z-0a1b2c3d") == "shots-20260101T000000Z"
    assert batch_name("plain") == "plain"
    values = NamingValues("b-20260101T000000Z-0a1b2c3d", "t", None, "m", "p", "a", 0.0, {})
    assert values.for_file(1, Path("/o/x.PNG"))["ext"] == ".png" and values.for_file(1, Path("/o/x"))["row"] == 0


def test_the_demo_takes_only_the_operators_own_settings_from_a_config(tmp_path: Path) -> None:
    from mediaassist.core.config import AppConfig, ModelConfig, load_operator_settings

    demo = AppConfig(models=[ModelConfig(name="demo-sora", kind="poll", provider="demo-openai-videos")])
    path = tmp_path / "mine.toml"
    path.write_text('[[providers]]\nname = "real"\nkind = "api"\ntype = "openai"\nbase_url = "https://x.example"\n'
                    '[[notify]]\nurl_env = "HOOK"\n[outputs]\nnaming = "{row:03}{ext}"\n'
                    '[outputs.models]\ndemo-sora = "video/{row:03}{ext}"\n', encoding="utf-8")
    load_operator_settings(path, demo)
    assert [hook.url_env for hook in demo.notify] == ["HOOK"] and demo.providers == []
    assert demo.outputs.model_naming["demo-sora"].text == "video/{row:03}{ext}"
    path.write_text('[outputs]\nnaming = "{colour}"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"mine\.toml: outputs\.naming: unknown field \{colour\}"):
        load_operator_settings(path, demo)
