"""The official ``openai`` Python client (a test dependency only) against the demo server: every
kind of answer it gives must parse as the real API's does -- successes, streams and errors."""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from mediaassist.demo_servers.openai_server import DemoOpenAIServer, Fault, _png

KEY = "sk-test-Client5mW3pL0vX7yT2nB5cR9"
MESSAGES = [{"role": "user", "content": "a slogan for tea"}]


@pytest.fixture
def server() -> Iterator[DemoOpenAIServer]:
    with DemoOpenAIServer(api_key=KEY, models=("gpt-x", "gpt-image-1")) as srv:
        yield srv


@pytest.fixture
def client(server: DemoOpenAIServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(api_key=KEY, base_url=server.base_url, max_retries=0, timeout=20) as api:
        yield api


def test_models(client):
    assert [m.id for m in client.models.list()] == ["gpt-x", "gpt-image-1"]
    assert client.models.retrieve("gpt-x").owned_by == "mediaassist-demo"


def test_chat_with_several_choices_and_usage(client):
    answer = client.chat.completions.create(model="gpt-x", messages=MESSAGES, n=2, temperature=0.5)
    assert [c.index for c in answer.choices] == [0, 1]
    assert all(c.message.role == "assistant" and c.message.content for c in answer.choices)
    assert answer.usage.total_tokens == answer.usage.prompt_tokens + answer.usage.completion_tokens


def test_chat_stream_with_usage(client):
    stream = client.chat.completions.create(model="gpt-x", messages=MESSAGES, stream=True,
                                            stream_options={"include_usage": True})
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    whole = client.chat.completions.create(model="gpt-x", messages=MESSAGES).choices[0].message.content
    assert text == whole
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


def test_chat_with_an_image_part(client):
    data_url = "data:image/png;base64," + base64.b64encode(_png("x")).decode()
    answer = client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": [
        {"type": "text", "text": "what is this?"}, {"type": "image_url", "image_url": {"url": data_url}}]}])
    assert answer.choices[0].message.content


@pytest.mark.parametrize("response_format", ["b64_json", "url"])
def test_image_generation_honours_size(client, response_format):
    answer = client.images.generate(model="gpt-image-1", prompt="a fox", size="512x512", n=2,
                                    response_format=response_format)
    assert len(answer.data) == 2
    if response_format == "b64_json":
        png = base64.b64decode(answer.data[0].b64_json)
        assert struct.unpack(">II", png[16:24]) == (512, 512)
    else:
        assert answer.data[0].url.startswith("http://127.0.0.1")
    assert answer.usage.total_tokens > 0


def test_image_edit(client, tmp_path: Path):
    photo, mask = tmp_path / "photo.png", tmp_path / "mask.png"
    photo.write_bytes(_png("photo"))
    mask.write_bytes(_png("mask"))
    with photo.open("rb") as image, mask.open("rb") as mask_file:
        answer = client.images.edit(model="gpt-image-1", image=[image], mask=mask_file, prompt="at night",
                                    size="256x256")
    assert struct.unpack(">II", base64.b64decode(answer.data[0].b64_json)[16:24]) == (256, 256)


def test_errors_parse_as_the_clients_exceptions(client, server):
    with pytest.raises(openai.NotFoundError) as not_found:
        client.chat.completions.create(model="gpt-nope", messages=MESSAGES)
    assert not_found.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError) as bad:
        client.chat.completions.create(model="gpt-x", messages=MESSAGES, n="many")  # type: ignore[arg-type]
    assert bad.value.param == "n"
    server.add_fault(Fault("rate_limit", count=1))
    with pytest.raises(openai.RateLimitError) as limited:
        client.chat.completions.create(model="gpt-x", messages=MESSAGES)
    assert limited.value.code == "rate_limit_exceeded"
    server.add_fault(Fault("budget", count=1, status=422))
    with pytest.raises(openai.UnprocessableEntityError) as budget:
        client.chat.completions.create(model="gpt-x", messages=MESSAGES)
    assert budget.value.type == "budget_exceeded"
    with openai.OpenAI(api_key="sk-wrong", base_url=server.base_url, max_retries=0) as stranger, \
            pytest.raises(openai.AuthenticationError):
        stranger.models.list()


def test_the_client_honours_retry_after_from_the_demo_server(server):
    server.add_fault(Fault("rate_limit", count=1, retry_after_ms=50))
    with openai.OpenAI(api_key=KEY, base_url=server.base_url, max_retries=1) as api:
        assert api.chat.completions.create(model="gpt-x", messages=MESSAGES).choices
    assert [r.status for r in server.api_requests()] == [429, 200]
