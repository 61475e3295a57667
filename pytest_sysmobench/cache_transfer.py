"""The verdict cache carried between machines (``sysmobench cache export|import``), so that a
re-run on another CI runner is warm.

The cache's folder can also be saved and restored as is by a CI cache action: entries are
content-addressed files written atomically, so any copy of the folder is a valid cache.  The
archive adds what a copy does not: it holds entries and the cache's secret (verdict marks are
derived from it, and an entry keyed by another secret would never be found) and nothing else,
is read back member by member (no path outside the cache, no link, no file that is no JSON),
and never overwrites an entry already there.  Import only an archive you made: the cache is
trusted to hold verdicts the tools gave.
"""

from __future__ import annotations

import io
import json
import lzma
import re
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from .cache import atomic_write_text

FORMAT = "sysmobench-cache-v1"
_ENTRY = re.compile(r"(?P<kind>[a-z0-9_-]{1,40})/(?P<prefix>[0-9a-f]{2})/(?P<key>[0-9a-f]{16,128})\.json")
_SECRET = "secret"
#: One entry larger than this is no verdict (the largest here are a few hundred kB).
MAX_ENTRY_BYTES = 64 * 1024 * 1024


class ArchiveError(ValueError):
    """The archive cannot be read as a cache, or names something a cache does not hold."""


@dataclass(frozen=True)
class Imported:
    added: int
    already: int
    skipped: tuple[str, ...]
    secret: str  # "taken" | "same" | "different" | "none"

    def line(self, root: Path) -> str:
        text = f"imported {self.added} verdict(s) into {root} ({self.already} already there)"
        if self.skipped:
            text += f"; skipped {len(self.skipped)} member(s) that are no cache entry (e.g. {self.skipped[0]!r})"
        if self.secret == "different":
            text += ("; warning: this cache has another secret than the archive's, so entries keyed by marks "
                     "(P4's generated checks) will not be found: import into an empty cache folder instead")
        return text


def export(root: Path, out: Path) -> int:
    """Writes the cache's entries and secret to a gzipped tar; how many entries."""
    if not root.is_dir():
        raise ArchiveError(f"{root}: no cache here (run the benchmark first, or name the folder with --cache)")
    entries = sorted(p for p in root.rglob("*.json") if _ENTRY.fullmatch(p.relative_to(root).as_posix()))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    with tarfile.open(partial, "w:gz") as archive:
        manifest = json.dumps({"format": FORMAT, "entries": len(entries)}).encode()
        _add(archive, "MANIFEST.json", manifest)
        if (root / _SECRET).is_file():
            archive.add(root / _SECRET, arcname=_SECRET, recursive=False)
        for path in entries:
            archive.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)
    partial.replace(out)
    return len(entries)


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


#: What a truncated or corrupted archive raises while it is read (the gzip stream ends early,
#: a block's checksum fails, a header is garbage; bz2 says so with a plain OSError).
_CORRUPT = (EOFError, OSError, tarfile.TarError, zlib.error, lzma.LZMAError)


def import_(root: Path, given: Path) -> Imported:
    """Entries imported before a corruption is met are valid and stay (each is written whole,
    atomically); the corruption is then reported with how far the import got."""
    counted: list[int] = [0]
    try:
        with tarfile.open(given, "r:*") as archive:
            return _import_members(root, given, archive, counted)
    except _CORRUPT as exc:
        got = f"; {counted[0]} verdict(s) read before it were imported" if counted[0] else ""
        raise ArchiveError(f"{given}: not a cache archive, or a truncated or corrupted one "
                           f"({type(exc).__name__}: {exc or 'no detail'}){got}") from exc


def _import_members(root: Path, given: Path, archive: tarfile.TarFile, counted: list[int]) -> Imported:
    members = archive.getmembers()
    manifest = _manifest(archive, members, given)
    added = already = 0
    skipped: list[str] = []
    secret = "none"
    for member in members:
        name = member.name.removeprefix("./")
        if name == "MANIFEST.json":
            continue
        if not member.isfile() or member.size > MAX_ENTRY_BYTES:
            skipped.append(name)
            continue
        if name == _SECRET:
            secret = _take_secret(root, _read(archive, member))
            continue
        if not _ENTRY.fullmatch(name):
            skipped.append(name)
            continue
        try:
            text = _read(archive, member).decode("utf-8")
            json.loads(text)
        except ValueError:  # not UTF-8 (a UnicodeDecodeError is one), or not JSON
            skipped.append(name)
            continue
        target = root / name
        if target.exists():
            already += 1
            continue
        try:
            atomic_write_text(target, text)
        except OSError as exc:  # the cache's disk, not the archive
            raise ArchiveError(f"cannot write {target}: {exc}") from exc
        added += 1
        counted[0] = added
    if manifest.get("entries") not in (None, added + already + sum(1 for s in skipped if _ENTRY.fullmatch(s))):
        skipped.append("MANIFEST.json (its count of entries does not match the archive)")
    return Imported(added, already, tuple(skipped), secret)


def _manifest(archive: tarfile.TarFile, members: list[tarfile.TarInfo], given: Path) -> dict[str, object]:
    found = next((m for m in members if m.name.removeprefix("./") == "MANIFEST.json" and m.isfile()), None)
    try:
        manifest = json.loads(_read(archive, found)) if found is not None else None
    except ValueError:
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArchiveError(f"{given}: not a cache archive made by 'sysmobench cache export' (no {FORMAT} manifest)")
    return manifest


def _read(archive: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    handle = archive.extractfile(member)
    return handle.read(MAX_ENTRY_BYTES + 1) if handle is not None else b""


def _take_secret(root: Path, data: bytes) -> str:
    """The archive's secret, where the cache has none yet (entries keyed by marks stay found)."""
    text = data.decode("ascii", "replace").strip()
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        return "none"
    mine = root / _SECRET
    if mine.is_file():
        return "same" if mine.read_text(encoding="ascii", errors="replace").strip() == text else "different"
    atomic_write_text(mine, text, mode=0o600)
    return "taken"
