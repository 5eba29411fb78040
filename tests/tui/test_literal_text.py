"""Text a person or a model wrote is shown literally everywhere (issue 28).

A message with `[/bold]` crashed the app when `/rewind` listed it (MarkupError), and
`/resume` then crashed every time; `[FIX] fix the test` showed as `fix the test`. The
Pilot test walks that path; the property test puts text full of markup and escape
sequences into every widget, picker and dialog that shows such text and checks that it
is shown as written (control characters made visible, never sent to the terminal) and
that nothing crashes.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from textual.geometry import Region
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import OptionList

from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE, chat, send, settle, wait_for_screen
from wyckoff_cli.core import events as ev
from wyckoff_cli.runtime.checkpoints.rewind import RewindPoint
from wyckoff_cli.runtime.hook_config import HookFile, HookSpec
from wyckoff_cli.storage.session_info import SessionInfo
from wyckoff_cli.tui.app import WyckoffApp
from wyckoff_cli.tui.literal import json_text, literal, visible
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.screens.mcp_trust import McpTrustScreen
from wyckoff_cli.tui.screens.plan_approval import PlanApprovalScreen
from wyckoff_cli.tui.screens.rewind import DiffScreen, RestorePreviewScreen, RewindPickerScreen
from wyckoff_cli.tui.screens.sessions import SessionPicker
from wyckoff_cli.tui.screens.setup import SetupNeeds, SetupScreen
from wyckoff_cli.tui.screens.trust import HookTrustScreen
from wyckoff_cli.tui.widgets.call_editor import editable_field
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.status_bar import StatusBar
from wyckoff_cli.tui.widgets.task_call import TaskCallView
from wyckoff_cli.tui.widgets.thinking import ThinkingPane
from wyckoff_cli.tui.widgets.tool_call import ToolCallView

pytestmark = pytest.mark.timeout(600)

# ---------------------------------------------------------------------- visible()

CONTROL_FORMS = [
    ("\x1b[31mred\x1b[0m", "␛[31mred␛[0m"),  # SGR colour
    (
        "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\",
        "␛]8;;http://evil.example␛\\click␛]8;;␛\\",
    ),  # OSC 8
    ("\x1b]52;c;aGk=\x07", "␛]52;c;aGk=␇"),  # OSC 52: write the clipboard, BEL-terminated
    ("\x1b]0;title\x1b\\", "␛]0;title␛\\"),  # set the window title
    ("a\rb", "a␍b"),  # carriage return: would overwrite the line
    ("ring\x07", "ring␇"),
    ("back\x08space", "back␈space"),
    ("\x9b31m", "\\x9b31m"),  # one-byte CSI (C1)
    ("del\x7f", "del␡"),
    ("nul\x00", "nul␀"),
    ("line\r\nnext", "line\nnext"),  # a Windows line end is a line end
    ("tab\tand\nnewline", "tab\tand\nnewline"),  # kept
]


@pytest.mark.parametrize(("raw", "shown"), CONTROL_FORMS)
def test_control_characters_are_made_visible(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    assert literal(raw).plain == shown


MARKUP_FORMS = ["[/bold]", "[link=https://x.example]x[/link]", "[@click=app.quit]q[/]", "[b]x[/b]", "[FIX]"]


def test_json_for_an_editor_escapes_every_control_character() -> None:
    value = {"command": "echo \x1b]52;c;aGk=\x07 \x9b2J \x7f é [b]x[/b]"}
    text = json_text(value)
    assert not CONTROL.search(text.replace("\n", "")) and "é" in text and "[b]x[/b]" in text
    assert json.loads(text) == value  # lossless: the edit runs what the model wrote unless changed


def test_a_field_holding_an_escape_sequence_is_edited_as_json() -> None:
    """An editor widget (Input, TextArea) paints its text raw: such a command is edited
    as JSON, where the escape is `\\u001b`."""
    assert editable_field({"command": "ls \x1b[31m"}, ["command"]) is None
    assert editable_field({"command": "ls\r\n"}, ["command"]) == "command"
    assert editable_field({"command": "ls -la"}, ["command"]) == "command"


@pytest.mark.parametrize("text", MARKUP_FORMS)
def test_markup_is_text(text: str) -> None:
    assert literal(text).plain == text and not literal(text).spans


# ---------------------------------------------------------------------- the crash a user found


def git_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


async def test_bracket_text_in_rewind_and_resume_pickers(tmp_path: Path) -> None:
    """`[/bold]` crashed /rewind and /resume; `[FIX]` vanished from both pickers."""
    git_repo(tmp_path)
    first, second = "[/bold] fix it", "[FIX] fix the test"
    app, _ = make_app(tmp_path, [{"text": "one"}, {"text": "two"}], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, first)
        await settle(pilot, screen)
        await send(pilot, second)
        await settle(pilot, screen)
        assert [w.text for w in screen.query(UserMessage)] == [first, second]
        assert first in shown_text(screen) and second in shown_text(screen)

        await send(pilot, "/rewind")
        picker = await wait_for_screen(pilot, RewindPickerScreen)
        await pilot.pause()
        labels = option_texts(picker.query_one("#messages", OptionList))
        assert [label.split("  (")[0] for label in labels] == [second, first], labels
        await pilot.press("escape")
        await wait_for_screen(pilot, ChatScreen)

        await send(pilot, "/resume")
        sessions = await wait_for_screen(pilot, SessionPicker)
        await pilot.pause()
        (title,) = option_texts(sessions.query_one(OptionList))
        assert title.endswith(first), title
        await pilot.press("escape")
        await wait_for_screen(pilot, ChatScreen)
        assert app.is_running


def option_texts(options: OptionList) -> list[str]:
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


# ---------------------------------------------------------------------- the property test

FRAGMENTS = [
    "[/bold]",
    "[link=https://x.example]",
    "[@click=app.quit]",
    "[b]x[/b]",
    "[FIX]",
    "[/]",
    "[",
    "]",
    "\x1b[31m",
    "\x1b]8;;http://e.example\x1b\\",
    "\x1b]52;c;aGk=\x07",
    "\r",
    "\x07",
    "\x9b2J",
    "plain",
    "ok:",
]
texts = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4).map(" ".join)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def widget_lines(widget: Widget) -> list[str]:
    width, height = widget.region.size  # borders and padding included
    if not width or not height:
        return []
    return [strip.text for strip in widget.render_lines(Region(0, 0, width, height))]


def shown_text(screen: Screen[Any]) -> str:
    """Every line every visible widget of the screen paints, its control characters included."""
    lines: list[str] = []
    for widget in screen.query("*"):
        if widget.display and widget.is_attached:
            lines.extend(widget_lines(widget))
    return "\n".join(lines)


@dataclass
class Case:
    name: str
    show: Callable[[WyckoffApp, ChatScreen, str], Any]  # shows `text`; returns a screen pushed, or None
    then: Callable[[Any], None] | None = None  # with the screen pushed, once shown (e.g. open its editor)
    as_json: bool = False  # shown in a JSON editor: control characters as \u escapes


def _transcript(widget_of: Callable[[str], Widget]) -> Callable[[WyckoffApp, ChatScreen, str], None]:
    def show(_app: WyckoffApp, screen: ChatScreen, text: str) -> None:
        screen.transcript.mount(widget_of(text))

    return show


def _tool_call(text: str) -> ToolCallView:
    view = ToolCallView("c1", text, {"command": text})
    view.note(text)
    view.add_hook_line(text, "blocked")
    view.succeed(text, 10, None)
    return view


def _running_tool(text: str) -> ToolCallView:
    view = ToolCallView("c2", "run_shell", {"command": text})
    view.status = "running"
    view.add_output(text)
    return view


def _todos(text: str) -> ToolCallView:
    view = ToolCallView("c3", "todo_write", {})
    view.succeed("", 1, {"todos": [{"content": text, "status": "pending"}]})
    return view


def _task(text: str) -> TaskCallView:
    view = TaskCallView("c4", "task", {"agent": text, "description": text}, lambda *_: None)
    view.succeed(text, 10, {"footer": text})
    return view


def _thinking(text: str) -> ThinkingPane:
    pane = ThinkingPane()
    pane.append(text)
    return pane


def _thought(text: str) -> ThinkingPane:
    pane = ThinkingPane()
    pane.finish(text, 1000)
    pane.set_expanded(True)
    return pane


def _answer(text: str) -> MarkdownStreamView:
    view = MarkdownStreamView(text)
    return view


def _status(_app: WyckoffApp, screen: ChatScreen, text: str) -> None:
    screen.status.model, screen.status.state, screen.status.mcp = text, text, text
    screen.query_one(StatusBar).refresh_status()


def _output(_app: WyckoffApp, screen: ChatScreen, text: str) -> None:
    screen.show_output(ev.CommandOutput("cost", title=text, columns=["model", text], rows=[[text, text]]))
    screen.show_output(ev.CommandOutput("memory", text=text))


def _queued(_app: WyckoffApp, screen: ChatScreen, text: str) -> None:
    screen.queued.append(text)
    screen._show_queue()


def _completion(_app: WyckoffApp, screen: ChatScreen, text: str) -> None:
    screen.completions = lambda _word: [("/x ", text)]  # type: ignore[assignment]
    prompt = screen.query_one("#prompt")
    prompt.completer = screen.completions  # type: ignore[attr-defined]
    prompt.load_text("/x")  # type: ignore[attr-defined]


def _notification(app: WyckoffApp, screen: ChatScreen, text: str) -> None:
    screen.action_find(text)


def _request(text: str, name: str = "run_shell", editable: list[str] | None = None) -> ev.ApprovalRequested:
    return ev.ApprovalRequested(
        "c9",
        name,
        {"command": text, "plan": text, "prompt": text},
        preview={"command": text, "cwd": text, "reason": text, "error": text},
        rule=text,
        editable_fields=editable or [],
    )


def _screen(build: Callable[[str], Screen[Any]]) -> Callable[[WyckoffApp, ChatScreen, str], Screen[Any]]:
    def show(app: WyckoffApp, _screen: ChatScreen, text: str) -> Screen[Any]:
        pushed = build(text)
        app.push_screen(pushed)
        return pushed

    return show


class _Store:
    def __init__(self, text: str) -> None:
        self.text = text

    def list(self, _root: Path) -> list[SessionInfo]:
        when = "2026-12-01T10:00:00"
        return [SessionInfo("20261201-100000-abcd", "/p", "k", when, when, self.text, title=self.text)]


def _setup(text: str) -> SetupScreen:
    needs = SetupNeeds(
        model=text,
        provider="anthropic",
        problem=text,
        have_key=lambda _provider: False,
        save_key=lambda _provider, _key: Path("/c/credentials.toml"),
        recheck=lambda: None,
    )
    return SetupScreen(needs)


def _hooks(text: str) -> HookTrustScreen:
    spec = HookSpec(text, text, text, 5.0, Path("/p/.wyckoff/config.toml"), "project config", True)
    return HookTrustScreen([HookFile(Path(f"/p/{text}"), "project config", True, [spec], "d", "new")])


CASES = [
    Case("user message", _transcript(UserMessage)),
    Case("notice", _transcript(lambda text: NoticeLine("warning", text))),
    Case("tool call header, note, hook line and result", _transcript(_tool_call)),
    Case("running tool output", _transcript(_running_tool)),
    Case("todo checklist", _transcript(_todos)),
    Case("task widget", _transcript(_task)),
    Case("live thinking", _transcript(_thinking)),
    Case("finished thinking", _transcript(_thought)),
    Case("answer", _transcript(_answer)),
    Case("status bar: model, state, MCP", _status),
    Case("command output table and text", _output),
    Case("queued message", _queued),
    Case("completion menu", _completion),
    Case("find notification", _notification),
    Case("approval dialog", _screen(lambda text: ApprovalScreen(_request(text), pause=0))),
    Case(
        "approval dialog, editing the command",
        _screen(lambda text: ApprovalScreen(_request(text, editable=["command"]), pause=0)),
        then=lambda dialog: dialog.action_choose("edit"),
        as_json=True,
    ),
    Case("plan dialog", _screen(lambda text: PlanApprovalScreen(_request(text, "exit_plan"), pause=0))),
    Case("hook trust dialog", _screen(_hooks)),
    Case("MCP trust dialog", _screen(McpTrustScreen)),
    Case("rewind picker", _screen(lambda text: RewindPickerScreen([RewindPoint("m1", text, None)]))),
    Case("restore preview", _screen(lambda text: RestorePreviewScreen(text, text))),
    Case("diff screen", _screen(lambda text: DiffScreen(f"+{text}", title=text))),
    Case("session picker", _screen(lambda text: SessionPicker(_Store(text), Path("/p")))),  # type: ignore[arg-type]
    Case("setup screen", _screen(_setup)),
]

MARKDOWN_CASES = {"answer", "plan dialog"}  # Markdown: brackets and text stay, words may reflow


async def _show_everywhere(root: Path, text: str) -> None:
    app, _ = make_app(root, [], [])
    async with app.run_test(size=(200, 60)) as pilot:
        screen = chat(app)
        for case in CASES:
            pushed = case.show(app, screen, text)
            await _painted(pilot)
            if case.then is not None:
                case.then(pushed)
                await _painted(pilot)
            shown = shown_text(app.screen)
            if pushed is None and case.name == "find notification":
                shown += "\n" + "\n".join(str(n.message) for n in app._notifications)
            assert not CONTROL.search(shown.replace("\n", "")), (case.name, text, shown)
            # shown with its control characters visible; a carriage return may also be
            # taken as the whitespace it is (a one-line summary joins the words)
            forms = [squash(visible(text)), squash(visible(text.replace("\r", " ")))]
            if case.as_json:
                forms.append(squash(json_text(text)[1:-1]))
            assert any(form in squash(shown) for form in forms), (case.name, text, shown)
            if pushed is not None:
                app.pop_screen()
                await _painted(pilot)
            await screen.transcript.remove_children()
        assert app.is_running


async def _painted(pilot: Pilot[None]) -> None:
    for _ in range(3):
        await pilot.pause()


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=texts)
@example(text="[/bold] fix the test")
@example(text="[FIX] \x1b[31m [link=https://x.example] \x1b]52;c;aGk=\x07 \r [@click=app.quit] [b]x[/b]")
def test_every_widget_shows_markup_and_escapes_literally(tmp_path: Path, text: str) -> None:
    asyncio.run(_show_everywhere(tmp_path, text))
