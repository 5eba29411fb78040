"""Requests: everything a host can ask of a chat, as one typed union.

Requests mirror events. Events go from the session to a host as one union that every
host renders through one `match`; requests go the other way: a host builds one of
these frozen dataclasses (from a key, a dialog's answer, or slash-command text parsed
by `session/commands.py`) and hands it to `ChatController.handle(request)`, which
answers with events. No host assigns into the runtime or edits the conversation.

- `SessionRequest`: what the controller handles. `ImmediateRequest` is the part that
  needs no await (a key binding's mode change, an interrupt, a dialog's answer):
  `ChatController.handle_now` answers those at once, `handle` answers every one.
- `ViewRequest`: what only the app's screen does (help, scrolling, find, quit); the
  command table says which host offers which command.

Background tasks and attaching to them come with the parallel-agents issue (29).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from wyckoff_cli.core.messages import ImagePart
from wyckoff_cli.runtime.checkpoints.rewind import RewindChoice
from wyckoff_cli.session.custom_commands import TurnRequest
from wyckoff_cli.session.user_shell import ShellRun

if TYPE_CHECKING:
    from wyckoff_cli.runtime.hook_config import HookFile

# ---------------------------------------------------------------------- turns


@dataclass(frozen=True, slots=True)
class Turn:
    """Send `text` to the model. `command`: the expansion of a command that is a prompt
    (its rules and model hold for this turn); `attached`: `!command` runs whose output
    goes before the text; `required_tools`: the loop guard's expectation; `images`: the
    prompt's attachments, already kept in the session's image store (docs/IMAGES.md);
    `shown`: what the transcript shows instead of `text` (an MCP server's prompt, as typed)."""

    text: str
    required_tools: tuple[str, ...] = ()
    command: TurnRequest | None = None
    attached: tuple[ShellRun, ...] = ()
    images: tuple[ImagePart, ...] = ()
    shown: str | None = None


@dataclass(frozen=True, slots=True)
class PromptCommand:
    """`/init` or a custom command: expanded into a `Turn` (unknown: a warning)."""

    name: str
    argument: str = ""


@dataclass(frozen=True, slots=True)
class Shell:
    """`!command`: run it through the session's policy; its output goes with the next turn."""

    command: str


@dataclass(frozen=True, slots=True)
class DropShellOutput:
    """Backspace on an empty prompt: the last `!command` output is not sent after all."""


@dataclass(frozen=True, slots=True)
class Interrupt:
    """Stop the running turn or `!command` (it still ends with every call answered)."""


# ---------------------------------------------------------------------- settings


@dataclass(frozen=True, slots=True)
class SetMode:
    """Switch the permission mode; `mode=None` tells the current one."""

    mode: str | None = None


@dataclass(frozen=True, slots=True)
class CycleMode:
    """Shift+Tab: the next permission mode."""


@dataclass(frozen=True, slots=True)
class ApprovePlan:
    """The person approved an `exit_plan` call and picked `mode` (set before it runs)."""

    mode: str


@dataclass(frozen=True, slots=True)
class SetModel:
    """Switch the model; `model=None` tells the current one and the others."""

    model: str | None = None


@dataclass(frozen=True, slots=True)
class TrustHooks:
    """The answer to the hooks' trust question."""

    files: tuple[HookFile, ...]
    trusted: bool


@dataclass(frozen=True, slots=True)
class RejectAlways:
    """ "Always reject" (an ACP client's answer): deny calls matching `rule` from now on."""

    rule: str


# ---------------------------------------------------------------------- the session


@dataclass(frozen=True, slots=True)
class Compact:
    focus: str | None = None


@dataclass(frozen=True, slots=True)
class Clear:
    """Start a new session."""


@dataclass(frozen=True, slots=True)
class Resume:
    """Open an earlier session (the app opens its picker when `session_id` is empty)."""

    session_id: str = ""


@dataclass(frozen=True, slots=True)
class Export:
    """Write the session as Markdown (or JSON for a `.json` file) into the project."""

    path: str = ""


# ---------------------------------------------------------------------- checkpoints


@dataclass(frozen=True, slots=True)
class Rewind:
    """Go back to before the `turn`-th most recent message typed (1: the last one),
    restoring what `choice` says. `turn=None`: the app opens its picker, which answers
    with a `Rewind` naming the turn; other hosts take the last one."""

    turn: int | None = None
    choice: RewindChoice = RewindChoice.BOTH


@dataclass(frozen=True, slots=True)
class Undo:
    """Restore the files as they were before the last round that changed them."""


@dataclass(frozen=True, slots=True)
class Redo:
    """Bring back what the last `/undo` removed."""


@dataclass(frozen=True, slots=True)
class Diff:
    """Every change this session made to the work tree."""


@dataclass(frozen=True, slots=True)
class Review:
    """Review a change read-only (docs/REVIEW.md): `kind` is `uncommitted`, `base`
    (since `ref`) or `commit` (`ref`)."""

    kind: str = "uncommitted"
    ref: str = ""


# ---------------------------------------------------------------------- what there is


@dataclass(frozen=True, slots=True)
class Cost:
    """Tokens and cost of this session by model."""


@dataclass(frozen=True, slots=True)
class Memory:
    query: str = ""


@dataclass(frozen=True, slots=True)
class Lsp:
    """List the language servers: languages, state, files open, last error."""


@dataclass(frozen=True, slots=True)
class Permissions:
    """List the rules; `remove`: the saved rule to remove; `trust`: trust what the
    project's files grant (allow rules, command files) as they are now."""

    remove: str | None = None
    trust: bool = False


@dataclass(frozen=True, slots=True)
class Mcp:
    """MCP servers: `argument` is empty, `restart NAME` or `trust [NAME]`."""

    argument: str = ""


@dataclass(frozen=True, slots=True)
class Skills:
    pass


@dataclass(frozen=True, slots=True)
class Hooks:
    argument: str = ""


@dataclass(frozen=True, slots=True)
class Plugins:
    """`/plugins`: the installed plugins; `enable NAME` / `disable NAME`."""

    argument: str = ""


@dataclass(frozen=True, slots=True)
class Worktree:
    """The project's git worktrees: empty (the list), `diff NAME` or `merge NAME [--squash]`."""

    argument: str = ""


@dataclass(frozen=True, slots=True)
class Invalid:
    """Slash-command text that names a command but cannot be one (a bad argument)."""

    command: str
    message: str


# ---------------------------------------------------------------------- the app's own


@dataclass(frozen=True, slots=True)
class Help:
    pass


@dataclass(frozen=True, slots=True)
class Top:
    pass


@dataclass(frozen=True, slots=True)
class Bottom:
    pass


@dataclass(frozen=True, slots=True)
class Find:
    text: str = ""


@dataclass(frozen=True, slots=True)
class Quit:
    pass


@dataclass(frozen=True, slots=True)
class Background:
    """`/bg PROMPT`: a background session from this session's settings (issue 29)."""

    prompt: str


@dataclass(frozen=True, slots=True)
class Agents:
    """`/agents`: the live list of this project's sessions and sub-agents."""


ImmediateRequest = (
    Interrupt | DropShellOutput | SetMode | CycleMode | ApprovePlan | TrustHooks | RejectAlways | Invalid
)
SessionRequest = (
    ImmediateRequest
    | Turn
    | PromptCommand
    | Shell
    | SetModel
    | Compact
    | Clear
    | Resume
    | Export
    | Rewind
    | Undo
    | Redo
    | Diff
    | Review
    | Cost
    | Memory
    | Permissions
    | Mcp
    | Lsp
    | Skills
    | Hooks
    | Plugins
    | Worktree
)
ViewRequest = Help | Top | Bottom | Find | Quit | Background | Agents
Request = SessionRequest | ViewRequest
