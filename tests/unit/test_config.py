"""Config parsing: media inputs, upload limits, and the checks that name the bad key."""

from __future__ import annotations

from typing import Any

import pytest

from mediaassist.core.config import InputSpec, parse_config
from mediaassist.core.errors import ConfigError

RH = {"name": "rh", "kind": "poll", "type": "runninghub", "base_url": "https://www.runninghub.cn"}
SIM = {"name": "sim", "kind": "api", "type": "simulated"}


def _model(**extra: Any) -> dict[str, Any]:
    return {"name": "m", "kind": "poll", "provider": "rh", "workflow_id": "1", **extra}


def _parse(model: dict[str, Any] | None = None, provider: dict[str, Any] | None = None):
    return parse_config({"providers": [provider or RH, SIM], "models": [SIM_MODEL, model or _model()]})


SIM_MODEL = {"name": "w", "kind": "api", "provider": "sim"}


def test_inputs_as_a_list_of_names() -> None:
    model = _parse(_model(inputs=["image", "mask"])).models[1]
    assert model.inputs == {"image": InputSpec("image"), "mask": InputSpec("mask")}
    assert "inputs" not in model.options


def test_inputs_as_a_table_keep_order_flags_and_provider_options() -> None:
    inputs = {"first_frame": {"nodeId": "39", "fieldName": "image"},
              "last_frame": {"nodeId": "40", "fieldName": "image", "required": False},
              "refs": {"media": ["image", "video"], "multiple": True, "field": "refs"}}
    model = _parse(_model(inputs=inputs)).models[1]
    assert list(model.inputs) == ["first_frame", "last_frame", "refs"]
    assert model.inputs["first_frame"] == InputSpec("first_frame", options={"nodeId": "39", "fieldName": "image"})
    assert model.inputs["last_frame"].required is False
    refs = model.inputs["refs"]
    assert (refs.media, refs.multiple, refs.required, refs.options) == (("image", "video"), True, True,
                                                                        {"field": "refs"})


def test_web_and_api_models_take_inputs_too() -> None:
    config = parse_config({"providers": [SIM], "models": [
        {"name": "w", "kind": "api", "provider": "sim", "inputs": ["image"]},
        {"name": "chat", "kind": "web", "site": "demo-chat", "inputs": {"image": {"media": "image"}}}]})
    assert [list(m.inputs) for m in config.models] == [["image"], ["image"]]


@pytest.mark.parametrize(("inputs", "named"), [
    ("image", "models[1].inputs: must be a list of input names or a table"),
    ([1, 2], "models[1].inputs: must be a list of input names or a table"),
    (["image", "image"], "models[1].inputs: 'image' is listed twice"),
    (["Image"], "models[1].inputs.Image: input names are task-file column names"),
    (["prompt"], "models[1].inputs.prompt: 'prompt' is a task-file column already"),
    ({"image": "39"}, "models[1].inputs.image: must be a table"),
    ({"image": {"media": ["picture"]}}, "models[1].inputs.image.media: ['picture'] is not allowed (allowed: a list "
                                        "among image, video, audio)"),
    ({"image": {"media": []}}, "models[1].inputs.image.media: [] is not allowed"),
    ({"image": {"multiple": "yes"}}, "models[1].inputs.image.multiple: must be true or false"),
    ({"image": {"required": 0}}, "models[1].inputs.image.required: must be true or false"),
])
def test_bad_inputs_name_the_key(inputs: Any, named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _parse(_model(inputs=inputs))
    assert named in str(caught.value)


def test_max_upload_bytes_is_an_integer_in_range() -> None:
    assert _parse(provider={**RH, "max_upload_bytes": 5_000_000}).providers[0].max_upload_bytes == 5_000_000
    assert _parse().providers[0].max_upload_bytes is None
    for bad in (0, "10MB", 1.5):
        with pytest.raises(ConfigError, match=r"providers\[0\].max_upload_bytes: .* \(allowed: "):
            _parse(provider={**RH, "max_upload_bytes": bad})


# --- issue 9 item 8: checks at load, not an hour into a batch ---------------------------------

@pytest.mark.parametrize(("base_url", "named"), [
    ("ftp://files.example.com", "is not an http(s) URL with a host"),
    ("www.runninghub.cn", "is not an http(s) URL with a host"),
    ("http://", "is not an http(s) URL with a host"),
    ("https://host:99999", "has an invalid port (allowed: 1..65535)"),
    ("https://host:abc", "has an invalid port (allowed: 1..65535)"),
    ("https://host:0", "port 0 is out of range (allowed: 1..65535)"),
    ("https://exa mple.com", "is not an http(s) URL with a host"),
])
def test_base_url_must_be_http_with_a_valid_port(base_url: str, named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _parse(provider={**RH, "base_url": base_url})
    assert str(caught.value).startswith("providers[0].base_url: ") and named in str(caught.value)


def test_good_base_urls_lose_only_the_trailing_slash() -> None:
    for url, kept in [("https://www.runninghub.cn/", "https://www.runninghub.cn"),
                      ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"),
                      ("HTTPS://API.example.com", "HTTPS://API.example.com")]:
        assert _parse(provider={**RH, "base_url": url}).providers[0].base_url == kept


def test_min_duration_above_max_is_an_error_naming_both() -> None:
    sim = {**SIM, "min_duration_s": 30, "max_duration_s": 10}
    with pytest.raises(ConfigError, match=r"providers\[0\].min_duration_s: 30.0 is more than max_duration_s 10.0"):
        parse_config({"providers": [sim]})
    assert parse_config({"providers": [{**SIM, "min_duration_s": 5, "max_duration_s": 5}]}).providers[0]


@pytest.mark.parametrize(("extra", "named"), [
    ({"defaults": "fast"}, "models[1].defaults: must be a table"),
    ({"defaults": [1]}, "models[1].defaults: must be a table"),
    ({"node_info_list": {"nodeId": "3"}}, "models[1].node_info_list: must be an array of tables"),
    ({"node_info_list": ["3"]}, "models[1].node_info_list: must be an array of tables"),
    ({"node_info_list": [{"nodeId": "3", "fieldName": "steps"}]}, "models[1].node_info_list[0].fieldValue: required"),
    ({"node_info_list": [{"nodeId": ["3"], "fieldName": "steps", "fieldValue": 1}]},
     "models[1].node_info_list[0].nodeId: ['3'] must be a string"),
])
def test_wrong_typed_defaults_and_node_info_list_name_the_key(extra: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _parse(_model(**extra))
    assert named in str(caught.value)


def test_well_typed_defaults_and_node_info_list_pass() -> None:
    model = _parse(_model(defaults={"seed": 1}, node_info_list=[
        {"nodeId": "3", "fieldName": "steps", "fieldValue": 20}, {"nodeId": 4, "fieldName": "cfg", "fieldValue": 7.5}]))
    assert model.models[1].options["defaults"] == {"seed": 1}


def test_a_bad_order_names_the_key_the_allowed_values_and_a_likely_fix() -> None:
    with pytest.raises(ConfigError, match=r"providers\[0\].order: 'fiar' is not allowed; did you mean \"fair\"\? "
                                          r"\(allowed: fifo, longest, fair\)"):
        parse_config({"providers": [{**SIM, "order": "fiar"}]})
    with pytest.raises(ConfigError, match=r"accounts\[0\].order: 'lpt' is not allowed \(allowed: fifo, longest, "):
        parse_config({"accounts": [{"name": "a", "site": "s", "order": "lpt"}]})
    assert parse_config({"providers": [{**SIM, "order": "fair"}]}).providers[0].order == "fair"
