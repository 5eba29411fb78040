"""What a tool is: an argument schema, a run function, flags and a model-facing
description next to them.

A tool's `run(args, ctx)` returns a string (what the model sees) or a `ToolOutcome`
(text plus display data for UIs). A recoverable failure raises `ToolError` with a
message for the model; the runtime turns it into a `tool_error` message. Tools never
prompt the user: approval happens before `run` is called, driven by the policy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.core.messages import ImagePart, ToolSpec
from wyckoff_cli.tools.permissions.subject import Access, Subject, SubjectFn, ToolKind, default_subject

if TYPE_CHECKING:
    from wyckoff_cli.core.approval import ApprovalDecision
    from wyckoff_cli.tools.background import BackgroundTaskManager
    from wyckoff_cli.tools.client_io import HostFiles, HostTerminal

__all__ = ["Tool", "ToolContext", "ToolError", "ToolKind", "ToolOutcome", "ToolRun", "PreviewFn"]


class ImageKeeper(Protocol):
    """Where tools keep the images they give the model: the session's image store
    (`storage/images.py` `ImageStore`), which checks, normalises and stores each one."""

    def add(self, data: bytes, name: str) -> ImagePart: ...

    def add_file(self, path: Path, *, name: str | None = None) -> ImagePart: ...


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool's result: `text` goes to the model; `display` is for UIs only (a diff,
    a todo list) and never reaches the model; `images` (stored by the session's image
    store: `ToolContext.images`) go to the model beside the text."""

    text: str
    display: dict[str, Any] | None = None
    images: tuple[ImagePart, ...] = ()


def _discard_output(_text: str) -> None:
    return None


def _discard_event(_event: Any) -> None:
    return None


def _unchanged(text: str) -> str:
    return text


# Ask about something a running call does on the user's behalf (an MCP server's sampling
# or elicitation request): `tool` is what the policy's rules name, `args` its subject,
# `preview` what a host shows. The policy answers first; else a person, through an
# `approval_request` on the turn's stream, as for a tool call (runtime/tool_calls.py).
AskFn = Callable[["Tool", dict[str, Any], dict[str, Any]], Awaitable["ApprovalDecision"]]


@dataclass(slots=True)
class ToolContext:
    """What a running tool may use. Built by the runtime for each call."""

    workspace: Path
    call_id: str = ""
    results_dir: Path | None = None
    background: BackgroundTaskManager | None = None
    emit_output: Callable[[str], None] = _discard_output
    # a whole event for the turn's stream (a sub-agent's wrapped events: runtime/subagents.py)
    emit_event: Callable[[Any], None] = _discard_event
    env: Mapping[str, str] | None = None  # environment for child processes (keys removed)
    approved_outside_paths: frozenset[Path] = frozenset()
    # More workspace roots (a trusted `.claude/settings.json` `additionalDirectories`)
    extra_roots: tuple[Path, ...] = ()
    redact: Callable[[str], str] = _unchanged  # applied to what tools write to disk (offloaded output)
    mode: str = "default"  # the permission mode when the call runs
    host_files: HostFiles | None = None  # read and write files through the host (an editor)
    host_terminal: HostTerminal | None = None  # run commands in the host's terminal
    # Paths a deny rule refuses to read: tools that walk folders (grep, glob, list_dir)
    # leave them out. Set by the runtime from the policy (`ApprovalPolicy.read_denied`).
    read_denied: Callable[[Path], bool] | None = None
    # Where a tool keeps images it gives the model (read_file, MCP); None when the
    # session's models take no images (then a tool describes an image in text).
    images: ImageKeeper | None = None
    # The runtime's way to ask about a request made during this call (`AskFn`); None
    # when the call runs where no one can be asked (then such requests are refused).
    ask: AskFn | None = None

    def hidden(self, path: Path) -> bool:
        """Whether `path` must be left out of what a walking tool reports."""
        return self.read_denied is not None and self.read_denied(path)


ToolRun = Callable[[dict[str, Any], ToolContext], Awaitable["str | ToolOutcome"]]
PreviewFn = Callable[[dict[str, Any], ToolContext], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool.

    Flags:
    - `concurrency_safe`: may run in parallel with other safe calls (reads).
    - `requires_approval`: the policy decides whether to ask before it runs.
    - `background`: every call is handed to the BackgroundTaskManager and returns a
      task id at once.
    - `completes_run`: a successful call ends the run (`done.reason ==
      "completed_by_tool"`), used by headless runs.
    - `path_args`: names of arguments holding paths, checked against the workspace.
    - `kind`: `read`, `edit`, `execute` or `other`, which permission modes act on.
    - `url_args`: names of arguments holding URLs (rules match them, `domain:HOST`).
    - `path_access`: what the tool does with its paths (default: `read` for read
      tools, `write` for edit tools); `read-write` for tools that read then write.
    - `subject_of`: the tool's own permission subject (the shell's parsed command);
      without it, `subject()` uses the path, URL and summary arguments.
    - `editable_fields`: the arguments the approval dialog offers to edit on their own
      (a command, the new text); the whole arguments are editable as JSON anyway.
    - `safe_for`: decides `concurrency_safe` per call from the arguments (the `task`
      tool: safe when the chosen agent's tools are all read-only).
    - `refused_before_run`: the refusal a call would meet when it runs, known from its
      arguments (web_fetch's address guard): `check_arguments` raises it, so the call
      is refused before any approval dialog.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    run: ToolRun
    concurrency_safe: bool = False
    requires_approval: bool = False
    background: bool = False
    completes_run: bool = False
    kind: ToolKind = "other"
    path_args: tuple[str, ...] = ()
    url_args: tuple[str, ...] = ()
    path_access: Access | None = None
    subject_of: SubjectFn | None = None
    preview: PreviewFn | None = None
    summary_arg: str | None = None  # the argument a one-line UI summary shows
    editable_fields: tuple[str, ...] = ()  # arguments a person may edit directly when approving
    safe_for: Callable[[dict[str, Any]], bool] | None = None
    # Why a call with these arguments would be refused anyway when it runs (web_fetch of
    # a loopback URL), or None: checked with the schema, so before any approval dialog.
    refused_before_run: Callable[[dict[str, Any]], str | None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    answer: bool = False  # the answer format of the turn (ToolSpec.answer; session/output_schema.py)

    def subject(self, args: dict[str, Any], workspace: Path) -> Subject:
        """What this call's permission rules are matched against (see subject.py)."""
        if self.subject_of is not None:
            return self.subject_of(args, workspace)
        return default_subject(
            args,
            workspace,
            kind=self.kind,
            path_args=self.path_args,
            url_args=self.url_args,
            summary_arg=self.summary_arg,
            access=self.path_access,
        )

    def concurrency_safe_for(self, args: dict[str, Any]) -> bool:
        """Whether this call may run in parallel with other safe calls."""
        return self.safe_for(args) if self.safe_for is not None else self.concurrency_safe

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters, answer=self.answer)

    def check_arguments(self, args: dict[str, Any]) -> None:
        """Raise `ToolError` when `args` do not satisfy the schema."""
        from wyckoff_cli.tools.limits import path_problems
        from wyckoff_cli.tools.schema import validate

        problems = validate(args, self.parameters)
        problems += path_problems(self.path_args, args)  # lengths the OS would refuse
        if problems:
            raise ToolError(f"invalid arguments for {self.name}: " + "; ".join(problems) + ".")
        refusal = self.refused_before_run(args) if self.refused_before_run is not None else None
        if refusal is not None:
            raise ToolError(refusal)

    def arguments_problem(self, args: dict[str, Any]) -> str | None:
        """What is wrong with `args` (the `check_arguments` message), or None."""
        try:
            self.check_arguments(args)
        except ToolError as exc:
            return exc.message
        return None
