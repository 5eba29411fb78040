"""The probe drivers `bench/startup.py` runs inside the app it launches.

`TEXTUAL_DRIVER=startup_probe:HeadlessProbe` (or `PtyProbe`) makes the real
`wyckoff chat` use one of these: Textual's headless driver (or its Linux driver) plus
a watcher that, as soon as the prompt has focus, sends a key through the driver (as the
input thread does for a typed key), waits until the key is in the prompt and for the
next refresh, writes the times (seconds since `WYCKOFF_BENCH_T0`, CLOCK_MONOTONIC) as
one JSON line to the file descriptor in `WYCKOFF_BENCH_PROBE_FD`, and exits the app.
Kept apart from the benchmark so the app's process imports nothing else of ours.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from textual import events
from textual.drivers.headless_driver import HeadlessDriver
from textual.drivers.linux_driver import LinuxDriver

PROBE_FD = "WYCKOFF_BENCH_PROBE_FD"
PROBE_T0 = "WYCKOFF_BENCH_T0"
KEY = "z"


class _Probe:
    """Mixed into a Textual driver: watches the app, types a key, reports, exits."""

    _app: Any  # these two come from the driver
    process_message: Any

    def _probe_init(self) -> None:
        self._marks: dict[str, float] = {"driver": time.monotonic()}
        self._task: asyncio.Task[None] | None = None

    def _probe_start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        app = self._app
        prompt = None
        while prompt is None:
            focused = app.focused
            if focused is not None and type(focused).__name__ == "PromptInput":
                prompt = focused
            else:
                await asyncio.sleep(0.001)
        self._marks["focused"] = time.monotonic()
        self.process_message(events.Key(KEY, KEY))
        while KEY not in prompt.text:
            await asyncio.sleep(0.001)
        self._marks["typed"] = time.monotonic()
        painted: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        app.call_after_refresh(lambda: painted.done() or painted.set_result(time.monotonic()))
        self._marks["painted"] = await painted
        t0 = float(os.environ[PROBE_T0])
        line = json.dumps({name: stamp - t0 for name, stamp in self._marks.items()}) + "\n"
        os.write(int(os.environ[PROBE_FD]), line.encode())
        app.exit()


class HeadlessProbe(_Probe, HeadlessDriver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._probe_init()

    def start_application_mode(self) -> None:
        super().start_application_mode()
        self._probe_start()


class PtyProbe(_Probe, LinuxDriver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._probe_init()

    def start_application_mode(self) -> None:
        super().start_application_mode()
        self._probe_start()
