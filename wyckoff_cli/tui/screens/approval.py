"""The approval modal: keyboard first.

`1`/`y` allow once · `2`/`a` always (shows the rule it saves) · `3`/`e` edit the
arguments (or, for a write or edit, the new text) · `4`/`n` deny with an optional line
of feedback · Esc denies at once. Arrows and Enter work too. Keys pressed in the first
`GRACE_SECONDS` after the modal appears are ignored, so typing ahead never approves
anything by accident.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.events import ApprovalRequested
from wyckoff_cli.tui.widgets.diff import render_diff

GRACE_SECONDS = 0.3


def render_preview(request: ApprovalRequested, workspace: Path | None = None) -> RenderableType:
    preview = request.preview
    parts: list[RenderableType] = []
    outside = preview.get("outside_paths") or []
    if outside:
        text = Text("Outside the workspace: ", style="bold red")
        text.append(", ".join(outside), style="bold")
        parts.append(text)
    if preview.get("reason"):
        parts.append(Text(str(preview["reason"]), style="yellow"))
    diff = preview.get("diff")
    command = preview.get("command")
    if isinstance(diff, str) and diff:
        parts.append(render_diff(diff))
    elif isinstance(command, str):
        parts.append(Text.assemble(("$ ", "bold"), (command, "bold")))
        parts.append(Text(f"in {preview.get('cwd') or workspace or '.'}", style="dim"))
    elif preview.get("kind") == "fetch" and preview.get("host"):  # web_fetch
        parts.append(Text.assemble(("GET ", "bold"), (str(preview.get("url", "")), "bold")))
        parts.append(Text(f"domain {preview['host']}", style="dim"))
        if request.args.get("prompt"):
            parts.append(Text(f"looking for: {request.args['prompt']}", style="dim"))
    else:
        parts.append(
            Syntax(
                json.dumps(request.args, indent=2, ensure_ascii=False),
                "json",
                theme="ansi_dark",
                background_color="default",
                word_wrap=True,
            )
        )
    return Group(*parts)


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > Vertical {
        width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    ApprovalScreen #title { text-style: bold; margin: 0 0 1 0; }
    ApprovalScreen #preview { height: auto; max-height: 24; margin: 0 0 1 0; }
    ApprovalScreen OptionList { height: auto; border: none; }
    ApprovalScreen #feedback, ApprovalScreen #editor, ApprovalScreen #edit-error { display: none; }
    ApprovalScreen #editor { height: 14; }
    ApprovalScreen #edit-error { color: $text-error; }
    ApprovalScreen.-feedback #feedback { display: block; }
    ApprovalScreen.-editing #editor, ApprovalScreen.-editing #edit-error { display: block; }
    ApprovalScreen.-editing OptionList, ApprovalScreen.-feedback OptionList { display: none; }
    """
    BINDINGS = [
        Binding("1,y", "choose('allow')", "Allow once", show=False),
        Binding("2,a", "choose('always')", "Always", show=False),
        Binding("3,e", "choose('edit')", "Edit", show=False),
        Binding("4,n", "choose('deny')", "Deny", show=False),
        Binding("escape", "escape", "Deny", show=False),
        Binding("ctrl+s", "save_edit", "Save the edit", show=False),
    ]

    def __init__(
        self, request: ApprovalRequested, workspace: Path | None = None, *, agent: str | None = None
    ) -> None:
        super().__init__()
        self.request = request
        self.agent = agent  # the sub-agent asking, if not the main agent
        self.workspace = workspace
        self.opened = time.monotonic()
        # the tool's declared editable field, edited as plain text (a command, the new text)
        self._text_field = next(
            (f for f in request.editable_fields if isinstance(request.args.get(f), str)), None
        )

    def compose(self) -> ComposeResult:
        always = f"Always allow — saves rule {self.request.rule}" if self.request.rule else "Always allow"
        with Vertical():
            asker = f" (asked by the {self.agent} agent)" if self.agent else ""
            yield Static(Text(f"Allow {self.request.name}?{asker}"), id="title")
            with VerticalScroll(id="preview"):
                yield Static(render_preview(self.request, self.workspace))
            yield OptionList(
                Option("1  Allow once  (y)", id="allow"),
                Option(f"2  {always}  (a)", id="always"),
                Option(f"3  Edit {self._edit_label()}  (e)", id="edit"),
                Option("4  Deny, with optional feedback  (n, Esc)", id="deny"),
                id="choices",
            )
            yield Input(
                placeholder="Why not? (optional) — Enter sends, Esc denies without a reason", id="feedback"
            )
            yield TextArea(self._editable_text(), id="editor", soft_wrap=True)
            yield Static("Ctrl+S runs the edited call, Esc cancels the edit", id="edit-error")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def _edit_label(self) -> str:
        if self._text_field is None:
            return "the arguments"
        return {"new": "the new text", "content": "the new text"}.get(
            self._text_field, f"the {self._text_field}"
        )

    def _editable_text(self) -> str:
        if self._text_field is not None:
            return str(self.request.args[self._text_field])
        return json.dumps(self.request.args, indent=2, ensure_ascii=False)

    def _in_grace(self) -> bool:
        return time.monotonic() - self.opened < GRACE_SECONDS

    async def on_key(self, event: events.Key) -> None:
        if self._in_grace():
            event.stop()
            event.prevent_default()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if not self._in_grace() and event.option.id:
            self.action_choose(event.option.id)

    def action_choose(self, choice: str) -> None:
        if self._in_grace() or self.has_class("-feedback") or self.has_class("-editing"):
            return
        if choice == "allow":
            self.dismiss(ApprovalDecision.allow())
        elif choice == "always":
            self.dismiss(ApprovalDecision.always())
        elif choice == "edit":
            self.add_class("-editing")
            self.query_one("#editor", TextArea).focus()
        else:
            self.add_class("-feedback")
            self.query_one("#feedback", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(ApprovalDecision.deny(event.value.strip() or None))

    def action_escape(self) -> None:
        if self.has_class("-editing"):
            self.remove_class("-editing")
            self.query_one(OptionList).focus()
            return
        self.dismiss(ApprovalDecision.deny(None))

    def action_save_edit(self) -> None:
        if not self.has_class("-editing"):
            return
        text = self.query_one("#editor", TextArea).text
        error_line = self.query_one("#edit-error", Static)
        if self._text_field is not None:
            args = {**self.request.args, self._text_field: text}
        else:
            try:
                args = json.loads(text)
            except json.JSONDecodeError as exc:
                error_line.update(f"Not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}")
                return
            if not isinstance(args, dict):
                error_line.update("The arguments must be a JSON object")
                return
        problem = self.request.validate(args)
        if problem:
            error_line.update(problem)
            return
        self.dismiss(ApprovalDecision.edit(args))
