"""The approval dialog: keyboard first, and typing never answers it.

`1`/`y` allow once · `2`/`a` highlight "always" (Enter then saves the rule; a letter
alone never does) · `3`/`e` edit the call (the tool's editable field, or the arguments
as JSON) · `4`/`n` deny with an optional line of feedback · Esc denies at once. For an
MCP tool, `5`/`t` highlights "always for this tool" (`mcp__SERVER__TOOL`, any arguments)
and `6`/`s` "always for every tool of SERVER" (`mcp__SERVER__*`), confirmed with Enter too. Arrows
and Enter pick a choice. For a second after the dialog opens, and while the prompt is
being typed into, the dialog's keys are paused and go to the prompt instead (the
dialog says so). The choices stay pinned to the bottom; the preview scrolls above
them with PageUp/PageDown/Home/End.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.events import ApprovalRequested
from wyckoff_cli.tools.mcp.names import wider_rules
from wyckoff_cli.tools.mcp.server_asks import SAMPLING
from wyckoff_cli.tui.literal import json_text, literal, visible
from wyckoff_cli.tui.notifications import call_summary
from wyckoff_cli.tui.typing_guard import TypingGuard
from wyckoff_cli.tui.widgets.call_editor import CallEditor, editable_field, field_label
from wyckoff_cli.tui.widgets.diff import render_diff

KeySink = Callable[[events.Key], None]  # where paused keys go (the chat prompt)
CHOICE_KEYS = {"1": "allow", "y": "allow", "2": "always", "a": "always", "3": "edit", "e": "edit"}
CHOICE_KEYS |= {"4": "deny", "n": "deny"}
MCP_KEYS = {"5": "always_tool", "t": "always_tool", "6": "always_server", "s": "always_server"}
ALWAYS_CHOICES = ("always", "always_tool", "always_server")  # a key highlights them; Enter saves
PAUSED = "⏸ keys paused while you type — they go to the prompt"


def render_preview(request: ApprovalRequested, workspace: Path | None = None) -> RenderableType:
    preview = request.preview
    parts: list[RenderableType] = []
    outside = preview.get("outside_paths") or []
    if outside:
        text = Text("Outside the workspace: ", style="bold red")
        text.append(visible(", ".join(outside)), style="bold")
        parts.append(text)
    elif preview.get("reason"):  # with outside paths, the reason would only repeat them
        parts.append(literal(str(preview["reason"]), style="yellow"))
    if preview.get("error"):
        parts.append(literal(f"This call would fail: {preview['error']}", style="red"))
    diff = preview.get("diff")
    command = preview.get("command")
    if preview.get("kind") == "mcp_sampling":  # an MCP server asks the session's model
        parts.append(sampling_preview(request.args))
    elif isinstance(diff, str) and diff:
        parts.append(render_diff(diff))
    elif isinstance(command, str):
        parts.append(Text.assemble(("$ ", "bold"), (visible(command), "bold")))
        parts.append(literal(f"in {preview.get('cwd') or workspace or '.'}", style="dim"))
    elif preview.get("kind") == "fetch" and preview.get("host"):  # web_fetch
        parts.append(Text.assemble(("GET ", "bold"), (visible(str(preview.get("url", ""))), "bold")))
        parts.append(literal(f"domain {preview['host']}", style="dim"))
        if request.args.get("prompt"):
            parts.append(literal(f"looking for: {request.args['prompt']}", style="dim"))
    else:
        # the outside paths were named above: the arguments are shown without them
        rest = {k: v for k, v in request.args.items() if not _names_outside(v, outside, workspace)}
        if outside and not rest:
            return Group(*parts)
        parts.append(
            Syntax(
                json_text(rest),
                "json",
                theme="ansi_dark",
                background_color="default",
                word_wrap=True,
            )
        )
    return Group(*parts)


def sampling_preview(args: dict[str, object]) -> RenderableType:
    """What a server's sampling request sends to the model (at the session's cost)."""
    text = Text()
    if args.get("system_prompt"):
        text.append("system: ", style="bold")
        text.append(visible(str(args["system_prompt"])) + "\n")
    messages = args.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict):
            text.append(f"{message.get('role', '?')}: ", style="bold")
            text.append(visible(str(message.get("text", ""))) + "\n")
    text.append(
        f"at most {args.get('max_tokens')} tokens, on the session's model (its cost is yours)", style="dim"
    )
    return text


def title_of(request: ApprovalRequested) -> str:
    if request.name == SAMPLING:
        return f"Let the MCP server {request.args.get('server', '')} use the model?"
    return f"Allow {request.name}?"


def _names_outside(value: object, outside: list[str], workspace: Path | None) -> bool:
    if not outside or not isinstance(value, str):
        return False
    path = Path(value).expanduser()
    if not path.is_absolute() and workspace is not None:
        path = workspace / path
    return str(path.resolve()) in outside or value in outside


def always_label(request: ApprovalRequested) -> str:
    if request.rule:
        return f"Always allow — saves the rule {request.rule}"
    if request.preview.get("outside_paths"):
        return "Allow this time — nothing is saved for paths outside the workspace"
    return "Allow this time — nothing is saved for this call (it is always asked)"


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    choice_keys = CHOICE_KEYS
    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > #dialog {
        width: 90%; max-width: 120; height: auto; max-height: 100%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    ApprovalScreen #title { text-style: bold; }
    ApprovalScreen #preview { height: auto; max-height: 1fr; margin: 1 0 0 0; }
    ApprovalScreen #bottom { dock: bottom; height: auto; }
    ApprovalScreen #paused { color: $text-warning; height: 1; }
    ApprovalScreen #hint { color: $text-muted; height: auto; }
    ApprovalScreen OptionList, ApprovalScreen OptionList:focus { height: auto; border: none; padding: 0; }
    ApprovalScreen.-editing #preview { display: none; }
    ApprovalScreen #feedback, ApprovalScreen CallEditor { display: none; }
    ApprovalScreen.-feedback #feedback { display: block; }
    ApprovalScreen.-editing CallEditor { display: block; }
    ApprovalScreen.-editing OptionList, ApprovalScreen.-feedback OptionList { display: none; }
    ApprovalScreen.-editing #hint, ApprovalScreen.-feedback #hint { display: none; }
    """
    BINDINGS = [
        Binding("escape", "escape", "Deny", show=False),
        Binding("pageup", "scroll_preview('page_up')", show=False, priority=True),
        Binding("pagedown", "scroll_preview('page_down')", show=False, priority=True),
        Binding("home", "scroll_preview('home')", show=False, priority=True),
        Binding("end", "scroll_preview('end')", show=False, priority=True),
    ]

    def __init__(
        self,
        request: ApprovalRequested,
        workspace: Path | None = None,
        *,
        last_typed: Callable[[], float] | None = None,
        forward_key: KeySink | None = None,
        pause: float | None = None,
        agent: str | None = None,
    ) -> None:
        """`last_typed` says when the prompt last got a key and `forward_key` types
        into it: the chat screen passes both (standalone, paused keys are dropped).
        `pause` replaces the typing pause's length (tests); `agent` names the sub-agent
        asking, if not the main agent."""
        super().__init__()
        self.request = request
        self.agent = agent  # the sub-agent asking, if not the main agent
        self.workspace = workspace
        self.guard = TypingGuard(last_typed, pause=pause)
        self.forward_key = forward_key
        self._field = editable_field(request.args, request.editable_fields)
        self._pause_timer: Timer | None = None
        self._wider = wider_rules(request.name)  # an MCP tool: always for the tool, for its server
        if self._wider is not None:
            self.choice_keys = {**self.choice_keys, **MCP_KEYS}

    @property
    def attention(self) -> str:
        """What a notification says while this dialog waits (`tui/notifications.py`)."""
        asker = f" (the {self.agent} agent)" if self.agent else ""
        return f"approval needed{asker} — {call_summary(self.request.name, self.request.args, self.request.preview)}"

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            asker = f" (asked by the {self.agent} agent)" if self.agent else ""
            yield Static(literal(f"{title_of(self.request)}{asker}"), id="title")
            with VerticalScroll(id="preview", can_focus=False):
                yield Static(render_preview(self.request, self.workspace))
            with Vertical(id="bottom"):
                yield Static(PAUSED, id="paused")
                yield OptionList(
                    Option("1  Allow once  (y)", id="allow"),
                    Option(literal(f"2  {always_label(self.request)}  (a)"), id="always"),
                    Option(literal(f"3  Edit {field_label(self._field)}  (e)"), id="edit"),
                    Option("4  Deny, with optional feedback  (n, Esc)", id="deny"),
                    *self._mcp_options(),
                    id="choices",
                )
                yield Static(
                    Text("↑↓ Enter pick · “always” needs Enter · PgUp/PgDn/Home/End scroll the preview"),
                    id="hint",
                )
                yield Input(
                    placeholder="Why not? (optional) — Enter sends, Esc denies without a reason",
                    id="feedback",
                )
                yield CallEditor(
                    self.request.args,
                    self.request.editable_fields,
                    self.request.validate,
                    self.request.preview.get("context"),
                )

    def _mcp_options(self) -> list[Option]:
        if self._wider is None:
            return []
        tool, server = self._wider
        name = server.split("__")[1]
        return [
            Option(literal(f"5  Always allow this tool — saves the rule {tool}  (t)"), id="always_tool"),
            Option(
                literal(f"6  Always allow every tool of {name} — saves {server}  (s)"), id="always_server"
            ),
        ]

    def _always(self, choice: str) -> ApprovalDecision:
        if choice == "always" or self._wider is None:
            return ApprovalDecision.always()
        return ApprovalDecision.always(self._wider[0] if choice == "always_tool" else self._wider[1])

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self._update_pause()

    # ------------------------------------------------------------------ the typing pause

    def _update_pause(self) -> None:
        remaining = self.guard.remaining()
        self.query_one("#paused", Static).display = remaining > 0
        if self._pause_timer is not None:
            self._pause_timer.stop()
            self._pause_timer = None
        if remaining > 0:
            self._pause_timer = self.set_timer(remaining + 0.02, self._update_pause)

    @property
    def paused(self) -> bool:
        return self.guard.paused

    def _to_prompt(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()
        if self.forward_key is not None:
            self.forward_key(event)
        self._update_pause()

    async def on_key(self, event: events.Key) -> None:
        if self.has_class("-feedback") or self.has_class("-editing"):
            return  # the input or the editor has the keys
        if event.key == "escape":
            return  # denying is always safe
        if self.paused:
            self._to_prompt(event)
            return
        choice = self.choice_keys.get(event.key)
        if choice is not None:
            event.stop()
            event.prevent_default()
            self.action_choose(choice)
        elif event.is_printable:
            self._to_prompt(event)  # typing again: the keys pause again

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.paused or not event.option.id:
            return
        if event.option.id in ALWAYS_CHOICES:
            self.dismiss(self._always(event.option.id))  # Enter on a highlighted "always"
        else:
            self.action_choose(event.option.id)

    # ------------------------------------------------------------------ choices

    def action_choose(self, choice: str) -> None:
        if self.paused or self.has_class("-feedback") or self.has_class("-editing"):
            return
        if choice == "allow":
            self.dismiss(ApprovalDecision.allow())
        elif choice in ALWAYS_CHOICES:
            # a letter never saves a rule: it highlights the choice, Enter confirms
            choices = self.query_one(OptionList)
            choices.highlighted = choices.get_option_index(choice)
            self.query_one("#hint", Static).update(
                Text("Enter confirms “always”; ↑↓ picks another choice", style="bold")
            )
        elif choice == "edit":
            self.add_class("-editing")
            self.query_one(CallEditor).start()
        else:
            self.add_class("-feedback")
            self.query_one("#feedback", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "feedback":
            return
        event.stop()
        self.dismiss(ApprovalDecision.deny(event.value.strip() or None))

    def on_call_editor_save(self, event: CallEditor.Save) -> None:
        event.stop()
        self.dismiss(ApprovalDecision.edit(event.args))

    def on_call_editor_cancel(self, event: CallEditor.Cancel) -> None:
        event.stop()
        self.remove_class("-editing")
        self.query_one(OptionList).focus()

    def action_escape(self) -> None:
        if self.has_class("-editing"):
            self.on_call_editor_cancel(CallEditor.Cancel())
            return
        self.dismiss(ApprovalDecision.deny(None))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # the editor and the feedback line keep PageUp/Home/End for themselves
        typing = self.has_class("-editing") or self.has_class("-feedback")
        return not (action == "scroll_preview" and typing)

    def action_scroll_preview(self, where: str) -> None:
        preview = self.query_one("#preview", VerticalScroll)
        {
            "page_up": lambda: preview.scroll_page_up(animate=False),
            "page_down": lambda: preview.scroll_page_down(animate=False),
            "home": lambda: preview.scroll_home(animate=False),
            "end": lambda: preview.scroll_end(animate=False),
        }[where]()
