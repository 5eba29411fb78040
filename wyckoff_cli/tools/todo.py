"""`todo_write`: the model's visible plan for the turn, shown by the TUI as a checklist.

Each call replaces the whole list. The result's `display` carries
`{"todos": [{"content", "status", "active_form"?}, …]}` for UIs.
"""

from __future__ import annotations

from typing import Any

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome

STATUSES = ("pending", "in_progress", "completed")
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}

DESCRIPTION = """\
Write your plan for this task as a checklist the user sees, and keep it current.

- `items`: the whole list, every call (it replaces the previous one). Each item has \
`content` (what to do, imperative: "Add a --json flag to the list command") and \
`status`: `pending`, `in_progress` or `completed`.
- Use it for work with three or more steps, or when the user gives several requests. \
Skip it for a single quick change or a question.
- Keep exactly one item `in_progress` while you work; mark an item `completed` as \
soon as it is done (not in batches at the end), and only when it is really done \
(tests pass, nothing left half-finished). Add items you discover; remove ones that \
no longer apply."""


def _items(args: dict[str, Any]) -> list[dict[str, str]]:
    items: list[dict[str, str]] = []
    for index, raw in enumerate(args["items"]):
        content = str(raw.get("content", "")).strip()
        if not content:
            raise ToolError(f"items[{index}].content is empty: say what the step is.")
        item = {"content": content, "status": str(raw.get("status", "pending"))}
        active = raw.get("active_form")
        if isinstance(active, str) and active.strip():
            item["active_form"] = active.strip()
        items.append(item)
    return items


async def _run(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
    items = _items(args)
    counts = {status: sum(1 for item in items if item["status"] == status) for status in STATUSES}
    lines = [
        f"Plan updated: {counts['completed']} completed, {counts['in_progress']} in progress, "
        f"{counts['pending']} pending."
    ]
    lines.extend(f"{_MARKS[item['status']]} {item['content']}" for item in items)
    if counts["in_progress"] > 1:
        lines.append("Note: more than one item is in progress; keep one at a time when you can.")
    if items and counts["completed"] == len(items):
        lines.append("Every item is completed.")
    return ToolOutcome("\n".join(lines), {"todos": items})


todo_write = Tool(
    name="todo_write",
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "description": "The whole checklist, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1, "description": "The step."},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "active_form": {
                            "type": "string",
                            "description": "Optional present-tense label shown while in progress.",
                        },
                    },
                    "required": ["content", "status"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["items"],
        "additionalProperties": False,
    },
    run=_run,
    kind="other",
    summary_arg=None,
)
