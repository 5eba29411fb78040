"""The Textual app behind `wyckoff chat`. The only package that imports textual.

Textual paints a requested update at its next screen tick, `TEXTUAL_FPS` (60) a second:
a typed key waited up to 16.7 ms for it, two ticks at the 95th percentile (31 ms, over
issue 36's 30 ms). At 120 a key is on screen in 8 ms at the median and 15–20 ms at the
95th percentile (bench/live_session.py); the streamed answer's frames are paced by the
app's own clock (tui/frame_clock.py), so this costs no CPU. A `TEXTUAL_FPS` the user
set is kept. Set here, before any textual module is imported (it is read once).
"""

import os

os.environ.setdefault("TEXTUAL_FPS", "120")
