"""/rewind, /undo, /redo and /diff as whole flows: the screens of screens/rewind.py
driven by the UI-free `CheckpointCommands` (runtime/checkpoints/rewind.py).

Each flow must run in a worker (it awaits modal screens), and runs git in a thread:

    chat.run_worker(undo_flow(chat.app, commands, chat.add_notice), exclusive=True, group="command")

`notify(kind, text)` is how a flow reports (`kind` is `info` or `warning`), e.g.
the chat screen's `add_notice`. Nothing is changed unless the person confirms a
preview; a refused or failed restore changes nothing and says why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.app import App

from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.errors import WyckoffError
from wyckoff_cli.runtime.checkpoints.plan import RestorePlan
from wyckoff_cli.runtime.checkpoints.rewind import CheckpointCommands, RewindResult
from wyckoff_cli.tui.screens.rewind import DiffScreen, RestorePreviewScreen, RewindPickerScreen

Notify = Callable[[str, str], None]


async def rewind_flow(
    app: App[Any],
    commands: CheckpointCommands,
    conversation: Conversation,
    notify: Notify,
) -> RewindResult | None:
    """The picker, the three choices, the preview, then the rewind. Returns what was
    done (its `input_text` goes back into the prompt), or None when cancelled."""
    try:
        points = await asyncio.to_thread(commands.rewind_points, conversation)
    except WyckoffError as exc:
        notify("warning", f"Cannot rewind: {exc.message}")
        return None
    selection = await app.push_screen_wait(RewindPickerScreen(points))
    if selection is None:
        return None
    try:
        preview = await asyncio.to_thread(
            commands.preview_rewind, selection.point, selection.choice, conversation
        )
    except WyckoffError as exc:
        notify("warning", f"Cannot rewind: {exc.message}")
        return None
    if not await app.push_screen_wait(
        RestorePreviewScreen(f"Rewind: {selection.choice.label}", preview.text())
    ):
        notify("info", "Rewind cancelled; nothing was changed.")
        return None
    try:
        result = await asyncio.to_thread(commands.apply_rewind, preview, conversation)
    except WyckoffError as exc:
        notify("warning", f"Rewind stopped, nothing was changed: {exc.message}")
        return None
    for note in result.notes:
        notify("info", note)
    return result


async def undo_flow(app: App[Any], commands: CheckpointCommands, notify: Notify) -> bool:
    """/undo: preview the code before the last round that changed files, then restore."""
    return await _restore_flow(app, commands.preview_undo, commands.undo, "Undo", "Nothing to undo.", notify)


async def redo_flow(app: App[Any], commands: CheckpointCommands, notify: Notify) -> bool:
    """/redo: preview bringing back what the last undo removed, then restore."""
    return await _restore_flow(app, commands.preview_redo, commands.redo, "Redo", "Nothing to redo.", notify)


async def _restore_flow(
    app: App[Any],
    plan_for: Callable[[], RestorePlan | None],
    apply: Callable[[RestorePlan], object],
    name: str,
    nothing: str,
    notify: Notify,
) -> bool:
    try:
        plan = await asyncio.to_thread(plan_for)
    except WyckoffError as exc:
        notify("warning", f"Cannot {name.lower()}: {exc.message}")
        return False
    if plan is None:
        notify("info", nothing)
        return False
    if not await app.push_screen_wait(RestorePreviewScreen(name, plan.preview_text())):
        notify("info", f"{name} cancelled; nothing was changed.")
        return False
    try:
        await asyncio.to_thread(apply, plan)
    except WyckoffError as exc:
        notify("warning", f"{name} stopped, nothing was changed: {exc.message}")
        return False
    notify("info", f"{name} done: {plan.summary()}.")
    return True


async def diff_flow(app: App[Any], commands: CheckpointCommands, notify: Notify) -> None:
    """/diff: every change the session made to the work tree, coloured."""
    try:
        diff = await asyncio.to_thread(commands.session_diff)
    except WyckoffError as exc:
        notify("warning", f"Cannot show the diff: {exc.message}")
        return
    await app.push_screen_wait(DiffScreen(diff))
