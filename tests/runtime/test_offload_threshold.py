"""One offload threshold: results up to `OFFLOAD_THRESHOLD` characters stay inline, longer ones go to disk."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from tests.runtime.support import collect, make_runtime, make_tool, of_type
from wyckoff_cli.core import events as ev
from wyckoff_cli.runtime.loop import RuntimeSettings
from wyckoff_cli.runtime.offload import OFFLOAD_THRESHOLD
from wyckoff_cli.runtime.tool_calls import ToolCallRunner
from wyckoff_cli.tools.base import ToolContext


def test_the_runtime_and_the_runner_default_to_the_one_threshold() -> None:
    assert RuntimeSettings().offload_threshold == OFFLOAD_THRESHOLD
    runner_default = {f.name: f.default for f in dataclasses.fields(ToolCallRunner)}["offload_threshold"]
    assert runner_default == OFFLOAD_THRESHOLD


async def _result_of(workspace: Path, text: str) -> ev.ToolSucceeded:
    async def produce(args: dict[str, Any], ctx: ToolContext) -> str:
        return text

    runtime, _ = make_runtime(
        [{"tool_calls": [{"name": "produce", "args": {}}]}, {"text": "ok"}],
        [make_tool("produce", produce)],
        workspace,
    )
    events, _history = await collect(runtime)
    return of_type(events, ev.ToolSucceeded)[0]


async def test_a_result_at_the_threshold_stays_inline(workspace: Path) -> None:
    text = "x" * OFFLOAD_THRESHOLD
    result = await _result_of(workspace, text)
    assert result.offloaded_path is None
    assert result.result == text


async def test_one_character_over_the_threshold_is_offloaded(workspace: Path) -> None:
    text = "x" * (OFFLOAD_THRESHOLD + 1)
    result = await _result_of(workspace, text)
    assert result.offloaded_path is not None
    assert Path(result.offloaded_path).read_text() == text
