"""A content-addressed cache on disk, safe across pytest-xdist workers.

Keys are sha256 digests of everything that decides a result (spec text, cfg, jar, flags,
library modules, ...), so an entry never goes stale: a change of any input is a new key.
A file lock per key makes concurrent workers compute an entry once; writes are atomic
(temp file + rename), so a killed run never leaves a half-written entry behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from filelock import FileLock

T = TypeVar("T")


def digest(*parts: Any) -> str:
    """A stable sha256 over JSON-able parts (dict keys sorted)."""
    payload = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: Read once, at import, before any thread could race on it.
_UMASK = _umask()


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write through a temporary file and a rename.  The file gets the permissions the user's
    umask gives a new file (``mkstemp`` alone would leave every output 0600), or ``mode``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode if mode is not None else 0o666 & ~_UMASK)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)

    def count(self, kind: str, hit: bool) -> None:
        if hit:
            self.hits += 1
        else:
            self.misses += 1
            self.by_kind[kind] = self.by_kind.get(kind, 0) + 1


class Cache:
    """JSON entries under ``root/<kind>/<key[:2]>/<key>.json``; ``root=None`` disables it."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self.stats = CacheStats()
        self._secret: bytes | None = None

    def secret(self) -> bytes:
        """A key this installation keeps to itself: verdict marks derived from it cannot be
        written by a spec, yet stay the same from run to run so results remain cacheable."""
        if self._secret is None:
            if self.root is None:
                self._secret = os.urandom(32)
            else:
                path = self.root / "secret"
                with self._locked(path):
                    if not path.is_file() or len(path.read_bytes()) != 64:
                        atomic_write_text(path, os.urandom(32).hex(), mode=0o600)
                    self._secret = bytes.fromhex(path.read_text(encoding="ascii"))
        return self._secret

    def mark(self, *parts: Any) -> str:
        """An unforgeable marker for a generated check, keyed by what it checks."""
        return "SYSMO" + hashlib.sha256(self.secret() + digest(*parts).encode()).hexdigest()[:32]

    def _path(self, kind: str, key: str) -> Path:
        assert self.root is not None
        return self.root / kind / key[:2] / f"{key}.json"

    @contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock"):
            yield

    def _read(self, path: Path) -> Any | None:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def get_or_compute(self, kind: str, key: str, compute: Callable[[], T], encode: Callable[[T], Any],
                       decode: Callable[[Any], T], keep: Callable[[T], bool] = lambda _: True) -> T:
        """Return the cached value for key, or compute, store (if ``keep``) and return it."""
        if self.root is None:
            self.stats.count(kind, hit=False)
            return compute()
        path = self._path(kind, key)
        cached = self._read(path)
        if cached is not None:
            self.stats.count(kind, hit=True)
            return decode(cached)
        with self._locked(path):
            cached = self._read(path)
            if cached is not None:
                self.stats.count(kind, hit=True)
                return decode(cached)
            value = compute()
            self.stats.count(kind, hit=False)
            if keep(value):
                atomic_write_text(path, json.dumps(encode(value), sort_keys=True))
            return value
