"""The UI-free side of /rewind, /undo, /redo and /diff, for any host.

    commands = CheckpointCommands(engine, session_id)
    points = commands.rewind_points(conversation)            # the picker, newest first
    preview = commands.preview_rewind(points[0], RewindChoice.BOTH, conversation)
    show(preview.text()); if confirmed:
        result = commands.apply_rewind(preview, conversation)  # Conversation.truncate_to
        put_into_input(result.input_text)

Every method blocks on git: call it from a worker thread. A restore always shows a
preview first (`preview_*` returns it, `apply*` does it) and saves the current state
before changing anything, so it can itself be undone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.messages import Message
from wyckoff_cli.core.shown import strip_reminders  # a mode change's note was never typed
from wyckoff_cli.runtime.checkpoints.engine import CheckpointEngine
from wyckoff_cli.runtime.checkpoints.plan import RestorePlan
from wyckoff_cli.runtime.checkpoints.shadow import CheckpointError
from wyckoff_cli.runtime.checkpoints.store import Checkpoint

LABEL_CHARS = 80
UNDO_RESTORE = "undo-restore"  # the action of an /undo that takes a rewind back


class RewindChoice(StrEnum):
    BOTH = "both"
    CONVERSATION = "conversation"
    CODE = "code"

    @property
    def label(self) -> str:
        return {"both": "Code and conversation", "conversation": "Conversation only", "code": "Code only"}[
            self
        ]

    @property
    def restores_code(self) -> bool:
        return self is not RewindChoice.CONVERSATION

    @property
    def rewinds_conversation(self) -> bool:
        return self is not RewindChoice.CODE


CHOICES: tuple[RewindChoice, ...] = (RewindChoice.BOTH, RewindChoice.CONVERSATION, RewindChoice.CODE)


@dataclass(frozen=True)
class RewindPoint:
    """One entry of the picker: a user message and what changed after it."""

    message_id: str
    text: str  # the whole message, put back into the input by a conversation rewind
    checkpoint: (
        Checkpoint | None
    )  # the code as it was before the message (None: no round changed files since)
    files: tuple[str, ...] = ()  # files that differ now from that state

    @property
    def label(self) -> str:
        flat = " ".join(self.text.split())
        line = flat if len(flat) <= LABEL_CHARS else flat[: LABEL_CHARS - 1] + "…"
        if not self.files:
            return f"{line}  (no file changes after it)"
        shown = ", ".join(self.files[:3]) + (
            f" and {len(self.files) - 3} more" if len(self.files) > 3 else ""
        )
        return f"{line}  ({len(self.files)} {'file' if len(self.files) == 1 else 'files'} changed: {shown})"


@dataclass
class RewindPreview:
    point: RewindPoint
    choice: RewindChoice
    plan: RestorePlan | None  # None when the code is not restored
    messages_removed: int = 0  # the chosen message and everything after it

    def text(self) -> str:
        lines = [f"Rewind to before: {' '.join(self.point.text.split())[:LABEL_CHARS]}"]
        if self.choice.rewinds_conversation:
            lines.append(
                f"Conversation: {self.messages_removed} messages removed; the message goes back into the input."
            )
        else:
            lines.append("Conversation: kept as it is.")
        if not self.choice.restores_code:
            lines.append("Code: left as it is.")
        elif self.plan is None:
            lines.append("Code: no round changed files after this message; nothing to restore.")
        else:
            lines.append("Code:")
            lines.append(self.plan.preview_text().rstrip("\n"))
        return "\n".join(lines) + "\n"


@dataclass
class RewindResult:
    input_text: str | None  # for the input box (conversation rewinds)
    saved: Checkpoint | None  # the state saved before the code was restored (undo the restore with it)
    messages_removed: int = 0
    notes: list[str] = field(default_factory=list)


class CheckpointCommands:
    """What /rewind, /undo, /redo and /diff do, without any UI."""

    def __init__(self, engine: CheckpointEngine, session_id: str) -> None:
        self.engine = engine
        self.session_id = session_id

    # ---------------------------------------------------------------- /rewind

    def rewind_points(self, history: Sequence[Message]) -> list[RewindPoint]:
        """The session's user messages (typed by a person), newest first, each with the
        files changed after it."""
        users = [m for m in history if m.role == "user" and not m.meta.get("synthetic")]
        checkpoints = self.engine.checkpoints(self.session_id)
        current = self.engine.snapshot() if checkpoints else None
        points: list[RewindPoint] = []
        for index, message in enumerate(users):
            later = {m.id for m in users[index:]}
            target = next((c for c in checkpoints if c.message_id in later), None)
            files: tuple[str, ...] = ()
            if target is not None and current is not None:
                files = tuple(c.path for c in self.engine.repo.changes(target.commit, current.commit))
            points.append(RewindPoint(message.id, strip_reminders(message.text), target, files))
        return points[::-1]

    def preview_rewind(
        self, point: RewindPoint, choice: RewindChoice, history: Sequence[Message]
    ) -> RewindPreview:
        plan = None
        if choice.restores_code and point.checkpoint is not None:
            plan = self.engine.plan(point.checkpoint)
        removed = next((len(history) - i for i, m in enumerate(history) if m.id == point.message_id), 0)
        return RewindPreview(point, choice, plan, removed if choice.rewinds_conversation else 0)

    def apply_rewind(self, preview: RewindPreview, conversation: Conversation) -> RewindResult:
        """Do what the preview showed: restore the code (saving the current state
        first), then `conversation.truncate_to` the chosen message (its observers — the
        recorder — write the `rewind` record)."""
        result = RewindResult(None, None)
        if preview.plan is not None:
            result.saved = self.engine.apply(preview.plan, self.session_id, preview.point.message_id)
            result.notes.append(
                f"Code restored ({preview.plan.summary()}); the state before is saved as checkpoint {result.saved.id} (/undo brings it back)."
            )
        if preview.choice.rewinds_conversation:
            try:
                result.messages_removed = len(conversation.truncate_to(preview.point.message_id))
            except KeyError as exc:
                raise CheckpointError("the chosen message is no longer in the conversation") from exc
            result.input_text = preview.point.text
            result.notes.append(f"Conversation rewound: {result.messages_removed} messages removed.")
        return result

    # ---------------------------------------------------------------- /undo and /redo

    def preview_undo(self) -> RestorePlan | None:
        """The plan for /undo, or None when no round changed files (or all are undone).
        Right after a rewind or restore of the code, /undo takes that back: the plan is
        the state it saved (the conversation stays as the rewind left it)."""
        restore = self._last_restore()
        if restore is not None:
            return self.engine.plan(restore)
        return self.engine.plan_undo(self.session_id)

    def undo(self, plan: RestorePlan) -> Checkpoint:
        if plan.target.type == "restore":  # `preview_undo` targets a round, or a rewind's saved state
            # back to the state before the rewind, with the undo steps as they stood then
            return self.engine.apply(plan, self.session_id, plan.target.message_id, action=UNDO_RESTORE)
        return self.engine.apply(plan, self.session_id, plan.target.message_id, action="undo")

    def _last_restore(self) -> Checkpoint | None:
        """The session's last checkpoint when it is the state a rewind or restore saved
        (not one saved by /undo or /redo, nor a rewind already taken back)."""
        checkpoints = self.engine.checkpoints(self.session_id)
        last = checkpoints[-1] if checkpoints else None
        if last is not None and last.type == "restore" and last.action == "restore":
            return last
        return None

    def preview_redo(self) -> RestorePlan | None:
        return self.engine.plan_redo(self.session_id)

    def redo(self, plan: RestorePlan) -> Checkpoint:
        return self.engine.apply(plan, self.session_id, plan.target.message_id, action="redo")

    # ---------------------------------------------------------------- /diff

    def session_diff(self) -> str:
        """Every change the session made to the work tree so far (a unified diff);
        empty when there is none."""
        return self.engine.session_diff(self.session_id)
