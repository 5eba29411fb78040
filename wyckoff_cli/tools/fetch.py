"""`fetch_url`: the extension point for reading web pages. Not registered by default.

Our machines have no network, so the built-in set has no web tool. To add one, give
`make_fetch_url_tool` a `Fetcher` (an async function from URL to page text, e.g.
built on httpx with an HTML-to-text step) and pass the tool to `default_registry`:

    from wyckoff_cli.tools.builtin import default_registry
    from wyckoff_cli.tools.fetch import make_fetch_url_tool

    registry = default_registry(extra=[make_fetch_url_tool(my_fetcher)])

The tool asks before each call in every mode but yolo (`requires_approval`, kind
`other`), and rules match the URL as a glob, `fetch_url(https://docs.python.org/*)`, or by host,
`fetch_url(domain:docs.python.org)` (Claude Code's `WebFetch(domain:…)` works too).
Plan mode allows it (reading the web does not change the workspace). Results longer
than the inline limit are cut here, before the runtime would offload them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome

Fetcher = Callable[[str], Awaitable[str]]
MAX_CHARS = 7_000

DESCRIPTION = """\
Fetch a web page (http or https) and return its text.

- `url`: the full address. The user approves each fetch unless a rule allows it.
- Long pages are cut at about 7,000 characters; fetch a more specific page when you need more."""


def make_fetch_url_tool(fetcher: Fetcher, *, max_chars: int = MAX_CHARS) -> Tool:
    """A `fetch_url` tool that uses `fetcher` to get a page's text."""

    async def run(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        url = str(args["url"]).strip()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ToolError(f"{url!r} is not an http(s) URL.")
        try:
            text = await fetcher(url)
        except ToolError:
            raise
        except Exception as exc:  # a network failure is something the model can react to
            raise ToolError(f"fetching {url} failed: {type(exc).__name__}: {exc}") from None
        if len(text) > max_chars:
            text = text[:max_chars] + f"\n[… cut: the page has {len(text):,} characters]"
        return ToolOutcome(text, {"url": url})

    return Tool(
        name="fetch_url",
        description=DESCRIPTION,
        parameters={
            "type": "object",
            "properties": {"url": {"type": "string", "minLength": 1, "description": "http(s) URL."}},
            "required": ["url"],
            "additionalProperties": False,
        },
        run=run,
        concurrency_safe=True,
        requires_approval=True,
        kind="other",
        url_args=("url",),
        summary_arg="url",
    )
