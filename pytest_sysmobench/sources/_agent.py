"""Specs written by a coding agent (``agent:NAME``): a command run in a fresh workspace inside a
sandbox, with what a model's ``direct`` prompt gives it and a check tool (P1 and P2, as the
benchmark scores them); what it leaves as ``<Module>.tla`` is scored like a replayed spec.

The answer key stays outside: the sandbox shows the workspace, the check tool and the system's
folders, never the project tree, the reference specs, mutants, templates, traces or the output
folder.  So does the model's key: an agent with a ``model`` reaches it through an endpoint its
cell serves (``model_proxy.py``), which counts what it spends and holds it to its budget.  An
agent that ends without a spec, fails or runs out of time scores 0, charged to it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import tempfile
import threading
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import sandbox
from ..llm import AgentConfig, ModelConfig
from ..model_proxy import ModelEndpoint
from ..prompts import SourceMissing, render, stages
from ..scoring import gate_verdict
from ..tasks import Task
from ._builtin import spec_in_folder
from ._candidate import Candidate, SpecSource, with_spec
from ..feedback import Judge, evidence
from ._generated import Checker

#: What an agent may report of its own use, read from its workspace (shown as reported).
USAGE_FILE = "usage.json"
MAX_REQUEST_BYTES = 4_000_000

CHECK_TOOL = '''#!/usr/bin/python3
"""check [--conformance] SPEC.tla [SPEC.cfg]: P1 (SANY) and P2 (TLC) of a spec, as the benchmark
scores them; with --conformance, once both pass, also what P3 finds against traces of the real
system (some of them: the spec is scored on others) and what P4 finds, through mapping.yaml
beside the spec if there is one.

Prints the verdict as JSON (each phase's score, status and reason; "conformance" with the
evidence) and exits 0 when P1 and P2 pass, 1 when not, 2 when no check could be made (none
left, or a file that cannot be read)."""
import json, os, socket, sys

def main():
    args = sys.argv[1:]
    deeper = "--conformance" in args
    args = [a for a in args if a != "--conformance"]
    if len(args) not in (1, 2):
        print("usage: check [--conformance] SPEC.tla [SPEC.cfg]", file=sys.stderr)
        return 2
    try:
        spec = open(args[0], encoding="utf-8").read()
        cfg_path = args[1] if len(args) == 2 else os.path.splitext(args[0])[0] + ".cfg"
        cfg = open(cfg_path, encoding="utf-8").read() if os.path.exists(cfg_path) else None
        mapping_path = os.path.join(os.path.dirname(os.path.abspath(args[0])), "mapping.yaml")
        mapping = open(mapping_path, encoding="utf-8").read() if os.path.exists(mapping_path) else None
    except OSError as exc:
        print(json.dumps({"error": str(exc)}))
        return 2
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(os.environ["SYSMOBENCH_CHECK_SOCKET"])
    client.sendall(json.dumps({"spec": spec, "cfg": cfg, "mapping": mapping, "conformance": deeper}).encode("utf-8"))
    client.shutdown(socket.SHUT_WR)
    data = b""
    while chunk := client.recv(65536):
        data += chunk
    print(data.decode("utf-8"))
    reply = json.loads(data)
    return 0 if reply.get("passed") else 1 if "phases" in reply else 2

sys.exit(main())
'''


class AgentSource(SpecSource):
    """A coding agent from the model configuration's ``agents:``."""

    #: The cell hands it a checker and a judge: the agent's check tool runs the cell's own P1 and
    #: P2, and with --conformance what P3 and P4 find on the feedback traces.
    kind = "agent"
    uses_checker = True
    may_lack_mapping = True

    def __init__(self, config: AgentConfig, traces_dir: Path, model: ModelConfig | None = None) -> None:
        self.config = config
        self.name = f"agent:{config.name}"
        self.traces_dir = traces_dir
        #: The model its cell's endpoint serves it (the configuration's ``model``), or None.
        self.model = model

    def candidate(self, task: Task, sample: int, check: Checker | None = None, judge: Judge | None = None) -> Candidate:
        base = Candidate(task.name, self.name, sample, task.module, origin=f"agent {self.config.name}")
        if task.harness is not None and task.harness.held_out:
            # Its check tool shows what P3 finds on the feedback traces: scored on the others.
            base = replace(base, scored_seeds=task.harness.held_out)
        info: dict[str, Any] = {"method": "agent", "agent": self.config.name, "command": list(self.config.command)}
        try:
            prompt = render(task, stages("direct")[0], self.traces_dir)
            sandbox.bwrap()
            limits = sandbox.Limits(self.config.max_memory_mb, self.config.max_file_mb, self.config.max_processes)
            limits.prefix()
            cap = sandbox.ProcessCap(self.config.max_processes)
            with cap:  # said before the agent runs: a limit this machine cannot hold
                pass
        except (SourceMissing, sandbox.SandboxMissing) as exc:  # ours to provide, not the agent's to lack
            return replace(base, generation_error=str(exc), generation=info)
        with tempfile.TemporaryDirectory(prefix="sysmobench-agent-") as scratch:
            workspace, tools = Path(scratch) / "workspace", Path(scratch) / "tools"
            _lay_out(task, prompt, workspace, tools)
            checks = _CheckServer(tools / "check.sock", task, base, check, self.config.max_checks, judge)
            with ExitStack() as running:
                running.enter_context(cap)
                running.enter_context(checks)
                endpoint = running.enter_context(self._endpoint()) if self.model is not None else None
                served = endpoint.environment() if endpoint is not None else {}
                run = sandbox.run(self._command(task, workspace, tools, served), self.config.timeout_s,
                                  Path(scratch) / "transcript.txt", limits, cap.path)
                peak = cap.peak
            info.update(seconds=round(run.seconds, 3), exit_code=run.exit_code, timed_out=run.timed_out,
                        checks=checks.used, max_checks=self.config.max_checks, usage_reported=_usage(workspace))
            if peak is not None:
                info.update(processes_peak=peak, max_processes=self.config.max_processes)
            if endpoint is not None:  # counted by the benchmark, beside whatever the agent reports
                use = endpoint.use
                info.update(route=endpoint.config.route, requests=use.requests, prompt_tokens=use.prompt_tokens,
                            completion_tokens=use.completion_tokens, cost_usd=use.cost_usd,
                            model_use={"model": use.model, "refused": use.refused, "failed": use.failed,
                                       "budget_spent": use.budget_spent, "errors": use.errors})
            transcript = (("agent", prompt, run.transcript),)
            broken = self._sandbox_broken(workspace, tools, Path(scratch)) if run.exit_code not in (0, None) else None
            if broken is not None:  # the sandbox, not the agent: a known-good command fails in it too
                return replace(base, generation_error=broken, generation=info, transcript=transcript)
            candidate = self._result(base, task, workspace, run)
            spent = endpoint.use.budget_spent if endpoint is not None else ""
            if spent and candidate.problem:
                candidate = replace(candidate, problem=f"{candidate.problem}; it had spent its model budget ({spent})")
            elif spent:
                candidate = replace(candidate, notes=(*candidate.notes, f"the agent spent its model budget ({spent})"))
        if candidate.tla is not None and _same_text(candidate.tla, task.reference_spec.read_text(encoding="utf-8")):
            info["equals_reference"] = True
            candidate = replace(candidate, notes=(*candidate.notes, "the submitted spec equals the task's reference "
                                                  "spec up to whitespace"))
        return replace(candidate, generation=info, transcript=transcript)

    def _endpoint(self) -> ModelEndpoint:
        assert self.model is not None
        return ModelEndpoint(self.model, self.config.budget)

    def _command(self, task: Task, workspace: Path, tools: Path, served: dict[str, str]) -> list[str]:
        passed = {name: os.environ[name] for name in self.config.pass_env if name in os.environ}
        env = {**passed, **self.config.env, **served, "SYSMOBENCH_TASK": task.name, "SYSMOBENCH_MODULE": task.module,
               "SYSMOBENCH_CHECK": f"{sandbox.TOOLS}/check",
               "SYSMOBENCH_CHECK_SOCKET": f"{sandbox.TOOLS}/check.sock"}
        return sandbox.command(workspace, tools, self.config.command, env, self.config.read_only)

    @staticmethod
    def _sandbox_broken(workspace: Path, tools: Path, scratch: Path) -> str | None:
        """Why the sandbox cannot run even ``true`` here, or None: a failed run is then the
        agent's own (an agent cannot make its cell undecidable by failing)."""
        probe = sandbox.run(sandbox.command(workspace, tools, ["true"], {}), 60, scratch / "probe.txt")
        if probe.exit_code == 0:
            return None
        return f"the sandbox cannot run a command on this machine: {probe.transcript.strip()[:500] or probe.exit_code}"

    def _at_file_limit(self, workspace: Path, run: sandbox.Run) -> bool:
        """Whether its output or a file it left reached the size it may write (the kernel then
        stopped the write, and the process that made it unless it chose to go on)."""
        if self.config.max_file_mb is None:
            return False
        limit = self.config.max_file_mb << 20
        return run.output_bytes >= limit or any(f.is_file() and f.stat().st_size >= limit for f in workspace.rglob("*"))

    def _result(self, base: Candidate, task: Task, workspace: Path, run: sandbox.Run) -> Candidate:
        """The spec the agent left, or why it scores 0."""
        who = f"the agent {self.config.name}"
        if run.timed_out:
            return replace(base, problem=f"{who} ran out of time ({self.config.timeout_s:g} s) and was stopped")
        if run.exit_code != 0 and self._at_file_limit(workspace, run):
            return replace(base, problem=f"{who} was stopped writing a file beyond its limit of "
                                         f"{self.config.max_file_mb} MB (exit code {run.exit_code})")
        if run.exit_code != 0:
            return replace(base, problem=f"{who} failed (exit code {run.exit_code}); its transcript is "
                                         "answer-agent.md in the cell's folder")
        if not (workspace / f"{task.module}.tla").is_file():
            return replace(base, problem=f"{who} ended without a spec: no {task.module}.tla in its workspace")
        return spec_in_folder(base, task, workspace)


def _lay_out(task: Task, prompt: str, workspace: Path, tools: Path) -> None:
    """What a model's ``direct`` prompt gives: the prompt, the system's source files, the task
    definition without anything of the answer key."""
    workspace.mkdir(parents=True)
    tools.mkdir(parents=True)
    (workspace / "PROMPT.md").write_text(prompt, encoding="utf-8")
    definition = {"name": task.name, "title": task.title, "description": task.description, "module": task.module,
                  "constants": task.default_constants, "target_actions": list(task.target_actions),
                  "vocabulary": task.vocabulary.render()}
    (workspace / "TASK.json").write_text(json.dumps(definition, indent=1), encoding="utf-8")
    for item in task.source.files:
        source = task.source.root / item.path
        if source.is_file():
            target = workspace / "source" / item.path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    check = tools / "check"
    check.write_text(CHECK_TOOL, encoding="utf-8")
    check.chmod(0o755)


def _usage(workspace: Path) -> Any:
    path = workspace / USAGE_FILE
    try:
        if path.is_file() and path.stat().st_size <= 100_000:
            return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "unreadable"
    return None


def _same_text(a: str, b: str) -> bool:
    return re.sub(r"\s+", "", a) == re.sub(r"\s+", "", b)


class _CheckServer:
    """The check tool's other end, outside the sandbox: P1 and P2 of the spec it is sent, by the
    cell's own checker, at most ``limit`` times; asked for conformance, what P3 finds on the
    task's feedback traces and what P4 finds, by the cell's judge (never the held-out figure)."""

    def __init__(self, path: Path, task: Task, base: Candidate, check: Checker | None, limit: int,
                 judge: Judge | None = None) -> None:
        self.task, self.base, self.check, self.limit, self.judge = task, base, check, limit, judge
        self.used = 0
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(4)
        self._thread = threading.Thread(target=self._serve, name="agent-check", daemon=True)

    def __enter__(self) -> _CheckServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.close()
        self._thread.join(timeout=5)

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:
                return  # closed: the agent's run is over
            with connection:
                try:
                    reply = self._answer(_received(connection))
                except (OSError, ValueError) as exc:
                    reply = {"error": f"the check could not be made: {exc}"}
                try:
                    connection.sendall(json.dumps(reply).encode("utf-8"))
                except OSError:
                    pass

    def _answer(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or not isinstance(request.get("spec"), str):
            return {"error": "expected {\"spec\": ..., \"cfg\": ...}"}
        if self.check is None:
            return {"error": "no checker: this agent runs outside a benchmark cell"}
        if self.used >= self.limit:
            return {"error": f"no checks left: this agent may check {self.limit} times"}
        self.used += 1
        cfg = request.get("cfg") if isinstance(request.get("cfg"), str) else None
        mapping = request.get("mapping") if isinstance(request.get("mapping"), str) else None
        with tempfile.TemporaryDirectory(prefix="sysmobench-check-") as folder:
            mapping_file = Path(folder) / "mapping.yaml" if mapping is not None else None
            if mapping_file is not None:
                mapping_file.write_text(mapping, encoding="utf-8")
            candidate = with_spec(self.base, self.task, request["spec"], cfg, mapping_file)
        results = self.check(candidate, self.used)
        if not results:
            return {"error": "the cell's time budget is spent: no more checks"}
        verdict = {"check": self.used, "checks_left": self.limit - self.used, **gate_verdict(results)}
        if request.get("conformance") is True and verdict.get("passed"):
            verdict["conformance"] = self._judged(candidate)
        return verdict

    def _judged(self, candidate: Candidate) -> dict[str, Any]:
        if self.judge is None or not self.base.scored_seeds:
            return {"error": f"no conformance check here: task {self.task.name} holds no traces out"}
        judged = self.judge(candidate, self.used)
        if judged is None:
            return {"error": "the cell's time budget is spent: no more checks"}
        return {"p3": judged.shown.score, "p4": judged.invariants.score,
                "evidence": evidence(self.task, judged) or "P3 and P4 find nothing on these traces"}


def _received(connection: socket.socket) -> Any:
    data = b""
    while chunk := connection.recv(65536):
        data += chunk
        if len(data) > MAX_REQUEST_BYTES:
            raise ValueError(f"a check request is limited to {MAX_REQUEST_BYTES:,} bytes")
    return json.loads(data.decode("utf-8"))
