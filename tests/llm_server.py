"""A local OpenAI-compatible HTTP server for tests: scripted replies, real sockets, no keys.

Tests point an OpenAI-compatible client (litellm's ``openai/<name>`` route, the openai SDK,
plain httpx) at ``server.base_url`` and script what each request gets back::

    with LocalModelServer() as server:
        server.enqueue("tiny", Reply.status(429, retry_after=1), Reply.text("ok"))
        ...  # first request for model "tiny" is rate limited, the second answers "ok"

How a reply is chosen, per request, in order:

1. the next reply queued with :meth:`LocalModelServer.enqueue` for the request's ``model``
   (the ``model`` field the client sends: litellm's ``openai/tiny`` sends ``tiny``);
2. the callable set with :meth:`LocalModelServer.respond`, called with the request's JSON body;
3. the server's default reply (``Reply.text("ok")`` unless given to the constructor).

Endpoints: ``POST /v1/chat/completions`` (and ``/chat/completions``), non-streaming or, when
the body has ``"stream": true``, server-sent events of ``chat.completion.chunk`` objects ending
with ``data: [DONE]``; ``GET /v1/models`` (and ``/models``). Anything else gets a 404 with an
OpenAI-style error body. Only the standard library is used.
"""

from __future__ import annotations

import http.server
import json
import math
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

__all__ = ["LocalModelServer", "RecordedRequest", "Reply", "ReplyFn"]

# Errors that only mean the client went away: never worth a traceback.
_DISCONNECTS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout, TimeoutError)

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    502: "server_error",
    503: "service_unavailable",
    504: "timeout_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    429: "Rate limit reached for requests",
    529: "Overloaded",
}


def _count_words(text: str) -> int:
    return len(text.split())


@dataclass(frozen=True)
class Reply:
    """What the server sends back for one request. Build it with the class-method constructors."""

    kind: str
    content: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    code: int = 200
    message: str = ""
    retry_after: float | None = None
    seconds: float = 0.0
    then: Reply | None = None
    raw: bytes = b""
    chunk_delay: float = 0.0
    chunks: int = 4

    @classmethod
    def text(
        cls,
        content: str,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        finish_reason: str = "stop",
    ) -> Reply:
        """A normal answer. Token counts default to word counts (of the prompt and of ``content``)."""
        return cls("text", content=content, prompt_tokens=prompt_tokens,
                   completion_tokens=completion_tokens, finish_reason=finish_reason)

    @classmethod
    def status(cls, code: int, message: str | None = None, retry_after: float | None = None) -> Reply:
        """An HTTP error with an OpenAI-style ``{"error": {...}}`` body.

        ``retry_after`` (seconds) adds ``Retry-After`` and ``retry-after-ms`` headers.
        """
        if message is None:
            message = _DEFAULT_MESSAGES.get(code) or _phrase(code)
        return cls("status", code=code, message=message, retry_after=retry_after)

    @classmethod
    def delay(cls, seconds: float, then: Reply) -> Reply:
        """Wait ``seconds`` before sending ``then`` (only this request waits; the server stays free)."""
        return cls("delay", seconds=seconds, then=then)

    @classmethod
    def malformed(cls, raw: bytes) -> Reply:
        """Status 200 with ``raw`` as the body (``Content-Type: application/json``), whatever it is."""
        return cls("malformed", raw=raw)

    @classmethod
    def empty(cls) -> Reply:
        """Status 200, well-formed, with ``choices[0].message.content == ""`` and no completion tokens."""
        return cls("text", content="", completion_tokens=0)

    @classmethod
    def disconnect(cls) -> Reply:
        """Close the connection without sending anything (a dropped connection, as seen by the client)."""
        return cls("disconnect")

    @classmethod
    def slow_stream(cls, content: str, chunk_delay: float, chunks: int = 4) -> Reply:
        """Send ``content`` in ``chunks`` pieces, ``chunk_delay`` seconds apart.

        On a streaming request that is the event stream; on a non-streaming one the same total
        wait is spent before one ordinary JSON answer.
        """
        return cls("stream", content=content, chunk_delay=chunk_delay, chunks=max(1, chunks))


ReplyFn = Callable[[dict[str, Any]], "Reply | str"]


def _phrase(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return f"HTTP {code}"


def _as_reply(value: Reply | str) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    raise TypeError(f"expected a Reply or a str, got {type(value).__name__}")


def _split(content: str, pieces: int) -> list[str]:
    """``content`` in at most ``pieces`` non-empty consecutive parts ("" gives [])."""
    if not content:
        return []
    size = max(1, math.ceil(len(content) / pieces))
    return [content[i : i + size] for i in range(0, len(content), size)]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it. ``body`` is the parsed JSON (None if absent or not JSON)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: dict[str, Any] | None
    raw: bytes = b""
    at: float = field(default_factory=time.monotonic)

    @property
    def model(self) -> str | None:
        if isinstance(self.body, dict):
            value = self.body.get("model")
            return value if isinstance(value, str) else None
        return None


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: LocalModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Called for exceptions that escaped the handler; disconnects are normal, others are kept.
        exc = sys.exc_info()[1]
        if exc is not None and not isinstance(exc, _DISCONNECTS):
            self.owner._record_error(exc)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.0"  # one request per connection; a stream ends when the socket closes
    server_version = "LocalModelServer/1"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    # ---- routing -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0].rstrip("/")
        raw = b""
        if method == "POST":
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        record = RecordedRequest(method, path, {k.lower(): v for k, v in self.headers.items()},
                                 body if isinstance(body, dict) else None, raw)
        owner._enter(record)
        try:
            if method == "POST" and path in ("/v1/chat/completions", "/chat/completions"):
                if record.body is None:
                    self._send_status(Reply.status(400, "the request body is not a JSON object"))
                else:
                    self._completion(record.body)
            elif method == "GET" and path in ("/v1/models", "/models"):
                self._send_json(200, {"object": "list", "data": [
                    {"id": name, "object": "model", "created": 0, "owned_by": "local"}
                    for name in owner.model_names()
                ]})
            else:
                self._send_status(Reply.status(404, f"no route for {method} {path}"))
        except _DISCONNECTS:
            pass
        finally:
            owner._leave()

    # ---- chat completions ----------------------------------------------------------------------

    def _completion(self, body: dict[str, Any]) -> None:
        owner = self.server.owner
        try:
            reply = owner._next_reply(body)
        except Exception as exc:  # a scripting callable that raised: tell the client and the test
            owner._record_error(exc)
            self._send_status(Reply.status(500, f"reply script failed: {exc!r}"))
            return
        stream = body.get("stream") is True
        while reply.kind == "delay":
            if owner._stopping.wait(reply.seconds):
                return
            assert reply.then is not None
            reply = reply.then
        if reply.kind == "disconnect":
            self.close_connection = True
        elif reply.kind == "status":
            self._send_status(reply)
        elif reply.kind == "malformed":
            self._send_raw(200, reply.raw, "application/json")
        elif stream:
            self._send_stream(body, reply)
        else:
            if reply.kind == "stream" and owner._stopping.wait(reply.chunk_delay * reply.chunks):
                return
            self._send_json(200, self._completion_object(body, reply))

    def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, int]:
        prompt = reply.prompt_tokens
        if prompt is None:
            prompt = 0
            for message in body.get("messages") or []:
                content = message.get("content") if isinstance(message, dict) else None
                if isinstance(content, str):
                    prompt += _count_words(content)
                elif isinstance(content, list):
                    prompt += sum(_count_words(p.get("text", "")) for p in content if isinstance(p, dict))
            prompt = max(1, prompt)
        completion = reply.completion_tokens
        if completion is None:
            completion = _count_words(reply.content)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _completion_object(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "system_fingerprint": "fp_local",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }],
            "usage": self._usage(body, reply),
        }

    def _send_stream(self, body: dict[str, Any], reply: Reply) -> None:
        owner = self.server.owner
        ident = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())
        model = body.get("model", "")
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True

        def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
            event: dict[str, Any] = {
                "id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                "system_fingerprint": "fp_local",
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }
            if include_usage:
                event["usage"] = None
            return event

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        pieces = _split(reply.content, reply.chunks if reply.kind == "stream" else 1)
        delay = reply.chunk_delay if reply.kind == "stream" else 0.0
        self._event(chunk({"role": "assistant", "content": ""}, None))
        for piece in pieces:
            if delay and owner._stopping.wait(delay):
                return
            self._event(chunk({"content": piece}, None))
        self._event(chunk({}, reply.finish_reason))
        if include_usage:
            self._event({"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                         "system_fingerprint": "fp_local", "choices": [], "usage": self._usage(body, reply)})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _event(self, payload: dict[str, Any]) -> None:
        self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
        self.wfile.flush()

    # ---- plain responses -----------------------------------------------------------------------

    def _send_status(self, reply: Reply) -> None:
        payload = {"error": {
            "message": reply.message,
            "type": _ERROR_TYPES.get(reply.code, "api_error" if reply.code >= 500 else "invalid_request_error"),
            "param": None,
            "code": _ERROR_TYPES.get(reply.code) if reply.code in (429, 529) else None,
        }}
        headers = {}
        if reply.retry_after is not None:
            headers["Retry-After"] = f"{reply.retry_after:g}"
            headers["retry-after-ms"] = str(int(round(reply.retry_after * 1000)))
        self._send_json(reply.code, payload, headers)

    def _send_json(self, code: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send_raw(code, json.dumps(payload).encode(), "application/json", headers)

    def _send_raw(self, code: int, data: bytes, content_type: str,
                  headers: Mapping[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


class LocalModelServer:
    """An OpenAI-compatible server on 127.0.0.1 (a free port), serving each request in its own thread."""

    def __init__(self, default: Reply | str = "ok", host: str = "127.0.0.1") -> None:
        self.default = _as_reply(default)
        self.host = host
        self.port = 0
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Reply]] = {}
        self._fallback: ReplyFn | None = None
        self._requests: list[RecordedRequest] = []
        self._errors: list[BaseException] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle -----------------------------------------------------------------------------

    def start(self) -> LocalModelServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer((self.host, 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"LocalModelServer:{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving. Requests still waiting on a delay are cut short (their client sees a disconnect)."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. ``http://127.0.0.1:43123/v1`` (for ``api_base``/``base_url``)."""
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return f"http://{self.host}:{self.port}/v1"

    # ---- scripting -----------------------------------------------------------------------------

    def enqueue(self, model: str, *replies: Reply | str) -> None:
        """Queue replies (a str means ``Reply.text(str)``) for the next requests whose ``model`` is ``model``."""
        converted = [_as_reply(r) for r in replies]
        with self._lock:
            self._queues.setdefault(model, deque()).extend(converted)

    def respond(self, fn: ReplyFn | None) -> None:
        """Set (or with None, clear) the callable that answers requests with nothing queued."""
        with self._lock:
            self._fallback = fn

    def pending(self, model: str | None = None) -> int:
        """How many queued replies are still unused (for ``model``, or for all models)."""
        with self._lock:
            if model is not None:
                return len(self._queues.get(model, ()))
            return sum(len(q) for q in self._queues.values())

    def model_names(self) -> list[str]:
        with self._lock:
            names = set(self._queues)
            names.update(r.model for r in self._requests if r.model)
        return sorted(names) or ["tiny"]

    # ---- what happened -------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def count(self, model: str | None = None) -> int:
        """How many requests arrived (only those whose body names ``model``, if given)."""
        with self._lock:
            if model is None:
                return len(self._requests)
            return sum(1 for r in self._requests if r.model == model)

    @property
    def in_flight(self) -> int:
        """Requests being handled right now."""
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most requests that were ever being handled at the same time."""
        with self._lock:
            return self._max_in_flight

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised while serving (reply scripts, server bugs); client disconnects are not errors."""
        with self._lock:
            return list(self._errors)

    def iter_bodies(self, model: str | None = None) -> Iterator[dict[str, Any]]:
        """The JSON bodies of the requests received (for ``model``, if given)."""
        for r in self.requests:
            if r.body is not None and (model is None or r.model == model):
                yield r.body

    # ---- internals used by the handler ---------------------------------------------------------

    def _enter(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _record_error(self, exc: BaseException) -> None:
        with self._lock:
            self._errors.append(exc)

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        model = body.get("model")
        with self._lock:
            queue = self._queues.get(model) if isinstance(model, str) else None
            if queue:
                return queue.popleft()
            fallback = self._fallback
        if fallback is not None:
            return _as_reply(fallback(body))
        return self.default
