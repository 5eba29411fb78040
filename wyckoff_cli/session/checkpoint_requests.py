"""How the chat controller answers `Rewind`, `Undo`, `Redo` and `Diff`, for any host.

Each is an async generator of events over the UI-free `CheckpointCommands`
(runtime/checkpoints/rewind.py), running git in a thread. A restore first yields a
`ConfirmRequested` carrying its preview and changes nothing unless it is answered
yes: the app shows its preview screen, ACP and headless answer yes themselves (the
command typed is the consent; the state before is saved, so the restore can itself
be undone). A refused or failed restore changes nothing and says why. The
conversation is rewound here, on the controller's side, never by a host.

What the app's screens show of checkpoints comes from here too (`RewindPoint`,
`RewindChoice`, `CHOICES`), so tui/ imports nothing of runtime/.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import Confirmation
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.errors import WyckoffError
from wyckoff_cli.runtime.checkpoints.plan import RestorePlan
from wyckoff_cli.runtime.checkpoints.rewind import CHOICES as CHOICES  # re-exported for the screens
from wyckoff_cli.runtime.checkpoints.rewind import CheckpointCommands
from wyckoff_cli.runtime.checkpoints.rewind import RewindChoice as RewindChoice  # re-exported
from wyckoff_cli.runtime.checkpoints.rewind import RewindPoint as RewindPoint  # re-exported


async def rewind_points(commands: CheckpointCommands, conversation: Conversation) -> list[RewindPoint]:
    """The picker's entries, newest first (raises `WyckoffError` when git fails)."""
    return await asyncio.to_thread(commands.rewind_points, conversation)


async def points_or_notice(
    commands: CheckpointCommands | str, conversation: Conversation
) -> list[RewindPoint] | ev.Notice:
    """The picker's entries, or why there are none (`commands`: the reason, when off)."""
    if isinstance(commands, str):
        return ev.Notice("info", f"/rewind: {commands}")
    try:
        return await rewind_points(commands, conversation)
    except WyckoffError as exc:
        return ev.Notice("warning", f"Cannot rewind: {exc.message}")


async def when_available(
    name: str,
    commands: CheckpointCommands | str,
    run: Callable[[CheckpointCommands], AsyncIterator[ev.RuntimeEvent]],
) -> AsyncIterator[ev.RuntimeEvent]:
    """`run` over the session's checkpoints, or a notice saying why there are none."""
    if isinstance(commands, str):
        yield ev.Notice("info", f"/{name}: {commands}")
        return
    async for event in run(commands):
        yield event


async def rewind(
    commands: CheckpointCommands, conversation: Conversation, turn: int, choice: RewindChoice
) -> AsyncIterator[ev.RuntimeEvent]:
    """Preview going back to before the `turn`-th most recent typed message, ask, then
    restore the code and `truncate_to` the conversation (its recorder writes it)."""
    try:
        points = await rewind_points(commands, conversation)
    except WyckoffError as exc:
        yield ev.Notice("warning", f"Cannot rewind: {exc.message}")
        return
    if not points:
        yield ev.Notice("info", "Nothing to rewind: no message typed in this session yet.")
        return
    if turn > len(points):
        count = f"{len(points)} message{'s' * (len(points) != 1)}"
        yield ev.Notice("warning", f"/rewind {turn}: this session has only {count} of yours to go back to.")
        return
    try:
        preview = await asyncio.to_thread(commands.preview_rewind, points[turn - 1], choice, conversation)
    except WyckoffError as exc:
        yield ev.Notice("warning", f"Cannot rewind: {exc.message}")
        return
    confirmation = Confirmation()
    yield ev.ConfirmRequested("rewind", f"Rewind: {choice.label}", preview.text(), confirmation)
    if not await confirmation.wait():
        yield ev.Notice("info", "Rewind cancelled; nothing was changed.")
        return
    try:
        result = await asyncio.to_thread(commands.apply_rewind, preview, conversation)
    except WyckoffError as exc:
        yield ev.Notice("warning", f"Rewind stopped, nothing was changed: {exc.message}")
        return
    yield ev.Rewound(result.messages_removed, result.input_text)  # the host shows it, then the notes
    for note in result.notes:
        yield ev.Notice("info", note)


def undo(commands: CheckpointCommands) -> AsyncIterator[ev.RuntimeEvent]:
    """/undo: preview the code before the last round that changed files, then restore."""
    return _restore(commands.preview_undo, commands.undo, "Undo", "Nothing to undo.")


def redo(commands: CheckpointCommands) -> AsyncIterator[ev.RuntimeEvent]:
    """/redo: preview bringing back what the last undo removed, then restore."""
    return _restore(commands.preview_redo, commands.redo, "Redo", "Nothing to redo.")


async def _restore(
    plan_for: Callable[[], RestorePlan | None],
    apply: Callable[[RestorePlan], object],
    name: str,
    nothing: str,
) -> AsyncIterator[ev.RuntimeEvent]:
    try:
        plan = await asyncio.to_thread(plan_for)
    except WyckoffError as exc:
        yield ev.Notice("warning", f"Cannot {name.lower()}: {exc.message}")
        return
    if plan is None:
        yield ev.Notice("info", nothing)
        return
    confirmation = Confirmation()
    yield ev.ConfirmRequested(name.lower(), name, plan.preview_text(), confirmation)
    if not await confirmation.wait():
        yield ev.Notice("info", f"{name} cancelled; nothing was changed.")
        return
    try:
        await asyncio.to_thread(apply, plan)
    except WyckoffError as exc:
        yield ev.Notice("warning", f"{name} stopped, nothing was changed: {exc.message}")
        return
    yield ev.Notice("info", f"{name} done: {plan.summary()}.")


async def diff(commands: CheckpointCommands) -> AsyncIterator[ev.RuntimeEvent]:
    """/diff: every change the session made to the work tree (the app colours it)."""
    try:
        text = await asyncio.to_thread(commands.session_diff)
    except WyckoffError as exc:
        yield ev.Notice("warning", f"Cannot show the diff: {exc.message}")
        return
    if not text.strip():
        yield ev.Notice("info", "This session has not changed the work tree.")
        return
    yield ev.CommandOutput("diff", title="Changes this session made", text=text)
