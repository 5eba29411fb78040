"""`wyckoff sessions`: list, show, export, delete and prune saved sessions.

Ids may be shortened to any unique prefix. An unknown or ambiguous id exits with
status 2. Formats and layout: docs/SESSIONS.md. The store is opened as every host
opens it (`session.store.build_session_store`): secrets from the environment, the
config's `api_key_env` variables and the credentials file are redacted, and each model
call is priced as it is recorded.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from wyckoff_cli.core.messages import ImagePart, Message, ToolCallPart
    from wyckoff_cli.storage.config import Config
    from wyckoff_cli.storage.redact import Redactor
    from wyckoff_cli.storage.session_info import SessionInfo
    from wyckoff_cli.storage.sessions import LoadedSession, SessionStore

SHOW_TITLE_CHARS = 60


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="sessions of this project, newest first")
    listing.add_argument("--all-projects", action="store_true", help="sessions of every project")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.add_argument("--cwd", type=Path, default=None, help="project folder (default: current)")
    show = sub.add_parser("show", help="the conversation as readable text")
    show.add_argument("id", help="session id or a unique prefix")
    show.add_argument(
        "--expand", action="store_true", help="show thinking, tool arguments and results in full"
    )
    export = sub.add_parser("export", help="a Markdown transcript or JSON, redacted")
    export.add_argument("id", help="session id or a unique prefix")
    export.add_argument("--format", choices=("md", "json"), default="md", help="md (default) or json")
    export.add_argument("-o", "--output", type=Path, default=None, help="write to FILE (default: stdout)")
    delete = sub.add_parser("delete", help="delete a session and its files")
    delete.add_argument("id", help="session id or a unique prefix")
    prune = sub.add_parser("prune", help="delete sessions not used for DAYS days")
    prune.add_argument("--older-than", type=_days, required=True, metavar="DAYS", help="age in days")
    prune.add_argument("--all-projects", action="store_true", help="prune every project, not just this one")
    prune.add_argument("--dry-run", action="store_true", help="list what would be deleted")
    prune.add_argument("--cwd", type=Path, default=None, help="project folder (default: current)")


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of days, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of days, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    store = _store(getattr(args, "cwd", None))
    action: str = args.action
    if action == "list":
        return _list(store, args)
    if action == "show":
        return _show(store, args)
    if action == "export":
        return _export(store, args)
    if action == "delete":
        info = store.delete(args.id)
        print(f"Deleted session {info.id} ({_title(info)}).")
        return 0
    return _prune(store, args)


def _store(cwd: Path | None) -> SessionStore:
    """The store, with every key known now (exports are redacted again with it). A
    broken config file must not keep anyone from their sessions: it is skipped here."""
    from wyckoff_cli.core.errors import ConfigError
    from wyckoff_cli.storage.config import load_config

    try:
        config: Config | None = load_config(_project_root(cwd)).config
    except ConfigError:
        config = None
    from wyckoff_cli.session.store import build_session_store

    return build_session_store(config)


def _project_root(cwd: Path | None) -> Path:
    from wyckoff_cli.storage.paths import find_project_root

    return find_project_root((cwd or Path.cwd()).resolve())


# --------------------------------------------------------------------------- list


def _list(store: SessionStore, args: argparse.Namespace) -> int:
    root = None if args.all_projects else _project_root(args.cwd)
    sessions = store.list(root)
    if args.json:  # redacted again: a summary written by an older version may hold a key
        rows = [store.redactor.value(_json_row(info)) for info in sessions]
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
        return 0
    if not sessions:
        where = "any project" if root is None else f"this project ({root})"
        hint = "" if root is None else "; `wyckoff sessions list --all-projects` shows every project"
        print(f"No sessions for {where}{hint}.")
        return 0
    names = ["ID", "STARTED", "MODEL", "TURNS", "TOKENS", "COST"] + (["PROJECT"] if root is None else [])
    lines: list[list[str]] = [names + ["FIRST MESSAGE"]]
    for info in sessions:
        cells = [info.id, _local_time(info), info.model, str(info.turns), _tokens(info.tokens), _cost(info)]
        if root is None:
            cells.append(Path(info.project_root).name or info.project_root)
        lines.append([*cells, store.redactor.text(info.title)])
    sys.stdout.write(_table(lines, right={3, 4, 5}))
    return 0


def _table(lines: list[list[str]], right: set[int]) -> str:
    """Aligned columns, plain text (fast with thousands of rows; rich is not needed).
    Every column keeps its full width but the last, which is cut to the terminal."""
    import shutil

    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]) - 1)]
    terminal = sys.stdout.isatty()
    room = shutil.get_terminal_size().columns - sum(widths) - 2 * len(widths) if terminal else 0
    last = max(12, min(SHOW_TITLE_CHARS, room)) if terminal else SHOW_TITLE_CHARS
    from wyckoff_cli.storage.session_info import shorten

    out = []
    for number, line in enumerate(lines):
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=False))
        ]
        row = "  ".join([*cells, shorten(line[-1], last) if number else line[-1]]).rstrip()
        out.append(f"\033[1m{row}\033[0m" if terminal and number == 0 else row)
    return "\n".join(out) + "\n"


def _json_row(info: SessionInfo) -> dict[str, Any]:
    data = info.to_dict()
    for key in ("format", "version", "chat_bytes"):
        data.pop(key, None)
    data["tokens"] = info.tokens
    data["cost_usd"] = None if info.uncosted_calls and not info.cost_usd else round(info.cost_usd, 6)
    data["directory"] = str(info.directory)
    return data


def _local_time(info: SessionInfo) -> str:
    started = info.started
    return started.astimezone().strftime("%Y-%m-%d %H:%M") if started else "?"


def _tokens(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def _cost(info: SessionInfo) -> str:
    """`$0.0123`; `$0.0123+` when some calls could not be priced; `-` when none could."""
    from wyckoff_cli.models.costs import format_usd

    if info.uncosted_calls and not info.cost_usd:
        return "-"
    return format_usd(info.cost_usd) + ("+" if info.uncosted_calls else "")


def _title(info: SessionInfo) -> str:
    from wyckoff_cli.storage.session_info import shorten

    return shorten(info.title, SHOW_TITLE_CHARS) or "(no message)"


def _console() -> Console:
    from rich.console import Console

    return Console(highlight=False)


# --------------------------------------------------------------------------- show


def _show(store: SessionStore, args: argparse.Namespace) -> int:
    from rich.rule import Rule
    from rich.text import Text

    from wyckoff_cli.core.messages import Message

    loaded = store.load(args.id)
    info = loaded.info
    console = _console()
    console.print(Text(f"Session {info.id}", style="bold"))
    console.print(Text(_facts_line(info), style="dim"))
    if loaded.torn:
        console.print(Text("The last message was cut off by a crash and is not shown.", style="yellow"))
    for item in (_redact_item(store.redactor, i) for i in _transcript(loaded)):  # older logs too
        kind = item.get("kind")
        if kind == "compaction":
            console.print(Rule(f"compacted: {item.get('replaced', 0)} messages archived", style="dim"))
            for data in item.get("added", []):
                _show_message(console, Message.from_dict(data), args.expand)
        elif kind == "message":
            _show_message(console, Message.from_dict(item["message"]), args.expand)
        elif kind == "turn_end" and item.get("reason") not in ("completed", "completed_by_tool"):
            console.print(Text(f"  (turn ended: {item.get('reason')})", style="yellow"))
        elif kind == "rewind":  # the messages above were dropped from the conversation
            console.print(
                Rule(f"rewound: the last {item.get('removed', 0)} messages were dropped", style="dim")
            )
    return 0


def _show_message(console: Console, message: Message, expand: bool) -> None:
    from rich.markdown import Markdown
    from rich.text import Text

    from wyckoff_cli.core.messages import ServerToolPart, TextPart, ThinkingPart, ToolCallPart
    from wyckoff_cli.storage.session_info import shorten

    synthetic = message.meta.get("synthetic")
    if message.role == "user":
        console.print()
        if synthetic:
            console.print(Text(f"❯ Note ({synthetic})", style="dim cyan"))
            console.print(Text(message.text if expand else shorten(message.text, 200), style="dim"))
        else:
            console.print(Text("❯ You", style="bold cyan"))
            console.print(Text(message.text))
        return
    if message.role == "tool":
        style = "red" if message.is_error else "dim"
        edited = message.meta.get("edited")
        if isinstance(edited, dict):
            ran = json.dumps(edited.get("ran"), ensure_ascii=False)
            console.print(
                Text(shorten(f"  ✎ edited by you before it ran; ran with {ran}", 200), style="yellow")
            )
        if expand:
            console.print(Text(f"  ↳ {message.tool_name}\n{message.text}", style=style))
        else:
            lines = message.text.count("\n") + 1 if message.text else 0
            first = shorten(message.text.split("\n", 1)[0], 80)
            more = f" … ({lines} lines)" if lines > 1 else ""
            console.print(Text(f"  ↳ {message.tool_name}: {first}{more}", style=style))
        return
    console.print()
    console.print(Text("● Assistant", style="bold green"))
    for part in message.parts:
        if isinstance(part, ThinkingPart):
            words = len(part.text.split())
            folded = f"▸ thinking ({words} word{'s' if words != 1 else ''})"
            console.print(Text(part.text if expand else folded, style="dim italic" if expand else "dim"))
        elif isinstance(part, ToolCallPart):
            if expand:
                console.print(Text(f"▸ {part.name}\n{_arguments(part, indent=2)}", style="magenta"))
            else:
                console.print(Text(shorten(f"▸ {part.name}({_arguments(part)})", 110), style="magenta"))
        elif isinstance(part, ServerToolPart):
            console.print(Text(f"▸ {part.provider} server tool: {part.name} ({part.kind})", style="magenta"))
        elif isinstance(part, TextPart) and part.text:
            console.print(Markdown(part.text))
    if message.meta.get("interrupted"):
        console.print(Text("  (interrupted)", style="yellow"))


def _arguments(call: ToolCallPart, indent: int | None = None) -> str:
    if call.raw_arguments is not None:
        return call.raw_arguments
    if indent is not None:
        return json.dumps(call.arguments, ensure_ascii=False, indent=indent)
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.arguments.items())


def _facts_line(info: SessionInfo) -> str:
    usage = info.usage
    return (
        f"{info.project_root} · started {_local_time(info)} · {info.model} · {info.turns} turn{'' if info.turns == 1 else 's'} · "
        f"{usage.input_tokens:,} in / {usage.output_tokens:,} out tokens · {_cost(info)}"
    )


def _transcript(loaded: LoadedSession) -> list[dict[str, Any]]:
    from wyckoff_cli.storage.chatlog import read_jsonl, transcript

    return transcript(read_jsonl(loaded.directory / "chat.jsonl").records)


# --------------------------------------------------------------------------- export


def export_text(store: SessionStore, session_id: str, fmt: str = "md", images_dir: Path | None = None) -> str:
    """A session as a redacted Markdown transcript or JSON document. JSON references
    each image (hash, size, stored path); Markdown links it, copied into `images_dir`
    (beside the output file) when given, else at its stored path."""
    loaded = store.load(session_id)
    items = [_redact_item(store.redactor, item) for item in _transcript(loaded)]
    if fmt == "json":
        document = {
            "format": "wyckoff.export",
            "version": 1,
            "session": store.redactor.value(_json_row(loaded.info)),
            "torn": loaded.torn,
            "transcript": items,
        }
        return json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    link = _copying_link(images_dir) if images_dir is not None else _stored_link
    return to_markdown(loaded.info, items, torn=loaded.torn, image_link=link)


def _stored_link(part: ImagePart) -> str:
    return Path(part.path).as_uri() if Path(part.path).is_absolute() else part.path


def _copying_link(folder: Path) -> Callable[[ImagePart], str]:
    """Copy each image into `folder` once; link it relative to the transcript beside it."""
    import shutil

    def link(part: ImagePart) -> str:
        target = folder / Path(part.path).name
        if not target.exists():
            folder.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copyfile(part.path, target)
            except OSError:
                return _stored_link(part)  # the stored copy is gone: name where it was
        return f"{folder.name}/{target.name}"

    return link


def _export(store: SessionStore, args: argparse.Namespace) -> int:
    from wyckoff_cli.storage.atomic import write_atomic

    images_dir = None
    if args.format == "md" and args.output is not None:
        images_dir = args.output.with_name(f"{args.output.stem}-images")
    output = export_text(store, args.id, args.format, images_dir)
    if args.output is None:
        sys.stdout.write(output)
    else:
        write_atomic(args.output, output)
        print(f"Wrote {args.output}", file=sys.stderr)
    return 0


def _redact_item(redact: Redactor, item: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = redact.value({k: v for k, v in item.items() if k not in ("message", "added")})
    if "message" in item:
        out["message"] = redact.message(item["message"])
    if "added" in item:
        out["added"] = [redact.message(m) for m in item["added"]]
    return out


def to_markdown(
    info: SessionInfo,
    items: list[dict[str, Any]],
    *,
    torn: bool = False,
    image_link: Callable[[ImagePart], str] | None = None,
) -> str:
    """A Markdown transcript: thinking in <details>, tool calls and results fenced,
    images linked (`image_link` gives each one's address)."""
    link = image_link or _stored_link
    from wyckoff_cli.core.messages import Message

    out: list[str] = [
        f"# Wyckoff session {info.id}",
        "",
        f"- Project: `{info.project_root}`",
        f"- Started: {info.created}",
        f"- Model: {info.model}",
        f"- Turns: {info.turns} · Tokens: {info.usage.input_tokens:,} in / {info.usage.output_tokens:,} out"
        f" · Cost: {_cost(info)}",
        "",
    ]
    if torn:
        out += ["> The last message was cut off by a crash and is not included.", ""]
    for item in items:
        kind = item.get("kind")
        if kind == "message":
            out += _markdown_message(Message.from_dict(item["message"]), link)
        elif kind == "compaction":
            out += [
                "---",
                "",
                f"*Compacted: {item.get('replaced', 0)} messages archived to `{item.get('archive')}`.*",
                "",
            ]
            for data in item.get("added", []):
                out += _markdown_message(Message.from_dict(data), link)
        elif kind == "turn_end" and item.get("reason") not in ("completed", "completed_by_tool"):
            out += [f"*Turn ended: {item.get('reason')}.*", ""]
        elif kind == "rewind":
            out += ["---", "", f"*Rewound: the last {item.get('removed', 0)} messages were dropped.*", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _markdown_images(message: Message, link: Callable[[ImagePart], str]) -> list[str]:
    return [line for image in message.images for line in (f"![{image.label}]({link(image)})", "")]


def _markdown_message(message: Message, link: Callable[[ImagePart], str]) -> list[str]:
    from wyckoff_cli.core.messages import ServerToolPart, TextPart, ThinkingPart, ToolCallPart

    if message.role == "user":
        synthetic = message.meta.get("synthetic")
        heading = f"## {f'Note ({synthetic})' if synthetic else 'You'}"
        return [heading, "", message.text, "", *_markdown_images(message, link)]
    if message.role == "tool":
        label = "Error" if message.is_error else "Result"
        heading = f"**{label}** of `{message.tool_name}` (`{message.tool_call_id}`):"
        return [heading, "", *_fenced(message.text, "text"), "", *_markdown_images(message, link)]
    out = ["## Assistant", ""]
    for part in message.parts:
        if isinstance(part, ThinkingPart):
            out += ["<details><summary>Thinking</summary>", "", part.text, "", "</details>", ""]
        elif isinstance(part, ToolCallPart):
            body = _arguments(part, indent=2)
            out += [f"**Tool call** `{part.name}` (`{part.id}`)", "", *_fenced(body, "json"), ""]
        elif isinstance(part, ServerToolPart):
            out += [f"**Server tool** `{part.name}` ({part.provider}, {part.kind})", ""]
        elif isinstance(part, TextPart) and part.text:
            out += [part.text, ""]
    return out


def _fenced(body: str, language: str) -> list[str]:
    """`body` in a code fence longer than any run of backticks inside it."""
    import re

    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", body.rstrip("\n"), fence]


# --------------------------------------------------------------------------- prune


def _prune(store: SessionStore, args: argparse.Namespace) -> int:
    root = None if args.all_projects else _project_root(args.cwd)
    removed = store.prune(timedelta(days=args.older_than), project_root=root, dry_run=args.dry_run)
    verb = "Would delete" if args.dry_run else "Deleted"
    for info in removed:
        print(f"{verb} {info.id}  {_title(info)}")
    print(
        f"{verb} {len(removed)} session{'s' if len(removed) != 1 else ''} not used for {args.older_than:g} days."
    )
    return 0
