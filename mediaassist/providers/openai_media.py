"""What the OpenAI lane sends for a task's media inputs.

* chat: the user message becomes content parts -- the prompt, then one ``image_url`` part per
  image input: the URL itself for an http(s) input, else a base64 data URL encoded from the file
  in chunks while the body is sent (a 20 MB frame never sits in memory whole, nor as base64);
* ``endpoint = "images_edit"``: multipart to ``images/edits`` with every image as ``image[]`` and
  the input named ``mask`` as ``mask``; httpx streams the files from disk.

Each payload is a context manager yielding the keyword arguments of one ``httpx`` send, so a
retried request (after a 429) opens and encodes the files afresh.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any

from mediaassist.core.config import ModelConfig
from mediaassist.core.errors import ErrorKind, TaskError
from mediaassist.core.media import iter_file_chunks, verify_unchanged
from mediaassist.core.messages import msg

MASK_INPUT = "mask"
B64_CHUNK = 3 << 18  # 768 KiB: a multiple of 3, so each piece encodes without padding
Payload = Callable[[], AbstractContextManager[dict[str, Any]]]


def input_entries(model: ModelConfig, inputs: dict[str, list[dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """(input name, entry) in the model's declared order, each local file checked unchanged."""
    names = list(model.inputs) + [name for name in inputs if name not in model.inputs]
    entries = [(name, entry) for name in names for entry in inputs.get(name, [])]
    for _name, entry in entries:
        verify_unchanged(entry)
    return entries


def image_parts(entries: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The ``image_url`` parts, and {placeholder: entry} for the local files the body streams."""
    parts, files = [], {}
    for name, entry in entries:
        if entry.get("media") != "image":
            raise TaskError(ErrorKind.BAD_INPUT, msg("input {name} is {media}; a chat model takes images only",
                                                     name=name, media=entry.get('media')), retry=False)
        if "url" in entry:
            parts.append({"type": "image_url", "image_url": {"url": entry["url"]}})
            continue
        placeholder = f"mediaassist-file-{uuid.uuid4().hex}"
        files[placeholder] = entry
        parts.append({"type": "image_url", "image_url": {"url": placeholder}})
    return parts, files


def json_payload(body: dict[str, Any], files: dict[str, dict[str, Any]]) -> Payload:
    """The JSON body, each placeholder replaced by its file's data URL as the body is sent."""

    @contextmanager
    def payload() -> Iterator[dict[str, Any]]:
        if not files:
            yield {"json": body}
            return
        pieces = _split_on(json.dumps(body, ensure_ascii=False), list(files))
        length = sum(len(p.encode()) if isinstance(p, str) else _data_url_length(p) for p in pieces)
        yield {"content": _stream_pieces(pieces),
               "headers": {"Content-Type": "application/json", "Content-Length": str(length)}}

    def _split_on(text: str, placeholders: list[str]) -> list[str | dict[str, Any]]:
        pieces: list[str | dict[str, Any]] = []
        for placeholder in placeholders:
            before, _, text = text.partition(placeholder)
            pieces += [before, files[placeholder]]
        return [*pieces, text]

    return payload


def _data_url_length(entry: dict[str, Any]) -> int:
    return len(_data_url_prefix(entry)) + 4 * -(-int(entry["size"]) // 3)


def _data_url_prefix(entry: dict[str, Any]) -> bytes:
    return f"data:{entry['mime']};base64,".encode()


async def _stream_pieces(pieces: list[str | dict[str, Any]]) -> AsyncIterator[bytes]:
    for piece in pieces:
        if isinstance(piece, str):
            yield piece.encode()
            continue
        yield _data_url_prefix(piece)
        for block in iter_file_chunks(piece["path"], B64_CHUNK):
            yield base64.b64encode(block)


def edit_payload(fields: dict[str, Any], entries: list[tuple[str, dict[str, Any]]]) -> Payload:
    """multipart/form-data for images/edits: the fields as text, the files streamed from disk."""
    images = [(name, entry) for name, entry in entries if name != MASK_INPUT]
    if not images:
        raise TaskError(ErrorKind.BAD_INPUT, msg("images_edit needs at least one image input (declare inputs = "
                                                 "[\"image\"] and fill its column)"), retry=False)
    for name, entry in entries:
        if "path" not in entry:
            raise TaskError(ErrorKind.BAD_INPUT, msg("input {name}: images_edit uploads local files; {url} is a URL",
                                                     name=name, url=entry.get('url')), retry=False)
    data = {key: _form_text(value) for key, value in fields.items()}

    @contextmanager
    def payload() -> Iterator[dict[str, Any]]:
        with ExitStack() as stack:
            files = [("image[]" if name != MASK_INPUT else MASK_INPUT,
                      (Path(entry["path"]).name, stack.enter_context(open(entry["path"], "rb")), entry["mime"]))
                     for name, entry in entries]
            yield {"data": data, "files": files}

    return payload


def _form_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
