"""The cache-share arithmetic of bench/cache_share.py on hand-made request bodies."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "bench" / "cache_share.py"
MARK = {"type": "ephemeral"}


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cache_share_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _text(text: str, marked: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if marked:
        block["cache_control"] = MARK
    return block


def _body(turns: int) -> dict[str, Any]:
    """A conversation after `turns` answers: each request extends the previous one."""
    messages = []
    for n in range(turns):
        messages.append({"role": "user", "content": [_text(f"question {n} " * 50)]})
        messages.append({"role": "assistant", "content": [_text(f"answer {n} " * 50)]})
    messages.append({"role": "user", "content": [_text(f"question {turns} " * 50)]})
    messages[-1]["content"][-1]["cache_control"] = MARK
    if turns:
        messages[-3]["content"][-1]["cache_control"] = MARK  # the previous request's end
    return {"system": [_text("system " * 400, marked=True)], "messages": messages}


def test_sliding_breakpoints_read_the_previous_request() -> None:
    bench = _bench()
    bodies = [_body(0), _body(1)]
    first, second = bench.cache_shares(bodies)
    assert first.cached_chars == 0
    assert second.reads_previous_request
    assert 0.5 < second.share < 1


def test_system_only_caches_just_the_system_prompt() -> None:
    bench = _bench()
    bodies = [_body(0), _body(1)]
    sliding = bench.cache_shares(bodies)
    static = bench.cache_shares(bodies, sliding=False)
    assert static[1].cached_chars < sliding[1].cached_chars
    assert not static[1].reads_previous_request
