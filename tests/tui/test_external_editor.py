"""Ctrl+G: the prompt, or the field being edited in the approval dialog, in the
person's own editor (tui/external_editor.py). The editor is a real program: a small
Python script that edits the file as `EDIT` says and logs what it saw to `EDIT_LOG`."""

from __future__ import annotations

import json
import signal
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static, TextArea

from tests.tui.support import make_app
from tests.tui.test_chat_flows import chat, past_pause, send, settle, shell_tool, wait_for_screen
from tests.waiting import until
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tui.external_editor import EditResult, edit_text, editor_command, suffix_for
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.widgets.entries import NoticeLine
from wyckoff_cli.tui.widgets.prompt_input import PromptInput
from wyckoff_cli.tui.widgets.tool_call import plain_text

SIZE = (100, 30)
EDITOR_SCRIPT = """\
import json, os, stat, sys
path = sys.argv[-1]
mode = stat.S_IMODE(os.stat(path).st_mode)
before = open(path, encoding="utf-8").read()
with open(os.environ["EDIT_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "path": path, "mode": mode, "before": before}) + "\\n")
how, _, text = os.environ.get("EDIT", "append:").partition(":")
text = text.replace("\\\\n", "\\n")
if how == "fail":
    sys.exit(3)
if how == "ctrl-c":  # what Ctrl+C in a cooked terminal does: SIGINT to the app and the editor
    import signal
    os.kill(os.getppid(), signal.SIGINT)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
with open(path, "w", encoding="utf-8") as file:
    file.write({"append": before + text, "replace": text, "empty": ""}[how])
"""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`$EDITOR` is the script (with an extra argument, split like a shell would);
    returns the log it writes."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "fake-editor"
    script.write_text(f"#!{sys.executable}\n{EDITOR_SCRIPT}")
    script.chmod(0o755)
    log = tmp_path / "editor.log"
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{script} --wait")
    monkeypatch.setenv("EDIT_LOG", str(log))
    return log


def runs(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def notices(app: Any) -> list[str]:
    return [
        plain_text(n.render()).strip().removeprefix("ℹ ").removeprefix("⚠ ")
        for n in chat(app).query(NoticeLine)
    ]


# ---------------------------------------------------------------------- the editor itself


def test_the_text_goes_through_a_private_file_that_is_deleted(
    editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDIT", "append:\\nand a second line\\n")
    result = edit_text("first line", suffix=".md")
    assert result.text == "first line\nand a second line"  # the trailing newline an editor adds is dropped
    assert result.message == "Edited in fake-editor."
    [run] = runs(editor)
    assert run["argv"][0] == "--wait" and run["path"].endswith(".md")
    assert run["mode"] == 0o600 and run["before"] == "first line"
    assert not Path(run["path"]).exists()


def test_a_trailing_newline_of_file_content_is_kept(editor: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDIT", "replace:x = 2\\n")
    assert edit_text("x = 1\n", suffix=".py").text == "x = 2\n"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("fail", "fake-editor exited with status 3 — kept your text."),
        ("empty", "The file was left empty — kept your text."),
        ("replace:  \\n\\n", "The file was left empty — kept your text."),
    ],
)
def test_a_failing_editor_or_an_empty_file_keeps_the_text(
    editor: Path, monkeypatch: pytest.MonkeyPatch, edit: str, message: str
) -> None:
    monkeypatch.setenv("EDIT", edit)
    result = edit_text("keep me")
    assert result.text is None and result.message == message
    assert not Path(runs(editor)[0]["path"]).exists()


def test_ctrl_c_in_the_editor_stops_the_editor_not_the_app(
    editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The terminal sends SIGINT to the editor and to Wyckoff: only the editor stops
    (without the guard this test would end in KeyboardInterrupt)."""
    monkeypatch.setenv("EDIT", "ctrl-c")
    before = signal.getsignal(signal.SIGINT)
    assert edit_text("keep me") == EditResult(None, "fake-editor was stopped by SIGINT — kept your text.")
    assert signal.getsignal(signal.SIGINT) is before


def test_no_change_says_so(editor: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDIT", "append:")
    assert edit_text("same") == EditResult("same", "No change in fake-editor.")


def _exe(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_which_editor(tmp_path: Path) -> None:
    _exe(tmp_path, "code")
    _exe(tmp_path, "vim")
    path = str(tmp_path)
    assert editor_command({"VISUAL": "code --wait", "EDITOR": "vim", "PATH": path}) == (
        ["code", "--wait"],
        "",
    )
    assert editor_command({"VISUAL": " ", "EDITOR": "vim -u NONE", "PATH": path}) == (
        ["vim", "-u", "NONE"],
        "",
    )
    argv, problem = editor_command({"EDITOR": "'code --wait", "PATH": path})
    assert argv is None and problem.startswith("$EDITOR is not a valid command line")
    argv, problem = editor_command({"EDITOR": "subl -w", "PATH": path})
    assert argv is None and problem == "$EDITOR names `subl`, which is not installed or not on PATH"
    # nothing set: nano, else vi, else a clear word
    none = (None, "No editor: set $VISUAL or $EDITOR (for example `export EDITOR=nano`)")
    assert editor_command({"PATH": path}) == none
    _exe(tmp_path, "vi")
    assert editor_command({"PATH": path}) == ([str(tmp_path / "vi")], "")
    _exe(tmp_path, "nano")
    assert editor_command({"PATH": path}) == ([str(tmp_path / "nano")], "")


@pytest.mark.parametrize(
    ("path", "suffix"),
    [("calc.py", ".py"), ("src/a.test.ts", ".ts"), ("Makefile", ".txt"), (None, ".txt"), ("x.$(rm)", ".txt")],
)
def test_suffix_for(path: str | None, suffix: str) -> None:
    assert suffix_for(path, ".txt") == suffix


# ---------------------------------------------------------------------- in the prompt


async def test_ctrl_g_edits_the_prompt_in_the_editor(
    tmp_path: Path, editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDIT", "append:\\n- and check the README\\n")
    app, _ = make_app(tmp_path, [{"text": "ok"}], [])
    async with app.run_test(size=SIZE) as pilot:
        prompt = chat(app).query_one(PromptInput)
        prompt.load_text("fix the tests")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert prompt.text == "fix the tests\n- and check the README"
        assert prompt.cursor_location == prompt.document.end and prompt.has_focus
        assert runs(editor)[0]["before"] == "fix the tests"
        assert "Edited in fake-editor." in notices(app)
        monkeypatch.setenv("EDIT", "fail")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert prompt.text == "fix the tests\n- and check the README"
        assert "fake-editor exited with status 3 — kept your text." in notices(app)


async def test_ctrl_g_waits_for_a_running_turn(tmp_path: Path, editor: Path) -> None:
    app, _ = make_app(tmp_path, [[{"sleep": 2}, {"text": "late"}]], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "slow")
        await until(pilot, lambda: screen.busy)
        screen.query_one(PromptInput).load_text("next")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert runs(editor) == []
        # the notice is mounted on a later message: waited for, not assumed after one pause
        await until(
            pilot,
            lambda: any("Ctrl+G opens your editor once the turn has ended" in n for n in notices(app)),
            observe=lambda: notices(app),
        )
        await pilot.press("escape")
        await settle(pilot, screen)


# ---------------------------------------------------------------------- in the approval dialog


async def test_ctrl_g_edits_the_command_and_it_runs_as_edited(
    tmp_path: Path, editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[dict[str, Any]] = []
    monkeypatch.setenv("EDIT", "replace:pytest -x tests/unit\\n")
    rounds = [{"tool_calls": [{"name": "run_shell", "args": {"command": "pytest"}}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "test")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("e", "ctrl+g")
        await pilot.pause()
        line = modal.query_one("#field-line", Input)
        assert line.value == "pytest -x tests/unit" and line.has_focus
        assert line.cursor_position == len(line.value)
        [run] = runs(editor)
        assert run["before"] == "pytest" and run["path"].endswith(".sh")
        assert "Edited in fake-editor." in plain_text(
            modal.query_one("#edit-help", Static).content, width=200
        )
        await pilot.press("enter")
        await settle(pilot, chat(app))
        assert ran == [{"command": "pytest -x tests/unit"}]


async def test_a_command_of_several_lines_comes_back_as_json(
    tmp_path: Path, editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[dict[str, Any]] = []
    monkeypatch.setenv("EDIT", "replace:make build &&\\n  make test\\n")
    rounds = [{"tool_calls": [{"name": "run_shell", "args": {"command": "make"}}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "build")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("e", "ctrl+g")
        await pilot.pause()
        as_json = modal.query_one("#json", TextArea)
        assert as_json.has_focus and json.loads(as_json.text) == {"command": "make build &&\n  make test"}
        await pilot.press("ctrl+s")
        await settle(pilot, chat(app))
        assert ran == [{"command": "make build &&\n  make test"}]


async def test_ctrl_g_edits_a_files_content_with_its_suffix(
    tmp_path: Path, editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDIT", "append:print('two')\\n")
    args = {"path": "hello.py", "content": "print('one')\n"}
    rounds = [{"tool_calls": [{"name": "write_file", "args": args}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "write it")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("e", "ctrl+g")
        await pilot.pause()
        area = modal.query_one("#field-text", TextArea)
        assert area.text == "print('one')\nprint('two')\n" and area.has_focus
        assert runs(editor)[0]["path"].endswith(".py")
        await pilot.press("ctrl+s")
        await settle(pilot, chat(app))
        assert (tmp_path / "hello.py").read_text() == "print('one')\nprint('two')\n"


def counter_tool(ran: list[dict[str, Any]]) -> Tool:
    """A tool without an editable text field: edited as JSON only."""

    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        ran.append(args)
        return "counted"

    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    return Tool("count", "Count.", schema, run, requires_approval=True, kind="other")


async def test_ctrl_g_edits_the_json_and_the_result_is_checked(
    tmp_path: Path, editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[dict[str, Any]] = []
    rounds = [{"tool_calls": [{"name": "count", "args": {"n": 1}}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds, [counter_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "count")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("e")
        monkeypatch.setenv("EDIT", 'replace:{"n": "three"}')
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert runs(editor)[0]["path"].endswith(".json")
        assert json.loads(runs(editor)[0]["before"]) == {"n": 1}
        error = plain_text(modal.query_one("#edit-error", Static).content, width=200)
        assert "three" in error or "integer" in error, error  # checked at once, against the schema
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert ran == [] and isinstance(app.screen, ApprovalScreen)  # and still refused
        monkeypatch.setenv("EDIT", 'replace:{"n": 3}')
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert plain_text(modal.query_one("#edit-error", Static).content).strip() == ""
        await pilot.press("ctrl+s")
        await settle(pilot, chat(app))
        assert ran == [{"n": 3}]


async def test_an_editor_that_fails_keeps_the_field(
    tmp_path: Path, editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDIT", "fail")
    rounds = [{"tool_calls": [{"name": "run_shell", "args": {"command": "pytest"}}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds, [shell_tool([])])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "test")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("e", "ctrl+g")
        await pilot.pause()
        assert modal.query_one("#field-line", Input).value == "pytest"
        error = plain_text(modal.query_one("#edit-error", Static).content, width=200)
        assert error.strip() == "fake-editor exited with status 3 — kept your text."
        await pilot.press("escape", "escape")
        await settle(pilot, chat(app))


async def test_help_lists_ctrl_g(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [{"text": "hi"}], [])
    async with app.run_test(size=(140, 60)) as pilot:
        await send(pilot, "/help")
        await pilot.pause()
        shown = " ".join(
            plain_text(s.content, width=200) for s in chat(app).query(".command-output").results(Static)
        )
        assert "Ctrl+G" in shown and "$VISUAL / $EDITOR" in shown
