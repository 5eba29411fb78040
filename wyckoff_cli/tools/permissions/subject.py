"""Permission subjects: what a call's rules are matched against. The tool's business.

Each tool says what a call acts on (`Tool.subject(args, workspace)`):

- `command`: the shell command, parsed (shell tools);
- `path`: the paths it reads or writes, with the access (`read`, `write`,
  `read-write`), so that one path rule covers every tool with that access: a deny of
  `read_file(.env)` also refuses `grep`, `glob`, `list_dir` and `edit_file` on it, and
  an MCP tool declaring its path arguments is covered the same way;
- `url`: the address it fetches, with its host, for `domain:HOST` patterns;
- `text`: the value of the tool's summary argument (anything else);
- `none`: nothing to match a pattern against (only rules without a pattern apply).

`escalations` are reasons to ask every time, in every mode, that no rule can allow
(for the shell: running outside the sandbox, or with the network).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.paths import relative_to_root, resolve_path
from wyckoff_cli.tools.permissions.shellparse import ParsedCommand, parse_command

SubjectKind = Literal["command", "path", "url", "text", "none"]
Access = Literal["read", "write", "read-write", "none"]
ToolKind = Literal[
    "read", "edit", "execute", "external", "other"
]  # external: MCP tools that may change things
SubjectFn = Callable[[Mapping[str, Any], Path], "Subject"]


@dataclass(frozen=True, slots=True)
class PathRef:
    raw: str  # as the call gave it
    absolute: str  # resolved, symlinks followed
    relative: str | None  # POSIX, relative to the workspace root; None outside it


@dataclass(frozen=True, slots=True)
class Subject:
    kind: SubjectKind
    text: str = ""  # the command, the first path (relative inside the workspace), the URL, the text
    paths: tuple[PathRef, ...] = ()
    access: Access = "none"
    command: ParsedCommand | None = None
    cwd: str = ""  # commands: the absolute folder the command runs in
    host: str = ""  # urls: the host name, lower case
    escalations: tuple[str, ...] = ()
    invalid: bool = False  # an argument could not be resolved: the tool reports it

    def reads(self) -> bool:
        return self.access in ("read", "read-write")

    def writes(self) -> bool:
        return self.access in ("write", "read-write")


NONE = Subject("none")


def path_subject(raws: list[str], workspace: Path, access: Access) -> Subject:
    refs: list[PathRef] = []
    for raw in raws:
        try:
            path = resolve_path(workspace, raw)
        except ToolError:
            return Subject("none", invalid=True)  # the tool itself reports the bad path
        refs.append(PathRef(raw, str(path), relative_to_root(path, workspace)))
    if not refs:
        return NONE
    first = refs[0]
    return Subject("path", first.relative or first.absolute, tuple(refs), access)


def url_subject(url: str) -> Subject:
    try:
        host = (urlsplit(url.strip()).hostname or "").lower().rstrip(".")
    except ValueError:
        host = ""
    return Subject("url", url.strip(), host=host)


def default_subject(
    args: Mapping[str, Any],
    workspace: Path,
    *,
    kind: ToolKind,
    path_args: tuple[str, ...],
    url_args: tuple[str, ...],
    summary_arg: str | None,
    access: Access | None,
) -> Subject:
    """The subject of a tool without its own `subject_of`: its declared path
    arguments (reads for `read` tools, writes for `edit` tools), else its URL
    arguments, else its summary argument."""
    raws = [str(args[name]) for name in path_args if isinstance(args.get(name), str)]
    if path_args and (raws or kind in ("read", "edit")):
        if not raws:
            raws = ["."]  # a read tool without a path reads the workspace
        return path_subject(raws, workspace, access or _access_of(kind))
    for name in url_args:
        value = args.get(name)
        if isinstance(value, str):
            return url_subject(value)
    if summary_arg and isinstance(args.get(summary_arg), str):
        return Subject("text", str(args[summary_arg]))
    return NONE


def _access_of(kind: ToolKind) -> Access:
    return {"read": "read", "edit": "write"}.get(kind, "none")  # type: ignore[return-value]


def command_subject(arg: str = "command") -> SubjectFn:
    """A `subject_of` for a tool that runs the shell command in argument `arg`."""

    def subject(args: Mapping[str, Any], workspace: Path) -> Subject:
        value = args.get(arg)
        if not isinstance(value, str):
            return NONE
        return Subject("command", value, command=parse_command(value), cwd=str(resolve_path(workspace, ".")))

    return subject
