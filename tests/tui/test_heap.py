"""The start-up heap is frozen once the app is warm (tui/heap.py), once per process."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE
from tests.waiting import until


async def test_the_start_up_heap_is_frozen_once_the_app_is_warm(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: gc.get_freeze_count() > 0, observe=gc.get_freeze_count)


def test_the_heap_is_frozen_once_per_process() -> None:
    code = (
        "import gc\n"
        "from wyckoff_cli.tui.heap import freeze_startup_heap as freeze\n"
        "before = gc.get_freeze_count()\n"
        "first = freeze()\n"
        "frozen = gc.get_freeze_count()\n"
        "later = [object() for _ in range(3)]\n"
        "again = freeze()\n"
        "print(before, first, frozen > 0, again, gc.get_freeze_count() == frozen)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "True", "True", "False", "True"]
