"""Shell safety end to end: `wyckoff run` with the scripted provider, in every mode,
checking on disk that no file appears (issue 22's representative subset)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.tools.permissions.sandbox import probe


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / ".git").mkdir()  # a project root
    return Path(os.path.realpath(folder))


CONTROL = ("write_file", {"path": "control.txt", "content": "ran"})


def run(
    tmp_path: Path, ws: Path, calls: list[tuple[str, dict[str, Any]]], *extra: str
) -> tuple[int, list[str]]:
    """Run the calls, then a control call that must succeed (proving the run got that
    far); returns the exit code and the tool results in call order."""
    calls = [*calls, CONTROL]
    # a refused call gets one more round (the model is told), hence two closing texts
    rounds: list[Any] = [
        {"tool_calls": [{"name": n, "args": a} for n, a in calls]},
        {"text": "done"},
        {"text": "done"},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rounds": rounds}))
    out = tmp_path / "out.json"
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["run", "-m", f"scripted:{script}", "--cwd", str(ws), "--output-format", "json",
                     "--no-session", "--allow", "write_file(control.txt)", *extra, "go"])  # fmt: skip
    out.write_text(buffer.getvalue())
    if code == 2:
        return code, []
    result = json.loads(buffer.getvalue().splitlines()[-1])
    texts = [e.get("result") or e.get("error") or "" for e in result["events"]
             if e["type"] in ("tool_result", "tool_error")]  # fmt: skip
    assert (ws / "control.txt").read_text() == "ran", texts
    assert len(texts) == len(calls), texts  # every call answered: no table passes by running nothing
    return code, texts


TOUCH_FORMS = [
    "touch A", "FOO=1 touch A", "env touch A", "command touch A", "\\touch A", "t''ouch A",
    "/usr/bin/touch A", 'bash -c "touch A"', "eval touch A", "echo A | xargs touch", "$(echo touch) A",
]  # fmt: skip


@pytest.mark.parametrize("mode", ["auto-edit", "yolo"])
def test_deny_rule_holds_through_wyckoff_run(tmp_path: Path, ws: Path, mode: str) -> None:
    (ws / ".wyckoff").mkdir()
    (ws / ".wyckoff" / "config.toml").write_text('[permissions]\ndeny = ["run_shell(touch*)"]\n')
    calls = [("run_shell", {"command": c}) for c in TOUCH_FORMS]
    _, results = run(tmp_path, ws, calls, "--permission-mode", mode, "--sandbox", "off")
    assert not (ws / "A").exists()
    assert all("not run" in r.lower() for r in results[:-1]), results


DESTRUCTIVE_FORMS = ['bash -lc "rm -rf ~/wyckoff-e2e-victim"', "timeout 5 rm -rf ~/wyckoff-e2e-victim",
                     "find ~/wyckoff-e2e-victim -delete", "echo ~/wyckoff-e2e-victim | xargs rm -rf"]  # fmt: skip


@pytest.fixture
def victim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"  # a fake HOME: the real one is never touched
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    folder = Path.home() / "wyckoff-e2e-victim"
    folder.mkdir(exist_ok=True)
    (folder / "keep.txt").write_text("keep")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_destructive_commands_are_not_run_in_yolo_without_a_person(
    tmp_path: Path, ws: Path, victim: Path
) -> None:
    calls = [("run_shell", {"command": c}) for c in DESTRUCTIVE_FORMS]
    _, results = run(
        tmp_path, ws, calls, "--permission-mode", "yolo", "--allow", "run_shell", "--sandbox", "off"
    )
    assert (victim / "keep.txt").exists()
    assert all("not run" in r.lower() for r in results[:-1]), results


def test_redirection_outside_is_not_covered_by_an_allow_rule(tmp_path: Path, ws: Path) -> None:
    target = Path(tempfile.mkdtemp(dir="/var/tmp" if Path("/var/tmp").is_dir() else None)) / "out.txt"
    try:
        calls = [("run_shell", {"command": f"echo hi > {target}"})]
        run(tmp_path, ws, calls, "--allow", "run_shell(echo)", "--sandbox", "off")
        assert not target.exists()
    finally:
        shutil.rmtree(target.parent, ignore_errors=True)


@pytest.mark.parametrize("mode", ["auto-edit", "yolo"])
def test_the_model_cannot_grant_itself_permissions(tmp_path: Path, ws: Path, mode: str) -> None:
    calls = [("write_file", {"path": ".wyckoff/config.toml", "content": '[permissions]\nallow = ["run_shell"]\n'}),
             ("write_file", {"path": ".mcp.json", "content": "{}"})]  # fmt: skip
    run(tmp_path, ws, calls, "--permission-mode", mode)
    assert not (ws / ".wyckoff" / "config.toml").exists()
    assert not (ws / ".mcp.json").exists()


def test_a_rule_naming_an_unknown_tool_is_an_error_with_file_and_line(
    tmp_path: Path, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / ".wyckoff").mkdir()
    config = ws / ".wyckoff" / "config.toml"
    config.write_text('[permissions]\n\ndeny = [\n  "Bash(touch:*)",\n  "Shell(touch*)",\n]\n')
    code, _ = run(tmp_path, ws, [("run_shell", {"command": "touch A"})])
    assert code == 2
    err = capsys.readouterr().err
    assert f"{config}, line 5" in err and "Shell(touch*)" in err
    assert not (ws / "A").exists()


def test_claude_code_rules_block(tmp_path: Path, ws: Path) -> None:
    (ws / ".wyckoff").mkdir()
    (ws / ".wyckoff" / "config.toml").write_text('[permissions]\ndeny = ["Bash(touch:*)"]\n')
    run(
        tmp_path, ws, [("run_shell", {"command": "touch A"})], "--permission-mode", "yolo", "--sandbox", "off"
    )
    assert not (ws / "A").exists()


@pytest.mark.skipif(probe() is not None, reason=f"the sandbox cannot start here: {probe()}")
def test_the_sandbox_is_the_boundary_even_in_yolo(tmp_path: Path, ws: Path) -> None:
    target = Path(tempfile.mkdtemp(dir="/var/tmp" if Path("/var/tmp").is_dir() else None))
    try:
        calls = [("run_shell", {"command": f"cp /etc/hostname {target}/copied"}),
                 ("run_shell", {"command": "echo ok > inside.txt"})]  # fmt: skip
        run(tmp_path, ws, calls, "--permission-mode", "yolo")
        assert not (target / "copied").exists()
        assert (ws / "inside.txt").read_text() == "ok\n"
    finally:
        shutil.rmtree(target, ignore_errors=True)


def test_unsandboxed_retry_is_denied_without_a_person(tmp_path: Path, ws: Path) -> None:
    if probe() is not None:
        pytest.skip(f"the sandbox cannot start here: {probe()}")
    target = Path(tempfile.mkdtemp(dir="/var/tmp" if Path("/var/tmp").is_dir() else None))
    try:
        calls = [("run_shell", {"command": f"echo x > {target}/f", "unsandboxed": True})]
        run(tmp_path, ws, calls, "--permission-mode", "yolo", "--allow", "run_shell")
        assert not (target / "f").exists()
    finally:
        shutil.rmtree(target, ignore_errors=True)


def test_sandbox_off_prints_a_notice(tmp_path: Path, ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(tmp_path, ws, [], "--sandbox", "off")
    assert "shell sandbox off" in capsys.readouterr().err


def test_a_project_config_cannot_turn_the_sandbox_off(
    tmp_path: Path, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / ".wyckoff").mkdir()
    (ws / ".wyckoff" / "config.toml").write_text('[shell]\nsandbox = "off"\nnetwork = true\n')
    from wyckoff_cli.session.builder import open_workspace
    from wyckoff_cli.session.shell import shell_settings

    workspace = open_workspace(ws)
    settings = shell_settings(workspace.config, workspace.root)
    assert not settings.network
    assert "may not loosen [shell]" in settings.notice
    if probe() is None:
        assert settings.sandbox == "workspace-write"


def test_config_show_lists_the_variables_removed_from_commands(
    ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ws)
    monkeypatch.setenv("GITHUB_TOKEN", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "y")
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("# removed from shell commands"))
    assert "GITHUB_TOKEN" in line and "AWS_SECRET_ACCESS_KEY" in line


def test_permissions_add_refuses_an_unknown_tool(
    ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ws)
    assert main(["permissions", "add", "Shell(touch*)", "--deny"]) == 2
    assert "names a tool that does not exist" in capsys.readouterr().err
    assert main(["permissions", "add", "Bash(touch:*)", "--deny"]) == 0


# ------------------------------------------------------------ sandbox auto-allow (issue 27)

needs_sandbox = pytest.mark.skipif(probe() is not None, reason=f"the sandbox cannot start here: {probe()}")


def _auto_allow_calls(ws: Path, far: Path) -> list[tuple[str, dict[str, Any]]]:
    (ws / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    import sys

    pytest_line = (
        f"{sys.executable} -m pytest -q -p no:cacheprovider test_ok.py && echo tests-passed > ran.txt"
    )
    return [
        ("run_shell", {"command": pytest_line}),
        ("run_shell", {"command": "curl -s https://example.com > fetched.txt", "network": True}),
        ("run_shell", {"command": f"echo x > {far}/unsandboxed.txt", "unsandboxed": True}),
        ("run_shell", {"command": f"echo x > {far}/outside.txt"}),
        ("run_shell", {"command": "rm -rf ~/wyckoff-e2e-victim"}),
    ]


@pytest.fixture
def far() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(dir="/var/tmp" if Path("/var/tmp").is_dir() else None))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_sandbox
@pytest.mark.parametrize("how", ["config", "mode"])
def test_sandbox_auto_allow_runs_contained_commands_and_refuses_the_rest_headless(
    tmp_path: Path, ws: Path, far: Path, victim: Path, how: str
) -> None:
    from wyckoff_cli.storage import paths

    extra: list[str] = ["--permission-mode", "auto"]
    if how == "config":
        paths.config_file().parent.mkdir(parents=True, exist_ok=True)
        paths.config_file().write_text("[shell]\nauto_allow = true\n")
        extra = []  # default mode
    _, results = run(tmp_path, ws, _auto_allow_calls(ws, far), *extra)
    assert (ws / "ran.txt").read_text() == "tests-passed\n", results
    assert not (ws / "fetched.txt").exists()
    assert not (far / "unsandboxed.txt").exists() and not (far / "outside.txt").exists()
    assert (victim / "keep.txt").exists()
    assert all("not run" in r.lower() for r in results[1:-1]), results


@needs_sandbox
def test_without_auto_allow_default_mode_asks_so_headless_refuses(
    tmp_path: Path, ws: Path, far: Path
) -> None:
    code, results = run(tmp_path, ws, _auto_allow_calls(ws, far)[:1])
    assert not (ws / "ran.txt").exists()
    assert results and "not run" in results[0].lower(), (
        code,
        results,
        (tmp_path / "out.json").read_text()[:3000],
    )


@needs_sandbox
def test_a_project_config_cannot_turn_auto_allow_on(tmp_path: Path, ws: Path, far: Path) -> None:
    (ws / ".wyckoff").mkdir()
    (ws / ".wyckoff" / "config.toml").write_text('[shell]\nauto_allow = true\nallow_unix_sockets = ["/x"]\n')
    _, results = run(tmp_path, ws, _auto_allow_calls(ws, far)[:1])
    assert not (ws / "ran.txt").exists()
    assert "not run" in results[0].lower()


def _escape_calls(far: Path) -> list[tuple[str, dict[str, Any]]]:
    py = "python3 -c"
    hidden = base64.b64encode(f"{far}/bashrc".encode()).decode()
    return [
        ("run_shell", {"command": "mv .git .git-real; printf 'gitdir: /\\n' > .git; true"}),
        # the path is hidden from the rules (the destructive list refuses a visible one), so
        # only the sandbox stands between this write and the file outside
        (
            "run_shell",
            {
                "command": f"{py} \"import base64; open(base64.b64decode('{hidden}').decode(), 'a')"
                ".write('evil')\"; true"
            },
        ),  # fmt: skip
        (
            "run_shell",
            {
                "command": f"{py} \"import os; os.makedirs('.claude/commands', exist_ok=True); "
                "open('.claude/commands/x.md', 'w').write('planted')\"; true"
            },
        ),  # fmt: skip
        ("run_shell", {"command": f"{py} \"open('.mcp.json', 'w').write('{{}}')\"; true"}),
        (
            "run_shell",
            {
                "command": f"{py} \"import os; os.makedirs('.wyckoff', exist_ok=True); "
                "open('.wyckoff/config.toml', 'w').write('x')\"; true"
            },
        ),  # fmt: skip
        ("run_shell", {"command": "cd .git && echo '[core] fsmonitor = ./x' >> config; true"}),
    ]


@needs_sandbox
@pytest.mark.parametrize("mode", ["default+auto_allow", "auto", "yolo"])
def test_sandbox_escapes_fail_through_wyckoff_run(tmp_path: Path, ws: Path, far: Path, mode: str) -> None:
    from wyckoff_cli.storage import paths

    (far / "bashrc").write_text("# mine\n")
    config_before = (ws / ".git").is_dir()
    extra = ["--permission-mode", mode]
    if mode == "default+auto_allow":
        paths.config_file().parent.mkdir(parents=True, exist_ok=True)
        paths.config_file().write_text("[shell]\nauto_allow = true\n")
        extra = []
    _, results = run(tmp_path, ws, _escape_calls(far), *extra)
    ran = [r for r in results[:-1] if "[exit code" in r]
    assert len(ran) == len(results) - 1, results  # all ran, unasked: the sandbox itself stopped them
    assert all("Read-only file system" in r or "Is a directory" in r for r in ran), results
    assert config_before and (ws / ".git").is_dir() and not (ws / ".git-real").exists()
    assert (far / "bashrc").read_text() == "# mine\n"
    for planted in (".claude", ".mcp.json", ".wyckoff"):
        assert not (ws / planted).exists(), planted
    assert not (ws / ".git" / "config").exists() or "fsmonitor" not in (ws / ".git" / "config").read_text()
