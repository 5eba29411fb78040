"""The approval dialog: typing never answers it, its choices stay on screen, calls
are edited field by field, and "always" is confirmed, shown and kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static, TextArea

from tests.tui.support import make_app
from tests.tui.test_chat_flows import chat, keys_work, send, settle, shell_tool, wait_for_screen
from tests.waiting import until
from wyckoff_cli.storage.permissions import list_rules
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tui import typing_guard
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.widgets.prompt_input import PromptInput
from wyckoff_cli.tui.widgets.tool_call import ToolCallView, plain_text

SIZE = (100, 40)
HUMAN_GAP = 0.12  # ~8 keys a second, a brisk typist (the pace of the keys, not a wait)


def saved_rules(root: Path) -> list[str]:
    return [r.rule for r in list_rules(root) if r.kind == "allow"]


async def past_pause(pilot: Pilot[None]) -> None:
    """Wait until the dialog's keys work (the real typing pause: these tests type)."""
    assert typing_guard.PAUSE_SECONDS == 1.0
    await until(pilot, lambda: keys_work(pilot.app), what="the dialog's keys to work (past its typing pause)")


async def test_a_sentence_typed_across_the_dialogs_appearance_goes_to_the_prompt(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    # the call arrives while the person is still typing their next message
    rounds = [
        [{"sleep": 0.6}, {"tool_call": {"name": "run_shell", "args": {"command": "ls"}}}],
        {"text": "ok"},
    ]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    sentence = "also check the README, then edit 1 2 3 4 yes"
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "look around")
        saw_dialog_paused = False
        for key in sentence:
            await pilot.press("space" if key == " " else "comma" if key == "," else key)
            await pilot.pause(HUMAN_GAP)
            modal = pilot.app.screen
            if isinstance(modal, ApprovalScreen):
                saw_dialog_paused = saw_dialog_paused or modal.query_one("#paused", Static).display
        modal = pilot.app.screen
        assert isinstance(modal, ApprovalScreen), "the dialog must still be waiting"
        assert saw_dialog_paused, "the dialog said its keys were paused"
        assert ran == [] and saved_rules(tmp_path) == []
        assert not modal.has_class("-editing") and not modal.has_class("-feedback")
        assert screen.query_one(PromptInput).text == sentence  # every key reached the prompt
        # once the person stops typing, the dialog's keys work
        await past_pause(pilot)
        assert not modal.query_one("#paused", Static).display
        await pilot.press("y")
        await settle(pilot, screen)
        assert ran == [{"command": "ls"}] and saved_rules(tmp_path) == []


async def test_a_letter_never_saves_an_always_rule_on_its_own(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    rounds = [
        {"tool_calls": [{"name": "run_shell", "args": {"command": "ls"}}]},
        {"tool_calls": [{"name": "run_shell", "args": {"command": "make"}}]},
        {"text": "ok"},
    ]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "go")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("a")
        await pilot.pause()
        choices = modal.query_one(OptionList)
        assert pilot.app.screen is modal and ran == [] and saved_rules(tmp_path) == []
        assert choices.highlighted == choices.get_option_index("always")
        await pilot.press("y")  # another choice instead: allowed once, nothing saved
        first = modal
        modal = await until(
            pilot,
            lambda: (
                pilot.app.screen
                if isinstance(pilot.app.screen, ApprovalScreen) and pilot.app.screen is not first
                else None
            ),
            what="the second call's dialog",
        )
        assert ran == [{"command": "ls"}] and saved_rules(tmp_path) == []
        await past_pause(pilot)
        await pilot.press("2", "enter")  # the digit, then Enter: saved
        await settle(pilot, screen)
        assert saved_rules(tmp_path) == ["run_shell(make)"]


async def test_after_the_pause_other_letters_are_typing_and_pause_again(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    rounds = [{"tool_calls": [{"name": "run_shell", "args": {"command": "ls"}}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "go")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("h", "y")  # "h" is typing: the "y" right after goes to the prompt too
        await until(pilot, lambda: screen.query_one(PromptInput).text == "hy")
        assert pilot.app.screen is modal and ran == []
        assert screen.query_one(PromptInput).text == "hy"
        await pilot.press("escape")
        await settle(pilot, screen)
        assert ran == []


def long_write(tmp_path: Path) -> list[Any]:
    (tmp_path / "notes.txt").write_text("".join(f"old line {n}\n" for n in range(45)))
    content = "".join(f"new line {n}\n" for n in range(45))
    return [
        {"tool_calls": [{"name": "write_file", "args": {"path": "notes.txt", "content": content}}]},
        {"text": "ok"},
    ]


async def test_choices_stay_on_screen_and_the_preview_scrolls_at_80x24(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, long_write(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "rewrite notes")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await until(pilot, lambda: modal.query_one("#preview").max_scroll_y > 0)  # laid out
        choices = modal.query_one(OptionList)
        assert choices.region.bottom <= 24 and choices.region.height >= 4
        preview = modal.query_one("#preview")
        assert preview.max_scroll_y > 0  # the 91-line diff scrolls
        await past_pause(pilot)
        await pilot.press("pagedown")
        await until(pilot, lambda: preview.scroll_y > 0)
        assert preview.scroll_y > 0 and choices.has_focus  # no Tab needed
        await pilot.press("end")
        await until(pilot, lambda: preview.scroll_y == preview.max_scroll_y)
        assert preview.scroll_y == preview.max_scroll_y
        await pilot.press("home")
        await until(pilot, lambda: preview.scroll_y == 0)
        assert preview.scroll_y == 0
        await pilot.press("escape")
        await settle(pilot, chat(app))


async def test_a_command_is_edited_in_a_one_line_input(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    rounds = [{"tool_calls": [{"name": "run_shell", "args": {"command": "pytest"}}]}, {"text": "ok"}]
    app, provider = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "test")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("e")
        line = modal.query_one("#field-line", Input)
        assert line.has_focus and line.value == "pytest"  # the command itself, not JSON
        await pilot.press("end", *" -x", "home", *"env ", "enter")  # Home/End edit, not scroll
        await settle(pilot, chat(app))
        assert ran == [{"command": "env pytest -x"}]
        assert "env pytest -x" in provider.requests[1].messages[-1].text


async def test_an_edit_shows_its_surrounding_lines_read_only(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(
        "import math\n\n\ndef area(r):\n    return 3.14 * r * r\n\n\nprint(area(2))\n"
    )
    args = {"path": "calc.py", "old": "    return 3.14 * r * r", "new": "    return math.pi * r * r"}
    rounds = [{"tool_calls": [{"name": "edit_file", "args": args}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "use pi")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("e")
        editor = modal.query_one("#field-text", TextArea)
        assert editor.has_focus and editor.text == "    return math.pi * r * r"
        context = [plain_text(s.content) for s in modal.query(".context").results(Static)]
        assert "def area(r):" in context[0] and "print(area(2))" in context[1]
        await pilot.press("end", *"  # pi", "home", *"#")  # Home/End move in the text, not the preview
        assert editor.text == "    #return math.pi * r * r  # pi"  # Home: the first non-blank
        editor.load_text("    return math.tau / 2 * r * r")
        await pilot.press("ctrl+s")
        await settle(pilot, chat(app))
        assert "math.tau / 2" in (tmp_path / "calc.py").read_text()


async def test_json_is_the_fallback_and_keeps_the_field_edit(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    rounds = [{"tool_calls": [{"name": "run_shell", "args": {"command": "pytest"}}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "test")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("e", "end", *" -q", "ctrl+r")
        as_json = modal.query_one("#json", TextArea)
        assert as_json.has_focus and '"pytest -q"' in as_json.text
        await pilot.press("ctrl+s")
        await settle(pilot, chat(app))
        assert ran == [{"command": "pytest -q"}]


async def test_the_outside_workspace_dialog_names_the_path_once_and_saves_nothing(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("secret\n")
    rounds = [{"tool_calls": [{"name": "read_file", "args": {"path": str(outside)}}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "read it")
            modal = await wait_for_screen(pilot, ApprovalScreen)
            shown = plain_text(modal.query_one("#preview Static", Static).content, width=200)
            assert shown.count(str(outside)) == 1
            always = str(modal.query_one(OptionList).get_option("always").prompt)
            assert "nothing is saved" in always
            await past_pause(pilot)
            await pilot.press("a", "enter")
            await settle(pilot, chat(app))
            assert saved_rules(tmp_path) == []
    finally:
        outside.unlink()


async def test_always_is_shown_on_the_call_before_its_output_and_kept_after_clear(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    call = {"tool_calls": [{"name": "run_shell", "args": {"command": "ls"}}]}
    app, _ = make_app(tmp_path, [call, {"text": "ok"}, call, {"text": "again"}], [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "look")
        await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("a", "enter")
        await settle(pilot, screen)
        view = screen.query_one(ToolCallView)
        text = plain_text(view.render_call())
        assert text.index("Always allowed from now on: run_shell(ls)") < text.index("ran ls")
        await send(pilot, "/clear")
        await settle(pilot, screen)
        await pilot.pause()
        await send(pilot, "look again")
        await settle(pilot, screen)
        assert not isinstance(pilot.app.screen, ApprovalScreen)
        assert len(ran) == 2  # the second identical call ran without asking


def test_the_builtin_tools_declare_their_editable_fields() -> None:
    registry = default_registry()
    fields = {name: registry.get(name).editable_fields for name in ("run_shell", "edit_file", "write_file")}  # type: ignore[union-attr]
    assert fields == {"run_shell": ("command",), "edit_file": ("new",), "write_file": ("content",)}
