"""The local OpenAI-compatible server, driven through litellm over real HTTP on 127.0.0.1.

Besides checking the server, these tests pin down how the installed litellm reports each kind
of failure, so code that classifies failures can rely on the exception classes asserted here.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from llm_server import LocalModelServer, Reply

litellm = pytest.importorskip("litellm")
litellm.suppress_debug_info = True

# Noise from litellm's own use of pydantic, not from anything tested here.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Accessing the 'model_:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:.*is using the `ReadOnly` qualifier:UserWarning"),
]

MESSAGES = [{"role": "user", "content": "write a spec for a spin lock"}]


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test here that opens a connection anywhere but 127.0.0.1."""
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in ("127.0.0.1", "::1", "localhost"):
            raise AssertionError(f"test tried to reach {address!r}")
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


def ask(server: LocalModelServer, model: str = "tiny", **kwargs: Any) -> Any:
    """One litellm call at the local server; litellm's own retries are off unless a test asks."""
    args: dict[str, Any] = {
        "model": f"openai/{model}",
        "api_base": server.base_url,
        "api_key": "sk-local",
        "messages": MESSAGES,
        "num_retries": 0,
        "max_retries": 0,
        "timeout": 10,
    }
    args.update(kwargs)
    return litellm.completion(**args)


def test_text_answer_usage_and_request_record(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", Reply.text("---- MODULE Spin ----\n====", prompt_tokens=11, completion_tokens=4))
    response = ask(model_server)
    assert response.choices[0].message.content == "---- MODULE Spin ----\n===="
    assert response.choices[0].finish_reason == "stop"
    usage = response.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (11, 4, 15)
    assert model_server.count() == model_server.count("tiny") == 1
    request = model_server.requests[0]
    assert (request.method, request.path, request.model) == ("POST", "/v1/chat/completions", "tiny")
    assert request.body is not None and request.body["messages"] == MESSAGES
    assert request.headers["authorization"] == "Bearer sk-local"
    assert model_server.errors == []


def test_reply_order_queue_then_callable_then_default(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", "first", Reply.text("second"))
    assert ask(model_server).choices[0].message.content == "first"
    assert ask(model_server).choices[0].message.content == "second"
    assert model_server.pending() == 0
    assert ask(model_server).choices[0].message.content == "ok"  # the default reply
    model_server.respond(lambda body: Reply.text(body["messages"][-1]["content"].upper()))
    assert ask(model_server).choices[0].message.content == MESSAGES[-1]["content"].upper()
    model_server.enqueue("other", "for other")  # queues are per model name
    assert ask(model_server, model="other").choices[0].message.content == "for other"
    assert ask(model_server, model="other").choices[0].message.content == MESSAGES[-1]["content"].upper()
    assert (model_server.count(), model_server.count("tiny"), model_server.count("other")) == (6, 4, 2)


def test_default_token_counts_are_word_counts(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", Reply.text("three little words"))
    usage = ask(model_server).usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (len(MESSAGES[0]["content"].split()), 3)


def test_rate_limit_raises_rate_limit_error_with_retry_after(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", Reply.status(429, retry_after=1.5))
    with pytest.raises(litellm.RateLimitError) as caught:
        ask(model_server)
    exc = caught.value
    assert exc.status_code == 429
    # The server's headers reach the exception as litellm_response_headers (an httpx.Headers);
    # exc.response is a stand-in built by litellm and carries none of them.
    assert exc.litellm_response_headers["retry-after"] == "1.5"
    assert exc.litellm_response_headers["retry-after-ms"] == "1500"
    assert "retry-after" not in exc.response.headers
    assert model_server.count() == 1


@pytest.mark.parametrize(
    ("code", "exception_name"),
    [
        (400, "BadRequestError"),
        (401, "AuthenticationError"),
        (404, "NotFoundError"),
        (500, "InternalServerError"),
        (503, "ServiceUnavailableError"),
        (529, "APIError"),  # "overloaded": no dedicated class on the openai route
    ],
)
def test_http_errors_map_to_litellm_exceptions(model_server: LocalModelServer, code: int, exception_name: str) -> None:
    model_server.enqueue("tiny", Reply.status(code))
    with pytest.raises(Exception) as caught:
        ask(model_server)
    assert type(caught.value) is getattr(litellm.exceptions, exception_name)
    assert getattr(caught.value, "status_code", None) == code
    assert model_server.count() == 1


def test_all_call_failures_share_openai_api_error_as_base() -> None:
    import openai

    for name in ("RateLimitError", "InternalServerError", "ServiceUnavailableError", "APIError", "Timeout",
                 "BadRequestError", "MidStreamFallbackError"):
        assert issubclass(getattr(litellm.exceptions, name), openai.APIError), name
    # ...but not litellm.APIError, which is only the catch-all for unclassified statuses.
    assert not issubclass(litellm.RateLimitError, litellm.APIError)


def test_without_retry_kwargs_litellm_tries_three_times(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", *[Reply.status(500, retry_after=0.01)] * 5)
    with pytest.raises(litellm.InternalServerError):
        ask(model_server, num_retries=None, max_retries=None)
    assert model_server.count() == 3  # the openai client's default of 2 retries


@pytest.mark.parametrize("kwargs", [{"num_retries": 0, "max_retries": None}, {"num_retries": None, "max_retries": 0}])
def test_either_retry_kwarg_at_zero_stops_retries(model_server: LocalModelServer, kwargs: dict[str, Any]) -> None:
    model_server.enqueue("tiny", *[Reply.status(429, retry_after=0.01)] * 5)
    with pytest.raises(litellm.RateLimitError):
        ask(model_server, **kwargs)
    assert model_server.count() == 1


def test_delay_past_the_client_timeout_raises_timeout(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", Reply.delay(5, Reply.text("too late")))
    started = time.monotonic()
    with pytest.raises(litellm.Timeout) as caught:
        ask(model_server, timeout=0.3)
    assert time.monotonic() - started < 4
    assert caught.value.status_code == 408
    assert model_server.count() == 1


def test_delay_within_the_timeout_answers(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", Reply.delay(0.2, Reply.text("in time")))
    assert ask(model_server, timeout=5).choices[0].message.content == "in time"


@pytest.mark.parametrize("raw", [b'{"choices": [', b"<html>502 Bad Gateway</html>", b'{"foo": 1}'])
def test_malformed_body_raises_internal_server_error(model_server: LocalModelServer, raw: bytes) -> None:
    model_server.enqueue("tiny", Reply.malformed(raw))
    with pytest.raises(litellm.InternalServerError) as caught:
        ask(model_server)
    assert caught.value.status_code == 500  # litellm reports it as a 500 although the server sent 200


def test_dropped_connection_raises_internal_server_error(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", Reply.disconnect())
    with pytest.raises(litellm.InternalServerError, match="Connection error"):
        ask(model_server)


def test_empty_answer_comes_back_as_empty_string(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", Reply.empty())
    response = ask(model_server)
    assert response.choices[0].message.content == ""
    assert response.usage.completion_tokens == 0


def test_slow_stream_assembles_full_text_and_usage(model_server: LocalModelServer) -> None:
    text = "---- MODULE Spin ----\nVARIABLE locked\n===="
    model_server.enqueue("tiny", Reply.slow_stream(text, chunk_delay=0.02, chunks=5))
    stream = ask(model_server, stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(pieces) == 5 and "".join(pieces) == text
    assert chunks[-1].usage.completion_tokens == len(text.split())
    rebuilt = litellm.stream_chunk_builder(chunks, messages=MESSAGES)
    assert rebuilt.choices[0].message.content == text
    body = model_server.requests[0].body
    assert body is not None and body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_plain_text_reply_streams_too(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", Reply.text("one two three"))
    chunks = list(ask(model_server, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "one two three"


def test_slow_stream_on_a_non_streaming_request_is_one_answer(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", Reply.slow_stream("a b c", chunk_delay=0.01))
    assert ask(model_server).choices[0].message.content == "a b c"


def test_stream_stalling_past_the_timeout_raises_mid_stream_error(model_server: LocalModelServer) -> None:
    # litellm's timeout bounds each read, not the whole stream: a gap longer than it fails the
    # stream with MidStreamFallbackError, a subclass of ServiceUnavailableError.
    model_server.enqueue("tiny", Reply.slow_stream("a b c d", chunk_delay=2, chunks=2))
    with pytest.raises(litellm.exceptions.MidStreamFallbackError) as caught:
        for _ in ask(model_server, stream=True, timeout=0.3):
            pass
    assert isinstance(caught.value, litellm.ServiceUnavailableError)


def test_status_reply_on_a_streaming_request(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", Reply.status(429))
    with pytest.raises(litellm.RateLimitError):
        list(ask(model_server, stream=True))


def test_requests_are_served_concurrently(model_server: LocalModelServer) -> None:
    # Each request waits until the other has arrived: this only succeeds if both are handled at once.
    barrier = threading.Barrier(2, timeout=10)

    def both_at_once(body: dict[str, Any]) -> Reply:
        barrier.wait()
        return Reply.text("together")

    model_server.respond(both_at_once)
    answers: list[str] = []
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            answers.append(ask(model_server, timeout=15).choices[0].message.content)
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert failures == [] and answers == ["together", "together"]
    assert model_server.max_in_flight == 2
    assert model_server.errors == []


def test_a_delayed_request_does_not_hold_up_others(model_server: LocalModelServer) -> None:
    # Long enough that the other request is answered first even on a loaded machine (at 1 s it
    # was not, once, with the whole suite running on 2 cores).
    model_server.enqueue("slow", Reply.delay(6, Reply.text("slow answer")))
    slow: list[str] = []
    thread = threading.Thread(target=lambda: slow.append(ask(model_server, model="slow").choices[0].message.content))
    thread.start()
    deadline = time.monotonic() + 10
    while model_server.count("slow") == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ask(model_server).choices[0].message.content == "ok"
    # The server counts a request out just after its last byte is sent: give it that moment.
    deadline = time.monotonic() + 5
    while model_server.in_flight > 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert model_server.in_flight == 1 and slow == []  # the delayed one is still being held
    thread.join(timeout=15)
    assert slow == ["slow answer"]
    assert model_server.max_in_flight == 2


def test_response_format_is_passed_through(model_server: LocalModelServer) -> None:
    ask(model_server, response_format={"type": "json_object"}, temperature=0.2, max_tokens=64)
    body = model_server.requests[0].body
    assert body is not None
    assert body["response_format"] == {"type": "json_object"}
    assert body["temperature"] == 0.2 and body["max_tokens"] == 64


def test_cost_of_an_unpriced_model_is_none_and_a_registered_price_applies(model_server: LocalModelServer) -> None:
    response = ask(model_server)
    assert response._hidden_params["response_cost"] is None
    with pytest.raises(litellm.exceptions.ModelNotMappedError):
        litellm.completion_cost(completion_response=response)

    litellm.register_model({"openai/priced-tiny": {
        "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "litellm_provider": "openai", "mode": "chat",
    }})
    model_server.enqueue("priced-tiny", Reply.text("x", prompt_tokens=1000, completion_tokens=500))
    priced = ask(model_server, model="priced-tiny")
    assert priced._hidden_params["response_cost"] == pytest.approx(0.002)
    assert litellm.completion_cost(completion_response=priced) == pytest.approx(0.002)

    # A price can also be given per call.
    model_server.enqueue("tiny", Reply.text("x", prompt_tokens=1000, completion_tokens=500))
    per_call = ask(model_server, input_cost_per_token=3e-6, output_cost_per_token=4e-6)
    assert per_call._hidden_params["response_cost"] == pytest.approx(0.005)


def test_models_endpoint_and_unknown_routes(model_server: LocalModelServer) -> None:
    model_server.enqueue("tiny", "x")
    with urllib.request.urlopen(model_server.base_url + "/models", timeout=5) as reply:
        listing = json.load(reply)
    assert listing["object"] == "list" and [m["id"] for m in listing["data"]] == ["tiny"]
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(model_server.base_url + "/embeddings", data=b"{}", timeout=5)
    assert caught.value.code == 404 and "error" in json.load(caught.value)


def _raw_request(server: LocalModelServer, body: dict[str, Any]) -> socket.socket:
    data = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: local\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(data) + data)
    return sock


def _wait_idle(server: LocalModelServer) -> None:
    deadline = time.monotonic() + 10
    while server.in_flight and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.mark.parametrize("stream", [True, False])
def test_client_vanishing_mid_reply_is_harmless(model_server: LocalModelServer, stream: bool,
                                                capfd: pytest.CaptureFixture[str]) -> None:
    if stream:
        model_server.enqueue("tiny", Reply.slow_stream("word " * 200, chunk_delay=0.02, chunks=40))
    else:
        model_server.enqueue("tiny", Reply.text("word " * 400_000))  # larger than the socket buffers
    sock = _raw_request(model_server, {"model": "tiny", "messages": MESSAGES, "stream": stream})
    assert sock.recv(64).startswith(b"HTTP/1.0 200")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # reset, not FIN
    sock.close()
    _wait_idle(model_server)
    assert model_server.in_flight == 0 and model_server.errors == []
    assert "Traceback" not in capfd.readouterr().err
    assert ask(model_server).choices[0].message.content == "ok"  # still serving


def test_stop_cuts_short_a_pending_delay() -> None:
    server = LocalModelServer().start()
    server.enqueue("tiny", Reply.delay(60, Reply.text("never")))
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            ask(server, timeout=30)
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    deadline = time.monotonic() + 10
    while server.in_flight == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    server.stop()
    thread.join(timeout=10)
    assert time.monotonic() - started < 5
    assert len(failures) == 1 and isinstance(failures[0], litellm.InternalServerError)
    with pytest.raises(RuntimeError):
        server.base_url  # noqa: B018


def test_a_failing_reply_script_is_a_500_and_is_recorded(model_server: LocalModelServer) -> None:
    def broken(body: dict[str, Any]) -> Reply:
        raise ValueError("script bug")

    model_server.respond(broken)
    with pytest.raises(litellm.InternalServerError, match="script bug"):
        ask(model_server)
    assert [type(e) for e in model_server.errors] == [ValueError]


def test_context_manager_gives_distinct_ports() -> None:
    with LocalModelServer() as a, LocalModelServer() as b:
        assert a.base_url != b.base_url
        assert a.base_url.startswith("http://127.0.0.1:") and a.base_url.endswith("/v1")
