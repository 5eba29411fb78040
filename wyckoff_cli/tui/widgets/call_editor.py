"""Editing a call's arguments before it runs, inside the approval dialog.

The tool declares which argument a person edits (`ApprovalRequested.editable_fields`):
a one-line input for a one-line value such as a shell command, a text area for text
(an edit's replacement is shown between the file's surrounding lines, read-only).
Ctrl+R switches to all the arguments as JSON — the fallback, and the only form for a
tool without an editable text field. Ctrl+G opens what is being edited in
`$VISUAL`/`$EDITOR` and takes the result back (`tui/external_editor.py`), checked
at once. Ctrl+S (or Enter in the one-line input) checks the edit against the tool's
schema and posts `CallEditor.Save`; Esc posts `Cancel`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static, TextArea

from wyckoff_cli.tui.external_editor import EditResult, edit_in_app, suffix_for
from wyckoff_cli.tui.literal import has_control, json_text, literal

Validate = Callable[[dict[str, Any]], "str | None"]
FIELD_LABELS = {"new": "the new text", "content": "the file's content", "command": "the command"}
CONTEXT_LINES = 3


def editable_field(args: dict[str, Any], fields: list[str]) -> str | None:
    """The first declared field whose value is text (others are edited as JSON). Text
    holding control characters (an escape sequence) is edited as JSON too, where they
    are `\\u` escapes: an editor widget would send them to the terminal."""
    return next((f for f in fields if isinstance(value := args.get(f), str) and not has_control(value)), None)


def field_label(name: str | None) -> str:
    return "the arguments" if name is None else FIELD_LABELS.get(name, f"the {name}")


def _context_text(lines: object, last: bool) -> Text:
    shown = [str(line) for line in lines] if isinstance(lines, list) else []
    shown = shown[-CONTEXT_LINES:] if not last else shown[:CONTEXT_LINES]
    return literal("\n".join(shown), style="dim")


class CallEditor(Vertical):
    DEFAULT_CSS = """
    CallEditor { height: auto; max-height: 100%; }
    CallEditor .context { color: $text-muted; height: auto; }
    CallEditor #field-text { height: auto; min-height: 3; max-height: 12; }
    CallEditor #json { height: auto; min-height: 5; max-height: 14; display: none; }
    CallEditor.-json #json { display: block; }
    CallEditor.-json #field-line, CallEditor.-json #field-text, CallEditor.-json .context { display: none; }
    CallEditor #edit-help { color: $text-muted; }
    CallEditor #edit-error { color: $text-error; }
    """
    BINDINGS = [
        Binding("ctrl+s", "save", "Run the edited call", show=False),
        Binding("ctrl+r", "toggle_json", "Edit all arguments as JSON", show=False),
        Binding("ctrl+g", "open_editor", "Edit in $EDITOR", show=False),
        Binding("escape", "cancel", "Back", show=False),
    ]

    class Save(Message):
        def __init__(self, args: dict[str, Any]) -> None:
            super().__init__()
            self.args = args

    class Cancel(Message):
        pass

    def __init__(
        self,
        args: dict[str, Any],
        fields: list[str],
        validate: Validate,
        context: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.args = args
        self.field = editable_field(args, fields)
        self.validate = validate
        self.context = context or {}
        value = str(args[self.field]) if self.field is not None else ""
        self.one_line = self.field is not None and "\n" not in value and self.field == "command"

    @property
    def json_mode(self) -> bool:
        return self.field is None or self.has_class("-json")

    def compose(self) -> ComposeResult:
        if self.field is not None:
            value = str(self.args[self.field])
            if self.one_line:
                yield Input(value, id="field-line")
            else:
                if self.context.get("before"):
                    yield Static(_context_text(self.context["before"], last=False), classes="context")
                yield TextArea(value, id="field-text", soft_wrap=True)
                if self.context.get("after"):
                    yield Static(_context_text(self.context["after"], last=True), classes="context")
        yield TextArea(json_text(self.args), id="json", soft_wrap=True)
        yield Static(self._help(), id="edit-help")
        yield Static("", id="edit-error")

    def on_mount(self) -> None:
        if self.field is None:
            self.add_class("-json")

    def start(self) -> None:
        """Give the editor the keys (the dialog shows it)."""
        self._editor().focus()

    def _help(self) -> Text:
        run = "Enter or Ctrl+S runs it" if self.one_line and not self.json_mode else "Ctrl+S runs it"
        text = f"Editing {field_label(None if self.json_mode else self.field)} · {run} · Esc goes back"
        if self.field is not None:
            text += " · Ctrl+R " + ("edits the field" if self.json_mode else "edits all arguments as JSON")
        return literal(text + " · Ctrl+G in your editor")

    def _editor(self) -> Input | TextArea:
        if self.json_mode:
            return self.query_one("#json", TextArea)
        if self.one_line:
            return self.query_one("#field-line", Input)
        return self.query_one("#field-text", TextArea)

    def action_toggle_json(self) -> None:
        if self.field is None:
            return
        if self.json_mode:
            self.remove_class("-json")
        else:
            # the JSON starts from the field's current text
            self.query_one("#json", TextArea).load_text(json_text(self._field_args()))
            self.add_class("-json")
        self.query_one("#edit-help", Static).update(self._help())
        self._editor().focus()

    def action_open_editor(self) -> None:
        """Ctrl+G: what is being edited, in the person's editor; the result is checked
        at once (and again when it runs)."""
        editor = self._editor()
        text = editor.value if isinstance(editor, Input) else editor.text
        if self.json_mode:
            suffix = ".json"
        elif self.field == "command":
            suffix = ".sh"
        else:
            suffix = suffix_for(self.args.get("path") or self.args.get("file_path"), ".txt")
        self._took_back(edit_in_app(self.app, text, suffix=suffix))

    def _took_back(self, result: EditResult) -> None:
        error = self.query_one("#edit-error", Static)
        if result.text is None:
            error.update(literal(result.message))
            self._editor().focus()
            return
        editor = self._editor()
        message = result.message
        if isinstance(editor, Input) and "\n" in result.text:
            # a command of several lines does not fit the one-line input: edit it as JSON
            assert self.field is not None
            self.query_one("#json", TextArea).load_text(json_text({**self.args, self.field: result.text}))
            self.add_class("-json")
            self.query_one("#edit-help", Static).update(self._help())
            message += " It has several lines: shown as JSON."
        elif isinstance(editor, Input):
            editor.value = result.text
            editor.cursor_position = len(result.text)
        else:
            editor.load_text(result.text)
            editor.move_cursor(editor.document.end)
        _, problem = self.edited()
        error.update(literal(problem or ""))
        self.query_one("#edit-help", Static).update(Text(f"{message} ") + self._help())
        self._editor().focus()

    def _field_args(self) -> dict[str, Any]:
        assert self.field is not None
        editor = self._editor() if not self.json_mode else None
        value = editor.value if isinstance(editor, Input) else editor.text if editor else ""
        return {**self.args, self.field: value}

    def edited(self) -> tuple[dict[str, Any] | None, str | None]:
        """(the edited arguments, or None and why not)."""
        if not self.json_mode:
            args = self._field_args()
        else:
            text = self.query_one("#json", TextArea).text
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError as exc:
                return None, f"Not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
            if not isinstance(parsed, dict):
                return None, "The arguments must be a JSON object"
            args = parsed
        problem = self.validate(args)
        return (None, problem) if problem else (args, None)

    def action_save(self) -> None:
        args, problem = self.edited()
        if args is None:
            self.query_one("#edit-error", Static).update(problem or "")
            return
        self.post_message(self.Save(args))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    def action_cancel(self) -> None:
        self.post_message(self.Cancel())
