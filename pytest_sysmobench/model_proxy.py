"""The model endpoint an agent's cell serves it: OpenAI-compatible, on loopback, forwarding
through litellm with the configured model and key, which stay outside the sandbox.

The agent is told the endpoint's URL and a token good for its cell alone, never the key; every
request and token is counted here (not as the agent reports it), and a budget of requests,
tokens or dollars, once spent, refuses the rest: the agent's cell is charged for running out.
"""

from __future__ import annotations

import http.server
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .llm import Budget, ModelConfig, _cost, _litellm

#: What a request may carry on to the model; the model's own configured parameters win.
FORWARDED = ("messages", "tools", "tool_choice", "response_format", "stop", "max_tokens", "temperature", "top_p",
             "seed", "parallel_tool_calls")
MAX_REQUEST_BYTES = 8_000_000


@dataclass
class ModelUse:
    """What the agent's cell spent, counted by the endpoint."""

    model: str
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    failed: int = 0
    refused: int = 0
    #: Which limit of the budget was spent (the first request refused names it), or "".
    budget_spent: str = ""
    errors: list[str] = field(default_factory=list)


class ModelEndpoint:
    """One agent cell's endpoint: a thread serving HTTP on 127.0.0.1 while the agent runs."""

    def __init__(self, config: ModelConfig, budget: Budget) -> None:
        self.config = config
        self.budget = budget
        self.token = secrets.token_urlsafe(24)
        self.use = ModelUse(config.name)
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.endpoint = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="agent-model", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def environment(self) -> dict[str, str]:
        """What the agent is told: the usual OpenAI client variables, pointing here."""
        return {"OPENAI_BASE_URL": self.url, "OPENAI_API_BASE": self.url, "OPENAI_API_KEY": self.token,
                "SYSMOBENCH_MODEL": self.config.name, "SYSMOBENCH_MODEL_URL": self.url,
                "SYSMOBENCH_MODEL_TOKEN": self.token}

    def __enter__(self) -> ModelEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _spent(self) -> str:
        """The limit the cell has reached, or ""."""
        use, budget = self.use, self.budget
        if budget.requests is not None and use.requests >= budget.requests:
            return f"{budget.requests} requests"
        if budget.tokens is not None and use.prompt_tokens + use.completion_tokens >= budget.tokens:
            return f"{budget.tokens} tokens"
        if budget.usd is not None and (use.cost_usd or 0.0) >= budget.usd:
            return f"${budget.usd:g}"
        return ""

    def complete(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """One chat completion for the agent: (HTTP status, OpenAI-shaped JSON)."""
        with self._lock:
            spent = self._spent()
            if spent:
                self.use.refused += 1
                self.use.budget_spent = self.use.budget_spent or spent
                return 429, _error(f"this agent's model budget is spent ({spent}): no more requests", "budget_spent")
            self.use.requests += 1
        litellm = _litellm()
        litellm.suppress_debug_info = True
        try:
            kwargs = {**{k: body[k] for k in FORWARDED if k in body}, **self.config.request_kwargs()}
            response = litellm.completion(**kwargs, num_retries=0, max_retries=0, drop_params=True)
        except Exception as exc:  # every provider failure, a missing key included, is the agent's to see
            message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            with self._lock:
                self.use.failed += 1
                self.use.errors = [*self.use.errors, message][-5:]
            return 502, _error(f"the model could not answer: {type(exc).__name__}: {message}", "upstream_error")
        usage = getattr(response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        cost = _cost(self.config, response, prompt, completion)
        with self._lock:
            self.use.prompt_tokens += prompt
            self.use.completion_tokens += completion
            if cost is not None:
                self.use.cost_usd = round((self.use.cost_usd or 0.0) + cost, 8)
        return 200, response.model_dump() if hasattr(response, "model_dump") else dict(response)


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": code, "code": code}}


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    endpoint: ModelEndpoint


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        pass

    def do_GET(self) -> None:
        if not self._authorized():
            return
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": self.server.endpoint.config.name, "object": "model",
                                                         "created": 0, "owned_by": "sysmobench"}]})
        else:
            self._json(404, _error(f"no such path: {self.path}", "not_found"))

    def do_POST(self) -> None:
        if not self._authorized():
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, _error(f"no such path: {self.path} (this endpoint serves /v1/chat/completions)",
                                   "not_found"))
            return
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_REQUEST_BYTES:
            self._json(413 if length else 400, _error(f"a request body of 1 to {MAX_REQUEST_BYTES:,} bytes is expected",
                                                      "invalid_request"))
            return
        try:
            body = json.loads(self.rfile.read(length).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            self._json(400, _error(f"the request is not JSON: {exc}", "invalid_request"))
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._json(400, _error("expected a chat completion request with 'messages'", "invalid_request"))
            return
        status, reply = self.server.endpoint.complete(body)
        if status == 200 and body.get("stream"):
            self._stream(reply)
        else:
            self._json(status, reply)

    def _authorized(self) -> bool:
        given = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if secrets.compare_digest(given.encode(), self.server.endpoint.token.encode()):
            return True
        self._json(401, _error("unknown token: use the one in OPENAI_API_KEY", "invalid_api_key"))
        return False

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status >= 400:
            # A refused request's body may be unread: the connection cannot carry another.
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, reply: dict[str, Any]) -> None:
        """A whole answer as one server-sent chunk and a last one with its usage: what a
        streaming client reads, without holding the model's stream open through the proxy."""
        choices = reply.get("choices") or [{}]
        message = dict(choices[0].get("message") or {})
        calls = [{**call, "index": k} for k, call in enumerate(message.get("tool_calls") or [])]
        delta = {"role": "assistant", "content": message.get("content")} | ({"tool_calls": calls} if calls else {})
        head = {"id": reply.get("id"), "object": "chat.completion.chunk", "created": reply.get("created", int(time.time())),
                "model": reply.get("model")}
        events = [{**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choices[0].get("finish_reason")}],
                   "usage": reply.get("usage")}]
        data = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
