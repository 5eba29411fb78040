"""`resolve_turn_expectation`: which tools a turn must call, from deterministic signals.

Signals:
- a slash command that declares required tools (passed in by the host);
- `@path` mentions of files in the workspace: that file must be read (an image's
  mention attaches the image instead);
- a final answer claiming a file was changed, or a command was run, when no tool of
  that kind succeeded this turn (the wording detectors are in `runtime/claims.py`);
- what the turn's calls did: when it attempted edits or commands and none of that kind
  succeeded (refused, denied, failed), `unmet_attempts` names them, and the loop guard
  wants an answer that says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from wyckoff_cli.core.image_files import looks_like_image_path
from wyckoff_cli.core.messages import ToolCallPart
from wyckoff_cli.runtime.claims import claims_edit, claims_run

_MENTION = re.compile(r"(?<![\w/.@])@((?:[\w.\-]+/)*[\w.\-]+)")


@dataclass(frozen=True, slots=True)
class Requirement:
    """A tool (or any tool of a kind) that must succeed this turn."""

    tool: str | None = None  # a tool name, or None for "any tool of `kind`"
    kind: str | None = None  # "edit" / "execute" when any such tool will do
    path: Path | None = None  # for reads: the file that must be read
    reason: str = ""

    def describe(self) -> str:
        if self.tool and self.path is not None:
            return f"{self.tool} on {self.path.name} ({self.reason})"
        what = self.tool or f"a tool that {'changes files' if self.kind == 'edit' else 'runs commands'}"
        return f"{what} ({self.reason})"

    def satisfied_by(self, call: ToolCallPart, kind_of: Callable[[str], str], root: Path) -> bool:
        if self.tool is not None and call.name != self.tool:
            return False
        if self.kind is not None and kind_of(call.name) != self.kind:
            return False
        if self.path is not None:
            raw = call.arguments.get("path")
            if not isinstance(raw, str):
                return False
            return _resolve(root, raw) == self.path
        return True


def _resolve(root: Path, raw: str) -> Path:
    path = Path(raw).expanduser()
    return (path if path.is_absolute() else root / path).resolve()


@dataclass
class TurnExpectation:
    """Fixed requirements plus the claim checks applied to the final answer."""

    workspace: Path
    required: list[Requirement] = field(default_factory=list)
    kind_of: Callable[[str], str] = lambda _name: "other"
    available_kinds: frozenset[str] = frozenset()

    def missing(
        self,
        succeeded: Iterable[ToolCallPart],
        final_text: str,
        failed: Iterable[tuple[ToolCallPart, str]] = (),
    ) -> list[Requirement]:
        """Requirements no successful call met. A claim about a kind of tool whose calls
        all failed this turn is left to `unmet_attempts` (asking again to call a tool
        that was refused would not help)."""
        calls = list(succeeded)
        tried = {self.kind_of(call.name) for call, _ in failed}
        wanted = list(self.required)
        if "edit" in self.available_kinds and "edit" not in tried and claims_edit(final_text):
            wanted.append(Requirement(kind="edit", reason="your answer says files were changed"))
        if "execute" in self.available_kinds and "execute" not in tried and claims_run(final_text):
            wanted.append(Requirement(kind="execute", reason="your answer says a command was run"))
        return [
            req for req in wanted if not any(req.satisfied_by(c, self.kind_of, self.workspace) for c in calls)
        ]

    def unmet_attempts(
        self, succeeded: Iterable[ToolCallPart], failed: Iterable[tuple[ToolCallPart, str]]
    ) -> list[tuple[ToolCallPart, str]]:
        """The failed calls (with their error) of each kind in `CHANGING_KINDS` that was
        attempted this turn without a single success of that kind."""
        done = {self.kind_of(call.name) for call in succeeded}
        return [
            (call, error)
            for call, error in failed
            if self.kind_of(call.name) in CHANGING_KINDS and self.kind_of(call.name) not in done
        ]


CHANGING_KINDS = ("edit", "execute")
"""Tool kinds whose success an answer may take for granted: files changed, commands run."""


def mentioned_files(user_text: str, root: Path) -> list[tuple[str, Path]]:
    """The workspace files `@path` mentions in `user_text` name (each once, in order)."""
    found: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    for match in _MENTION.finditer(user_text):
        raw = match.group(1).rstrip(".")
        target = _resolve(root, raw)
        if target in seen or not target.is_file():
            continue
        try:
            target.relative_to(root)
        except ValueError:
            continue
        seen.add(target)
        found.append((raw, target))
    return found


def resolve_turn_expectation(
    user_text: str,
    workspace: Path,
    *,
    required_tools: Iterable[str] = (),
    tool_kinds: dict[str, str] | None = None,
    read_tool: str = "read_file",
) -> TurnExpectation:
    """Work out what this turn must call. `tool_kinds` maps tool name → kind for the
    tools available; requirements on tools that are not available are skipped."""
    kinds = dict(tool_kinds or {})
    root = workspace.resolve()
    required = [
        Requirement(tool=name, reason="the command you were given requires it")
        for name in required_tools
        if name in kinds
    ]
    if read_tool in kinds:
        for raw, target in mentioned_files(user_text, root):
            if looks_like_image_path(target):
                continue  # an image mention attaches the image itself (runtime/mentions.py)
            required.append(Requirement(tool=read_tool, path=target, reason=f"the user mentioned @{raw}"))
    return TurnExpectation(
        workspace=root,
        required=required,
        kind_of=lambda name: kinds.get(name, "other"),
        available_kinds=frozenset(kinds.values()),
    )
