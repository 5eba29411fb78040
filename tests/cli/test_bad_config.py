"""Bad configuration through the real entry point: every case is one line on stderr
naming the file, the key and the allowed range, and exit status 2 (never a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.storage import paths

RANGE_CASES = [
    # (TOML text, key named, allowed range named)
    ("stream_idle_timeout = 0\n", "stream_idle_timeout", "greater than 0 and at most 86,400"),
    ("stream_idle_timeout = -5\n", "stream_idle_timeout", "greater than 0 and at most 86,400"),
    ("stream_idle_timeout = nan\n", "stream_idle_timeout", "a finite number greater than 0"),
    ("stream_idle_timeout = inf\n", "stream_idle_timeout", "a finite number greater than 0"),
    ("stream_idle_timeout = -inf\n", "stream_idle_timeout", "a finite number greater than 0"),
    ("max_tool_rounds = 0\n", "max_tool_rounds", "an integer at least 1 and at most 10,000"),
    ("max_tool_rounds = -3\n", "max_tool_rounds", "an integer at least 1 and at most 10,000"),
    ("fallback_cooldown = -1\n", "fallback_cooldown", "at least 0 and at most 86,400"),
    ("fallback_cooldown = nan\n", "fallback_cooldown", "a finite number at least 0"),
    ("[context]\nreserve_tokens = -1\n", "context.reserve_tokens", "an integer at least 0"),
    (
        '[model_overrides."openai:gpt-5"]\ncontext_window = 0\n',
        "model_overrides.openai:gpt-5.context_window",
        "an integer at least 1 and at most 100,000,000",
    ),
    ('[models.x]\nprovider = "openai"\nmodel = "m"\ntemperature = 9\n', "models.x.temperature", "at most 2"),
    ('[models.x]\nprovider = "openai"\nmodel = "m"\nmax_tokens = 0\n', "models.x.max_tokens", "at least 1"),
]

READ_CASES = [
    # (file bytes, what the message says)
    (b'model = "a\xff\xfeb"\n', "line 1: not UTF-8 text (byte 0xff at offset 10)"),
    (b"\xef\xbb\xbfmax_tool_rounds = 3\n", "byte-order mark (BOM)"),
    (b"fallbacks = " + b"[" * 3000 + b"]" * 3000 + b"\n", "nested 3000 levels deep; the limit is 32"),
    (b"x = " + b"{a = " * 3000 + b"1" + b"}" * 3000 + b"\n", "nested 3000 levels deep; the limit is 32"),
    (b"model = \n", "invalid TOML"),
]


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(("text", "key", "allowed"), RANGE_CASES)
@pytest.mark.parametrize("command", [["config", "show"], ["run", "--model", "scripted:none.json", "hi"]])
def test_out_of_range_values_in_the_file(
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    key: str,
    allowed: str,
    command: list[str],
) -> None:
    path = paths.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    monkeypatch.chdir(workspace)
    assert main(command) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"wyckoff: {path}, line ")
    assert f"{key} must be " in line and allowed in line


SET_CASES = [
    # (settings made first, key, value typed, allowed range named)
    ([], "stream_idle_timeout", "0", "greater than 0 and at most 86,400"),
    ([], "stream_idle_timeout", "-5", "greater than 0 and at most 86,400"),
    ([], "stream_idle_timeout", "nan", "a finite number greater than 0"),
    ([], "stream_idle_timeout", "inf", "a finite number greater than 0"),
    ([], "stream_idle_timeout", "-inf", "a finite number greater than 0"),
    ([], "max_tool_rounds", "0", "an integer at least 1 and at most 10,000"),
    ([], "max_tool_rounds", "-3", "an integer at least 1 and at most 10,000"),
    ([], "fallback_cooldown", "-1", "at least 0 and at most 86,400"),
    ([], "context.reserve_tokens", "-1", "an integer at least 0"),
    (
        [],
        'model_overrides."openai:gpt-5".context_window',
        "0",
        "an integer at least 1 and at most 100,000,000",
    ),
    ([("models.x.provider", "openai"), ("models.x.model", "m")], "models.x.top_p", "1.5", "at most 1"),
]


@pytest.mark.parametrize(("before", "key", "value", "allowed"), SET_CASES)
def test_out_of_range_values_through_config_set(
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    before: list[tuple[str, str]],
    key: str,
    value: str,
    allowed: str,
) -> None:
    monkeypatch.chdir(workspace)
    assert main(["config", "set", "model", "openai:gpt-5"]) == 0
    if before:  # an alias is only valid whole: write its first part directly
        text = "".join(f'{k.split(".")[-1]} = "{v}"\n' for k, v in before)
        paths.config_file().write_text('model = "openai:gpt-5"\n[models.x]\n' + text)
    saved = paths.config_file().read_text()
    capsys.readouterr()
    assert main(["config", "set", key, "--", value]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"wyckoff: not saved: {paths.config_file()}")
    named = key.replace('"', "")
    assert f"{named} must be " in line and allowed in line
    assert paths.config_file().read_text() == saved  # left untouched


@pytest.mark.parametrize(("data", "message"), READ_CASES)
def test_unreadable_config_files(
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    data: bytes,
    message: str,
) -> None:
    path = paths.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    monkeypatch.chdir(workspace)
    assert main(["config", "show"]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"wyckoff: {path}") and message in line


def test_the_project_file_is_named_too(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = workspace / ".wyckoff" / "config.toml"
    project.write_text("\n\nmax_tool_rounds = 0\n")
    monkeypatch.chdir(workspace)
    assert main(["config", "show"]) == 2
    assert one_error_line(capsys) == (
        f"wyckoff: {project}, line 3: max_tool_rounds must be an integer at least 1 and at most 10,000, got 0"
    )
