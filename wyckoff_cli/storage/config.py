"""The configuration: one typed model, read with tomllib, written atomically.

Sources, later ones winning key by key: built-in defaults, the user's `config.toml`
(`paths.config_file()`), the project's `.wyckoff/config.toml`. Permission rule lists
(`permissions.allow`, `permissions.deny`) are combined across files rather than
replaced. Every key is documented in docs/CONFIG.md (each field's `doc` metadata).
A syntax error or a wrong type raises `ConfigError` naming the file, the line (when
it can be found) and the key, with the expected type.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.core.provider_table import PROVIDER_NAMES
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.atomic import write_atomic
from wyckoff_cli.storage.config_agents import AgentsConfig, RoutingConfig, SessionConfig
from wyckoff_cli.storage.config_extensions import CommandsConfig, CompatConfig, HooksConfig
from wyckoff_cli.storage.config_fields import NON_NEGATIVE, POSITIVE, Range
from wyckoff_cli.storage.config_fields import doc_field as _doc
from wyckoff_cli.storage.config_mcp import McpServer
from wyckoff_cli.storage.lsp_config import LspConfig
from wyckoff_cli.storage.telemetry_config import TelemetryConfig
from wyckoff_cli.storage.ui_config import UIConfig
from wyckoff_cli.storage.web_config import WebConfig


@dataclass
class ModelAlias:
    """`[models.NAME]`: a named model with its endpoint and options."""

    provider: str = field(
        metadata={
            "doc": "Which provider talks to it: `anthropic`, `openai` (any OpenAI-compatible endpoint), "
            "`openai-responses`, `gemini`, or `ollama` / `lmstudio` / `vllm` (local servers).",
            "choices": PROVIDER_NAMES,
        }
    )
    model: str = _doc("The model id the endpoint expects, e.g. `deepseek-chat`.")
    base_url: str | None = _doc("Endpoint base URL (e.g. `http://localhost:11434/v1`).", default=None)
    api_key_env: str | None = _doc("Environment variable holding the API key.", default=None)
    thinking: Literal["off", "budget", "adaptive"] | None = _doc(
        "Anthropic/Gemini extended thinking: `off`, `budget` (uses `thinking_budget`) or `adaptive`.",
        default=None,
    )
    thinking_budget: int | None = _doc(
        'Token budget for thinking when `thinking = "budget"`.', default=None, range=POSITIVE
    )
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = _doc(
        "OpenAI-style reasoning effort.", default=None
    )
    max_tokens: int | None = _doc(
        "Maximum output tokens per call (default: from the catalogue).", default=None, range=POSITIVE
    )
    temperature: float | None = _doc(
        "Sampling temperature, where the endpoint accepts it.", default=None, range=Range(0, 2)
    )
    top_p: float | None = _doc(
        "Nucleus sampling, where the endpoint accepts it.", default=None, range=Range(0, 1)
    )
    api: Literal["chat", "responses"] | None = _doc(
        "OpenAI: `responses` sends this model through the Responses API, `chat` through Chat "
        "Completions (default: as the catalogue says; `chat` for an endpoint with `base_url`).",
        default=None,
    )

    @property
    def model_id(self) -> str:
        return f"{self.provider}:{self.model}"


MIN_CONTEXT_WINDOW = 1  # `wyckoff model cost --context-window` takes any positive integer
MAX_CONTEXT_WINDOW = 100_000_000


@dataclass
class ModelOverride:
    """`[model_overrides."PROVIDER:MODEL"]`: figures saved by `wyckoff model cost`."""

    context_window: int | None = _doc(
        "Context window in tokens.", default=None, range=Range(MIN_CONTEXT_WINDOW, MAX_CONTEXT_WINDOW)
    )
    input: float | None = _doc(
        "USD per million input tokens (not read from cache).", default=None, range=NON_NEGATIVE
    )
    output: float | None = _doc("USD per million output tokens.", default=None, range=NON_NEGATIVE)
    cache_read: float | None = _doc(
        "USD per million tokens read from the prompt cache.", default=None, range=NON_NEGATIVE
    )
    cache_write: float | None = _doc(
        "USD per million tokens written to the prompt cache.", default=None, range=NON_NEGATIVE
    )


@dataclass
class Permissions:
    """`[permissions]`: rules that allow or deny tool calls without asking."""

    allow: list[str] = _doc(
        "Rules `TOOL` or `TOOL(PATTERN)` that run without asking, e.g. `run_shell(pytest*)`.",
        default_factory=list,
    )
    deny: list[str] = _doc(
        "Rules that are always refused. Deny wins over allow and every mode.", default_factory=list
    )


@dataclass
class ContextConfig:
    """`[context]`: how the conversation is kept within the model's window."""

    reserve_tokens: int | None = _doc(
        "Tokens kept free for the answer; compaction starts above window - reserve "
        "(default: the model's max output, and at least 15% of the window).",
        default=None,
        range=NON_NEGATIVE,
    )
    memory: bool = _doc("Recall and save memories.", default=True)


@dataclass
class CheckpointsConfig:
    """`[checkpoints]`: snapshots of the work tree before rounds that may change files."""

    enabled: bool = _doc("Take checkpoints (undo, redo, rewind need them).", default=True)
    exclude: list[str] = _doc(
        "Extra patterns left out of snapshots, in .gitignore syntax (`.gitignore` is honoured too).",
        default_factory=list,
    )
    max_file_size: int = _doc(
        "Files larger than this many bytes are left out of snapshots (and listed).", default=5 * 1024 * 1024
    )
    keep_days: int = _doc("Checkpoints older than this many days are removed.", default=14)


@dataclass
class ShellConfig:
    """`[shell]`: how commands run (docs/TOOLS.md, "Safety model")."""

    sandbox: Literal["workspace-write", "read-only", "off"] = _doc(
        "`workspace-write` (the workspace and temp folder writable, no network), `read-only` or `off`. "
        "Where the sandbox cannot start, commands run unsandboxed with a start-up notice saying why.",
        default="workspace-write",
    )
    network: bool = _doc("Let sandboxed commands reach the network.", default=False)
    writable_roots: list[str] = _doc(
        "More folders sandboxed commands may write (e.g. `~/.cache/pip`).", default_factory=list
    )
    env_keep: list[str] = _doc(
        "Variables (globs) kept in commands' environment although they look like secrets.",
        default_factory=list,
    )
    env_remove: list[str] = _doc(
        "More variables (globs) removed from commands' environment.", default_factory=list
    )
    allow_unix_sockets: list[str] = _doc(
        "Outside Unix sockets (paths) sandboxed commands may reach (docs/SANDBOX.md).", default_factory=list
    )
    auto_allow: bool = _doc("Run commands that stay in the sandbox unasked (docs/SANDBOX.md).", default=False)
    allowed_domains: list[str] = _doc(
        "Host names sandboxed commands may reach through Wyckoff's proxy, without the rest of the network "
        "(`pypi.org`, `example.com:8443`, `*.github.com`; docs/SANDBOX.md).",
        default_factory=list,
    )


@dataclass
class Config:
    """The whole configuration."""

    model: str = _doc(
        "Default model: `provider:model` or an alias from `[models]`.", default="anthropic:claude-sonnet-4-5"
    )
    fallbacks: list[str] = _doc(
        "Models tried in order when the default fails with a rate limit, timeout, network or server error.",
        default_factory=list,
    )
    permission_mode: Literal["default", "plan", "auto-edit", "auto", "yolo"] = _doc(
        "Start-up permission mode: `default`, `plan`, `auto-edit`, `auto` or `yolo`.", default="default"
    )
    max_tool_rounds: int = _doc(
        "Tool rounds per turn before the turn stops.", default=15, range=Range(1, 10_000)
    )
    stream_idle_timeout: float = _doc(
        "Seconds without a streamed chunk before a model call times out.",
        default=60.0,
        range=Range(0, 86_400, low_open=True),
    )
    stream_stall_limit: float = _doc(
        "Most seconds a model call waits for output over all its retries before the next fallback; 0: no bound.",
        default=90.0,
        range=Range(0, 86_400),
    )
    fallback_cooldown: float = _doc(
        "Seconds a failed model is skipped before it is tried again (or its `retry-after`).",
        default=120.0,
        range=Range(0, 86_400),
    )
    retry_attempts: int = _doc(
        "Attempts per model call on a transient error (rate limit, overload, dropped connection) "
        "before the next fallback; 1 turns retries off.",
        default=3,
        range=Range(1, 20),
    )
    retry_max_delay: float = _doc(
        "Longest wait in seconds between two attempts; a longer `retry-after` goes to the fallback.",
        default=30.0,
        range=Range(0, 3_600),
    )
    models: dict[str, ModelAlias] = _doc("Model aliases, `[models.NAME]`.", default_factory=dict)
    model_overrides: dict[str, ModelOverride] = _doc(
        "Per-model figures saved by `wyckoff model cost`.", default_factory=dict
    )
    permissions: Permissions = _doc("Allow and deny rules.", default_factory=Permissions)
    context: ContextConfig = _doc("Context management.", default_factory=ContextConfig)
    mcp_servers: dict[str, McpServer] = _doc("MCP servers, `[mcp_servers.NAME]`.", default_factory=dict)
    web: WebConfig = _doc("Web tools: web_fetch and web_search.", default_factory=WebConfig)
    checkpoints: CheckpointsConfig = _doc("Checkpoints, undo and rewind.", default_factory=CheckpointsConfig)
    shell: ShellConfig = _doc("The shell sandbox and environment.", default_factory=ShellConfig)
    agents: AgentsConfig = _doc("Sub-agents.", default_factory=AgentsConfig)
    session: SessionConfig = _doc("Session limits.", default_factory=SessionConfig)
    routing: RoutingConfig = _doc("A small model for the small jobs.", default_factory=RoutingConfig)
    hooks: HooksConfig = _doc("User hooks by event.", default_factory=HooksConfig)
    commands: CommandsConfig = _doc("Custom slash commands.", default_factory=CommandsConfig)
    ui: UIConfig = _doc("The terminal app: how it draws, how it notifies.", default_factory=UIConfig)
    lsp: LspConfig = _doc("Language servers (docs/LSP.md).", default_factory=LspConfig)
    compat: CompatConfig = _doc("Reading a Claude Code setup.", default_factory=CompatConfig)
    telemetry: TelemetryConfig = _doc("OpenTelemetry export.", default_factory=TelemetryConfig)


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class LoadedConfig:
    config: Config
    files: tuple[Path, ...]  # the files that were read, in order
    raw: dict[str, Any]  # the merged TOML data


def load_config(project_root: Path | None = None) -> LoadedConfig:
    """Read the user file and, if given, the project's file; validate the result."""
    merged: dict[str, Any] = {}
    files: list[Path] = []
    candidates = [paths.config_file()]
    if project_root is not None:
        candidates.append(paths.project_config_file(project_root))
    for path in candidates:
        data = read_toml(path)
        if data is None:
            continue
        files.append(path)
        check_against(Config, data, path)
        merged = _merge(merged, data)
    return LoadedConfig(build(Config, merged, files[-1] if files else None), tuple(files), merged)


def read_toml(path: Path) -> dict[str, Any] | None:
    """The parsed file, or None when it does not exist."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None  # no such file (NotADirectory: a parent is a file, so it cannot exist)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if data.startswith(b"\xef\xbb\xbf"):
        raise ConfigError(
            f"{path}: the file starts with a byte-order mark (BOM), which TOML does not allow; "
            "save it as UTF-8 without BOM"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}, line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "TOML files must be UTF-8"
        ) from None
    depth = _nesting(text)
    if depth > MAX_NESTING:
        raise ConfigError(
            f"{path}: arrays or inline tables nested {depth} levels deep; the limit is {MAX_NESTING}"
        )
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: values nested too deeply to read") from None


MAX_NESTING = 32  # no setting needs more than a few levels; tomllib recurses per level


def _nesting(text: str) -> int:
    """The deepest `[`/`{` nesting of values outside strings and comments (a cheap
    scan, so a 3,000-deep array is refused before tomllib recurses into it)."""
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return 0
    depth = deepest = 0
    quote = ""
    escaped = comment = False
    line_start = True
    for ch in text:
        if comment:
            if ch == "\n":
                comment, line_start = False, True
            continue
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch == "#":
            comment = True
        elif ch in "\"'":
            quote = ch
        elif ch == "\n":
            line_start = True
            continue
        elif ch in "[{" and not (line_start and depth == 0):  # `[table]` headers are not nesting
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}" and depth > 0:
            depth -= 1
        if not ch.isspace():
            line_start = False
    return deepest


def _merge(base: dict[str, Any], over: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value, dotted + ".")
        elif dotted in ("permissions.allow", "permissions.deny") and isinstance(out.get(key), list):
            out[key] = list(dict.fromkeys([*out[key], *value]))
        else:
            out[key] = value
    return out


def check_against(cls: type, data: dict[str, Any], source: Path | None) -> None:
    build(cls, data, source)


def build(cls: type, data: dict[str, Any], source: Path | None, prefix: str = "") -> Any:
    """Turn TOML data into the dataclass `cls`, checking every key and type."""
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if key not in known:
            choices = ", ".join(sorted(known))
            raise ConfigError(f"{_where(source, dotted)}unknown key {dotted!r} (known keys here: {choices})")
        values[key] = _convert(hints[key], value, source, dotted)
        _check_range(known[key], values[key], source, dotted)
        allowed_values = known[key].metadata.get("choices")
        if allowed_values is not None and values[key] not in allowed_values:
            allowed = ", ".join(repr(c) for c in allowed_values)
            raise ConfigError(f"{_where(source, dotted)}{dotted} must be one of {allowed}, got {value!r}")
    missing = [
        name
        for name, f in known.items()
        if name not in values
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise ConfigError(f"{_where(source, prefix.rstrip('.'))}{prefix}{missing[0]} is required")
    return cls(**values)


def _convert(hint: Any, value: Any, source: Path | None, key: str) -> Any:
    origin = get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        options = [a for a in get_args(hint) if a is not type(None)]
        if len(options) == 1:
            return _convert(options[0], value, source, key)
    if origin is Literal:
        choices = get_args(hint)
        if value not in choices:
            allowed = ", ".join(repr(c) for c in choices)
            raise ConfigError(f"{_where(source, key)}{key} must be one of {allowed}, got {value!r}")
        return value
    if origin is list:
        (item,) = get_args(hint)
        if not isinstance(value, list):
            raise _type_error(source, key, "a list", value)
        return [_convert(item, v, source, f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        _, item = get_args(hint)
        if not isinstance(value, dict):
            raise _type_error(source, key, "a table", value)
        return {k: _convert(item, v, source, f"{key}.{k}") for k, v in value.items()}
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise _type_error(source, key, "a table", value)
        return build(hint, value, source, key + ".")  # type: ignore[arg-type]
    if hint is bool:
        if not isinstance(value, bool):
            raise _type_error(source, key, "true or false", value)
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _type_error(source, key, "an integer", value)
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _type_error(source, key, "a number", value)
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise _type_error(source, key, "a string", value)
        return value
    return value


def _check_range(spec: dataclasses.Field[Any], value: Any, source: Path | None, key: str) -> None:
    allowed = spec.metadata.get("range")
    if allowed is None or value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return
    if not allowed.allows(value):
        expected = allowed.describe(isinstance(value, int))
        raise ConfigError(f"{_where(source, key)}{key} must be {expected}, got {value!r}")


def _type_error(source: Path | None, key: str, expected: str, value: Any) -> ConfigError:
    return ConfigError(f"{_where(source, key)}{key} must be {expected}, got {_toml_type(value)} {value!r}")


def _toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    return {int: "integer", float: "float", str: "string", list: "array", dict: "table"}.get(
        type(value), type(value).__name__
    )


def _where(source: Path | None, key: str) -> str:
    if source is None:
        return ""
    line = find_key_line(source, key)
    return f"{source}, line {line}: " if line else f"{source}: "


def find_key_line(path: Path, key: str) -> int | None:
    """Best-effort line number of `key` (dotted) in a TOML file."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    parts = re.sub(r"\[\d+\]", "", key).split(".")
    leaf = parts[-1]
    table = ".".join(parts[:-1])
    current = ""
    header = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
    for number, line in enumerate(lines, 1):
        match = header.match(line)
        if match:
            current = match.group(1).replace('"', "").replace("'", "")
            if current == key.replace('"', ""):
                return number
            continue
        stripped = line.strip()
        if current == table and re.match(rf"^[\"']?{re.escape(leaf)}[\"']?\s*=", stripped):
            return number
        if not current and re.match(rf"^{re.escape(key)}\s*=", stripped):
            return number
    # a key in an inline table (`hooks = [{ timeout = "x" }]`): the enclosing table's first line setting it
    current = ""
    for number, line in enumerate(lines, 1):
        match = header.match(line)
        if match:
            current = match.group(1).replace('"', "").replace("'", "")
        elif current and table.startswith(current) and re.search(rf"\b{re.escape(leaf)}\s*=", line):
            return number
    return None


# --------------------------------------------------------------------------- writing


def save_user_config(data: dict[str, Any], path: Path | None = None) -> Path:
    """Validate `data` and write it atomically as the user (or given) config file."""
    import tomli_w

    target = path or paths.config_file()
    build(Config, data, target)
    paths.ensure_private_dir(target.parent)
    write_atomic(target, tomli_w.dumps(_drop_none(data)))
    from wyckoff_cli.storage.project_dir import ensure_gitignore

    ensure_gitignore(target.parent)  # a project's .wyckoff/: say what is shared, what local
    return target


def _drop_none(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _drop_none(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_drop_none(v) for v in data]
    return data


def update_config_file(path: Path, changes: dict[str, Any | None]) -> dict[str, Any]:
    """Apply dotted-key `changes` (None removes a key) to one file, validate, write
    atomically; other keys are kept. Returns the new data."""
    data = read_toml(path) or {}
    for dotted, value in changes.items():
        set_dotted(data, dotted, value)
    save_user_config(data, path)
    return data


def set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    keys = split_key(dotted)
    node = data
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            if value is None:
                return
            child = node[key] = {}
        node = child
    if value is None:
        node.pop(keys[-1], None)
    else:
        node[keys[-1]] = value


def get_dotted(data: Any, dotted: str) -> Any:
    node = data
    for key in split_key(dotted):
        if dataclasses.is_dataclass(node) and not isinstance(node, type):
            if key not in {f.name for f in dataclasses.fields(node)}:
                raise KeyError(dotted)
            node = getattr(node, key)
        elif isinstance(node, dict) and key in node:
            node = node[key]
        else:
            raise KeyError(dotted)
    return node


def split_key(dotted: str) -> list[str]:
    """Split `models."gpt-5.1".model` into keys, honouring quotes."""
    return [a or b for a, b in re.findall(r'"([^"]*)"|([^.]+)', dotted)]


def to_plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: to_plain(v) for k, v in dataclasses.asdict(value).items() if v is not None}
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value
