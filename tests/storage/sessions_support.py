"""Helpers for the session tests: a scripted runtime recorded into a session."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.runtime.support import HostedRuntime
from wyckoff_cli.context.hooks import Compaction, ContextHooks
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.events import ApprovalRequested
from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.storage.recorder import SessionRecorder
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.registry import ToolRegistry

OBJECT = {"type": "object", "properties": {}, "additionalProperties": True}
BIG_RESULT = "".join(f"line {i}: {'x' * 60}\n" for i in range(300))  # > 8,000 characters


async def _echo(args: dict[str, Any], ctx: ToolContext) -> str:
    return f"echo {json.dumps(args, sort_keys=True)}"


async def _big(args: dict[str, Any], ctx: ToolContext) -> str:
    return BIG_RESULT


async def _shell(args: dict[str, Any], ctx: ToolContext) -> str:
    for chunk in ("collecting ", "3 items\n", "3 passed\n"):
        ctx.emit_output(chunk)
    return "3 passed"


def tools() -> list[Tool]:
    return [
        Tool("echo", "Echo the arguments.", OBJECT, _echo, concurrency_safe=True, kind="read"),
        Tool("big", "A large result.", OBJECT, _big, concurrency_safe=True, kind="read"),
        Tool("shell", "Run a command.", OBJECT, _shell, requires_approval=True, kind="execute"),
    ]


async def allow_all(request: ApprovalRequested) -> ApprovalDecision:
    return ApprovalDecision.allow()


class SummarizingContext(ContextHooks):
    """Compacts once, when armed: everything before the newest user message becomes one
    summary message. The replaced messages are archived through the recorder first."""

    def __init__(self) -> None:
        self.recorder: SessionRecorder | None = None
        self.armed = False

    async def maybe_compact(
        self, history: Sequence[Message], system_prompt: str, tools: list[ToolSpec], provider: Any
    ) -> Compaction | None:
        if not self.armed or self.recorder is None:
            return None
        self.armed = False
        last_user = max(i for i, m in enumerate(history) if m.role == "user")
        new_history = [Message.user("Summary: we echoed and read a big file.", synthetic="compaction")]
        new_history += history[last_user:]
        archive = self.recorder.archive_replaced(history, new_history)
        return Compaction(
            new_history, ev.Compacted(len(history), len(new_history), 5000, 800, "summary", str(archive))
        )


def make_runtime(
    rounds: list[Any], recorder: SessionRecorder, workspace: Path, context: ContextHooks | None = None
) -> tuple[HostedRuntime, ScriptedProvider]:
    provider = ScriptedProvider(rounds)
    runtime = HostedRuntime(
        provider,
        ToolRegistry(tools()),
        workspace=workspace,
        approver=allow_all,
        results_dir=recorder.results_dir,
        context=context,
    )
    return runtime, provider


async def run_turn(runtime: HostedRuntime, recorder: SessionRecorder, prompt: str) -> list[ev.RuntimeEvent]:
    events = []
    async for event in runtime.run_stream(recorder.conversation, prompt):
        recorder.record(event)
        events.append(event)
    return events


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def messages_equal(a: Sequence[Message], b: Sequence[Message]) -> bool:
    return [m.to_dict() for m in a] == [m.to_dict() for m in b] and list(a) == list(b)
