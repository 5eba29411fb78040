"""The plan dialog: an `exit_plan` call shows the model's plan for approval.

`1`/`y` approve and switch to auto-edit (edits run, commands ask) · `2` approve and
switch to default (every change asks) · `3`/`n` keep planning, with notes for the
model · Esc keeps planning without notes. The same typing pause as every approval:
keys typed as text go to the prompt.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.tui.screens.approval import PAUSED, ApprovalScreen
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView

APPROVE_MODES = {"approve-auto": "auto-edit", "approve-default": "default"}


class PlanApprovalScreen(ApprovalScreen):
    """Dismissed with `allow` (and `chosen_mode` set) or `deny` with the notes."""

    choice_keys = {"1": "approve-auto", "y": "approve-auto", "2": "approve-default"} | {
        "3": "notes",
        "n": "notes",
    }
    chosen_mode: str | None = None

    @property
    def attention(self) -> str:
        return "the plan is ready for your approval"

    def compose(self) -> ComposeResult:
        plan = str(self.request.args.get("plan", "")) or "(no plan given)"
        with Vertical(id="dialog"):
            yield Static("The model's plan — approve it to leave plan mode?", id="title")
            with VerticalScroll(id="preview", can_focus=False):
                view = MarkdownStreamView(plan)  # the transcript's renderer: tables wrap, links show
                view.finish()  # the whole plan: rendered as a finished answer, not a growing one
                yield view
            with Vertical(id="bottom"):
                yield Static(PAUSED, id="paused")
                yield OptionList(
                    Option("1  Approve, and let edits run (auto-edit; commands ask)  (y)", id="approve-auto"),
                    Option("2  Approve, and ask before every change (default)", id="approve-default"),
                    Option("3  Keep planning, with notes for the model  (n)", id="notes"),
                    id="choices",
                )
                yield Static("↑↓ Enter pick · Esc keeps planning · PgUp/PgDn scroll the plan", id="hint")
                yield Input(placeholder="What should change in the plan? Enter sends", id="feedback")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if not self.paused and event.option.id:
            self.action_choose(event.option.id)

    def action_choose(self, choice: str) -> None:
        if self.paused or self.has_class("-feedback"):
            return
        if choice in APPROVE_MODES:
            self.chosen_mode = APPROVE_MODES[choice]
            self.dismiss(ApprovalDecision.allow())
        else:
            self.add_class("-feedback")
            self.query_one("#feedback", Input).focus()
