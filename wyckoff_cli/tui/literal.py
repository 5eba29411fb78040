"""Text a person or a model wrote, made safe to show as it is.

Two things can go wrong when such text reaches the screen:

- **Markup.** Textual parses a `str` given to `Static`, `Option`, `notify()` and the
  like as console markup: `[/bold]` raises `MarkupError` (the app dies) and `[FIX]` or
  `[b]x[/b]` silently vanish or restyle the line. Every such text goes through
  `literal()`, which returns a `rich.text.Text` (never parsed as markup).
- **Control characters.** An escape sequence (`ESC [31m`, an OSC 8 hyperlink or an
  OSC 52 clipboard write, a bell, a carriage return) would be written to the terminal
  and obeyed by it. `visible()` replaces every control character except newline and
  tab by a visible stand-in: C0 characters by their Unicode control pictures (`␛`,
  `␇`, `␍`, …), DEL by `␡` and C1 characters (U+0080–U+009F, such as the one-byte CSI)
  by `\\x9b`-style text. A Windows line end (`\\r\\n`) is a line end, not a `␍`.
"""

from __future__ import annotations

import json
import re

from rich.style import Style
from rich.text import Text

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _stand_in(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟ (␛ for ESC)
    if code == 0x7F:
        return "␡"
    return f"\\x{code:02x}"


def visible(text: str) -> str:
    """`text` with its control characters (but newline and tab) shown, not obeyed."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return _CONTROL.sub(_stand_in, text)


def has_control(text: str) -> bool:
    """Whether `text` holds a control character `visible()` would replace (an editor
    widget would paint it raw, so such text is edited as JSON instead)."""
    return _CONTROL.search(text.replace("\r\n", "\n")) is not None


def json_text(value: object) -> str:
    """`value` as indented JSON that is safe to paint: non-ASCII text stays readable,
    and every control character, C1 and DEL included, is a `\\u` escape."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return _CONTROL.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def literal(text: str, style: str | Style = "") -> Text:
    """`text` to show exactly as written: never parsed as markup, control characters
    made visible."""
    return Text(visible(text), style=style)
