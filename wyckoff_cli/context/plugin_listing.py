"""What a plugin brings, shown before it is installed: its hooks and MCP servers (which
run programs, and run only once trusted), its commands, and its agents and skills with
the context they cost — the tokens of the descriptions that go into every request
(the skills list of the system prompt, the `task` tool's list of agents)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.context.frontmatter import FrontMatterError, read_document
from wyckoff_cli.context.tokens import estimate_text
from wyckoff_cli.storage.plugin_manifest import PluginManifest


@dataclass(frozen=True)
class Described:
    name: str
    description: str
    tokens: int = 0


@dataclass
class PluginListing:
    manifest: PluginManifest
    hooks: list[str] = field(default_factory=list)  # "PreToolUse [Bash]: command …"
    servers: list[str] = field(default_factory=list)  # "name: command args" / "name: url"
    commands: list[Described] = field(default_factory=list)
    agents: list[Described] = field(default_factory=list)
    skills: list[Described] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def runs_programs(self) -> bool:
        return bool(self.hooks or self.servers)

    @property
    def context_tokens(self) -> int:
        return sum(a.tokens for a in self.agents) + sum(s.tokens for s in self.skills)

    def lines(self) -> list[str]:
        """The listing as text, one part per block."""
        m = self.manifest
        head = f"{m.name} {m.version}".strip() + (f" — {m.description}" if m.description else "")
        out = [head, *([f"  author: {m.author}"] if m.author else [])]
        blocks: list[tuple[str, list[str]]] = [
            ("hooks (run programs once trusted)", self.hooks),
            ("MCP servers (run once trusted)", self.servers),
            (
                "commands",
                [f"/{c.name}" + (f" — {c.description}" if c.description else "") for c in self.commands],
            ),
            ("agents", [f"{a.name} ({a.tokens:,} tokens) — {a.description}" for a in self.agents]),
            ("skills", [f"{s.name} ({s.tokens:,} tokens) — {s.description}" for s in self.skills]),
        ]
        for title, items in blocks:
            if items:
                out.append(f"  {title}:")
                out.extend(f"    {item}" for item in items)
        out.append(f"  context cost of its agents and skills: {self.context_tokens:,} tokens per request")
        out.extend(f"  problem: {p}" for p in self.problems)
        return out


def _front(path: Path, problems: list[str], grant_key: str = "") -> tuple[str, str, str] | None:
    """The file's name, description and what it grants (`allowed-tools` of a command,
    `permissionMode` of an agent), which the install must show."""
    try:
        document = read_document(path)
    except FrontMatterError as exc:  # its message names the file and the line
        problems.append(f"{exc}; it will be skipped")
        return None
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: cannot read it ({exc}); it will be skipped")
        return None
    granted = ", ".join(document.items(grant_key)) if grant_key else ""
    shown = f" [{grant_key}: {granted}]" if granted else ""
    return document.text("name"), " ".join(document.text("description").split()), shown


def _hook_lines(hooks: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, dict):
                continue
            matcher = group.get("matcher") or "*"
            for hook in group.get("hooks", []) if isinstance(group.get("hooks"), list) else []:
                if isinstance(hook, dict):
                    kind = hook.get("type", "command")
                    what = hook.get("command") or hook.get("url") or hook.get("prompt") or ""
                    lines.append(f"{event} [{matcher}] {kind}: {what}")
    return lines


def _server_lines(servers: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for name, entry in servers.items():
        if "url" in entry:
            lines.append(f"{name}: {entry.get('url')}")
        else:
            args = entry.get("args", [])
            lines.append(f"{name}: " + " ".join([str(entry.get("command", "")), *map(str, args)]).strip())
    return lines


def list_plugin(manifest: PluginManifest) -> PluginListing:
    listing = PluginListing(manifest, _hook_lines(manifest.hooks), _server_lines(manifest.mcp_servers))
    for path in manifest.command_paths:
        for file in [path] if path.is_file() else sorted(path.rglob("*.md")):
            parts = (file.stem,) if path.is_file() else file.relative_to(path).with_suffix("").parts
            if (front := _front(file, listing.problems, "allowed-tools")) is not None:
                _, description, grants = front
                listing.commands.append(Described(":".join((manifest.name, *parts)), description + grants))
    for path in manifest.agent_paths:
        for file in [path] if path.is_file() else sorted(path.glob("*.md")):
            if (front := _front(file, listing.problems, "permissionMode")) is not None:
                name, description, grants = front
                name = name or file.stem
                tokens = estimate_text(f"- {name}: {description}")
                listing.agents.append(Described(name, description + grants, tokens))
    for path in manifest.skill_paths:
        own = path / "SKILL.md"
        for file in [own] if own.is_file() else sorted(path.glob("*/SKILL.md")):
            if (front := _front(file, listing.problems)) is not None:
                name, description, _ = front
                name = name or file.parent.name
                listing.skills.append(Described(name, description, estimate_text(f"- {name}: {description}")))
    root = f"{manifest.root}/"  # a staged copy's folder means nothing to the reader: name the plugin
    listing.problems = [p.replace(root, f"{manifest.name}/") for p in listing.problems]
    return listing
