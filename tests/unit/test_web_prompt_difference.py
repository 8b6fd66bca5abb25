"""The prompt read-back's verdict: exact, or where and how the page differs (pure)."""

from __future__ import annotations

from mediaassist.providers.web.driver import prompt_difference


def test_an_exact_read_back_passes_edge_whitespace_line_endings_and_zero_width_spaces_aside() -> None:
    assert prompt_difference("a\n\nb  c", "a\n\nb  c") is None
    assert prompt_difference("\u200ba\r\n\nb\n", "  a\n\nb") is None


def test_a_folded_blank_line_is_named_by_line_and_column() -> None:
    difference = prompt_difference("first\nsecond", "first\n\nsecond")

    assert str(difference) == ("at line 2, column 1 the page holds 'second' where the prompt has '\\nsecond' "
                               "(12 of 13 characters)")


def test_spaces_made_non_breaking_or_a_truncated_prompt_are_differences() -> None:
    assert "at line 1, column 2" in str(prompt_difference("a\u00a0 b", "a  b"))
    assert "(10 of 25 characters)" in str(prompt_difference("x" * 10, "x" * 25))
