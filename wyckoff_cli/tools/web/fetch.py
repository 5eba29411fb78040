"""`web_fetch(url, prompt?)`: read a web page as Markdown (docs/TOOLS.md).

The result starts with the page's title and final URL (and the redirects that led
there), then the content. Long pages are not cut here: the runtime offloads any result
over its inline limit to the session's results folder and the model gets the head (with
the title, URL and, when `prompt` was given, the sections that match it best) and the
path to page through. Each URL's result is kept for 15 minutes (`[web] cache_minutes`)
in the session, so asking again, or with another `prompt`, costs no request.

Permission: the subject of a call is its canonical URL; rules `web_fetch(domain:HOST)`
(what "always" saves), `web_fetch(domain:*.HOST)`, `web_fetch(*)` or a URL glob. It
asks in default, plan and auto-edit mode (plan mode does not refuse it: reading the web
does not change the workspace) and runs without asking in yolo mode.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.permissions.subject import NONE, Subject
from wyckoff_cli.tools.web.client import FetchFailed, RawPage, WebClient
from wyckoff_cli.tools.web.convert import Converted, TooDeep, Unsupported, convert, pretty_json
from wyckoff_cli.tools.web.urls import BadURL, canonical_url, host_of, suggest_url_rule, url_for_rules

INLINE_CHARS = 7_000  # below the runtime's offload threshold: the model sees it all
EXCERPT_CHARS = 2_400  # the "most relevant sections" block, inside the offload preview's head
ERROR_BODY_CHARS = 1_500

DESCRIPTION = """\
Fetch a web page (http or https) and read it as Markdown: documentation, an error's issue thread, an API's JSON, a PDF's text.

- `url`: the full address. The user approves each new domain unless a rule allows it.
- `prompt` (optional): what you are looking for on the page. On a long page the sections that match it best are shown first.
- The result starts with the page title and final URL. A long page is saved whole and you get its start plus the path: read further with read_file or search it with grep instead of fetching it again.
- A redirect to another host is not followed: the result says where it leads; fetch that URL if you still want it.
- Results are cached for 15 minutes. Only public addresses can be fetched; images and other binary files are refused."""

_STOP_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "what",
        "how",
        "does",
        "this",
        "that",
        "from",
        "into",
        "about",
        "which",
        "where",
        "when",
        "there",
        "their",
        "them",
        "are",
        "was",
        "were",
        "can",
        "could",
        "should",
        "would",
        "use",
        "using",
        "used",
        "page",
        "find",
        "show",
        "tell",
        "get",
        "all",
        "any",
        "its",
    ]
)
_HEADING = re.compile(r"^#{1,6}\s", re.M)


@dataclass(frozen=True, slots=True)
class FetchedPage:
    url: str
    title: str | None
    header: list[str]  # the lines after the title (URL, redirects, notes)
    body: str
    status: int
    kind: str


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _describe(converted: Converted, page: RawPage) -> str:
    size = _plural(len(converted.text), "character")
    if converted.kind == "html":
        return f"HTML ({_plural(len(page.body), 'byte')}) as Markdown, {size}"
    if converted.kind == "pdf":
        pages = converted.text.count("\n--- page ") + 1 if converted.text.startswith("--- page ") else 0
        return f"PDF, {_plural(pages, 'page')}, {size} of text"
    label = {"json": "JSON", "markdown": "Markdown", "text": page.content_type or "text"}[converted.kind]
    return f"{label}, {size}"


def build_page(page: RawPage, converted: Converted) -> FetchedPage:
    body = converted.text
    if converted.kind == "json" and "\n" not in body[:2000]:
        body = pretty_json(body) or body
    header = [f"URL: {page.url}"]
    if page.redirects:
        header.append("Redirected: " + " → ".join([*page.redirects, page.url]))
    header.append(f"Content: {_describe(converted, page)}")
    if converted.replaced:
        header.append(f"Note: read as {converted.encoding}; bytes that did not decode are shown as �")
    return FetchedPage(page.url, converted.title, header, body, page.status, converted.kind)


def relevant_sections(markdown: str, prompt: str, budget: int = EXCERPT_CHARS) -> str:
    """The sections (split at headings) that mention the prompt's words most, in page
    order, within `budget` characters; "" when none does."""
    terms = {w for w in re.findall(r"[\w.\-]+", prompt.lower()) if len(w) >= 3 and w not in _STOP_WORDS}
    if not terms:
        return ""
    starts = [0, *(m.start() for m in _HEADING.finditer(markdown) if m.start() > 0)]
    sections = [markdown[a:b].strip() for a, b in zip(starts, [*starts[1:], len(markdown)], strict=True)]
    scored: list[tuple[float, int]] = []
    for index, section in enumerate(sections):
        lower = section.lower()
        heading = lower.split("\n", 1)[0]
        score = sum(min(lower.count(t), 5) + (3 if t in heading else 0) for t in terms)
        if score:
            scored.append((score / (1 + len(section) / 4000), index))
    chosen: list[int] = []
    used = 0
    for _, index in sorted(scored, reverse=True):
        if used >= budget:
            break
        chosen.append(index)
        used += min(len(sections[index]), budget - used)
    parts: list[str] = []
    left = budget
    for index in sorted(chosen):
        text = sections[index]
        if len(text) > left:
            text = text[: max(left, 200)].rstrip() + " …"
        parts.append(text)
        left -= len(text)
        if left <= 0:
            break
    return "\n\n".join(parts)


def render(page: FetchedPage, prompt: str | None, cached_for: float | None) -> str:
    lines = [f"# {page.title or page.url}", *page.header]
    if cached_for is not None:
        minutes = int(cached_for // 60)
        ago = "less than a minute" if minutes == 0 else _plural(minutes, "minute")
        lines.append(f"(From the session's cache: fetched {ago} ago.)")
    text = "\n".join(lines) + "\n\n"
    if prompt and len(page.body) > INLINE_CHARS:
        excerpt = relevant_sections(page.body, prompt)
        if excerpt:
            text += f"## Sections matching “{prompt.strip()}”\n\n{excerpt}\n\n## The whole page\n\n"
        else:
            text += f"(No section mentions the words of “{prompt.strip()}”; the whole page follows.)\n\n"
    return text + page.body


class WebFetch:
    """The web_fetch tool of one session: the client and the per-URL cache."""

    def __init__(
        self,
        client: WebClient,
        *,
        cache_seconds: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.cache_seconds = cache_seconds
        self.clock = clock
        self._cache: dict[str, tuple[float, FetchedPage]] = {}

    def cached(self, url: str) -> tuple[FetchedPage, float] | None:
        """The page cached for `url` and its age in seconds, while it is fresh."""
        entry = self._cache.get(url)
        if entry is None:
            return None
        age = self.clock() - entry[0]
        if age > self.cache_seconds:
            del self._cache[url]
            return None
        return entry[1], age

    def refused_before_run(self, args: dict[str, Any]) -> str | None:
        """The refusal a fetch of `args["url"]` would meet, when the URL alone decides it
        (not a URL web_fetch reads; an IP literal or `localhost` the address guard
        refuses): said before any approval dialog, with the setting that allows it."""
        try:
            url = canonical_url(str(args.get("url", "")))
        except BadURL as exc:
            return f"Refused: web_fetch: {exc}"
        blocked = self.client.guard.known_refusal(url.host)
        return f"Refused: web_fetch: {url.url}: {blocked}" if blocked is not None else None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        try:
            url = canonical_url(str(args.get("url", "")))
        except BadURL as exc:
            raise ToolError(f"web_fetch: {exc}") from None
        prompt = args.get("prompt")
        prompt = prompt.strip() if isinstance(prompt, str) and prompt.strip() else None
        hit = self.cached(url.url)
        if hit is not None:
            page, age = hit
            return self._outcome(page, prompt, age)
        try:
            raw = await self.client.get(url)
        except FetchFailed as exc:
            raise ToolError(f"web_fetch: {exc}") from None
        if raw.elsewhere is not None:
            return ToolOutcome(
                f"{raw.url} redirects ({raw.status}) to {raw.elsewhere}, on another host, which was not "
                f"followed. To read it, call web_fetch with url={raw.elsewhere!r}.",
                {"url": raw.url, "redirect": raw.elsewhere, "status": raw.status},
            )
        try:  # parsing a big page or PDF takes a while: off the event loop
            converted = await asyncio.to_thread(convert, raw.body, raw.content_type, raw.charset, raw.url)
        except TooDeep as exc:
            raise ToolError(f"web_fetch: {raw.url}: {exc}; not converted.") from None
        except Unsupported as exc:
            raise ToolError(
                f"web_fetch: {raw.url} is {exc} ({_plural(len(raw.body), 'byte')}), not text; "
                "web_fetch reads HTML, Markdown, plain text, JSON and PDF."
            ) from None
        except Exception as exc:  # a page the parsers choke on (e.g. nesting too deep)
            raise ToolError(
                f"web_fetch: {raw.url} ({raw.content_type or 'no type'}) could not be converted to text: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        if not 200 <= raw.status < 300:
            excerpt = converted.text.strip()[:ERROR_BODY_CHARS]
            shown = f"\n\nThe server's answer:\n{excerpt}" if excerpt else ""
            raise ToolError(f"web_fetch: {raw.url} answered {raw.status} {raw.reason}.{shown}")
        page = build_page(raw, converted)
        self._cache[url.url] = (self.clock(), page)
        if page.url != url.url:
            self._cache.setdefault(page.url, (self.clock(), page))
        return self._outcome(page, prompt, None)

    def _outcome(self, page: FetchedPage, prompt: str | None, cached_for: float | None) -> ToolOutcome:
        display = {
            "url": page.url,
            "title": page.title,
            "status": page.status,
            "kind": page.kind,
            "chars": len(page.body),
            "cached": cached_for is not None,
        }
        return ToolOutcome(render(page, prompt, cached_for), display)

    def tool(self) -> Tool:
        return Tool(
            name="web_fetch",
            description=DESCRIPTION,
            parameters={
                "type": "object",
                "properties": {
                    "url": {"type": "string", "minLength": 1, "description": "The http(s) URL to read."},
                    "prompt": {"type": "string", "description": "What you are looking for on the page."},
                },
                "required": ["url"],
                "additionalProperties": False,
            },
            run=self.run,
            refused_before_run=self.refused_before_run,
            concurrency_safe=True,
            requires_approval=True,
            kind="other",
            summary_arg="url",
            preview=_preview,
            url_args=("url",),
            subject_of=fetch_subject,
        )


def fetch_subject(args: Mapping[str, Any], workspace: Path) -> Subject:
    """The permission subject of a `web_fetch` call: the canonical URL the tool will
    fetch and its canonical host (IDNA, numeric IPv4 spellings as dotted quads), so a
    `domain:` rule sees the host exactly as the tool connects to it. A URL the tool
    refuses has no host: no `domain:` rule allows it (it fails when it runs anyway)."""
    raw = args.get("url")
    if not isinstance(raw, str):
        return NONE
    return Subject("url", url_for_rules(raw), host=host_of(raw) or "")


def _preview(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    raw = str(args.get("url", ""))
    try:
        url = canonical_url(raw)
    except BadURL as exc:
        return {"kind": "fetch", "url": raw, "error": str(exc)}
    return {"kind": "fetch", "url": url.url, "host": url.host, "rule": suggest_url_rule("web_fetch", raw)}
