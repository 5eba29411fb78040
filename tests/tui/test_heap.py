"""The start-up heap (tui/heap.py): no collector passes while the app is built, one pass
and a freeze once it is warm and idle, once per process. The collector's state is the
process's, so all but the app's own case run in a fresh interpreter."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE
from tests.waiting import until


def _python(code: str) -> list[object]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True, timeout=60
    )
    answer: list[object] = json.loads(out.stdout.strip().splitlines()[-1])
    return answer


async def test_the_start_up_heap_is_frozen_once_the_app_is_warm(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: gc.get_freeze_count() > 0, observe=gc.get_freeze_count)


def test_the_heap_is_frozen_once_per_process() -> None:
    out = _python(
        """
        import gc, json
        from wyckoff_cli.tui.heap import settle_heap
        before = gc.get_freeze_count()
        first = settle_heap()
        frozen = gc.get_freeze_count()
        later = [object() for _ in range(3)]
        again = settle_heap()
        print(json.dumps([before, first, frozen > 0, again, gc.get_freeze_count() == frozen]))
        """
    )
    assert out == [0, True, True, False, True]


def test_held_collector_frees_start_up_cycles_when_settled_and_is_on_again() -> None:
    out = _python(
        """
        import gc, json, weakref
        from wyckoff_cli.tui import heap

        class Node:
            pass

        held = heap.hold_collection()
        off = not gc.isenabled()
        node = Node(); node.me = node  # a cycle start-up leaves behind
        alive = weakref.ref(node)
        del node
        passes = gc.get_stats()[2]["collections"]
        junk = [[] for _ in range(100_000)]  # would have set off passes
        none_meanwhile = gc.get_stats()[2]["collections"] == passes and gc.get_count()[0] > 50_000
        still_there = alive() is not None
        first = heap.settle_heap()
        print(json.dumps([held, off, none_meanwhile, still_there, first, alive() is None,
                          gc.isenabled(), gc.get_freeze_count() > 0, heap.settle_heap(),
                          heap.hold_collection(), gc.isenabled()]))
        """
    )
    # held, off, no pass meanwhile, the cycle kept; settled: freed, on again, frozen;
    # once only, and never held again
    assert out == [True, True, True, True, True, True, True, True, False, False, True]


def test_the_collector_is_on_again_after_the_limit_whatever_happens() -> None:
    out = _python(
        """
        import gc, json, time
        from wyckoff_cli.tui import heap

        heap.hold_collection(limit=0.2)
        off = not gc.isenabled()
        deadline = time.monotonic() + 30
        while not gc.isenabled() and time.monotonic() < deadline:
            time.sleep(0.01)
        print(json.dumps([off, gc.isenabled(), gc.get_freeze_count() > 0, heap.settle_heap()]))
        """
    )
    assert out == [True, True, True, False]  # settled by the limit: a later settle does nothing


def test_a_turn_running_when_the_app_is_warm_settles_the_heap_when_it_ends() -> None:
    out = _python(
        """
        import gc, json
        from wyckoff_cli.tui import heap

        heap.hold_collection()
        heap.turn_ended()  # a turn before the app is warm: nothing yet
        early = gc.isenabled()
        heap.app_warm(busy=True)  # warm while the first message's turn runs: not now
        during = gc.isenabled() or gc.get_freeze_count() > 0
        heap.turn_ended()
        print(json.dumps([early, during, gc.isenabled(), gc.get_freeze_count() > 0]))
        """
    )
    assert out == [False, False, True, True]


def test_a_start_that_fails_gives_the_collector_back_without_freezing() -> None:
    out = _python(
        """
        import gc, json
        from wyckoff_cli.tui import heap

        heap.hold_collection()
        heap.release_collection()
        released = [gc.isenabled(), gc.get_freeze_count()]
        heap.release_collection()  # twice, or after a settle: nothing
        heap.app_warm(busy=False)  # settles as without a hold: freezes, the collector stays on
        print(json.dumps([*released, gc.isenabled(), gc.get_freeze_count() > 0]))
        """
    )
    assert out == [True, 0, True, True]


def test_wyckoff_chat_holds_the_collector_while_the_app_is_built_and_gives_it_back(tmp_path: Path) -> None:
    """`chat_cmd._run_app` holds it around the app's start; a start refused (here, a
    session to continue that does not exist) gives it back."""
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    out = _python(
        f"""
        import gc, json, os
        os.environ["WYCKOFF_HOME"] = {str(home)!r}
        from wyckoff_cli.cli import chat_cmd
        seen = []
        opened = chat_cmd._open_app
        def spy(args, start):
            seen.append(gc.isenabled())
            return opened(args, start)
        chat_cmd._open_app = spy
        from wyckoff_cli.cli.main import main
        code = main(["chat", "--continue", "--model", "scripted:none.json", {str(project)!r}])
        print(json.dumps([code, seen, gc.isenabled(), gc.get_freeze_count()]))
        """
    )
    assert out == [2, [False], True, 0]
