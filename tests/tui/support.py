"""A scripted chat app for Pilot and snapshot tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.approval import Approver
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.storage.recorder import SessionRecorder
from wyckoff_cli.storage.sessions import LoadedSession, SessionStore
from wyckoff_cli.tools.base import Tool
from wyckoff_cli.tools.policy import ApprovalPolicy
from wyckoff_cli.tools.registry import ToolRegistry
from wyckoff_cli.tui.app import WyckoffApp
from wyckoff_cli.tui.chat_session import ChatDeps


def make_deps(
    root: Path, rounds: list[Any], tools: list[Tool] | None = None, **overrides: Any
) -> tuple[ChatDeps, ScriptedProvider]:
    provider = ScriptedProvider(rounds, model="scripted:test")

    def build_runtime(
        model: str, mode: str, approver: Approver, recorder: SessionRecorder
    ) -> tuple[AgentRuntime, Any]:
        if tools is None:
            from wyckoff_cli.tools.builtin import default_registry

            registry = default_registry()
        else:
            registry = ToolRegistry(tools)
        runtime = AgentRuntime(
            provider,
            registry,
            workspace=root,
            policy=ApprovalPolicy(mode=mode),  # type: ignore[arg-type]
            approver=approver,
            results_dir=recorder.results_dir,
        )
        return runtime, lambda: "SYSTEM"

    values: dict[str, Any] = {
        "project_root": root,
        "model": "scripted:test",
        "mode": "default",
        "store": SessionStore(),
        "build_runtime": build_runtime,
        "context_window": lambda _m: 200_000,
        "price": lambda _m, u: (
            u.input_tokens * 3e-6 + u.output_tokens * 15e-6,
            u.cache_read_tokens * 2.7e-6,
        ),
        "input_history_file": root / ".history.jsonl",
        "models": ["scripted:test", "scripted:other"],
    }
    values.update(overrides)
    return ChatDeps(**values), provider


def make_app(
    root: Path,
    rounds: list[Any],
    tools: list[Tool] | None = None,
    *,
    loaded: LoadedSession | None = None,
    **overrides: Any,
) -> tuple[WyckoffApp, ScriptedProvider]:
    deps, provider = make_deps(root, rounds, tools, **overrides)
    return WyckoffApp(deps, loaded=loaded), provider
