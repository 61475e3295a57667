"""Calling models through litellm: configuration, bounded retries, shared cool-down, cost.

Answers cost money, so every decision here leans towards asking once: litellm's own
retries are switched off (they would multiply behind our back), transient failures are
retried a bounded number of times with backoff, and a rate-limit answer sets a cool-down
file that every pytest-xdist worker honours before its next request to the same route, so
N workers do not hammer a provider that just said "slow down".
"""

from __future__ import annotations


import json
import os
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from .cache import atomic_write_text
from .hints import close_matches



def _litellm() -> Any:
    """litellm, imported on first use; it must never fetch its model price map from the
    network, and it reads that setting once, at its import."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


_GENERATION_KEYS = ("temperature", "max_tokens", "top_p", "seed", "reasoning_effort")


class ModelConfigError(ValueError):
    """The model configuration file is malformed."""


class GenerationError(RuntimeError):
    """No usable answer after the allowed attempts; the cell records it and the session goes on."""

    def __init__(self, message: str, attempts: int = 0, transient: bool = False) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.transient = transient


LOCAL_PLACEHOLDER_KEY = "sk-local-no-key"


@dataclass(frozen=True)
class ModelConfig:
    """One model as the benchmark calls it; names not in the config file are plain litellm ids."""

    name: str
    route: str
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    reasoning_effort: str | None = None
    timeout_s: float = 600.0
    api_base: str | None = None
    api_key_env: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    attempts: int = 3
    backoff_s: float = 10.0
    max_backoff_s: float = 120.0
    input_cost_per_token: float | None = None
    output_cost_per_token: float | None = None
    #: Requests per minute, over every process of the run (a provider's quota); None: no limit.
    rpm: int | None = None
    #: Requests in flight at once when a sweep asks ahead; None: --sysmobench-max-connections.
    max_connections: int | None = None

    def generation_parameters(self) -> dict[str, Any]:
        """What decides the answer (and so the cache key): never keys, bases or timeouts."""
        chosen = {k: getattr(self, k) for k in _GENERATION_KEYS if getattr(self, k) is not None}
        return {**chosen, **dict(self.params)}

    def request_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.route, "timeout": self.timeout_s, **self.generation_parameters()}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise GenerationError(f"model {self.name}: environment variable {self.api_key_env} is not set")
            kwargs["api_key"] = key
        elif self.api_base and self.route.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            # A local OpenAI-compatible server needs no key, but the OpenAI client refuses to
            # start without one: give it a placeholder rather than fail (or retry) the request.
            kwargs["api_key"] = LOCAL_PLACEHOLDER_KEY
        return kwargs


_FIELDS = {
    "route": str, "temperature": float, "max_tokens": int, "top_p": float, "seed": int,
    "reasoning_effort": str, "timeout_s": float, "api_base": str, "api_key_env": str, "attempts": int,
    "backoff_s": float, "max_backoff_s": float, "input_cost_per_token": float, "output_cost_per_token": float,
    "rpm": int, "max_connections": int,
}
_ALIASES = {"timeout": "timeout_s", "url": "api_base", "base_url": "api_base", "model_name": "route",
            "litellm_params": "params", "requests_per_minute": "rpm", "connections": "max_connections"}


def _entry(name: str, raw: Any, where: str) -> ModelConfig:
    if not isinstance(raw, Mapping):
        raise ModelConfigError(f"{where}: expected a mapping of settings")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        key = _ALIASES.get(str(key), str(key))
        if key == "params":
            if not isinstance(value, Mapping):
                raise ModelConfigError(f"{where}.params: expected a mapping of extra litellm parameters")
            values["params"] = dict(value)
            continue
        kind = _FIELDS.get(key)
        if kind is None:
            raise ModelConfigError(f"{where}.{key}: unknown setting (known: {', '.join(sorted(_FIELDS))}, params)")
        try:
            values[key] = kind(value) if value is not None else None
        except (TypeError, ValueError) as exc:
            raise ModelConfigError(f"{where}.{key}: expected {kind.__name__}, got {value!r}") from exc
    values.setdefault("route", name)
    if values.get("attempts", 1) < 1:
        raise ModelConfigError(f"{where}.attempts: must be at least 1")
    for key, upper in (("rpm", 100_000), ("max_connections", 256)):
        if values.get(key) is not None and not 1 <= values[key] <= upper:
            raise ModelConfigError(f"{where}.{key}: must be between 1 and {upper} (leave it out for no limit)")
    return ModelConfig(name=name, **values)


@dataclass(frozen=True)
class ModelCatalog:
    """The configured models and an optional default evaluator; unknown names pass through."""

    models: Mapping[str, ModelConfig]
    evaluator: str | None = None
    source: Path | None = None
    #: Coding agents (``agent:NAME``), each a command run in a sandbox.
    agents: Mapping[str, AgentConfig] = field(default_factory=dict)

    def get(self, name: str) -> ModelConfig:
        return self.models.get(name) or ModelConfig(name=name, route=name)


#: The top-level keys of a model configuration file.
CATALOG_KEYS = ("models", "evaluator", "agents")


@dataclass(frozen=True)
class Budget:
    """What one agent cell may spend through its model endpoint; None: no limit of that kind."""

    requests: int | None = None
    tokens: int | None = None
    usd: float | None = None


@dataclass(frozen=True)
class AgentConfig:
    """A coding agent: a command run in a fresh workspace inside a sandbox (``agent:NAME``)."""

    name: str
    command: tuple[str, ...]
    #: Wall-clock limit of the whole run; past it the agent's process group is killed.
    timeout_s: float = 1800.0
    #: How many times it may call the check tool (P1 and P2 of a spec).
    max_checks: int = 20
    #: Folders it may read besides its workspace and the system's (its own install, its config).
    read_only: tuple[Path, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    #: Variables of the benchmark's environment passed in, by name (never a secret: the model is
    #: reached through ``model``'s endpoint): the sandbox starts from an empty environment.
    pass_env: tuple[str, ...] = ()
    #: The model the cell's own endpoint serves the agent (a name under ``models:`` or a litellm
    #: id): its key stays outside the sandbox, and its use is counted by the benchmark.
    model: str | None = None
    #: What the agent may spend through that endpoint.
    budget: Budget = Budget()
    #: Each of its processes' address space, and any file it writes, in MB (None: no limit).
    max_memory_mb: int | None = None
    max_file_mb: int | None = 1024
    #: How many processes and threads it may run at once (None: no limit).
    max_processes: int | None = 512


def _agent_entry(name: str, raw: Any, where: str) -> AgentConfig:
    if not isinstance(raw, Mapping):
        raise ModelConfigError(f"{where}: expected a mapping with 'command:'")
    known = ("command", "timeout_s", "max_checks", "read_only", "env", "pass_env", "model", "budget", "max_memory_mb",
             "max_file_mb", "max_processes")
    unknown = sorted(str(k) for k in raw if k not in known)
    if unknown:
        raise ModelConfigError(f"{where}.{unknown[0]}: unknown setting (known: {', '.join(known)})")
    command = raw.get("command")
    if isinstance(command, str):
        command = [command]
    if not isinstance(command, list) or not command or not all(isinstance(c, str) and c for c in command):
        raise ModelConfigError(f"{where}.command: expected the command as a list of strings")
    read_only = raw.get("read_only") or []
    env = raw.get("env") or {}
    if not isinstance(read_only, list) or not all(isinstance(p, str) for p in read_only):
        raise ModelConfigError(f"{where}.read_only: expected a list of paths")
    if not isinstance(env, Mapping) or not all(isinstance(k, str) and isinstance(v, (str, int, float))
                                              for k, v in env.items()):
        raise ModelConfigError(f"{where}.env: expected a mapping of names to values")
    passed = raw.get("pass_env") or []
    if not isinstance(passed, list) or not all(isinstance(n, str) and re.fullmatch(r"[A-Za-z_]\w*", n) for n in passed):
        raise ModelConfigError(f"{where}.pass_env: expected a list of environment variable names")
    try:
        timeout_s, max_checks = float(raw.get("timeout_s", 1800.0)), int(raw.get("max_checks", 20))
    except (TypeError, ValueError) as exc:
        raise ModelConfigError(f"{where}: timeout_s and max_checks are numbers: {exc}") from exc
    if not (0 < timeout_s <= 86_400 and 0 <= max_checks <= 10_000):
        raise ModelConfigError(f"{where}: timeout_s must be in (0, 86400] and max_checks in [0, 10000]")
    model = raw.get("model")
    if model is not None and not (isinstance(model, str) and model.strip()):
        raise ModelConfigError(f"{where}.model: expected the name of a model (under 'models:' or a litellm id)")
    return AgentConfig(name, tuple(command), timeout_s, max_checks,
                       tuple(Path(p).expanduser().resolve() for p in read_only), {k: str(v) for k, v in env.items()},
                       tuple(passed), model, _agent_budget(raw.get("budget"), f"{where}.budget"),
                       *(_limit(raw, key, where, default, unit) for key, default, unit in (
                           ("max_memory_mb", None, "MB"), ("max_file_mb", 1024, "MB"), ("max_processes", 512, "processes"))))


def _limit(raw: Mapping[str, Any], key: str, where: str, default: int | None, unit: str) -> int | None:
    """A limit, whole and positive; ``null`` for none."""
    value = raw.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1 << 20:
        raise ModelConfigError(f"{where}.{key}: expected a whole number of {unit} from 1 to {1 << 20} (null: no limit)")
    return value


def _agent_budget(raw: Any, where: str) -> Budget:
    """``budget: {requests: N, tokens: N, usd: X}``, each optional and positive."""
    if raw is None:
        return Budget()
    if not isinstance(raw, Mapping) or not set(raw) <= {"requests", "tokens", "usd"}:
        raise ModelConfigError(f"{where}: expected a mapping of requests, tokens and usd")
    try:
        requests, tokens, usd = (None if raw.get(k) is None else kind(raw[k])
                                 for k, kind in (("requests", int), ("tokens", int), ("usd", float)))
    except (TypeError, ValueError) as exc:
        raise ModelConfigError(f"{where}: requests and tokens are whole numbers, usd a number: {exc}") from exc
    if any(v is not None and v <= 0 for v in (requests, tokens, usd)):
        raise ModelConfigError(f"{where}: each limit must be positive (leave it out for no limit)")
    return Budget(requests, tokens, usd)


def load_catalog(path: Path | None) -> ModelCatalog:
    if path is None or not path.is_file():
        return ModelCatalog({}, None, None)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ModelConfigError(f"{path}: cannot read the model configuration: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ModelConfigError(f"{path}: expected a mapping with 'models:'")
    unknown = sorted(str(k) for k in data if k not in CATALOG_KEYS)
    if unknown:
        # A file that lists models at the top level would otherwise be read as no models at all.
        raise ModelConfigError(f"{path}: unknown top-level key(s) {', '.join(map(repr, unknown))}: the file has "
                               f"{' and '.join(repr(k) for k in CATALOG_KEYS)} (models go under 'models:')")
    entries = data.get("models") or {}
    if not isinstance(entries, Mapping):
        raise ModelConfigError(f"{path}: 'models' must map model names to settings")
    models = {str(n): _entry(str(n), raw or {}, f"{path}: models.{n}") for n, raw in entries.items()}
    evaluator = data.get("evaluator")
    agents = data.get("agents") or {}
    if not isinstance(agents, Mapping):
        raise ModelConfigError(f"{path}: 'agents' must map agent names to settings")
    return ModelCatalog(models, str(evaluator) if evaluator else None, path,
                        {str(n): _agent_entry(str(n), raw, f"{path}: agents.{n}") for n, raw in agents.items()})


@dataclass(frozen=True)
class Answer:
    """A model's reply with what it cost; cached as JSON before anything else looks at it."""

    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    finish_reason: str | None = None
    response_id: str | None = None
    attempts: int = 1

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Answer:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


class CoolDown:
    """A per-route 'not before' time stamp on disk, shared by all workers of a session."""

    def __init__(self, directory: Path, route: str) -> None:
        self.path = directory / (re.sub(r"[^A-Za-z0-9_.-]+", "_", route) + ".until")

    def until(self) -> float:
        try:
            return float(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return 0.0

    def wait(self, cap_s: float) -> None:
        delay = min(self.until() - time.time(), cap_s)
        if delay > 0:
            time.sleep(delay)

    def extend(self, seconds: float) -> None:
        target = time.time() + seconds
        if target > self.until():
            atomic_write_text(self.path, f"{target:.3f}")


class Pace:
    """A per-route requests-per-minute limit shared by every thread and process of a run: the
    send times of the last minute on disk, under a file lock."""

    def __init__(self, directory: Path, route: str, per_minute: int | None, clock: Any = time.time) -> None:
        self.path = directory / (re.sub(r"[^A-Za-z0-9_.-]+", "_", route) + ".sent")
        self.per_minute = per_minute
        self.clock = clock

    def _sent(self, now: float) -> list[float]:
        try:
            times = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return sorted(t for t in times if isinstance(t, (int, float)) and now - 60.0 < t <= now + 1.0) \
            if isinstance(times, list) else []

    def wait(self, sleep: Any) -> None:
        """Returns when one more request fits in the last minute, having counted it."""
        if not self.per_minute:
            return
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            with FileLock(str(self.path) + ".lock"):
                now = self.clock()
                sent = self._sent(now)
                if len(sent) < self.per_minute:
                    atomic_write_text(self.path, json.dumps([*sent, now]))
                    return
                delay = sent[len(sent) - self.per_minute] + 60.0 - now
            sleep(max(delay, 0.01))


#: Providers litellm routes ``provider/model`` to whatever the model's name (the tests check each
#: against litellm): a route under one of them needs no import of litellm (seconds) to be known
#: good, so a run that only scores stored answers never imports it.
ROUTED_PROVIDERS = frozenset({"openai", "anthropic", "ollama", "ollama_chat", "hosted_vllm", "lm_studio", "openrouter",
                              "groq", "mistral", "together_ai", "deepseek", "xai", "gemini", "fireworks_ai"})


def route_problem(config: ModelConfig) -> str | None:
    """Why litellm could not send a request for this model (it names no provider it knows), or None."""
    provider, _, model = config.route.partition("/")
    if provider in ROUTED_PROVIDERS and model.strip():
        return None
    litellm = _litellm()

    litellm.suppress_debug_info = True
    try:
        litellm.get_llm_provider(model=config.route, api_base=config.api_base)
    except Exception as exc:  # noqa: BLE001 - litellm raises its BadRequestError, or plain errors
        first = str(exc).replace("litellm.BadRequestError: ", "").strip().splitlines()[0][:200]
        builtin = close_matches(config.route, ["reference"])
        hint = f"did you mean the built-in source {builtin[0]!r}? Otherwise " if builtin else ""
        return (f"litellm cannot route model id {config.route!r} ({first}); {hint}write it as provider/model, "
                "e.g. openai/gpt-5 or ollama/llama3, or give it a route in the model configuration")
    return None


def endpoint(config: ModelConfig) -> str | None:
    """The URL a request goes to, whatever set it: the configuration, or the variables litellm
    reads for the route's provider (``OPENAI_BASE_URL``, ``OPENAI_API_BASE``, ...), or litellm's
    own default base.  None where the provider's library alone knows it."""
    if config.api_base:
        return config.api_base
    provider = config.route.split("/", 1)[0] if "/" in config.route else "openai"
    for suffix in ("BASE_URL", "API_BASE"):
        found = os.environ.get(f"{provider.upper().replace('-', '_')}_{suffix}")
        if found:
            return f"{found} (from {provider.upper().replace('-', '_')}_{suffix})"
    base = getattr(sys.modules.get("litellm"), "api_base", None)
    return str(base) if base else None


def missing_key(config: ModelConfig) -> str | None:
    """Why a request for this model would go out without its key, or None: the variable the
    configuration names is unset, or (with no ``api_base`` of its own) the provider's key
    variable that litellm looks for is.  A base URL litellm merely defaults is no key."""
    if config.api_key_env:
        return None if os.environ.get(config.api_key_env) else f"environment variable {config.api_key_env} is not set"
    if config.api_base:
        return None
    try:
        found = _litellm().validate_environment(model=config.route)
    except Exception:  # noqa: BLE001 - a route litellm cannot check is left to the request
        return None
    keys = [k for k in found.get("missing_keys") or [] if not str(k).endswith("_API_BASE")]
    return f"environment variable {', '.join(keys)} is not set" if keys else None


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return int(code) if isinstance(code, int) else None


def _retry_after(exc: BaseException) -> float | None:
    """litellm keeps the provider's headers in ``litellm_response_headers``, not on ``response``."""
    headers = getattr(exc, "litellm_response_headers", None) or getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
        return float(value) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


_TRANSIENT_TEXT = re.compile(r"overloaded|rate.?limit|temporar|try again|timed? ?out|connection", re.IGNORECASE)


def is_transient(exc: BaseException) -> bool:
    """Worth another attempt: rate limits, overload, server errors, timeouts, dropped connections."""
    litellm = _litellm()

    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError,
                        litellm.ContextWindowExceededError, litellm.ContentPolicyViolationError)):
        return False
    if isinstance(exc, (litellm.RateLimitError, litellm.Timeout, litellm.APIConnectionError,
                        litellm.InternalServerError, litellm.ServiceUnavailableError)):
        return True
    status = _status(exc)
    if status is not None:
        return status in (408, 409, 429, 500, 502, 503, 504, 529)
    return bool(_TRANSIENT_TEXT.search(str(exc)))


def _text(response: Any) -> str:
    choice = response.choices[0]
    content = getattr(choice.message, "content", None)
    if isinstance(content, list):
        content = "".join(str(part.get("text", "")) if isinstance(part, Mapping) else str(part) for part in content)
    return content or ""


def _cost(config: ModelConfig, response: Any, prompt_tokens: int, completion_tokens: int) -> float | None:
    if config.input_cost_per_token is not None or config.output_cost_per_token is not None:
        return (prompt_tokens * (config.input_cost_per_token or 0.0)
                + completion_tokens * (config.output_cost_per_token or 0.0))
    litellm = _litellm()

    try:
        return float(litellm.completion_cost(completion_response=response))
    except Exception:  # litellm raises plain Exceptions for models missing from its local price map
        return None


class Client:
    """One model's calls: bounded attempts, exponential backoff with jitter, shared cool-down."""

    def __init__(self, config: ModelConfig, cooldown_dir: Path, sleep: Any = time.sleep) -> None:
        self.config = config
        self.cooldown = CoolDown(cooldown_dir, config.route)
        self.pace = Pace(cooldown_dir, config.route, config.rpm)
        self.sleep = sleep

    def _backoff(self, attempt: int, exc: BaseException) -> float:
        hinted = _retry_after(exc)
        base = self.config.backoff_s * (2 ** (attempt - 1))
        delay = hinted if hinted is not None else base * (0.75 + 0.5 * random.random())
        return min(delay, self.config.max_backoff_s)

    def complete(self, prompt: str, *, json_mode: bool = False) -> Answer:
        litellm = _litellm()

        litellm.suppress_debug_info = True
        kwargs = self.config.request_kwargs()
        kwargs.update(messages=[{"role": "user", "content": prompt}], num_retries=0, max_retries=0, drop_params=True)
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        last: BaseException | None = None
        for attempt in range(1, self.config.attempts + 1):
            self.cooldown.wait(self.config.max_backoff_s)
            self.pace.wait(self.sleep)
            started = time.monotonic()
            try:
                response = litellm.completion(**kwargs)
                text = _text(response)
            except Exception as exc:  # every provider failure becomes an attempt outcome
                last = exc
                if not is_transient(exc) or attempt == self.config.attempts:
                    break
                delay = self._backoff(attempt, exc)
                if isinstance(exc, litellm.RateLimitError) or _status(exc) in (429, 529):
                    self.cooldown.extend(delay)
                self.sleep(delay)
                continue
            if not text.strip():
                last = GenerationError("the model returned an empty answer")
                if attempt == self.config.attempts:
                    break
                self.sleep(self._backoff(attempt, last))
                continue
            usage = getattr(response, "usage", None)
            prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
            completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
            return Answer(
                text=text,
                model=str(getattr(response, "model", "") or self.config.route),
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost_usd=_cost(self.config, response, prompt_tokens, completion_tokens),
                latency_s=round(time.monotonic() - started, 3),
                finish_reason=getattr(response.choices[0], "finish_reason", None),
                response_id=getattr(response, "id", None),
                attempts=attempt,
            )
        assert last is not None
        kind = type(last).__name__
        message = str(last).strip().splitlines()[0][:300] if str(last).strip() else kind
        url = endpoint(self.config)
        where = f" at {url}" if url else f" ({self.config.route})"
        raise GenerationError(f"{self.config.name}{where}: {kind}: {message} (after {attempt} attempt(s))",
                              attempts=attempt, transient=is_transient(last) if not isinstance(last, GenerationError) else True)
