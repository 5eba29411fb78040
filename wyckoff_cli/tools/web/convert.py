"""A fetched body as text for the model: HTML to Markdown, JSON/text/Markdown as they
are, PDF text through pypdf; other binary types are refused with their type.

HTML goes through BeautifulSoup (the standard library's parser) and markdownify, after
the page chrome is removed: scripts and styles, navigation, site headers and footers,
sidebars, forms, cookie banners, hidden elements and heading anchors; then the main
content (`<main>`, `role="main"`, a single `<article>`, else `<body>`) is converted.
Links and images become absolute so the model can follow them. docs/TOOLS.md says why
this pair was chosen over trafilatura and html2text (bench/html_to_markdown.py).

Character sets: a byte-order mark, else the Content-Type charset, else (HTML) a
`<meta charset>` in the first 4 KB, else UTF-8 when the bytes are valid UTF-8, else
windows-1252 (what browsers assume). Legacy labels map as browsers map them
(`iso-8859-1` and `ascii` read as windows-1252, `gb2312` as gb18030).
"""

from __future__ import annotations

import codecs
import io
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
_TEXT_APPS = frozenset(
    {
        "application/xml", "application/javascript", "application/x-javascript", "application/ecmascript",
        "application/x-yaml", "application/yaml", "application/toml", "application/x-sh",
        "application/sql", "application/graphql", "application/x-ndjson", "application/rss+xml",
        "application/atom+xml",
    }
)  # fmt: skip
_LABELS = {
    "iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "l1": "cp1252", "ascii": "cp1252",
    "us-ascii": "cp1252", "iso8859-1": "cp1252", "windows-1252": "cp1252", "gb2312": "gb18030",
    "gbk": "gb18030", "x-sjis": "shift_jis", "shift-jis": "shift_jis",
}  # fmt: skip
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.I)
_DROP_TAGS = (
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "form",
    "button", "input", "select", "textarea", "nav", "footer", "aside", "dialog", "link", "meta",
)  # fmt: skip
_DROP_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "search", "dialog", "complementary", "menu", "menubar", "toolbar"}
)
# Class or id words (split at "-", "_") and whole names that mark page chrome.
_CHROME_WORDS = frozenset(
    {
        "cookie", "cookies", "consent", "gdpr", "sidebar", "breadcrumb", "breadcrumbs", "share", "sharing",
        "social", "newsletter", "related", "headerlink", "navbar", "menu", "advert", "advertisement",
    }
)  # fmt: skip
_CHROME_NAMES = frozenset(
    {
        "skip-link", "sr-only", "screen-reader-text", "visually-hidden", "comment-respond", "sharedaddy",
        "nav-links", "post-navigation", "pagehead-actions",
    }
)  # fmt: skip
_WORD_SPLIT = re.compile(r"[-_\s]+")
_LANGUAGE = re.compile(r"(?:language|lang|highlight(?:-source)?)-([A-Za-z0-9_+#-]+)")


class Unsupported(Exception):
    """A body that is not text (an image, an archive …); the message names its type."""


class TooDeep(Exception):
    """A body nested deeper than its parser can follow; the message says what and how deep."""


MAX_JSON_DEPTH = 200  # real APIs nest a few dozen levels; Python's parser recurses per level


@dataclass(frozen=True, slots=True)
class Converted:
    text: str
    kind: str  # "html", "markdown", "json", "text", "pdf"
    title: str | None = None
    encoding: str | None = None  # how text was decoded
    replaced: bool = False  # bytes that did not decode were replaced by U+FFFD


@dataclass(frozen=True, slots=True)
class HtmlPage:
    title: str | None
    markdown: str


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().lower()
    label = _LABELS.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def decode(body: bytes, charset: str | None, *, html: bool = False) -> tuple[str, str, bool]:
    """(text, encoding, whether bytes were replaced), following the order above."""
    for bom, name in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if body.startswith(bom):
            text = body.decode(name, errors="replace")
            return text, name, "\ufffd" in text
    encoding = _codec(charset)
    if encoding is None and html:
        match = _META_CHARSET.search(body[:4096])
        encoding = _codec(match.group(1).decode("ascii")) if match else None
        if encoding in ("utf-16", "utf-16-le", "utf-16-be"):
            encoding = "utf-8"  # a meta tag that could be read is not UTF-16 (as browsers decide)
    if encoding is None:
        try:
            return body.decode("utf-8"), "utf-8", False
        except UnicodeDecodeError:
            encoding = "cp1252"
    text = body.decode(encoding, errors="replace")
    return text, encoding, "\ufffd" in text


def _looks_binary(body: bytes) -> bool:
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in body[:8192]


def _sniff(body: bytes) -> str:
    head = body[:1024].lstrip().lower()
    if body.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head[:512]:
        return "text/html"
    if head[:1] in (b"{", b"["):
        return "application/json"
    return "application/octet-stream" if _looks_binary(body) else "text/plain"


def convert(body: bytes, media_type: str, charset: str | None, url: str) -> Converted:
    """Turn a body into text for the model; raises `Unsupported` for binary types."""
    media = media_type or _sniff(body)
    if media in ("application/octet-stream", "binary/octet-stream") and body.startswith(b"%PDF-"):
        media = "application/pdf"
    if media == "application/pdf":
        return pdf_text(body)
    if media in _HTML_TYPES:
        text, encoding, replaced = decode(body, charset, html=True)
        try:
            page = html_to_markdown(text, url)
        except RecursionError:
            raise TooDeep("the HTML nests its elements too deeply to convert") from None
        return Converted(page.markdown, "html", page.title, encoding, replaced)
    is_json = media == "application/json" or media.endswith("+json")
    textual = media.startswith("text/") or is_json or media in _TEXT_APPS or media.endswith("+xml")
    if not textual or _looks_binary(body):
        raise Unsupported(media)
    text, encoding, replaced = decode(body, charset)
    if is_json and (depth := json_depth(text)) > MAX_JSON_DEPTH:
        raise TooDeep(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels ({depth})")
    kind = "json" if is_json else "markdown" if media in _MARKDOWN_TYPES else "text"
    title = _markdown_title(text) if kind == "markdown" else None
    return Converted(text, kind, title, encoding, replaced)


def _markdown_title(text: str) -> str | None:
    match = re.search(r"^#\s+(.+?)\s*#*\s*$", text[:4000], re.M)
    return match.group(1) if match else None


def pretty_json(text: str) -> str | None:
    """Compact JSON indented (for reading); None when it does not parse (or nests
    deeper than the parser can follow)."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return None


def json_depth(text: str) -> int:
    """The deepest nesting of `[` and `{` outside strings, measured without recursing
    (a body of 100,000 brackets costs one pass over its brackets)."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return 0  # cannot be too deep (the usual case: no scan)
    brackets = _BRACKET.findall(_JSON_STRING.sub("", text))
    steps = (1 if b in "[{" else -1 for b in brackets)
    return max(itertools.accumulate(steps, initial=0))


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


# --------------------------------------------------------------------------- PDF


def pdf_text(body: bytes) -> Converted:
    """The text of every page, with `--- page N ---` between pages."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(body))
        if reader.is_encrypted:
            try:
                reader.decrypt("")
            except Exception:  # a password is needed: nothing can be read
                raise Unsupported("application/pdf (encrypted)") from None
        title = None
        try:
            meta = reader.metadata
            title = str(meta.title).strip() if meta is not None and meta.title else None
        except Exception:  # damaged metadata does not stop the text
            title = None
        pages = []
        for number, page in enumerate(reader.pages, 1):
            pages.append(
                f"--- page {number} of {len(reader.pages)} ---\n{(page.extract_text() or '').strip()}"
            )
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise Unsupported(f"application/pdf (unreadable: {exc})") from None
    text = "\n\n".join(pages)
    if not re.sub(r"--- page \d+ of \d+ ---", "", text).strip():
        text += "\n\n[The PDF has no text layer (a scan?); nothing could be extracted.]"
    return Converted(text, "pdf", title or None)


# --------------------------------------------------------------------------- HTML


def _is_chrome(tag: Any) -> bool:
    if tag.attrs is None:
        return False
    if tag.get("role", "").lower() in _DROP_ROLES or tag.has_attr("hidden"):
        return True
    if str(tag.get("aria-hidden", "")).lower() == "true":
        return True
    for name in [*tag.get("class", []), str(tag.get("id", ""))]:
        name = name.lower()
        if name in _CHROME_NAMES or any(word in _CHROME_WORDS for word in _WORD_SPLIT.split(name)):
            return True
    return False


def _is_icon(image: Any) -> bool:
    sizes = [str(image.get(name, "")) for name in ("width", "height")]
    return any(size.isdigit() and int(size) <= 64 for size in sizes)


def _content_root(soup: Any) -> Any:
    articles = soup.find_all("article")
    candidates = (
        soup.find("main"),
        soup.find(attrs={"role": "main"}),
        articles[0] if len(articles) == 1 else None,
    )
    for found in candidates:
        if found is not None and found.get_text(strip=True):
            return found
    return soup.body or soup


def _code_language(pre: Any) -> str:
    parent = pre.parent
    for element in (pre, pre.find("code"), parent, parent.parent if parent is not None else None):
        if element is None or element.attrs is None:
            continue
        for name in element.get("class", []):
            match = _LANGUAGE.fullmatch(name)
            language = match.group(1).lower() if match else ""
            if language and language not in ("default", "notranslate"):
                return "python" if language == "python3" else language
    return ""


def html_to_markdown(html: str, url: str = "") -> HtmlPage:
    """The page's title and its main content as Markdown."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text().split()) if title_tag is not None else None
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    for tag in soup.find_all("header"):
        if tag.find_parent(["article", "main"]) is None:
            tag.decompose()
    root = _content_root(soup)
    for tag in root.find_all(_is_chrome):
        if not tag.decomposed:
            tag.decompose()
    for comment in soup.find_all(string=lambda s: type(s).__name__ in ("Comment", "Doctype")):
        comment.extract()
    base = url
    base_tag = soup.find("base", href=True)
    if base_tag is not None:
        base = urljoin(url, str(base_tag["href"]))
    for link in soup.find_all("a"):
        href = str(link.get("href", ""))
        link.attrs.pop("title", None)
        if not href or href.startswith(("#", "javascript:")):
            link.unwrap()
        elif base:
            link["href"] = urljoin(base, href)
    for image in soup.find_all("img"):
        src = str(image.get("src", ""))
        if src.startswith("data:") or not src or _is_icon(image):
            image.decompose()
        elif base:
            image["src"] = urljoin(base, src)
    converter = MarkdownConverter(heading_style="ATX", bullets="-", code_language_callback=_code_language)
    markdown = converter.convert_soup(root)
    markdown = re.sub(r"[ \t]+\n", "\n", markdown)
    markdown = re.sub(r"\n{3,}", "\n\n", markdown).strip()
    return HtmlPage(title or None, markdown)
