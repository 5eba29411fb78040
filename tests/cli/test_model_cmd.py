"""`wyckoff model ...` through the real entry point, against an isolated WYCKOFF_HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.storage import paths

Capture = pytest.CaptureFixture[str]

EXISTING = """\
model = "anthropic:claude-sonnet-4-5"
max_tool_rounds = 7

[permissions]
allow = ["run_shell(pytest*)"]

[models.local]
provider = "openai"
model = "qwen3:8b"
base_url = "http://localhost:11434/v1"
thinking = "off"
"""


@pytest.fixture(autouse=True)
def in_workspace(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(workspace)
    return workspace


def write_config(text: str = EXISTING) -> Path:
    path = paths.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def saved() -> dict[str, Any]:
    return tomllib.loads(paths.config_file().read_text(encoding="utf-8"))


def wyckoff(*args: str) -> int:
    return main(["model", *args])


# --------------------------------------------------------------------------- list


def test_list_shows_configured_models_and_the_catalogue(capsys: Capture) -> None:
    write_config()
    assert wyckoff("fallback", "local", "openai:gpt-5.1") == 0
    capsys.readouterr()
    assert wyckoff("list") == 0
    out = capsys.readouterr().out
    assert "Default model: anthropic:claude-sonnet-4-5" in out
    assert "Fallbacks:     local, openai:gpt-5.1" in out
    assert "catalogue checked 2026-" in out
    local = next(line for line in out.splitlines() if line.strip().startswith("local "))
    assert "openai:qwen3:8b" in local and "131,072" in local and "inferred" in local
    assert "alias, fallback 1" in local
    sonnet = next(
        line for line in out.splitlines() if line.strip().startswith("anthropic:claude-sonnet-4-5 ")
    )
    assert "200,000" in sonnet and "3.00" in sonnet and "15.00" in sonnet and "3.75" in sonnet
    assert "Catalogue (" in out
    for vendor in ("anthropic", "openai", "google", "deepseek", "qwen", "moonshot", "mistral"):
        assert f" {vendor} " in out


def test_list_json_carries_sources_roles_and_prices(capsys: Capture) -> None:
    write_config()
    assert wyckoff("cost", "openai:gpt-5.1", "--context-window", "272000") == 0
    capsys.readouterr()
    assert wyckoff("list", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["default"] == "anthropic:claude-sonnet-4-5" and data["fallbacks"] == []
    configured = {item["name"]: item for item in data["configured"]}
    assert configured["anthropic:claude-sonnet-4-5"]["roles"] == ["default"]
    assert configured["local"]["alias"] is True and configured["local"]["in_catalogue"] is False
    assert configured["local"]["prices"]["input"] is None
    gpt = configured["openai:gpt-5.1"]
    assert gpt["roles"] == ["figures saved"] and gpt["context_window"] == 272_000
    assert gpt["context_window_source"] == "configured" and gpt["price_sources"]["input"] == "catalogue"
    catalogue = {item["model_id"]: item for item in data["catalogue"]}
    assert catalogue["anthropic:claude-sonnet-4-5"]["roles"] == ["default"]
    assert catalogue["gemini:gemini-2.5-pro"]["tiers"][0]["above"] == 200_000
    assert all(item["prices"]["input"] is not None for item in data["catalogue"])


def test_list_works_without_any_config_file(capsys: Capture) -> None:
    assert wyckoff("list") == 0
    assert "Default model: anthropic:claude-sonnet-4-5" in capsys.readouterr().out
    assert not paths.config_file().exists()


# --------------------------------------------------------------------------- cost: showing


def test_cost_shows_window_prices_and_the_worked_example(capsys: Capture) -> None:
    assert wyckoff("cost", "anthropic:claude-sonnet-4-5") == 0
    out = capsys.readouterr().out
    assert "context window   200,000 tokens (catalogue)" in out
    for line in (
        "input          3.00 (catalogue)",
        "output         15.00",
        "cache read     0.30",
        "cache write    3.75",
    ):
        assert line in out
    assert "One turn of 20,000 input and 1,000 output tokens:" in out
    assert "without cache        $0.0750" in out
    assert "with 90% cache hits  $0.0279" in out and "saves $0.0471" in out
    assert "not in the catalogue" not in out


def test_cost_accepts_an_alias_a_bare_name_and_a_dated_id(capsys: Capture) -> None:
    write_config(EXISTING + '\n[models.ds]\nprovider = "openai"\nmodel = "deepseek-chat"\n')
    assert wyckoff("cost", "ds") == 0
    assert "ds (alias of openai:deepseek-chat)" in capsys.readouterr().out
    assert wyckoff("cost", "gpt-5.1") == 0
    assert capsys.readouterr().out.startswith("openai:gpt-5.1\n")
    assert wyckoff("cost", "anthropic:claude-opus-4-1-20250805") == 0
    out = capsys.readouterr().out
    assert "claude-opus-4-1 (anthropic" in out and "matched without the suffix" in out


def test_cost_of_an_unknown_model_says_so_and_which_figure_is_inferred(capsys: Capture) -> None:
    assert wyckoff("cost", "openai:llama-3.3-70b-versatile") == 0
    out = capsys.readouterr().out
    assert "Note: openai:llama-3.3-70b-versatile is not in the catalogue" in out
    assert "131,072 tokens (inferred from the name pattern '*llama-3.[123]*')" in out
    assert "No worked example: the input and output prices are not known." in out
    assert wyckoff("cost", "openai:my-own-model") == 0
    out = capsys.readouterr().out
    assert "65,536 tokens (default: no name pattern matched)" in out
    assert "--context-window N" in out
    assert not paths.config_file().exists()


def test_cost_shows_long_prompt_tiers_and_notes(capsys: Capture) -> None:
    assert wyckoff("cost", "gemini:gemini-2.5-pro") == 0
    assert "prompts above 200,000 tokens: 2.50 / 15.00 / 0.25 / 2.50" in capsys.readouterr().out


# --------------------------------------------------------------------------- cost: saving


def test_cost_flags_save_overrides_and_print_what_changed(capsys: Capture) -> None:
    path = write_config()
    assert (
        wyckoff("cost", "openai:my-llama", "--context-window", "32768", "--input", "0", "--output=0.5") == 0
    )
    out = capsys.readouterr().out
    assert f"Saved for openai:my-llama in {path}:" in out
    assert "context window  65,536 (default) -> 32,768" in out
    assert "input           unknown -> 0.00" in out and "output          unknown -> 0.50" in out
    assert "is not in the catalogue" in out and "--cache-read, --cache-write" in out
    data = saved()
    assert data["model_overrides"]["openai:my-llama"] == {
        "context_window": 32768,
        "input": 0.0,
        "output": 0.5,
    }
    # everything else is kept
    assert data["max_tool_rounds"] == 7 and data["permissions"]["allow"] == ["run_shell(pytest*)"]
    assert data["models"]["local"]["thinking"] == "off"
    assert wyckoff("cost", "openai:my-llama") == 0
    out = capsys.readouterr().out
    assert '32,768 tokens (configured in model_overrides."openai:my-llama")' in out
    assert "without cache        $0.0005" in out


def test_changing_one_figure_keeps_the_others(capsys: Capture) -> None:
    assert wyckoff("cost", "openai:gpt-5.1", "--input", "1.1") == 0
    assert wyckoff("cost", "openai:gpt-5.1", "--cache-write", "2") == 0
    assert wyckoff("cost", "openai:gpt-5.1", "--input", "1.2") == 0
    assert saved()["model_overrides"]["openai:gpt-5.1"] == {"input": 1.2, "cache_write": 2.0}
    out = capsys.readouterr().out
    assert "input           1.10 (configured) -> 1.20" in out
    assert "cache write     1.25 (catalogue) -> 2.00" in out


def test_an_alias_saves_under_its_model_id_and_a_bare_name_only_when_known(capsys: Capture) -> None:
    write_config()
    assert wyckoff("cost", "local", "--context-window", "40960") == 0
    assert wyckoff("cost", "my-model", "--input", "0.1") == 2  # nobody knows its provider
    assert "Name it as PROVIDER:MODEL (a local server: ollama:my-model" in capsys.readouterr().err
    assert wyckoff("cost", "ollama:my-model", "--input", "0.1") == 0
    assert wyckoff("cost", "qwen3:8b", "--input", "0.2") == 0  # the model of the alias `local`
    assert wyckoff("cost", "deepseek-chat", "--output", "0.5") == 0
    overrides = saved()["model_overrides"]
    assert set(overrides) == {"openai:qwen3:8b", "ollama:my-model", "qwen3:8b", "openai:deepseek-chat"}
    capsys.readouterr()
    assert wyckoff("cost", "local") == 0
    assert "40,960 tokens (configured" in capsys.readouterr().out


def test_reset_removes_the_saved_figures(capsys: Capture) -> None:
    write_config()
    assert wyckoff("cost", "openai:gpt-5.1", "--context-window", "2000", "--input", "9") == 0
    assert wyckoff("cost", "openai:o3", "--input", "9") == 0
    capsys.readouterr()
    assert wyckoff("cost", "openai:gpt-5.1", "--reset") == 0
    out = capsys.readouterr().out
    assert "Removed your figures for openai:gpt-5.1" in out and "context window 2,000, input 9.00" in out
    assert "context window now 400,000 tokens (catalogue)" in out
    assert set(saved()["model_overrides"]) == {"openai:o3"}
    assert wyckoff("cost", "openai:o3", "--reset") == 0
    assert "model_overrides" not in saved() and saved()["max_tool_rounds"] == 7
    capsys.readouterr()
    assert wyckoff("cost", "openai:o3", "--reset") == 0
    assert "nothing to reset" in capsys.readouterr().out


BAD_FIGURES = [
    ("--context-window", "0", "positive integer"),
    ("--context-window", "-5", "positive integer"),
    ("--context-window", "1.5", "positive integer"),
    ("--context-window", "200kb", "positive integer"),
    ("--context-window", "32,76", "positive integer"),
    ("--context-window", "1.0005k", "positive integer"),
    ("--context-window", "1e6", "positive integer"),
    ("--context-window", "", "positive integer"),
    ("--input", "-1", "non-negative number"),
    ("--input", "abc", "non-negative number"),
    ("--output", "nan", "non-negative number"),
    ("--output", "inf", "non-negative number"),
    ("--cache-read", "$0.30", "non-negative number"),
    ("--cache-read", "0,30", "non-negative number"),
    ("--cache-write", "", "non-negative number"),
    ("--cache-write", "-0.01", "non-negative number"),
]


@pytest.mark.parametrize(("flag", "value", "problem"), BAD_FIGURES)
def test_a_bad_figure_is_an_error_naming_flag_and_value_and_nothing_is_saved(
    flag: str, value: str, problem: str, capsys: Capture
) -> None:
    path = write_config()
    before = path.read_bytes()
    assert wyckoff("cost", "openai:gpt-5.1", "--input", "1", f"{flag}={value}") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"wyckoff: {flag} must be a {problem}")
    assert repr(value) in captured.err and "Traceback" not in captured.err
    assert path.read_bytes() == before


def test_a_bad_figure_does_not_create_a_config_file(capsys: Capture) -> None:
    assert wyckoff("cost", "openai:gpt-5.1", "--context-window", "0") == 2
    assert not paths.config_file().exists()


def test_reset_cannot_be_combined_with_figures(capsys: Capture) -> None:
    path = write_config()
    before = path.read_bytes()
    assert wyckoff("cost", "openai:gpt-5.1", "--reset", "--output", "3") == 2
    assert "--reset" in capsys.readouterr().err and path.read_bytes() == before


def test_a_flag_without_its_value_is_an_argparse_error_with_status_2(capsys: Capture) -> None:
    with pytest.raises(SystemExit) as caught:
        wyckoff("cost", "openai:gpt-5.1", "--input")
    assert caught.value.code == 2
    assert "--input" in capsys.readouterr().err


def test_a_quote_in_the_id_is_refused(capsys: Capture) -> None:
    assert wyckoff("cost", 'openai:a"b', "--input", "1") == 2
    assert "not a model id" in capsys.readouterr().err


# --------------------------------------------------------------------------- use / fallback


def test_use_sets_the_default_and_keeps_everything_else(capsys: Capture) -> None:
    write_config()
    assert wyckoff("use", "gpt-5.1") == 0
    out = capsys.readouterr().out
    assert "Default model: openai:gpt-5.1 (was anthropic:claude-sonnet-4-5)" in out
    assert "context window 400,000 (catalogue)" in out
    data = saved()
    assert data["model"] == "openai:gpt-5.1" and data["models"]["local"]["base_url"].endswith("/v1")
    assert wyckoff("use", "local") == 0
    assert saved()["model"] == "local"
    assert "Default model: local, alias of openai:qwen3:8b (was openai:gpt-5.1)" in capsys.readouterr().out


def test_use_accepts_a_model_outside_the_catalogue_with_a_note(capsys: Capture) -> None:
    assert wyckoff("use", "openai:brand-new-model") == 0
    out = capsys.readouterr().out
    assert "not in the catalogue" in out and "65,536 (default)" in out
    assert saved()["model"] == "openai:brand-new-model"


@pytest.mark.parametrize("bad", ["my-model", "antropic:claude-sonnet-4-5", "openai:", 'x"y'])
def test_use_refuses_an_id_that_cannot_run(bad: str, capsys: Capture) -> None:
    path = write_config()
    before = path.read_bytes()
    assert wyckoff("use", bad) == 2
    assert capsys.readouterr().err.startswith("wyckoff: ")
    assert path.read_bytes() == before


def test_use_notes_when_the_project_config_wins(workspace: Path, capsys: Capture) -> None:
    (workspace / ".wyckoff" / "config.toml").write_text('model = "openai:gpt-5"\n')
    assert wyckoff("use", "openai:o3") == 0
    assert "sets model = 'openai:gpt-5', which wins in this project" in capsys.readouterr().out


def test_fallback_sets_the_order_and_clear_removes_it(capsys: Capture) -> None:
    write_config()
    assert wyckoff("fallback", "local", "claude-haiku-4-5", "gemini:gemini-2.5-flash") == 0
    assert saved()["fallbacks"] == ["local", "anthropic:claude-haiku-4-5", "gemini:gemini-2.5-flash"]
    assert "Fallbacks: local, anthropic:claude-haiku-4-5, gemini:gemini-2.5-flash (were: none)" in (
        capsys.readouterr().out
    )
    assert wyckoff("fallback", "--clear") == 0
    assert "fallbacks" not in saved() and saved()["max_tool_rounds"] == 7


def test_fallback_notes_the_default_listed_as_a_fallback(capsys: Capture) -> None:
    assert wyckoff("fallback", "anthropic:claude-sonnet-4-5") == 0
    assert "also the default model" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "name the fallback models"),
        (("--clear", "openai:o3"), "not both"),
        (("openai:o3", "o3"), "listed twice"),
        (("openai:o3", "nonsense"), "unknown model 'nonsense'"),
    ],
)
def test_fallback_bad_input_is_exit_2_and_saves_nothing(
    args: tuple[str, ...], message: str, capsys: Capture
) -> None:
    path = write_config()
    before = path.read_bytes()
    assert wyckoff("fallback", *args) == 2
    assert message in capsys.readouterr().err
    assert path.read_bytes() == before


# --------------------------------------------------------------------------- add / remove


def test_add_creates_an_alias_and_suggests_the_catalogues_endpoint(capsys: Capture) -> None:
    assert wyckoff("add", "ds", "--provider", "openai", "--model", "deepseek-chat") == 0
    out = capsys.readouterr().out
    assert "Added alias ds -> openai:deepseek-chat" in out
    assert "https://api.deepseek.com" in out and "$DEEPSEEK_API_KEY" in out
    assert saved()["models"]["ds"] == {"provider": "openai", "model": "deepseek-chat"}


def test_add_on_an_existing_alias_changes_only_the_given_fields(capsys: Capture) -> None:
    write_config()
    assert (
        wyckoff("add", "local", "--base-url", "http://127.0.0.1:8080/v1", "--api-key-env", "LOCAL_KEY") == 0
    )
    out = capsys.readouterr().out
    assert (
        "Updated alias local" in out
        and "base_url: http://localhost:11434/v1 -> http://127.0.0.1:8080/v1" in out
    )
    assert saved()["models"]["local"] == {
        "provider": "openai",
        "model": "qwen3:8b",
        "base_url": "http://127.0.0.1:8080/v1",
        "api_key_env": "LOCAL_KEY",
        "thinking": "off",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("new",), "a new alias needs --provider and --model"),
        (("new", "--provider", "openai"), "a new alias needs --model"),
        (
            ("new", "--provider", "bedrock", "--model", "x"),  # ollama is a provider since issue 21
            "--provider must be one of anthropic, openai, openai-responses, gemini, ollama",
        ),
        (("bad name", "--provider", "openai", "--model", "x"), "alias must be letters"),
        (("a:b", "--provider", "openai", "--model", "x"), "alias must be letters"),
        (("new", "--provider", "openai", "--model", " x"), "--model must be a model id"),
        (("new", "--provider", "openai", "--model", "x", "--base-url", "localhost:1"), "--base-url must be"),
        (("new", "--provider", "openai", "--model", "x", "--api-key-env", "MY KEY"), "'MY KEY'"),
        (("local",), "nothing to change"),
    ],
)
def test_add_bad_input_is_exit_2_and_saves_nothing(
    args: tuple[str, ...], message: str, capsys: Capture
) -> None:
    path = write_config()
    before = path.read_bytes()
    assert wyckoff("add", *args) == 2
    assert message in capsys.readouterr().err
    assert path.read_bytes() == before


def test_add_never_echoes_what_looks_like_an_api_key(capsys: Capture) -> None:
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    assert wyckoff("add", "x", "--provider", "openai", "--model", "m", "--api-key-env", secret) == 2
    err = capsys.readouterr().err
    assert secret not in err and "looks like an API key" in err


def test_remove_deletes_an_alias_but_not_the_default_or_a_fallback(capsys: Capture) -> None:
    write_config(EXISTING + '\n[models.other]\nprovider = "openai"\nmodel = "o3"\n')
    assert wyckoff("fallback", "other") == 0
    assert wyckoff("use", "local") == 0
    capsys.readouterr()
    assert wyckoff("remove", "local") == 2
    assert "is the default model" in capsys.readouterr().err
    assert wyckoff("remove", "other") == 2
    assert "is a fallback" in capsys.readouterr().err
    assert wyckoff("use", "openai:o3") == 0
    assert wyckoff("remove", "local") == 0
    assert set(saved()["models"]) == {"other"}
    assert wyckoff("fallback", "--clear") == 0
    assert wyckoff("remove", "other") == 0
    assert "models" not in saved() and saved()["max_tool_rounds"] == 7


def test_remove_unknown_or_project_alias_is_exit_2(workspace: Path, capsys: Capture) -> None:
    path = write_config()
    before = path.read_bytes()
    assert wyckoff("remove", "nope") == 2
    err = capsys.readouterr().err
    assert "no alias 'nope'" in err and "(aliases there: local)" in err
    (workspace / ".wyckoff" / "config.toml").write_text('[models.proj]\nprovider = "openai"\nmodel = "o3"\n')
    assert wyckoff("remove", "proj") == 2
    assert "edit that file" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_a_broken_user_config_is_reported_not_overwritten(capsys: Capture) -> None:
    path = write_config("model = \n")
    assert wyckoff("use", "openai:o3") == 2
    assert "invalid TOML" in capsys.readouterr().err
    assert path.read_text() == "model = \n"


# --------------------------------------------------------------------------- a real process


def test_the_installed_command_runs_in_a_subprocess(tmp_path: Path, workspace: Path) -> None:
    env = {**os.environ, "WYCKOFF_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "wyckoff_cli", "model"]
    shown = subprocess.run(
        [*command, "cost", "deepseek-reasoner"],
        capture_output=True,
        text=True,
        env=env,
        cwd=workspace,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "context window   128,000 tokens (catalogue)" in shown.stdout
    bad = subprocess.run(
        [*command, "cost", "openai:o3", "--context-window", "lots"],
        capture_output=True,
        text=True,
        env=env,
        cwd=workspace,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr == (
        "wyckoff: --context-window must be a positive integer (tokens) from 1,024 to 100,000,000, got 'lots' "
        "(write it like 32768, 32,768, 32_768, 32k or 1m)\n"
    )
    assert not (tmp_path / "home" / "config" / "config.toml").exists()
    good = subprocess.run(
        [*command, "cost", "openai:o3", "--context-window", "100000"],
        capture_output=True,
        text=True,
        env=env,
        cwd=workspace,
        timeout=60,
    )
    assert good.returncode == 0, good.stderr
    text = (tmp_path / "home" / "config" / "config.toml").read_text()
    assert tomllib.loads(text) == {"model_overrides": {"openai:o3": {"context_window": 100_000}}}


def test_help_lists_the_model_command(capsys: Capture) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--help"])
    assert caught.value.code == 0
    assert "model" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["model", "--help"])
    out = capsys.readouterr().out
    assert all(action in out for action in ("list", "cost", "use", "fallback", "add", "remove"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("foo:bar",), "unknown model 'foo:bar'"),
        (("foo:bar", "--context-window", "32768"), "unknown model 'foo:bar'"),
        (("nonsense",), "unknown model 'nonsense': not an alias and not in the catalogue"),
        (("nonsense", "--input", "1"), "unknown model 'nonsense'"),
        (("gpt-5-nonsense", "--reset"), "unknown model 'gpt-5-nonsense'"),
        (("openai:gpt-5", "--context-window", "10"), "from 1,024 to 100,000,000, got '10'"),
        (("openai:gpt-5", "--context-window", "99999999999"), "from 1,024 to 100,000,000"),
    ],
)
def test_unknown_providers_and_windows_out_of_range_are_refused(
    args: tuple[str, ...], message: str, capsys: Capture
) -> None:
    write_config()
    before = saved()
    assert wyckoff("cost", *args) == 2
    assert message in capsys.readouterr().err
    assert saved() == before
