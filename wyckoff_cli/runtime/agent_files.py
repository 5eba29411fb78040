"""Sub-agent definitions: Markdown files with front matter, compatible with Claude Code's.

    ---
    name: reviewer
    description: Reviews a change for bugs; use after editing several files.
    tools: read_file, grep, glob        # or Claude Code's Read, Grep, Glob; or a YAML list
    model: inherit                      # or a model id / alias
    max_rounds: 10
    permission_mode: plan               # can only narrow the parent's mode
    ---
    You are a careful reviewer. ...

The body is the agent's system prompt. Files are looked up in `.wyckoff/agents/*.md`,
then the user config folder's `agents/`, then `.claude/agents/*.md`; the first file
with a name wins, and files override the built-in `explore` and `general`. A file
whose front matter is bad is skipped and reported once, with its file and line.
Only the YAML subset agent files use is read: `key: value`, `[a, b]` and `- item`
lists, quoted strings, comments.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from wyckoff_cli.core.claude_names import CLAUDE_MODES as _CLAUDE_MODES  # Claude Code's modes, as ours
from wyckoff_cli.core.claude_names import CLAUDE_TOOLS  # Claude Code's tool names, as ours
from wyckoff_cli.runtime.agent_yaml import YamlError, read_mapping
from wyckoff_cli.storage.claude_home import claude_user_dir
from wyckoff_cli.storage.plugins import active_plugins

PERMISSION_ORDER = ("plan", "default", "auto-edit", "auto", "yolo")  # narrowest first
_CLAUDE_MODELS = {"sonnet", "opus", "haiku"}  # Claude Code's short names: we keep the parent's model
_KNOWN_KEYS = {
    "name", "description", "tools", "model", "max_rounds", "maxTurns", "permission_mode", "permissionMode",
    "isolation",
}  # fmt: skip
_IGNORED_KEYS = {  # Claude Code's, unused here
    "color", "disallowedTools", "skills", "hooks", "mcpServers", "memory", "background", "effort",
    "initialPrompt",
}  # fmt: skip
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
READ_ONLY_TOOLS = ("read_file", "list_dir", "glob", "grep")

EXPLORE_PROMPT = (
    "You are a search agent. Find what the task asks for in this codebase: list folders, glob for "
    "file names, grep for symbols and strings, read the relevant parts. You cannot change anything. "
    "Answer concisely with what you found, citing each finding as path:line. Say plainly when you "
    "could not find something."
)
GENERAL_PROMPT = (
    "You are a sub-agent working on one focused task for the main assistant. Do the task with the "
    "tools you have, then report back briefly: what you did, what you found, the files you changed, "
    "and anything left undone. Your final answer is all the main assistant sees."
)


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None  # tool names or rules; None: the parent's tools minus task
    model: str = "inherit"
    max_rounds: int | None = None
    permission_mode: str | None = None
    source: str = "built-in"  # "built-in" or the file's path
    isolation: str | None = None  # "worktree": each task runs in a git worktree of its own

    @property
    def origin(self) -> str:
        return self.source


@dataclass
class AgentCatalog:
    """The agents of one workspace, in a stable order (built-ins first, then by name)."""

    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # "FILE, line N: what is wrong"

    def get(self, name: str) -> AgentDefinition | None:
        """The agent `name`; a plugin's agent also by its bare name when only one plugin
        has an agent of that name and no other agent has it."""
        exact = self.agents.get(name)
        if exact is not None or ":" in name:
            return exact
        namespaced = [agent for key, agent in self.agents.items() if key.partition(":")[2] == name]
        return namespaced[0] if len(namespaced) == 1 else None

    def names(self) -> list[str]:
        return list(self.agents)

    def __iter__(self) -> Iterator[AgentDefinition]:
        return iter(self.agents.values())


BUILT_IN = (
    AgentDefinition(
        "explore",
        "Read-only search of the codebase: finds files, symbols and usages and reports back with "
        "paths and line numbers. Use it for broad searches, several at once for independent questions.",
        EXPLORE_PROMPT,
        tools=READ_ONLY_TOOLS,
    ),
    AgentDefinition(
        "general",
        "A general-purpose agent with your tools, for a self-contained multi-step task whose "
        "details you do not need in your own context.",
        GENERAL_PROMPT,
    ),
)


class FrontMatterError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def agent_dirs(root: Path, user_config_dir: Path) -> list[Path]:
    """Where agent files are looked up, first wins (the plugins' folders: `plugin_agent_dirs`)."""
    claude = claude_user_dir()  # ~/.claude/agents after the project's .claude/agents
    return [
        root / ".wyckoff" / "agents",
        user_config_dir / "agents",
        root / ".claude" / "agents",
        *([claude / "agents"] if claude is not None else []),
    ]


def plugin_agent_dirs(root: Path, *, trust_settings: bool = False) -> list[tuple[Path, str]]:
    """The installed plugins' agent folders (or files), each with its plugin's name."""
    active = active_plugins(root, trust_settings=trust_settings)
    return [(path, plugin.name) for plugin in active for path in plugin.agent_paths]


def load_agents(root: Path, user_config_dir: Path, *, trust_settings: bool = False) -> AgentCatalog:
    """Built-ins, then the files by name; a plugin's agents are named as Claude Code
    names them, `PLUGIN:AGENT`, so two plugins' `code-reviewer` both load."""
    found: dict[str, AgentDefinition] = {}
    problems: list[str] = []
    folders = [(folder, "") for folder in agent_dirs(root, user_config_dir)]
    folders += plugin_agent_dirs(root, trust_settings=trust_settings)  # `trust_settings`: active_plugins
    for folder, plugin in folders:
        try:
            files = [folder] if folder.is_file() else sorted(p for p in folder.glob("*.md") if p.is_file())
        except OSError:
            continue
        for path in files:
            try:
                agent = parse_agent_file(path)
            except FrontMatterError as exc:
                problems.append(f"{path}, line {exc.line}: {exc.message}; the agent was skipped")
                continue
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(f"{path}: cannot read it ({exc}); the agent was skipped")
                continue
            if plugin:
                agent = replace(agent, name=f"{plugin}:{agent.name}")
            found.setdefault(agent.name, agent)
    catalog = AgentCatalog()
    for agent in BUILT_IN:
        catalog.agents[agent.name] = found.pop(agent.name, agent)
    for name in sorted(found):
        catalog.agents[name] = found[name]
    catalog.problems = problems
    return catalog


def parse_agent_file(path: Path) -> AgentDefinition:
    return parse_agent(path.read_text(encoding="utf-8"), str(path))


def parse_agent(text: str, source: str) -> AgentDefinition:
    """One agent from a file's text; raises `FrontMatterError` naming the line."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError(1, "the file must start with front matter between two `---` lines")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise FrontMatterError(1, "the front matter is not closed by a `---` line")
    data, where = _front_matter(lines[1:end])
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise FrontMatterError(1, "`name` is missing")
    if not _NAME.fullmatch(name):
        raise FrontMatterError(
            where["name"], f"`name` {name!r} must be lowercase letters, digits, `-` or `_` (at most 64)"
        )
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise FrontMatterError(where.get("description", 1), "`description` is missing or empty")
    tools = _tools(data.get("tools"), where.get("tools", 1))
    model = data.get("model", "inherit")
    if not isinstance(model, str) or not model:
        raise FrontMatterError(where.get("model", 1), "`model` must be `inherit` or a model id")
    if model in _CLAUDE_MODELS:
        model = "inherit"
    max_rounds = data.get("max_rounds")
    if max_rounds is not None and not (
        isinstance(max_rounds, str) and max_rounds.isdigit() and 0 < int(max_rounds) <= 10_000
    ):
        raise FrontMatterError(where["max_rounds"], f"`max_rounds` must be 1 to 10000, not {max_rounds!r}")
    mode_key = "permission_mode" if "permission_mode" in data else "permissionMode"
    mode = data.get(mode_key)
    if mode is not None:
        if not isinstance(mode, str) or _CLAUDE_MODES.get(mode, mode) not in PERMISSION_ORDER:
            raise FrontMatterError(
                where[mode_key], f"`{mode_key}` must be one of {', '.join(PERMISSION_ORDER)}, not {mode!r}"
            )
        mode = _CLAUDE_MODES.get(mode, mode)
    isolation = data.get("isolation")
    if isolation is not None and isolation != "worktree":
        raise FrontMatterError(where["isolation"], f"`isolation` must be `worktree`, not {isolation!r}")
    body = "\n".join(lines[end + 1 :]).strip()
    if not body:
        raise FrontMatterError(end + 1, "the body (the agent's system prompt) is empty")
    return AgentDefinition(
        name,
        " ".join(description.split()),
        body,
        tools,
        model,
        int(max_rounds) if isinstance(max_rounds, str) else None,
        mode if isinstance(mode, str) else None,
        source,
        isolation,
    )


def _front_matter(lines: list[str]) -> tuple[dict[str, str | list[str]], dict[str, int]]:
    try:
        data, where = read_mapping(lines, 2, _KNOWN_KEYS | _IGNORED_KEYS)
    except YamlError as exc:
        raise FrontMatterError(exc.line, exc.message) from None
    for key in data:
        if key not in _KNOWN_KEYS and key not in _IGNORED_KEYS:
            known = ", ".join(sorted(_KNOWN_KEYS - {"permissionMode", "maxTurns"}))
            raise FrontMatterError(where[key], f"unknown key `{key}` (known: {known})")
    if "maxTurns" in data:  # Claude Code's name for max_rounds
        if "max_rounds" in data:
            raise FrontMatterError(where["maxTurns"], "`maxTurns` and `max_rounds` are both given")
        data["max_rounds"], where["max_rounds"] = data.pop("maxTurns"), where["maxTurns"]
    for key in _IGNORED_KEYS:
        data.pop(key, None)
    return {k: v for k, v in data.items() if v != [] or k == "tools"}, where


def _tools(value: str | list[str] | None, line: int) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = value if isinstance(value, list) else [p.strip() for p in value.split(",")]
    items = [item for item in items if item]
    if not items:
        raise FrontMatterError(line, "`tools` is empty (leave it out for the parent's tools)")
    tools: list[str] = []
    for item in items:
        name, paren, rest = item.partition("(")
        ours = CLAUDE_TOOLS.get(name.strip(), name.strip())
        if ours == "task":
            raise FrontMatterError(line, "`tools` may not include `task`: sub-agents do not nest")
        if not re.fullmatch(r"[A-Za-z0-9_.:-]+", ours) or (paren and not rest.endswith(")")):
            raise FrontMatterError(line, f"`tools`: {item!r} is not a tool name or rule `TOOL(PATTERN)`")
        text = f"{ours}({rest}" if paren else ours
        if text not in tools:
            tools.append(text)
    return tuple(tools)


def narrower_mode(parent: str, wanted: str | None) -> str:
    """The child's permission mode: the parent's, or the definition's when narrower."""
    if wanted is None or wanted not in PERMISSION_ORDER or parent not in PERMISSION_ORDER:
        return parent
    return min(parent, wanted, key=PERMISSION_ORDER.index)
