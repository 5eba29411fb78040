"""How a vendor's own tool use reads in the transcript: `searched the web: QUERY` and
the sources it found or cited, each with its link."""

from __future__ import annotations

from collections.abc import Sequence

MAX_SOURCES = 8


def server_tool_text(summary: str, sources: Sequence[dict[str, str]], limit: int = MAX_SOURCES) -> str:
    lines = [summary]
    for source in sources[:limit]:
        url = source.get("url", "")
        title = source.get("title") or ""
        lines.append(f"  • {title} — {url}" if title and title != url else f"  • {url}")
    if len(sources) > limit:
        lines.append(f"  … and {len(sources) - limit} more")
    return "\n".join(lines)
