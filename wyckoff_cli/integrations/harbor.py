"""Wyckoff as a Harbor installed agent (https://harborframework.com).

    harbor run --agent wyckoff_cli.integrations.harbor:WyckoffAgent \\
        --model anthropic/claude-sonnet-4-5 --dataset terminal-bench@2.0 ...

(`--agent-import-path ...` works too: deprecated in Harbor 0.26, which takes `--agent`.)

Harbor installs Wyckoff in the task's environment (Docker, Daytona, Modal, E2B...) with
`uv tool install`, runs `wyckoff run --output-format stream-json` there with the task's
instruction on stdin, keeps the event stream in the agent log folder (`wyckoff.jsonl`)
and reports the turn's tokens and cost in Harbor's `AgentContext`.

Harbor needs Python 3.12+ and Wyckoff runs on 3.11, so this module imports without
Harbor: the parts that do not touch Harbor (the command, reading the event stream) are
plain functions, and `WyckoffAgent` is defined only when `harbor` can be imported.
It imports nothing else of Wyckoff, so Harbor's environment needs only this file.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from typing import Any

EVENTS_FILE = "wyckoff.jsonl"
STDERR_FILE = "wyckoff.stderr.txt"
# what a run in the environment needs from the host's environment, when set there
FORWARDED_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "OPENROUTER_API_KEY",
    "NO_PROXY",
)
PERMISSION_MODES = ("default", "plan", "auto-edit", "auto", "yolo")
SANDBOXES = ("workspace-write", "read-only", "off")


def wyckoff_model(harbor_model: str) -> str:
    """Harbor's `provider/model` as Wyckoff's `provider:model` (an alias stays as is)."""
    provider, slash, model = harbor_model.partition("/")
    if not slash or ":" in harbor_model:
        return harbor_model
    return f"{provider}:{model}"


def run_command(
    instruction: str,
    *,
    events_dir: str,
    model: str | None,
    permission_mode: str,
    sandbox: str,
    max_budget_usd: float | None = None,
) -> str:
    """The shell command that runs one headless turn and keeps its events."""
    argv = ["wyckoff", "run", "--output-format", "stream-json", "--permission-mode", permission_mode]
    argv += ["--sandbox", sandbox]
    if model:
        argv += ["--model", wyckoff_model(model)]
    if max_budget_usd is not None:
        argv += ["--max-budget-usd", repr(float(max_budget_usd))]
    argv.append("-")  # the instruction on stdin: any length, never read as an option
    events = shlex.quote(f"{events_dir}/{EVENTS_FILE}")
    errors = shlex.quote(f"{events_dir}/{STDERR_FILE}")
    return (
        'export PATH="$HOME/.local/bin:$PATH"; '
        f"mkdir -p {shlex.quote(events_dir)}; "
        f"printf '%s' {shlex.quote(instruction)} | {shlex.join(argv)} 2>{errors} | tee {events}"
    )


def install_command(package: str) -> str:
    """Install `package` (a version spec, a wheel or a git URL) as the `wyckoff` tool."""
    return (
        "set -euo pipefail; "
        "if ! command -v uv >/dev/null 2>&1; then curl -LsSf https://astral.sh/uv/install.sh | sh; fi; "
        'export PATH="$HOME/.local/bin:$PATH"; '
        f"uv tool install --force --python 3.12 {shlex.quote(package)} && wyckoff --version"
    )


@dataclass
class RunReport:
    """What a turn's stream-json says: the `done` totals, per-model usage, the error."""

    done: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    by_model: dict[str, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> RunReport:
        report = cls()
        for line in text.splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line of a killed run
            if not isinstance(event, dict):
                continue
            kind = event.get("type")
            if kind == "done":
                report.done = event
            elif kind == "error":
                report.error = event
            elif kind == "usage":
                totals = report.by_model.setdefault(str(event.get("model")), {})
                for key in ("input_tokens", "output_tokens", "cache_read_tokens"):
                    totals[key] = totals.get(key, 0) + int(event.get(key) or 0)
        return report

    def totals(self) -> dict[str, int]:
        """Every call's tokens: the `done` event's when the turn ended, else the sum so far."""
        if self.done is not None and isinstance(self.done.get("usage"), dict):
            usage = self.done["usage"]
            return {
                key: int(usage.get(key) or 0)
                for key in ("input_tokens", "output_tokens", "cache_read_tokens")
            }
        summed: dict[str, int] = {}
        for totals in self.by_model.values():
            for key, value in totals.items():
                summed[key] = summed.get(key, 0) + value
        return summed

    def metadata(self) -> dict[str, Any]:
        data: dict[str, Any] = {"reason": self.done.get("reason") if self.done else None}
        if self.done is not None:
            data.update(rounds=self.done.get("rounds"), stop_reason=self.done.get("stop_reason"))
        if self.error is not None:
            data["error"] = {"kind": self.error.get("kind"), "message": self.error.get("message")}
        return data


def forwarded_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    source = os.environ if environ is None else environ
    return {name: source[name] for name in FORWARDED_ENV if source.get(name)}


def _choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"{what} {value!r} is not one of {', '.join(allowed)}")
    return value


def __getattr__(name: str) -> Any:
    if name == "WyckoffAgent":  # only reached when Harbor could not be imported
        raise ImportError("WyckoffAgent needs Harbor, which needs Python 3.12+: pip install harbor")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


try:
    from harbor.agents.installed.base import BaseInstalledAgent, NonZeroAgentExitCodeError
    from harbor.environments.base import BaseEnvironment
    from harbor.models.agent.context import AgentContext, ModelUsage
except ImportError:  # Harbor is not installed (or this is Python 3.11): no agent class
    pass
else:

    class WyckoffAgent(BaseInstalledAgent):
        """Runs Wyckoff headless in the task's environment.

        Agent kwargs (`--ak name=value`): `permission_mode` (default `yolo`: the
        environment is the sandbox), `sandbox` (default `off`: bubblewrap needs user
        namespaces, which most containers lack), `package` (what `uv tool install`
        installs: default `wyckoff`, pinned to `--ak version=...` when given; a wheel
        path or a git URL works too), `max_budget_usd`.
        """

        def __init__(
            self,
            *args: Any,
            permission_mode: str = "yolo",
            sandbox: str = "off",
            package: str = "wyckoff",
            max_budget_usd: float | str | None = None,
            **kwargs: Any,
        ) -> None:
            super().__init__(*args, **kwargs)
            self.permission_mode = _choice(permission_mode, PERMISSION_MODES, "permission_mode")
            self.sandbox = _choice(sandbox, SANDBOXES, "sandbox")
            self.package = package
            self.max_budget_usd = None if max_budget_usd is None else float(max_budget_usd)

        @staticmethod
        def name() -> str:
            return "wyckoff"

        def get_version_command(self) -> str | None:
            return 'export PATH="$HOME/.local/bin:$PATH"; wyckoff --version'

        def parse_version(self, stdout: str) -> str:
            return stdout.strip().removeprefix("wyckoff").strip()

        async def install(self, environment: BaseEnvironment) -> None:
            await self.ensure_system_dependencies(environment, ("curl", "git", "ca_certificates"))
            version = self.version()
            package = f"{self.package}=={version}" if version and self.package == "wyckoff" else self.package
            await self.exec_as_agent(environment, command=install_command(package))

        async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
            command = run_command(
                self.render_instruction(instruction),
                events_dir=str(self.environment_logs_dir),
                model=self.model_name,
                permission_mode=self.permission_mode,
                sandbox=self.sandbox,
                max_budget_usd=self.max_budget_usd,
            )
            try:
                result = await self.exec_as_agent(environment, command=command, env=forwarded_env())
            except NonZeroAgentExitCodeError:
                # the turn did not complete: its tokens and cost still count
                kept = await environment.exec(
                    command=f"cat {shlex.quote(f'{self.environment_logs_dir}/{EVENTS_FILE}')}"
                )
                self.report_into(RunReport.parse(kept.stdout or ""), context)
                raise
            self.report_into(RunReport.parse(result.stdout or ""), context)

        def populate_context_post_run(self, context: AgentContext) -> None:
            """After a timeout the context is empty: read the events Harbor synced back."""
            path = self.logs_dir / EVENTS_FILE
            if path.is_file():
                self.report_into(RunReport.parse(path.read_text(encoding="utf-8", errors="replace")), context)

        @staticmethod
        def report_into(report: RunReport, context: AgentContext) -> None:
            totals = report.totals()
            context.n_input_tokens = totals.get("input_tokens", 0)
            context.n_output_tokens = totals.get("output_tokens", 0)
            context.n_cache_tokens = totals.get("cache_read_tokens", 0)
            if report.done is not None:
                context.cost_usd = report.done.get("cost_usd")
            context.model_usage = {
                model: ModelUsage(
                    n_input_tokens=usage.get("input_tokens", 0),
                    n_output_tokens=usage.get("output_tokens", 0),
                    n_cache_tokens=usage.get("cache_read_tokens", 0),
                )
                for model, usage in report.by_model.items()
            } or None
            context.metadata = {**(context.metadata or {}), "wyckoff": report.metadata()}
