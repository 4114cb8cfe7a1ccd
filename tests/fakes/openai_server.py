"""A small OpenAI-compatible HTTP server for tests.

It speaks real HTTP on 127.0.0.1 (port 0, so parallel runs never collide), so the
``openai`` client is exercised end to end: URL building, headers, JSON encoding,
status handling and timeouts. Nothing here reaches the internet.

Default behaviour:

* ``POST /v1/embeddings``: a deterministic, L2-normalised vector per input text,
  of the requested ``dimensions`` (else ``default_dims``); ``input`` may be a string
  or a list; ``encoding_format="base64"`` is honoured like the real API.
* ``POST /v1/chat/completions``: ``chat_reply`` (a JSON object) serialised as the
  message content, in the real response shape; ``set_chat_handler`` derives the
  content from the request instead.

Tests script departures from the default with a FIFO queue per endpoint::

    fake.enqueue("chat", status=500, body={"error": {"message": "boom"}})
    fake.enqueue("chat", delay=2.0)          # sleep first: client timeouts
    fake.enqueue("chat", raw="not json")     # a 200 whose body is not JSON
    fake.enqueue("chat", content='{"verdict": "consistent"}')
    fake.enqueue("embeddings", dims=8)       # wrong-length vectors
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import struct
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, NamedTuple

Endpoint = Literal["chat", "embeddings"]
ChatHandler = Callable[[dict[str, Any]], str]

_PATHS: dict[str, Endpoint] = {
    "/v1/chat/completions": "chat",
    "/v1/embeddings": "embeddings",
}


class RecordedRequest(NamedTuple):
    path: str
    headers: dict[str, str]  # keys lower-cased
    json: Any  # the decoded body, or None when it was not JSON


@dataclass
class ScriptedReply:
    """One scripted answer; fields left at their defaults fall back to normal behaviour."""

    status: int = 200
    body: Any = None  # the whole JSON response body, replacing the generated one
    raw: str | bytes | None = None  # the raw response body, sent as application/json
    delay: float = 0.0  # seconds to wait before answering
    content: str | None = None  # chat: the message content
    finish_reason: str = "stop"  # chat
    refusal: str | None = None  # chat: a refusal instead of content
    dims: int | None = None  # embeddings: vector length, overriding the request
    reverse: bool = False  # embeddings: list data in reverse order (indices stay true)


def fake_vector(text: str, dims: int) -> list[float]:
    """The deterministic unit vector the fake returns for ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    rng = random.Random(seed)
    values = [rng.gauss(0.0, 1.0) for _ in range(dims)]
    norm = sum(v * v for v in values) ** 0.5 or 1.0
    return [v / norm for v in values]


class FakeOpenAI:
    def __init__(self, *, default_dims: int = 16, chat_reply: dict[str, Any] | None = None) -> None:
        self.default_dims = default_dims
        # Holds the keys of every built-in schema so summarize and arbitrate both succeed.
        self.chat_reply: dict[str, Any] = chat_reply or {
            "summary": "A fake summary.",
            "verdict": "consistent",
            "reason": "The fake server always agrees.",
            "memories": [],
        }
        self.requests: list[RecordedRequest] = []
        self._queues: dict[Endpoint, deque[ScriptedReply]] = {
            "chat": deque(),
            "embeddings": deque(),
        }
        self._chat_handler: ChatHandler | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0

    # --- lifecycle -------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        self._stopping.clear()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        # A short poll interval keeps stop() (and so every test's teardown) fast.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping on a scripted delay
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # --- scripting -------------------------------------------------------------
    def enqueue(self, endpoint: Endpoint, **reply: Any) -> None:
        if endpoint not in self._queues:
            raise ValueError(f"unknown endpoint {endpoint!r}; use 'chat' or 'embeddings'")
        with self._lock:
            self._queues[endpoint].append(ScriptedReply(**reply))

    def set_chat_handler(self, handler: ChatHandler | None) -> None:
        self._chat_handler = handler

    def requests_to(self, endpoint: Endpoint) -> list[RecordedRequest]:
        return [r for r in self.requests if _PATHS.get(r.path) == endpoint]

    # --- request handling (called from server threads) --------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self, endpoint: Endpoint) -> ScriptedReply:
        with self._lock:
            queue = self._queues[endpoint]
            return queue.popleft() if queue else ScriptedReply()

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}-fake-{self._counter}"

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _embeddings_body(self, request: dict[str, Any], reply: ScriptedReply) -> dict[str, Any]:
        inputs = request.get("input", [])
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        dims = reply.dims or request.get("dimensions") or self.default_dims
        as_base64 = request.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": _encode(fake_vector(str(t), dims), as_base64),
            }
            for i, t in enumerate(texts)
        ]
        if reply.reverse:
            data.reverse()
        tokens = sum(len(str(t).split()) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": request.get("model", "fake-embedding"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _chat_body(self, request: dict[str, Any], reply: ScriptedReply) -> dict[str, Any]:
        content: str | None
        if reply.refusal is not None:
            content = None
        elif reply.content is not None:
            content = reply.content
        elif self._chat_handler is not None:
            content = self._chat_handler(request)
        else:
            content = json.dumps(self.chat_reply)
        return {
            "id": self._next_id("chatcmpl"),
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": request.get("model", "fake-chat"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": reply.refusal},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }


def _encode(vector: list[float], as_base64: bool) -> list[float] | str:
    if not as_base64:
        return vector
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")


def _make_handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep pytest output clean

        def do_GET(self) -> None:
            self._read_and_record()
            self._send_json(404, {"error": {"message": f"no route for GET {self.path}"}})

        def do_POST(self) -> None:
            body = self._read_and_record()
            endpoint = _PATHS.get(self.path)
            if endpoint is None:
                self._send_json(404, {"error": {"message": f"no route for POST {self.path}"}})
                return
            reply = fake._next_reply(endpoint)
            fake._wait(reply.delay)
            self._answer(endpoint, body if isinstance(body, dict) else {}, reply)

        def _answer(self, endpoint: Endpoint, body: dict[str, Any], reply: ScriptedReply) -> None:
            if reply.raw is not None:
                raw = reply.raw.encode("utf-8") if isinstance(reply.raw, str) else reply.raw
                self._send(reply.status, raw)
            elif reply.body is not None:
                self._send_json(reply.status, reply.body)
            elif endpoint == "embeddings":
                self._send_json(reply.status, fake._embeddings_body(body, reply))
            else:
                self._send_json(reply.status, fake._chat_body(body, reply))

        def _read_and_record(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            fake._record(RecordedRequest(self.path, headers, body))
            return body

        def _send_json(self, status: int, payload: Any) -> None:
            self._send(status, json.dumps(payload).encode("utf-8"))

        def _send(self, status: int, raw: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test); nothing to tell it

    return Handler
