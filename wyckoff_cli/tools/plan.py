"""Plan mode as the model sees it: which tools each mode offers, the note that tells
the model the mode changed, and `exit_plan`, which presents a plan to the person.

`exit_plan` always asks (it is the approval): the host shows the plan and either
approves it — switching the session to the mode the person picks before the call
runs — or denies it with notes, and the session stays in plan mode. The tool itself
only reports the outcome to the model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wyckoff_cli.core.messages import ToolSpec
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.registry import ToolRegistry

PLAN_REFUSED_KINDS = ("edit", "execute")  # what plan mode does not offer
MODE_NOTES: dict[str, str] = {
    "default": "Reads run freely; file edits and commands ask the user first.",
    "plan": (
        "Plan mode is read-only: file edits and commands are not available. Read and search to "
        "work out a plan, then call exit_plan with it; the user approves it (and switches modes) "
        "or sends notes back."
    ),
    "auto-edit": "File edits inside the workspace run without asking; commands ask the user first.",
    "auto": "File edits inside the workspace and commands that stay inside the sandbox run without asking; "
    "network access, unsandboxed runs, outside paths and destructive commands still ask.",
    "yolo": "Everything inside the workspace runs without asking; outside paths and destructive "
    "commands still ask.",
}


def mode_note(mode: str) -> str:
    """The short note the next user message carries when the mode changed (it goes into
    the new message, never the system prompt, so the cached prefix stays valid)."""
    return f"<system-reminder>The permission mode is now {mode}. {MODE_NOTES.get(mode, '')}</system-reminder>"


def offered_tools(specs: Iterable[ToolSpec], registry: ToolRegistry, mode: str) -> tuple[ToolSpec, ...]:
    """The tools a mode offers: plan mode leaves out edit and command tools, and only
    plan mode offers `exit_plan`."""
    offered: list[ToolSpec] = []
    for spec in specs:
        tool = registry.get(spec.name)
        if spec.name == EXIT_PLAN and mode != "plan":
            continue
        if mode == "plan" and tool is not None and tool.kind in PLAN_REFUSED_KINDS:
            continue
        offered.append(spec)
    return tuple(offered)


EXIT_PLAN = "exit_plan"


async def _run(args: dict[str, Any], ctx: ToolContext) -> str:
    if ctx.mode == "plan":
        return (
            "The plan was approved, but the session is still in plan mode: edits and commands "
            "stay unavailable. Stop here; the user switches modes to carry it out."
        )
    return (
        f"The user approved the plan and switched the permission mode to {ctx.mode}. "
        f"{MODE_NOTES.get(ctx.mode, '')} Carry out the plan now."
    )


def _preview(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"kind": "plan", "plan": str(args.get("plan", ""))}


exit_plan = Tool(
    name=EXIT_PLAN,
    description=(
        "Present your plan to the user for approval and leave plan mode. Use it in plan mode once "
        "you have read enough to know what to change: give the plan as concise Markdown (the steps, "
        "the files, how you will check the result). If the user approves, the mode switches and you "
        "carry the plan out; if not, you get their notes and stay in plan mode."
    ),
    parameters={
        "type": "object",
        "properties": {"plan": {"type": "string", "minLength": 1, "description": "The plan, in Markdown."}},
        "required": ["plan"],
        "additionalProperties": False,
    },
    run=_run,
    requires_approval=True,
    kind="other",
    preview=_preview,
    editable_fields=("plan",),
)
