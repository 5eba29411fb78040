"""The `remember` tool: the model saves a durable memory.

No approval is needed (it writes only to the memory database, and the UI shows the
call); its permission kind is `other`. A near-duplicate of an existing memory is not
saved again: the tool says which memory already holds it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wyckoff_cli.context.memory import KINDS, MAX_MEMORY_CHARS, InvalidMemory, MemoryStore
from wyckoff_cli.tools.base import Tool, ToolContext, ToolError, ToolOutcome

DESCRIPTION = (
    "Save a durable memory for future sessions: a preference the user stated, a stable fact "
    "about this project or the user's setup that the code does not show, or a decision and its "
    "reason. One self-contained sentence. Not for secrets or details of the current task. "
    'Scope "project" (default) is this repository; "user" holds in every project.'
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {
            "type": "string",
            "minLength": 1,
            "description": f"The memory, one self-contained sentence (at most {MAX_MEMORY_CHARS} characters).",
        },
        "kind": {"type": "string", "enum": list(KINDS), "description": "Default: fact."},
        "scope": {"type": "string", "enum": ["project", "user"], "description": "Default: project."},
    },
    "required": ["text"],
    "additionalProperties": False,
}


def remember_tool(
    store: MemoryStore,
    project_root: Path,
    *,
    session_id: Callable[[], str | None] | str | None = None,
) -> Tool:
    """The `remember` tool bound to a store and a project. `session_id` (or a function
    returning it, for sessions created later) is recorded as the memory's source."""

    async def run(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        source = session_id() if callable(session_id) else session_id
        scope = args.get("scope", "project")
        try:
            result = store.add(
                args["text"],
                kind=args.get("kind", "fact"),
                scope=scope,
                project=project_root,
                source_session=source,
            )
        except InvalidMemory as exc:
            raise ToolError(exc.message) from None
        except sqlite3.Error as exc:
            raise ToolError(f"the memory database failed: {exc}") from None
        memory = result.memory
        if result.created:
            text = f"Saved memory #{memory.id} ({memory.scope}, {memory.kind})."
        else:
            text = f"Already remembered as #{memory.id} ({memory.scope}): {memory.text}"
        display = {
            "memory": {
                "id": memory.id,
                "text": memory.text,
                "kind": memory.kind,
                "scope": memory.scope,
                "created": result.created,
            }
        }
        return ToolOutcome(text, display)

    return Tool(
        name="remember",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        run=run,
        concurrency_safe=False,
        requires_approval=False,
        kind="other",
        summary_arg="text",
    )
