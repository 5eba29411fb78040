"""Retries and server tools reach an ACP client as thought notes."""

from __future__ import annotations

from pathlib import Path

from wyckoff_cli.acp.updates import UpdateTranslator
from wyckoff_cli.core import events as ev


def test_retrying_and_server_tool_events_become_thought_text(tmp_path: Path) -> None:
    updates = UpdateTranslator(tmp_path)
    (retry,) = updates.translate(ev.Retrying("anthropic:x", 2, 3, 1.5, "overloaded"))
    assert "retrying in 1.5 s (attempt 2 of 3)" in retry.content.text  # type: ignore[union-attr]
    (used,) = updates.translate(ev.ServerToolUsed("web_search", "searched the web: tides", "anthropic"))
    assert used.content.text == "\n[searched the web: tides]\n"  # type: ignore[union-attr]


def test_the_models_stop_reason_refines_the_acp_stop_reason() -> None:
    from wyckoff_cli.acp.updates import stop_reason

    assert stop_reason("completed", "max_tokens") == "max_tokens"
    assert stop_reason("completed", "content_filter") == "refusal"
    assert stop_reason("completed", "end_turn") == "end_turn"
    assert stop_reason("aborted", "max_tokens") == "cancelled"


def test_a_loop_guard_retry_reaches_the_client_as_its_notice(tmp_path: Path) -> None:
    updates = UpdateTranslator(tmp_path)
    retry = ev.RetryInjected(
        1, ["execute"], "None of your attempts …", "untruthful", 2, ["run_shell(command=rm x)"]
    )
    (note,) = updates.translate(retry)
    assert note.content.text == f"\n[{retry.notice}]\n"  # type: ignore[union-attr]
    assert "answer again, truthfully: run_shell(command=rm x) did not succeed" in retry.notice
