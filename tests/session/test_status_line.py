"""The status line command (`[ui] status_line`, Claude Code's `statusLine`): real
commands get Claude Code's JSON on stdin, their first line shows in the status bar,
failures show a short mark, and a project's command runs only once trusted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.tui.support import make_app
from tests.waiting import eventually, until
from wyckoff_cli.runtime.hook_config import load_hooks, trust_files
from wyckoff_cli.session.status import StatusModel
from wyckoff_cli.session.status_line import (
    StatusLineRefresher,
    StatusLineSpec,
    find_status_line,
    first_line,
    run_status_command,
    user_status_line,
)
from wyckoff_cli.storage import managed, paths
from wyckoff_cli.tui.widgets.status_bar import render_status

PY = sys.executable
# A status line script as Claude Code's documentation writes them: JSON in, one line out.
SCRIPT = (
    "import json, sys; d = json.load(sys.stdin); "
    "print(f\"[{d['model']['display_name']}] {d['workspace']['current_dir'].rsplit('/', 1)[-1]} "
    "ctx {d['context_window']['used_percentage']:.0f}% ${d['cost']['total_cost_usd']:.2f} {d['permission_mode']}\"); "
    "print('second line is not shown')"
)


def script_command(tmp_path: Path, body: str = SCRIPT) -> str:
    script = tmp_path / "statusline.py"
    script.write_text(body)
    return f"{PY} {script}"


def payload(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "hook_event_name": "Status",
        "session_id": "s1",
        "model": {"id": "anthropic:claude-x", "display_name": "claude-x"},
        "workspace": {"current_dir": "/w/proj", "project_dir": "/w/proj"},
        "cost": {"total_cost_usd": 0.5, "total_duration_ms": 10},
        "context_window": {"used_percentage": 12.0},
        "permission_mode": "default",
    }
    return base | over


async def test_a_real_command_gets_the_json_and_its_first_line_is_kept(tmp_path: Path) -> None:
    spec = StatusLineSpec(script_command(tmp_path), "[ui] status_line")
    text = await run_status_command(spec, json.dumps(payload()), tmp_path)
    assert text == "[claude-x] proj ctx 12% $0.50 default"


@pytest.mark.parametrize(
    ("command", "mark"),
    [("exit 3", "status line: exit 3"), ("echo oops >&2; false", "status line: exit 1"),
     ("no-such-program-here", "status line: exit 127"), ("sleep 30", "status line: timed out after 0.5 s")],
)  # fmt: skip
async def test_a_failing_command_shows_a_short_mark(tmp_path: Path, command: str, mark: str) -> None:
    text = await run_status_command(StatusLineSpec(command, "test", timeout=0.5), "{}", tmp_path)
    assert text == mark


async def test_a_command_that_cannot_start_shows_a_mark(tmp_path: Path) -> None:
    text = await run_status_command(StatusLineSpec("true", "test"), "{}", tmp_path / "gone")
    assert text.startswith("status line: cannot start")


def test_the_first_line_is_shown_literally() -> None:
    assert first_line(b"\n\x1b[31mred\x1b[0m \x07text\x1b]8;;http://x\x07\nmore") == "red text"
    assert first_line(b"") == "" and len(first_line(b"x" * 500)) == 200


async def test_it_runs_again_only_when_its_input_changes(tmp_path: Path) -> None:
    spec = StatusLineSpec(script_command(tmp_path), "[ui] status_line")
    shown: list[str] = []
    refresher = StatusLineRefresher(lambda: spec, tmp_path, shown.append, min_interval=0.05)
    refresher.changed(payload())
    await eventually(lambda: shown == ["[claude-x] proj ctx 12% $0.50 default"])
    refresher.changed(payload(cost={"total_cost_usd": 0.5, "total_duration_ms": 99_999}))  # only time
    refresher.changed(payload())
    assert refresher.runs == 1
    refresher.changed(payload(permission_mode="plan"))
    await eventually(lambda: shown[-1].endswith(" plan"))
    assert refresher.runs == 2
    await refresher.aclose()


async def test_changes_in_a_burst_run_it_at_most_twice(tmp_path: Path) -> None:
    spec = StatusLineSpec(script_command(tmp_path), "[ui] status_line")
    shown: list[str] = []
    refresher = StatusLineRefresher(lambda: spec, tmp_path, shown.append)  # twice a second at most
    for percent in range(1, 21):
        refresher.changed(payload(context_window={"used_percentage": float(percent)}))
    await eventually(lambda: shown and shown[-1] == "[claude-x] proj ctx 20% $0.50 default")
    assert refresher.runs <= 2  # the first change, then the last of the burst
    await refresher.aclose()


def _claude_settings(folder: Path, command: str, name: str = "settings.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps({"statusLine": {"type": "command", "command": command, "padding": 0}}))
    return path


def test_a_project_status_line_runs_only_once_trusted(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    _claude_settings(root / ".claude", "echo project")
    hooks = load_hooks(root)
    assert find_status_line("", hooks) is None
    assert [f.source for f in hooks.needing_trust()] == [".claude/settings.json"]
    assert [s.command for f in hooks.needing_trust() for s in f.specs] == [
        "echo project"
    ]  # shown before trust
    trust_files(hooks.needing_trust())
    found = find_status_line("", load_hooks(root))
    assert found is not None and (found.command, found.source) == ("echo project", ".claude/settings.json")
    _claude_settings(root / ".claude", "echo changed")  # a changed command asks again
    assert find_status_line("", load_hooks(root)) is None


def test_where_the_command_comes_from(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    claude_home = paths.claude_home()
    assert claude_home is not None
    _claude_settings(claude_home, "echo home")
    found = find_status_line("", load_hooks(root))
    assert found is not None and found.command == "echo home"  # the user's own: no trust needed
    _claude_settings(root / ".claude", "echo local", "settings.local.json")
    trust_files(load_hooks(root).needing_trust())
    found = find_status_line("", load_hooks(root))
    assert found is not None and found.command == "echo local"
    found = find_status_line("echo mine", load_hooks(root))
    assert found is not None and (found.command, found.source) == ("echo mine", "[ui] status_line")


def test_only_the_users_own_config_sets_ui_status_line(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    project = paths.project_config_file(root)
    project.parent.mkdir(parents=True)
    project.write_text('[ui]\nstatus_line = "echo planted"\n')
    assert user_status_line() == ""
    paths.config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.config_file().write_text('[ui]\nstatus_line = "echo mine"\n')
    assert user_status_line() == "echo mine"
    managed.MANAGED_PATH.parent.mkdir(parents=True, exist_ok=True)
    managed.MANAGED_PATH.write_text("allow_hooks = false\n")
    assert user_status_line() == ""


def test_a_bad_status_line_entry_is_a_problem_not_an_error(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(json.dumps({"statusLine": {"type": "static"}}))
    hooks = load_hooks(root)
    assert any("statusLine must be" in p for p in hooks.problems)
    assert not any("does not use" in p for p in hooks.problems)


async def test_the_status_bar_shows_the_commands_line(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    body = f"import io, sys; data = sys.stdin.read(); open({str(seen)!r}, 'w').write(data)\n"
    body += "sys.stdin = io.StringIO(data)\n" + SCRIPT
    paths.config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.config_file().write_text(f"[ui]\nstatus_line = {json.dumps(script_command(tmp_path, body))}\n")
    root = tmp_path / "ws"
    root.mkdir()
    app, _ = make_app(root, [], [])
    async with app.run_test(size=(160, 40)) as pilot:
        status: StatusModel = app.screen.status  # type: ignore[attr-defined]
        await until(pilot, lambda: "[test] ws ctx 0% $0.00 default" in render_status(status, 300).plain)
        await pilot.press("shift+tab")
        await until(pilot, lambda: status.custom_line.endswith(" plan"))
    data = json.loads(seen.read_text())
    assert data["hook_event_name"] == "Status" and data["model"]["id"] == "scripted:test"
    assert data["workspace"] == {"current_dir": str(root), "project_dir": str(root)}
    assert {"session_id", "transcript_path", "cwd", "version", "cost", "context_window"} <= set(data)
    assert data["context_window"]["context_window_size"] > 0


async def test_a_failing_command_shows_a_mark_in_the_bar(tmp_path: Path) -> None:
    paths.config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.config_file().write_text('[ui]\nstatus_line = "exit 2"\n')
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=(160, 40)) as pilot:
        status: StatusModel = app.screen.status  # type: ignore[attr-defined]
        await until(pilot, lambda: "status line: exit 2" in render_status(status, 300).plain)
