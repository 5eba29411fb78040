"""Hooks of type `agent`: a read-only sub-agent looks around, then decides.

As in Claude Code: `{"type": "agent", "prompt": "Check that the tests cover $ARGUMENTS",
"timeout": 60}`. Like a `prompt` hook (runtime/prompt_hooks.py: the same `$ARGUMENTS`,
the same `{"ok": …, "reason": …}` answer, the same meaning), but the model may first read
the workspace with `read_file`, `list_dir`, `glob` and `grep` (nothing that writes or
runs; a read outside the workspace would need a person, and is refused), for at most
`MAX_ROUNDS` rounds. Its final text is the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.runtime.approval import answer_approvals, deny_without_approver
from wyckoff_cli.runtime.loop import AgentRuntime, RuntimeSettings
from wyckoff_cli.runtime.prompt_hooks import Judge
from wyckoff_cli.tools.registry import ToolRegistry

READ_ONLY = ("read_file", "list_dir", "glob", "grep")
MAX_ROUNDS = 8
AGENT_NOTE = (
    " You may read the workspace first (read_file, list_dir, glob, grep); you cannot change "
    "anything. End with the JSON object alone."
)


def agent_judge(provider: LLMProvider, tools: Callable[[], ToolRegistry], workspace: Path) -> Judge:
    """A judge that runs a read-only child agent in `workspace` with `provider`; `tools`
    gives the session's registry, of which only the read-only tools are offered."""

    async def judge(system: str, text: str) -> str:
        registry = tools()
        offered = ToolRegistry([tool for name in READ_ONLY if (tool := registry.get(name)) is not None])
        runtime = AgentRuntime(
            provider, offered, workspace=workspace, settings=RuntimeSettings(max_tool_rounds=MAX_ROUNDS)
        )
        answer = ""
        stream = runtime.run_stream(Conversation(), text, system_prompt=system + AGENT_NOTE)
        async for event in answer_approvals(stream, deny_without_approver):
            if isinstance(event, ev.TurnDone):
                answer = event.text
        return answer

    return judge
