"""The GitHub Actions recipe (``.github/workflows/sysmobench-sweep.yml``) run here step by step,
each ``run:`` step its own bash process as on a runner, each job in a fresh copy of the project:
the shard jobs' boards merged are complete and pass the gate; with one shard's board lost the
merge names the shard and the gate fails, and the job summary says why."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml
from projects import ROOT, benchmark_project

WORKFLOW = ROOT / ".github" / "workflows" / "sysmobench-sweep.yml"
#: Steps that install into the machine: done already for the test session that runs this.
INSTALLS = {"Set up the toolchain", "Install the command line"}


class Runner:
    """One workflow run: its jobs' folders, artifacts and job summaries."""

    def __init__(self, base: Path, inputs: dict[str, str], cache: str) -> None:
        self.base = base
        self.inputs = inputs
        self.artifacts = base / "artifacts"
        self.workflow = yaml.safe_load(WORKFLOW.read_text())
        self.env = {k: self.expand(str(v), {}) for k, v in self.workflow["env"].items()}
        self.env["SYSMOBENCH_CACHE"] = cache  # the verdicts a cache action would restore

    def expand(self, text: str, matrix: dict[str, Any]) -> str:
        values = {"inputs.models || 'reference'": self.inputs.get("models") or "reference",
                  "inputs.select || ''": self.inputs.get("select") or "", "github.sha": "0" * 40,
                  **{f"matrix.{k}": str(v) for k, v in matrix.items()}}

        def one(match: re.Match[str]) -> str:
            expression = match.group(1).strip()
            assert expression in values, f"the test does not know the expression {expression!r}"
            return values[expression]

        return re.sub(r"\$\{\{(.*?)\}\}", one, text)

    def job(self, name: str, matrix: dict[str, Any]) -> tuple[int, str]:
        """Runs a job's steps in a fresh checkout; its exit status (the first failing step's) and
        its job summary."""
        work = self.base / f"{name}-{'-'.join(map(str, matrix.values())) or 'job'}"
        summary = work.with_suffix(".summary.md")
        status = 0
        for step in self.workflow["jobs"][name]["steps"]:
            if status and "always()" not in str(step.get("if", "")):
                continue
            uses, given = step.get("uses", ""), {k: self.expand(str(v), matrix) for k, v in (step.get("with") or {}).items()}
            if uses.startswith("actions/checkout"):
                work.mkdir(parents=True)
                benchmark_project(_Folder(work), "spin", "mutex")  # type: ignore[arg-type]
                shutil.copytree(ROOT / "data" / "baselines", work / "data" / "baselines")
            elif uses.startswith("actions/upload-artifact"):
                source = work / given["path"]
                target = self.artifacts / given["name"]
                if source.is_dir():
                    shutil.copytree(source, target)
                elif source.is_file():
                    target.mkdir(parents=True)
                    shutil.copy(source, target)
            elif uses.startswith("actions/download-artifact"):
                for found in sorted(self.artifacts.glob(given["pattern"])):
                    shutil.copytree(found, work / given["path"] / found.name)
            elif uses:
                assert uses.split("@")[0] in ("actions/setup-python", "actions/cache"), uses
            elif step.get("name") not in INSTALLS:
                script = self.expand(step["run"], matrix)
                done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=work,
                                      env={**os.environ, **self.env, "GITHUB_STEP_SUMMARY": str(summary)},
                                      capture_output=True, text=True, timeout=900)
                status = done.returncode
                print(f"--- {name} {matrix}: {step.get('name')}: exit {status}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
        return status, summary.read_text() if summary.exists() else ""


class _Folder:
    """What ``benchmark_project`` needs of a pytester: its path."""

    def __init__(self, path: Path) -> None:
        self.path = path


def test_the_recipe_merges_the_shards_and_gates_an_incomplete_sweep(tmp_path: Path) -> None:
    runner = Runner(tmp_path, {"models": "reference,mutant:acquire-ignores-lock", "select": "spin"},
                    os.environ["SYSMOBENCH_CACHE"])
    shards = runner.workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    assert len(shards) == int(runner.env["SHARDS"])
    for shard in shards:
        status, _ = runner.job("shard", {"shard": shard})
        assert status == 0
    boards = sorted(p.parent.name for p in runner.artifacts.glob("board-*/leaderboard.json"))
    assert boards == [f"board-{i}" for i in shards]  # a shard without cells still says so with a board

    status, summary = runner.job("merge", {})
    assert status == 0, summary
    assert "**0 regression(s)**" in summary and "missing" not in summary
    merged = tmp_path / "merge-job" / "merged"
    assert (merged / "leaderboard.html").is_file() and (runner.artifacts / "leaderboard" / "summary.md").is_file()

    shutil.rmtree(runner.artifacts / "board-2")
    shutil.rmtree(runner.artifacts / "leaderboard")
    shutil.rmtree(tmp_path / "merge-job")
    status, summary = runner.job("merge", {})
    assert status == 1
    assert "cell(s) missing** (the board is incomplete)" in summary and "**missing**" in summary
    assert "shard(s) 2/3 not merged" in (tmp_path / "merge-job" / "merged" / "leaderboard.html").read_text()
