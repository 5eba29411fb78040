"""Compare HTML-to-Markdown libraries on the saved pages in tests/tools/web/fixtures/.

Candidates: trafilatura (main-content extraction with its own Markdown output),
readability-lxml + markdownify (article extraction, then conversion), html2text (whole
page conversion), and what web_fetch ships (`wyckoff_cli.tools.web.convert.html_to_markdown`,
when importable). For each page and library: the time per conversion (best of N), the
output size, and checks of what a model needs from the page: its phrases and code lines,
the tables, how much navigation chrome leaked in, and the fenced code blocks.

    pip install trafilatura readability-lxml markdownify html2text
    python bench/html_to_markdown.py [--show LIB PAGE]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "tools" / "web" / "fixtures"

# What each page must keep (a phrase from the content, a line of code, a table cell) and
# what chrome must not appear (navigation, footers, cookie banners).
EXPECT: dict[str, dict[str, list[str]]] = {
    "python-docs-json.html": {
        "keep": ["json.dumps", "JSONDecodeError", "sort_keys", "Encoders and Decoders", ">>> import json"],
        "table": ["JSON", "Python"],
        "chrome": ["Theme", "Navigation", "Previous topic", "Report a Bug", "Copyright"],
    },
    "rustdoc-book-what-is-rustdoc.html": {
        "keep": ["cargo doc", "rustdoc src/lib.rs", "Using standalone Markdown files"],
        "table": [],
        "chrome": ["Keyboard shortcuts", "Auto", "Print this book"],
    },
    "github-issue.html": {
        "keep": ["iter_bytes", "Timeout(10.0, read=30.0)", "RemoteProtocolError", "0.27.3"],
        "table": ["HTTP/1.1 + read timeout"],
        "chrome": ["Sign up", "Pricing", "Manage cookies", "Skip to content", "Codespaces"],
    },
    "blog-post.html": {
        "keep": ["idle_in_transaction_session_timeout", "pg_stat_activity", "QueuePool limit", "finally"],
        "table": ["idle in transaction"],
        "chrome": ["We use cookies", "Recent Posts", "Leave a Reply", "Share on X", "Subscribe"],
    },
}


def trafilatura_md(html: str) -> str:
    import trafilatura

    return trafilatura.extract(html, output_format="markdown", include_tables=True, include_links=True) or ""


def readability_markdownify(html: str) -> str:
    from markdownify import markdownify
    from readability import Document

    doc = Document(html)
    return f"# {doc.short_title()}\n\n" + markdownify(doc.summary(html_partial=True), heading_style="ATX")


def html2text_md(html: str) -> str:
    import html2text

    h = html2text.HTML2Text()
    h.body_width = 0
    return h.handle(html)


def wyckoff_md(html: str) -> str:
    from wyckoff_cli.tools.web.convert import html_to_markdown

    page = html_to_markdown(html)
    return f"# {page.title}\n\n{page.markdown}"


LIBRARIES: dict[str, Callable[[str], str]] = {
    "trafilatura": trafilatura_md,
    "readability+markdownify": readability_markdownify,
    "html2text": html2text_md,
    "wyckoff (shipped)": wyckoff_md,
}


def fenced_blocks(text: str) -> int:
    """Fenced code blocks (html2text indents code instead: it scores 0 here but keeps it)."""
    return len(re.findall(r"^```", text, re.M)) // 2


def score(name: str, text: str) -> dict[str, object]:
    expect = EXPECT[name]
    flat = re.sub(r"\\(.)", r"\1", text)
    kept = sum(1 for k in expect["keep"] if k in flat)
    table = all(k in flat for k in expect["table"]) and ("|" in text or not expect["table"])
    chrome = sum(1 for k in expect["chrome"] if k in flat)
    return {
        "kept": f"{kept}/{len(expect['keep'])}",
        "table": table,
        "chrome": chrome,
        "fences": fenced_blocks(text),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", nargs=2, metavar=("LIB", "PAGE"), help="print one conversion")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    if args.show:
        print(LIBRARIES[args.show[0]]((FIXTURES / args.show[1]).read_text(encoding="utf-8")))
        return 0
    print(
        f"{'page':36} {'library':26} {'ms':>7} {'chars':>7} {'kept':>5} {'table':>5} {'chrome':>6} {'fences':>6}"
    )
    for page in EXPECT:
        html = (FIXTURES / page).read_text(encoding="utf-8")
        for lib, convert in LIBRARIES.items():
            try:
                convert(html)
            except ImportError as exc:
                print(f"{page:36} {lib:26} not installed ({exc.name})")
                continue
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                out = convert(html)
                best = min(best, time.perf_counter() - start)
            s = score(page, out)
            print(
                f"{page:36} {lib:26} {best * 1000:7.1f} {len(out):7} {s['kept']:>5} "
                f"{'yes' if s['table'] else 'no':>5} {s['chrome']:>6} {s['fences']:>6}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
