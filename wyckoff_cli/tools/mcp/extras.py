"""Resources and prompts of the connected servers, for hosts (UI-free).

- `@SERVER:URI` in a prompt attaches that resource: `attach_resources` reads each one
  and appends its contents to the message; `resource_completions` lists what a prompt's
  completion offers after `@`.
- A server's prompts are slash commands `/mcp__SERVER__PROMPT ARGS`: `prompt_commands`
  lists them, `render_prompt` turns a command line into the text to send (arguments are
  `key=value` words, or positional in the prompt's argument order; the last one takes
  the rest of the line).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.mcp.manager import McpManager
from wyckoff_cli.tools.mcp.names import prompt_command
from wyckoff_cli.tools.mcp.results import prompt_text, resource_text

_MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_.\-]+):(\S+)")


@dataclass(frozen=True)
class ResourceItem:
    server: str
    uri: str
    name: str
    description: str

    @property
    def mention(self) -> str:
        return f"@{self.server}:{self.uri}"


@dataclass(frozen=True)
class PromptCommand:
    command: str  # without the slash
    server: str
    prompt: str
    description: str
    arguments: tuple[tuple[str, bool], ...]  # (name, required)

    @property
    def hint(self) -> str:
        return " ".join(f"<{n}>" if req else f"[{n}]" for n, req in self.arguments)


def resource_completions(manager: McpManager, prefix: str = "") -> list[ResourceItem]:
    """Resources of connected servers whose mention starts with `@` + `prefix`."""
    items: list[ResourceItem] = []
    for name, connection in manager.connections.items():
        if connection.state != "connected":
            continue
        for resource in connection.listing.resources:
            item = ResourceItem(name, str(resource.uri), resource.name or "", resource.description or "")
            if item.mention[1:].startswith(prefix):
                items.append(item)
    return items


async def attach_resources(manager: McpManager, text: str, results_dir: Path | None = None) -> str:
    """`text` with the contents of every `@SERVER:URI` it mentions appended; a mention of
    a server that is not configured is left alone, one that cannot be read is noted."""
    blocks: list[str] = []
    seen: set[tuple[str, str]] = set()
    for match in _MENTION.finditer(text):
        server, uri = match.group(1), match.group(2).rstrip(".,;:)")
        connection = manager.connection(server)
        if connection is None or (server, uri) in seen:
            continue
        seen.add((server, uri))
        try:
            result = await connection.read_resource(uri)
            body = "\n".join(resource_text(c, results_dir) for c in result.contents)
        except ToolError as exc:
            body = f"(could not be read: {exc})"
        blocks.append(f'<mcp-resource server="{server}" uri="{uri}">\n{body}\n</mcp-resource>')
    return text if not blocks else text + "\n\n" + "\n\n".join(blocks)


def prompt_commands(manager: McpManager) -> list[PromptCommand]:
    out: list[PromptCommand] = []
    for name, connection in manager.connections.items():
        if connection.state != "connected":
            continue
        for prompt in connection.listing.prompts:
            arguments = tuple((a.name, bool(a.required)) for a in (prompt.arguments or []))
            out.append(
                PromptCommand(
                    prompt_command(name, prompt.name), name, prompt.name, prompt.description or "", arguments
                )
            )
    return out


def parse_prompt_arguments(command: PromptCommand, line: str) -> dict[str, str]:
    """`key=value` words, else positional; a missing required argument is an error."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    names = [n for n, _ in command.arguments]
    values: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in names:
            values[key] = value
        else:
            positional.append(word)
    free = [n for n in names if n not in values]
    for index, name in enumerate(free):
        if index >= len(positional):
            break
        values[name] = " ".join(positional[index:]) if index == len(free) - 1 else positional[index]
    missing = [n for n, required in command.arguments if required and n not in values]
    if missing:
        raise ToolError(
            f"/{command.command} needs {', '.join(missing)} (usage: /{command.command} {command.hint})"
        )
    return values


async def render_prompt(
    manager: McpManager, command_name: str, line: str, results_dir: Path | None = None
) -> str:
    """The text a prompt slash command sends as the user's message."""
    command = next((c for c in prompt_commands(manager) if c.command == command_name), None)
    if command is None:
        raise ToolError(f"no MCP prompt /{command_name}")
    connection = manager.connection(command.server)
    assert connection is not None
    result = await connection.get_prompt(command.prompt, parse_prompt_arguments(command, line))
    return prompt_text(result, results_dir)


# --------------------------------------------------------------------------- the table


_STATE_WORDS = {
    "connected": "connected",
    "connecting": "connecting",
    "failed": "failed",
    "disabled": "disabled",
    "needs_trust": "needs trust",
    "changed": "tools changed",
    "closed": "closed",
}


def status_rows(manager: McpManager) -> list[dict[str, object]]:
    """One dict per server: name, scope, transport, state, reason, tools (count), target."""
    return [
        {
            "name": s.name,
            "scope": s.scope,
            "transport": s.transport,
            "state": s.state,
            "reason": s.reason,
            "tools": len(s.tools),
            "target": s.target,
        }
        for s in manager.statuses()
    ]


def format_table(manager: McpManager, *, with_tools: bool = False) -> str:
    """What `wyckoff mcp list` prints and `/mcp` shows (with each server's tools)."""
    statuses = manager.statuses()
    if not statuses:
        return "No MCP servers configured (see docs/MCP.md)."
    width = max(len("server"), *(len(s.name) for s in statuses))
    scope_width = max(7, *(len(s.scope) for s in statuses))
    lines = [f"{'server':<{width}}  {'scope':<{scope_width}}  {'transport':<9}  {'state':<13}  tools  runs"]
    for s in statuses:
        count = str(len(s.tools)) if s.state == "connected" else "-"
        lines.append(
            f"{s.name:<{width}}  {s.scope:<{scope_width}}  {s.transport:<9}  {_STATE_WORDS[s.state]:<13}  {count:>5}  {s.target}"
        )
        if s.reason:
            first, *rest = s.reason.splitlines()
            lines.append(f"{'':<{width}}  ↳ {first}")
            lines.extend(f"{'':<{width}}    {line}" for line in rest[-6:])
        if with_tools and s.tools:
            lines.extend(f"{'':<{width}}    {name}" for name in s.tools)
    return "\n".join(lines)
