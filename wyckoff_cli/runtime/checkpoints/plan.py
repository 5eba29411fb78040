"""What a restore will do, shown before it is done.

A `RestorePlan` compares a fresh snapshot of the work tree with the target: each
path is restored (changed since), deleted (created since) or re-created (deleted
since). A path the user changed by hand after the agent's round is marked, because
restoring it loses that change too. Files a snapshot leaves out (ignored, over
`max_file_size`) are never written or deleted: they are listed as left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from wyckoff_cli.runtime.checkpoints.shadow import Snapshot
from wyckoff_cli.runtime.checkpoints.store import Checkpoint

FileAction = Literal["restore", "delete", "recreate"]
_VERBS: dict[str, str] = {"restore": "restored", "delete": "deleted", "recreate": "re-created"}


@dataclass(frozen=True, slots=True)
class PlannedFile:
    path: str
    action: FileAction
    by_user: bool = False  # changed by hand after the agent: restoring loses that change


@dataclass
class RestorePlan:
    """Restoring `target` (its snapshot `target_commit`) from the state `current`."""

    target: Checkpoint
    target_commit: str
    current: Snapshot
    files: list[PlannedFile] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)
    diff: str = ""  # current → target, for the planned paths

    @property
    def empty(self) -> bool:
        return not self.files

    @property
    def user_changed(self) -> list[str]:
        return [f.path for f in self.files if f.by_user]

    def counts(self) -> dict[str, int]:
        out = {"restore": 0, "delete": 0, "recreate": 0}
        for item in self.files:
            out[item.action] += 1
        return out

    def summary(self) -> str:
        """One line: `2 files restored, 1 deleted, 1 re-created`."""
        if self.empty:
            return "nothing to change: the work tree already matches"
        counts = self.counts()
        parts = [
            f"{counts[a]} {'file' if counts[a] == 1 else 'files'} {_VERBS[a]}" for a in _VERBS if counts[a]
        ]
        return ", ".join(parts)

    def preview_text(self) -> str:
        """The whole preview for a person: the summary, one line per file, the
        warnings and the diff."""
        lines = [
            f"Restore to checkpoint {self.target.id} ({self.target.created[:19].replace('T', ' ')}): "
            f"{self.summary()}"
        ]
        for item in self.files:
            mark = "  ! changed by you after the agent; restoring loses your change" if item.by_user else ""
            lines.append(f"  {_VERBS[item.action]:<11} {item.path}{mark}")
        if self.user_changed:
            count = len(self.user_changed)
            lines.append(
                f"Warning: {count} of these files {'was' if count == 1 else 'were'} changed by hand after the "
                "agent changed them; restoring loses those changes (the current state is saved first, "
                "so the restore itself can be undone)."
            )
        if self.left_alone:
            lines.append(
                "Left alone (ignored or over max_file_size, never in a snapshot): "
                + ", ".join(self.left_alone)
            )
        if self.diff:
            lines += ["", self.diff.rstrip("\n")]
        return "\n".join(lines) + "\n"
