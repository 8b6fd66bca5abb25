"""The task-API profile format's newer keys: every mistake is a ConfigError naming the key; the
seven shipped native profiles load with what their services need."""

from __future__ import annotations

import tomllib

import pytest

from mediaassist.core.config import parse_config
from mediaassist.core.errors import ConfigError
from mediaassist.core.paths import RESOURCES
from mediaassist.core.task_profiles import load_profile, parse_profile
from tests.helpers import MINIMAL_TASK_PROFILE

BASE = MINIMAL_TASK_PROFILE
NATIVE = ("kling", "volcengine-seedance", "minimax-hailuo", "dashscope-wan", "vidu", "runway", "gemini-veo")


def parse(text: str):  # type: ignore[no-untyped-def]
    return parse_profile(tomllib.loads(text))


@pytest.mark.parametrize("extra, message", [
    ('[auth]\nscheme = "oauth"', "auth.scheme: 'oauth' is not allowed (allowed: bearer, header, jwt_hs256)"),
    ('[auth]\nscheme = "header"', "auth.header: required for scheme = \"header\""),
    ('[auth]\nscheme = "bearer"\nttl_s = 60', "auth.ttl_s: only for scheme = \"jwt_hs256\""),
    ('[auth]\nscheme = "jwt_hs256"\nttl_s = 60\nrenew_before_s = 60', "auth.renew_before_s: 60 is not below ttl_s"),
    ('[headers]\nAuthorization = "Bearer sk-1"', "headers.Authorization: the key travels by [auth]"),
    ('[headers]\n"X Bad" = "1"', "headers.X Bad: not a usable header"),
    ('[errors]\ncodes = { "1301" = "fail" }', "errors.codes.1301: 'fail' is not allowed (allowed: backoff, quota"),
    ('[errors]\nsuccess_codes = [0]', "errors.success_codes: must be a list of strings"),
])
def test_new_top_level_keys_name_what_is_wrong(extra: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(BASE + extra)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("change, message", [
    (('prompt = "{prompt}"', 'content = [{ type = "text", text = "{promt}" }]'),
     "create.fields.content: unknown placeholder {promt} (allowed: {prompt}, {remote_model}, {input.NAME}"),
    (('prompt = "{prompt}"', 'image = "{input.image.png}"'), "create.fields.image: unknown placeholder"),
    (('[status]', '[create.with_inputs.Image]\npath = "/i2v"\n[status]'),
     "create.with_inputs.Image: 'Image' is not an input name"),
    (('[status]', '[create.with_inputs.image]\npath = "/i2v/{id}"\n[status]'),
     "create.with_inputs.image.path: unknown placeholder {id} (allowed: {remote_model})"),
    (('path = "/jobs/{id}"', 'path = "/jobs/{id}/{model}"'),
     "status.path: unknown placeholder {model} (allowed: {id}, {create_path})"),
    (('failed = ["ERR"]', 'canceled = ["ERR"]'), "status.states.failed: required"),
    (('[status.states]', '[status.present]\ndone = "x"\n[status.states]'), "status.present.done: unknown state"),
    (('state = "job.state"', 'state = "job.state"\nstate_when_absent = "later"'),
     "status.state_when_absent: 'later' is not allowed"),
    (('state = "job.state"', 'state = "job.state"\nprogress_scale = 0'), "status.progress_scale: 0 is not allowed"),
    (('urls = "job.outputs[0].url"', 'urls = "job.outputs[first].url"'), "result.urls: 'job.outputs[first].url' is "
                                                                          "not a path"),
    (('urls = "job.outputs[0].url"', 'urls = "u"\nwith_key = "yes"'), "result.with_key: 'yes' is not allowed"),
    (('urls = "job.outputs[0].url"', 'urls = "u"\n[[result.requests]]\npath = "/files?f={value}"'),
     "result.requests[0].take: required"),
    (('urls = "job.outputs[0].url"', 'urls = "u"\n[[result.requests]]\npath = "/files/{file}"\ntake = "f"'),
     "result.requests[0].path: unknown placeholder {file} (allowed: {id}, {value})"),
    (('urls = "job.outputs[0].url"', 'urls = "u"\n[result.usage]\ncredits = 3'),
     "result.usage.credits: must be a dotted path"),
])
def test_new_section_keys_name_what_is_wrong(change: tuple[str, str], message: str) -> None:
    assert change[0] in BASE
    with pytest.raises(ConfigError) as caught:
        parse(BASE.replace(*change, 1))
    assert str(caught.value).startswith(message), str(caught.value)


def test_a_failed_state_may_be_told_by_presence_alone() -> None:
    profile = parse(BASE.replace('failed = ["ERR"]', "").replace("[status.states]",
                                                                  '[status.present]\nfailed = "job.error"\n'
                                                                  "[status.states]"))
    assert profile.state_present == (("failed", (("job", "error"),)),)


@pytest.mark.parametrize("name", NATIVE)
def test_the_native_profiles_load_with_docs_and_an_address(name: str) -> None:
    profile = load_profile(name, "test")
    assert profile.docs.startswith("https://") and (profile.base_url or "").startswith("https://")
    assert profile.auth.scheme == {"kling": "jwt_hs256", "vidu": "header", "gemini-veo": "header"}.get(name, "bearer")


def test_the_service_specific_needs_are_data() -> None:
    kling, dashscope, minimax, runway, veo = (load_profile(n, "t") for n in
                                              ("kling", "dashscope-wan", "minimax-hailuo", "runway", "gemini-veo"))
    assert kling.status.path == "{create_path}/{id}" and kling.action_for("1004") == "renew"
    assert kling.action_for("1201") == "bad_input" and kling.action_for("1301") == "refused"
    assert dashscope.create.headers == {"X-DashScope-Async": "enable"}
    assert dashscope.action_for("Throttling.AllocationQuota") == "backoff"
    assert minimax.success_codes == frozenset({"0"}) and minimax.result_requests[0].take == (("file_id",),)
    assert runway.headers == {"X-Runway-Version": "2024-11-06"} and runway.progress_scale == 1.0
    assert veo.result_with_key and veo.state_when_absent == "running"
    assert veo.action_for("GenerateRequestsPerDayPerProjectPerModel") == "quota"


@pytest.mark.parametrize("name", NATIVE)
def test_the_docs_show_each_native_profile_as_shipped(name: str) -> None:
    page = (RESOURCES.parent / "docs" / "task-api-profiles.md").read_text(encoding="utf-8")
    shipped = (RESOURCES / "task_api" / f"{name}.toml").read_text(encoding="utf-8").rstrip()
    assert f"```toml\n{shipped}\n```" in page  # the commented example is the file itself, not a copy that drifts
    assert f"Service documentation: <{load_profile(name, 't').docs}>" in page


def provider(extra: str, profile: str = "kling", ptype: str = "task_api") -> str:
    return f"""
[[providers]]
name = "k"
kind = "poll"
type = "{ptype}"
{'profile = "' + profile + '"' if ptype == "task_api" else 'base_url = "https://x.example"'}
{extra}
"""


def test_a_provider_may_leave_base_url_to_the_profile_and_names_its_secret_by_env() -> None:
    config = parse_config(tomllib.loads(provider('api_key_env = "KLING_AK"\nsecret_key_env = "KLING_SK"')))
    prov = config.providers[0]
    assert (prov.base_url, prov.secret_key_env) == ("https://api-singapore.klingai.com", "KLING_SK")


def test_secret_key_env_is_only_for_task_api_and_no_secret_is_taken_from_the_file() -> None:
    with pytest.raises(ConfigError, match=r'providers\[0\]\.secret_key_env: only for type = "task_api"'):
        parse_config(tomllib.loads(provider('secret_key_env = "X"', ptype="runninghub")))
    with pytest.raises(ConfigError, match=r"providers\[0\]\.secret_key_env: profile runway does not sign its "
                                          r"requests \(auth.scheme = \"bearer\"\); leave it out"):
        parse_config(tomllib.loads(provider('secret_key_env = "X"', profile="runway")))
    with pytest.raises(ConfigError, match=r"providers\[0\]\.secret_key: unknown key"):
        parse_config(tomllib.loads(provider('secret_key = "sk-in-the-file"')))
