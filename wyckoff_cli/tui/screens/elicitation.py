"""An MCP server's form (`elicitation/create`), built from the schema it sent.

One row per field (tools/mcp/forms.py): a text line for strings and numbers, a
checkbox for a boolean (Space toggles), a list of choices for an enum; required fields
are marked `*`, defaults filled in; a multiple choice is a list (Space toggles). Tab and Shift+Tab move between fields; Ctrl+S
accepts (the answers are checked first: what is wrong is said under the form and
nothing is sent), Ctrl+D declines, Esc cancels. Enter moves to the next field and
never sends, so keys typed into the prompt as the form opens cannot answer it.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, Select, SelectionList, Static

from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.events import ApprovalRequested
from wyckoff_cli.tools.mcp.forms import FormField, check_answers, form_fields
from wyckoff_cli.tui.literal import literal

HINT = "Tab next field · Ctrl+S accept · Ctrl+D decline · Esc cancel"


def _answer(action: str, content: dict[str, Any] | None = None) -> ApprovalDecision:
    return ApprovalDecision.edit({"action": action, **({"content": content} if content is not None else {})})


class ElicitationScreen(ModalScreen[ApprovalDecision]):
    DEFAULT_CSS = """
    ElicitationScreen { align: center middle; }
    ElicitationScreen > #dialog {
        width: 90%; max-width: 100; height: auto; max-height: 100%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    ElicitationScreen #title { text-style: bold; }
    ElicitationScreen #fields { height: auto; max-height: 1fr; }
    ElicitationScreen .label { margin: 1 0 0 0; }
    ElicitationScreen .about { color: $text-muted; }
    ElicitationScreen SelectionList { height: auto; }
    ElicitationScreen #bottom { dock: bottom; height: auto; }
    ElicitationScreen #problems { color: $text-error; height: auto; }
    ElicitationScreen #hint { color: $text-muted; height: auto; }
    """
    BINDINGS = [
        Binding("ctrl+s", "accept", "Accept", priority=True),
        Binding("ctrl+d", "decline", "Decline", priority=True),
        Binding("escape", "cancel", "Cancel", priority=True),
    ]

    def __init__(
        self, request: ApprovalRequested, workspace: Any = None, *, agent: str | None = None, **_ignored: Any
    ) -> None:
        """`request`: an `McpElicitation` approval request (its `requested_schema`);
        the approval dialog's other arguments (the typing pause's) are not needed here."""
        super().__init__()
        self.request = request
        self.agent = agent
        schema = request.args.get("requested_schema")
        self.fields = form_fields(schema if isinstance(schema, dict) else {})

    @property
    def server(self) -> str:
        return str(self.request.args.get("server", ""))

    @property
    def attention(self) -> str:
        return f"input needed — the MCP server {self.server} asks: {self.request.args.get('message', '')}"

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            asker = f" (during the {self.agent} agent's call)" if self.agent else ""
            yield Static(literal(f"The MCP server {self.server} asks{asker}:"), id="title")
            yield Static(literal(str(self.request.args.get("message", ""))), id="message")
            with VerticalScroll(id="fields"):
                for item in self.fields:
                    yield from self._row(item)
            with Vertical(id="bottom"):
                yield Static("", id="problems")
                yield Static(HINT, id="hint")

    def _row(self, item: FormField) -> ComposeResult:
        label = item.title + (" *" if item.required else "")
        if item.kind == "boolean":
            yield Checkbox(label, bool(item.default), id=f"field-{item.name}", classes="label")
        else:
            yield Static(literal(label), classes="label")
            if item.kind == "multi":
                chosen = item.default if isinstance(item.default, list) else []
                yield SelectionList[str](
                    *[
                        (label, value, value in chosen)
                        for label, value in zip(item.labels, item.options, strict=True)
                    ],
                    id=f"field-{item.name}",
                )
            elif item.kind == "enum":
                choices = list(zip(item.labels, item.options, strict=True))
                default = (
                    str(item.default)
                    if item.default is not None and str(item.default) in item.options
                    else None
                )
                yield Select(
                    choices, value=default if default is not None else Select.NULL, id=f"field-{item.name}"
                )
            else:
                default_text = "" if item.default is None else str(item.default)
                placeholder = {"integer": "a whole number", "number": "a number"}.get(item.kind, "")
                yield Input(default_text, placeholder=placeholder, id=f"field-{item.name}")
        if item.description:
            yield Static(literal(item.description), classes="about")

    def on_mount(self) -> None:
        first = next(
            iter(self.query("#fields Input, #fields Checkbox, #fields Select, #fields SelectionList")), None
        )
        if first is not None:
            first.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.focus_next()  # Enter never sends the form

    def typed(self) -> dict[str, Any]:
        """Each field's current value: text, a bool, or the chosen option (or nothing)."""
        values: dict[str, Any] = {}
        for item in self.fields:
            widget = self.query_one(f"#field-{item.name}")
            if isinstance(widget, Checkbox):
                values[item.name] = widget.value
            elif isinstance(widget, SelectionList):
                values[item.name] = [str(v) for v in widget.selected]
            elif isinstance(widget, Select):
                values[item.name] = "" if widget.value is Select.NULL else str(widget.value)
            elif isinstance(widget, Input):
                values[item.name] = widget.value
        return values

    def action_accept(self) -> None:
        typed = self.typed()
        _content, problems = check_answers(self.fields, typed)
        if problems:
            self.query_one("#problems", Static).update(literal("\n".join(problems.values())))
            return
        self.dismiss(_answer("accept", typed))

    def action_decline(self) -> None:
        self.dismiss(_answer("decline"))

    def action_cancel(self) -> None:
        self.dismiss(_answer("cancel"))
