"""`wyckoff usage`: tokens and cost per model from the saved sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wyckoff_cli.cli.main import main


def run_session(
    tmp_path: Path, workspace: Path, rounds: list[dict[str, object]], model: str = "test"
) -> None:
    script = tmp_path / f"{model}.json"
    script.write_text(json.dumps({"rounds": rounds}))
    assert main(["run", "--model", f"scripted:{script}", "--cwd", str(workspace), "hi"]) == 0


def test_usage_groups_calls_by_model_with_cache_tokens(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100, "cache_read_tokens": 600, "cache_write_tokens": 50}
    run_session(tmp_path, workspace, [{"text": "a", "usage": usage}], "one")
    run_session(tmp_path, workspace, [{"text": "b", "usage": usage}], "two")
    monkeypatch.chdir(workspace)
    capsys.readouterr()
    assert main(["usage", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["models"]) == {"scripted:one.json", "scripted:two.json"}
    row = data["models"]["scripted:one.json"]
    assert (row["calls"], row["input_tokens"], row["cache_read_tokens"], row["cache_write_tokens"]) == (
        1,
        1000,
        600,
        50,
    )
    assert row["unpriced_calls"] == 1  # scripted models have no price
    assert main(["usage"]) == 0
    out = capsys.readouterr().out
    assert "scripted:one.json" in out and "total" in out and "2,000" in out


def test_usage_prices_known_models(tmp_path: Path, workspace: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from wyckoff_cli.cli.usage_cmd import collect_usage

    pad = tmp_path / "s1"
    pad.mkdir()
    now = datetime.now(UTC)
    records = [
        {
            "type": "usage",
            "model": "anthropic:claude-sonnet-4-5",
            "ts": now.isoformat(),
            "input_tokens": 1_000_000,
            "output_tokens": 0,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
        },
        {
            "type": "usage",
            "model": "anthropic:claude-sonnet-4-5",
            "ts": (now - timedelta(days=40)).isoformat(),
            "input_tokens": 5,
            "output_tokens": 5,
            "cost_usd": 9.0,
        },
    ]
    (pad / "scratchpad.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in [{"kind": "header"}, *records])
    )
    totals = collect_usage([pad], now - timedelta(days=30), lambda model, usage: usage.input_tokens * 3e-6)
    row = totals["anthropic:claude-sonnet-4-5"]
    assert (row.calls, row.unpriced_calls) == (1, 0)
    assert row.cost_usd == pytest.approx(3.0)


def test_bad_days_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["usage", "--days", "0"]) == 2
    assert "--days must be a positive number" in capsys.readouterr().err


def _write_trace(directory: Path, records: list[dict[str, object]]) -> None:
    directory.mkdir()
    (directory / "scratchpad.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in [{"kind": "header"}, *records])
    )


def test_usage_groups_by_agent_purpose_and_day_with_the_children(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from wyckoff_cli.cli.usage_cmd import collect_usage

    now = datetime.now(UTC)
    yesterday = (now - timedelta(days=1)).isoformat()
    call = {"model": "m", "input_tokens": 100, "output_tokens": 10}
    _write_trace(
        tmp_path / "s1",
        [
            {"type": "usage", "ts": yesterday, **call, "cost_usd": 1.0},
            {"type": "usage", "ts": now.isoformat(), **call, "purpose": "compaction", "cost_usd": 0.5},
            {
                "type": "subagent",
                "ts": now.isoformat(),
                "agent": "explore",
                "agent_id": "explore-1",
                "event": {"type": "usage", **call, "purpose": "turn"},
                "cost_usd": 2.0,
            },
            {"type": "subagent", "ts": now.isoformat(), "agent": "explore", "event": {"type": "done"}},
        ],
    )
    since = now - timedelta(days=30)
    by_agent = collect_usage([tmp_path / "s1"], since, lambda model, usage: None, by="agent")
    assert {k: (v.calls, v.cost_usd) for k, v in by_agent.items()} == {"explore": (1, 2.0), "main": (2, 1.5)}
    assert list(by_agent) == ["explore", "main"]  # the costliest first
    by_purpose = collect_usage([tmp_path / "s1"], since, lambda model, usage: None, by="purpose")
    assert {k: v.cost_usd for k, v in by_purpose.items()} == {"turn": 3.0, "compaction": 0.5}
    by_day = collect_usage([tmp_path / "s1"], since, lambda model, usage: None, by="day")
    assert list(by_day) == [yesterday[:10], now.isoformat()[:10]]
    by_model = collect_usage([tmp_path / "s1"], since, lambda model, usage: None)
    assert by_model["m"].calls == 3 and by_model["m"].input_tokens == 300  # the child's call counts


def test_usage_since_and_by_on_the_command_line(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_session(tmp_path, workspace, [{"text": "a", "usage": {"input_tokens": 7, "output_tokens": 3}}])
    monkeypatch.chdir(workspace)
    capsys.readouterr()
    assert main(["usage", "--by", "purpose", "--since", "2000-01-01", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by"] == "purpose" and data["since"].startswith("2000-01-01")
    assert data["groups"]["turn"]["input_tokens"] == 7
    assert main(["usage", "--by", "agent"]) == 0
    out = capsys.readouterr().out
    assert "by agent" in out and "main" in out
    assert main(["usage", "--since", "2999-01-01", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["groups"] == {}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--by", "colour"], "--by takes one of model, agent, purpose, tool, day"),
        (["--since", "yesterday"], "--since takes a date as YYYY-MM-DD"),
        (["--since", "2026-13-01"], "--since takes a date as YYYY-MM-DD"),
        (["--days", "0"], "--days must be a positive number"),
    ],
)
def test_usage_bad_arguments_are_clear_errors(
    args: list[str],
    message: str,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(workspace)
    assert main(["usage", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
