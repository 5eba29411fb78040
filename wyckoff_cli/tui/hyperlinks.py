"""Whether the terminal shows OSC 8 hyperlinks, so links in answers can be clickable.

A terminal that does not understand OSC 8 either prints the escape sequence as
garbage or swallows it, and a swallowed link hides its URL. So `auto` is
conservative: hyperlinks only where the terminal is known to show them, and the
URL in plain text everywhere else (`text (https://…)`). `[ui] hyperlinks = "on"`
or `"off"` overrides the guess; so does `FORCE_HYPERLINK=1` / `FORCE_HYPERLINK=0`
(the variable other command-line tools honour) under `auto`.

Inside tmux or screen the answer is "no" under `auto`: the multiplexer sets its
own `TERM`/`TERM_PROGRAM`, the outer terminal's variables the shell inherited may
be stale, and tmux passes hyperlinks on only from 3.4 and only when the outer
terminal is declared with the `hyperlinks` feature. See docs/TUI.md, "Tables and links".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

__all__ = ["HyperlinkSetting", "terminal_shows_hyperlinks"]

HyperlinkSetting = Literal["auto", "on", "off"]

# TERM_PROGRAM values of terminals that show OSC 8 links by default.
_PROGRAMS = frozenset({"iTerm.app", "WezTerm", "vscode", "ghostty"})
# TERM values of terminals that show OSC 8 links by default.
_TERMS = frozenset({"xterm-kitty", "xterm-ghostty", "wezterm", "foot", "foot-extra", "alacritty"})
_VTE_MIN = 5000  # VTE 0.50 (GNOME Terminal 3.26, Tilix, …) added hyperlinks


def terminal_shows_hyperlinks(setting: HyperlinkSetting, environ: Mapping[str, str]) -> bool:
    """True when links should be drawn as OSC 8 hyperlinks, False for `text (url)`."""
    if setting != "auto":
        return setting == "on"
    forced = environ.get("FORCE_HYPERLINK", "").strip()
    if forced:
        return forced != "0"
    term = environ.get("TERM", "")
    if environ.get("TMUX") or environ.get("STY") or term.startswith(("tmux", "screen")):
        return False
    if term == "dumb":
        return False
    if environ.get("WT_SESSION") or environ.get("DOMTERM") or environ.get("KITTY_WINDOW_ID"):
        return True
    if environ.get("TERM_PROGRAM", "") in _PROGRAMS or term in _TERMS:
        return True
    vte = environ.get("VTE_VERSION", "")
    return vte.isdigit() and int(vte) >= _VTE_MIN
