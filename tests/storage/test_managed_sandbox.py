"""Managed `sandbox = "required"` and `disable_yolo` as the user sees them: commands
never run unsandboxed, the status bar and Shift+Tab never offer yolo, and `config show
--origin` names the policy file for what it overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import make_app, make_controller
from wyckoff_cli.cli.main import main
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.shell import shell_settings
from wyckoff_cli.storage import managed, paths
from wyckoff_cli.storage.config import Config
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.permissions import sandbox
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy
from wyckoff_cli.tools.shell import make_shell_tools
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.widgets.status_bar import render_status

from ..tools.conftest import run_tool

WHY_NOT = sandbox.probe()
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"the sandbox cannot start here: {WHY_NOT}")


def write_policy(text: str) -> Path:
    path = managed.MANAGED_PATH  # the suite points it at a temporary file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "ws"
    root.mkdir()
    return ToolContext(workspace=root.resolve(), call_id="c1", results_dir=tmp_path / "results")


def _no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine where bubblewrap cannot start."""
    monkeypatch.setattr(sandbox, "probe", lambda bwrap=None: "user namespaces are not available (test)")


@needs_sandbox
@pytest.mark.parametrize("asked", ["config", "flag"])
async def test_required_sandbox_overrides_off(ctx: ToolContext, asked: str) -> None:
    path = write_policy('sandbox = "required"\n')
    config = Config()
    if asked == "config":
        config.shell.sandbox = "off"
    settings = shell_settings(config, ctx.workspace, "off" if asked == "flag" else None)
    assert settings.sandbox == "workspace-write" and settings.required_by
    assert f'[shell] sandbox = "off" is overridden: the managed policy {path} requires the sandbox' in (
        settings.notice
    )
    tool, _, _ = make_shell_tools(settings)
    outcome = await run_tool(tool, ctx, command=f"echo x > {paths.config_dir()}/planted; echo ran")
    assert "ran" in outcome.text and not (paths.config_dir() / "planted").exists()


@pytest.mark.parametrize("available", [True, False])
async def test_unsandboxed_is_refused_naming_the_policy(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, available: bool
) -> None:
    if not available:
        _no_sandbox(monkeypatch)
    elif WHY_NOT is not None:
        pytest.skip(f"the sandbox cannot start here: {WHY_NOT}")
    path = write_policy('sandbox = "required"\n')
    settings = shell_settings(Config(), ctx.workspace)
    tool, _, _ = make_shell_tools(settings)
    marker = ctx.workspace / "ran"
    for mode in ("default", "auto", "yolo"):
        verdict = ApprovalPolicy(mode=mode, allow=["run_shell"]).evaluate(
            tool, {"command": f"touch {marker}", "unsandboxed": True}, ctx
        )
        assert verdict.action == "deny" and str(path) in verdict.reason, verdict
    with pytest.raises(ToolError, match=r"`unsandboxed: true` is refused: the managed policy .* requires"):
        await tool.run({"command": f"touch {marker}", "unsandboxed": True}, ctx)
    assert not marker.exists()


async def test_without_a_sandbox_every_command_is_refused_saying_so(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_sandbox(monkeypatch)
    path = write_policy('sandbox = "required"\n')
    settings = shell_settings(Config(), ctx.workspace)
    assert settings.sandbox == "off"
    assert settings.notice.startswith(f"shell commands are refused: the managed policy {path} requires")
    assert (
        "user namespaces are not available" in settings.notice and "with your rights" not in settings.notice
    )
    tool, _, _ = make_shell_tools(settings)
    marker = ctx.workspace / "ran"
    verdict = ApprovalPolicy(mode="yolo").evaluate(tool, {"command": f"touch {marker}"}, ctx)
    assert verdict.action == "deny" and "the sandbox cannot start here" in verdict.reason
    for args in ({"command": f"touch {marker}"}, {"command": f"touch {marker}", "background": True}):
        with pytest.raises(ToolError, match="commands are refused: the managed policy"):
            await tool.run(args, ctx)
    assert not marker.exists()


async def test_without_a_policy_an_unstartable_sandbox_still_runs_commands(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_sandbox(monkeypatch)
    settings = shell_settings(Config(), ctx.workspace)
    assert settings.sandbox == "off" and not settings.required_by
    tool, _, _ = make_shell_tools(settings)
    outcome = await run_tool(tool, ctx, command="echo still-runs")
    assert "still-runs" in outcome.text


@needs_sandbox
async def test_an_editors_terminal_is_not_used_when_the_sandbox_is_required(ctx: ToolContext) -> None:
    write_policy('sandbox = "required"\n')

    class Terminal:
        async def run(self, *args: object) -> None:
            raise AssertionError("the editor's terminal is no sandbox")

    ctx.host_terminal = Terminal()  # type: ignore[assignment]
    tool, _, _ = make_shell_tools(shell_settings(Config(), ctx.workspace))
    outcome = await run_tool(tool, ctx, command="echo in-sandbox")
    assert "in-sandbox" in outcome.text


def test_disable_yolo_starts_in_default_and_never_offers_yolo(tmp_path: Path) -> None:
    path = write_policy("disable_yolo = true\n")
    controller, _ = make_controller(tmp_path, [])  # asks for default
    assert controller.mode == "default" and controller.mode_notice == ""
    from wyckoff_cli.session.controller import ChatController

    started = ChatController(controller.builder, model="scripted:test", mode="yolo")
    assert started.mode == "default" and started.status.mode == "default"
    assert started.mode_notice == (
        f"yolo mode is disabled by the managed policy {path}: the session starts in default mode"
    )
    started.handle_now(rq.SetMode("auto"))
    assert [e.mode for e in started.handle_now(rq.CycleMode()) if isinstance(e, ev.ModeChanged)] == [
        "default"
    ]
    refused = started.handle_now(rq.SetMode("yolo"))
    assert any(isinstance(e, ev.Notice) and e.level == "error" and str(path) in e.message for e in refused)
    assert started.mode == "default"
    listed = " ".join(e.message for e in started.handle_now(rq.SetMode(None)) if isinstance(e, ev.Notice))
    assert "auto" in listed and "yolo" not in listed


def test_without_the_policy_yolo_is_offered(tmp_path: Path) -> None:
    controller, _ = make_controller(tmp_path, [])
    controller.handle_now(rq.SetMode("auto"))
    assert [e.mode for e in controller.handle_now(rq.CycleMode()) if isinstance(e, ev.ModeChanged)] == [
        "yolo"
    ]


async def test_the_status_bar_and_shift_tab_never_show_yolo(tmp_path: Path) -> None:
    write_policy("disable_yolo = true\n")
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=(100, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        seen = []
        for _ in range(5):
            await pilot.press("shift+tab")
            seen.append(screen.status.mode)
            assert "yolo" not in render_status(screen.status, 200).plain
        assert seen == ["plan", "auto-edit", "auto", "default", "plan"]


def test_config_show_origin_names_the_policy_for_what_it_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_policy('sandbox = "required"\ndisable_yolo = true\n')
    user = paths.config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('permission_mode = "yolo"\n[shell]\nsandbox = "off"\n')
    monkeypatch.chdir(tmp_path)
    assert main(["config", "show", "--origin"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f'managed.sandbox = "required"  # {path} (managed policy: wins)' in lines
    assert (
        f'shell.sandbox = "off"  # {user}; overridden by the managed policy {path} (sandbox = "required")'
        in lines
    )
    assert (
        f'permission_mode = "yolo"  # {user}; overridden by the managed policy {path} (disable_yolo = true)'
        in lines
    )
