"""CheckpointEngine: snapshots, restore plans, restores, undo and redo for one workspace.

    engine = CheckpointEngine.open(workspace, config.checkpoints)
    cp = engine.checkpoint(session_id, message_id, calls)   # before a round
    engine.record_after(cp)                                 # once its tools ran
    plan = engine.plan(cp)                                  # the preview
    engine.apply(plan, session_id)                          # saves the current state first

Everything is kept under `<data dir>/checkpoints/<project key>/`: the shadow git
repository (`git/`) and `checkpoints.jsonl` (storage.py). Blocking: hosts call it
from a worker thread (CheckpointHooks does).
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from wyckoff_cli.runtime.checkpoints.plan import PlannedFile, RestorePlan
from wyckoff_cli.runtime.checkpoints.shadow import (
    CheckpointError,
    GitMissing,
    ShadowBackend,
    ShadowRepo,
    Snapshot,
)
from wyckoff_cli.runtime.checkpoints.store import Checkpoint, CheckpointLog
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.config import CheckpointsConfig
from wyckoff_cli.storage.session_info import parse_time
from wyckoff_cli.storage.sessions import project_key

ARG_CHARS = 200  # each string argument kept in a checkpoint's call list
MAX_PREVIEW_DIFF = 200_000  # characters of diff in a preview


def checkpoints_root() -> Path:
    return paths.data_dir() / "checkpoints"


def open_shadow_repo(workspace: Path, git_dir: Path, backend: str | None = None) -> ShadowBackend:
    """The git binary when it is on PATH (or `backend="git"`), else dulwich."""
    if backend == "git" or (backend is None and shutil.which("git")):
        return ShadowRepo(workspace, git_dir)
    try:
        from wyckoff_cli.runtime.checkpoints.dulwich_repo import DulwichShadowRepo
    except ImportError as exc:
        raise GitMissing(
            "checkpoints need the git binary or the dulwich library, and neither is installed"
        ) from exc
    return DulwichShadowRepo(workspace, git_dir)


@dataclass
class UndoState:
    """Which rounds are still applied and what /redo can bring back."""

    rounds: list[Checkpoint]  # round checkpoints whose tools changed files, in order
    position: int  # rounds[:position] are applied
    redo: list[str]  # checkpoint ids saved by undos, the newest last


class CheckpointEngine:
    def __init__(
        self,
        workspace: Path,
        settings: CheckpointsConfig | None = None,
        *,
        root: Path | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        redact: Callable[[str], str] = lambda text: text,
        backend: str | None = None,
    ) -> None:
        self.workspace = workspace.resolve()
        self.settings = settings or CheckpointsConfig()
        self.folder = (root or checkpoints_root()) / project_key(self.workspace)
        self.repo = open_shadow_repo(self.workspace, self.folder / "git", backend)
        self.log = CheckpointLog(self.folder, self.workspace)
        self.clock = clock
        self.redact = redact

    @classmethod
    def open(
        cls, workspace: Path, settings: CheckpointsConfig | None = None, **kwargs: Any
    ) -> CheckpointEngine:
        """The engine for `workspace`, with checkpoints past `keep_days` pruned."""
        engine = cls(workspace, settings, **kwargs)
        engine.prune()
        return engine

    # ---------------------------------------------------------------- snapshots

    def snapshot(self) -> Snapshot:
        """The work tree now, as a commit no checkpoint names (yet)."""
        with self.log.locked():
            self.repo.ensure()
            self.repo.set_excludes(self.settings.exclude)
            return self.repo.snapshot(self.settings.max_file_size)

    def checkpoint(
        self,
        session: str,
        message_id: str | None,
        calls: Sequence[dict[str, Any]] = (),
        *,
        snapshot: Snapshot | None = None,
        checkpoint_id: str | None = None,
        **restore: Any,
    ) -> Checkpoint:
        """Snapshot the work tree (or keep `snapshot`) and record it as a checkpoint."""
        snap = snapshot or self.snapshot()
        previous = self.checkpoints(session)
        files = [c.path for c in self.repo.changes(previous[-1].commit, snap.commit)] if previous else []
        checkpoint = Checkpoint(
            id=checkpoint_id or self._new_id(),
            session=session,
            message_id=message_id,
            created=self.clock().isoformat(timespec="milliseconds"),
            commit=snap.commit,
            tree=snap.tree,
            type="restore" if restore else "round",
            calls=[self._call_record(call) for call in calls],
            files=files,
            skipped=list(snap.skipped),
            **restore,
        )
        with self.log.locked():
            self.repo.keep(checkpoint.id, snap.commit)
            self.log.append(checkpoint.to_record())
        return checkpoint

    def record_after(self, checkpoint: Checkpoint) -> Snapshot:
        """Record the work tree once the checkpoint's round (or restore) finished."""
        snap = self.snapshot()
        with self.log.locked():
            self.repo.keep(f"{checkpoint.id}-after", snap.commit)
            self.log.append({"kind": "after", "id": checkpoint.id, "commit": snap.commit, "tree": snap.tree})
        checkpoint.after, checkpoint.after_tree = snap.commit, snap.tree
        return snap

    def _call_record(self, call: dict[str, Any]) -> dict[str, Any]:
        """The call as `checkpoints.jsonl` keeps it: every string redacted whole (before
        it is shortened, so a cut never leaves half a secret the patterns miss), then cut."""
        args = call.get("args") or {}
        short = {
            k: (v[:ARG_CHARS] + "…" if isinstance(v, str) and len(v) > ARG_CHARS else v)
            for k, v in self._redacted(args).items()
        }
        return {"id": call.get("id", ""), "name": call.get("name", ""), "args": short}

    def _redacted(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {k: self._redacted(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._redacted(v) for v in value]
        return value

    def _new_id(self) -> str:
        known = {c.id for c in self.log.read()}
        while (candidate := secrets.token_hex(4)) in known:
            pass
        return candidate

    # ---------------------------------------------------------------- reading

    def checkpoints(self, session: str | None = None) -> list[Checkpoint]:
        """Checkpoints, oldest first (of one session, or all)."""
        return [c for c in self.log.read() if session is None or c.session == session]

    def sessions(self) -> list[str]:
        """Sessions with checkpoints, the one used last at the end."""
        order: dict[str, None] = {}
        for checkpoint in self.log.read():
            order.pop(checkpoint.session, None)
            order[checkpoint.session] = None
        return list(order)

    def find(self, id_or_prefix: str) -> Checkpoint:
        text = id_or_prefix.strip().lower()
        every = self.log.read()
        matches = [c for c in every if c.id == text] or [c for c in every if text and c.id.startswith(text)]
        if not matches:
            raise CheckpointError(
                f"no checkpoint {id_or_prefix!r} in this workspace (see `wyckoff checkpoints list`)"
            )
        if len(matches) > 1:
            raise CheckpointError(f"{id_or_prefix!r} matches {len(matches)} checkpoints; give more of the id")
        return matches[0]

    def disk_use(self) -> int:
        return self.repo.disk_use() + (self.log.path.stat().st_size if self.log.path.exists() else 0)

    def diff_since(self, checkpoint: Checkpoint, current: Snapshot | None = None) -> str:
        """Every change to the work tree since `checkpoint`."""
        now = current or self.snapshot()
        return self.repo.diff(checkpoint.commit, now.commit)

    def session_diff(self, session: str) -> str:
        """What the session changed in the work tree so far: against its first checkpoint."""
        checkpoints = self.checkpoints(session)
        if not checkpoints:
            return ""
        return self.diff_since(checkpoints[0])

    # ---------------------------------------------------------------- restoring

    def plan(self, target: Checkpoint, *, commit: str | None = None) -> RestorePlan:
        """What restoring `target` would do to the work tree now (nothing is changed)."""
        current = self.snapshot()
        target_commit = commit or target.commit
        changes = self.repo.changes(current.commit, target_commit)
        by_user = self._changed_by_hand(target, current)
        plan = RestorePlan(target, target_commit, current)
        keep_out = set(current.skipped)
        deleted = {c.path for c in changes if c.status == "D"}
        for change in changes:
            if change.status == "D":
                action = "delete"
            elif change.status == "A":
                action = "recreate"
                if change.path in keep_out or self._in_the_way(change.path, deleted):
                    plan.left_alone.append(change.path)  # on disk but never in a snapshot: not ours
                    continue
            else:
                action = "restore"
            plan.files.append(PlannedFile(change.path, action, change.path in by_user))  # type: ignore[arg-type]
        plan.left_alone += [p for p in current.skipped if p not in plan.left_alone]
        if plan.files:
            plan.diff = self.repo.diff(current.commit, target_commit, [f.path for f in plan.files])
            if len(plan.diff) > MAX_PREVIEW_DIFF:
                cut = plan.diff.rfind("\n", 0, MAX_PREVIEW_DIFF) + 1
                plan.diff = plan.diff[:cut] + (
                    f"… (the diff is cut at {MAX_PREVIEW_DIFF:,} characters; "
                    f"`wyckoff checkpoints diff {target.id}` prints it whole)\n"
                )
        return plan

    def _in_the_way(self, path: str, deleted: set[str]) -> bool:
        """Something the snapshot does not hold is on disk where `path` comes back: an
        ignored or oversized file, or a folder with such files (a folder holding only
        files the restore deletes is not in the way)."""
        parts = path.split("/")
        for depth in range(1, len(parts)):  # a file or symlink where a folder comes back
            parent = "/".join(parts[:depth])
            above = self.workspace / parent
            if not os.path.lexists(above):
                return False
            if above.is_symlink() or not above.is_dir():
                return parent not in deleted
        full = self.workspace / path
        if not os.path.lexists(full):
            return False
        if not full.is_dir() or full.is_symlink():
            return True
        for root, _dirs, names in os.walk(full):
            for name in names:
                if Path(root, name).relative_to(self.workspace).as_posix() not in deleted:
                    return True
        return False

    def _changed_by_hand(self, target: Checkpoint, current: Snapshot) -> set[str]:
        """Paths changed between a round's end and the next snapshot, since `target`."""
        chain = self.checkpoints(target.session)
        start = next((i for i, c in enumerate(chain) if c.id == target.id), len(chain))
        later = chain[start:]
        changed: set[str] = set()
        for before, after in zip(later, [*later[1:], None], strict=True):
            if before.after is None:
                continue
            following = after.commit if after is not None else current.commit
            changed.update(c.path for c in self.repo.changes(before.after, following))
        return changed

    def apply(
        self,
        plan: RestorePlan,
        session: str,
        message_id: str | None = None,
        *,
        action: str = "restore",
        state: UndoState | None = None,
    ) -> Checkpoint:
        """Carry out `plan`: save the current state as a `restore` checkpoint (so this
        can be undone), then restore. Refuses when the work tree changed since the plan."""
        now = self.snapshot()
        if now.tree != plan.current.tree:
            raise CheckpointError("the work tree changed since the preview was made; look at the new preview")
        undo = state or self.undo_state(session)
        if action == "undo":
            position, redo = undo.position - 1, undo.redo
        elif action == "redo":
            position, redo = undo.position + 1, undo.redo[:-1]
        else:
            position, redo = self._position_of(plan.target, undo), []
        saved_id = self._new_id()
        saved = self.checkpoint(
            session,
            message_id,
            snapshot=now,
            checkpoint_id=saved_id,
            action=action,
            restore_of=plan.target.id,
            position=max(0, position),
            redo=[*redo, saved_id] if action == "undo" else redo,
        )
        write = [f.path for f in plan.files if f.action != "delete"]
        delete = [f.path for f in plan.files if f.action == "delete"]
        with self.log.locked():
            self.repo.restore(plan.target_commit, write, delete)
        self.record_after(saved)
        return saved

    # ---------------------------------------------------------------- undo and redo

    def undo_state(self, session: str, *, before: str | None = None) -> UndoState:
        """Replayed from the session's checkpoints (all, or those before the checkpoint
        `before`): a round that changed files is an undo step (and drops the steps an
        undo had taken back), a restore sets where the steps stand."""
        rounds: list[Checkpoint] = []
        position: int = 0
        redo: list[str] = []
        for checkpoint in self.checkpoints(session):
            if checkpoint.id == before:
                break
            if checkpoint.type == "round":
                if checkpoint.after_tree is None or checkpoint.after_tree != checkpoint.tree:
                    rounds = [*rounds[:position], checkpoint]
                    position, redo = len(rounds), []
            else:
                position = min(checkpoint.position or 0, len(rounds))
                redo = list(checkpoint.redo)
        return UndoState(rounds, position, redo)

    def _position_of(self, target: Checkpoint, state: UndoState) -> int:
        """How many undo steps stand once the work tree is back at `target`."""
        if target.type == "restore":  # the state before that restore: where the steps stood then
            return min(self.undo_state(target.session, before=target.id).position, len(state.rounds))
        for index, checkpoint in enumerate(state.rounds):
            if checkpoint.created >= target.created:
                return index
        return len(state.rounds)

    def plan_undo(self, session: str) -> RestorePlan | None:
        """Back to before the last round that changed files (None: nothing to undo)."""
        state = self.undo_state(session)
        if state.position == 0:
            return None
        return self.plan(state.rounds[state.position - 1])

    def plan_redo(self, session: str) -> RestorePlan | None:
        """Back to the state the last undo saved (None: nothing to redo)."""
        state = self.undo_state(session)
        if not state.redo:
            return None
        return self.plan(self.find(state.redo[-1]))

    # ---------------------------------------------------------------- pruning

    def prune(self, keep_days: int | None = None) -> list[Checkpoint]:
        """Remove checkpoints older than `keep_days` (the setting by default)."""
        days = self.settings.keep_days if keep_days is None else keep_days
        cutoff = self.clock() - timedelta(days=days)
        with self.log.locked():
            every = self.log.read()
            old = [c for c in every if (t := parse_time(c.created)) is not None and t < cutoff]
            if not old:
                return []
            gone = {c.id for c in old}
            self.log.rewrite([c for c in every if c.id not in gone])
            self.repo.forget([*gone, *(f"{c.id}-after" for c in old if c.after)])
            self.repo.collect_garbage()
        return old
