"""Paths into JSON answers (with list indexes) and create-body templates (placeholders in nested
tables and lists; a value with nothing to fill it is left out)."""

from __future__ import annotations

from typing import Any

import pytest

from mediaassist.core.errors import ConfigError
from mediaassist.core.task_templates import MISSING, Several, dig, dig_one, parse_path, plain, render

KLING = {"code": 0, "data": {"task_id": "8", "task_result": {"videos": [{"id": "v1", "url": "https://cdn/a.mp4"},
                                                                         {"id": "v2", "url": "https://cdn/b.mp4"}]}}}


@pytest.mark.parametrize("text, parsed", [
    ("data.task_id", ("data", "task_id")),
    ("task_result.videos[0].url", ("task_result", "videos", 0, "url")),
    ("output[0]", ("output", 0)),
    ("creations[*].url", ("creations", None, "url")),
    ("grid[1][2]", ("grid", 1, 2)),
    ("error.details[*].violations[*].quotaId", ("error", "details", None, "violations", None, "quotaId")),
])
def test_paths_parse_with_list_indexes(text: str, parsed: tuple[Any, ...]) -> None:
    assert parse_path(text, "result.urls") == parsed


@pytest.mark.parametrize("text", ["", "a..b", "[0].url", "a[x]", "a[-1]", "a.b[0", "a]"])
def test_a_malformed_path_is_a_config_error_naming_the_key(text: str) -> None:
    with pytest.raises(ConfigError, match=r"^result\.urls: .* is not a path"):
        parse_path(text, "result.urls")


def test_indexes_reach_into_lists_and_a_star_takes_every_element() -> None:
    assert dig_one(KLING, parse_path("data.task_result.videos[0].url", "x")) == "https://cdn/a.mp4"
    assert dig_one(KLING, parse_path("data.task_result.videos[1].id", "x")) == "v2"
    assert dig_one(KLING, parse_path("data.task_result.videos[2].url", "x")) is MISSING  # past the end
    assert dig_one(KLING, parse_path("data.task_id[0]", "x")) is MISSING  # not a list
    assert dig_one(KLING, parse_path("data.task_result.videos[*].url", "x")) == ["https://cdn/a.mp4",
                                                                                  "https://cdn/b.mp4"]
    nested = {"details": [{"v": [{"q": "A"}, {"q": "B"}]}, {"other": 1}, {"v": [{"q": "C"}]}]}
    assert dig_one(nested, parse_path("details[*].v[*].q", "x")) == ["A", "B", "C"]  # one flat list
    assert dig_one({"output": []}, parse_path("output[*]", "x")) is MISSING


def test_the_first_path_with_a_value_wins_and_null_or_empty_is_no_value() -> None:
    paths = [parse_path(p, "x") for p in ("error.message", "message", "code")]
    assert dig({"error": {"message": None}, "message": "", "code": 1301}, paths) == 1301
    assert dig({"done": False}, [parse_path("done", "x")]) is False  # false is a value
    assert dig({}, paths) is MISSING


def lookup(values: dict[str, Any]) -> Any:
    return lambda name: values.get(name, MISSING)


def test_placeholders_fill_nested_tables_and_lists_keeping_types() -> None:
    template = {"model": "{remote_model}", "input": {"prompt": "{prompt}", "img_url": "{input.image}"},
                "content": [{"type": "text", "text": "{prompt}"},
                            {"type": "image_url", "image_url": {"url": "{input.image}"}, "role": "first_frame"}],
                "seconds": "{input.count}", "note": "made by {remote_model} from {prompt}", "fixed": 5}
    body = render(template, lookup({"remote_model": "m1", "prompt": "a cat", "input.image": "https://x/i.png",
                                    "input.count": 4}))
    assert body == {"model": "m1", "input": {"prompt": "a cat", "img_url": "https://x/i.png"},
                    "content": [{"type": "text", "text": "a cat"},
                                {"type": "image_url", "image_url": {"url": "https://x/i.png"}, "role": "first_frame"}],
                    "seconds": 4, "note": "made by m1 from a cat", "fixed": 5}


def test_a_value_with_nothing_to_fill_it_is_left_out_and_so_is_a_table_of_only_such_values() -> None:
    template = {"input": {"prompt": "{prompt}", "img_url": "{input.image}"},
                "content": [{"type": "text", "text": "{prompt}"},
                            {"type": "image_url", "image_url": {"url": "{input.image}"}, "role": "first_frame"}],
                "instances": [{"prompt": "{prompt}", "image": {"bytes": "{input.image.base64}",
                                                               "mimeType": "{input.image.mime}"}}],
                "caption": "shot of {input.image}", "images": ["{input.image}"]}
    body = render(template, lookup({"prompt": "a cat"}))
    assert body == {"input": {"prompt": "a cat"}, "content": [{"type": "text", "text": "a cat"}],
                    "instances": [{"prompt": "a cat"}], "images": []}


def test_several_files_of_one_input_spread_in_a_list_and_are_a_list_elsewhere() -> None:
    files = Several(["https://x/1.png", "https://x/2.png"])
    body = plain(render({"images": ["{input.image}"], "image": "{input.image}"}, lookup({"input.image": files})))
    assert body == {"images": ["https://x/1.png", "https://x/2.png"], "image": ["https://x/1.png", "https://x/2.png"]}
    assert type(body["image"]) is list
