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
