"""A demo chat web page on 127.0.0.1, shaped like the real ones the web lane drives.

- ``/login`` sets a session cookie (``/login?user=NAME`` is the one-click demo login; without
  ``user`` it shows a form an operator fills in by hand);
- ``/chat`` shows a composer, an optional default-instructions box and the turns; an answer
  streams in over several seconds (the page polls ``/api/poll``), with a stop button meanwhile;
- like the real services, a second generation on the same account before the first has ended is
  refused (HTTP 409, an error banner) and recorded in ``violations``;
- a prompt carrying ``[error]`` streams a little, then the page shows an error in the turn and,
  like Gradio after an exception, leaves its stop button up with no work behind it (a reload
  clears it); a poll that cannot reach the server shows a "connection lost" dialog;
- an attach button uploads images (``POST /api/upload``: checked by content and size, a
  non-image is refused with 415 and an error shown by the composer); the turn shows them, and the
  generation records each file's name, size and SHA-256;
- a "New chat" button empties the page without reloading it; an optional "What's new" modal
  covers the page on every load until its "Got it" button is clicked; the composer can be a real
  rich-text editor (``SiteState.editor_bundle``: a built TipTap bundle) where Enter sends and
  Shift+Enter breaks the line;
- switches, from Python or over HTTP (``POST /_control``): log accounts out, show a rate-limit
  banner, change the default instructions, answer length and durations, the modal. ``GET
  /_control`` returns the generations and violations as JSON, so tests can check the server side
  from another process.
"""

from __future__ import annotations

import hashlib
import html
import json
import random
import secrets
import socket
import struct
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from http import HTTPStatus
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mediaassist.demo_servers import read_json_body
from mediaassist.demo_servers.text import demo_answer

RATE_LIMIT_TEXT = "Too many requests. Please wait a few minutes before trying again."
BUSY_TEXT = "An answer is still being generated in this conversation. Please wait until it finishes."
COOKIE = "demo_session"
DEMO_SITE = "demochat"
ERROR_MARK = "[error]"
ERROR_TEXT = "Something went wrong while generating the answer. (model overloaded)"
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
IMAGE_MAGIC = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg", b"GIF87a": "image/gif",
               b"GIF89a": "image/gif"}


def _one_pixel_png() -> bytes:
    """A valid 1x1 PNG, for answers that show an image."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x80\x00\xff")) + chunk(b"IEND", b""))


PIXEL_PNG = _one_pixel_png()


@dataclass
class Generation:
    gen_id: str
    user: str
    prompt: str
    instructions: str
    started: float
    ends_at: float
    answer: str
    images: list[str] = field(default_factory=list)
    attachments: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    stopped_at: float | None = None

    def end(self) -> float:
        return min(self.ends_at, self.stopped_at) if self.stopped_at is not None else self.ends_at

    def active(self, now: float) -> bool:
        return now < self.end()


@dataclass
class SiteState:
    rate_limited: bool = False
    default_instructions: str | None = None
    answer_words: int = 40
    duration_s: tuple[float, float] = (2.0, 4.0)  # real seconds, drawn per generation
    whats_new: bool = False  # a modal over the page on every load, until "Got it" is clicked
    editor_bundle: Path | None = None  # a built rich-text editor (window.MediaEditor) for the composer
    session_cookie: bool = False  # the login cookie has no expiry (dropped when the browser closes)


class ChatSite:
    """``with ChatSite() as site:`` -- serves on ``site.base_url`` from a daemon thread."""

    def __init__(self, state: SiteState | None = None, duration_fn: Callable[[str], float] | None = None) -> None:
        self.state = state or SiteState()
        self._duration_fn = duration_fn
        self._lock = threading.Lock()
        self.sessions: dict[str, str] = {}  # token -> user
        self.generations: list[Generation] = []
        self.violations: list[dict[str, Any]] = []
        self.uploads: dict[str, dict[str, Any]] = {}  # id -> name, size, sha256, mime, data, user
        self.page_loads = 0  # chat pages served: tells a reload from a page kept open
        self._server = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="demo-chat-site", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address: never bytes
        return f"http://{host}:{port}"

    def start(self) -> ChatSite:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def crash(self) -> None:
        """Die as a crashed server does: listening stops and every open connection is cut."""
        self.stop()
        self._server.cut_connections()

    def __enter__(self) -> ChatSite:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # --- switches (also reachable over HTTP) -----------------------------------------------
    def log_out(self, user: str = "*") -> int:
        """End the sessions of ``user`` (``*``: everyone), as a site does when a login expires."""
        with self._lock:
            gone = [t for t, u in self.sessions.items() if user in ("*", u)]
            for token in gone:
                del self.sessions[token]
        return len(gone)

    def control(self, changes: dict[str, Any]) -> dict[str, Any]:
        if "log_out" in changes:
            self.log_out(str(changes["log_out"]))
        for key in ("rate_limited", "default_instructions", "answer_words", "whats_new"):
            if key in changes:
                setattr(self.state, key, changes[key])
        if "duration_s" in changes:
            low, high = changes["duration_s"]
            self.state.duration_s = (float(low), float(high))
        return self.snapshot()

    def snapshot(self) -> dict[str, Any]:
        now = time.time()
        with self._lock:
            return {
                "generations": [dict(asdict(g), active=g.active(now)) for g in self.generations],
                "violations": list(self.violations),
                "sessions": len(self.sessions),
                "page_loads": self.page_loads,
            }

    # --- the chat itself -------------------------------------------------------------------
    def login(self, user: str) -> str:
        token = secrets.token_urlsafe(16)
        with self._lock:
            self.sessions[token] = user
        return token

    def user_of(self, token: str | None) -> str | None:
        with self._lock:
            return self.sessions.get(token or "")

    def upload(self, user: str, name: str, data: bytes) -> tuple[HTTPStatus, dict[str, Any]]:
        """Keep an attached image, checked by its content and size as a real site does."""
        mime = next((m for magic, m in IMAGE_MAGIC.items() if data.startswith(magic)), None)
        if mime is None:
            return HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": f"{name} is not a supported image (PNG, JPEG or GIF)"}
        if len(data) > MAX_UPLOAD_BYTES:
            return HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": f"{name} is larger than 5 MB"}
        with self._lock:
            upload_id = f"u{len(self.uploads) + 1}"
            self.uploads[upload_id] = {"name": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                                       "mime": mime, "data": data, "user": user}
        return HTTPStatus.OK, {"id": upload_id, "url": f"/uploads/{upload_id}"}

    def upload_of(self, user: str, upload_id: str) -> dict[str, Any] | None:
        with self._lock:
            found = self.uploads.get(upload_id)
        return found if found is not None and found["user"] == user else None

    def generate(self, user: str, prompt: str, instructions: str,
                 attachment_ids: list[str] | None = None) -> tuple[HTTPStatus, dict[str, Any]]:
        now = time.time()
        if self.state.rate_limited:
            return HTTPStatus.TOO_MANY_REQUESTS, {"error": RATE_LIMIT_TEXT}
        attachments = [self.upload_of(user, str(i)) for i in attachment_ids or []]
        if any(a is None for a in attachments):
            return HTTPStatus.BAD_REQUEST, {"error": "unknown attachment"}
        with self._lock:
            running = [g for g in self.generations if g.user == user and g.active(now)]
            if running:
                self.violations.append({"user": user, "at": now, "running": running[0].gen_id})
                return HTTPStatus.CONFLICT, {"error": BUSY_TEXT}
            gen_id = f"g{len(self.generations) + 1}"
            gen = Generation(gen_id=gen_id, user=user, prompt=prompt, instructions=instructions,
                             started=now, ends_at=now + self._duration(prompt),
                             answer=self._answer(gen_id, prompt),
                             images=[f"/img/{gen_id}.png"] if "[image]" in prompt else [],
                             attachments=[{k: a[k] for k in ("name", "size", "sha256", "mime")}
                                          for a in attachments if a is not None],
                             error=ERROR_TEXT if ERROR_MARK in prompt else None)
            self.generations.append(gen)
        return HTTPStatus.OK, {"gen": gen_id}

    def poll(self, user: str, gen_id: str) -> dict[str, Any] | None:
        now = time.time()
        with self._lock:
            gen = next((g for g in self.generations if g.gen_id == gen_id and g.user == user), None)
            if gen is None:
                return None
            span = max(gen.ends_at - gen.started, 1e-9)
            shown = min(1.0, (min(now, gen.end()) - gen.started) / span)
            done = not gen.active(now)
            if gen.error is not None:
                shown = min(shown, 0.3)  # it breaks down part-way
            return {"text": gen.answer[:int(len(gen.answer) * shown)], "done": done,
                    "stopped": gen.stopped_at is not None, "images": gen.images if done else [],
                    "error": gen.error if done else None}

    def count_page_load(self) -> None:
        with self._lock:
            self.page_loads += 1

    def running_of(self, user: str) -> Generation | None:
        """The user's answer still being written, if any (a reloaded page shows it again)."""
        now = time.time()
        with self._lock:
            return next((g for g in self.generations if g.user == user and g.active(now)), None)

    def stop_generation(self, user: str, gen_id: str) -> bool:
        now = time.time()
        with self._lock:
            for gen in self.generations:
                if gen.gen_id == gen_id and gen.user == user and gen.active(now):
                    gen.stopped_at = now
                    return True
        return False

    def _duration(self, prompt: str) -> float:
        if self._duration_fn is not None:
            return self._duration_fn(prompt)
        low, high = self.state.duration_s
        return random.Random(zlib.crc32(prompt.encode())).uniform(low, high)

    def _answer(self, gen_id: str, prompt: str) -> str:
        if self.state.answer_words <= 0:
            return ""
        # About eight words a sentence; the generation id lets tests match answer to request.
        return f"[{gen_id}] {demo_answer(prompt, max(1, self.state.answer_words // 8))}"


class _QuietServer(ThreadingHTTPServer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def cut_connections(self) -> None:
        with self._open_lock:
            connections, self._open = self._open, set()
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already gone
            conn.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser closed mid-response (a recycle, a kill) is normal here, not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler_for(site: ChatSite) -> type[BaseHTTPRequestHandler]:
    class Handler(_ChatHandler):
        pass

    Handler.site = site
    return Handler


class _ChatHandler(BaseHTTPRequestHandler):
    site: ChatSite
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # --- plumbing --------------------------------------------------------------------------
    def _send(self, status: HTTPStatus, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: HTTPStatus, data: Any) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _html(self, page: str) -> None:
        self._send(HTTPStatus.OK, page.encode(), "text/html; charset=utf-8")

    def _redirect(self, where: str, headers: dict[str, str] | None = None) -> None:
        self._send(HTTPStatus.FOUND, b"", "text/plain", {"Location": where, **(headers or {})})


    def _user(self) -> str | None:
        cookie = SimpleCookie(self.headers.get("Cookie", ""))
        return self.site.user_of(cookie[COOKIE].value if COOKIE in cookie else None)

    # --- routes ----------------------------------------------------------------------------
    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/login":
            self._login(query.get("user", "").strip())
        elif url.path in ("/", "/chat"):
            user = self._user()
            if user is None:
                self._redirect("/login")
            else:
                self.site.count_page_load()
                self._html(_chat_page(user, self.site.state, self.site.running_of(user)))
        elif url.path == "/api/poll":
            self._poll(query.get("gen", ""))
        elif url.path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        elif url.path.startswith("/img/"):
            self._send(HTTPStatus.OK, PIXEL_PNG, "image/png")
        elif url.path.startswith("/uploads/"):
            self._uploaded(url.path.rsplit("/", 1)[-1])
        elif url.path == "/editor.js" and self.site.state.editor_bundle is not None:
            self._send(HTTPStatus.OK, self.site.state.editor_bundle.read_bytes(), "text/javascript")
        elif url.path == "/_control":
            self._json(HTTPStatus.OK, self.site.snapshot())
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path == "/api/upload":
            self._upload()
            return
        body = read_json_body(self)
        if path == "/_control":
            self._json(HTTPStatus.OK, self.site.control(body))
            return
        user = self._user()
        if user is None:
            self._json(HTTPStatus.UNAUTHORIZED, {"error": "not logged in"})
        elif path == "/api/generate":
            ids = body.get("attachments", [])
            status, data = self.site.generate(user, str(body.get("prompt", "")), str(body.get("instructions", "")),
                                              [str(i) for i in ids] if isinstance(ids, list) else None)
            self._json(status, data)
        elif path == "/api/stop":
            self._json(HTTPStatus.OK, {"stopped": self.site.stop_generation(user, str(body.get("gen", "")))})
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")

    def _upload(self) -> None:
        user = self._user()
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        if user is None:
            self._json(HTTPStatus.UNAUTHORIZED, {"error": "not logged in"})
            return
        name = self.headers.get("X-Filename") or "file"
        status, reply = self.site.upload(user, name, data)
        self._json(status, reply)

    def _uploaded(self, upload_id: str) -> None:
        user = self._user()
        found = self.site.upload_of(user, upload_id) if user else None
        if found is None:
            self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")
        else:
            self._send(HTTPStatus.OK, found["data"], found["mime"])

    def _login(self, user: str) -> None:
        if not user:
            self._html(LOGIN_PAGE)
            return
        token = self.site.login(user)
        # A persistent cookie (Max-Age) survives a browser restart; a session cookie (as Gradio's
        # access tokens are) only if the client keeps it.
        lifetime = "" if self.site.state.session_cookie else " Max-Age=2592000;"
        cookie = f"{COOKIE}={token}; Path=/;{lifetime} HttpOnly; SameSite=Lax"
        self._redirect("/chat", {"Set-Cookie": cookie})

    def _poll(self, gen_id: str) -> None:
        user = self._user()
        data = self.site.poll(user, gen_id) if user else None
        if user is None:
            self._json(HTTPStatus.UNAUTHORIZED, {"error": "not logged in"})
        elif data is None:
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such generation"})
        else:
            self._json(HTTPStatus.OK, data)


LOGIN_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Demo chat - log in</title></head>
<body><form id="login-form" method="get" action="/login">
<label>Account <input id="user" name="user" autocomplete="off"></label>
<button id="login" type="submit">Log in</button></form></body></html>"""


def _chat_page(user: str, state: SiteState, running: Generation | None) -> str:
    instructions = ""
    if state.default_instructions is not None:
        instructions = ('<label>Default instructions<textarea id="instructions">'
                        f"{html.escape(state.default_instructions)}</textarea></label>")
    # Like the real services, a reload while an answer is being written shows it, still running.
    resume = json.dumps({"gen": running.gen_id, "prompt": running.prompt} if running else None)
    resume = resume.replace("</", "<\\/")  # never close the <script> early
    banner = html.escape(RATE_LIMIT_TEXT) if state.rate_limited else ""
    hidden = "" if state.rate_limited else " hidden"
    rich = state.editor_bundle is not None
    box = ('<div id="prompt-editor" aria-label="Message"></div>' if rich else
           '<textarea id="prompt" rows="4" cols="80" placeholder="Ask anything"></textarea>')
    editor = '<script src="/editor.js"></script>' if rich else ""
    modal = ('<div id="whats-new" role="dialog" aria-modal="true"><h2>What\'s new</h2><p>Answers are now '
             'faster.</p><button id="got-it" type="button">Got it</button></div>') if state.whats_new else ""
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Demo chat</title>
<style>.answer{{white-space:pre-wrap}} [hidden]{{display:none !important}}
#whats-new{{position:fixed;inset:0;background:#fffe;z-index:10;padding:4em}}
.attachment img, .question img{{width:32px;height:32px}}</style>{editor}</head>
<body><header>Logged in as <span id="account">{html.escape(user)}</span>
<button id="new-chat" type="button" aria-label="New chat">New chat</button></header>
<div id="banner" role="alert"{hidden}>{banner}</div>
<div id="connection-lost" role="alertdialog" hidden>Connection lost. Trying to reconnect...</div>
<main id="turns"></main>
<div id="composer">{instructions}
<div id="attachments"></div><div id="attach-error" class="attach-error" role="alert" hidden></div>
{box}
<input id="attach" type="file" accept="image/*" multiple hidden>
<button id="attach-button" type="button" aria-label="Attach images">Attach</button>
<button id="send" type="button">Send</button><button id="stop" type="button" hidden>Stop</button>
</div>{modal}<script>const RESUME = {resume}; const RICH = {json.dumps(rich)};{CHAT_SCRIPT}</script></body></html>"""


CHAT_SCRIPT = """
const $ = (id) => document.getElementById(id);
let current = null;
let attached = [];  // {id, url, name}
const editor = RICH ? window.MediaEditor.create($('prompt-editor'), () => send()) : null;
const promptText = () => editor ? editor.text() : $('prompt').value;
const clearPrompt = () => { if (editor) editor.clear(); else $('prompt').value = ''; };
function banner(text) { $('banner').textContent = text; $('banner').hidden = false; }
function busy(on) { $('stop').hidden = !on; $('send').disabled = on; }
async function post(path, data) {
  const r = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'},
                               body: JSON.stringify(data)});
  if (r.status === 401) { location.href = '/login'; throw new Error('logged out'); }
  return [r.status, await r.json()];
}
async function attach(files) {
  $('attach-error').hidden = true;
  for (const file of files) {
    const r = await fetch('/api/upload', {method: 'POST', headers: {'X-Filename': file.name}, body: file});
    const d = await r.json();
    if (r.status !== 200) { $('attach-error').textContent = d.error; $('attach-error').hidden = false; continue; }
    attached.push({id: d.id, url: d.url, name: file.name});
    const chip = document.createElement('div'); chip.className = 'attachment ready';
    const img = document.createElement('img'); img.src = d.url; img.alt = file.name;
    chip.append(img); $('attachments').append(chip);
  }
  $('attach').value = '';
}
async function send() {
  if (current) return;
  const prompt = promptText();
  const box = $('instructions');
  const files = attached;
  const [status, data] = await post('/api/generate', {prompt, instructions: box ? box.value : '',
                                                      attachments: files.map(f => f.id)});
  if (status !== 200) { banner(data.error); return; }
  clearPrompt(); attached = []; $('attachments').replaceChildren();
  follow(data.gen, prompt, files);
}
function follow(gen, prompt, files) {
  const turn = document.createElement('div'); turn.className = 'turn';
  const q = document.createElement('div'); q.className = 'question'; q.textContent = prompt;
  for (const f of files || []) {
    const img = document.createElement('img'); img.src = f.url; img.alt = f.name; q.append(img);
  }
  const a = document.createElement('div'); a.className = 'answer';
  turn.append(q, a); $('turns').append(turn);
  current = {gen, turn, a}; busy(true);
  poll(current);
}
async function poll(c) {
  let r;
  try { r = await fetch('/api/poll?gen=' + c.gen); }
  catch (e) { $('connection-lost').hidden = false; setTimeout(() => poll(c), 1000); return; }
  $('connection-lost').hidden = true;
  if (r.status === 401) { location.href = '/login'; return; }
  const d = await r.json();
  if (c !== current) return;  // a new chat was started meanwhile
  c.a.textContent = d.text; c.a.dataset.raw = d.text;
  if (!d.done) { setTimeout(() => poll(c), 150); return; }
  if (d.error) {
    const e = document.createElement('div'); e.className = 'error'; e.setAttribute('role', 'alert');
    e.textContent = d.error; c.turn.append(e);
    return;  // the stop button stays up with nothing behind it, until the page is reloaded
  }
  for (const src of d.images) { const img = document.createElement('img'); img.src = src; c.a.append(img); }
  const done = document.createElement('div'); done.className = 'answer-actions';
  done.textContent = d.stopped ? 'stopped' : 'copy';
  c.turn.append(done); busy(false); current = null;
}
$('send').addEventListener('click', send);
if (!RICH) $('prompt').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); send(); }
});
$('attach-button').addEventListener('click', () => $('attach').click());
$('attach').addEventListener('change', () => attach([...$('attach').files]));
$('new-chat').addEventListener('click', () => { if (!current) $('turns').replaceChildren(); });
if ($('got-it')) $('got-it').addEventListener('click', () => $('whats-new').remove());
if (RESUME) follow(RESUME.gen, RESUME.prompt, []);
$('stop').addEventListener('click', () => { if (current) post('/api/stop', {gen: current.gen}); });
"""


TEMPLATE_ORIGIN = "http://127.0.0.1:8765"  # the origin written in resources/sites/demochat.toml


def write_site_profile(base_url: str, folder: Path, site: str = DEMO_SITE) -> Path:
    """The shipped demochat profile, pointed at a running ``ChatSite``, saved as ``folder/<site>.toml``."""
    from mediaassist.core.paths import RESOURCES, make_private_dir

    text = (RESOURCES / "sites" / "demochat.toml").read_text(encoding="utf-8")
    text = text.replace(TEMPLATE_ORIGIN, base_url).replace('name = "demochat"', f'name = "{site}"')
    path = make_private_dir(folder) / f"{site}.toml"
    path.write_text(text, encoding="utf-8")
    return path
