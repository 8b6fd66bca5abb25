"""Site profiles as data: validation that names the role a feature needs, and the Markdown the
driver writes back from an answer's HTML (no browser needed)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from mediaassist.core.errors import ConfigError
from mediaassist.core.paths import RESOURCES
from mediaassist.providers.web.markdown import html_to_markdown
from mediaassist.providers.web.site import feature_problems, parse_site
from tests.helpers import cli

BASE: dict[str, Any] = {"name": "x", "start_url": "http://127.0.0.1:1/",
        "selectors": {"prompt": "#p", "send": "#s", "answer": ".a", "logged_in": "#c", "stop": "#stop"}}


def _profile(**top: Any) -> dict[str, Any]:
    """BASE with ``top``'s keys; its ``selectors`` are merged in, a None one dropped."""
    selectors = {**BASE["selectors"], **top.pop("selectors", {})}
    return {**BASE, **top, "selectors": {k: v for k, v in selectors.items() if v is not None}}


@pytest.mark.parametrize("name", ["demochat", "gradio", "streamlit"])
def test_shipped_profiles_parse(name: str) -> None:
    path = RESOURCES / "sites" / f"{name}.toml"
    profile = parse_site(tomllib.loads(path.read_text(encoding="utf-8")), path)
    assert profile.name == name


def test_logged_out_is_optional_and_send_may_be_a_key_chord() -> None:
    profile = parse_site(_profile(selectors={"send": ["Enter"]}))
    assert not profile.has("logged_out")
    assert (profile.send_buttons, profile.send_chord) == ([], "Enter")
    assert profile.completion.stable_ms == 300  # a stop control: a short settle is enough


def test_the_generic_error_rule_is_on_without_an_error_role_and_beside_one_only_when_asked() -> None:
    role = {"selectors": {"error": [".toast"]}}
    assert parse_site(_profile()).uses_generic_errors
    assert not parse_site(_profile(**role)).uses_generic_errors  # a role written by hand: alone
    assert parse_site(_profile(**role, generic_errors=True)).uses_generic_errors  # a learned one: beside it
    assert not parse_site(_profile(generic_errors=False)).uses_generic_errors


@pytest.mark.parametrize(("top", "message"), [
    ({"navigation": "new_chat"}, r'selectors\.new_chat: required by navigation = "new_chat"'),
    ({"answer_text": "copy_button"}, r'selectors\.copy: required by answer_text = "copy_button"'),
    ({"navigation": "refresh"}, r"navigation: 'refresh' is not one of reload, new_chat, stay"),
    ({"answer_text": "html"}, r"answer_text: 'html' is not one of text, copy_button, attribute:NAME"),
    ({"answer_format": "rst"}, r"answer_format: 'rst' is not one of text, markdown"),
    ({"generic_errors": "yes"}, r"generic_errors: 'yes' is not true or false"),
    ({"selectors": {"stop": None}}, r"the completion rule needs one of generating, stop or done"),
    ({"selectors": {"prompt": None}}, r"selectors: missing prompt"),
    ({"selectors": {"popup": "#x"}}, r"selectors: unknown key 'popup'"),
])
def test_profile_errors_name_the_key_and_the_feature(top: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_site(_profile(**top))


def test_inputs_need_a_file_input() -> None:
    profile = parse_site(_profile())
    problems = [str(problem) for problem in feature_problems(profile, inputs=True)]
    assert problems == ["selectors.file_input: required by a web model with inputs (attachments)"]
    assert feature_problems(parse_site(_profile(selectors={"file_input": "input[type=file]"})), inputs=True) == []


def test_markdown_from_answer_html() -> None:
    html = ("<p>Hello <strong>bold</strong>, <em>it</em> and <code>a`b</code><br>next line</p>"
            "<p>soft\nbreak</p><h2>Title</h2><ul><li>one</li><li>two<ul><li>deep</li></ul></li></ul>"
            "<ol start='3'><li>three</li></ol><blockquote><p>quoted</p></blockquote>"
            "<div class='code'><button>Copy</button>"
            "<pre><div><code class='language-python'>x = 1\n</code></div></pre></div>"
            "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
            "<p><a href='https://example.org/x'>link</a> <img src='/i.png' alt='pic'></p>")
    assert html_to_markdown(html) == (
        "Hello **bold**, *it* and ``a`b``\nnext line\n\nsoft\nbreak\n\n## Title\n\n- one\n- two\n  - deep\n\n"
        "3. three\n\n> quoted\n\n```python\nx = 1\n```\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\n"
        "[link](https://example.org/x) ![pic](/i.png)")


def test_no_display_is_one_clear_line_with_the_xvfb_hint(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[[accounts]]\nname = "alice"\nsite = "demochat"\n', encoding="utf-8")
    common = ("--config", str(config), "--data-dir", str(tmp_path / "data"))
    no_display = {"DISPLAY": "", "WAYLAND_DISPLAY": ""}
    login = cli("accounts", "login", "alice", *common, env=no_display)
    learn = cli("sites", "learn", "http://127.0.0.1:9/", "--name", "new", "--account", "alice", *common,
                env=no_display)

    assert login.returncode == 1 and login.stdout == ""
    assert login.stderr.strip().endswith("xvfb-run -a mediaassist accounts login alice")
    assert len(login.stderr.strip().splitlines()) == 1 and "Traceback" not in login.stderr
    assert learn.returncode == 2 and "xvfb-run -a mediaassist sites learn http://127.0.0.1:9/" in learn.stderr
    assert "Traceback" not in learn.stderr
