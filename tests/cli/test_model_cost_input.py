"""`wyckoff model cost` as people type it (issue 28): a mistyped catalogue model is
refused with "did you mean" unless `--new` says it is a new model, and context windows
are read as people write them (`32k`, `32,768`, `1m`), junk refused clearly."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.cli.model_figures import parse_token_count
from wyckoff_cli.storage import paths

Capture = pytest.CaptureFixture[str]


def model(*args: str) -> int:
    return main(["model", *args])


def saved() -> dict[str, Any]:
    path = paths.config_file()
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("anthropic:claude-sonet-4-5", "anthropic:claude-sonnet-4-5"),
        ("anthropic:claud-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
        ("openai:gpt-5.l", "openai:gpt-5.1"),
        ("gemini:gemini-2.5-flsh", "gemini:gemini-2.5-flash"),
    ],
)
def test_a_mistyped_model_is_refused_with_did_you_mean(capsys: Capture, typed: str, meant: str) -> None:
    assert model("cost", typed, "--context-window", "200k") == 2
    err = capsys.readouterr().err
    assert f"{typed} is not in the catalogue: did you mean" in err and meant in err
    assert "pass --new" in err and "Nothing was saved" in err and "Traceback" not in err
    assert saved() == {}


def test_new_saves_the_unknown_model_anyway(capsys: Capture) -> None:
    assert model("cost", "anthropic:claude-sonet-4-5", "--context-window", "200k", "--new") == 0
    assert "Saved for anthropic:claude-sonet-4-5" in capsys.readouterr().out
    assert saved()["model_overrides"]["anthropic:claude-sonet-4-5"] == {"context_window": 200_000}


@pytest.mark.parametrize("local", ["ollama:qwen3:8b", "openai:my-llama", "lmstudio:my-finetune"])
def test_a_genuinely_new_local_model_saves_without_a_flag(capsys: Capture, local: str) -> None:
    assert model("cost", local, "--context-window", "32k") == 0
    assert f"Saved for {local}" in capsys.readouterr().out
    assert saved()["model_overrides"][local] == {"context_window": 32_000}


def test_showing_and_resetting_a_mistyped_model_need_no_flag(capsys: Capture) -> None:
    assert model("cost", "anthropic:claude-sonet-4-5", "--context-window", "200000", "--new") == 0
    assert model("cost", "anthropic:claude-sonet-4-5") == 0
    assert model("cost", "anthropic:claude-sonet-4-5", "--reset") == 0
    assert "Removed your figures for anthropic:claude-sonet-4-5" in capsys.readouterr().out
    assert saved().get("model_overrides") is None


@pytest.mark.parametrize(
    ("typed", "tokens"),
    [
        ("32768", 32_768),
        ("32,768", 32_768),
        ("32_768", 32_768),
        ("1,048,576", 1_048_576),
        ("32k", 32_000),
        ("32K", 32_000),
        ("128k", 128_000),
        ("1m", 1_000_000),
        ("1M", 1_000_000),
        ("1.5m", 1_500_000),
        (" 200k ", 200_000),
    ],
)
def test_context_windows_as_people_type_them(capsys: Capture, typed: str, tokens: int) -> None:
    assert parse_token_count(typed) == tokens
    assert model("cost", "openai:gpt-5.1", "--context-window", typed) == 0
    assert saved()["model_overrides"]["openai:gpt-5.1"]["context_window"] == tokens
    assert f"-> {tokens:,}" in capsys.readouterr().out


@pytest.mark.parametrize(
    "junk",
    ["32kb", "1e6", "-32k", "32,76", "3,2768", "32_768,000", "1.5", "k", "32 k tokens", "lots", "0x8000"],
)
def test_junk_windows_are_refused_clearly(capsys: Capture, junk: str) -> None:
    assert parse_token_count(junk) is None
    assert model("cost", "openai:gpt-5.1", f"--context-window={junk}") == 2
    err = capsys.readouterr().err
    assert err.startswith("wyckoff: --context-window must be a positive integer (tokens)")
    assert repr(junk) in err and "32k or 1m" in err and "Traceback" not in err
    assert saved() == {}
