"""Media inputs on the API lane: image parts in chat (data URLs streamed from the file, or the URL
itself) and multipart images/edits -- payloads checked by the demo server as the real one would."""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mediaassist.core.clock import Clock
from mediaassist.core.config import AppConfig, InputSpec, parse_config
from mediaassist.core.media import check_input_value
from mediaassist.core.store import NewTask
from mediaassist.demo_servers.openai_server import DemoOpenAIServer, _png
from tests.harness import run_batch

KEY = "sk-test-Media7mW3pL0vX7yT2nB5cR9"
LANE = "api:acme"
PHOTO_URL = "https://cdn.example.com/photos/fox.jpg"


@pytest.fixture
def server() -> Iterator[DemoOpenAIServer]:
    with DemoOpenAIServer(api_key=KEY, latency_s=(0.01, 0.02), models=("gpt-x", "gpt-image-1")) as srv:
        yield srv


def make_config(base_url: str) -> AppConfig:
    return parse_config({"providers": [{"name": "acme", "kind": "api", "type": "openai", "base_url": base_url,
                                        "api_key": KEY}], "models": [
        {"name": "looker", "kind": "api", "provider": "acme", "remote_model": "gpt-x",
         "inputs": {"image": {"multiple": True}}},
        {"name": "editor", "kind": "api", "provider": "acme", "remote_model": "gpt-image-1",
         "endpoint": "images_edit", "inputs": ["image", "mask"], "defaults": {"size": "256x256", "n": 2}},
    ]})


def picture(folder: Path, name: str, padding: int = 0) -> Path:
    """A real PNG, optionally grown with trailing bytes (a big file the server must decode whole)."""
    path = folder / name
    path.write_bytes(_png(name) + os.urandom(padding))
    return path


def entries(config: AppConfig, model: str, **cells: str) -> dict[str, list[dict[str, Any]]]:
    specs = config.model(model).inputs
    return {name: [check_input_value(value, Path("/"), specs.get(name, InputSpec(name)), None)
                   for value in cell.split("|")] for name, cell in cells.items()}


def task(config: AppConfig, model: str, prompt: str = "what is this?", **cells: str) -> NewTask:
    return NewTask(model=model, model_kind="api", route=LANE, prompt=prompt, inputs=entries(config, model, **cells))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.asyncio
async def test_chat_sends_image_parts_streamed_from_the_file_and_urls_as_they_are(server, store, data_dir):
    config = make_config(server.base_url)
    big = picture(data_dir, "frame.png", padding=3 << 20)  # several base64 chunks
    done = await run_batch(store, config, data_dir, [task(config, "looker", image=f"{big}|{PHOTO_URL}")],
                           Clock(speed=50))

    assert [t.state for t in done] == ["success"], done[0].error
    [request] = server.api_requests()
    assert request.images == [{"mime": "image/png", "bytes": big.stat().st_size, "sha256": sha256(big)},
                              {"url": PHOTO_URL}]


@pytest.mark.asyncio
async def test_a_file_changed_since_import_is_never_sent(server, store, data_dir):
    config = make_config(server.base_url)
    frame = picture(data_dir, "frame.png")
    new = task(config, "looker", image=str(frame))
    frame.write_bytes(_png("another picture") + b"x")
    [done] = await run_batch(store, config, data_dir, [new], Clock(speed=50))

    assert (done.state, done.error_kind, done.attempt) == ("failed", "bad_input", 1)
    assert "changed since import" in done.error
    assert server.api_requests() == []


@pytest.mark.asyncio
async def test_images_edit_posts_multipart_with_image_and_mask(server, store, data_dir):
    config = make_config(server.base_url)
    photo, mask = picture(data_dir, "photo.png", padding=200_000), picture(data_dir, "mask.png")
    [done] = await run_batch(store, config, data_dir,
                             [task(config, "editor", "make it night", image=str(photo), mask=str(mask))],
                             Clock(speed=50))

    assert done.state == "success", done.error
    [request] = server.api_requests()
    assert request.path == "/v1/images/edits"
    assert request.images == [
        {"role": "image", "filename": "photo.png", "bytes": photo.stat().st_size, "sha256": sha256(photo)},
        {"role": "mask", "filename": "mask.png", "bytes": mask.stat().st_size, "sha256": sha256(mask)}]
    assert sorted(request.body_keys) == ["image[]", "mask", "model", "n", "prompt", "size"]
    files = store.result(done.task_id).file_list
    assert len(files) == 2 and all(Path(f).read_bytes()[16:24] == b"\x00\x00\x01\x00" * 2 for f in files)


@pytest.mark.asyncio
async def test_images_edit_refuses_a_url_input_before_sending(server, store, data_dir):
    config = make_config(server.base_url)
    [done] = await run_batch(store, config, data_dir, [task(config, "editor", image=PHOTO_URL)], Clock(speed=50))

    assert (done.state, done.error_kind) == ("failed", "bad_input")
    assert "uploads local files" in done.error and server.api_requests() == []


def chat_with(url: str) -> dict[str, Any]:
    return {"model": "gpt-x", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is it?"}, {"type": "image_url", "image_url": {"url": url}}]}]}


@pytest.mark.parametrize(("url", "code"), [
    ("data:image/png;base64,@@notbase64@@", "invalid_image_format"),
    ("data:image/png;base64," + base64.b64encode(b"plain text, not a picture").decode(), "invalid_image_format"),
    ("file:///etc/passwd", "invalid_image_url"),
])
def test_server_rejects_malformed_image_parts(server, url, code):
    answer = httpx.post(f"{server.base_url}/chat/completions", json=chat_with(url),
                        headers={"Authorization": f"Bearer {KEY}"})
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, code)
    assert answer.json()["error"]["param"] == "messages[0].content[1].image_url.url"


@pytest.mark.parametrize(("files", "data", "param"), [
    ({"mask": ("m.png", _png("m"), "image/png")}, {"prompt": "x"}, "image"),
    ({"image[]": ("a.txt", b"not an image", "text/plain")}, {"prompt": "x"}, "image"),
    ({"image[]": ("a.png", _png("a"), "image/png"), "mask": ("m.txt", b"nope", "text/plain")}, {"prompt": "x"},
     "mask"),
    ({"image[]": ("a.png", _png("a"), "image/png")}, {"prompt": "x", "size": "3x3"}, "size"),
    ({"image[]": ("a.png", _png("a"), "image/png")}, {"prompt": "x", "image": "a.png"}, "image"),
])
def test_server_rejects_malformed_edits(server, files, data, param):
    answer = httpx.post(f"{server.base_url}/images/edits", data={"model": "gpt-image-1", **data}, files=files,
                        headers={"Authorization": f"Bearer {KEY}"})
    assert (answer.status_code, answer.json()["error"]["param"]) == (400, param)


def test_server_rejects_edits_sent_as_json(server):
    answer = httpx.post(f"{server.base_url}/images/edits", json={"model": "gpt-image-1", "prompt": "x"},
                        headers={"Authorization": f"Bearer {KEY}"})
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, "invalid_content_type")
