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
from dataclasses import dataclass, field
from pathlib import Path

from wyckoff_cli.core.claude_names import CLAUDE_MODES as _CLAUDE_MODES  # Claude Code's modes, as ours
from wyckoff_cli.core.claude_names import CLAUDE_TOOLS  # Claude Code's tool names, as ours
from wyckoff_cli.storage.claude_home import claude_user_dir
from wyckoff_cli.storage.plugins import active_plugins

PERMISSION_ORDER = ("plan", "default", "auto-edit", "auto", "yolo")  # narrowest first
_CLAUDE_MODELS = {"sonnet", "opus", "haiku"}  # Claude Code's short names: we keep the parent's model
_KNOWN_KEYS = {
    "name", "description", "tools", "model", "max_rounds", "permission_mode", "permissionMode", "isolation"
}  # fmt: skip
_IGNORED_KEYS = {"color", "disallowedTools", "skills", "hooks", "mcpServers"}  # Claude Code's, unused here
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)\s*:(.*)")
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
        return self.agents.get(name)

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
    """Where agent files are looked up, first wins."""
    claude = claude_user_dir()  # ~/.claude/agents after the project's .claude/agents
    return [
        root / ".wyckoff" / "agents",
        user_config_dir / "agents",
        root / ".claude" / "agents",
        *([claude / "agents"] if claude is not None else []),
        *[path for plugin in active_plugins(root) for path in plugin.agent_paths],  # installed plugins'
    ]


def load_agents(root: Path, user_config_dir: Path) -> AgentCatalog:
    found: dict[str, AgentDefinition] = {}
    problems: list[str] = []
    for folder in agent_dirs(root, user_config_dir):
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
    data: dict[str, str | list[str]] = {}
    where: dict[str, int] = {}
    current: str | None = None
    for number, raw in enumerate(lines, start=2):
        line = _strip_comment(raw).rstrip()
        if not line.strip():
            continue
        if line.lstrip().startswith("- ") or line.strip() == "-":
            value = data.get(current) if current is not None else None
            if current is None or not isinstance(value, list):
                raise FrontMatterError(number, "a `- item` line must follow a `key:` line with no value")
            value.append(_scalar(line.strip()[1:].strip()))
            continue
        if line[0].isspace():
            if current is not None and isinstance(data[current], str) and data[current]:
                data[current] = f"{data[current]} {line.strip()}"  # a folded continuation line
                continue
            raise FrontMatterError(number, f"unexpected indented line {line.strip()!r}")
        match = _KEY.fullmatch(line)
        if match is None:
            raise FrontMatterError(number, f"expected `key: value`, got {line.strip()!r}")
        key, value_text = match.group(1), match.group(2).strip()
        if key in data:
            raise FrontMatterError(number, f"`{key}` is given twice")
        if key not in _KNOWN_KEYS and key not in _IGNORED_KEYS:
            known = ", ".join(sorted(_KNOWN_KEYS - {"permissionMode"}))
            raise FrontMatterError(number, f"unknown key `{key}` (known: {known})")
        current, where[key] = key, number
        if not value_text:
            data[key] = []
        elif value_text.startswith("["):
            if not value_text.endswith("]"):
                raise FrontMatterError(number, f"`{key}`: the list is not closed by `]`")
            inner = value_text[1:-1].strip()
            data[key] = [_scalar(part.strip()) for part in inner.split(",")] if inner else []
        elif value_text in {">", "|", ">-", "|-"}:
            data[key] = ""
        else:
            data[key] = _scalar(value_text)
    for key in _IGNORED_KEYS:
        data.pop(key, None)
    return {k: v for k, v in data.items() if v != [] or k == "tools"}, where


def _strip_comment(line: str) -> str:
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _scalar(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


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
