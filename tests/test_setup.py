"""scripts/setup, run against stand-ins for dpkg, apt-get, pip and java that record what they are
asked: what each mode would install, without installing anything."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setup(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    shims, calls = tmp_path / "bin", tmp_path / "calls.log"
    shims.mkdir()
    for tool, body in {"dpkg": "exit 1", "apt-get": "exit 0", "sudo": '"$@"',
                       "python": 'case "$*" in *pip*) exit 0;; *) echo 0.0;; esac',
                       "java": 'echo "openjdk version 17" >&2'}.items():
        script = shims / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{calls}"\n{body}\n')
        script.chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}:/usr/bin:/bin"}
    done = subprocess.run(["bash", str(ROOT / "scripts" / "setup"), *args], capture_output=True, text=True,
                          env=env, timeout=60)
    return done, calls.read_text().splitlines() if calls.exists() else []


def test_minimal_setup_installs_java_and_the_package_only(tmp_path: Path) -> None:
    done, calls = _setup(tmp_path, "--minimal")
    assert done.returncode == 0, done.stderr
    installs = [c for c in calls if c.startswith("apt-get install")]
    assert len(installs) == 1 and installs[0].split()[-1] == "openjdk-17-jdk-headless", installs
    assert not any("apt-get source" in c or "chromium" in c for c in calls)
    pip = [c for c in calls if " pip " in c]
    assert pip == ["python -m pip install -q --disable-pip-version-check -e ."], pip
    assert "done: pytest-sysmobench" in done.stderr


def test_an_unknown_setup_option_is_refused_before_anything_runs(tmp_path: Path) -> None:
    done, calls = _setup(tmp_path, "--minmal")
    assert done.returncode == 2 and "unknown option --minmal" in done.stderr
    assert calls == []
