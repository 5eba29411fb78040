"""Snapshots of the approval dialog at 80×24: a long diff with the choices pinned
below it, and the editor of an edit's new text between the file's own lines."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from tests.tui.test_app_snapshots import ROOT, app_at_rest, settle
from wyckoff_cli.core.events import ApprovalRequested
from wyckoff_cli.tui.screens.approval import ApprovalScreen

SMALL = (80, 24)


def long_diff(lines: int = 45) -> str:
    removed = "".join(f"-old line {n}\n" for n in range(lines))
    added = "".join(f"+new line {n}\n" for n in range(lines))
    return f"--- a/notes.txt\n+++ b/notes.txt\n@@ -1,{lines} +1,{lines} @@\n{removed}{added}"


def test_approval_dialog_at_80x24_with_a_long_diff(snap_compare: Any) -> None:
    request = ApprovalRequested(
        "call_1",
        "write_file",
        {"path": "notes.txt", "content": "new"},
        {"kind": "diff", "diff": long_diff(), "reason": "default mode asks before changing files"},
        "write_file(notes.txt)",
        editable_fields=["content"],
    )

    async def run_before(pilot: Pilot[None]) -> None:
        await pilot.app.push_screen(ApprovalScreen(request, ROOT, pause=0))
        await settle(pilot)

    assert snap_compare(app_at_rest(), terminal_size=SMALL, run_before=run_before)


def test_approval_dialog_editing_an_edits_new_text(snap_compare: Any) -> None:
    request = ApprovalRequested(
        "call_1",
        "edit_file",
        {"path": "calc.py", "old": "    return 3.14 * r * r", "new": "    return math.pi * r * r"},
        {
            "kind": "diff",
            "diff": "--- a/calc.py\n+++ b/calc.py\n@@ -4,2 +4,2 @@\n def area(r):\n"
            "-    return 3.14 * r * r\n+    return math.pi * r * r\n",
            "context": {"before": ["import math", "", "def area(r):"], "after": ["", "print(area(2))"]},
        },
        "edit_file(calc.py)",
        editable_fields=["new"],
    )

    async def run_before(pilot: Pilot[None]) -> None:
        await pilot.app.push_screen(ApprovalScreen(request, ROOT, pause=0))
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)

    assert snap_compare(app_at_rest(), terminal_size=SMALL, run_before=run_before)


def test_approval_dialog_outside_the_workspace(snap_compare: Any) -> None:
    request = ApprovalRequested(
        "call_1",
        "read_file",
        {"path": "/etc/hosts"},
        {
            "kind": "read",
            "path": "/etc/hosts",
            "outside_paths": ["/etc/hosts"],
            "reason": "read_file would use a path outside the workspace: /etc/hosts",
        },
        None,
    )

    async def run_before(pilot: Pilot[None]) -> None:
        await pilot.app.push_screen(ApprovalScreen(request, ROOT, pause=0))
        await settle(pilot)

    assert snap_compare(app_at_rest(), terminal_size=SMALL, run_before=run_before)
