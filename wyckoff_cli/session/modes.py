"""What the model is told about the permission mode.

`ModeTools` is a runtime hook that offers, on every model call, only the tools the
session's current mode allows (plan mode: no edit or command tools; `exit_plan` only
there). `ModeNotes` remembers which mode the model was last told about and prefixes
the next user message with a short note when it changed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from wyckoff_cli.runtime.hooks import ModelRequest, RuntimeHooks
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy
from wyckoff_cli.tools.plan import mode_note, offered_tools
from wyckoff_cli.tools.registry import ToolRegistry


class ModeTools(RuntimeHooks):
    def __init__(self, policy: ApprovalPolicy, registry: ToolRegistry) -> None:
        self.policy = policy
        self.registry = registry

    async def before_model_call(self, request: ModelRequest) -> ModelRequest | None:
        tools = offered_tools(request.tools, self.registry, self.policy.mode)
        return None if tools == request.tools else replace(request, tools=tools)


@dataclass
class ModeNotes:
    """`told` is the mode the model knows about (a new conversation: the default, which
    needs no note)."""

    told: str = "default"

    def prefix(self, mode: str, text: str) -> str:
        """`text` with the note in front when `mode` is not what the model was told."""
        if mode == self.told:
            return text
        self.told = mode
        return f"{mode_note(mode)}\n\n{text}"
